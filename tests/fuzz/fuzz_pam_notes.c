/*
 * fuzz_pam_notes.c - the texts of a PAM conversation on the wire
 * (pamhelper/notes.h): the NOTES reader both sides use, the writer and
 * text cleaner of the worker, and the PROMPT, ANSWER and RESULT frames as
 * the helper and pam_client check them.
 *
 * Invariants: the reader never reads past the bytes (ASan) and every entry
 * it returns is one the writer could have written (kind I or E, at most
 * PAMP_TEXT_MAX_BYTES, NUL-terminated, no control character but \n and
 * \t); accepted NOTES hold at most PAMP_NOTES_MAX entries in at most
 * PAMP_NOTES_MAX_BYTES; whatever the writer is given (the input cut at
 * NULs into texts) it writes accepted NOTES holding the cleaned texts in
 * order, a prefix of them (a dropped entry drops every later one); a
 * cleaned text is the source byte for byte but for replaced control
 * characters, cut at PAMP_TEXT_MAX_BYTES only back to the start of a
 * UTF-8 character (at most three bytes back).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ipc/ipc.h"
#include "pamhelper/notes.h"
#include "pamhelper/proto.h"

/* Walks n bytes of NOTES; returns entries, or -1 if not accepted. */
static int
walk(const uint8_t *p, size_t n)
{
	const char *text;
	size_t off = 0, len, before;
	char kind;
	int rc, count = 0;

	for (;;) {
		before = off;
		rc = pamp_notes_next(p, n, &off, &kind, &text, &len);
		if (rc != 1)
			break;
		count++;
		FUZZ_CHECK(kind == PAMP_NOTE_INFO || kind == PAMP_NOTE_ERROR);
		FUZZ_CHECK(len <= PAMP_TEXT_MAX_BYTES);
		FUZZ_CHECK((const uint8_t *)text == p + before + 1);
		FUZZ_CHECK(off == before + len + 2 && off <= n);
		FUZZ_CHECK(text[len] == '\0' && strlen(text) == len);
		FUZZ_CHECK(pamp_text_ok((const uint8_t *)text, len));
	}
	FUZZ_CHECK(rc == 0 || rc == -1);
	if (rc == 0)
		FUZZ_CHECK(off == n || n == 0);
	if (pamp_notes_ok(p, n)) {
		FUZZ_CHECK(rc == 0 && count <= PAMP_NOTES_MAX && n <= PAMP_NOTES_MAX_BYTES);
		return count;
	}
	FUZZ_CHECK(rc == -1 || count > PAMP_NOTES_MAX || n > PAMP_NOTES_MAX_BYTES);
	return -1;
}

/* pamp_text_clean of the NUL-terminated src (srclen bytes) into dst. */
static size_t
check_clean(const char *src, size_t srclen, char *dst)
{
	const uint8_t *s = (const uint8_t *)src;
	size_t n = pamp_text_clean(dst, src), i;

	FUZZ_CHECK(n == strlen(dst) && n <= PAMP_TEXT_MAX_BYTES);
	FUZZ_CHECK(pamp_text_ok((const uint8_t *)dst, n));
	if (srclen <= PAMP_TEXT_MAX_BYTES) {
		FUZZ_CHECK(n == srclen);
	} else {
		FUZZ_CHECK(n + 3 >= PAMP_TEXT_MAX_BYTES);
		/* Only continuation bytes were given back. */
		for (i = n + 1; i <= PAMP_TEXT_MAX_BYTES; i++)
			FUZZ_CHECK((s[i] & 0xc0) == 0x80);
		if (n + 3 > PAMP_TEXT_MAX_BYTES)
			FUZZ_CHECK((s[n] & 0xc0) != 0x80);
	}
	for (i = 0; i < n; i++)
		FUZZ_CHECK((uint8_t)dst[i] == s[i] || (dst[i] == '?' && !pamp_text_byte_ok(s[i])));
	return n;
}

/* The input cut at NULs into texts (the first byte of each picks its
 * kind), written as NOTES, read back. */
