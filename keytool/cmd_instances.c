/*
 * cmd_instances.c - `vep-keytool instances`: whether several running
 * authority instances publish the same domain keys, the check a cluster's
 * administrator makes before each step of a key rotation (prepare,
 * rotate, retire) and after its reload.
 *
 * Each instance's support document is fetched as verify-assertion --fetch
 * fetches one (remote/fetch.h: no redirects, 200 and application/json
 * only, at most 64 KiB, a timeout) and parsed by libvep. What is compared
 * is what verifiers see: the fingerprint (vep_key_fingerprint, as `pubkey
 * --fingerprint` prints it) of the key that signs ("public-key"), and the
 * set of every key published ("public-key" and "keys": current, next and
 * previous). "Same" means both agree on every instance; an instance that
 * cannot be read, or that publishes no keys, is never counted as the same.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "email.h"
#include "err.h"
#include "key.h"
#include "kt.h"
#include "remote/fetch.h"
#include "resolve.h"
#include "support.h"

/* Most keys one document yields: "public-key" and every one of "keys". */
#define INST_MAX_KEYS (VEP_SUPPORT_MAX_KEYS + 1)
/* Room for a reason an instance could not be read. */
#define INST_WHY_MAX 512

enum { OPT_DOMAIN = 256, OPT_CAFILE, OPT_TIMEOUT, OPT_JSON };

struct inst_args {
	const char *domain;        /* NULL: the instance's first domain */
	char domain_lower[256];
	struct fetch_opts fetch;
	int json;
	char **urls;
	size_t nurls;
};

/* What one instance publishes, or why it could not be read. */
struct inst {
	const char *url;                                 /* as given */
	int ok;
	char why[INST_WHY_MAX];
	char current[VEP_FINGERPRINT_BUFSZ];             /* "public-key" */
	char keys[INST_MAX_KEYS][VEP_FINGERPRINT_BUFSZ]; /* every key, sorted */
	size_t nkeys;
};

/* How an instance's keys differ from the reference's: fingerprints it has
 * that the reference lacks (extra) and the other way round (missing). */
struct inst_diff {
	int current;               /* 1: another "public-key" */
	const char *extra[INST_MAX_KEYS];
	size_t nextra;
	const char *missing[INST_MAX_KEYS];
	size_t nmissing;
};

/* 1 when url is a base URL: http:// or https://, a host, and at most a
 * trailing '/' (no path, query or fragment: the document's path is ours
 * to add). */
static int
inst_base_url_ok(const char *url)
{
	const char *rest;
	size_t hostlen;

	if (strncasecmp(url, "http://", 7) == 0)
		rest = url + 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		rest = url + 8;
	else
		return 0;
	hostlen = strcspn(rest, "/?#");
	return hostlen > 0 && (rest[hostlen] == '\0' || strcmp(rest + hostlen, "/") == 0);
}

/* Returns 0, -1 after printing the help, or KT_EXIT_USAGE after saying
 * why. */
static int
inst_parse(const struct kt_cmd *self, int argc, char **argv, struct inst_args *a)
{
	static const struct option opts[] = {
		{ "domain", required_argument, NULL, OPT_DOMAIN },
		{ "cafile", required_argument, NULL, OPT_CAFILE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int64_t v;
	int c, i;

	memset(a, 0, sizeof *a);
	a->fetch.timeout_s = KT_FETCH_TIMEOUT_S;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_DOMAIN:
			if (strlen(optarg) >= sizeof a->domain_lower || !vep_domain_valid(optarg))
				return kt_usage_error(self, "--domain wants a domain name");
			snprintf(a->domain_lower, sizeof a->domain_lower, "%s", optarg);
			vep_domain_lower(a->domain_lower);
			a->domain = a->domain_lower;
			break;
		case OPT_CAFILE: a->fetch.cafile = optarg; break;
		case OPT_TIMEOUT:
			if (kt_parse_i64(optarg, 1, KT_FETCH_TIMEOUT_MAX_S, &v) != 0)
				return kt_usage_error(self, "--timeout must be 1..%d seconds",
				    KT_FETCH_TIMEOUT_MAX_S);
			a->fetch.timeout_s = (int)v;
			break;
		case OPT_JSON: a->json = 1; break;
		case 'h': return kt_help(self) - 1; /* -1: done, exit 0 */
		default: return kt_usage_error(self, "bad option");
		}
	}
	if (argc - optind < 2)
		return kt_usage_error(self, "give at least two instance URLs");
	for (i = optind; i < argc; i++)
		if (!inst_base_url_ok(argv[i]))
			return kt_usage_error(self, "%s: not a base URL "
			    "(http[s]://host[:port])", argv[i]);
	a->urls = argv + optind;
	a->nurls = (size_t)(argc - optind);
	return 0;
}

