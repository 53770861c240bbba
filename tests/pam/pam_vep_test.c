/*
 * pam_vep_test.c - a small real PAM module for the PAM tests, covering what
 * pam_wrapper's modules cannot: pam_matrix truncates answers at 1024 bytes,
 * so long passwords are checked here byte for byte; it can also rewrite
 * PAM_USER and crash a worker on purpose.
 *
 * Options (auth): expect=<file>  succeed iff the echo-off answer equals the
 *                                file's bytes exactly
 *                 rewrite_user=<name>  set PAM_USER to name, succeed
 *                 crash_user=<name>    abort() when PAM_USER is name, else
 *                                      PAM_IGNORE
 *                 slow_user=<name>     sleep one second when PAM_USER is
 *                                      name (a slow directory, without the
 *                                      forks of pam_exec), then PAM_IGNORE
 *                 sleep_ms=<n>         sleep n milliseconds whoever signs
 *                                      in (every attempt takes a while),
 *                                      then PAM_IGNORE
 *                 ask=<echo|noecho>:<text>:<answer>  ask one more question
 *                                      (the prompt text may hold ':'; the
 *                                      answer is after the last one; PAM
 *                                      arguments with spaces go in [...]),
 *                                      succeed iff the answer is <answer>;
 *                                      the info and error texts below go
 *                                      in the same conversation call, first
 *                                      log=<file>   append each answer the ask got, and a newline
 *                                      pidfile=<file>  write the worker's pid
 *                                      before asking
 *                 info=<text>, error=<text>  show these (without ask: with
 *                                      pam_info / pam_error, then succeed);
 *                                      times=<n> shows each n times,
 *                                      pad=<n> appends n 'x' to each, then
 *                                      tail=<text>, ctl
 *                                      appends control characters
 *                                      ("\x1b[1m\tend\n\x7f")
 *         (account) expired_user=<name>  PAM_NEW_AUTHTOK_REQD for name
 * Must never: be installed or used outside the tests and benchmarks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <security/pam_modules.h>
#include <security/pam_appl.h>
#include <security/pam_ext.h>

/* Largest expected password file, in bytes. */
#define TEST_EXPECT_MAX_BYTES 8192
/* Most texts one module line shows (times= beyond is cut). */
#define TEST_TEXTS_MAX 16
/* Longest shown text with its padding, in bytes. */
#define TEST_TEXT_MAX_BYTES 2048

static const char *
opt(int argc, const char **argv, const char *key)
{
	size_t n = strlen(key);

	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=')
			return argv[i] + n + 1;
	return NULL;
}

static int
ask(pam_handle_t *pamh, char **answer)
{
	const struct pam_conv *conv = NULL;
	struct pam_message m = { PAM_PROMPT_ECHO_OFF, "Password: " };
	const struct pam_message *mp = &m;
	struct pam_response *r = NULL;
	int rc;

	*answer = NULL;
	rc = pam_get_item(pamh, PAM_CONV, (const void **)&conv);
	if (rc != PAM_SUCCESS || conv == NULL)
		return PAM_CONV_ERR;
	rc = conv->conv(1, &mp, &r, conv->appdata_ptr);
	if (rc != PAM_SUCCESS || r == NULL || r[0].resp == NULL) {
		free(r);
		return PAM_CONV_ERR;
	}
	*answer = r[0].resp;
	free(r);
	return PAM_SUCCESS;
}

static int
check_expect(pam_handle_t *pamh, const char *path)
{
	char *want, *got = NULL;
	size_t n;
	FILE *f;
	int rc = PAM_AUTH_ERR;

	want = malloc(TEST_EXPECT_MAX_BYTES);
	f = fopen(path, "rb");
	if (want == NULL || f == NULL) {
		free(want);
		if (f)
			fclose(f);
		return PAM_AUTHINFO_UNAVAIL;
	}
	n = fread(want, 1, TEST_EXPECT_MAX_BYTES, f);
	fclose(f);
	if (ask(pamh, &got) != PAM_SUCCESS) {
		rc = PAM_CONV_ERR;
		goto out;
	}
	if (strlen(got) == n && memcmp(got, want, n) == 0)
		rc = PAM_SUCCESS;
out:
	if (got) {
		memset(got, 0, strlen(got));
		free(got);
	}
	free(want);
	return rc;
}

/* The text an info= or error= option shows, with pad= and ctl applied. */
static void
shown_text(int argc, const char **argv, const char *base, char *out, size_t cap)
{
	const char *pad = opt(argc, argv, "pad"), *tail = opt(argc, argv, "tail");
	size_t n, i;

	snprintf(out, cap, "%s", base);
	n = strlen(out);
	for (i = 0; pad != NULL && i < strtoul(pad, NULL, 10) && n + 1 < cap; i++)
		out[n++] = 'x';
	out[n] = '\0';
	if (tail != NULL)
		snprintf(out + n, cap - n, "%s", tail);
	n = strlen(out);
	for (i = 0; i < (size_t)argc; i++)
		if (strcmp(argv[i], "ctl") == 0)
			snprintf(out + n, cap - n, "\x1b[1m\tend\n\x7f");
}

/* The messages info= and error= ask for, times= each. Returns how many. */
static int
texts(int argc, const char **argv, struct pam_message *m, char (*buf)[TEST_TEXT_MAX_BYTES])
{
	const char *info = opt(argc, argv, "info"), *error = opt(argc, argv, "error");
	const char *t = opt(argc, argv, "times");
	unsigned long times = t != NULL ? strtoul(t, NULL, 10) : 1, i;
	int n = 0;

	for (i = 0; i < times && n + 2 <= TEST_TEXTS_MAX; i++) {
		if (info != NULL) {
			shown_text(argc, argv, info, buf[n], TEST_TEXT_MAX_BYTES);
			m[n].msg_style = PAM_TEXT_INFO;
			m[n].msg = buf[n];
			n++;
		}
		if (error != NULL) {
			shown_text(argc, argv, error, buf[n], TEST_TEXT_MAX_BYTES);
			m[n].msg_style = PAM_ERROR_MSG;
			m[n].msg = buf[n];
			n++;
		}
	}
	return n;
}

