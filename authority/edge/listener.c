/*
 * edge/listener.c - the listening socket, the accept, the connection caps
 * and the accept back-off; each request handed from edge/conn.c to the
 * handler as a struct req.
 *
 * Owns the socket, its evconnlistener (whose callbacks all get this
 * server as their argument) and every connection accepted on it (through
 * edge/conn.h's group). Must never answer a request itself (api/router.c
 * and the handlers do), except a connection over a cap (the fixed 503)
 * and a request it cannot even allocate the per-request state for.
 */
#include "edge/listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <openssl/ssl.h>

#include "server/shared.h"
#include "core/config.h"
#include "edge/addrs.h"
#include "edge/conn.h"
#include "core/domain.h"
#include "err.h"
#include "core/fixed_limits.h"
#include "edge/head.h"
#include "edge/proxy.h"
#include "edge/req.h"
#include "edge/tls.h"
#include "server/loop.h"

/* The over-capacity answer's extra header: when to come back, seconds. */
#define SERVER_BUSY_EXTRA "Retry-After: 1\r\n"

/* Milliseconds accepting stays paused after EMFILE/ENFILE. */
#define SERVER_ACCEPT_PAUSE_MS 100

/* Seconds between two "out of descriptors" log lines. */
#define SERVER_EMFILE_LOG_EVERY_S 10

struct server {
	struct evconnlistener *listener;
	struct event *resume;        /* re-enables accepting; pending only while paused */
	time_t emfile_logged;
	struct conn_group conns;
	size_t max_conns;            /* this listener's share of max_connections */
	int tls;
	char hsts[TLS_HSTS_MAX];     /* Strict-Transport-Security of its TLS answers */
	/* Open connections per client address over every loop: made (and
	 * owned) by loop 0's server, borrowed by the others' (loop 0 is
	 * created first and freed last). NULL when the cap is off. */
	struct addrs *addrs;
	int owns_addrs;
	struct loop *loop;
	server_handler handler;
	char busy[REQ_RAW_BUFSZ];    /* the over-capacity answer (plain HTTP) */
	size_t busy_len;
	char address[SERVER_ADDR_BUFSZ];
};

/* Formats the socket's real local address. */
static int
bound_address(evutil_socket_t fd, char *out, size_t outlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN];

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return VEP_ERR_IO;
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		snprintf(out, outlen, "[%s]:%u", ip, (unsigned)ntohs(s6->sin6_port));
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		snprintf(out, outlen, "%s:%u", ip, (unsigned)ntohs(s4->sin_port));
	}
	return VEP_OK;
}

/* A non-blocking listening socket on host:port with SO_REUSEPORT: every
 * event loop binds its own, and the kernel spreads new connections over
 * them. probe: first bind once without SO_REUSEPORT, so a port another
 * process holds (even with SO_REUSEPORT, e.g. an old instance) is an
 * error instead of silently shared. Returns the descriptor or -1 (errno
 * set). */
