/*
 * edge/conn.h - one HTTP/1.1 server connection on a bufferevent (plain or
 * OpenSSL): framing, deadlines, requests one at a time, answers, keep-alive.
 *
 * Promises:
 *   - every byte read goes through the raw scanner (req_scan_*, edge/req.h),
 *     pipelined requests and bodies included, before anything else reads it:
 *     the scanner is the one framing check, and a request is taken apart
 *     (edge/head.h) only once all of it was accepted. When the scanner
 *     refuses, the requests before the refused one are answered as usual,
 *     then req_raw_reply's 400 (413, 417, 501), and the connection closes
 *     once that is written; nothing after the refused request's first byte
 *     is ever read as a request.
 *   - requests are served in order, one at a time: the next is taken only
 *     when the answer to the one before is queued and written out (a client
 *     that does not read cannot make us queue more); while a handler holds a
 *     request, at most CONN_BUSY_READ_BYTES more are read.
 *   - Expect: 100-continue (HTTP/1.1) gets "100 Continue" before the body
 *     is read, unless body bytes are already here.
 *   - deadlines: header_ms from the first byte of a request (from the open,
 *     for the first one) to the end of its head; body_ms from there to the
 *     end of its body; idle_ms between requests (any byte resets it) and for
 *     a write that makes no progress. Never while a handler holds a request
 *     (a sign-in waiting for PAM): the deadlines are for the client's bytes,
 *     not for our answer. A deadline passing closes without an answer.
 *   - keep-alive as the answer says (conn_reply); a client that closes its
 *     side still gets the answers to the requests it sent whole.
 *
 * Lifetime: a struct conn lives from conn_open until both the connection
 * has closed and the request handed out (if any) was answered or
 * abandoned: a handler may answer after the client left; the answer then
 * goes nowhere. Must never touch a bufferevent after its connection closed.
 */
#ifndef AUTHORITY_EDGE_CONN_H
#define AUTHORITY_EDGE_CONN_H

#include <stddef.h>

#include "edge/addrs.h"

struct bufferevent;
struct conn;
struct evbuffer;
struct head;
struct log;

/* Bytes read ahead of a request a handler holds. */
#define CONN_BUSY_READ_BYTES (8 * 1024)

/* The connections of one listener (one loop: no locks). The owner sets the
 * first fields; edge/conn.c keeps the rest. */
struct conn_group {
	long header_ms;
	long body_ms;
	long idle_ms;             /* request_timeout */
	const struct log *log;    /* borrowed */
	const char *hsts;         /* Strict-Transport-Security on TLS connections (borrowed) */
	/* The table a connection opened with an address key is released
	 * from at close (borrowed), or NULL. */
	struct addrs *addrs;
	/* A request arrived whole: h and body (len decoded bytes, NULL when
	 * len is 0; wipe before freeing) become the callee's, which answers
	 * with exactly one conn_reply or conn_abandon, now or later. */
	void (*on_request)(void *arg, struct conn *c, struct head *h, unsigned char *body,
	    size_t len);
	void *arg;
	/* Kept by edge/conn.c. */
	struct conn *first;       /* open connections */
	size_t count;
};

/* Serves a new connection on bev (which it then owns, also on failure)
 * for g. tls: bev is an accepting OpenSSL bufferevent. peer: the client's
 * address as text. addr_key: the key counted in g->addrs for it, or NULL.
 * Returns 0 or VEP_ERR_NOMEM (bev freed, addr_key released). */
int conn_open(struct conn_group *g, struct bufferevent *bev, int tls, const char *peer,
    const unsigned char *addr_key);

/* The client's address as text (the accepted socket's peer). */
const char *conn_peer(const struct conn *c);

/* 1 when the connection speaks TLS. */
int conn_tls(const struct conn *c);

/* Answers the request handed out: reply's bytes (a whole response) move
 * to the connection, which stays open for the next request only when
 * keep_alive. A closed connection drops them. */
void conn_reply(struct conn *c, struct evbuffer *reply, int keep_alive);

/* Ends the request handed out without an answer (shutdown): the
 * connection, if still open, closes. */
void conn_abandon(struct conn *c);

/* Closes every connection of g (their requests still out stay valid). */
void conn_group_close(struct conn_group *g);

#endif
