/*
 * auth/pam_spawn.h - starting and ending vep-pam-helper processes.
 *
 * The key process starts one helper per loop channel (keyproc/keeper.c) and
 * hands its socket to the loop's pam_client (auth/pam_client.h), which never
 * forks, signals or reaps it. A struct pam_spawn is that per-channel duty:
 * the helper it started last, ended (killed if need be, and reaped) before
 * the next one starts and when the channel closes. The PAM tests start their
 * helpers through the same struct.
 *
 * Must never: leave a helper unreaped, or give a helper a descriptor other
 * than its socket and /dev/null.
 */
#ifndef AUTHORITY_AUTH_PAM_SPAWN_H
#define AUTHORITY_AUTH_PAM_SPAWN_H

#include <stdint.h>
#include <sys/types.h>

/* How long a helper whose socket closed may take to end by itself (it kills
 * its workers and exits; pam_wrapper and friends clean up in their
 * destructors) before SIGKILL, in milliseconds. */
#define PAM_SPAWN_STOP_GRACE_MS 1000u

/* One channel's helper. helper_path and extra_env are borrowed and must
 * outlive it; pid is the running helper's, 0 when none. Zero-initialise,
 * then set helper_path (and extra_env). */
struct pam_spawn {
	const char *helper_path;        /* vep-pam-helper to run */
	const char *const *extra_env;   /* NULL-terminated "NAME=value"; may be NULL */
	pid_t pid;
};

/* The helper's path: where `meson install` puts it (libexecdir, found
 * relative to the running executable), else vep-pam-helper next to the
 * running executable (the build tree); when neither exists, the installed
 * path. New string (free()), or NULL. */
char *pam_spawn_default_path(void);

/* pam_client_config's spawn function (arg: a struct pam_spawn *): ends the
 * previous helper at once (its client asks again only after it saw that
 * one's socket close or misbehave), then forks and execs helper_path with
 * our environment plus extra_env, its end of a new socketpair on
 * PAMP_HELPER_FD, no other descriptor, default signal dispositions and
 * PR_SET_PDEATHSIG SIGKILL (tied to the calling thread). Returns 0 with *fd
 * (ours to pass on or close) and *pid, or VEP_ERR_IO (helper_path not
 * executable, no socket or process) / VEP_ERR_NOMEM. */
int pam_spawn_next(void *arg, int *fd, pid_t *pid);

/* Ends the running helper, if any: its socket must already be closed
 * everywhere (EOF makes it kill its workers and exit); it gets grace_ms,
 * then SIGKILL (its workers follow through PR_SET_PDEATHSIG). Reaps it.
 * Blocks: for the key process and tests, never an event loop. */
void pam_spawn_end(struct pam_spawn *sp, uint32_t grace_ms);

#endif
