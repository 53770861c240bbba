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

/* The request's "pubkey" (an object, or the JSON text of one that a user
 * agent's genKeyPair returns) under the whole key policy, parsed once per
 * distinct text and loop (issuance_user_key). Returns 0 with *out
 * (borrowed), VEP_ERR_NOMEM, or REQ_ERR_BAD_REQUEST with why when it is
 * missing or not an acceptable key. */
static int
parse_pubkey(const struct req *r, const struct keycache_entry **out,
    char fp[VEP_FINGERPRINT_BUFSZ], char why[REQ_WHY_BUFSZ])
{
	json_t *jk = json_object_get(r->body, "pubkey");
	char *dumped = NULL;
	int rc;

	*out = NULL;
	if (json_is_string(jk)) {
		rc = issuance_user_key(r->loop->issuance, json_string_value(jk),
		    json_string_length(jk), out, fp);
	} else if (json_is_object(jk)) {
		/* The same object the same way each time (jansson keeps the
		 * members' order): the same text for the cache. */
		if ((dumped = json_dumps(jk, JSON_COMPACT)) == NULL)
			return VEP_ERR_NOMEM;
		rc = issuance_user_key(r->loop->issuance, dumped, strlen(dumped), out, fp);
		free(dumped);
	} else {
		rc = VEP_ERR_ARG;
	}
	if (rc == 0 || rc == VEP_ERR_NOMEM)
		return rc;
	/* Whatever the parser or the policy refused, the key is the client's. */
	if (rc == VEP_ERR_ARG)
		snprintf(why, REQ_WHY_BUFSZ,
		    "\"pubkey\" must be a BrowserID public key (object or JSON text)");
	else
		snprintf(why, REQ_WHY_BUFSZ, "unacceptable public key: %s", vep_strerror(rc));
	return REQ_ERR_BAD_REQUEST;
}

/* The lifetime to issue, in seconds, into *life_s. Returns 0, or
 * REQ_ERR_BAD_REQUEST with why when the request's "duration" is not
 * acceptable. */
static int
lifetime(const struct req *r, long *life_s, char why[REQ_WHY_BUFSZ])
{
	json_t *jd = json_object_get(r->body, "duration");
	long max = authority_cfg(r->a)->cert_max_duration_s;
	double v;

	*life_s = max;
	if (jd == NULL)
		return 0;
	v = json_is_number(jd) ? json_number_value(jd) : -1;
	/* Whole seconds; anything over a day is capped, so huge is fine. */
	if (v < CERT_MIN_DURATION_S || (v < 1e15 && v != (double)(long long)v)) {
		snprintf(why, REQ_WHY_BUFSZ,
		    "\"duration\" must be a whole number of seconds, at least 300");
		return REQ_ERR_BAD_REQUEST;
	}
	if (v < (double)max)
		*life_s = (long)v;
	return 0;
}

/* Checks the optional "email" against the session. Returns 0, or
 * REQ_ERR_BAD_REQUEST (not an address) or REQ_ERR_FORBIDDEN (another
 * one) with why. */
static int
check_email(const struct req *r, const char *session_email, char why[REQ_WHY_BUFSZ])
{
	json_t *je = json_object_get(r->body, "email");
	char *email = NULL;
	int same;

	if (je == NULL)
		return 0;
	if (!json_is_string(je) ||
	    vep_email_normalize(json_string_value(je), json_string_length(je), &email) != 0) {
		snprintf(why, REQ_WHY_BUFSZ, "\"email\" is not a valid address");
		return REQ_ERR_BAD_REQUEST;
	}
	same = strcmp(email, session_email) == 0;
	free(email);
	if (!same) {
		snprintf(why, REQ_WHY_BUFSZ,
		    "a certificate can only be issued for the signed-in address");
		return REQ_ERR_FORBIDDEN;
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
		metrics_cert(&r->a->metrics, METRICS_CERT_FAILED);
		req_add_header(r, "Retry-After", "5");
		req_reply_error(r, REQ_ERR_UNAVAILABLE);
		return;
	}
	metrics_cert(&r->a->metrics, METRICS_CERT_ISSUED);
	o = json_pack("{sssssIsI}", "cert", c->cert, "email", c->email,
	    "iat", (json_int_t)c->iat_ms, "exp", (json_int_t)c->exp_ms);
	if (o == NULL) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply_json(r, 200, o);
	json_decref(o);
}

/* Signs and records; on_issued answers when the record is durable.
 * Returns 0, or the error to answer now. */
static int
issue(struct req *r, const struct domain *d, const char *email,
    const struct keycache_entry *user, long life_s)
{
	struct issuance_order o = { d, email, user->key, user->fp, life_s, r->client_addr,
				    user->json };
	int rc = issuance_certify(r->loop->issuance, &o, on_issued, r);

	/* Everything the order holds was checked above: a signing error that
	 * blames its input is ours, not the client's. */
	if (rc != 0 && req_error_status(rc) < 500)
		rc = REQ_ERR_INTERNAL;
	return rc;
}

void
api_certificate(struct req *r, const struct signin_session *s)
{
	static const char *const fields[] = { "pubkey", "duration", "email", NULL };
	const struct domain *d = NULL;
	const char *at = strrchr(s->email, '@');
	char fp[VEP_FINGERPRINT_BUFSZ] = "", why[REQ_WHY_BUFSZ] = "";
	const char *refusal;   /* the audit trail's word for a refusal */
	const struct keycache_entry *user = NULL;
	long life = 0;
	int rc;

	refusal = "bad_request";
	if ((rc = req_check_fields(r, fields, why)) != 0)
		goto out;
	refusal = "other_address";
	if ((rc = check_email(r, s->email, why)) != 0)
		goto out;
	d = at != NULL ? domain_set_find(authority_domains(r->a), at + 1) : NULL;
	if (d == NULL) {
		/* Signed in while the domain was served; it is not any more. */
		refusal = "domain_not_served";
		rc = REQ_ERR_UNAUTHORIZED;
		goto out;
	}
	refusal = "bad_duration";
	if ((rc = lifetime(r, &life, why)) != 0)
		goto out;
	refusal = "bad_key";
	if ((rc = parse_pubkey(r, &user, fp, why)) != 0)
		goto out;
	rc = issue(r, d, s->email, user, life);
	/* The key process gone or stalled is an outage, not a bug. */
	if (rc == VEP_ERR_IO)
		req_add_header(r, "Retry-After", "5");
out:
	if (rc != 0 && req_error_status(rc) < 500) {
		metrics_cert(&r->a->metrics, METRICS_CERT_REFUSED);
		issuance_refused(r->loop->issuance, s->email, fp[0] != '\0' ? fp : NULL,
		    r->client_addr, refusal);
	} else if (rc != 0) {
		metrics_cert(&r->a->metrics, METRICS_CERT_FAILED);
	}
	if (rc != 0)
		req_reply_error_text(r, rc, why);
}
