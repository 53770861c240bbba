/*
 * server/loops.h - the event loops' lives: creating each (its listener,
 * database connection and writer, PAM helper, sign-in and issuance
 * services, timers), running it in its thread, stopping and freeing it;
 * and replacing the domain set every loop reads (a reload).
 *
 * Owns the order in which a loop's parts start and stop.
 */
#ifndef AUTHORITY_SERVER_LOOPS_H
#define AUTHORITY_SERVER_LOOPS_H

#include <stddef.h>

struct authority;
struct domain_set;
struct loop;

/* Creates loop index: its base and listener on listen (port 0 picks one;
 * loops after the first pass the first one's real address), and its
 * channel to the key process. On error writes why to err and returns
 * VEP_ERR_*, leaving nothing allocated. */
int loop_new(struct authority *a, size_t index, const char *listen, struct loop **out,
    char *err, size_t errlen);

/* Opens the rest, as the user the process serves as: the database
 * connection and writer (the state directory is created if missing, 0700),
 * the PAM helper (max_workers its share of pam_workers, started by the key
 * process) and the timers. On error writes why to err and returns
 * VEP_ERR_* / DB_ERR_*; loop_free frees what was opened. */
int loop_open(struct loop *l, char *err, size_t errlen);

/* Runs the loop in a new thread (loops other than 0). */
int loop_start_thread(struct loop *l);

/* Asks the loop to stop after its current callback; thread-safe. */
void loop_stop(struct loop *l);

/* Waits for the loop's thread (if any), abandons sign-ins still waiting,
 * answers nothing more, stops its PAM helper and frees it. NULL-safe. */
void loop_free(struct loop *l);

/* The number of loops "workers = 0" means: the online CPUs, at least 1. */
size_t loop_default_count(void);

/* Replaces the domain set with next (taken) and retires the old one:
 * returns 0, or VEP_ERR_EXISTS when a previous reload is still retiring
 * (next is then freed and nothing changes). Loop 0 only. */
int loops_domains_swap(struct authority *a, struct domain_set *next);

#endif
