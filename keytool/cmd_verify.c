/*
 * cmd_verify.c - relying-party commands: verify-cert and verify-assertion.
 *
 * Owns the verdicts an administrator gets: stdout carries the email and
 * nothing else on success; stderr the reason (vep_strerror) on failure;
 * exit 0 valid, 1 invalid, 2 usage/I/O. verify-assertion --json prints
 * instead, on stdout, the one-line object of Persona's remote verifier, as
 * the authority's POST /verify answers: {"status":"okay","email",
 * "audience","expires","issuer"} or {"status":"failure","reason"} with the
 * same vep_strerror words, for every verdict (usage errors print none).
 * Must never report "valid" without a signature check against keys the
 * caller chose or resolved.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assertion.h"
#include "cert.h"
#include "email.h"
#include "err.h"
#include "kt.h"
#include "resolve.h"
#include "util.h"

/* The largest --at accepted (ms): year 9999. */
#define KT_AT_MAX_MS 253402300799999LL

/* Options shared by both commands. */
struct kt_verify_args {
	const char *issuer_key;    /* verify-cert only */
	const char *audience;      /* verify-assertion only */
	struct kt_source src;
	int64_t now_ms;
	const char *input;
	char connect_host[256];    /* --connect's host part */
	int json;                  /* verify-assertion --json */
};

enum { OPT_CONNECT = 256, OPT_CAFILE, OPT_TIMEOUT, OPT_JSON };

