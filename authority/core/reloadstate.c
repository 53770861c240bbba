/*
 * core/reloadstate.c - the reload status file and the command that waits
 * on it (see core/reloadstate.h).
 */
#include "core/reloadstate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "file.h"

/* Largest status file read: a reason and a few numbers. */
#define RELOADSTATE_FILE_MAX (RELOADSTATE_REASON_MAX + 256)

/* How often --reload looks at the file while it waits (ms). */
#define RELOADSTATE_POLL_MS 50

static int
status_path(const char *state_dir, const char *suffix, char out[PATH_MAX])
{
	int n = snprintf(out, PATH_MAX, "%s/%s%s", state_dir, RELOADSTATE_FILE, suffix);

	return n < 0 || n >= PATH_MAX ? VEP_ERR_TOOBIG : 0;
}

int
reloadstate_write(const char *state_dir, const struct reloadstate *st)
{
	char path[PATH_MAX], tmp[PATH_MAX], *text = NULL;
	json_t *o;
	size_t len;
	int fd = -1, rc;

	if ((rc = status_path(state_dir, "", path)) != 0 ||
	    (rc = status_path(state_dir, ".tmp", tmp)) != 0)
		return rc;
	o = json_pack("{s:I, s:I, s:b, s:s}", "pid", (json_int_t)st->pid, "reloads",
	    (json_int_t)st->reloads, "ok", st->ok, "reason", st->reason);
	if (o == NULL || (text = json_dumps(o, JSON_COMPACT)) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	len = strlen(text);
	/* O_NOFOLLOW|O_EXCL after an unlink: a link planted at the temporary
	 * name is removed, never written through. */
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 ||
	    close(fd) != 0) {
		if (fd >= 0)
			(void)close(fd);
		(void)unlink(tmp);
		rc = VEP_ERR_IO;
		goto out;
	}
	rc = rename(tmp, path) == 0 ? 0 : VEP_ERR_IO;
	if (rc != 0)
		(void)unlink(tmp);
out:
	free(text);
	json_decref(o);
	return rc;
}

int
reloadstate_read(const char *state_dir, struct reloadstate *st)
{
	char path[PATH_MAX], *text = NULL;
	const char *reason;
	json_t *o = NULL, *pid, *reloads, *ok;
	size_t len = 0;
	int rc;

	memset(st, 0, sizeof(*st));
	if ((rc = status_path(state_dir, "", path)) != 0)
		return rc;
	if ((rc = vep_file_read(path, RELOADSTATE_FILE_MAX, VEP_FILE_NOFOLLOW, &text, &len)) != 0)
		return rc == VEP_ERR_TOOBIG ? VEP_ERR_INVALID : VEP_ERR_IO;
	o = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	free(text);
	pid = json_object_get(o, "pid");
	reloads = json_object_get(o, "reloads");
	ok = json_object_get(o, "ok");
	reason = json_string_value(json_object_get(o, "reason"));
	if (!json_is_integer(pid) || !json_is_integer(reloads) || json_integer_value(reloads) < 0 ||
	    !json_is_boolean(ok) || reason == NULL) {
		json_decref(o);
		return VEP_ERR_INVALID;
	}
	st->pid = json_integer_value(pid);
	st->reloads = (unsigned long long)json_integer_value(reloads);
	st->ok = json_is_true(ok);
	snprintf(st->reason, sizeof(st->reason), "%s", reason);
	json_decref(o);
	return 0;
}

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int
reloadstate_request(const char *state_dir, pid_t pid, int wait_ms, char *msg, size_t msglen)
{
	struct reloadstate before, now;
	int waited;

	if (reloadstate_read(state_dir, &before) != 0) {
		snprintf(msg, msglen, "no usable %s/%s: is the authority running with this "
		    "configuration?", state_dir, RELOADSTATE_FILE);
		return -1;
	}
	if (before.pid != (long long)pid) {
		snprintf(msg, msglen, "process %lld, not %lld, serves %s: not signalled",
		    before.pid, (long long)pid, state_dir);
		return -1;
	}
	if (kill(pid, SIGHUP) != 0) {
		snprintf(msg, msglen, "cannot signal process %lld: %s", (long long)pid,
		    strerror(errno));
		return -1;
	}
	for (waited = 0; waited < wait_ms; waited += RELOADSTATE_POLL_MS) {
		sleep_ms(RELOADSTATE_POLL_MS);
		if (reloadstate_read(state_dir, &now) != 0 || now.pid != before.pid ||
		    now.reloads <= before.reloads)
			continue;
		snprintf(msg, msglen, "%s", now.ok ? "reloaded" : now.reason);
		return now.ok ? 0 : 1;
	}
	snprintf(msg, msglen, "process %lld did not answer the reload within %d s",
	    (long long)pid, wait_ms / 1000);
	return -1;
}
