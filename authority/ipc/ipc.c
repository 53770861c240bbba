/*
 * ipc/ipc.c - framed, typed messages over a byte stream (see ipc/ipc.h for the wire
 * format and the contract).
 *
 * Owns: encoding, parsing and size-checking of frames, and wiping buffers.
 * Must never: include PAM, libevent or libvep code beyond err.h; it is linked
 * into vep-pam-helper, which stays free of OpenSSL. That is also why it wipes
 * with explicit_bzero (glibc) rather than libvep's vep_memzero.
 */
#include "ipc/ipc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

/* Smallest allocation for a buffer, in bytes; avoids tiny reallocations. */
#define IPC_BUF_MIN_CAP 256

/* Bytes of each field header: tag + 2-byte length. */
#define IPC_FIELD_HEADER_BYTES 3

struct ipc_field {
	uint8_t tag;
	size_t off;   /* offset of the value inside frame.data */
	size_t len;
};

struct ipc_msg {
	struct ipc_buf frame;   /* header + body, as on the wire */
	size_t max;             /* cap on the body, bytes */
	size_t nfields;
	struct ipc_field fields[IPC_MAX_FIELDS];
};

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t
get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Grows b so that it can hold need bytes in total. Copies into fresh memory
 * and wipes the old block instead of realloc(), which could leave a copy of
 * a password behind in freed memory. */
int
ipc_buf_reserve(struct ipc_buf *b, size_t need)
{
	size_t cap;
	uint8_t *p;

	if (need <= b->cap)
		return VEP_OK;
	cap = b->cap ? b->cap : IPC_BUF_MIN_CAP;
	while (cap < need)
		cap *= 2;
	p = malloc(cap);
	if (p == NULL)
		return VEP_ERR_NOMEM;
	if (b->len)
		memcpy(p, b->data, b->len);
	if (b->data) {
		explicit_bzero(b->data, b->len);
		free(b->data);
	}
	b->data = p;
	b->cap = cap;
	return VEP_OK;
}

int
ipc_buf_append(struct ipc_buf *b, const void *p, size_t n)
{
	int rc;

	if (n == 0)
		return VEP_OK;
	if (b->len + n < b->len)
		return VEP_ERR_NOMEM;
	rc = ipc_buf_reserve(b, b->len + n);
	if (rc != VEP_OK)
		return rc;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return VEP_OK;
}

void
ipc_buf_consume(struct ipc_buf *b, size_t n)
{
	if (n > b->len)
		n = b->len;
	if (n == 0)
		return;
	memmove(b->data, b->data + n, b->len - n);
	/* The tail now holds stale bytes (possibly a password): wipe them. */
	explicit_bzero(b->data + b->len - n, n);
	b->len -= n;
}

