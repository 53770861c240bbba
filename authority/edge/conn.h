/*
 * edge/conn.h - what libevent 2.1.12's evhttp does not do for a connection:
 * deadlines, a cap, and the raw-byte checks of request framing.
 *
 * One conn_set per listener (so per event loop, no locks; only the
 * per-address table is shared, and locked). It creates every
 * accepted connection's bufferevent (evhttp_set_bevcb) and tracks it:
 *   - a whole-request deadline: header_timeout from the first byte of a
 *     request (from the accept for the first one), body_timeout from the end
 *     of its headers. libevent's own timeouts are idle timeouts, reset by
 *     every byte, so a client sending one byte every few seconds would hold
 *     a connection forever; at the deadline we close it (no answer: the
 *     client is not reading one). Never while a handler holds a request of
 *     the connection (a sign-in waiting for PAM): the deadline is for the
 *     client's bytes, not for our answer.
 *   - a cap on open connections (max_connections, shared out over the
 *     loops): one over it gets a fixed 503 with Retry-After and is closed in
 *     the same loop iteration, before any byte is read.
 *   - a cap on open connections per client address (max_connections_per_addr,
 *     over every loop; IPv6 counted per /64): one over it gets the same
 *     503. Peers in trusted_proxies are exempt: their clients are known
 *     only from headers, after the accept.
 *   - request framing: every byte read goes through edge/req.h's raw scanner
 *     before evhttp parses it, pipelined requests and bodies included.
 *     When it refuses a request, evhttp never sees that request's bytes:
 *     the requests before it are answered as usual, then the connection is
 *     taken from evhttp, answered with req_raw_reply's 400 (413, 417, 501)
 *     and closed once that is written.
 *   - TLS (lim->tls_ctx): the bufferevent is an OpenSSL one, accepting; a
 *     connection whose TLS state cannot be made is closed, never served in
 *     plain text.
 *   - running out of descriptors: accept() failing with EMFILE/ENFILE
 *     pauses the listener for CONN_ACCEPT_PAUSE_MS instead of spinning on
 *     the still-readable socket.
 *
 * Lifetime: a struct conn lives from accept until both the connection has
 * closed (evhttp's close callback) and the last request taken with
 * conn_request_begin has ended (conn_request_end): a handler may answer
 * after the client left. Must never free a connection with a request out
 * in a handler, or touch a bufferevent after its connection closed.
 */
#ifndef AUTHORITY_EDGE_CONN_H
#define AUTHORITY_EDGE_CONN_H

#include <stddef.h>

struct conn;
struct conn_set;
struct evconnlistener;
struct event_base;
struct evhttp;
struct evhttp_request;
struct log;

/* Milliseconds accepting stays paused after EMFILE/ENFILE. */
#define CONN_ACCEPT_PAUSE_MS 100

/* Buckets of the per-address table at start (it doubles as it fills). */
#define CONN_ADDR_BUCKETS_MIN 256

struct conn_addrs;

struct conn_limits {
	long header_ms;        /* first byte (or accept) to end of headers */
	long body_ms;          /* end of headers to end of body */
	size_t max_conns;      /* open connections of this listener */
	/* Open connections per client address, shared by every listener
	 * (borrowed), or NULL for no per-address cap. */
	struct conn_addrs *addrs;
	/* 1 when the peer (text, as inet_ntop writes it) is exempt from the
	 * per-address cap (a trusted proxy); called at each accept. */
	int (*addr_exempt)(void *arg, const char *addr);
	void *addr_exempt_arg;
	/* For native HTTPS: the context for a new connection (looked up per
	 * accept, so a reload's new certificate serves the next connection),
	 * NULL for plain HTTP. The handshake runs under the header deadline. */
	struct ssl_ctx_st *(*tls_ctx)(void *arg);
	void *tls_arg;
};

/* A table counting open connections per client address (IPv4 address,
 * IPv6 /64), at most cap each (cap >= 1); safe to share between loops
 * (locked inside). Returns 0, VEP_ERR_INVALID (cap 0) or VEP_ERR_NOMEM. */
int conn_addrs_new(size_t cap, struct conn_addrs **out);

/* Frees a table no conn_set uses any more. NULL-safe. */
void conn_addrs_free(struct conn_addrs *t);

/* Tracks every connection http accepts from now on, on base. lg is
 * borrowed. Returns 0 or VEP_ERR_NOMEM. */
int conn_set_new(struct event_base *base, struct evhttp *http,
    const struct conn_limits *lim, const struct log *lg, struct conn_set **out);

/* Pauses listener on descriptor exhaustion (see above). */
void conn_set_watch_listener(struct conn_set *set, struct evconnlistener *listener);

/* Frees set. Call after evhttp_free (which closes every connection);
 * connections still referenced by requests stay valid. NULL-safe. */
void conn_set_free(struct conn_set *set);

/* A request of ev's connection reached us: stops its deadline and takes a
 * reference. Returns the connection, or NULL when it is not tracked (the
 * request is then served without it). */
struct conn *conn_request_begin(struct conn_set *set, struct evhttp_request *ev);

/* The request taken by conn_request_begin is answered (or abandoned):
 * drops the reference, arms the deadline again for bytes already waiting,
 * and when the scanner refused the request after it, answers that
 * refusal. Call after the answer was handed to evhttp. NULL-safe. */
void conn_request_end(struct conn *c);

#endif
