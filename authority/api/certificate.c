/*
 * api/certificate.c - POST /api/cert (contract in api/certificate.h).
 */
#include "api/certificate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "server/shared.h"
#include "cert.h"
#include "core/domain.h"
#include "email.h"
#include "err.h"
#include "auth/signin.h"
#include "core/errors.h"
#include "issuance/issuance.h"
#include "key.h"
#include "core/log.h"
#include "server/loop.h"
#include "edge/req.h"
#include "util.h"

/* Parses "pubkey" (object, or JSON text of one) under the whole key policy,
 * its costly rules once per distinct key and loop (issuance/keycheck.h); fp gets its
 * fingerprint. Answers and returns non-zero when it is missing or not an
 * acceptable key. */
static int
parse_pubkey(struct req *r, vep_key **out, char fp[65])
{
	json_t *jk = json_object_get(r->body, "pubkey");
	json_t *parsed = NULL;
	char msg[160];
	int rc;

	if (json_is_string(jk)) {
		rc = vep_json_parse_object(json_string_value(jk), json_string_length(jk), &parsed);
		jk = parsed;
	} else {
		rc = json_is_object(jk) ? VEP_OK : VEP_ERR_ARG;
	}
	if (rc == 0)
		rc = vep_key_from_json_checked(jk, VEP_KEY_CHECKS_CHEAP, out);
	json_decref(parsed);
	if (rc == 0 && (rc = vep_key_fingerprint(*out, fp)) == 0)
		rc = issuance_check_key(r->loop->issuance, *out, fp);
	if (rc == 0)
		return 0;
	vep_key_free(*out);
	*out = NULL;
	if (rc == VEP_ERR_ARG) {
		req_reply_error_text(r, REQ_ERR_BAD_REQUEST,
		    "\"pubkey\" must be a BrowserID public key (object or JSON text)");
	} else if (rc == VEP_ERR_NOMEM) {
		req_reply_error(r, REQ_ERR_INTERNAL);
	} else {
		snprintf(msg, sizeof(msg), "unacceptable public key: %s", vep_strerror(rc));
		req_reply_error_text(r, REQ_ERR_BAD_REQUEST, msg);
	}
	return -1;
}

/* The lifetime to issue, in seconds; answers and returns -1 when the
 * request's "duration" is not acceptable. */
static long
lifetime_s(struct req *r)
{
	json_t *jd = json_object_get(r->body, "duration");
	long max = authority_cfg(r->a)->cert_max_duration_s;
	double v;

	if (jd == NULL)
		return max;
	v = json_is_number(jd) ? json_number_value(jd) : -1;
	/* Whole seconds; anything over a day is capped, so huge is fine. */
	if (v < CERT_MIN_DURATION_S || (v < 1e15 && v != (double)(long long)v)) {
		req_reply_error_text(r, REQ_ERR_BAD_REQUEST,
		    "\"duration\" must be a whole number of seconds, at least 300");
		return -1;
	}
	return v < (double)max ? (long)v : max;
}

/* Checks the optional "email" against the session. Answers and returns -1
 * on a mismatch. */
static int
check_email(struct req *r, const char *session_email)
{
	json_t *je = json_object_get(r->body, "email");
	char *email = NULL;
	int same;

	if (je == NULL)
		return 0;
	if (!json_is_string(je) ||
	    vep_email_normalize(json_string_value(je), json_string_length(je), &email) != 0) {
		req_reply_error_text(r, REQ_ERR_BAD_REQUEST, "\"email\" is not a valid address");
		return -1;
	}
	same = strcmp(email, session_email) == 0;
	free(email);
	if (!same) {
		req_reply_error_text(r, REQ_ERR_FORBIDDEN,
		    "a certificate can only be issued for the signed-in address");
		return -1;
	}
	return 0;
}

/* The certificate is recorded (or could not be): the answer. */
static void
on_issued(int rc, const struct issuance_cert *c, void *arg)
{
	struct req *r = arg;
	json_t *o;

	if (rc == SRV_ERR_CANCELED) {
		req_abandon(r);
		return;
	}
	if (rc != 0) {
		req_add_header(r, "Retry-After", "5");
		req_reply_error(r, REQ_ERR_UNAVAILABLE);
		return;
	}
	o = json_pack("{sssssIsI}", "cert", c->cert, "email", c->email,
	    "iat", (json_int_t)c->iat_ms, "exp", (json_int_t)c->exp_ms);
	if (o == NULL) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply_json(r, 200, o);
	json_decref(o);
}

/* Signs and records; answers when the record is durable. */
static void
issue(struct req *r, const struct domain *d, const char *email, const vep_key *user,
    const char *fp, long life_s)
{
	struct issuance_order o = { d, email, user, fp, life_s, r->client_addr };
	int rc = issuance_certify(r->loop->issuance, &o, on_issued, r);

	if (rc == 0)
		return;
	/* The key process gone or stalled is an outage, not a bug. */
	if (rc == VEP_ERR_IO)
		req_add_header(r, "Retry-After", "5");
	req_reply_error(r, rc == VEP_ERR_IO || rc == SRV_ERR_UNRECORDED ? REQ_ERR_UNAVAILABLE :
	    REQ_ERR_INTERNAL);
}

void
api_certificate(struct req *r, const struct signin_session *s)
{
	static const char *const fields[] = { "pubkey", "duration", "email", NULL };
	const struct domain *d;
	const char *at = strrchr(s->email, '@');
	vep_key *user = NULL;
	char fp[65];
	long life;

	if (req_refuse_unknown_fields(r, fields) != 0 || check_email(r, s->email) != 0)
		return;
	d = at != NULL ? domain_set_find(authority_domains(r->a), at + 1) : NULL;
	if (d == NULL) {
		/* Signed in while the domain was served; it is not any more. */
		req_reply_error(r, REQ_ERR_UNAUTHORIZED);
		return;
	}
	if ((life = lifetime_s(r)) < 0 || parse_pubkey(r, &user, fp) != 0)
		return;
	issue(r, d, s->email, user, fp, life);
	vep_key_free(user);
}
