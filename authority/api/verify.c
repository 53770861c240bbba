/*
 * api/verify.c - POST /verify (contract in api/verify.h).
 */
#include "api/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "assertion.h"
#include "auth/throttle_key.h"
#include "core/config.h"
#include "core/domain.h"
#include "core/metrics.h"
#include "core/errors.h"
#include "core/ratelimit.h"
#include "edge/req.h"
#include "email.h"
#include "err.h"
#include "keydir.h"
#include "remote/remote.h"
#include "server/loop.h"
#include "server/shared.h"
#include "util.h"

/* The two fields, as read from either body. */
struct verify_input {
	char *assertion;   /* owned */
	char *audience;    /* owned */
};

static void
input_clear(struct verify_input *in)
{
	free(in->assertion);
	free(in->audience);
	in->assertion = in->audience = NULL;
}

/* Stores value (new text, taken) as field name of in; other names are
 * dropped. Returns 0 or REQ_ERR_BAD_REQUEST with why (a repeated field). */
static int
input_set(struct verify_input *in, const char *name, char *value, char why[REQ_WHY_BUFSZ])
{
	char **slot = strcmp(name, "assertion") == 0 ? &in->assertion
	    : strcmp(name, "audience") == 0 ? &in->audience : NULL;

	if (slot == NULL) {
		free(value);
		return 0;
	}
	if (*slot != NULL) {
		free(value);
		snprintf(why, REQ_WHY_BUFSZ, "\"%s\" given more than once", name);
		return REQ_ERR_BAD_REQUEST;
	}
	*slot = value;
	return 0;
}

/* Decodes one application/x-www-form-urlencoded component of n bytes
 * into *out (new text): "+" is a space there (unlike in a URL's query),
 * then percent-escapes as everywhere (req_pct_decode: %00 refused). The
 * "+" become "%20" first, so that "%2B" still means "+". Returns 0,
 * VEP_ERR_NOMEM or VEP_ERR_INVALID. */
static int
form_component(const char *s, size_t n, char **out)
{
	char *raw;
	size_t i, o = 0;
	int rc;

	*out = NULL;
	if ((raw = malloc(n * 3 + 1)) == NULL)
		return VEP_ERR_NOMEM;
	for (i = 0; i < n; i++) {
		if (s[i] == '+') {
			memcpy(raw + o, "%20", 3);
			o += 3;
		} else {
			raw[o++] = s[i];
		}
	}
	rc = req_pct_decode(raw, o, out);
	free(raw);
	return rc;
}

/* Reads one name=value pair of n bytes at p into in. */
static int
read_pair(const char *p, size_t n, struct verify_input *in, char why[REQ_WHY_BUFSZ])
{
	const char *eq = memchr(p, '=', n);
	size_t nlen = eq != NULL ? (size_t)(eq - p) : n;
	char *name = NULL, *value = NULL;
	int rc;

	rc = form_component(p, nlen, &name);
	if (rc == 0)
		rc = form_component(eq != NULL ? eq + 1 : p + n, eq != NULL ? n - nlen - 1 : 0,
		    &value);
	if (rc != 0) {
		free(name);
		free(value);
		if (rc == VEP_ERR_NOMEM)
			return REQ_ERR_INTERNAL;
		snprintf(why, REQ_WHY_BUFSZ, "malformed form body");
		return REQ_ERR_BAD_REQUEST;
	}
	rc = input_set(in, name, value, why);
	free(name);
	return rc;
}

/* Parses an application/x-www-form-urlencoded body into in. */
static int
read_form(const char *body, size_t len, struct verify_input *in, char why[REQ_WHY_BUFSZ])
{
	const char *p, *end, *amp;
	size_t n;
	int rc;

	if (len == 0)
		return 0; /* no body (NULL): no fields */
	p = body;
	end = body + len;
	/* A raw NUL would end the decoded text early: what follows it would
	 * be read by one reader and not by another. */
	if (memchr(body, '\0', len) != NULL) {
		snprintf(why, REQ_WHY_BUFSZ, "malformed form body");
		return REQ_ERR_BAD_REQUEST;
	}
	while (p < end) {
		amp = memchr(p, '&', (size_t)(end - p));
		n = (size_t)((amp != NULL ? amp : end) - p);
		if (n > 0 && (rc = read_pair(p, n, in, why)) != 0)
			return rc;
		p += n + (amp != NULL);
	}
	return 0;
}

