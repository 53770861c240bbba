/*
 * demo/demo.c - the embedded default configuration and demo-only services.
 *
 * Owns the demo state directory layout. Must never chmod a directory it did
 * not create (a careless --state /tmp must fail, not lock /tmp down) and
 * never serve anything a configured deployment would not.
 */
#include "demo/demo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/shared.h"
#include "server/loop.h"
#include "demo/rp.h"
#include "err.h"
#include "keydir.h"
#include "edge/listener.h"

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
demo_config(const char *state_dir, int make_key, struct config **out, char *err, size_t errlen)
{
	struct config *cfg = NULL;
	char *state = NULL, *keys = NULL, *kdir = NULL, msg[256];
	int rc = VEP_ERR_NOMEM;

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
	/* Only the key process may read or write the key (keyproc/keeper.h). */
	if (make_key && (rc = vep_keydir_ensure(kdir, NULL)) != 0) {
		snprintf(err, errlen, "%s: cannot create the demo key: %s", kdir, vep_strerror(rc));
		goto out;
	}
	rc = VEP_ERR_NOMEM;
	if ((cfg = config_new()) == NULL)
		goto out;
	/* pam_matrix accounts have no UID; the demo's one account is not a
	 * system account. */
	if ((rc = config_set(cfg, "demo", "state_dir", state, msg, sizeof(msg))) != 0 ||
	    (rc = config_set(cfg, "demo", "pam_min_uid", "0", msg, sizeof(msg))) != 0 ||
	    (rc = config_set(cfg, "demo", "embed_origins", DEMO_WEBMAIL_ORIGIN, msg,
	    sizeof(msg))) != 0 ||
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

/* Where Debian installs libpam-wrapper, by architecture. */
static const char *const wrapper_dirs[] = {
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib/i386-linux-gnu",
	"/usr/lib/arm-linux-gnueabihf", "/usr/lib/powerpc64le-linux-gnu",
	"/usr/lib/s390x-linux-gnu", "/usr/lib64", "/usr/lib",
};

/* Writes text to path (created or truncated, mode, never through a
 * symlink). */
static int
write_text(const char *path, const char *text, mode_t mode)
{
	size_t len = strlen(text), off = 0;
	ssize_t n;
	int fd, rc = VEP_OK;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return VEP_ERR_IO;
	while (off < len && (n = write(fd, text + off, len - off)) > 0)
		off += (size_t)n;
	if (off != len || fchmod(fd, mode) != 0)
		rc = VEP_ERR_IO;
	if (close(fd) != 0)
		rc = VEP_ERR_IO;
	return rc;
}

void
demo_pam_env_free(char **env)
{
	size_t i;

	for (i = 0; env != NULL && env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

/* The helper's environment: pam_wrapper preloaded, pointed at dir. Deep
 * binding is off because it breaks under AddressSanitizer. */
static int
pam_env(const char *libdir, const char *dir, char ***out)
{
	char **env = calloc(6, sizeof(*env));

	*out = NULL;
	if (env == NULL ||
	    asprintf(&env[0], "LD_PRELOAD=%s/libpam_wrapper.so", libdir) < 0 ||
	    (env[1] = strdup("PAM_WRAPPER=1")) == NULL ||
	    asprintf(&env[2], "PAM_WRAPPER_SERVICE_DIR=%s", dir) < 0 ||
	    (env[3] = strdup("PAM_WRAPPER_DISABLE_DEEPBIND=1")) == NULL ||
	    (env[4] = strdup("UID_WRAPPER_DISABLE_DEEPBIND=1")) == NULL) {
		/* asprintf leaves its pointer undefined on failure */
		demo_pam_env_free(env);
		return VEP_ERR_NOMEM;
	}
	*out = env;
	return VEP_OK;
}

int
demo_pam_setup(const char *state_dir, const char *service, char ***env_out, char *err,
    size_t errlen)
{
	char lib[512], *dir = NULL, *path = NULL, *text = NULL;
	const char *libdir = NULL;
	size_t i;
	int rc = VEP_ERR_NOMEM;

	*env_out = NULL;
	for (i = 0; i < sizeof(wrapper_dirs) / sizeof(wrapper_dirs[0]) && libdir == NULL; i++) {
		snprintf(lib, sizeof(lib), "%s/pam_wrapper/pam_matrix.so", wrapper_dirs[i]);
		if (access(lib, R_OK) == 0)
			libdir = wrapper_dirs[i];
	}
	if (libdir == NULL) {
		snprintf(err, errlen, "demo: pam_wrapper not found: install the Debian package "
		    "libpam-wrapper (the demo's sign-in runs on it)");
		return VEP_ERR_IO;
	}
	if (asprintf(&dir, "%s/pam", state_dir) < 0) {
		dir = NULL;
		goto out;
	}
	if ((rc = private_dir(dir, err, errlen)) != 0)
		goto out;
	rc = VEP_ERR_NOMEM;
	if (asprintf(&path, "%s/passdb", dir) < 0 ||
	    asprintf(&text, "%s:%s:%s\n", DEMO_USER, DEMO_PASSWORD, service) < 0) {
		path = text = NULL;
		goto out;
	}
	if ((rc = write_text(path, text, 0600)) != 0)
		goto io;
	free(path);
	free(text);
	path = text = NULL;
	rc = VEP_ERR_NOMEM;
	if (asprintf(&path, "%s/%s", dir, service) < 0 ||
	    asprintf(&text, "auth required %s passdb=%s/passdb\n"
	    "account required %s passdb=%s/passdb\n", lib, dir, lib, dir) < 0) {
		path = text = NULL;
		goto out;
	}
	if ((rc = write_text(path, text, 0600)) != 0)
		goto io;
	rc = pam_env(libdir, dir, env_out);
	goto out;
io:
	snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
out:
	if (rc == VEP_ERR_NOMEM)
		snprintf(err, errlen, "demo: out of memory");
	free(dir);
	free(path);
	free(text);
	return rc;
}

/* The relying party's address: the next port after the authority's, or a
 * free one when the authority's was picked freely (port 0). */
static void
rp_listen(const struct authority *a, char *out, size_t outlen)
{
	char host[64];
	unsigned port = 0;

	if (config_parse_listen(a->cfg->listen, host, sizeof(host), &port) != 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	snprintf(out, outlen, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host,
	    port == 0 || port == 65535 ? 0 : port + 1);
}

/* 1 when origin is one of the space-separated list's. */
static int
listed(const char *list, const char *origin)
{
	size_t n = strlen(origin);
	const char *p;

	for (p = list; p != NULL && (p = strstr(p, origin)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return 1;
	return 0;
}

int
demo_start(struct authority *a)
{
	char listen[96], err[256], site[SERVER_ADDR_BUFSZ + 16];
	int rc;

	rp_listen(a, listen, sizeof(listen));
	if ((rc = demo_rp_start(a, listen, err, sizeof(err))) != 0) {
		log_error(&a->log, "%s", err);
		return rc;
	}
	/* The webmail may frame /embed only from an origin in embed_origins,
	 * which is configuration, fixed before the demo website has a port. */
	demo_rp_origin(a, site, sizeof(site));
	if (!listed(authority_cfg(a)->embed_origins, site))
		log_warn(&a->log, "demo: the demo webmail at %s/webmail cannot set up the browser: "
		    "its origin is not in embed_origins (start with --set embed_origins=%s)",
		    site, site);
	log_info(&a->log, "demo: serving %s from %s; sign in at http://%s/ as %s@%s with "
	    "password %s; a demo website is at http://%s/", DEMO_DOMAIN, a->cfg->state_dir,
	    server_address(a->loops[0]->server), DEMO_USER, DEMO_DOMAIN, DEMO_PASSWORD,
	    server_address(a->demo_rp));
	return VEP_OK;
}

void
demo_stop(struct authority *a)
{
	demo_rp_stop(a);
}