static void
write_and_read(const uint8_t *data, size_t len)
{
	char clean[PAMP_NOTES_MAX * 4][PAMP_TEXT_MAX_BYTES + 1];
	struct pamp_notes nt = { 0 };
	const char *text;
	char *copy, kind, kinds[PAMP_NOTES_MAX * 4];
	size_t at = 0, off = 0, tlen, cleaned[PAMP_NOTES_MAX * 4];
	unsigned given = 0, i;

	copy = malloc(len + 1);
	if (copy == NULL)
		return;
	memcpy(copy, data, len);
	copy[len] = '\0';
	while (at <= len && given < PAMP_NOTES_MAX * 4) {
		size_t n = strlen(copy + at);

		kinds[given] = n > 0 && (copy[at] & 1) ? PAMP_NOTE_ERROR : PAMP_NOTE_INFO;
		cleaned[given] = check_clean(copy + at, n, clean[given]);
		pamp_notes_add(&nt, kinds[given], copy + at);
		given++;
		at += n + 1;
	}
	FUZZ_CHECK(nt.count <= given && nt.count <= PAMP_NOTES_MAX);
	FUZZ_CHECK(nt.len <= PAMP_NOTES_MAX_BYTES);
	FUZZ_CHECK(walk(nt.data, nt.len) == (int)nt.count);
	for (i = 0; i < nt.count; i++) {
		FUZZ_CHECK(pamp_notes_next(nt.data, nt.len, &off, &kind, &text, &tlen) == 1);
		FUZZ_CHECK(kind == kinds[i] && tlen == cleaned[i]);
		FUZZ_CHECK(memcmp(text, clean[i], tlen) == 0);
	}
	/* The first text left out did not fit: nothing was dropped early. */
	if (nt.count < given && nt.count < PAMP_NOTES_MAX)
		FUZZ_CHECK(nt.len + cleaned[nt.count] + 2 > PAMP_NOTES_MAX_BYTES);
	free(copy);
}

/* A frame's texts as the helper and pam_client check them. */
static void
check_frame(const struct ipc_msg *m)
{
	const uint8_t *p;
	size_t n;
	uint32_t v;
	char *s = NULL;

	if (ipc_msg_get(m, PAMP_TAG_NOTES, &p, &n) == 0)
		(void)walk(p, n);
	if (ipc_msg_get(m, PAMP_TAG_TEXT, &p, &n) == 0 && pamp_text_ok(p, n))
		FUZZ_CHECK(n <= PAMP_TEXT_MAX_BYTES && memchr(p, '\0', n) == NULL);
	if (ipc_msg_get_str(m, PAMP_TAG_TEXT, PAMP_TEXT_MAX_BYTES, &s) == 0) {
		FUZZ_CHECK(strlen(s) <= PAMP_TEXT_MAX_BYTES);
		free(s);
	}
	if (ipc_msg_get_u32(m, PAMP_TAG_OUTCOME, &v) == 0)
		FUZZ_CHECK(v >= PAM_OUTCOME_COUNT ||
		    strcmp(pam_outcome_name(v), "unknown") != 0);
	if (ipc_msg_get_str(m, PAMP_TAG_ANSWER, PAMP_PASSWORD_MAX_BYTES, &s) == 0) {
		FUZZ_CHECK(strlen(s) <= PAMP_PASSWORD_MAX_BYTES);
		free(s);
	}
}

static void
take_frames(const uint8_t *data, size_t len)
{
	struct ipc_buf in = { 0 };
	struct ipc_msg *m = NULL;

	if (ipc_buf_append(&in, data, len) != 0)
		return;
	while (ipc_take_msg(&in, &m) == 0 && m != NULL) {
		check_frame(m);
		ipc_msg_free(m);
		m = NULL;
	}
	ipc_buf_clear(&in);
}

int
fuzz_main(const uint8_t *data, size_t len)
{
	(void)walk(data, len);
	write_and_read(data, len);
	take_frames(data, len);
	return 0;
}
