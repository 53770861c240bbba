/*
 * fuzz_email.c - email, domain, host and audience syntax (email.c and
 * vep_audience_match).
 *
 * Invariants: normalisation is idempotent, keeps the length and the local
 * part, lowercases the domain, and its result splits into a valid domain;
 * a valid domain is a valid host, also once lowercased; audience matching
 * follows assertion.h's rules (see check_audience) and only ever matches an
 * origin that matches itself.
 */
#include <string.h>

#include "assertion.h"
#include "email.h"
#include "fuzz.h"

static void
check_email(const uint8_t *data, size_t len)
{
	char *n = NULL, *n2 = NULL, *l = NULL, *d = NULL;

	if (vep_email_normalize((const char *)data, len, &n) != 0)
		return;
	FUZZ_CHECK(strlen(n) == len);
	FUZZ_CHECK(vep_email_normalize(n, len, &n2) == 0);
	FUZZ_CHECK(strcmp(n, n2) == 0);
	FUZZ_CHECK(vep_email_split(n, &l, &d) == 0);
	FUZZ_CHECK(memcmp(l, data, strlen(l)) == 0);
	FUZZ_CHECK(strlen(l) + 1 + strlen(d) == len);
	FUZZ_CHECK(vep_domain_valid(d));
	for (const char *p = d; *p != '\0'; p++)
		FUZZ_CHECK(!(*p >= 'A' && *p <= 'Z'));
	free(n);
	free(n2);
	free(l);
	free(d);
}

static void
check_host(const char *s)
{
	if (vep_domain_valid(s)) {
		char *low = strdup(s);
		FUZZ_CHECK(low != NULL);
		vep_domain_lower(low);
		FUZZ_CHECK(vep_domain_valid(low));
		FUZZ_CHECK(vep_host_valid(s));
		free(low);
	}
	(void)vep_host_valid(s);
}

/* New text a followed by b (NULL when out of memory). */
static char *
concat(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = malloc(na + nb + 1);

	if (s != NULL) {
		memcpy(s, a, na);
		memcpy(s + na, b, nb + 1);
	}
	return s;
}

/* New copy of s with a-z uppercased. */
static char *
upper(const char *s)
{
	char *u = strdup(s);

	for (char *p = u; p != NULL && *p != '\0'; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	return u;
}

/* 1 when s has "://" and nothing after the authority ('/', '?', '#'). */
static int
plain_origin(const char *s)
{
	const char *sep = strstr(s, "://");

	return sep != NULL && strpbrk(sep + 3, "/?#") == NULL;
}

/* Audience room: an added "http://" or "/x" keeps a text within the
 * 2048-character limit, so the properties below are about the rules. */
#define AUD_ROOM (2048 - 8)

/* Two audiences separated by the first newline: rp (the relying party's)
 * and aud (the assertion's). vep_audience_match is not symmetric, so the
 * properties are the rules of assertion.h: case never matters; a missing
 * scheme on rp's side is http; a path on aud's side is ignored, on rp's
 * side refused; two plain origins match both ways alike; and what matches
 * is an origin that matches itself. */
static void
check_audience(char *s)
{
	char *nl = strchr(s, '\n');
	const char *rp = s, *aud = s;
	char *t, *u;

	if (nl != NULL) {
		*nl = '\0';
		aud = nl + 1;
	}
	int m = vep_audience_match(rp, aud);
	FUZZ_CHECK((u = upper(rp)) != NULL && (t = upper(aud)) != NULL);
	FUZZ_CHECK(vep_audience_match(u, aud) == m && vep_audience_match(rp, t) == m);
	free(u);
	free(t);
	FUZZ_CHECK((t = concat(rp, "/p/q")) != NULL);
	FUZZ_CHECK(!vep_audience_match(t, aud));
	free(t);
	if (plain_origin(rp) && plain_origin(aud))
		FUZZ_CHECK(vep_audience_match(aud, rp) == m);
	if (strstr(rp, "://") == NULL && strlen(rp) <= AUD_ROOM) {
		FUZZ_CHECK((t = concat("http://", rp)) != NULL);
		FUZZ_CHECK(vep_audience_match(t, aud) == m);
		if (m)
			FUZZ_CHECK(vep_audience_match(rp, t));
		free(t);
	} else if (m) {
		FUZZ_CHECK(vep_audience_match(rp, rp));
	}
	if (m && strlen(aud) <= AUD_ROOM) {
		FUZZ_CHECK((t = concat(aud, "/x")) != NULL);
		FUZZ_CHECK(vep_audience_match(rp, t));
		free(t);
	}
}

int
fuzz_main(const uint8_t *data, size_t len)
{
	char *s = malloc(len + 1);

	check_email(data, len);
	if (s == NULL)
		return 0;
	memcpy(s, data, len);
	s[len] = '\0';
	check_host(s);
	check_audience(s);
	free(s);
	return 0;
}