static evutil_socket_t
listen_socket(const char *host, unsigned port, int probe)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1, fam = strchr(host, ':') != NULL ? AF_INET6 : AF_INET;
	evutil_socket_t fd;

	memset(&ss, 0, sizeof(ss));
	if (fam == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return -1;
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return -1;
		sl = sizeof(*s4);
	}
	if (probe && port != 0) {
		if ((fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
			return -1;
		if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
		    bind(fd, (struct sockaddr *)&ss, sl) != 0) {
			int e = errno;
			evutil_closesocket(fd);
			errno = e;
			return -1;
		}
		evutil_closesocket(fd);
	}
	if ((fd = socket(fam, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0 ||
	    (fam == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0) ||
	    bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, SOMAXCONN) != 0) {
		int e = errno;
		evutil_closesocket(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* This listener's share of max_connections (every loop has a listener and
 * the kernel spreads connections evenly over them). */
static size_t
server_max_conns(const struct authority *a)
{
	size_t total = (size_t)a->cfg->max_connections, n = a->nloops ? a->nloops : 1;
	struct rlimit rl;

	if (total == 0) {
		size_t reserve = LIMIT_FD_RESERVE + 4 * n;

		if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
			rl.rlim_cur = 1024;
		total = rl.rlim_cur > 2 * reserve ? (size_t)rl.rlim_cur - reserve :
		    (size_t)rl.rlim_cur / 2;
	}
	return (total + n - 1) / n;
}

/* The per-address cap exempts the trusted proxies: their clients are known
 * only from X-Forwarded-For, after the accept. */
static int
server_addr_exempt(struct authority *a, const char *addr)
{
	const struct proxy_list *trusted = authority_cfg(a)->trusted_proxies;

	return trusted != NULL && proxy_list_has(trusted, addr);
}

static void
link_reply(void *conn, struct evbuffer *reply, int keep_alive)
{
	conn_reply(conn, reply, keep_alive);
}

static void
link_abandon(void *conn)
{
	conn_abandon(conn);
}

/* A whole request from edge/conn.c: wrapped and handed to the handler. */
static void
on_request(void *arg, struct conn *c, struct head *h, unsigned char *body, size_t len)
{
	struct server *s = arg;
	struct req_link link = { link_reply, link_abandon, c, conn_peer(c), conn_tls(c),
				 conn_tls(c) ? s->hsts : NULL };
	struct req *r;

	if ((r = req_new(s->loop, h, body, len, &link)) == NULL)
		return; /* req_new answered 500 */
	s->handler(r);
}

/* The connection's bufferevent: an accepting OpenSSL one on the HTTPS port
 * (never plain text there), with the context of the domain set in use now
 * (so a reload's new certificate serves the next connection). NULL when it
 * cannot be made; fd is then still the caller's. */
static struct bufferevent *
server_bev(struct server *s, evutil_socket_t fd)
{
	struct event_base *base = s->loop->base;
	struct bufferevent *bev;
	SSL_CTX *ctx;
	SSL *ssl;

	if (!s->tls)
		return bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	if ((ctx = authority_domains(s->loop->a)->tls) == NULL || (ssl = SSL_new(ctx)) == NULL)
		return NULL;
	/* Made without the descriptor, so that a failure leaves it ours
	 * (the SSL goes with the bufferevent either way). */
	if ((bev = bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		return NULL;
	if (bufferevent_setfd(bev, fd) != 0) {
		bufferevent_free(bev);
		return NULL;
	}
	/* Clients that close without close_notify are ordinary. */
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

static void
on_accept(struct evconnlistener *listener, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct server *s = arg;
	struct authority *a = s->loop->a;
	unsigned char key[ADDRS_KEY_BYTES];
	const unsigned char *counted = NULL;
	char peer[INET6_ADDRSTRLEN];
	struct bufferevent *bev = NULL;
	const char *why = NULL;
	int known;

	(void)listener;
	(void)salen;
	if (!(known = addrs_key(sa, key, peer, sizeof(peer)) == 0))
		snprintf(peer, sizeof(peer), "unknown");
	if (s->conns.count >= s->max_conns) {
		why = "max_connections reached";
	} else if (s->addrs != NULL && known && !server_addr_exempt(a, peer)) {
		int rc = addrs_take(s->addrs, key);

		if (rc == VEP_OK)
			counted = key;
		else
			why = rc == VEP_ERR_TOOBIG ? "max_connections_per_addr reached" :
			    "out of memory";
	}
	if (why == NULL && (bev = server_bev(s, fd)) == NULL)
		why = s->tls ? "no TLS state" : "out of memory";
	if (why != NULL) {
		/* TLS: no bytes before a handshake; the close says it. */
		if (!s->tls) {
			ssize_t w = send(fd, s->busy, s->busy_len, MSG_DONTWAIT | MSG_NOSIGNAL);

			(void)w; /* best effort: the close is the answer that matters */
		}
		log_debug(&a->log, "refusing a connection: %zu open, %s", s->conns.count, why);
		if (counted != NULL)
			addrs_release(s->addrs, counted);
		evutil_closesocket(fd);
		return;
	}
	if (conn_open(&s->conns, bev, s->tls, peer, counted) != VEP_OK)
		log_warn(&a->log, "out of memory for a connection");
}

static void
on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct server *s = arg;

	(void)fd;
	(void)what;
	evconnlistener_enable(s->listener);
}

static void
on_accept_error(struct evconnlistener *listener, void *arg)
{
	struct server *s = arg;
	struct timeval tv = { 0, SERVER_ACCEPT_PAUSE_MS * 1000 };
	int e = EVUTIL_SOCKET_ERROR();
	time_t now;

	if (e != EMFILE && e != ENFILE && e != ENOBUFS && e != ENOMEM) {
		log_warn(&s->loop->a->log, "accept failed: %s", strerror(e));
		return;
	}
	/* The pending connection keeps the socket readable: without a pause
	 * the loop would spin until a descriptor frees up. */
	evconnlistener_disable(listener);
	evtimer_add(s->resume, &tv);
	now = time(NULL);
	if (now - s->emfile_logged >= SERVER_EMFILE_LOG_EVERY_S) {
		s->emfile_logged = now;
		log_warn(&s->loop->a->log, "accept failed (%s, %zu connections open): pausing new "
		    "connections; raise the descriptor limit (ulimit -n, LimitNOFILE) or lower "
		    "max_connections", strerror(e), s->conns.count);
	}
}

/* The per-address table this loop's listener counts in (see struct
 * server). Returns 0 or VEP_ERR_NOMEM. */
static int
server_addrs(struct loop *l, struct server *s)
{
	const struct authority *a = l->a;

	if (a->cfg->max_connections_per_addr == 0)
		return VEP_OK;
	if (l->index > 0 && a->loops != NULL && a->loops[0] != NULL &&
	    a->loops[0]->server != NULL) {
		s->addrs = a->loops[0]->server->addrs;
		return VEP_OK;
	}
	s->owns_addrs = 1;
	return addrs_new((size_t)a->cfg->max_connections_per_addr, &s->addrs);
}

int
server_listen(struct loop *l, const char *listen, int tls, server_handler handler,
    struct server **out)
{
	struct authority *a = l->a;
	evutil_socket_t fd = -1;
	struct server *s = NULL;
	char host[INET6_ADDRSTRLEN];
	unsigned port;
	int rc = VEP_ERR_NOMEM;

	*out = NULL;
	if (config_parse_listen(listen, host, sizeof(host), &port) != 0) {
		rc = VEP_ERR_INVALID;
		goto out;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL)
		goto out;
	s->loop = l;
	s->handler = handler;
	s->tls = tls;
	s->max_conns = server_max_conns(a);
	s->conns.header_ms = a->cfg->header_timeout_s * 1000;
	s->conns.body_ms = a->cfg->body_timeout_s * 1000;
	s->conns.idle_ms = a->cfg->request_timeout_s * 1000;
	s->conns.log = &a->log;
	tls_hsts_format(a->cfg->hsts_max_age_s, a->cfg->hsts_include_subdomains != 0, s->hsts,
	    sizeof(s->hsts));
	s->conns.hsts = s->hsts;
	s->conns.on_request = on_request;
	s->conns.arg = s;
	if ((rc = server_addrs(l, s)) != VEP_OK)
		goto out;
	s->conns.addrs = s->addrs;
	rc = VEP_ERR_NOMEM;
	/* Content-Length is computed from the body. */
	s->busy_len = req_raw_reply(s->busy, sizeof(s->busy), REQ_ERR_UNAVAILABLE, NULL, 0,
	    SERVER_BUSY_EXTRA);
	if (s->busy_len == 0 || (s->resume = evtimer_new(l->base, on_resume, s)) == NULL)
		goto out;
	errno = 0;
	/* Loop 0 binds first (the others share its port): it probes. */
	if ((fd = listen_socket(host, port, l->index == 0)) < 0) {
		log_error(&a->log, "cannot listen on %s: %s", listen,
		    errno != 0 ? strerror(errno) : "bind failed");
		rc = VEP_ERR_IO;
		goto out;
	}
	if ((rc = bound_address(fd, s->address, sizeof(s->address))) != VEP_OK) {
		evutil_closesocket(fd);
		goto out;
	}
	/* Already listening (backlog -1); the listener owns it from here. */
	if ((s->listener = evconnlistener_new(l->base, on_accept, s,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd)) == NULL) {
		evutil_closesocket(fd);
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	evconnlistener_set_error_cb(s->listener, on_accept_error);
	*out = s;
	s = NULL;
	rc = VEP_OK;
out:
	server_free(s);
	return rc;
}

const char *
server_address(const struct server *s)
{
	return s->address;
}

void
server_free(struct server *s)
{
	if (s == NULL)
		return;
	if (s->listener != NULL)
		evconnlistener_free(s->listener);
	if (s->resume != NULL)
		event_free(s->resume);
	conn_group_close(&s->conns);
	if (s->owns_addrs)
		addrs_free(s->addrs);
	free(s);
}
