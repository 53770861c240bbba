/*
 * conn.c - per-connection deadlines, the connection cap, line-folding
 * detection and accept back-off (see conn.h for what and why).
 *
 * How a connection is followed without a hook in evhttp for it: we create
 * its bufferevent (bevcb), watch its input buffer (every byte read passes
 * through there before evhttp parses it), and in the same loop iteration,
 * once evhttp has built the connection around our bufferevent, take the
 * connection from the bufferevent's callback argument and ask for its close
 * callback. Requests find their connection by descriptor (by_fd), which
 * is unique among this loop's open connections.
 */
#include "conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "err.h"
#include "log.h"

/* The answer of a connection over the cap: fixed bytes, written without
 * waiting (a full socket buffer just loses it: the close says enough). */
static const char conn_busy_reply[] =
    "HTTP/1.1 503 Service Unavailable\r\n"
    "Content-Type: application/json\r\n"
    "Content-Length: 33\r\n"
    "Retry-After: 1\r\n"
    "Cache-Control: no-store\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "Connection: close\r\n"
    "\r\n"
    "{\"error\":\"service unavailable\"}\n";

/* Seconds the idle resume timer waits (it only needs to be pending). */
#define CONN_RESUME_PARK_S 86400

/* Seconds between two "out of descriptors" log lines. */
#define CONN_EMFILE_LOG_EVERY_S 10

enum conn_state {
	CONN_READING,   /* a request is arriving: the deadline runs */
	CONN_BUSY,      /* a handler holds a request */
	CONN_IDLE,      /* between requests: evhttp's idle timeout applies */
};

/* Where the folding scanner is in the request head. */
enum scan_state {
	SCAN_OFF,        /* not scanning (body, or a pipelined request) */
	SCAN_LINE_START, /* at the start of a line */
	SCAN_IN_LINE,
};

struct conn {
	struct conn_set *set;     /* NULL once the connection closed */
	struct bufferevent *bev;  /* valid while set != NULL */
	struct evhttp_connection *evcon;
	struct event *timer;      /* the deadline */
	struct event *attach;     /* one-shot: finds evcon after the accept */
	int fd;
	enum conn_state state;
	enum scan_state scan;
	unsigned lines;           /* lines of the head scanned (0: request line) */
	unsigned inflight;        /* requests handed to handlers, not yet ended */
	unsigned refs;            /* the connection itself + inflight */
	const char *refusal;      /* why its request is refused, or NULL */
	int tls;                  /* 1: an OpenSSL bufferevent */
	int doomed;               /* 1: close at attach (no TLS state could be made) */
};

struct conn_set {
	struct conn_limits lim;
	const struct log *log;
	size_t count;             /* open connections */
	struct conn **by_fd;      /* open, attached connections by descriptor */
	size_t by_fd_len;
	struct evconnlistener *listener;
	struct event *resume;     /* re-enables the listener after EMFILE */
	time_t emfile_logged;
};

static void on_input(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg);

static void conn_unref(struct conn *c)
{
	if (--c->refs > 0)
		return;
	if (c->timer != NULL)
		event_free(c->timer);
	if (c->attach != NULL)
		event_free(c->attach);
	free(c);
}

static void arm(struct conn *c, long ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(c->timer, &tv);
}

static int by_fd_put(struct conn_set *set, int fd, struct conn *c)
{
	if (fd < 0)
		return VEP_ERR_INVALID;
	if ((size_t)fd >= set->by_fd_len) {
		size_t n = set->by_fd_len ? set->by_fd_len : 64;
		struct conn **p;

		while (n <= (size_t)fd)
			n *= 2;
		if ((p = realloc(set->by_fd, n * sizeof(*p))) == NULL)
			return VEP_ERR_NOMEM;
		memset(p + set->by_fd_len, 0, (n - set->by_fd_len) * sizeof(*p));
		set->by_fd = p;
		set->by_fd_len = n;
	}
	set->by_fd[fd] = c;
	return VEP_OK;
}

/* evhttp is closing the connection (any reason, ours included). */
static void on_close(struct evhttp_connection *evcon, void *arg)
{
	struct conn *c = arg;
	struct conn_set *set = c->set;

	(void)evcon;
	if (set == NULL)
		return;
	if (c->fd >= 0 && (size_t)c->fd < set->by_fd_len && set->by_fd[c->fd] == c)
		set->by_fd[c->fd] = NULL;
	set->count--;
	evtimer_del(c->timer);
	evbuffer_remove_cb(bufferevent_get_input(c->bev), on_input, c);
	c->set = NULL;
	c->bev = NULL;
	c->evcon = NULL;
	conn_unref(c);
}

/* The deadline passed with the request still arriving. */
static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	if (c->set == NULL || c->inflight > 0 || c->evcon == NULL)
		return;
	log_info(c->set->log, "closing a connection: request not complete within its deadline");
	evhttp_connection_free(c->evcon);   /* calls on_close: c may be gone */
}

