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
 * Must never: be installed or used outside the tests and benchmarks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <security/pam_modules.h>
#include <security/pam_appl.h>

/* Largest expected password file, in bytes. */
#define TEST_EXPECT_MAX_BYTES 8192

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

PAM_EXTERN int
pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	const char *v, *user = NULL;

	(void)flags;
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
	(void)pamh; (void)flags; (void)argc; (void)argv;
	return PAM_SUCCESS;
}
