/*
 * auth/faildelay.h - how long to wait before answering a failed sign-in.
 *
 * Owns: the policy. Every failure (wrong password, unknown user, refused
 * account alike) is answered when target = FAILDELAY_MIN_MS + a stable
 * per-user jitter + PAM's own PAM_FAIL_DELAY request (capped) has passed
 * since the attempt began. The jitter is HMAC-SHA256(process secret, user)
 * reduced to [0, FAILDELAY_JITTER_MS): stable for one user, so repeating an
 * attempt averages nothing away, and unpredictable across users and
 * restarts. Measuring from the start of the attempt hides how long PAM took
 * (an unknown user is often answered faster by modules).
 *
 * Must never: sleep or set timers itself (the login handler arms a libevent
 * timer with the number), or log the user name.
 */
#ifndef AUTHORITY_AUTH_FAILDELAY_H
#define AUTHORITY_AUTH_FAILDELAY_H

#include <stddef.h>
#include <stdint.h>

/* Least time before a failed sign-in is answered, in milliseconds. */
#define FAILDELAY_MIN_MS 1000u
/* Width of the per-user jitter added to it, in milliseconds. */
#define FAILDELAY_JITTER_MS 500u
/* Most of PAM's PAM_FAIL_DELAY request honoured, in milliseconds: a module
 * asking for more does not get to hold connections open for minutes. */
#define FAILDELAY_PAM_MAX_MS 5000u
/* Bytes of the per-process secret keying the jitter. */
#define FAILDELAY_SECRET_BYTES 32u

struct faildelay;

/* Creates the policy with a fresh random secret. Returns 0 with *out set,
 * VEP_ERR_CRYPTO (no randomness) or VEP_ERR_NOMEM. */
int faildelay_new(struct faildelay **out);

/* Total answer time for a failure of user (NUL-terminated, as typed) when
 * PAM asked for pam_delay_us: in [FAILDELAY_MIN_MS, FAILDELAY_MIN_MS +
 * FAILDELAY_JITTER_MS + FAILDELAY_PAM_MAX_MS). */
uint32_t faildelay_target_ms(const struct faildelay *fd, const char *user,
    uint32_t pam_delay_us);

/* What is left of the target after elapsed_ms since the attempt began; 0
 * when it has passed already. This is the timer to arm. */
uint32_t faildelay_remaining_ms(const struct faildelay *fd, const char *user,
    uint32_t pam_delay_us, uint64_t elapsed_ms);

/* Wipes the secret and frees. NULL-safe. */
void faildelay_free(struct faildelay *fd);

#endif
