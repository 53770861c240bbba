/*
 * cmd_cert.c - issuing commands: certify (an identity certificate signed
 * offline with the domain key) and sign-assertion (what a user agent does
 * with the user key; for tests and end-to-end checks).
 *
 * Owns the tool's certificate policy: issuer = the email's domain unless
 * --issuer names a delegated authority, iat back-dated KT_CERT_BACKDATE_MS,
 * lifetime KT_CERT_DEFAULT_DURATION_S by default and never over
 * VEP_CERT_MAX_LIFETIME_MS. Must never certify a syntactically invalid
 * address or use a key whose file permissions are unsafe.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assertion.h"
#include "cert.h"
#include "email.h"
#include "err.h"
#include "keydir.h"
#include "kt.h"
#include "util.h"

/* The largest --at accepted (ms): year 9999, well inside int64 and JS. */
#define KT_AT_MAX_MS 253402300799999LL

int
kt_cmd_certify(const struct kt_cmd *self, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "dir", required_argument, NULL, 'd' },
		{ "email", required_argument, NULL, 'e' },
		{ "pubkey", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 't' },
		{ "issuer", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *keyfile = NULL, *dir = NULL, *email_arg = NULL, *pubfile = NULL;
	const char *issuer_arg = NULL, *duration_arg = NULL;
	struct vep_keyset ks = { 0 };
	struct vep_cert_params p = { 0 };
	vep_key *dkey = NULL, *ukey = NULL;
	const vep_key *signer;
	char *email = NULL, *local = NULL, *domain = NULL, *issuer = NULL, *cert = NULL;
	int64_t duration_s = KT_CERT_DEFAULT_DURATION_S, now;
	int c, r, rc;

	while ((c = getopt_long(argc, argv, "k:d:e:p:t:i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k': keyfile = optarg; break;
		case 'd': dir = optarg; break;
		case 'e': email_arg = optarg; break;
		case 'p': pubfile = optarg; break;
		case 't': duration_arg = optarg; break;
		case 'i': issuer_arg = optarg; break;
		case 'h': return kt_help(self);
		default: return kt_usage_error(self, "bad option");
		}
	}
	if ((keyfile == NULL) == (dir == NULL))
		return kt_usage_error(self, "give exactly one of --key FILE or --dir DIR");
	if (email_arg == NULL || pubfile == NULL || optind != argc)
		return kt_usage_error(self, "--email and --pubkey are required");
	if (duration_arg != NULL &&
	    kt_parse_i64(duration_arg, 1, INT32_MAX, &duration_s) != 0)
		return kt_usage_error(self, "--duration must be a positive number of seconds");
	if (duration_s * 1000 > VEP_CERT_MAX_LIFETIME_MS) {
		fprintf(stderr, "vep-keytool: warning: --duration capped at %lld s (24 h)\n",
		    VEP_CERT_MAX_LIFETIME_MS / 1000);
		duration_s = VEP_CERT_MAX_LIFETIME_MS / 1000;
	}
	if (vep_email_normalize(email_arg, strlen(email_arg), &email) != 0)
		return kt_usage_error(self, "'%s' is not an address BrowserID accepts", email_arg);
	if ((r = vep_email_split(email, &local, &domain)) != 0) {
		rc = KT_EXIT_USAGE;
		goto out;
	}
	if ((issuer = strdup(issuer_arg != NULL ? issuer_arg : domain)) == NULL) {
		rc = KT_EXIT_USAGE;
		goto out;
	}
	vep_domain_lower(issuer);
	if (!vep_domain_valid(issuer)) {
		rc = kt_usage_error(self, "issuer '%s' is not a domain name", issuer);
		goto out;
	}
	if (strcmp(issuer, domain) != 0)
		fprintf(stderr, "vep-keytool: note: issuer %s differs from the email's "
		    "domain; verifiers accept this only if %s delegates to %s\n",
		    issuer, domain, issuer);
	if (dir != NULL) {
		if ((r = vep_keydir_load(dir, &ks)) != 0) {
			if (r == VEP_ERR_PERM)
				kt_err("%s: a key file is accessible by group or others; "
				    "fix it with: chmod 600 %s/*.pem", dir, dir);
			else
				kt_err("%s: %s", dir, vep_strerror(r));
			rc = KT_EXIT_USAGE;
			goto out;
		}
		signer = ks.current;
	} else {
		if (kt_load_private(keyfile, &dkey) != 0) {
			rc = KT_EXIT_USAGE;
			goto out;
		}
		signer = dkey;
	}
	if (kt_load_public(pubfile, &ukey) != 0) {
		rc = KT_EXIT_USAGE;
		goto out;
	}
	now = vep_now_ms();
	p.issuer = issuer;
	p.email = email;
	p.pubkey = ukey;
	/* Verifiers refuse iat > now with no skew allowance. */
	p.iat_ms = now - KT_CERT_BACKDATE_MS;
	p.exp_ms = now + duration_s * 1000;
	if (p.exp_ms - p.iat_ms > VEP_CERT_MAX_LIFETIME_MS)
		p.exp_ms = p.iat_ms + VEP_CERT_MAX_LIFETIME_MS;
	if ((r = vep_cert_sign(signer, &p, &cert)) != 0) {
		kt_err("cannot sign the certificate: %s", vep_strerror(r));
		rc = KT_EXIT_USAGE;
		goto out;
	}
	printf("%s\n", cert);
	rc = KT_EXIT_OK;
out:
	free(cert);
	free(email);
	free(local);
	free(domain);
	free(issuer);
	vep_key_free(dkey);
	vep_key_free(ukey);
	vep_keyset_clear(&ks);
	return rc;
}

int
kt_cmd_sign_assertion(const struct kt_cmd *self, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "audience", required_argument, NULL, 'a' },
		{ "cert", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 't' },
		{ "at", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *keyfile = NULL, *audience = NULL, *certfile = NULL;
	const char *duration_arg = NULL, *at_arg = NULL;
	vep_key *ukey = NULL;
	char *assertion = NULL, *cert = NULL, *backed = NULL;
	size_t certlen = 0;
	int64_t duration_s = KT_ASSERTION_DEFAULT_DURATION_S, now;
	int c, r, rc;

	while ((c = getopt_long(argc, argv, "k:a:c:t:T:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k': keyfile = optarg; break;
		case 'a': audience = optarg; break;
		case 'c': certfile = optarg; break;
		case 't': duration_arg = optarg; break;
		case 'T': at_arg = optarg; break;
		case 'h': return kt_help(self);
		default: return kt_usage_error(self, "bad option");
		}
	}
	if (keyfile == NULL || audience == NULL || optind != argc)
		return kt_usage_error(self, "--key and --audience are required");
	if (duration_arg != NULL && kt_parse_i64(duration_arg, 1,
	    KT_ASSERTION_MAX_DURATION_S, &duration_s) != 0)
		return kt_usage_error(self, "--duration must be 1..%d seconds",
		    KT_ASSERTION_MAX_DURATION_S);
	now = vep_now_ms();
	if (at_arg != NULL && kt_parse_i64(at_arg, 0, KT_AT_MAX_MS, &now) != 0)
		return kt_usage_error(self, "--at must be milliseconds since the epoch");
	if (!vep_audience_match(audience, audience))
		return kt_usage_error(self, "--audience must be an origin like https://rp.example");
	if (kt_load_private(keyfile, &ukey) != 0) {
		rc = KT_EXIT_USAGE;
		goto out;
	}
	if (certfile != NULL &&
	    kt_read_input(certfile, KT_INPUT_MAX_BYTES, &cert, &certlen) != 0) {
		rc = KT_EXIT_USAGE;
		goto out;
	}
	if ((r = vep_assertion_sign(ukey, audience, now + duration_s * 1000, &assertion)) != 0) {
		kt_err("cannot sign the assertion: %s", vep_strerror(r));
		rc = KT_EXIT_USAGE;
		goto out;
	}
	if (cert != NULL) {
		if ((r = vep_backed_join(cert, assertion, &backed)) != 0) {
			kt_err("cannot join: %s", vep_strerror(r));
			rc = KT_EXIT_USAGE;
			goto out;
		}
		printf("%s\n", backed);
	} else
		printf("%s\n", assertion);
	rc = KT_EXIT_OK;
out:
	free(assertion);
	free(cert);
	free(backed);
	vep_key_free(ukey);
	return rc;
}
