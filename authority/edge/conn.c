/*
 * edge/conn.c - per-connection deadlines, the connection caps, the raw framing
 * scan and accept back-off (see edge/conn.h for what and why).
 *
 * How a connection is followed without a hook in evhttp for it: we create
 * its bufferevent (bevcb), watch its input buffer (every byte read passes
 * through there before evhttp parses it), and in the same loop iteration,
 * once evhttp has built the connection around our bufferevent, take the
 * connection from the bufferevent's callback argument and ask for its close
 * callback. Requests find their connection by descriptor (by_fd), which
 * is unique among this loop's open connections.
 *
 * How a refused request is kept from evhttp: the input buffer callback
 * runs inside the read, before evhttp's read callback. The refused
 * request's bytes (and all after them) are cut from the buffer there, so
 * evhttp only ever parses the requests before it. Once those are answered
 * (none in a handler), the bufferevent's callbacks are replaced by ours:
 * evhttp gets no further event from it (its deferred read also goes through
 * the bufferevent's read callback), our answer is queued behind whatever
 * evhttp is still writing, and the write callback frees the connection
 * when all of it is out.
 */
#include "edge/conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "err.h"
#include "core/log.h"
#include "edge/req.h"

/* The over-capacity answer's extra header: when to come back, seconds. */
#define CONN_BUSY_EXTRA "Retry-After: 1\r\n"

/* Bytes of a per-address key: a family byte, then the IPv4 address or
 * the IPv6 /64 (the rest zero). */
#define CONN_ADDR_KEY_BYTES 17
/* Bytes of an IPv6 prefix counted as one client (a /64: one site). */
#define CONN_ADDR_V6_PREFIX_BYTES 8

/* Seconds the idle resume timer waits (it only needs to be pending). */
#define CONN_RESUME_PARK_S 86400

/* Seconds between two "out of descriptors" log lines. */
#define CONN_EMFILE_LOG_EVERY_S 10

enum conn_state {
	CONN_READING,   /* a request is arriving: the deadline runs */
	CONN_BUSY,      /* a handler holds a request */
	CONN_IDLE,      /* between requests: evhttp's idle timeout applies */
};

struct conn {
	struct conn_set *set;     /* NULL once the connection closed */
	struct bufferevent *bev;  /* valid while set != NULL */
	struct evhttp_connection *evcon;
	struct event *timer;      /* the deadline */
	struct event *attach;     /* one-shot: finds evcon after the accept */
	int fd;
	enum conn_state state;
	struct req_scan scan;     /* every byte read, in order */
	unsigned begun;           /* requests handed to handlers so far */
	unsigned ended;           /* ... and answered */
	unsigned body_armed;      /* the request whose body deadline runs */
	unsigned inflight;        /* requests handed to handlers, not yet ended */
	unsigned refs;            /* the connection itself + inflight */
	int refusing;             /* the scanner refused a request: */
	unsigned refuse_after;    /* ... answered after this many */
	int taken;                /* taken from evhttp: our answer is going out */
	int cutting;              /* cutting the input buffer (our own change) */
	int tls;                  /* 1: an OpenSSL bufferevent */
	int doomed;               /* 1: close at attach (no TLS state could be made) */
	int counted;              /* 1: counted in set->lim.addrs under addr */
	unsigned char addr[CONN_ADDR_KEY_BYTES];
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
	char busy[REQ_RAW_BUFSZ]; /* the over-capacity answer */
	size_t busy_len;
};

/* One client address's open connections. */
struct conn_addr {
	unsigned char key[CONN_ADDR_KEY_BYTES];
	size_t count;
	struct conn_addr *next;
};

