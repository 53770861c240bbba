/*
 * edge/conn.c - one HTTP/1.1 server connection (see edge/conn.h).
 *
 * The input buffer always starts at the first byte of the request being
 * read (the ones before are taken out whole), and every byte in it has
 * been scanned, up to the first one the scanner refused. A request is
 * whole when its head's empty line and then its body (Content-Length, or
 * the last chunk) are all in the buffer; since the scanner accepted those
 * bytes, finding the ends needs no judgement of ours.
 */
#include "edge/conn.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "core/log.h"
#include "edge/head.h"
#include "edge/req.h"
#include "err.h"
#include "secmem.h"

enum conn_state {
	CONN_READING,   /* a request (or, first, the TLS handshake) is arriving */
	CONN_BODY,      /* its head is here, its body is arriving */
	CONN_BUSY,      /* a handler holds a request */
	CONN_IDLE,      /* between requests */
	CONN_CLOSING,   /* the last answer is being written */
};

struct conn {
	struct conn_group *g;      /* NULL once the connection closed */
	struct conn *prev, *next;  /* in g's list */
	struct bufferevent *bev;   /* valid while g != NULL */
	struct event *timer;       /* the header or body deadline */
	struct head *head;         /* the request whose body is arriving */
	struct req_scan scan;      /* every byte read, in order */
	unsigned long long base;   /* stream offset of the input's first byte */
	size_t scanned;            /* input bytes the scanner has seen */
	unsigned served;           /* requests taken out of the input */
	enum conn_state state;
	unsigned refs;             /* the connection itself + a request out */
	unsigned tls : 1;
	unsigned eof : 1;          /* the client closed its side */
	unsigned refused : 1;      /* the scanner refused a request */
	unsigned counted : 1;      /* addr is counted in g->addrs */
	unsigned continued : 1;    /* "100 Continue" sent for this request */
	unsigned char addr[ADDRS_KEY_BYTES];
	char peer[INET6_ADDRSTRLEN];
};

static void process(struct conn *c);

static void
conn_unref(struct conn *c)
{
	if (--c->refs > 0)
		return;
	if (c->timer != NULL)
		event_free(c->timer);
	free(c);
}

static void
arm(struct conn *c, long ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(c->timer, &tv);
}

/* The idle timeout on reads (off while a handler holds a request) and on
 * writes that make no progress. */
static void
set_timeouts(struct conn *c, int reading)
{
	long ms = c->g->idle_ms;
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	bufferevent_set_timeouts(c->bev, reading ? &tv : NULL, &tv);
}

/* The connection closes now (any reason); a request out keeps c. */
static void
close_now(struct conn *c)
{
	struct conn_group *g = c->g;

	if (g == NULL)
		return;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		g->first = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	g->count--;
	if (c->counted)
		addrs_release(g->addrs, c->addr);
	c->counted = 0;
	evtimer_del(c->timer);
	bufferevent_free(c->bev);
	c->bev = NULL;
	head_free(c->head);
	c->head = NULL;
	c->g = NULL;
	conn_unref(c);
}

/* Drops the input from byte keep on: it belongs to a refused request. */
static void
cut_input(struct evbuffer *in, size_t keep)
{
	struct evbuffer *head;
	size_t len = evbuffer_get_length(in);

	if (keep >= len)
		return;
	if (keep == 0 || (head = evbuffer_new()) == NULL) {
		/* Without memory for the cut the requests before it go
		 * unanswered, which is still never a misread. */
		evbuffer_drain(in, len);
		return;
	}
	/* A bufferevent's input takes bytes at its end only from the
	 * bufferevent itself: the kept ones go back at the front. */
	if (evbuffer_remove_buffer(in, head, keep) < 0 || evbuffer_drain(in, len) != 0 ||
	    evbuffer_prepend_buffer(in, head) != 0)
		evbuffer_drain(in, evbuffer_get_length(in));
	evbuffer_free(head);
}

/* Feeds the bytes read since the last call to the scanner. */
static void
scan_input(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	size_t len = evbuffer_get_length(in);
	struct evbuffer_iovec vec[8];
	struct evbuffer_ptr pos;

	if (c->refused) {
		/* Nothing after a refused request is read as a request. */
		if (len > c->scanned)
			cut_input(in, c->scanned);
		return;
	}
	while (c->scanned < len) {
		int n;

		if (evbuffer_ptr_set(in, &pos, c->scanned, EVBUFFER_PTR_SET) != 0 ||
		    (n = evbuffer_peek(in, (ev_ssize_t)(len - c->scanned), &pos, vec, 8)) <= 0)
			break;
		for (int i = 0; i < n && i < 8 && c->scanned < len; i++) {
			size_t k = vec[i].iov_len < len - c->scanned ? vec[i].iov_len :
			    len - c->scanned;

			if (req_scan_feed(&c->scan, vec[i].iov_base, k) != 0)
				break;
			c->scanned += k;
		}
		if (c->scan.error != 0)
			break;
	}
	if (c->scan.error == 0)
		return;
	c->refused = 1;
	c->scanned = c->scan.start > c->base ? (size_t)(c->scan.start - c->base) : 0;
	cut_input(in, c->scanned);
}

