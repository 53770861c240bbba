/*
 * edge/listener.c - evhttp setup: bind, limits, allowed methods, the one callback.
 *
 * Owns the listening socket and the evhttp object. Must never answer a
 * request itself (api/router.c and the handlers do) except when it cannot even
 * allocate the per-request state.
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

#include <event2/event.h>
#include <event2/http.h>
#include <openssl/ssl.h>

#include "server/shared.h"
#include "core/config.h"
#include "edge/conn.h"
#include "core/domain.h"
#include "err.h"
#include "core/fixed_limits.h"
#include "edge/proxy.h"
#include "edge/req.h"
#include "server/loop.h"

struct server {
	struct evhttp *http;
	struct conn_set *conns;
	/* Open connections per client address over every loop: made (and
	 * owned) by loop 0's server, borrowed by the others' (loop 0 is
	 * created first and freed last). NULL when the cap is off. */
	struct conn_addrs *addrs;
	int owns_addrs;
	struct loop *loop;
	server_handler handler;
	char address[SERVER_ADDR_BUFSZ];
};

/* A request's end is its connection guard's (edge/conn.h). */
static void
end_request(void *arg)
{
	conn_request_end(arg);
}

static void
on_request(struct evhttp_request *ev, void *arg)
{
	struct server *s = arg;
	struct conn *c = conn_request_begin(s->conns, ev);
	const char *why;
	struct req *r;

	if ((r = req_new(s->loop, ev)) == NULL) {
		conn_request_end(c);
		return; /* req_new answered 500 */
	}
	r->on_end = end_request;
	r->end_arg = c;
	/* edge/conn.c refuses such requests before evhttp parses them; this
	 * catches a connection it could not track. Refused before any
	 * handler sees it, and the connection closed: what follows on it
	 * cannot be trusted to be framed as we read it. */
	if ((why = req_framing_problem(r)) != NULL) {
		if (req_add_header(r, "Connection", "close") != VEP_OK) {
			req_reply_error(r, REQ_ERR_INTERNAL);
			return;
		}
		req_reply_error_text(r, REQ_ERR_BAD_REQUEST, why);
		return;
	}
	s->handler(r);
}

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
	    (fam == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0) ||
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

/* edge/conn.c's per-address cap exempts the trusted proxies: their clients are
 * known only from X-Forwarded-For, after the accept. */
static int
server_addr_exempt(void *arg, const char *addr)
{
	struct authority *a = arg;
	const struct proxy_list *trusted = authority_cfg(a)->trusted_proxies;

	return trusted != NULL && proxy_list_has(trusted, addr);
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
	return conn_addrs_new((size_t)a->cfg->max_connections_per_addr, &s->addrs);
}

/* edge/conn.c's source of the TLS context for each new connection. */
static SSL_CTX *
server_tls_ctx(void *arg)
{
	struct authority *a = arg;

	return authority_domains(a)->tls;
}

int
server_listen(struct loop *l, const char *listen, int tls, server_handler handler,
    struct server **out)
{
	struct authority *a = l->a;
	struct evhttp_bound_socket *bound;
	struct conn_limits lim;
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
	if ((s = calloc(1, sizeof(*s))) == NULL || (s->http = evhttp_new(l->base)) == NULL)
		goto out;
	s->loop = l;
	s->handler = handler;
	evhttp_set_max_headers_size(s->http, LIMIT_HEADER_BYTES);
	evhttp_set_max_body_size(s->http, LIMIT_BODY_BYTES);
	evhttp_set_timeout(s->http, (int)a->cfg->request_timeout_s);
	/* Let every method libevent knows reach the router, which answers
	 * 405 with an Allow header; libevent's own 405 has none. */
	evhttp_set_allowed_methods(s->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
	    EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(s->http, on_request, s);
	lim.header_ms = a->cfg->header_timeout_s * 1000;
	lim.body_ms = a->cfg->body_timeout_s * 1000;
	lim.max_conns = server_max_conns(a);
	lim.tls_ctx = tls ? server_tls_ctx : NULL;
	lim.tls_arg = a;
	if ((rc = server_addrs(l, s)) != VEP_OK)
		goto out;
	lim.addrs = s->addrs;
	lim.addr_exempt = server_addr_exempt;
	lim.addr_exempt_arg = a;
	if ((rc = conn_set_new(l->base, s->http, &lim, &a->log, &s->conns)) != VEP_OK)
		goto out;
	rc = VEP_ERR_NOMEM;
	errno = 0;
	/* Loop 0 binds first (the others share its port): it probes. */
	if ((fd = listen_socket(host, port, l->index == 0)) < 0 ||
	    (bound = evhttp_accept_socket_with_handle(s->http, fd)) == NULL) {
		log_error(&a->log, "cannot listen on %s: %s", listen,
		    errno != 0 ? strerror(errno) : "bind failed");
		if (fd >= 0)
			evutil_closesocket(fd);
		rc = VEP_ERR_IO;
		goto out;
	}
	conn_set_watch_listener(s->conns, evhttp_bound_socket_get_listener(bound));
	if ((rc = bound_address(evhttp_bound_socket_get_fd(bound), s->address,
	    sizeof(s->address))) != 0)
		goto out;
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
	/* evhttp_free closes every connection (edge/conn.c's close callbacks)
	 * before their set goes. */
	if (s->http != NULL)
		evhttp_free(s->http);
	conn_set_free(s->conns);
	if (s->owns_addrs)
		conn_addrs_free(s->addrs);
	free(s);
}
