/*
 * auth/pam_spawn.c - starting and ending vep-pam-helper processes (contract
 * in auth/pam_spawn.h).
 *
 * Owns the fork and exec of the helper and its reaping. Between fork and
 * execve the child calls only async-signal-safe functions: its environment
 * is built before the fork.
 */
#include "auth/pam_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "pamhelper/proto.h"

/* File name of the helper. */
#define PAM_SPAWN_HELPER_NAME "vep-pam-helper"
/* Where `meson install` puts the helper, relative to the directory of the
 * installed vep-authority (so a DESTDIR or relocated tree works too), or
 * absolute; set by the build from bindir and libexecdir. */
#ifndef VEP_PAM_HELPER_DIR
#error "VEP_PAM_HELPER_DIR must be set by the build (authority/meson.build)"
#endif
/* Longest path of the running executable we resolve, in bytes (Linux's
 * PATH_MAX). */
#define PAM_SPAWN_EXE_PATH_MAX 4096
/* How often pam_spawn_end looks whether the helper has ended, in
 * milliseconds. */
#define PAM_SPAWN_STOP_POLL_MS 10u

extern char **environ;

static int
env_overridden(const char *const *extra_env, const char *entry)
{
	size_t i, n;

	for (i = 0; extra_env && extra_env[i]; i++) {
		n = strcspn(extra_env[i], "=");
		if (strncmp(entry, extra_env[i], n) == 0 && entry[n] == '=')
			return 1;
	}
	return 0;
}

/* The helper's environment: ours minus names in extra_env, plus extra_env.
 * Strings are borrowed; only the array is new. Built before fork() because
 * the child may only call async-signal-safe functions. */
static char **
build_env(const char *const *extra_env)
{
	size_t n = 0, i, k = 0;
	char **env;

	for (i = 0; environ && environ[i]; i++)
		n++;
	for (i = 0; extra_env && extra_env[i]; i++)
		n++;
	env = calloc(n + 1, sizeof(*env));
	if (env == NULL)
		return NULL;
	for (i = 0; environ && environ[i]; i++)
		if (!env_overridden(extra_env, environ[i]))
			env[k++] = environ[i];
	for (i = 0; extra_env && extra_env[i]; i++)
		env[k++] = (char *)extra_env[i];
	env[k] = NULL;
	return env;
}

/* Forks and execs path (see pam_spawn_next); the caller reaps. */
static int
exec_helper(const char *path, const char *const *extra_env, int *fd,
    pid_t *out_pid)
{
	char *const argv[] = { (char *)PAM_SPAWN_HELPER_NAME, NULL };
	char **env = NULL;
	int sv[2] = { -1, -1 }, devnull = -1;
	pid_t pid;
	int rc = VEP_ERR_IO;

	*fd = -1;
	*out_pid = 0;
	env = build_env(extra_env);
	if (env == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		goto out;
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0)
		goto out;
	pid = fork();
	if (pid < 0)
		goto out;
	if (pid == 0) {
		sigset_t none;

		/* Async-signal-safe calls only from here to execve. */
		dup2(devnull, STDIN_FILENO);
		if (sv[1] == PAMP_HELPER_FD)
			fcntl(sv[1], F_SETFD, 0);
		else
			dup2(sv[1], PAMP_HELPER_FD);
		/* Everything else is the authority's (listening sockets, the
		 * database): the helper gets none of it, CLOEXEC or not. */
		close_range(PAMP_HELPER_FD + 1, ~0u, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execve(path, argv, env);
		_exit(127);
	}
	*fd = sv[0];
	sv[0] = -1;
	*out_pid = pid;
	rc = VEP_OK;
out:
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	if (devnull >= 0)
		close(devnull);
	free(env);
	return rc;
}

/* dir (absolute, or relative to exe_dir, which it may shorten) + "/"
 * PAM_SPAWN_HELPER_NAME, or NULL when out of memory. A leading "../" is
 * taken off exe_dir (a resolved path, no links) so that messages name
 * /usr/libexec/..., not /usr/bin/../libexec/.... */
static char *
helper_in(char *exe_dir, const char *dir)
{
	char *path, *slash;

	while (strncmp(dir, "../", 3) == 0 && (slash = strrchr(exe_dir, '/')) != NULL &&
	    slash != exe_dir) {
		*slash = '\0';
		dir += 3;
	}
	if (dir[0] == '/')
		return asprintf(&path, "%s/%s", dir, PAM_SPAWN_HELPER_NAME) < 0 ? NULL : path;
	if (dir[0] == '\0')
		return asprintf(&path, "%s/%s", exe_dir, PAM_SPAWN_HELPER_NAME) < 0 ? NULL : path;
	return asprintf(&path, "%s/%s/%s", exe_dir, dir, PAM_SPAWN_HELPER_NAME) < 0 ? NULL : path;
}

/* The installed place first; next to the executable is the build tree's
 * layout (and an old install's). When neither is there, the installed
 * place, so that the error names where the helper belongs. */
char *
pam_spawn_default_path(void)
{
	char exe[PAM_SPAWN_EXE_PATH_MAX];
	char *slash, *installed, *beside;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash == NULL)
		return NULL;
	*slash = '\0';
	if ((beside = helper_in(exe, "")) == NULL ||
	    (installed = helper_in(exe, VEP_PAM_HELPER_DIR)) == NULL) {
		free(beside);
		return NULL;
	}
	if (access(installed, X_OK) == 0) {
		free(beside);
		return installed;
	}
	if (access(beside, X_OK) == 0) {
		free(installed);
		return beside;
	}
	free(beside);
	return installed;
}

int
pam_spawn_next(void *arg, int *fd, pid_t *pid)
{
	struct pam_spawn *sp = arg;
	int rc;

	*fd = -1;
	*pid = 0;
	pam_spawn_end(sp, 0);
	/* A missing helper is an error here, not a child that exits 127. */
	if (sp->helper_path == NULL || access(sp->helper_path, X_OK) != 0)
		return VEP_ERR_IO;
	rc = exec_helper(sp->helper_path, sp->extra_env, fd, pid);
	if (rc == VEP_OK)
		sp->pid = *pid;
	return rc;
}

void
pam_spawn_end(struct pam_spawn *sp, uint32_t grace_ms)
{
	const struct timespec step = { 0, PAM_SPAWN_STOP_POLL_MS * 1000 * 1000 };
	uint32_t waited_ms = 0;
	pid_t pid = sp->pid;

	if (pid == 0)
		return;
	sp->pid = 0;
	while (waitpid(pid, NULL, WNOHANG) == 0) {
		if (waited_ms >= grace_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return;
		}
		nanosleep(&step, NULL);
		waited_ms += PAM_SPAWN_STOP_POLL_MS;
	}
}