static int
inst_fp_cmp(const void *x, const void *y)
{
	return strcmp(x, y);
}

/* Fills in from a parsed document: the keys' fingerprints, sorted. */
static int
inst_take_keys(struct inst *in, const struct vep_support *doc)
{
	size_t i;
	int r;

	if (doc->disabled) {
		snprintf(in->why, sizeof in->why, "the domain is disabled ({\"disabled\":true})");
		return VEP_ERR_DISABLED;
	}
	if (doc->authority != NULL) {
		snprintf(in->why, sizeof in->why, "a delegation to %s, not keys (give --domain "
		    "for a domain this instance serves)", doc->authority);
		return VEP_ERR_DELEGATION;
	}
	if (doc->nkeys == 0 || doc->nkeys > INST_MAX_KEYS) {
		snprintf(in->why, sizeof in->why, "no keys, or too many");
		return VEP_ERR_INVALID;
	}
	for (i = 0; i < doc->nkeys; i++) {
		if ((r = vep_key_fingerprint(doc->keys[i], in->keys[i])) != 0) {
			snprintf(in->why, sizeof in->why, "a key's fingerprint: %s",
			    vep_strerror(r));
			return r;
		}
	}
	/* vep_support_parse puts "public-key" first. */
	memcpy(in->current, in->keys[0], sizeof in->current);
	in->nkeys = doc->nkeys;
	qsort(in->keys, in->nkeys, sizeof in->keys[0], inst_fp_cmp);
	return 0;
}

/* Fetches and reads one instance's support document into in. */
static void
inst_read(const struct inst_args *a, const char *base, struct inst *in)
{
	struct vep_support *doc = NULL;
	char url[KT_URL_MAX], fwhy[256], *body = NULL;
	size_t len = 0;
	int r;

	memset(in, 0, sizeof *in);
	in->url = base;
	if (kt_support_url(base, a->domain, url, sizeof url) != 0) {
		snprintf(in->why, sizeof in->why, "too long a URL");
		return;
	}
	if ((r = fetch_get(url, &a->fetch, &body, &len, NULL, fwhy, sizeof fwhy)) != 0) {
		snprintf(in->why, sizeof in->why, "%s", fwhy);
		return;
	}
	if ((r = vep_support_parse(body, len, &doc)) != 0)
		snprintf(in->why, sizeof in->why, "not a support document: %s", vep_strerror(r));
	else if (inst_take_keys(in, doc) == 0)
		in->ok = 1;
	free(body);
	vep_support_free(doc);
}

/* Compares in's keys with ref's (both sorted) into d; returns 1 when they
 * differ in anything. */
static int
inst_compare(const struct inst *ref, const struct inst *in, struct inst_diff *d)
{
	size_t i = 0, j = 0;
	int c;

	memset(d, 0, sizeof *d);
	d->current = strcmp(ref->current, in->current) != 0;
	while (i < ref->nkeys || j < in->nkeys) {
		if (i == ref->nkeys)
			c = 1;
		else if (j == in->nkeys)
			c = -1;
		else
			c = strcmp(ref->keys[i], in->keys[j]);
		if (c < 0)
			d->missing[d->nmissing++] = ref->keys[i++];
		else if (c > 0)
			d->extra[d->nextra++] = in->keys[j++];
		else {
			i++;
			j++;
		}
	}
	return d->current || d->nextra > 0 || d->nmissing > 0;
}