/* Feeds new head bytes to the folding scanner. */
static void scan(struct conn *c, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n && c->scan != SCAN_OFF; i++) {
		unsigned char b = p[i];

		if (b == '\r')
			continue;
		if (b == '\n') {
			if (c->scan == SCAN_LINE_START && c->lines > 0) {
				/* The empty line: the head is complete, the body
				 * (if any) has its own deadline. */
				c->scan = SCAN_OFF;
				arm(c, c->set->lim.body_ms);
				return;
			}
			/* Empty lines before the request line are allowed. */
			if (c->scan == SCAN_IN_LINE)
				c->lines++;
			c->scan = SCAN_LINE_START;
			continue;
		}
		if (c->scan == SCAN_LINE_START && c->lines > 0 && (b == ' ' || b == '\t')) {
			c->refusal = "obsolete line folding in a header";
			c->scan = SCAN_OFF;
			return;
		}
		c->scan = SCAN_IN_LINE;
	}
}

/* Every change of the connection's input buffer, before evhttp parses. */
static void on_input(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct conn *c = arg;
	struct evbuffer_iovec vec[8];
	struct evbuffer_ptr pos;
	size_t len;
	int n;

	if (info->n_added == 0 || c->set == NULL)
		return;
	if (c->state == CONN_IDLE && c->inflight == 0) {
		/* The first bytes of the next request. */
		c->state = CONN_READING;
		c->scan = info->orig_size == 0 ? SCAN_LINE_START : SCAN_OFF;
		c->lines = 0;
		arm(c, c->set->lim.header_ms);
	}
	if (c->scan == SCAN_OFF)
		return;
	len = evbuffer_get_length(buf);
	if (evbuffer_ptr_set(buf, &pos, len - info->n_added, EVBUFFER_PTR_SET) != 0)
		return;
	n = evbuffer_peek(buf, (ev_ssize_t)info->n_added, &pos, vec, 8);
	for (int i = 0; i < n && i < 8; i++)
		scan(c, vec[i].iov_base, vec[i].iov_len);
}

/* Runs once, in the accept's loop iteration, after evhttp built the
 * connection around c->bev and before anything was read. */
static void on_attach(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct conn_set *set = c->set;
	void *cbarg = NULL;

	(void)fd;
	(void)what;
	bufferevent_getcb(c->bev, NULL, NULL, NULL, &cbarg);
	c->evcon = cbarg;
	c->fd = (int)bufferevent_getfd(c->bev);
	if (c->evcon == NULL || c->fd < 0) {
		/* Not an evhttp connection after all: leave it untracked. */
		evbuffer_remove_cb(bufferevent_get_input(c->bev), on_input, c);
		set->count--;
		c->set = NULL;
		conn_unref(c);
		return;
	}
	evhttp_connection_set_closecb(c->evcon, on_close, c);
	if (c->doomed || set->count > set->lim.max_conns ||
	    by_fd_put(set, c->fd, c) != VEP_OK) {
		if (!c->tls && !c->doomed) {
			ssize_t w = send(c->fd, conn_busy_reply, sizeof(conn_busy_reply) - 1,
			    MSG_DONTWAIT | MSG_NOSIGNAL);

			(void)w; /* best effort: the close is the answer that matters */
		}
		log_debug(set->log, "refusing a connection: %zu open, max_connections reached",
		    set->count - 1);
		evhttp_connection_free(c->evcon);  /* calls on_close */
		return;
	}
	arm(c, set->lim.header_ms);
}

/* evhttp's bufferevent factory: one per accepted connection. */
static struct bufferevent *make_bev(struct event_base *base, void *arg)
{
	struct conn_set *set = arg;
	struct bufferevent *bev = NULL;
	SSL_CTX *ctx = NULL;
	SSL *ssl = NULL;
	struct conn *c;
	int doomed = 0;

	if (set->lim.tls_ctx != NULL) {
		if ((ctx = set->lim.tls_ctx(set->lim.tls_arg)) != NULL && (ssl = SSL_new(ctx)) != NULL &&
		    (bev = bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING,
		    BEV_OPT_CLOSE_ON_FREE)) != NULL)
			/* Clients that close without close_notify are ordinary. */
			bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
		else if (ssl != NULL && bev == NULL)
			SSL_free(ssl);
		if (bev == NULL)
			doomed = 1;  /* never plain text on the TLS port */
	}
	if (bev == NULL)
		bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL)
		return NULL;
	/* Out of memory for our record: served untracked (a TLS bufferevent
	 * stays TLS; only if the TLS state also failed can a connection on the
	 * HTTPS port get plain HTTP). */
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return bev;
	c->tls = set->lim.tls_ctx != NULL && !doomed;
	c->doomed = doomed;
	c->fd = -1;
	c->refs = 1;
	c->state = CONN_READING;
	c->scan = SCAN_LINE_START;
	c->timer = evtimer_new(base, on_deadline, c);
	c->attach = event_new(base, -1, 0, on_attach, c);
	if (c->timer == NULL || c->attach == NULL ||
	    evbuffer_add_cb(bufferevent_get_input(bev), on_input, c) == NULL) {
		conn_unref(c);
		return bev;
	}
	c->set = set;
	c->bev = bev;
	set->count++;
	event_active(c->attach, EV_TIMEOUT, 0);
	return bev;
}