/* Shows the texts one by one, as pam_info and pam_error do. */
static int
show_texts(pam_handle_t *pamh, int argc, const char **argv)
{
	static char buf[TEST_TEXTS_MAX][TEST_TEXT_MAX_BYTES];
	struct pam_message m[TEST_TEXTS_MAX];
	int i, n = texts(argc, argv, m, buf);

	for (i = 0; i < n; i++) {
		int rc = m[i].msg_style == PAM_TEXT_INFO ? pam_info(pamh, "%s", m[i].msg) :
		    pam_error(pamh, "%s", m[i].msg);

		if (rc != PAM_SUCCESS)
			return PAM_CONV_ERR;
	}
	return PAM_SUCCESS;
}

static void
append_line(const char *path, const char *text)
{
	FILE *f;

	if (path == NULL || (f = fopen(path, "a")) == NULL)
		return;
	fprintf(f, "%s\n", text);
	fclose(f);
}

/* ask=<echo|noecho>:<text>:<answer>: the texts, then the question, in one
 * conversation call. */
static int
ask_more(pam_handle_t *pamh, int argc, const char **argv, const char *spec)
{
	static char buf[TEST_TEXTS_MAX][TEST_TEXT_MAX_BYTES];
	struct pam_message m[TEST_TEXTS_MAX + 1];
	const struct pam_message *mp[TEST_TEXTS_MAX + 1];
	const struct pam_conv *conv = NULL;
	struct pam_response *r = NULL;
	char prompt[TEST_TEXT_MAX_BYTES], pid[32];
	const char *colon, *want, *path;
	int i, n, rc, style;

	if (strncmp(spec, "echo:", 5) == 0) {
		style = PAM_PROMPT_ECHO_ON;
		spec += 5;
	} else if (strncmp(spec, "noecho:", 7) == 0) {
		style = PAM_PROMPT_ECHO_OFF;
		spec += 7;
	} else {
		return PAM_SERVICE_ERR;
	}
	if ((colon = strrchr(spec, ':')) == NULL)
		return PAM_SERVICE_ERR;
	want = colon + 1;
	snprintf(prompt, sizeof(prompt), "%.*s", (int)(colon - spec), spec);
	if ((path = opt(argc, argv, "pidfile")) != NULL) {
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		append_line(path, pid);
	}
	n = texts(argc, argv, m, buf);
	m[n].msg_style = style;
	m[n].msg = prompt;
	for (i = 0; i <= n; i++)
		mp[i] = &m[i];
	rc = pam_get_item(pamh, PAM_CONV, (const void **)&conv);
	if (rc != PAM_SUCCESS || conv == NULL)
		return PAM_CONV_ERR;
	rc = conv->conv(n + 1, mp, &r, conv->appdata_ptr);
	if (rc != PAM_SUCCESS || r == NULL || r[n].resp == NULL) {
		free(r);
		return PAM_CONV_ERR;
	}
	append_line(opt(argc, argv, "log"), r[n].resp);
	rc = strcmp(r[n].resp, want) == 0 ? PAM_SUCCESS : PAM_AUTH_ERR;
	for (i = 0; i <= n; i++) {
		if (r[i].resp != NULL) {
			memset(r[i].resp, 0, strlen(r[i].resp));
			free(r[i].resp);
		}
	}
	free(r);
	return rc;
}

PAM_EXTERN int
pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	const char *v, *user = NULL;

	(void)flags;
	if ((v = opt(argc, argv, "ask")) != NULL)
		return ask_more(pamh, argc, argv, v);
	if (opt(argc, argv, "info") != NULL || opt(argc, argv, "error") != NULL)
		return show_texts(pamh, argc, argv);
	if ((v = opt(argc, argv, "expect")) != NULL)
		return check_expect(pamh, v);
	if ((v = opt(argc, argv, "rewrite_user")) != NULL)
		return pam_set_item(pamh, PAM_USER, v);
	if ((v = opt(argc, argv, "slow_user")) != NULL) {
		if (pam_get_item(pamh, PAM_USER, (const void **)&user) == PAM_SUCCESS &&
		    user != NULL && strcmp(user, v) == 0)
			sleep(1);
		return PAM_IGNORE;
	}
	if ((v = opt(argc, argv, "sleep_ms")) != NULL) {
		usleep((useconds_t)strtoul(v, NULL, 10) * 1000u);
		return PAM_IGNORE;
	}
	if ((v = opt(argc, argv, "crash_user")) != NULL) {
		if (pam_get_item(pamh, PAM_USER, (const void **)&user) == PAM_SUCCESS &&
		    user != NULL && strcmp(user, v) == 0)
			abort();
		return PAM_IGNORE;
	}
	return PAM_AUTH_ERR;
}

PAM_EXTERN int
pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)pamh; (void)flags; (void)argc; (void)argv;
	return PAM_SUCCESS;
}

PAM_EXTERN int
pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	const char *v, *user = NULL;

	(void)flags;
	if ((v = opt(argc, argv, "expired_user")) != NULL &&
	    pam_get_item(pamh, PAM_USER, (const void **)&user) == PAM_SUCCESS &&
	    user != NULL && strcmp(user, v) == 0)
		return PAM_NEW_AUTHTOK_REQD;
	return PAM_SUCCESS;
}