struct conn_addrs {
	pthread_mutex_t lock;
	size_t cap;               /* connections per address */
	struct conn_addr **buckets;
	size_t nbuckets;          /* a power of two */
	size_t n;                 /* addresses with open connections */
	uint64_t seed;            /* random: bucket choice is not the client's */
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

/* The per-address table's bucket of key (seeded FNV-1a, then mixed). */
static size_t addr_bucket(const struct conn_addrs *t, const unsigned char *key)
{
	uint64_t h = 14695981039346656037ULL ^ t->seed;

	for (size_t i = 0; i < CONN_ADDR_KEY_BYTES; i++)
		h = (h ^ key[i]) * 1099511628211ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h & (t->nbuckets - 1);
}

/* Doubles the buckets (under the lock); on allocation failure the table
 * just stays fuller. */
static void addr_grow(struct conn_addrs *t)
{
	size_t n = t->nbuckets * 2, old = t->nbuckets;
	struct conn_addr **b = calloc(n, sizeof(*b)), **ob = t->buckets, *e, *next;

	if (b == NULL)
		return;
	t->buckets = b;
	t->nbuckets = n;
	for (size_t i = 0; i < old; i++) {
		for (e = ob[i]; e != NULL; e = next) {
			size_t h = addr_bucket(t, e->key);
			next = e->next;
			e->next = b[h];
			b[h] = e;
		}
	}
	free(ob);
}

/* Counts one more connection from key. Returns 0, VEP_ERR_TOOBIG when the
 * address is at the cap, or VEP_ERR_NOMEM. */
static int addr_take(struct conn_addrs *t, const unsigned char *key)
{
	struct conn_addr *e;
	size_t h;
	int rc = VEP_OK;

	pthread_mutex_lock(&t->lock);
	h = addr_bucket(t, key);
	for (e = t->buckets[h]; e != NULL; e = e->next)
		if (memcmp(e->key, key, CONN_ADDR_KEY_BYTES) == 0)
			break;
	if (e == NULL) {
		if ((e = calloc(1, sizeof(*e))) == NULL) {
			rc = VEP_ERR_NOMEM;
			goto out;
		}
		memcpy(e->key, key, CONN_ADDR_KEY_BYTES);
		e->next = t->buckets[h];
		t->buckets[h] = e;
		if (++t->n > t->nbuckets)
			addr_grow(t);
	}
	if (e->count >= t->cap)
		rc = VEP_ERR_TOOBIG;
	else
		e->count++;
out:
	pthread_mutex_unlock(&t->lock);
	return rc;
}

/* One connection from key closed. */
static void addr_release(struct conn_addrs *t, const unsigned char *key)
{
	struct conn_addr **pp, *e;

	pthread_mutex_lock(&t->lock);
	for (pp = &t->buckets[addr_bucket(t, key)]; (e = *pp) != NULL; pp = &e->next) {
		if (memcmp(e->key, key, CONN_ADDR_KEY_BYTES) != 0)
			continue;
		if (e->count > 0)
			e->count--;
		if (e->count == 0) {
			*pp = e->next;
			free(e);
			t->n--;
		}
		break;
	}
	pthread_mutex_unlock(&t->lock);
}

/* The peer of fd as a per-address key and as text. Returns 0 or -1. */
static int peer_key(int fd, unsigned char *key, char *text, size_t textlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;

	memset(key, 0, CONN_ADDR_KEY_BYTES);
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0)
		return -1;
	if (ss.ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		key[0] = 4;
		memcpy(key + 1, s6->sin6_addr.s6_addr + 12, 4);
		return inet_ntop(AF_INET, key + 1, text, (socklen_t)textlen) != NULL ? 0 : -1;
	}
	if (ss.ss_family == AF_INET6) {
		key[0] = 6;
		memcpy(key + 1, s6->sin6_addr.s6_addr, CONN_ADDR_V6_PREFIX_BYTES);
		return inet_ntop(AF_INET6, &s6->sin6_addr, text, (socklen_t)textlen) != NULL ?
		    0 : -1;
	}
	if (ss.ss_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &s4->sin_addr, 4);
		return inet_ntop(AF_INET, &s4->sin_addr, text, (socklen_t)textlen) != NULL ? 0 : -1;
	}
	return -1;
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
	if (c->counted)
		addr_release(set->lim.addrs, c->addr);
	c->counted = 0;
	set->count--;
	evtimer_del(c->timer);
	evbuffer_remove_cb(bufferevent_get_input(c->bev), on_input, c);
	c->set = NULL;
	c->bev = NULL;
	c->evcon = NULL;
	conn_unref(c);
}

/* The deadline passed with the request still arriving (or, once taken,
 * with our answer still not read by the client). */
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

/* Keeps only the first keep bytes of the input buffer: the rest belongs to
 * a refused request and must never reach evhttp. */