void
ipc_buf_clear(struct ipc_buf *b)
{
	if (b == NULL)
		return;
	/* Only the bytes in use can hold anything (struct ipc_buf): a
	 * receive buffer sized for the largest frame wipes what it got,
	 * not its whole capacity, every time. */
	if (b->data) {
		explicit_bzero(b->data, b->len);
		free(b->data);
	}
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

int
ipc_buf_read_fd(struct ipc_buf *b, int fd, int *eof)
{
	/* One frame can never need more than header + maximal body; a peer
	 * that sends more before we consume is over the cap anyway, and
	 * ipc_take_msg will say so. */
	const size_t want = IPC_HEADER_BYTES + IPC_FRAME_MAX_BYTES;
	ssize_t got;
	int rc;

	*eof = 0;
	if (b->len >= want)
		return VEP_OK;
	rc = ipc_buf_reserve(b, want);
	if (rc != VEP_OK)
		return rc;
	do {
		got = read(fd, b->data + b->len, want - b->len);
	} while (got < 0 && errno == EINTR);
	if (got < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? VEP_OK : VEP_ERR_IO;
	if (got == 0)
		*eof = 1;
	b->len += (size_t)got;
	return VEP_OK;
}

int
ipc_buf_write_fd(struct ipc_buf *b, int fd)
{
	ssize_t put;

	while (b->len > 0) {
		put = write(fd, b->data, b->len);
		if (put < 0 && errno == EINTR)
			continue;
		if (put < 0)
			return (errno == EAGAIN || errno == EWOULDBLOCK) ? VEP_OK : VEP_ERR_IO;
		ipc_buf_consume(b, (size_t)put);
	}
	return VEP_OK;
}

struct ipc_msg *
ipc_msg_new(uint8_t type)
{
	return ipc_msg_new_max(type, IPC_FRAME_MAX_BYTES);
}

struct ipc_msg *
ipc_msg_new_max(uint8_t type, size_t max)
{
	struct ipc_msg *m;
	uint8_t hdr[IPC_HEADER_BYTES + 1] = { 0, 0, 0, 1, type };

	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->max = max;
	if (ipc_buf_append(&m->frame, hdr, sizeof(hdr)) != VEP_OK) {
		free(m);
		return NULL;
	}
	return m;
}

static const struct ipc_field *
find_field(const struct ipc_msg *m, uint8_t tag)
{
	size_t i;

	for (i = 0; i < m->nfields; i++)
		if (m->fields[i].tag == tag)
			return &m->fields[i];
	return NULL;
}

int
ipc_msg_put(struct ipc_msg *m, uint8_t tag, const void *p, size_t n)
{
	uint8_t fh[IPC_FIELD_HEADER_BYTES];
	size_t body;
	int rc;

	if (find_field(m, tag) != NULL || m->nfields >= IPC_MAX_FIELDS)
		return VEP_ERR_INVALID;
	body = m->frame.len - IPC_HEADER_BYTES;
	/* The length travels in two bytes. */
	if (n > UINT16_MAX || n > m->max || body + IPC_FIELD_HEADER_BYTES + n > m->max)
		return VEP_ERR_TOOBIG;
	fh[0] = tag;
	fh[1] = (uint8_t)(n >> 8);
	fh[2] = (uint8_t)n;
	rc = ipc_buf_reserve(&m->frame, m->frame.len + sizeof(fh) + n);
	if (rc != VEP_OK)
		return rc;
	(void)ipc_buf_append(&m->frame, fh, sizeof(fh));
	m->fields[m->nfields].tag = tag;
	m->fields[m->nfields].off = m->frame.len;
	m->fields[m->nfields].len = n;
	(void)ipc_buf_append(&m->frame, p, n);
	m->nfields++;
	put_be32(m->frame.data, (uint32_t)(m->frame.len - IPC_HEADER_BYTES));
	return VEP_OK;
}

int
ipc_msg_put_u32(struct ipc_msg *m, uint8_t tag, uint32_t v)
{
	uint8_t b[4];

	put_be32(b, v);
	return ipc_msg_put(m, tag, b, sizeof(b));
}

int
ipc_msg_put_u64(struct ipc_msg *m, uint8_t tag, uint64_t v)
{
	uint8_t b[8];

	put_be32(b, (uint32_t)(v >> 32));
	put_be32(b + 4, (uint32_t)v);
	return ipc_msg_put(m, tag, b, sizeof(b));
}

int
ipc_msg_put_str(struct ipc_msg *m, uint8_t tag, const char *s)
{
	return ipc_msg_put(m, tag, s, strlen(s));
}

int
ipc_msg_append_frame(const struct ipc_msg *m, struct ipc_buf *out)
{
	return ipc_buf_append(out, m->frame.data, m->frame.len);
}

uint8_t
ipc_msg_type(const struct ipc_msg *m)
{
	return m->frame.data[IPC_HEADER_BYTES];
}

int
ipc_msg_get(const struct ipc_msg *m, uint8_t tag, const uint8_t **p, size_t *n)
{
	const struct ipc_field *f;

	*p = NULL;
	*n = 0;
	f = find_field(m, tag);
	if (f == NULL)
		return VEP_ERR_INVALID;
	*p = m->frame.data + f->off;
	*n = f->len;
	return VEP_OK;
}

int
ipc_msg_get_u32(const struct ipc_msg *m, uint8_t tag, uint32_t *v)
{
	const uint8_t *p;
	size_t n;

	*v = 0;
	if (ipc_msg_get(m, tag, &p, &n) != VEP_OK || n != 4)
		return VEP_ERR_INVALID;
	*v = get_be32(p);
	return VEP_OK;
}

int
ipc_msg_get_u64(const struct ipc_msg *m, uint8_t tag, uint64_t *v)
{
	const uint8_t *p;
	size_t n;

	*v = 0;
	if (ipc_msg_get(m, tag, &p, &n) != VEP_OK || n != 8)
		return VEP_ERR_INVALID;
	*v = (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
	return VEP_OK;
}

int
ipc_msg_get_str(const struct ipc_msg *m, uint8_t tag, size_t max, char **out)
{
	const uint8_t *p;
	size_t n;
	char *s;

	*out = NULL;
	if (ipc_msg_get(m, tag, &p, &n) != VEP_OK)
		return VEP_ERR_INVALID;
	if (n > max)
		return VEP_ERR_TOOBIG;
	if (memchr(p, '\0', n) != NULL)
		return VEP_ERR_INVALID;
	s = malloc(n + 1);
	if (s == NULL)
		return VEP_ERR_NOMEM;
	memcpy(s, p, n);
	s[n] = '\0';
	*out = s;
	return VEP_OK;
}

/* Indexes the fields of a complete frame already copied into m->frame. */
static int
parse_fields(struct ipc_msg *m)
{
	size_t pos = IPC_HEADER_BYTES + 1;
	size_t end = m->frame.len;
	size_t n;
	uint8_t tag;

	while (pos < end) {
		if (end - pos < IPC_FIELD_HEADER_BYTES)
			return VEP_ERR_INVALID;
		tag = m->frame.data[pos];
		n = (size_t)m->frame.data[pos + 1] << 8 | m->frame.data[pos + 2];
		pos += IPC_FIELD_HEADER_BYTES;
		if (end - pos < n)
			return VEP_ERR_INVALID;
		/* A repeated tag would let two readers see different values. */
		if (find_field(m, tag) != NULL || m->nfields >= IPC_MAX_FIELDS)
			return VEP_ERR_INVALID;
		m->fields[m->nfields].tag = tag;
		m->fields[m->nfields].off = pos;
		m->fields[m->nfields].len = n;
		m->nfields++;
		pos += n;
	}
	return VEP_OK;
}

int
ipc_take_msg(struct ipc_buf *in, struct ipc_msg **out)
{
	return ipc_take_msg_max(in, IPC_FRAME_MAX_BYTES, out);
}

int
ipc_take_msg_max(struct ipc_buf *in, size_t max, struct ipc_msg **out)
{
	struct ipc_msg *m = NULL;
	uint32_t body;
	size_t total;
	int rc;

	*out = NULL;
	if (in->len < IPC_HEADER_BYTES) {
		rc = VEP_OK;
		goto out;
	}
	body = get_be32(in->data);
	if (body > max) {
		rc = VEP_ERR_TOOBIG;
		goto out;
	}
	if (body < 1) {
		rc = VEP_ERR_INVALID;
		goto out;
	}
	total = IPC_HEADER_BYTES + (size_t)body;
	if (in->len < total) {
		rc = VEP_OK;
		goto out;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	m->max = max;
	rc = ipc_buf_append(&m->frame, in->data, total);
	if (rc != VEP_OK)
		goto out;
	ipc_buf_consume(in, total);
	rc = parse_fields(m);
	if (rc != VEP_OK)
		goto out;
	*out = m;
	m = NULL;
out:
	ipc_msg_free(m);
	return rc;
}

void
ipc_msg_free(struct ipc_msg *m)
{
	if (m == NULL)
		return;
	ipc_buf_clear(&m->frame);
	explicit_bzero(m, sizeof(*m));
	free(m);
}
