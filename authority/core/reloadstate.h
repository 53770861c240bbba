/*
 * core/reloadstate.h - the outcome of the last reload, for the command that
 * asked for it: `vep-authority --config FILE --reload PID` (the systemd
 * unit's ExecReload) sends SIGHUP and waits for the answer, so that
 * `systemctl reload` fails when the reload fails.
 *
 * The running authority's network process keeps STATE_DIR/reload-status,
 * one JSON object, replaced whole (temporary file, rename), mode 0600:
 *
 *   {"pid":1234,"reloads":3,"ok":false,"reason":"FILE:LINE: ..."}
 *
 * "reloads" counts SIGHUPs answered since start (0: just started). The
 * reason names files and lines, never a secret. The reader trusts nothing in
 * the file: it signals only the PID it was given, and only when the file
 * says that PID wrote it.
 */
#ifndef AUTHORITY_CORE_RELOADSTATE_H
#define AUTHORITY_CORE_RELOADSTATE_H

#include <sys/types.h>

#define RELOADSTATE_FILE "reload-status"

/* Longest reason kept (bytes, with the NUL); longer ones are cut. */
#define RELOADSTATE_REASON_MAX 1024

/* How long --reload waits for the outcome before it gives up (ms). A
 * reload reads files and self-tests keys: well under a second normally. */
#define RELOADSTATE_WAIT_MS 30000

struct reloadstate {
	long long pid;
	unsigned long long reloads;
	int ok;
	char reason[RELOADSTATE_REASON_MAX];
};

/* Replaces state_dir's status file. Returns 0 or VEP_ERR_IO / VEP_ERR_NOMEM /
 * VEP_ERR_TOOBIG (state_dir too long). */
int reloadstate_write(const char *state_dir, const struct reloadstate *st);

/* Reads state_dir's status file into *st. Returns 0, VEP_ERR_IO (absent or
 * unreadable) or VEP_ERR_INVALID (not what reloadstate_write writes). */
int reloadstate_read(const char *state_dir, struct reloadstate *st);

/* Asks the authority with process id pid, serving state_dir, to reload,
 * and waits up to wait_ms for its answer. Returns 0 when it reloaded, 1
 * when the reload failed (its reason in msg), or -1 when it could not be
 * asked or did not answer (why in msg). */
int reloadstate_request(const char *state_dir, pid_t pid, int wait_ms, char *msg,
    size_t msglen);

#endif