/* Takes a JSON field's string into in (a present non-string is refused). */
static int
json_field(const json_t *o, const char *name, struct verify_input *in,
    char why[REQ_WHY_BUFSZ])
{
	const json_t *v = json_object_get(o, name);
	char *copy;

	if (v == NULL)
		return 0;
	if (!json_is_string(v)) {
		snprintf(why, REQ_WHY_BUFSZ, "\"%s\" must be a string", name);
		return REQ_ERR_BAD_REQUEST;
	}
	/* NUL inside a string is refused by the strict parser already. */
	if ((copy = strdup(json_string_value(v))) == NULL)
		return REQ_ERR_INTERNAL;
	return input_set(in, name, copy, why);
}

/* Drops spaces, tabs and line ends around s, in place: what a file or a
 * shell leaves on an assertion (vep-keytool reads it the same way). */
static void
trim(char *s)
{
	size_t n = strlen(s), start = strspn(s, " \t\r\n");

	while (n > start && strchr(" \t\r\n", s[n - 1]) != NULL)
		n--;
	memmove(s, s + start, n - start);
	s[n - start] = '\0';
}

/* Reads the body, whichever of the two types it is, into in. */
static int
read_input(struct req *r, struct verify_input *in, char why[REQ_WHY_BUFSZ])
{
	const char *ct = req_header(r, "Content-Type");
	json_t *o = NULL;
	int rc;

	if (r->content_len > VERIFY_MAX_BODY_BYTES)
		return REQ_ERR_TOO_LARGE;
	if (req_media_type_is(ct, "application/x-www-form-urlencoded"))
		rc = read_form((const char *)r->content, r->content_len, in, why);
	else if (req_media_type_is(ct, "application/json")) {
		if ((rc = req_read_json(r, &o)) != 0)
			return rc;
		rc = json_field(o, "assertion", in, why);
		if (rc == 0)
			rc = json_field(o, "audience", in, why);
		json_decref(o);
	} else {
		return REQ_ERR_MEDIA_TYPE;
	}
	if (rc == 0 && in->assertion != NULL)
		trim(in->assertion);
	if (rc == 0 && in->audience != NULL)
		trim(in->audience);
	if (rc == 0 && (in->assertion == NULL || in->audience == NULL ||
	    in->assertion[0] == '\0' || in->audience[0] == '\0')) {
		snprintf(why, REQ_WHY_BUFSZ, "need assertion and audience");
		rc = REQ_ERR_BAD_REQUEST;
	}
	return rc;
}

/* The served domain of b's email, or NULL. */
static const struct domain *
email_domain(const struct domain_set *set, const vep_backed *b)
{
	const struct domain *d;
	char *local = NULL, *dom = NULL;

	if (vep_email_split(b->cert->email, &local, &dom) != 0) {
		free(local);
		return NULL;
	}
	vep_domain_lower(dom);
	d = domain_set_find(set, dom);
	free(local);
	free(dom);
	return d;
}

/* The verdict on in for a domain served here: 0 and the parsed assertion
 * in *out, or a VEP code with *reason the public text of the refusal;
 * SRV_ERR_NOT_SERVED, with the parsed assertion in *out too, when the
 * email's domain is not served here. */
static int
verdict(struct req *r, const struct verify_input *in, vep_backed **out, const char **reason)
{
	const struct domain_set *set = authority_domains(r->a);
	const vep_key *keys[VEP_KEYSET_MAX];
	const struct domain *d;
	vep_backed *b = NULL;
	size_t n;
	int rc;

	*out = NULL;
	*reason = NULL;
	if ((rc = vep_backed_parse(in->assertion, strlen(in->assertion), &b)) != 0)
		return rc;
	if ((d = email_domain(set, b)) == NULL) {
		*reason = "not a domain of this authority";
		*out = b;
		return SRV_ERR_NOT_SERVED;
	}
	n = vep_keyset_published(&d->keys, keys);
	rc = vep_backed_verify(b, in->audience, config_domain_issuer(d->cfg), keys, n,
	    vep_now_ms());
	if (rc != 0) {
		vep_backed_free(b);
		return rc;
	}
	*out = b;
	return 0;
}

