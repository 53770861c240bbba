/*
 * services.h - what sign-in and issuance need besides the HTTP server: the
 * state database, the PAM client (and its helper process), the failure
 * delay policy and the housekeeping timer.
 *
 * Owns the order in which they start and stop, and the housekeeping timer
 * (dead sessions and ended throttle windows are deleted in bounded steps).
 * Must never be started before the configuration and domains are loaded,
 * nor stopped while the event loop still runs.
 */
#ifndef AUTHORITY_SERVICES_H
#define AUTHORITY_SERVICES_H

#include <stddef.h>

struct authority;

/* How often housekeeping runs (seconds) and how many rows one step deletes
 * per table (rows; a step never holds the write lock long). */
#define SERVICES_HOUSEKEEPING_S 60
#define SERVICES_PURGE_ROWS 500

/* Creates the state directory if missing (0700), opens and migrates the
 * database, spawns the PAM helper (in the demo, under pam_wrapper with the
 * demo account) and arms housekeeping. On error writes why to err and
 * returns VEP_ERR_* / DB_ERR_*; what was started is stopped by
 * services_stop, which is safe to call anyway. */
int services_start(struct authority *a, char *err, size_t errlen);

/* Abandons sign-ins still waiting, stops the PAM helper, closes the
 * database. NULL-safe members; safe after a failed start. */
void services_stop(struct authority *a);

#endif