static int
kt_verify_parse(const struct kt_cmd *self, int argc, char **argv,
    int want_audience, struct kt_verify_args *a)
{
	static const struct option opts[] = {
		{ "issuer-key", required_argument, NULL, 'k' },
		{ "audience", required_argument, NULL, 'a' },
		{ "support-doc", required_argument, NULL, 's' },
		{ "fetch", required_argument, NULL, 'f' },
		{ "at", required_argument, NULL, 'T' },
		{ "connect", required_argument, NULL, OPT_CONNECT },
		{ "cafile", required_argument, NULL, OPT_CAFILE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int64_t v;
	char *colon;
	int c, sources;

	memset(a, 0, sizeof *a);
	a->src.fetch.timeout_s = KT_FETCH_TIMEOUT_S;
	a->now_ms = vep_now_ms();
	while ((c = getopt_long(argc, argv, "k:a:s:f:T:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			if (want_audience)
				return kt_usage_error(self, "--issuer-key is for verify-cert");
			a->issuer_key = optarg;
			break;
		case 'a':
			if (!want_audience)
				return kt_usage_error(self, "--audience is for verify-assertion");
			a->audience = optarg;
			break;
		case 's':
			if (kt_source_add_file(&a->src, optarg) != 0)
				return KT_EXIT_USAGE;
			break;
		case 'f': a->src.fetch_url = optarg; break;
		case 'T':
			if (kt_parse_i64(optarg, 0, KT_AT_MAX_MS, &a->now_ms) != 0)
				return kt_usage_error(self,
				    "--at must be milliseconds since the epoch");
			break;
		case OPT_CONNECT:
			colon = strrchr(optarg, ':');
			if (colon == NULL || (size_t)(colon - optarg) >= sizeof a->connect_host ||
			    colon == optarg || kt_parse_i64(colon + 1, 1, 65535, &v) != 0)
				return kt_usage_error(self, "--connect wants HOST:PORT");
			memcpy(a->connect_host, optarg, (size_t)(colon - optarg));
			a->connect_host[colon - optarg] = '\0';
			a->src.fetch.connect_host = a->connect_host;
			a->src.fetch.connect_port = (int)v;
			break;
		case OPT_CAFILE: a->src.fetch.cafile = optarg; break;
		case OPT_TIMEOUT:
			if (kt_parse_i64(optarg, 1, KT_FETCH_TIMEOUT_MAX_S, &v) != 0)
				return kt_usage_error(self, "--timeout must be 1..%d seconds",
				    KT_FETCH_TIMEOUT_MAX_S);
			a->src.fetch.timeout_s = (int)v;
			break;
		case OPT_JSON:
			if (!want_audience)
				return kt_usage_error(self, "--json is for verify-assertion");
			a->json = 1;
			break;
		case 'h': return kt_help(self) - 1; /* -1: done, exit 0 */
		default: return kt_usage_error(self, "bad option");
		}
	}
	if (optind + 1 != argc)
		return kt_usage_error(self, "exactly one input FILE (or '-') is required");
	a->input = argv[optind];
	sources = (a->issuer_key != NULL) + (a->src.nfiles > 0) + (a->src.fetch_url != NULL);
	if (sources != 1)
		return kt_usage_error(self, want_audience
		    ? "give exactly one of --support-doc or --fetch"
		    : "give exactly one of --issuer-key, --support-doc or --fetch");
	if (want_audience && a->audience == NULL)
		return kt_usage_error(self, "--audience ORIGIN is required");
	return 0;
}

/* Reports a failed verdict: the reason on stderr. */
static int
kt_invalid(int r)
{
	fprintf(stderr, "invalid: %s\n", vep_strerror(r));
	return kt_verdict_exit(r);
}

/* Reports a verdict: the email on stdout, or the reason on stderr. */
static int
kt_verdict(int r, const char *email)
{
	if (r != 0)
		return kt_invalid(r);
	printf("%s\n", email);
	return KT_EXIT_OK;
}

/* Reports an assertion's verdict r as the object POST /verify answers
 * (b: the verified assertion when r is 0). The exit code is the text
 * form's. */
static int
kt_json_verdict(int r, const vep_backed *b)
{
	json_t *o;
	int pr;

	if (r != 0)
		o = json_pack("{s:s, s:s}", "status", "failure", "reason", vep_strerror(r));
	else
		o = json_pack("{s:s, s:s, s:s, s:I, s:s}", "status", "okay",
		    "email", b->cert->email, "audience", b->audience,
		    "expires", (json_int_t)b->exp_ms, "issuer", b->cert->issuer);
	if ((pr = kt_print_json(o)) != 0) {
		kt_err("cannot print the verdict: %s", vep_strerror(pr));
		return KT_EXIT_USAGE;
	}
	return kt_verdict_exit(r);
}

/* Reports verify-assertion's verdict r in the form a asks for. */
static int
kt_assertion_verdict(const struct kt_verify_args *a, int r, const vep_backed *b)
{
	if (a->json)
		return kt_json_verdict(r, b);
	return kt_verdict(r, r == 0 ? b->cert->email : NULL);
}

/* The email's domain, lowercase (new text). */
static int
kt_email_domain(const char *email, char **domain)
{
	char *local = NULL;
	int r;

	*domain = NULL;
	r = vep_email_split(email, &local, domain);
	free(local);
	if (r == 0)
		vep_domain_lower(*domain);
	return r;
}

int
kt_cmd_verify_cert(const struct kt_cmd *self, int argc, char **argv)
{
	struct kt_verify_args a;
	struct vep_support *doc = NULL;
	vep_cert *cert = NULL;
	vep_key *ikey = NULL;
	char *text = NULL, *domain = NULL, *issuer = NULL;
	const vep_key *const *keys;
	const vep_key *one[1];
	size_t len = 0, nkeys;
	int r, rc;

	if ((rc = kt_verify_parse(self, argc, argv, 0, &a)) != 0)
		return rc < 0 ? KT_EXIT_OK : rc;
	if (kt_read_input(a.input, KT_INPUT_MAX_BYTES, &text, &len) != 0)
		return KT_EXIT_USAGE;
	if ((r = vep_cert_parse(text, len, &cert)) != 0) {
		rc = kt_invalid(r);
		goto out;
	}
	if (a.issuer_key != NULL) {
		/* The caller vouches for this key: no issuer rule to apply. */
		if (kt_load_public(a.issuer_key, &ikey) != 0) {
			rc = KT_EXIT_USAGE;
			goto out;
		}
		one[0] = ikey;
		keys = one;
		nkeys = 1;
	} else {
		if ((r = kt_email_domain(cert->email, &domain)) != 0) {
			rc = kt_invalid(VEP_ERR_EMAIL);
			goto out;
		}
		if ((r = kt_resolve(&a.src, domain, &doc, &issuer)) != 0) {
			rc = kt_invalid(r);
			goto out;
		}
		if (strcmp(cert->issuer, issuer) != 0) {
			fprintf(stderr, "certificate issuer %s, expected %s\n",
			    cert->issuer, issuer);
			rc = kt_invalid(VEP_ERR_ISSUER);
			goto out;
		}
		keys = (const vep_key *const *)doc->keys;
		nkeys = doc->nkeys;
	}
	r = vep_cert_verify(cert, keys, nkeys, a.now_ms);
	rc = kt_verdict(r, cert->email);
out:
	free(text);
	free(domain);
	free(issuer);
	vep_cert_free(cert);
	vep_key_free(ikey);
	vep_support_free(doc);
	return rc;
}

int
kt_cmd_verify_assertion(const struct kt_cmd *self, int argc, char **argv)
{
	struct kt_verify_args a;
	struct vep_support *doc = NULL;
	vep_backed *b = NULL;
	char *text = NULL, *domain = NULL, *issuer = NULL;
	size_t len = 0;
	int r, rc;

	if ((rc = kt_verify_parse(self, argc, argv, 1, &a)) != 0)
		return rc < 0 ? KT_EXIT_OK : rc;
	if (kt_read_input(a.input, KT_INPUT_MAX_BYTES, &text, &len) != 0)
		return KT_EXIT_USAGE;
	if ((r = vep_backed_parse(text, len, &b)) != 0)
		goto verdict;
	if (kt_email_domain(b->cert->email, &domain) != 0) {
		r = VEP_ERR_EMAIL;
		goto verdict;
	}
	if ((r = kt_resolve(&a.src, domain, &doc, &issuer)) != 0)
		goto verdict;
	r = vep_backed_verify(b, a.audience, issuer,
	    (const vep_key *const *)doc->keys, doc->nkeys, a.now_ms);
	if (r == VEP_ERR_ISSUER)
		fprintf(stderr, "certificate issuer %s, expected %s\n",
		    b->cert->issuer, issuer);
verdict:
	rc = kt_assertion_verdict(&a, r, b);
	free(text);
	free(domain);
	free(issuer);
	vep_backed_free(b);
	vep_support_free(doc);
	return rc;
}
