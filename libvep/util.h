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
 * Accepts exactly the objects jansson's json_loadb accepts with
 * JSON_REJECT_DUPLICATES and builds the same tree (json_parse.c).
 * On success *out is a new reference. Returns 0, VEP_ERR_INVALID,
 * VEP_ERR_TOOBIG or VEP_ERR_NOMEM. */
int vep_json_parse_object(const char *text, size_t len, json_t **out);

/* Reads a JSON integer member that must be a non-negative integer (a real
 * with no fractional part, as JavaScript writes large numbers, is accepted
 * when it is exactly integral and below 2^53). Returns 0 or VEP_ERR_INVALID. */
int vep_json_get_ms(const json_t *obj, const char *name, int64_t *out);

/* Bytes vep_json_quote may write for a string of len bytes: every byte
 * as a six-character escape, and the two quotes. */
#define VEP_JSON_QUOTED_MAX(len) (6 * (len) + 2)

/* Writes s (len bytes of UTF-8) to out as a quoted JSON string, escaped
 * exactly as jansson's compact dump escapes it ('"', '\\', the short
 * escapes \b \f \n \r \t, other control characters as \u00XX, nothing
 * else), so text composed with it is the text json_dumps would give. out
 * has room for VEP_JSON_QUOTED_MAX(len) bytes; no NUL is written. Returns
 * the bytes written. For the hot paths that write JSON of a known shape
 * without building a jansson tree. */
size_t vep_json_quote(char *out, const char *s, size_t len);

/* FNV-1a (64-bit) of n bytes: spreads texts over a cache's slots. Not a
 * secret hash: whoever aims two texts at one slot only makes both be
 * parsed again. */
uint64_t vep_fnv1a(const void *p, size_t n);

/* The length (1-4) of the valid UTF-8 sequence at p, which ends before end,
 * or 0: no overlong form, no surrogate, nothing past U+10FFFF, nothing cut
 * off by end (the rules jansson reads text by). */
size_t vep_utf8_len(const unsigned char *p, const unsigned char *end);

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
