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
#include "secmem.h"
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
	int rc;

	rc = issuance_user_key(r->loop->issuance, json_object_get(r->body, "pubkey"), out, fp);
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

/* {"cert","email","iat","exp"}, written directly (vep_json_quote escapes
 * as json_dumps would): the certificate is most of the answer, and jansson
 * spends more writing it out than the rest of the request's JSON costs. */
static void
reply_cert(struct req *r, const struct issuance_cert *c)
{
	size_t clen = strlen(c->cert), elen = strlen(c->email);
	size_t cap = VEP_JSON_QUOTED_MAX(clen) + VEP_JSON_QUOTED_MAX(elen) + 96, len;
	char *t, *o;

	if ((t = malloc(cap)) == NULL) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	o = t;
	o += sprintf(o, "{\"cert\":");
	o += vep_json_quote(o, c->cert, clen);
	o += sprintf(o, ",\"email\":");
	o += vep_json_quote(o, c->email, elen);
	o += sprintf(o, ",\"iat\":%lld,\"exp\":%lld}", (long long)c->iat_ms,
	    (long long)c->exp_ms);
	len = (size_t)(o - t);
	req_reply(r, 200, "application/json", t, len, 0);
	vep_memzero(t, len);
	free(t);
}

/* The certificate is recorded (or could not be): the answer. */
static void
on_issued(int rc, const struct issuance_cert *c, void *arg)
{
	struct req *r = arg;

	if (rc == SRV_ERR_CANCELED) {
		req_abandon(r);
		return;
	}
	if (rc != 0) {
		metrics_cert(&r->a->metrics, METRICS_CERT_FAILED);
		/* Everything the order held was checked: a signing error that
		 * blames its input is ours, not the client's. The key process
		 * gone or stalled, or the audit not recorded, is an outage. */
		if (req_error_status(rc) < 500) {
			req_reply_error(r, REQ_ERR_INTERNAL);
			return;
		}
		req_add_header(r, "Retry-After", "5");
		req_reply_error(r, REQ_ERR_UNAVAILABLE);
		return;
	}
	metrics_cert(&r->a->metrics, METRICS_CERT_ISSUED);
	reply_cert(r, c);
}

/* Signs and records; on_issued answers when the record is durable (or
 * why not). Returns 0, or the error to answer now. */
static int
issue(struct req *r, const struct domain *d, const char *email,
    const struct keycache_entry *user, long life_s)
{
	struct issuance_order o = { d, email, user->key, user->fp, life_s, r->client_addr,
				    user->text };
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
