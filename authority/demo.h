/*
 * demo.h - "vep-authority --demo": a working authority with nothing to
 * configure. A private state directory (default
 * $XDG_STATE_HOME/vep-authority-demo, i.e. ~/.local/state/vep-authority-demo,
 * or --state DIR) holds keys/example.test/ with a generated RSA-2048 key, and
 * the one served domain is example.test.
 *
 * Owns the demo's defaults and the hook where demo-only services start
 * (the demo PAM stack, once the PAM work lands). Must never be reachable
 * without --demo, and never weakens a permission check: the state directory
 * must be private (0700), or the demo refuses to start.
 */
#ifndef AUTHORITY_DEMO_H
#define AUTHORITY_DEMO_H

#include <stddef.h>

#include "config.h"

struct authority;

/* The domain the demo serves. */
#define DEMO_DOMAIN "example.test"

/* Builds the demo configuration. state_dir may be NULL (the default above)
 * or relative (to the working directory). Creates the state directory
 * (0700; parents with the umask), DIR/keys (0700) and the domain key when
 * missing. Refuses a state directory that group or others can access
 * (VEP_ERR_PERM). On error writes a message to err and returns VEP_ERR_*. */
int demo_config(const char *state_dir, struct config **out, char *err, size_t errlen);

/* Starts demo-only services after the server is listening. Hook for the
 * demo PAM stack (pam_wrapper with a demo user); today it only logs how to
 * use the demo. Returns 0 or VEP_ERR_*. */
int demo_start(struct authority *a);

/* Stops what demo_start started. NULL-safe on a not-started demo. */
void demo_stop(struct authority *a);

#endif
