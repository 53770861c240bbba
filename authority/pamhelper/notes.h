/*
 * pamhelper/notes.h - the texts PAM shows on the wire: a PROMPT's TEXT and
 * the NOTES field (format in pamhelper/proto.h). The worker writes them,
 * the helper checks what a worker sent before it reaches the authority,
 * and a reader of NOTES walks them with pamp_notes_next.
 *
 * Owns: cleaning a text (cut at PAMP_TEXT_MAX_BYTES on a UTF-8 character
 * boundary, control characters other than \n and \t replaced by '?'), the
 * NOTES caps, and the one check both sides apply. Header only, like
 * proto.h, because the helper and the authority share no library but the
 * framing.
 *
 * Must never: fail on what a module says (too much is dropped, odd bytes
 * are replaced), allocate, or accept on reading what it would not write.
 */
#ifndef AUTHORITY_PAMHELPER_NOTES_H
#define AUTHORITY_PAMHELPER_NOTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pamhelper/proto.h"

/* The NOTES of one frame, as the worker collects them. Zero-initialise. */
struct pamp_notes {
	uint8_t data[PAMP_NOTES_MAX_BYTES];
	size_t len;
	unsigned count;
	int full;               /* an entry was dropped: so is every later one */
};

/* A byte a text may carry as it is: not a control character, or one of
 * the two that lay text out. */
static inline int
pamp_text_byte_ok(uint8_t c)
{
	return (c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t';
}

/* Bytes of src (n of them) a text keeps: at most PAMP_TEXT_MAX_BYTES, and
 * when src is longer, never the first part of a character cut in two (at
 * most three continuation bytes are given back: beyond that src is not
 * UTF-8 and any cut will do). */
static inline size_t
pamp_text_cut(const uint8_t *src, size_t n)
{
	size_t cut, back;

	if (n <= PAMP_TEXT_MAX_BYTES)
		return n;
	cut = PAMP_TEXT_MAX_BYTES;
	for (back = 0; back < 3 && cut > 0 && (src[cut] & 0xc0) == 0x80; back++)
		cut--;
	return cut;
}

/* Cleans src (NUL-terminated; NULL reads as empty) into dst, which has room
 * for PAMP_TEXT_MAX_BYTES + 1 bytes. Returns the length written, without
 * the NUL it adds. */
static inline size_t
pamp_text_clean(char *dst, const char *src)
{
	const uint8_t *s = (const uint8_t *)(src != NULL ? src : "");
	size_t n, i;

	n = pamp_text_cut(s, strnlen((const char *)s, PAMP_TEXT_MAX_BYTES + 1));
	for (i = 0; i < n; i++)
		dst[i] = pamp_text_byte_ok(s[i]) ? (char)s[i] : '?';
	dst[n] = '\0';
	return n;
}

/* Whether n bytes at p are a text as pamp_text_clean writes them (without
 * its NUL). */
static inline int
pamp_text_ok(const uint8_t *p, size_t n)
{
	size_t i;

	if (n > PAMP_TEXT_MAX_BYTES)
		return 0;
	for (i = 0; i < n; i++)
		if (!pamp_text_byte_ok(p[i]))
			return 0;
	return 1;
}

/* Adds one entry (kind PAMP_NOTE_INFO or PAMP_NOTE_ERROR) with text
 * cleaned, or drops it when the frame's caps are reached. */
static inline void
pamp_notes_add(struct pamp_notes *nt, char kind, const char *text)
{
	char clean[PAMP_TEXT_MAX_BYTES + 1];
	size_t n;

	n = pamp_text_clean(clean, text);
	if (nt->full || nt->count >= PAMP_NOTES_MAX ||
	    nt->len + n + 2 > PAMP_NOTES_MAX_BYTES) {
		nt->full = 1;
		return;
	}
	nt->data[nt->len] = (uint8_t)kind;
	memcpy(nt->data + nt->len + 1, clean, n + 1);
	nt->len += n + 2;
	nt->count++;
}

/* Empties nt for the next frame. */
static inline void
pamp_notes_reset(struct pamp_notes *nt)
{
	nt->len = 0;
	nt->count = 0;
	nt->full = 0;
}

/* Reads the entry at *off of the NOTES bytes p (n of them): returns 1 with
 * *kind, *text (borrowed, NUL-terminated inside p) and *len, and *off moved
 * past it; 0 at the end; -1 when the bytes at *off are not an entry (a
 * wrong kind, no NUL, a text too long or with control characters). */
static inline int
pamp_notes_next(const uint8_t *p, size_t n, size_t *off, char *kind,
    const char **text, size_t *len)
{
	const uint8_t *nul;
	size_t at = *off;

	if (at >= n)
		return 0;
	if ((p[at] != PAMP_NOTE_INFO && p[at] != PAMP_NOTE_ERROR) || at + 1 >= n)
		return -1;
	nul = memchr(p + at + 1, '\0', n - at - 1);
	if (nul == NULL || !pamp_text_ok(p + at + 1, (size_t)(nul - p) - at - 1))
		return -1;
	*kind = (char)p[at];
	*text = (const char *)p + at + 1;
	*len = (size_t)(nul - p) - at - 1;
	*off = (size_t)(nul - p) + 1;
	return 1;
}

/* Whether n bytes at p are NOTES as pamp_notes_add writes them: entries
 * only, within PAMP_NOTES_MAX and PAMP_NOTES_MAX_BYTES. */
static inline int
pamp_notes_ok(const uint8_t *p, size_t n)
{
	const char *text;
	size_t off = 0, len;
	unsigned count = 0;
	char kind;
	int rc;

	if (n > PAMP_NOTES_MAX_BYTES)
		return 0;
	while ((rc = pamp_notes_next(p, n, &off, &kind, &text, &len)) == 1)
		count++;
	return rc == 0 && count <= PAMP_NOTES_MAX;
}

#endif
