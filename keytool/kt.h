/*
 * kt.h - what the vep-keytool command files share: the subcommand record,
 * exit codes, the tool's limits, and small I/O helpers (io.c).
 *
 * Owns nothing but declarations. The command files never exit() and never
 * print secrets: they return an exit code to main, and private keys stay
 * inside vep_key objects.
 */
#ifndef VEP_KT_H
#define VEP_KT_H

#include <stddef.h>
#include <stdint.h>

#include "assertion.h"
#include "key.h"
#include "util.h"

/* Exit codes (documented in --help): */
enum {
	KT_EXIT_OK = 0,       /* valid / done */
	KT_EXIT_INVALID = 1,  /* the certificate or assertion is not valid */
	KT_EXIT_USAGE = 2,    /* bad usage, I/O or network failure */
};

/* Largest input read from a file or stdin (bytes): a backed assertion. */
#define KT_INPUT_MAX_BYTES VEP_BACKED_MAX_BYTES
/* Default certificate lifetime (seconds). */
#define KT_CERT_DEFAULT_DURATION_S 3600
/* Certificates are back-dated so a verifier whose clock lags accepts iat (ms). */
#define KT_CERT_BACKDATE_MS 10000
/* Default and largest assertion lifetime for sign-assertion (seconds). */
#define KT_ASSERTION_DEFAULT_DURATION_S 120
#define KT_ASSERTION_MAX_DURATION_S 3600
/* Support documents given as files with DOMAIN=FILE. */
#define KT_MAX_DOC_FILES 8
/* Network fetch: default and largest timeout (seconds). */
#define KT_FETCH_TIMEOUT_S 10
#define KT_FETCH_TIMEOUT_MAX_S 120

struct kt_cmd {
	const char *name;
	int (*run)(const struct kt_cmd *self, int argc, char **argv);
	const char *usage;    /* argument synopsis */
	const char *help;     /* full help text */
};

/* Command entry points (one file per group). Each returns a KT_EXIT_*. */
int kt_cmd_genkey(const struct kt_cmd *, int, char **);
int kt_cmd_pubkey(const struct kt_cmd *, int, char **);
int kt_cmd_init(const struct kt_cmd *, int, char **);
int kt_cmd_rotate(const struct kt_cmd *, int, char **);
int kt_cmd_prepare(const struct kt_cmd *, int, char **);
int kt_cmd_retire(const struct kt_cmd *, int, char **);
int kt_cmd_keys(const struct kt_cmd *, int, char **);
int kt_cmd_support_doc(const struct kt_cmd *, int, char **);
int kt_cmd_certify(const struct kt_cmd *, int, char **);
int kt_cmd_sign_assertion(const struct kt_cmd *, int, char **);
int kt_cmd_verify_cert(const struct kt_cmd *, int, char **);
int kt_cmd_verify_assertion(const struct kt_cmd *, int, char **);
int kt_cmd_inspect(const struct kt_cmd *, int, char **);
int kt_cmd_instances(const struct kt_cmd *, int, char **);

/* Prints "vep-keytool: <message>" to stderr. */
void kt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints a usage error for cmd and returns KT_EXIT_USAGE. */
int kt_usage_error(const struct kt_cmd *cmd, const char *fmt,
    ...) __attribute__((format(printf, 2, 3)));

/* Prints cmd's help to stdout and returns KT_EXIT_OK. */
int kt_help(const struct kt_cmd *cmd);

/* Reads a whole regular file ('-' is stdin) of at most max bytes into new
 * text (NUL-terminated, free()), trailing whitespace removed, through
 * libvep's file.h. Prints the reason on failure. Returns 0, VEP_ERR_IO,
 * VEP_ERR_TOOBIG or VEP_ERR_NOMEM. */
int kt_read_input(const char *path, size_t max, char **out, size_t *len);

/* Loads a private key file, explaining a refusal (permissions: how to fix
 * it). Returns a VEP code; the message is already printed. */
int kt_load_private(const char *path, vep_key **out);

/* Loads a public key: BrowserID key JSON, or a PEM private key file (its
 * public half). Message printed on failure. */
int kt_load_public(const char *path, vep_key **out);

/* Parses a decimal integer in [min, max]. Returns 0 or VEP_ERR_INVALID. */
int kt_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);

/* Maps a verification error to an exit code: I/O and internal failures
 * are 2, everything that says "not valid" is 1. */
int kt_verdict_exit(int err);

/* Formats ms since the epoch as ISO-8601 UTC with milliseconds. */
void kt_iso8601(int64_t ms, char out[64]);

/* Prints o as one compact line of JSON on stdout, members in the order
 * they were added. Steals o (NULL is VEP_ERR_NOMEM). Returns 0,
 * VEP_ERR_NOMEM or VEP_ERR_IO. */
int kt_print_json(json_t *o);

#endif