static json_t *
inst_json_list(const char *const *fps, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr != NULL && i < n; i++) {
		if (json_array_append_new(arr, json_string(fps[i])) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* One instance: text "URL public-key=FP keys=FP,FP..." on stdout (a
 * failure "vep-keytool instances: URL: why" on stderr), or one JSON line
 * {"url","public_key","keys"} / {"url","error"}. */
static int
inst_print(const struct inst_args *a, const struct inst *in)
{
	const char *fps[INST_MAX_KEYS];
	size_t i;

	if (!in->ok)
		fprintf(stderr, "vep-keytool instances: %s: %s\n", in->url, in->why);
	if (a->json) {
		for (i = 0; i < in->nkeys; i++)
			fps[i] = in->keys[i];
		return kt_print_json(in->ok ?
		    json_pack("{s:s, s:s, s:o}", "url", in->url, "public_key", in->current,
		    "keys", inst_json_list(fps, in->nkeys)) :
		    json_pack("{s:s, s:s}", "url", in->url, "error", in->why));
	}
	if (!in->ok)
		return 0;
	printf("%s public-key=%s keys=", in->url, in->current);
	for (i = 0; i < in->nkeys; i++)
		printf("%s%s", i > 0 ? "," : "", in->keys[i]);
	putchar('\n');
	return ferror(stdout) ? VEP_ERR_IO : 0;
}

/* Text: "differs: URL from REF: public-key FP instead of FP; extra FP...;
 * missing FP..." (the parts that apply). */
static void
inst_print_diff_text(const struct inst *ref, const struct inst *in, const struct inst_diff *d)
{
	const char *sep = " ";
	size_t i;

	printf("differs: %s from %s:", in->url, ref->url);
	if (d->current) {
		printf("%spublic-key %s instead of %s", sep, in->current, ref->current);
		sep = "; ";
	}
	if (d->nextra > 0) {
		printf("%sextra", sep);
		for (i = 0; i < d->nextra; i++)
			printf(" %s", d->extra[i]);
		sep = "; ";
	}
	if (d->nmissing > 0) {
		printf("%smissing", sep);
		for (i = 0; i < d->nmissing; i++)
			printf(" %s", d->missing[i]);
	}
	putchar('\n');
}

/* The verdict when every instance was read: compares each with the first.
 * Returns KT_EXIT_OK (same), KT_EXIT_INVALID (different) or KT_EXIT_USAGE
 * (output failed). */
static int
inst_verdict(const struct inst_args *a, const struct inst *in, size_t n)
{
	struct inst_diff d;
	json_t *differ = a->json ? json_array() : NULL, *o;
	size_t i, ndiff = 0;

	if (a->json && differ == NULL)
		return KT_EXIT_USAGE;
	for (i = 1; i < n; i++) {
		if (!inst_compare(&in[0], &in[i], &d))
			continue;
		ndiff++;
		if (!a->json) {
			inst_print_diff_text(&in[0], &in[i], &d);
			continue;
		}
		o = json_pack("{s:s, s:s, s:b, s:o, s:o}", "url", in[i].url,
		    "public_key", in[i].current, "public_key_differs", d.current,
		    "extra", inst_json_list(d.extra, d.nextra),
		    "missing", inst_json_list(d.missing, d.nmissing));
		if (o == NULL || json_array_append_new(differ, o) != 0) {
			json_decref(differ);
			return KT_EXIT_USAGE;
		}
	}
	if (a->json) {
		if (kt_print_json(json_pack("{s:s, s:I, s:s, s:o}", "verdict",
		    ndiff == 0 ? "same" : "different", "instances", (json_int_t)n,
		    "reference", in[0].url, "differ", differ)) != 0)
			return KT_EXIT_USAGE;
	} else if (ndiff == 0) {
		printf("same: all %zu instances publish the same keys, public-key %s\n", n,
		    in[0].current);
	} else {
		printf("different: %zu of %zu instances publish other keys than %s\n", ndiff, n,
		    in[0].url);
	}
	if (fflush(stdout) != 0)
		return KT_EXIT_USAGE;
	return ndiff == 0 ? KT_EXIT_OK : KT_EXIT_INVALID;
}

/* The verdict when some instance could not be read: no comparison. */
static int
inst_unreadable(const struct inst_args *a, const struct inst *in, size_t n)
{
	json_t *urls = a->json ? json_array() : NULL;
	size_t i, nbad = 0;

	for (i = 0; i < n; i++) {
		if (in[i].ok)
			continue;
		nbad++;
		if (urls != NULL && json_array_append_new(urls, json_string(in[i].url)) != 0) {
			json_decref(urls);
			urls = NULL;
		}
	}
	if (a->json)
		(void)kt_print_json(json_pack("{s:s, s:I, s:o}", "verdict", "unreadable",
		    "instances", (json_int_t)n, "unreadable", urls));
	else
		printf("unreadable: %zu of %zu instances could not be read: nothing compared\n",
		    nbad, n);
	(void)fflush(stdout);
	return KT_EXIT_USAGE;
}

int
kt_cmd_instances(const struct kt_cmd *self, int argc, char **argv)
{
	struct inst_args a;
	struct inst *in;
	size_t i;
	int rc, r, all_ok = 1;

	if ((rc = inst_parse(self, argc, argv, &a)) != 0)
		return rc < 0 ? KT_EXIT_OK : rc;
	if ((in = calloc(a.nurls, sizeof *in)) == NULL) {
		kt_err("out of memory");
		return KT_EXIT_USAGE;
	}
	for (i = 0; i < a.nurls; i++) {
		inst_read(&a, a.urls[i], &in[i]);
		all_ok &= in[i].ok;
		if ((r = inst_print(&a, &in[i])) != 0) {
			kt_err("cannot print: %s", vep_strerror(r));
			rc = KT_EXIT_USAGE;
			goto out;
		}
	}
	rc = all_ok ? inst_verdict(&a, in, a.nurls) : inst_unreadable(&a, in, a.nurls);
out:
	free(in);
	return rc;
}