/* Every request before the refused one is answered: the refusal, then the
 * close. */
static void
refuse(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	char reply[REQ_RAW_BUFSZ];
	size_t n;

	evbuffer_drain(in, evbuffer_get_length(in));
	c->scanned = 0;
	c->state = CONN_CLOSING;
	n = req_raw_reply(reply, sizeof(reply), c->scan.error, c->scan.why,
	    c->tls ? c->g->hsts : NULL, NULL);
	log_info(c->g->log, "refusing a request and closing its connection: %s", c->scan.why);
	if (n == 0 || bufferevent_write(c->bev, reply, n) != 0) {
		close_now(c);
		return;
	}
	/* The client has header_timeout to read it. */
	arm(c, c->g->header_ms);
}

/* Takes the whole request of total bytes (head_len of head) out of the
 * input and hands it to the handler. */
static void
dispatch(struct conn *c, size_t head_len, size_t total)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	struct conn_group *g = c->g;
	struct head *h = c->head;
	unsigned char *raw, *body = NULL;
	size_t rawlen = total - head_len, len = 0;

	if (rawlen > 0) {
		if ((raw = evbuffer_pullup(in, (ev_ssize_t)total)) == NULL ||
		    (body = malloc(rawlen)) == NULL) {
			close_now(c);
			return;
		}
		raw += head_len;
		if (h->chunked) {
			len = head_dechunk(raw, rawlen, body);
		} else {
			memcpy(body, raw, rawlen);
			len = rawlen;
		}
		/* The body may be a password: wiped where we read it. */
		vep_memzero(raw, rawlen);
		if (len == 0) {
			free(body);
			body = NULL;
		}
	}
	evbuffer_drain(in, total);
	c->base += total;
	c->scanned -= total;
	c->served++;
	c->head = NULL;
	c->continued = 0;
	c->state = CONN_BUSY;
	c->refs++;
	evtimer_del(c->timer);
	set_timeouts(c, 0);
	bufferevent_setwatermark(c->bev, EV_READ, 0, CONN_BUSY_READ_BYTES);
	g->on_request(g->arg, c, h, body, len);
}

/* Serves what the input holds, as far as the state allows. */
static void
process(struct conn *c)
{
	struct evbuffer *in;
	struct evbuffer_ptr end;
	size_t len, head_len, total;
	unsigned char *p;

	if (c->g == NULL || c->state == CONN_BUSY || c->state == CONN_CLOSING)
		return;
	/* The answer before (or a 100 Continue) is still going out. */
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) > 0)
		return;
	if (c->refused && c->scan.requests == c->served + 1) {
		refuse(c);
		return;
	}
	in = bufferevent_get_input(c->bev);
	if ((len = evbuffer_get_length(in)) == 0) {
		if (c->eof)
			close_now(c);
		/* CONN_READING with nothing here: the first request's
		 * deadline runs from the open. */
		return;
	}
	if (c->state == CONN_IDLE) {
		/* The first bytes of the next request. */
		c->state = CONN_READING;
		arm(c, c->g->header_ms);
	}
	if (c->head == NULL) {
		end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
		if (end.pos < 0) {
			if (c->eof)
				close_now(c);
			return;
		}
		head_len = (size_t)end.pos + 4;
		if ((p = evbuffer_pullup(in, (ev_ssize_t)head_len)) == NULL ||
		    head_parse((const char *)p, head_len, &c->head) != VEP_OK) {
			close_now(c);
			return;
		}
		c->state = CONN_BODY;
		arm(c, c->g->body_ms);
	}
	end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	head_len = (size_t)end.pos + 4;
	if (c->head->chunked) {
		if ((p = evbuffer_pullup(in, -1)) == NULL) {
			close_now(c);
			return;
		}
		total = head_chunked_length(p + head_len, len - head_len);
		total = total > 0 ? head_len + total : 0;
	} else {
		total = head_len + (size_t)c->head->length;
		if (total > len)
			total = 0;
	}
	if (total > 0) {
		dispatch(c, head_len, total);
		return;
	}
	if (c->eof) {
		close_now(c);
		return;
	}
	if (c->head->expect_continue && !c->continued && len == head_len) {
		static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

		c->continued = 1;
		if (bufferevent_write(c->bev, cont, sizeof(cont) - 1) != 0)
			close_now(c);
	}
}

