/*
 * cmd_inspect.c - inspect: decodes a certificate, an assertion or a backed
 * assertion for a human reader.
 *
 * Owns the human-readable layout only. Must never claim validity: it
 * checks no signature, time or issuer, and says so.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "jws.h"
#include "key.h"
#include "kt.h"

/* Most JWS parts in a backed assertion we will decode for display. */
#define KT_INSPECT_MAX_PARTS 8

/* Payload members shown as times, with labels. */
static const struct {
	const char *member;
	const char *label;
} kt_time_members[] = {
	{ "iat", "issued at" },
	{ "exp", "expires" },
	{ "nbf", "not before" },
};

static void
kt_print_indented(const char *text, const char *indent)
{
	const char *line = text, *nl;

	while (*line != '\0') {
		nl = strchr(line, '\n');
		if (nl == NULL) {
			printf("%s%s\n", indent, line);
			break;
		}
		printf("%s%.*s\n", indent, (int)(nl - line), line);
		line = nl + 1;
	}
}

static void
kt_print_times(const json_t *payload)
{
	const json_t *v;
	char iso[64];
	size_t i;

	for (i = 0; i < sizeof kt_time_members / sizeof kt_time_members[0]; i++) {
		v = json_object_get(payload, kt_time_members[i].member);
		if (v == NULL || !json_is_number(v))
			continue;
		kt_iso8601((int64_t)json_number_value(v), iso);
		printf("  %-11s %s\n", kt_time_members[i].label, iso);
	}
}

static void
kt_print_pubkey(const json_t *payload)
{
	const json_t *pk = json_object_get(payload, "public-key");
	vep_key *k = NULL;
	char fp[VEP_FINGERPRINT_BUFSZ];
	int r;

	if (pk == NULL)
		return;
	if ((r = vep_key_from_json(pk, &k)) != 0) {
		printf("  public key  unusable: %s\n", vep_strerror(r));
		return;
	}
	if (vep_key_fingerprint(k, fp) == 0)
		printf("  public key  %s, fingerprint %s\n", vep_key_alg(k)->name, fp);
	vep_key_free(k);
}

static int
kt_inspect_part(const char *label, const char *text, size_t len)
{
	vep_jws *jws = NULL;
	char *h = NULL, *p = NULL;
	int r;

	printf("%s:\n", label);
	if ((r = vep_jws_parse(text, len, &jws)) != 0) {
		printf("  cannot decode: %s\n", vep_strerror(r));
		return r;
	}
	h = json_dumps(jws->header, JSON_COMPACT | JSON_PRESERVE_ORDER);
	p = json_dumps(jws->payload, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (h == NULL || p == NULL) {
		r = VEP_ERR_NOMEM;
		goto out;
	}
	printf("  header      %s\n", h);
	printf("  algorithm   %s\n", jws->alg->name);
	printf("  payload\n");
	kt_print_indented(p, "    ");
	kt_print_times(jws->payload);
	kt_print_pubkey(jws->payload);
	printf("  signature   %zu bytes\n", jws->sig_len);
	r = 0;
out:
	free(h);
	free(p);
	vep_jws_free(jws);
	return r;
}

int
kt_cmd_inspect(const struct kt_cmd *self, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *parts[KT_INSPECT_MAX_PARTS];
	size_t lens[KT_INSPECT_MAX_PARTS], nparts = 0, len = 0, i;
	char *text = NULL, *cur, *tilde;
	char label[32];
	int c, failed = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h')
			return kt_help(self);
		return kt_usage_error(self, "bad option");
	}
	if (optind + 1 != argc)
		return kt_usage_error(self, "exactly one FILE (or '-') is required");
	if (kt_read_input(argv[optind], KT_INPUT_MAX_BYTES, &text, &len) != 0)
		return KT_EXIT_USAGE;
	for (cur = text; ; cur = tilde + 1) {
		if (nparts == KT_INSPECT_MAX_PARTS) {
			kt_err("more than %d parts", KT_INSPECT_MAX_PARTS);
			free(text);
			return KT_EXIT_INVALID;
		}
		tilde = strchr(cur, '~');
		parts[nparts] = cur;
		lens[nparts] = tilde != NULL ? (size_t)(tilde - cur) : strlen(cur);
		nparts++;
		if (tilde == NULL)
			break;
	}
	printf("(decoded only: nothing here has been verified)\n");
	for (i = 0; i < nparts; i++) {
		if (nparts == 1)
			snprintf(label, sizeof label, "token");
		else if (i + 1 == nparts)
			snprintf(label, sizeof label, "assertion");
		else
			snprintf(label, sizeof label, "certificate %zu", i + 1);
		if (kt_inspect_part(label, parts[i], lens[i]) != 0)
			failed = 1;
	}
	free(text);
	return failed ? KT_EXIT_INVALID : KT_EXIT_OK;
}
