/*
 * edge/head.c - splitting heads and chunked bodies the raw scanner accepted
 * (see edge/head.h: no framing judgement here, only bounds).
 */
#include "edge/head.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"

static int
is_ows(char c)
{
	return c == ' ' || c == '\t';
}

static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Cuts the line starting at *pos (up to its CRLF, or the end) and moves
 * *pos past it. Returns the line, NUL-terminated in place. */
static char *
next_line(char *buf, size_t len, size_t *pos)
{
	char *line = buf + *pos;
	size_t i = *pos;

	while (i < len && buf[i] != '\r' && buf[i] != '\n')
		i++;
	buf[i] = '\0';
	*pos = i + 1;
	if (*pos < len && buf[*pos] == '\n')
		(*pos)++;
	return line;
}

/* Trims spaces and tabs on both sides, in place. */
static char *
trim(char *s)
{
	size_t n;

	while (is_ows(*s))
		s++;
	n = strlen(s);
	while (n > 0 && is_ows(s[n - 1]))
		s[--n] = '\0';
	return s;
}

int
head_parse(const char *p, size_t len, struct head **out)
{
	struct head *h;
	size_t lines = 0, i, pos = 0, off;
	char *buf, *line, *sp;
	const char *v;

	*out = NULL;
	for (i = 0; i < len; i++)
		lines += p[i] == '\n';
	/* One allocation: the struct, the fields (at most one per line) and
	 * a copy of the bytes. */
	off = sizeof(*h) + lines * sizeof(struct head_field);
	if ((h = calloc(1, off + len + 1)) == NULL)
		return VEP_ERR_NOMEM;
	h->fields = (struct head_field *)(void *)(h + 1);
	buf = (char *)h + off;
	memcpy(buf, p, len);
	buf[len] = '\0';

	line = next_line(buf, len, &pos);
	if ((sp = strchr(line, ' ')) == NULL)
		goto invalid;
	*sp = '\0';
	h->method = line;
	h->target = sp + 1;
	if ((sp = strchr(sp + 1, ' ')) == NULL)
		goto invalid;
	*sp = '\0';
	h->minor = strcmp(sp + 1, "HTTP/1.0") == 0 ? 0 : 1;
	while (pos < len) {
		char *colon;

		line = next_line(buf, len, &pos);
		if (*line == '\0')
			break;  /* the empty line */
		if ((colon = strchr(line, ':')) == NULL || h->nfields >= lines)
			goto invalid;
		*colon = '\0';
		h->fields[h->nfields].name = line;
		h->fields[h->nfields].value = trim(colon + 1);
		h->nfields++;
	}
	if ((v = head_find(h, "Content-Length")) != NULL) {
		for (; *v >= '0' && *v <= '9'; v++)
			h->length = h->length < UINT64_MAX / 10 ? h->length * 10 +
			    (unsigned)(*v - '0') : UINT64_MAX;
	}
	h->chunked = (v = head_find(h, "Transfer-Encoding")) != NULL &&
	    strcasecmp(v, "chunked") == 0;
	/* libevent 2.1.12 answered the expectation for HTTP/1.1 only. */
	h->expect_continue = h->minor >= 1 && (v = head_find(h, "Expect")) != NULL &&
	    strcasecmp(v, "100-continue") == 0;
	*out = h;
	return VEP_OK;
invalid:
	free(h);
	return VEP_ERR_INVALID;
}

void
head_free(struct head *h)
{
	free(h);
}

const char *
head_find(const struct head *h, const char *name)
{
	for (size_t i = 0; i < h->nfields; i++)
		if (strcasecmp(h->fields[i].name, name) == 0)
			return h->fields[i].value;
	return NULL;
}

int
head_keep_alive(const struct head *h)
{
	const char *c = head_find(h, "Connection");

	if (h->minor == 0)
		return c != NULL && strncasecmp(c, "keep-alive", 10) == 0;
	return c == NULL || strcasecmp(c, "close") != 0;
}

/* Reads a chunk-size line at p[*pos] ("hex CRLF"). Returns 1 with *size
 * set and *pos past the CRLF, 0 when the line is not all there. */
static int
chunk_size(const unsigned char *p, size_t len, size_t *pos, unsigned long long *size)
{
	size_t i = *pos;
	int d;

	*size = 0;
	while (i < len && (d = hexval(p[i])) >= 0) {
		if (*size <= UINT32_MAX)
			*size = *size * 16 + (unsigned)d;
		i++;
	}
	if (i + 2 > len)
		return 0;
	*pos = i + 2;
	return 1;
}

size_t
head_chunked_length(const unsigned char *p, size_t len)
{
	size_t pos = 0;
	unsigned long long size;

	for (;;) {
		if (!chunk_size(p, len, &pos, &size))
			return 0;
		if (size == 0)
			return pos + 2 <= len ? pos + 2 : 0;  /* the empty trailer */
		if (size > len || pos + size + 2 > len)
			return 0;
		pos += (size_t)size + 2;
	}
}

size_t
head_dechunk(const unsigned char *p, size_t n, unsigned char *out)
{
	size_t pos = 0, o = 0;
	unsigned long long size;

	while (chunk_size(p, n, &pos, &size) && size > 0 && size <= n - pos) {
		memcpy(out + o, p + pos, (size_t)size);
		o += (size_t)size;
		pos += (size_t)size + 2;
	}
	return o;
}
