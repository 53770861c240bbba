/*
 * services.c - start-up and shutdown of the database, PAM client, failure
 * delay and housekeeping (contract in services.h).
 */
#include "services.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <event2/event.h>

#include "authority.h"
#include "db.h"
#include "db_session.h"
#include "db_throttle.h"
#include "demo.h"
#include "err.h"
#include "faildelay.h"
#include "h_session.h"
#include "log.h"
#include "pam_client.h"

/* Deletes dead rows, one bounded step per table per run: a backlog drains
 * over several runs instead of blocking the loop in one. */
static void
on_housekeeping(evutil_socket_t fd, short what, void *arg)
{
	struct authority *a = arg;
	int64_t now = (int64_t)time(NULL), n = 0;
	int rc;

	if ((rc = db_session_purge(a->db, now, SERVICES_PURGE_ROWS, &n)) != 0)
		log_warn(&a->log, "housekeeping: sessions: %s", db_strerror(rc));
	else if (n > 0)
		log_debug(&a->log, "housekeeping: %lld dead sessions deleted", (long long)n);
	if ((rc = db_throttle_prune(a->db, now, SERVICES_PURGE_ROWS, &n)) != 0)
		log_warn(&a->log, "housekeeping: throttle: %s", db_strerror(rc));
}

static int
ensure_state_dir(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "state_dir '%s': cannot create: %s", dir, strerror(errno));
		return VEP_ERR_IO;
	}
	return VEP_OK;
}

static int
start_pam(struct authority *a, char *err, size_t errlen)
{
	struct pam_client_config pc;
	char **env = NULL;
	int rc;

	pam_client_config_init(&pc);
	pc.service = a->cfg->pam_service;
	pc.deadline_ms = (uint32_t)a->cfg->pam_timeout_s * 1000u;
	pc.max_workers = (uint32_t)a->cfg->pam_workers;
	pc.min_uid = (uint32_t)a->cfg->pam_min_uid;
	if (a->demo && (rc = demo_pam_setup(a->cfg->state_dir, pc.service, &env, err,
	    errlen)) != 0)
		return rc;
	pc.extra_env = (const char *const *)env;
	rc = pam_client_new(a->base, &pc, &a->pam);
	demo_pam_env_free(env);
	if (rc != 0)
		snprintf(err, errlen, "cannot start vep-pam-helper: %s", vep_strerror(rc));
	return rc;
}

int
services_start(struct authority *a, char *err, size_t errlen)
{
	struct timeval tv = { SERVICES_HOUSEKEEPING_S, 0 };
	int rc;

	if ((rc = ensure_state_dir(a->cfg->state_dir, err, errlen)) != 0)
		return rc;
	if ((rc = db_open(a->cfg->state_dir, NULL, &a->db)) != 0) {
		snprintf(err, errlen, "database in '%s': %s", a->cfg->state_dir, db_strerror(rc));
		return rc;
	}
	if (a->cfg->db_max_mib > 0 &&
	    (rc = db_set_size_limit(a->db, (int64_t)a->cfg->db_max_mib * 1024 * 1024)) != 0) {
		snprintf(err, errlen, "db_max_mib: %s", db_strerror(rc));
		return rc;
	}
	if ((rc = faildelay_new(&a->faildelay)) != 0) {
		snprintf(err, errlen, "failure delay: %s", vep_strerror(rc));
		return rc;
	}
	if ((rc = start_pam(a, err, errlen)) != 0)
		return rc;
	a->housekeeping = event_new(a->base, -1, EV_PERSIST, on_housekeeping, a);
	if (a->housekeeping == NULL || event_add(a->housekeeping, &tv) != 0) {
		snprintf(err, errlen, "cannot arm the housekeeping timer");
		return VEP_ERR_NOMEM;
	}
	return VEP_OK;
}

void
services_stop(struct authority *a)
{
	h_session_abandon_all(a);
	if (a->housekeeping != NULL)
		event_free(a->housekeeping);
	a->housekeeping = NULL;
	pam_client_free(a->pam);
	a->pam = NULL;
	faildelay_free(a->faildelay);
	a->faildelay = NULL;
	db_close(a->db);
	a->db = NULL;
}
