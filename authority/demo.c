/*
 * demo.c - the embedded default configuration and demo-only services.
 *
 * Owns the demo state directory layout. Must never chmod a directory it did
 * not create (a careless --state /tmp must fail, not lock /tmp down) and
 * never serve anything a configured deployment would not.
 */
#include "demo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "authority.h"
#include "err.h"
#include "keydir.h"
#include "server.h"

#define DEMO_STATE_SUBDIR "vep-authority-demo"

/* mkdir -p for the parents of path (mode 0755 minus umask). */
static int
make_parents(char *path)
{
	char *p;

	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			*p = '/';
			return VEP_ERR_IO;
		}
		*p = '/';
	}
	return VEP_OK;
}

/* Creates dir with mode 0700 if missing; refuses one that is not a
 * directory, not ours, or open to group or others. */
static int
private_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
		return VEP_ERR_IO;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", dir);
		return VEP_ERR_IO;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		snprintf(err, errlen, "%s: must be a private directory owned by this user "
		    "(mode 0700)", dir);
		return VEP_ERR_PERM;
	}
	return VEP_OK;
}

/* The state directory as an absolute path (new text, NULL when there is no
 * way to tell or no memory). */
static char *
state_path(const char *state_dir)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char cwd[4096], *p = NULL;
	int n = -1;

	if (state_dir != NULL && state_dir[0] == '/')
		return strdup(state_dir);
	if (state_dir != NULL) {
		if (getcwd(cwd, sizeof(cwd)) != NULL)
			n = asprintf(&p, "%s/%s", cwd, state_dir);
	} else if (xdg != NULL && xdg[0] == '/') {
		n = asprintf(&p, "%s/%s", xdg, DEMO_STATE_SUBDIR);
	} else if (home != NULL && home[0] == '/') {
		n = asprintf(&p, "%s/.local/state/%s", home, DEMO_STATE_SUBDIR);
	}
	return n < 0 ? NULL : p;
}

int
demo_config(const char *state_dir, struct config **out, char *err, size_t errlen)
{
	struct config *cfg = NULL;
	char *state = NULL, *keys = NULL, *kdir = NULL, msg[256];
	int rc = VEP_ERR_NOMEM, created = 0;

	*out = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if ((state = state_path(state_dir)) == NULL) {
		snprintf(err, errlen, "demo: no state directory (set HOME or use --state DIR)");
		rc = VEP_ERR_INVALID;
		goto out;
	}
	if ((rc = make_parents(state)) != 0) {
		snprintf(err, errlen, "%s: cannot create parent directories: %s", state,
		    strerror(errno));
		goto out;
	}
	if ((rc = private_dir(state, err, errlen)) != 0)
		goto out;
	rc = VEP_ERR_NOMEM;
	if (asprintf(&keys, "%s/keys", state) < 0) {
		keys = NULL;
		goto out;
	}
	if ((rc = private_dir(keys, err, errlen)) != 0)
		goto out;
	rc = VEP_ERR_NOMEM;
	if (asprintf(&kdir, "%s/%s", keys, DEMO_DOMAIN) < 0) {
		kdir = NULL;
		goto out;
	}
	if ((rc = vep_keydir_ensure(kdir, &created)) != 0) {
		snprintf(err, errlen, "%s: cannot create the demo key: %s", kdir, vep_strerror(rc));
		goto out;
	}
	rc = VEP_ERR_NOMEM;
	if ((cfg = config_new()) == NULL)
		goto out;
	if ((rc = config_set(cfg, "demo", "state_dir", state, msg, sizeof(msg))) != 0 ||
	    (rc = config_add_domain(cfg, DEMO_DOMAIN, kdir)) != 0) {
		snprintf(err, errlen, "demo: %s", rc == VEP_ERR_NOMEM ? "out of memory" : msg);
		goto out;
	}
	*out = cfg;
	cfg = NULL;
	rc = VEP_OK;
out:
	if (rc == VEP_ERR_NOMEM && errlen > 0 && err[0] == '\0')
		snprintf(err, errlen, "demo: out of memory");
	config_free(cfg);
	free(state);
	free(keys);
	free(kdir);
	return rc;
}

int
demo_start(struct authority *a)
{
	/* Hook: the demo PAM stack (pam_wrapper + pam_matrix with a demo
	 * user) starts here once the PAM work lands, so signing in works
	 * without touching the system's PAM. */
	log_info(&a->log, "demo: serving %s from %s; try http://%s/.well-known/browserid",
	    DEMO_DOMAIN, a->cfg->state_dir, server_address(a->server));
	return VEP_OK;
}

void
demo_stop(struct authority *a)
{
	(void)a;
}
