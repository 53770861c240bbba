/*
 * io.c - vep-keytool's shared helpers: messages, bounded input, key
 * loading with explanations, number parsing and the verdict -> exit code
 * table.
 *
 * Owns the wording of errors an administrator sees. Must never print key
 * material or read more than the caller's cap.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "file.h"
#include "key.h"
#include "kt.h"
#include "secmem.h"

void
kt_err(const char *fmt, ...)
{
	va_list ap;

	fputs("vep-keytool: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int
kt_usage_error(const struct kt_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vep-keytool %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: vep-keytool %s %s\n(try 'vep-keytool %s --help')\n",
	    cmd->name, cmd->usage, cmd->name);
	return KT_EXIT_USAGE;
}

int
kt_help(const struct kt_cmd *cmd)
{
	printf("usage: vep-keytool %s %s\n\n%s", cmd->name, cmd->usage, cmd->help);
	return KT_EXIT_OK;
}

int
kt_read_input(const char *path, size_t max, char **out, size_t *len)
{
	int r;

	if (strcmp(path, "-") == 0)
		r = vep_file_read_fd(STDIN_FILENO, max, out, len);
	else
		r = vep_file_read(path, max, 0, out, len);
	if (r == VEP_ERR_TOOBIG)
		kt_err("%s: larger than %zu bytes", path, max);
	else if (r == VEP_ERR_INVALID)
		kt_err("%s: not a regular file", path);
	else if (r == VEP_ERR_IO)
		kt_err("%s: %s", path, strerror(errno));
	if (r == VEP_ERR_INVALID)
		r = VEP_ERR_IO;
	if (r != 0)
		return r;
	/* May hold a private key (kt_load_public): the text shrinks in place. */
	while (*len > 0 && ((*out)[*len - 1] == '\n' || (*out)[*len - 1] == '\r' ||
	    (*out)[*len - 1] == ' ' || (*out)[*len - 1] == '\t'))
		(*out)[--*len] = '\0';
	return 0;
}

int
kt_load_private(const char *path, vep_key **out)
{
	int r;

	*out = NULL;
	r = vep_key_load_private(path, out);
	switch (r) {
	case 0:
		break;
	case VEP_ERR_PERM:
		kt_err("%s: private key file is accessible by group or others; "
		    "fix it with: chmod 600 %s", path, path);
		break;
	case VEP_ERR_IO:
		kt_err("%s: cannot read private key", path);
		break;
	default:
		kt_err("%s: %s", path, vep_strerror(r));
		break;
	}
	return r;
}

int
kt_load_public(const char *path, vep_key **out)
{
	char *text = NULL;
	size_t len = 0, i;
	vep_key *priv = NULL;
	int r;

	*out = NULL;
	if ((r = kt_read_input(path, KT_INPUT_MAX_BYTES, &text, &len)) != 0)
		goto out;
	for (i = 0; i < len && (text[i] == ' ' || text[i] == '\n' ||
	    text[i] == '\r' || text[i] == '\t'); i++)
		;
	if (i < len && text[i] == '{') {
		if ((r = vep_key_from_json_text(text + i, len - i, out)) != 0)
			kt_err("%s: not a usable public key: %s", path, vep_strerror(r));
		goto out;
	}
	/* Not JSON: a PEM private key file, with its permission rules. */
	if (strcmp(path, "-") == 0) {
		kt_err("stdin: expected public key JSON");
		r = VEP_ERR_INVALID;
		goto out;
	}
	if ((r = kt_load_private(path, &priv)) != 0)
		goto out;
	r = vep_key_public_copy(priv, out);
out:
	vep_key_free(priv);
	if (text != NULL)
		vep_free_secret_str(text) /* may have held a PEM private key */;
	return r;
}

int
kt_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end = NULL;
	long long v;

	*out = 0;
	if (s == NULL || *s == '\0')
		return VEP_ERR_INVALID;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return VEP_ERR_INVALID;
	*out = (int64_t)v;
	return 0;
}

/* Errors that mean "could not find out", not "found it invalid". */
static const int kt_io_errors[] = {
	VEP_ERR_NOMEM, VEP_ERR_IO, VEP_ERR_CRYPTO, VEP_ERR_ARG,
};

int
kt_verdict_exit(int err)
{
	size_t i;

	if (err == 0)
		return KT_EXIT_OK;
	for (i = 0; i < sizeof kt_io_errors / sizeof kt_io_errors[0]; i++)
		if (kt_io_errors[i] == err)
			return KT_EXIT_USAGE;
	return KT_EXIT_INVALID;
}

void
kt_iso8601(int64_t ms, char out[64])
{
	struct tm tm;
	time_t t;
	int64_t frac;

	frac = ms % 1000;
	if (frac < 0)
		frac += 1000;
	t = (time_t)((ms - frac) / 1000);
	if (gmtime_r(&t, &tm) == NULL) {
		snprintf(out, 64, "(out of range)");
		return;
	}
	snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)frac);
}

int
kt_print_json(json_t *o)
{
	char *text;
	int ret;

	if (o == NULL)
		return VEP_ERR_NOMEM;
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (text == NULL)
		return VEP_ERR_NOMEM;
	ret = puts(text) < 0 ? VEP_ERR_IO : VEP_OK;
	free(text);
	return ret;
}
