/*
 * demo/demo.h - "vep-authority --demo": a working authority with nothing to
 * configure. A private state directory (default
 * $XDG_STATE_HOME/vep-authority-demo, i.e. ~/.local/state/vep-authority-demo,
 * or --state DIR) holds keys/example.test/ with a generated RSA-2048 key, and
 * the one served domain is example.test.
 *
 * Sign-in works with a demo account, DEMO_USER@example.test with password
 * DEMO_PASSWORD, without touching the system's PAM: the PAM helper runs
 * under cwrap's pam_wrapper (Debian libpam-wrapper), whose pam_matrix
 * module checks a password file in the state directory.
 *
 * Owns the demo's defaults and its PAM stack. Must never be reachable
 * without --demo, and never weakens a permission check: the state directory
 * must be private (0700), or the demo refuses to start.
 */
#ifndef AUTHORITY_DEMO_DEMO_H
#define AUTHORITY_DEMO_DEMO_H

#include <stddef.h>

#include "core/config.h"

struct authority;

/* The domain the demo serves, and its one account. */
#define DEMO_DOMAIN "example.test"
#define DEMO_USER "alice"
#define DEMO_PASSWORD "wonderland"

/* The demo's embed_origins: its website (whose /webmail frames /embed) at
 * the port after the default listen's. Another --listen needs --set
 * embed_origins=http://ADDR:PORT+1 (scripts/demo passes it; demo_start
 * says so in the log when they disagree). */
#define DEMO_WEBMAIL_ORIGIN "http://127.0.0.1:8081"

/* Builds the demo configuration. state_dir may be NULL (the default above)
 * or relative (to the working directory). Creates the state directory
 * (0700; parents with the umask), DIR/keys (0700) and, when make_key is 1
 * (the key process only), the domain key when missing. Refuses a state
 * directory that group or others can access (VEP_ERR_PERM). On error
 * writes a message to err and returns VEP_ERR_*. */
int demo_config(const char *state_dir, int make_key, struct config **out, char *err,
    size_t errlen);

/* Writes the demo PAM stack under STATE/pam (0700), rewritten at every
 * start: a pam_wrapper service file named service using pam_matrix for
 * auth and account, and its password file (0600) with the demo account.
 * *env_out gets a new NULL-terminated environment for the PAM helper
 * (LD_PRELOAD of libpam_wrapper.so and its settings; free with
 * demo_pam_env_free). Returns 0, or VEP_ERR_IO with a message in err (e.g.
 * libpam-wrapper not installed), VEP_ERR_NOMEM. */
int demo_pam_setup(const char *state_dir, const char *service, char ***env_out,
    char *err, size_t errlen);

/* Frees what demo_pam_setup returned. NULL-safe. */
void demo_pam_env_free(char **env);

/* Starts the demo relying party (demo/rp.h) on the port after the
 * authority's (a free one when that was 0) and logs how to use the demo.
 * Returns 0 or VEP_ERR_*. */
int demo_start(struct authority *a);

/* Stops what demo_start started. NULL-safe on a not-started demo. */
void demo_stop(struct authority *a);

#endif
