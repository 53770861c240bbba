/*
 * pamhelper/helper.h - the seam inside vep-pam-helper between its supervisor loop
 * (pamhelper/helper.c: socket, workers, deadlines) and one PAM attempt
 * (pamhelper/worker.c, the only file that includes security/pam_appl.h).
 *
 * Must never: be included by the authority; nothing here links libevent,
 * SQLite or libvep.
 */
#ifndef AUTHORITY_PAMHELPER_HELPER_H
#define AUTHORITY_PAMHELPER_HELPER_H

#include <stddef.h>
#include <stdint.h>

/* Settings the helper received in its CONFIG message. */
struct pam_helper_config {
	char *service;
	uint32_t deadline_ms;   /* while PAM works */
	uint32_t answer_ms;     /* while a PROMPT waits for its ANSWER */
	uint32_t max_workers;
	uint32_t min_uid;
};

/* One attempt, as handed to a freshly forked worker. All strings are
 * NUL-terminated; password holds pwlen bytes plus a NUL and no NUL inside,
 * and is the worker's copy to wipe (it does, once PAM has it: a
 * conversation may wait minutes for a person). */
struct pam_attempt {
	const char *user;
	char *password;
	size_t pwlen;
	const char *rhost;      /* may be NULL */
};

/* Runs one PAM attempt in the current (forked) process, then exits the
 * process with _exit(); never returns. fd is the worker's end of a
 * blocking socket to the helper: every prompt beyond the password goes
 * out as a PROMPT frame {STYLE, TEXT, NOTES?} and the worker blocks for
 * the ANSWER frame {ANSWER}; the attempt ends with one RESULT frame
 * {OUTCOME, DELAY_US, NOTES?}. The worker arms its own alarm per round
 * (cfg's deadline_ms while PAM works, answer_ms while it waits, plus
 * slack), so it outlives neither a stopped helper nor an abandoned
 * question. The caller has already made the process a worker: own process
 * group, signals reset, no other descriptors open. */
void pam_worker_run(const struct pam_helper_config *cfg,
    const struct pam_attempt *a, int fd) __attribute__((noreturn));

/* Loads the service's module stack into the calling process (the helper)
 * and keeps it mapped: workers forked later find every module already
 * loaded, so their own pam_start costs no dlopen and their exit no
 * dlclose (bench figure 3: about half the CPU of an attempt). The stack is
 * still read and built afresh by every worker, so a changed /etc/pam.d
 * takes effect at the next attempt. Returns a handle for
 * pam_stack_release, or NULL when the service cannot be loaded now (the
 * workers then load it themselves and report the error). */
void *pam_stack_preload(const char *service);

/* Ends the handle of pam_stack_preload. NULL-safe. */
void pam_stack_release(void *stack);

#endif
