/*
 * edge/listener.h - the HTTP listener of one event loop: its socket, the
 * accept, and the caps on connections.
 *
 * Promises: the socket is bound with SO_REUSEPORT (every loop has its own;
 * the kernel spreads connections); each accepted connection is served by
 * edge/conn.h. A connection over this loop's share of max_connections, or
 * over max_connections_per_addr for its client (counted over every loop,
 * IPv6 per /64, trusted proxies exempt), gets the fixed 503 with
 * Retry-After (plain HTTP; over TLS just the close) and is closed before
 * anything is read. Running out of descriptors (EMFILE, ENFILE...) pauses
 * accepting for a moment instead of spinning, logged at most every 10 s.
 * Must never block and never decide anything about a request beyond
 * wrapping it (req_new) and handing it to its handler: the router, or the
 * demo relying party's own.
 */
#ifndef AUTHORITY_EDGE_LISTENER_H
#define AUTHORITY_EDGE_LISTENER_H

#include <stddef.h>

struct authority;
struct loop;
struct req;
struct server;

/* Takes every request of a listener (it then owns r, see edge/req.h). */
typedef void (*server_handler)(struct req *r);

/* Room for "[" + an IPv6 address + "]:65535". */
#define SERVER_ADDR_BUFSZ 64

/* Binds listen ("ADDR:PORT") on loop l's base with SO_REUSEPORT (so every
 * loop can bind the same port and the kernel spreads connections) and
 * hands every request to handler. tls: speak HTTPS with the current domain
 * set's TLS context (the set must have one). Returns 0, VEP_ERR_INVALID (bad address)
 * or VEP_ERR_IO (bind failed; logged with the reason), VEP_ERR_NOMEM. */
int server_listen(struct loop *l, const char *listen, int tls, server_handler handler,
    struct server **out);

/* The bound address with the real port ("127.0.0.1:41234", "[::1]:8080"). */
const char *server_address(const struct server *s);

/* Stops listening and closes every connection (pending replies included;
 * requests still in handlers stay valid until answered). NULL-safe. */
void server_free(struct server *s);

#endif
