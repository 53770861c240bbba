/*
 * fuzz_email.c - email, domain, host and audience syntax (email.c and
 * vep_audience_match).
 *
 * Invariants: normalisation is idempotent, keeps the length and the local
 * part, lowercases the domain, and its result splits into a valid domain;
 * a valid domain is a valid host, also once lowercased; audience matching
 * is symmetric and only ever matches parseable (self-matching) origins.
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

/* Two origins separated by the first newline. */
static void
check_audience(char *s)
{
	char *nl = strchr(s, '\n');
	const char *a = s, *b = s;
	if (nl != NULL) {
		*nl = '\0';
		b = nl + 1;
	}
	int m = vep_audience_match(a, b);
	FUZZ_CHECK(m == vep_audience_match(b, a));
	if (m) {
		FUZZ_CHECK(vep_audience_match(a, a));
		FUZZ_CHECK(vep_audience_match(b, b));
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