static void cut_input(struct conn *c, struct evbuffer *in, size_t keep)
{
	struct evbuffer *head = NULL;
	size_t len = evbuffer_get_length(in);

	if (keep >= len)
		return;
	c->cutting = 1;
	if (keep > 0 && ((head = evbuffer_new()) == NULL ||
	    evbuffer_remove_buffer(in, head, keep) < 0))
		keep = 0;
	evbuffer_drain(in, evbuffer_get_length(in));
	if (keep > 0 && evbuffer_add_buffer(in, head) != 0)
		keep = 0;
	/* Nothing kept: no request is left to answer before the refusal
	 * (or, short of memory, the ones left go unanswered). */
	if (keep == 0)
		c->refuse_after = c->begun;
	if (head != NULL)
		evbuffer_free(head);
	c->cutting = 0;
}

/* Our answer is out: the connection goes. */
static void on_taken_written(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	if (c->evcon != NULL)
		evhttp_connection_free(c->evcon);   /* calls on_close */
}

/* The client left (or the socket failed) before our answer was out. */
static void on_taken_event(struct bufferevent *bev, short what, void *arg)
{
	(void)what;
	on_taken_written(bev, arg);
}

/* Every request before the refused one is answered and none is in a
 * handler: takes the connection from evhttp and answers the refusal. */
static void take(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	char reply[REQ_RAW_BUFSZ];
	size_t n;

	c->taken = 1;
	c->state = CONN_READING;
	bufferevent_setcb(c->bev, NULL, on_taken_written, on_taken_event, c);
	cut_input(c, in, 0);
	n = req_raw_reply(reply, sizeof(reply), c->scan.error, c->scan.why, c->tls, NULL);
	log_info(c->set->log, "refusing a request and closing its connection: %s", c->scan.why);
	/* The client has header_timeout to read it. Without an answer (no
	 * memory), the connection goes at the next loop iteration: not from
	 * here, which may be inside its bufferevent's read. */
	if (n == 0 || bufferevent_write(c->bev, reply, n) != 0 ||
	    bufferevent_enable(c->bev, EV_WRITE) != 0)
		arm(c, 0);
	else
		arm(c, c->set->lim.header_ms);
}

/* Every change of the connection's input buffer, before evhttp parses. */
static void on_input(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct conn *c = arg;
	struct evbuffer_iovec vec[8];
	struct evbuffer_ptr pos;
	size_t len, left, start;
	unsigned long long first;

	if (info->n_added == 0 || c->set == NULL || c->cutting)
		return;
	len = evbuffer_get_length(buf);
	if (c->taken || c->refusing) {
		/* After a refused request nothing more is read as a request. */
		cut_input(c, buf, len - info->n_added);
		return;
	}
	if (c->state == CONN_IDLE && c->inflight == 0) {
		/* The first bytes of the next request. */
		c->state = CONN_READING;
		arm(c, c->set->lim.header_ms);
	}
	/* The buffer ends with the added bytes; the scanner reads them in
	 * order. */
	first = c->scan.offset;
	start = len - info->n_added;
	left = info->n_added;
	while (left > 0) {
		size_t done = 0;
		int n;

		if (evbuffer_ptr_set(buf, &pos, start, EVBUFFER_PTR_SET) != 0 ||
		    (n = evbuffer_peek(buf, (ev_ssize_t)left, &pos, vec, 8)) <= 0)
			break;
		for (int i = 0; i < n && i < 8 && done < left; i++) {
			size_t k = vec[i].iov_len < left - done ? vec[i].iov_len : left - done;

			if (req_scan_feed(&c->scan, vec[i].iov_base, k) != REQ_ERR_COUNT)
				break;
			done += k;
		}
		if (c->scan.error != REQ_ERR_COUNT || done == 0)
			break;
		start += done;
		left -= done;
	}
	if (c->scan.error != REQ_ERR_COUNT) {
		/* Where the refused request starts in the buffer: the new
		 * bytes start at base, stream offset first. Before them, only
		 * bytes evhttp has not consumed are still there. */
		size_t base = len - info->n_added, keep = 0;

		if (c->scan.start >= first)
			keep = base + (size_t)(c->scan.start - first);
		else if (first - c->scan.start <= base)
			keep = base - (size_t)(first - c->scan.start);
		/* else evhttp already took part of it: it was reading that
		 * very request, with nothing before it unanswered. */
		c->refusing = 1;
		c->refuse_after = c->scan.requests - 1;
		cut_input(c, buf, keep);
		if (c->inflight == 0 && c->ended >= c->refuse_after)
			take(c);
		return;
	}
	/* The head of the request evhttp reads now is complete: its body
	 * has its own deadline. */
	if (c->state == CONN_READING && c->inflight == 0 && c->scan.heads > c->begun &&
	    c->body_armed != c->begun + 1) {
		c->body_armed = c->begun + 1;
		arm(c, c->set->lim.body_ms);
	}
}