/* Answers err (any code of core/errors.h; message NULL: the table's) with
 * no verdict. */
static void
refuse(struct req *r, int err, const char *message)
{
	metrics_verify(&r->a->metrics, METRICS_VERIFY_REFUSED);
	req_reply_error_text(r, err, message);
}

/* Answers 200 with verdict (taken; NULL: the allocation failed, 500). */
static void
reply_verdict(struct req *r, json_t *verdict)
{
	if (verdict == NULL) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply_json(r, 200, verdict);
	json_decref(verdict);
}

static void
reply_failure(struct req *r, const char *reason)
{
	metrics_verify(&r->a->metrics, METRICS_VERIFY_FAILURE);
	reply_verdict(r, json_pack("{ssss}", "status", "failure", "reason", reason));
}

static void
reply_okay(struct req *r, const vep_backed *b)
{
	metrics_verify(&r->a->metrics, METRICS_VERIFY_OKAY);
	reply_verdict(r, json_pack("{sssssssIss}", "status", "okay", "email", b->cert->email,
	    "audience", b->audience, "expires", (json_int_t)b->exp_ms,
	    "issuer", b->cert->issuer));
}

/* A remote verification's verdict (remote/remote.h), in the loop. */
static void
on_remote(struct remote_result *res, void *arg)
{
	struct req *r = arg;

	if (res->rc == VEP_ERR_NOMEM)
		refuse(r, REQ_ERR_INTERNAL, NULL);
	else if (res->rc != 0)
		reply_failure(r, res->reason[0] != '\0' ? res->reason : vep_strerror(res->rc));
	else
		reply_okay(r, res->backed);
}

/* Hands b (taken) for audience to the remote verifier, which answers r
 * later. */
static void
verify_remote(struct req *r, vep_backed *b, const char *audience)
{
	int rc = remote_verify(r->loop->remote, &b, audience, authority_cfg(r->a), on_remote, r);

	vep_backed_free(b);

	if (rc == SRV_ERR_BUSY) {
		req_add_header(r, "Retry-After", "1");
		/* A 5xx says no more than its status (edge/req.h). */
		refuse(r, rc, NULL);
	} else if (rc != 0) {
		refuse(r, REQ_ERR_INTERNAL, NULL);
	}
}

/* 0 when the client may verify now; else answers 429 and returns 1. */
static int
rate_limited(struct req *r)
{
	const struct config *cfg = authority_cfg(r->a);
	char key[THROTTLE_KEY_ADDR_BUFSZ], retry[24];
	long wait;

	if (throttle_key_addr(r->client_addr, key, sizeof key) != 0)
		snprintf(key, sizeof key, "%s", "unknown");
	wait = ratelimit_take(r->a->verify_limit, key, cfg->verify_rate, cfg->verify_burst,
	    vep_mono_ms());
	if (wait == 0)
		return 0;
	snprintf(retry, sizeof retry, "%ld", wait);
	req_add_header(r, "Retry-After", retry);
	refuse(r, REQ_ERR_TOO_MANY, "too many verification requests");
	return 1;
}

void
api_verify(struct req *r)
{
	struct verify_input in = { NULL, NULL };
	char why[REQ_WHY_BUFSZ] = "";
	const char *reason;
	vep_backed *b = NULL;
	int rc;

	if (rate_limited(r))
		return;
	if ((rc = read_input(r, &in, why)) != 0) {
		input_clear(&in);
		refuse(r, rc, why);
		return;
	}
	rc = verdict(r, &in, &b, &reason);
	if (rc == SRV_ERR_NOT_SERVED && authority_cfg(r->a)->verify_remote) {
		verify_remote(r, b, in.audience);
		input_clear(&in);
		return;
	}
	input_clear(&in);
	if (rc == VEP_ERR_NOMEM)
		refuse(r, REQ_ERR_INTERNAL, NULL);
	else if (rc != 0)
		reply_failure(r, reason != NULL ? reason : vep_strerror(rc));
	else
		reply_okay(r, b);
	vep_backed_free(b);
}
