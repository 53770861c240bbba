/*
 * email.c - owns the syntax of email addresses, domains and issuer hosts as
 * BrowserID accepts them, and their normalisation (domain lowercased, local
 * part kept byte for byte).
 *
 * It must never accept anything outside ASCII (the deployed verifiers reject
 * it, so a certificate for such an address would be useless), never rewrite
 * the local part (the account maps it; "Alice" and "alice" may be two
 * people), and never look anything up: this is syntax only.
 */
#include "email.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

/* Longest DNS label (RFC 1035 section 2.3.4), characters. */
#define EMAIL_LABEL_MAX 63
/* Largest TCP port number accepted after "host:". */
#define EMAIL_PORT_MAX 65535
/* Longest port text ("65535"), characters. */
#define EMAIL_PORT_DIGITS 5

/* RFC 5322 atext beyond letters and digits: one table, not an if-chain. */
static const char atext_specials[] = "!#$%&'*+/=?^_`{|}~-";

static int
is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int
is_atext(unsigned char c)
{
	if (is_alpha(c) || is_digit(c))
		return 1;
	/* strchr would match the terminating NUL; c is never NUL here but
	 * keep the guard so the function is total. */
	return c != '\0' && strchr(atext_specials, c) != NULL;
}

/* Dot-atom local part of 1..VEP_EMAIL_LOCAL_MAX characters. */
static int
local_valid(const char *s, size_t len)
{
	if (len == 0 || len > VEP_EMAIL_LOCAL_MAX)
		return 0;
	if (s[0] == '.' || s[len - 1] == '.')
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '.') {
			if (s[i + 1] == '.')
				return 0;
			continue;
		}
		if (!is_atext(c))
			return 0;
	}
	return 1;
}

/* Counts the labels of a dotted LDH name of len characters; returns the
 * number of labels, or 0 when any label breaks the LDH rules. *all_digits
 * is set when the last label is made only of digits. */
static size_t
ldh_labels(const char *s, size_t len, int *last_all_digits)
{
	size_t labels = 0, start = 0;

	*last_all_digits = 0;
	if (len == 0)
		return 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		size_t llen = i - start;
		if (llen == 0 || llen > EMAIL_LABEL_MAX)
			return 0;
		if (s[start] == '-' || s[i - 1] == '-')
			return 0;
		int digits = 1;
		for (size_t j = start; j < i; j++) {
			unsigned char c = (unsigned char)s[j];
			if (!is_alpha(c) && !is_digit(c) && c != '-')
				return 0;
			if (!is_digit(c))
				digits = 0;
		}
		*last_all_digits = digits;
		labels++;
		start = i + 1;
	}
	return labels;
}

static int
domain_valid_n(const char *s, size_t len)
{
	int numeric_tld;

	if (len == 0 || len > VEP_DOMAIN_MAX)
		return 0;
	/* Two labels at least: a bare "localhost" or TLD cannot own mail a
	 * verifier would look up. An all-numeric last label is refused (RFC
	 * 3696 section 2), which also keeps dotted-quad IPv4 literals out. */
	if (ldh_labels(s, len, &numeric_tld) < 2)
		return 0;
	return !numeric_tld;
}

/* Dotted-quad IPv4: four decimal octets 0..255 without leading zeros. */
static int
ipv4_valid_n(const char *s, size_t len)
{
	size_t i = 0;

	for (int part = 0; part < 4; part++) {
		if (part > 0) {
			if (i >= len || s[i] != '.')
				return 0;
			i++;
		}
		size_t start = i;
		unsigned v = 0;
		while (i < len && is_digit((unsigned char)s[i]) && i - start < 3) {
			v = v * 10 + (unsigned)(s[i] - '0');
			i++;
		}
		if (i == start || v > 255 || (i - start > 1 && s[start] == '0'))
			return 0;
	}
	return i == len;
}

int
vep_domain_valid(const char *s)
{
	if (s == NULL)
		return 0;
	return domain_valid_n(s, strlen(s));
}

void
vep_domain_lower(char *s)
{
	if (s == NULL)
		return;
	for (; *s != '\0'; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
}

int
vep_host_valid(const char *s)
{
	if (s == NULL)
		return 0;
	size_t len = strlen(s);
	const char *colon = memchr(s, ':', len);
	size_t hlen = colon ? (size_t)(colon - s) : len;

	if (colon != NULL) {
		const char *p = colon + 1;
		size_t plen = len - hlen - 1;
		unsigned long port = 0;
		if (plen == 0 || plen > EMAIL_PORT_DIGITS || p[0] == '0')
			return 0;
		for (size_t i = 0; i < plen; i++) {
			if (!is_digit((unsigned char)p[i]))
				return 0;
			port = port * 10 + (unsigned long)(p[i] - '0');
		}
		if (port > EMAIL_PORT_MAX)
			return 0;
	}
	if (hlen == 0 || hlen > VEP_DOMAIN_MAX)
		return 0;
	if (ipv4_valid_n(s, hlen) || domain_valid_n(s, hlen))
		return 1;
	/* A single label such as "localhost" (test deployments). */
	int numeric;
	return ldh_labels(s, hlen, &numeric) == 1 && !numeric;
}

/* Validates and returns the offset of the one '@', or -1. */
static long
email_check(const char *text, size_t len)
{
	const char *at = NULL;

	if (text == NULL || len == 0 || len > VEP_EMAIL_MAX)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		/* NUL, controls, space, DEL and anything non-ASCII. */
		if (c <= 0x20 || c >= 0x7f)
			return -1;
		if (c == '@') {
			if (at != NULL)
				return -1;
			at = text + i;
		}
	}
	if (at == NULL)
		return -1;
	size_t llen = (size_t)(at - text);
	if (!local_valid(text, llen) || !domain_valid_n(at + 1, len - llen - 1))
		return -1;
	return (long)llen;
}

int
vep_email_normalize(const char *text, size_t len, char **out)
{
	int ret = VEP_ERR_EMAIL;
	char *s = NULL;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	long at = email_check(text, len);
	if (at < 0)
		goto out;
	if ((s = malloc(len + 1)) == NULL) {
		ret = VEP_ERR_NOMEM;
		goto out;
	}
	memcpy(s, text, len);
	s[len] = '\0';
	vep_domain_lower(s + at + 1);
	*out = s;
	s = NULL;
	ret = VEP_OK;
out:
	free(s);
	return ret;
}

int
vep_email_split(const char *email, char **local, char **domain)
{
	int ret = VEP_ERR_EMAIL;
	char *l = NULL, *d = NULL;

	if (local == NULL || domain == NULL)
		return VEP_ERR_ARG;
	*local = NULL;
	*domain = NULL;
	if (email == NULL)
		goto out;
	long at = email_check(email, strlen(email));
	if (at < 0)
		goto out;
	if ((l = strndup(email, (size_t)at)) == NULL ||
	    (d = strdup(email + at + 1)) == NULL) {
		ret = VEP_ERR_NOMEM;
		goto out;
	}
	*local = l;
	*domain = d;
	l = d = NULL;
	ret = VEP_OK;
out:
	free(l);
	free(d);
	return ret;
}
