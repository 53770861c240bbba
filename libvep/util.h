/*
 * util.h - small helpers shared by the libvep modules: strict JSON loading,
 * the clock, and making foreign text valid UTF-8.
 */
#ifndef VEP_UTIL_H
#define VEP_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* Largest JSON text libvep parses from untrusted input (bytes). */
#define VEP_JSON_MAX_BYTES (64 * 1024)

/* Parses len bytes of untrusted JSON that must be one object: duplicate keys,
 * trailing data, NUL bytes and texts over VEP_JSON_MAX_BYTES are refused.
 * On success *out is a new reference. Returns 0, VEP_ERR_INVALID,
 * VEP_ERR_TOOBIG or VEP_ERR_NOMEM. */
int vep_json_parse_object(const char *text, size_t len, json_t **out);

/* Reads a JSON integer member that must be a non-negative integer (a real
 * with no fractional part, as JavaScript writes large numbers, is accepted
 * when it is exactly integral and below 2^53). Returns 0 or VEP_ERR_INVALID. */
int vep_json_get_ms(const json_t *obj, const char *name, int64_t *out);

/* Makes s (NUL-terminated) valid UTF-8 in place, for JSON: every byte of
 * a malformed, overlong or surrogate sequence, or one past U+10FFFF,
 * becomes '?'; valid text is left as it is. */
void vep_utf8_sanitize(char *s);

/* Milliseconds since the epoch, from the realtime clock. */
int64_t vep_now_ms(void);

/* Milliseconds from the monotonic clock (deadlines, rates, durations: it
 * never jumps when the wall clock is set). Meaningful only as a difference. */
int64_t vep_mono_ms(void);

#endif