/* The resume timer is always pending (so find_set can see it): far away
 * normally, CONN_ACCEPT_PAUSE_MS away while accepting is paused. */
static void park_resume(struct conn_set *set)
{
	struct timeval far = { CONN_RESUME_PARK_S, 0 };

	evtimer_add(set->resume, &far);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct conn_set *set = arg;

	(void)fd;
	(void)what;
	if (set->listener != NULL)
		evconnlistener_enable(set->listener);
	park_resume(set);
}

/* Finds the set whose listener failed: libevent hands the error callback
 * the listener's accept argument (evhttp's), not ours, so we look for the
 * set's own resume timer among the base's pending events. */
struct set_search {
	struct evconnlistener *listener;
	struct conn_set *found;
};

static int find_set(const struct event_base *base, const struct event *ev, void *arg)
{
	struct set_search *q = arg;
	struct conn_set *set;

	(void)base;
	if (event_get_callback(ev) != on_resume)
		return 0;
	set = event_get_callback_arg(ev);
	if (set->listener != q->listener)
		return 0;
	q->found = set;
	return 1;
}

static void on_accept_error(struct evconnlistener *listener, void *arg)
{
	struct set_search q = { listener, NULL };
	struct timeval tv = { 0, CONN_ACCEPT_PAUSE_MS * 1000 };
	int e = EVUTIL_SOCKET_ERROR();
	struct conn_set *set;
	time_t now;

	(void)arg;
	event_base_foreach_event(evconnlistener_get_base(listener), find_set, &q);
	if ((set = q.found) == NULL)
		return;
	if (e != EMFILE && e != ENFILE && e != ENOBUFS && e != ENOMEM) {
		log_warn(set->log, "accept failed: %s", strerror(e));
		return;
	}
	/* The pending connection keeps the socket readable: without a pause
	 * the loop would spin until a descriptor frees up. */
	evconnlistener_disable(listener);
	evtimer_add(set->resume, &tv);
	now = time(NULL);
	if (now - set->emfile_logged >= CONN_EMFILE_LOG_EVERY_S) {
		set->emfile_logged = now;
		log_warn(set->log, "accept failed (%s, %zu connections open): pausing new "
		    "connections; raise the descriptor limit (ulimit -n, LimitNOFILE) or lower "
		    "max_connections", strerror(e), set->count);
	}
}

int conn_set_new(struct event_base *base, struct evhttp *http,
    const struct conn_limits *lim, const struct log *lg, struct conn_set **out)
{
	struct conn_set *set;

	*out = NULL;
	if ((set = calloc(1, sizeof(*set))) == NULL)
		return VEP_ERR_NOMEM;
	set->lim = *lim;
	set->log = lg;
	if ((set->resume = evtimer_new(base, on_resume, set)) == NULL) {
		free(set);
		return VEP_ERR_NOMEM;
	}
	evhttp_set_bevcb(http, make_bev, set);
	*out = set;
	return VEP_OK;
}

void conn_set_watch_listener(struct conn_set *set, struct evconnlistener *listener)
{
	set->listener = listener;
	evconnlistener_set_error_cb(listener, on_accept_error);
	park_resume(set);
}

void conn_set_free(struct conn_set *set)
{
	if (set == NULL)
		return;
	event_free(set->resume);
	free(set->by_fd);
	free(set);
}

struct conn *conn_request_begin(struct conn_set *set, struct evhttp_request *ev)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(ev);
	struct bufferevent *bev;
	struct conn *c;
	evutil_socket_t fd;

	if (evcon == NULL || (bev = evhttp_connection_get_bufferevent(evcon)) == NULL)
		return NULL;
	fd = bufferevent_getfd(bev);
	if (fd < 0 || (size_t)fd >= set->by_fd_len || (c = set->by_fd[fd]) == NULL ||
	    c->evcon != evcon)
		return NULL;
	evtimer_del(c->timer);
	c->state = CONN_BUSY;
	c->scan = SCAN_OFF;
	c->inflight++;
	c->refs++;
	return c;
}

const char *conn_refusal(const struct conn *c)
{
	return c != NULL ? c->refusal : NULL;
}

void conn_request_end(struct conn *c)
{
	if (c == NULL)
		return;
	c->inflight--;
	c->refusal = NULL;
	if (c->set != NULL && c->inflight == 0) {
		c->state = CONN_IDLE;
		/* A pipelined request already (partly) here: its deadline runs
		 * from now, head and body together (it was not scanned). */
		if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0) {
			c->state = CONN_READING;
			arm(c, c->set->lim.header_ms + c->set->lim.body_ms);
		}
	}
	conn_unref(c);
}
