/*
 * core/log.c - diagnostic lines on a stream, and escaping of untrusted text.
 *
 * Owns the line format and the escaping rule. Must never decide what is
 * secret (callers never pass secrets) and never keeps state between calls
 * beyond the struct log it is given.
 */
#include "core/log.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "core/fixed_limits.h"

/* Names indexed by enum log_level. */
static const char *const level_names[] = {
	[LOGL_ERROR] = "error",
	[LOGL_WARN] = "warn",
	[LOGL_INFO] = "info",
	[LOGL_DEBUG] = "debug",
};

#define NLEVELS (sizeof(level_names) / sizeof(level_names[0]))

/* Every byte may become a 4-byte escape, plus "..." and the NUL. */
_Static_assert(LOG_ESCAPE_BUFSZ >= 4 * LIMIT_LOG_FIELD_CHARS + 4,
    "LOG_ESCAPE_BUFSZ too small for LIMIT_LOG_FIELD_CHARS");

void
log_init(struct log *lg, enum log_level level, FILE *out)
{
	lg->level = level;
	lg->out = out != NULL ? out : stderr;
}

int
log_level_parse(const char *s, enum log_level *out)
{
	size_t i;

	for (i = 0; i < NLEVELS; i++) {
		if (s != NULL && strcmp(s, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return VEP_OK;
		}
	}
	return VEP_ERR_INVALID;
}

const char *
log_level_name(enum log_level level)
{
	if ((size_t)level < NLEVELS)
		return level_names[level];
	return "?";
}

void
log_msg(const struct log *lg, enum log_level level, const char *fmt, ...)
{
	char stamp[40], msg[2048];
	struct timespec ts;
	struct tm tm;
	va_list ap;

	if (lg == NULL || level > lg->level)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One fprintf per line so lines from one process never interleave. */
	fprintf(lg->out, "%s.%03ldZ %-5s %s\n", stamp, ts.tv_nsec / 1000000L,
	    log_level_name(level), msg);
	fflush(lg->out);
}

char *
log_escape(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;
	int cut = 0;

	if (dstlen == 0)
		return dst;
	if (src == NULL) {
		src = "-";
		srclen = 1;
	}
	if (srclen > LIMIT_LOG_FIELD_CHARS) {
		srclen = LIMIT_LOG_FIELD_CHARS;
		cut = 1;
	}
	for (i = 0; i < srclen; i++) {
		unsigned char c = (unsigned char)src[i];
		/* Room for the longest escape, "..." and the NUL. */
		if (o + 4 + 3 + 1 > dstlen) {
			cut = 1;
			break;
		}
		if (c < 0x20 || c > 0x7e || c == '\\' || c == '"') {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[c >> 4];
			dst[o++] = hex[c & 15];
		} else {
			dst[o++] = (char)c;
		}
	}
	if (cut && o + 3 + 1 <= dstlen) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
	return dst;
}
