/*
 * core/log.h - the authority's diagnostic log: one line per event on a stream
 * (stderr in the server), "2026-12-03T08:00:00.123Z LEVEL message".
 *
 * Owns: levels, timestamps, and escaping of untrusted strings so a client
 * cannot forge log lines or flood them (log_escape). It must never be handed
 * passwords, cookies, session tokens or key material, at any level: the
 * audit trail of issued certificates lives in the database, not here.
 *
 * There is no global logger: a struct log lives in struct authority and is
 * passed to whoever logs. Safe to use from the PAM helper process too.
 */
#ifndef AUTHORITY_CORE_LOG_H
#define AUTHORITY_CORE_LOG_H

#include <stddef.h>
#include <stdio.h>

/* Levels, most severe first. An administrator reads them as:
 * error - the service cannot do something it should (key unreadable, bind);
 * warn  - something is wrong but we carry on (client misbehaving, retry);
 * info  - normal operation worth a line (start, stop, one line per request);
 * debug - detail for developers (never secrets either). */
enum log_level {
	LOGL_ERROR = 0,
	LOGL_WARN = 1,
	LOGL_INFO = 2,
	LOGL_DEBUG = 3,
};

struct log {
	enum log_level level;   /* messages above this level are dropped */
	FILE *out;              /* borrowed; flushed after every line */
};

/* Sets up lg to write to out (NULL means stderr) from level up. */
void log_init(struct log *lg, enum log_level level, FILE *out);

/* Parses "error", "warn", "info" or "debug". Returns 0 or VEP_ERR_INVALID
 * (*out untouched on error). */
int log_level_parse(const char *s, enum log_level *out);

/* Name of a level ("error"...), never NULL. */
const char *log_level_name(enum log_level level);

/* Writes one line when level is enabled. fmt and its arguments must already
 * be safe: pass any client-supplied text through log_escape first. lg may be
 * NULL (then nothing is written). */
void log_msg(const struct log *lg, enum log_level level, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

#define log_error(lg, ...) log_msg((lg), LOGL_ERROR, __VA_ARGS__)
#define log_warn(lg, ...) log_msg((lg), LOGL_WARN, __VA_ARGS__)
#define log_info(lg, ...) log_msg((lg), LOGL_INFO, __VA_ARGS__)
#define log_debug(lg, ...) log_msg((lg), LOGL_DEBUG, __VA_ARGS__)

/* Copies srclen bytes of untrusted src into dst (dstlen bytes, always
 * NUL-terminated when dstlen > 0) with backslash, double quote and every
 * byte outside printable ASCII written as \xNN, and cut after
 * LIMIT_LOG_FIELD_CHARS input bytes (or when dst is full) with "..."
 * appended. src may be NULL (written as "-"). Returns dst. */
char *log_escape(char *dst, size_t dstlen, const char *src, size_t srclen);

/* Buffer size that always holds a full log_escape result. */
#define LOG_ESCAPE_BUFSZ (4 * 256 + 8)

#endif