/* Runs once, in the accept's loop iteration, after evhttp built the
 * connection around c->bev and before anything was read. */
static void on_attach(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct conn_set *set = c->set;
	char peer[INET6_ADDRSTRLEN];
	void *cbarg = NULL;
	const char *why = NULL;

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
	if (c->doomed)
		why = "no TLS state";
	else if (set->count > set->lim.max_conns)
		why = "max_connections reached";
	else if (by_fd_put(set, c->fd, c) != VEP_OK)
		why = "out of memory";
	else if (set->lim.addrs != NULL && peer_key(c->fd, c->addr, peer, sizeof(peer)) == 0 &&
	    (set->lim.addr_exempt == NULL || !set->lim.addr_exempt(set->lim.addr_exempt_arg,
	    peer))) {
		int rc = addr_take(set->lim.addrs, c->addr);

		if (rc == VEP_OK)
			c->counted = 1;
		else
			why = rc == VEP_ERR_TOOBIG ? "max_connections_per_addr reached" :
			    "out of memory";
	}
	if (why != NULL) {
		if (!c->tls && !c->doomed) {
			ssize_t w = send(c->fd, set->busy, set->busy_len, MSG_DONTWAIT | MSG_NOSIGNAL);

			(void)w; /* best effort: the close is the answer that matters */
		}
		log_debug(set->log, "refusing a connection: %zu open, %s", set->count - 1, why);
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
	req_scan_init(&c->scan);
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

int conn_addrs_new(size_t cap, struct conn_addrs **out)
{
	struct conn_addrs *t;

	*out = NULL;
	if (cap == 0)
		return VEP_ERR_INVALID;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return VEP_ERR_NOMEM;
	t->cap = cap;
	t->nbuckets = CONN_ADDR_BUCKETS_MIN;
	if ((t->buckets = calloc(t->nbuckets, sizeof(*t->buckets))) == NULL ||
	    pthread_mutex_init(&t->lock, NULL) != 0) {
		free(t->buckets);
		free(t);
		return VEP_ERR_NOMEM;
	}
	/* Without randomness the seed is only less secret, not wrong. */
	if (RAND_bytes((unsigned char *)&t->seed, sizeof(t->seed)) != 1)
		t->seed = (uint64_t)time(NULL);
	*out = t;
	return VEP_OK;
}

void conn_addrs_free(struct conn_addrs *t)
{
	struct conn_addr *e, *next;

	if (t == NULL)
		return;
	for (size_t i = 0; i < t->nbuckets; i++) {
		for (e = t->buckets[i]; e != NULL; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(t->buckets);
	pthread_mutex_destroy(&t->lock);
	free(t);
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
	/* Plain HTTP only (a TLS connection gets no bytes before its
	 * handshake): Content-Length is computed from the body. */
	set->busy_len = req_raw_reply(set->busy, sizeof(set->busy), REQ_ERR_UNAVAILABLE, NULL, 0,
	    CONN_BUSY_EXTRA);
	if (set->busy_len == 0 || (set->resume = evtimer_new(base, on_resume, set)) == NULL) {
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
	c->begun++;
	c->inflight++;
	c->refs++;
	return c;
}

void conn_request_end(struct conn *c)
{
	if (c == NULL)
		return;
	c->inflight--;
	c->ended++;
	if (c->set != NULL && c->inflight == 0 && !c->taken) {
		if (c->refusing && c->ended >= c->refuse_after) {
			/* The answer just queued is the last before the
			 * refused request's. */
			take(c);
		} else {
			c->state = CONN_IDLE;
			/* A pipelined request already (partly) here: its
			 * deadline runs from now, head and body together. */
			if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0) {
				c->state = CONN_READING;
				c->body_armed = c->begun + 1;
				arm(c, c->set->lim.header_ms + c->set->lim.body_ms);
			}
		}
	}
	conn_unref(c);
}