static void
on_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	scan_input(c);
	process(c);
}

/* Everything queued is written. */
static void
on_write(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	if (c->state == CONN_CLOSING) {
		close_now(c);
		return;
	}
	if (c->state == CONN_IDLE) {
		/* An answer is out: back to reading freely, idle timeout on. */
		bufferevent_setwatermark(c->bev, EV_READ, 0, 0);
		set_timeouts(c, 1);
	}
	process(c);
}

static void
on_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED)
		return;  /* the TLS handshake is done */
	if ((what & BEV_EVENT_EOF) && (what & BEV_EVENT_READING) && !(what & BEV_EVENT_ERROR)) {
		/* The client closed its side: what it sent whole is still
		 * answered (a handler's answer included); then we close. */
		c->eof = 1;
		if (c->state != CONN_BUSY && c->state != CONN_CLOSING)
			process(c);
		return;
	}
	close_now(c);
}

/* The header or body deadline passed (or the client did not read our
 * refusal in time). */
static void
on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	if (c->g == NULL || c->state == CONN_BUSY)
		return;
	log_info(c->g->log, "closing a connection: request not complete within its deadline");
	close_now(c);
}

int
conn_open(struct conn_group *g, struct bufferevent *bev, int tls, const char *peer,
    const unsigned char *addr_key)
{
	struct conn *c;

	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->timer = evtimer_new(bufferevent_get_base(bev), on_deadline, c)) == NULL) {
		free(c);
		bufferevent_free(bev);
		if (addr_key != NULL)
			addrs_release(g->addrs, addr_key);
		return VEP_ERR_NOMEM;
	}
	c->g = g;
	c->bev = bev;
	c->refs = 1;
	c->tls = tls != 0;
	c->state = CONN_READING;
	req_scan_init(&c->scan);
	if (addr_key != NULL) {
		memcpy(c->addr, addr_key, ADDRS_KEY_BYTES);
		c->counted = 1;
	}
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	c->next = g->first;
	if (g->first != NULL)
		g->first->prev = c;
	g->first = c;
	g->count++;
	bufferevent_setcb(bev, on_read, on_write, on_event, c);
	set_timeouts(c, 1);
	arm(c, g->header_ms);
	if (bufferevent_enable(bev, EV_READ | EV_WRITE) != 0) {
		close_now(c);
		return VEP_ERR_NOMEM;
	}
	return VEP_OK;
}

const char *
conn_peer(const struct conn *c)
{
	return c->peer;
}

int
conn_tls(const struct conn *c)
{
	return c->tls;
}

void
conn_reply(struct conn *c, struct evbuffer *reply, int keep_alive)
{
	struct evbuffer *out;

	if (c->g == NULL || c->state != CONN_BUSY) {
		conn_unref(c);
		return;
	}
	out = bufferevent_get_output(c->bev);
	/* Plain TCP with nothing queued: the answer goes to the socket now,
	 * and only what it does not take waits for the bufferevent's write
	 * event. Queued first, the answer would cost an epoll round (the
	 * write event added, fired, removed) per request; the socket almost
	 * always takes it whole. TLS answers go through the bufferevent. A
	 * write error is left to the bufferevent to find on the rest. */
	if (!c->tls && evbuffer_get_length(out) == 0)
		(void)evbuffer_write(reply, bufferevent_getfd(c->bev));
	if (evbuffer_add_buffer(out, reply) != 0) {
		close_now(c);
	} else if (!keep_alive) {
		/* What the client sends meanwhile is read and dropped, so that
		 * the close does not reset the answer away. */
		c->state = CONN_CLOSING;
		c->refused = 1;
		cut_input(bufferevent_get_input(c->bev), 0);
		c->scanned = 0;
		/* All out: on_write closes, later in this loop pass. */
		if (evbuffer_get_length(out) == 0)
			bufferevent_trigger(c->bev, EV_WRITE, BEV_TRIG_DEFER_CALLBACKS);
	} else {
		/* Reading stays bounded and the next request waits until the
		 * answer is out (on_write). */
		c->state = CONN_IDLE;
		/* All out: on_write runs later in this loop pass (deferred, so a
		 * pipelined request's answer does not recurse into the next). */
		if (evbuffer_get_length(out) == 0)
			bufferevent_trigger(c->bev, EV_WRITE, BEV_TRIG_DEFER_CALLBACKS);
	}
	conn_unref(c);
}

void
conn_abandon(struct conn *c)
{
	if (c->state == CONN_BUSY)
		close_now(c);
	conn_unref(c);
}

void
conn_group_close(struct conn_group *g)
{
	while (g->first != NULL)
		close_now(g->first);
}
