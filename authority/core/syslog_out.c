/*
 * core/syslog_out.c - lines to a syslog socket (see core/syslog_out.h).
 */
#include "core/syslog_out.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "err.h"

static const struct {
	const char *name;
	int value;
} facilities[] = {
	{ "daemon", LOG_DAEMON }, { "user", LOG_USER }, { "auth", LOG_AUTH },
	{ "authpriv", LOG_AUTHPRIV }, { "local0", LOG_LOCAL0 }, { "local1", LOG_LOCAL1 },
	{ "local2", LOG_LOCAL2 }, { "local3", LOG_LOCAL3 }, { "local4", LOG_LOCAL4 },
	{ "local5", LOG_LOCAL5 }, { "local6", LOG_LOCAL6 }, { "local7", LOG_LOCAL7 },
};

int
syslog_facility_parse(const char *name, int *out)
{
	size_t i;

	for (i = 0; name != NULL && i < sizeof(facilities) / sizeof(facilities[0]); i++) {
		if (strcmp(name, facilities[i].name) == 0) {
			*out = facilities[i].value;
			return VEP_OK;
		}
	}
	return VEP_ERR_INVALID;
}

int
syslog_out_open(struct syslog_out *s, const char *path, int facility)
{
	size_t len = path != NULL ? strlen(path) : 0;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (len == 0 || path[0] != '/' || len >= sizeof(s->addr.sun_path))
		return VEP_ERR_ARG;
	s->addr.sun_family = AF_UNIX;
	memcpy(s->addr.sun_path, path, len + 1);
	s->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	s->facility = facility;
	s->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	return s->fd >= 0 ? VEP_OK : VEP_ERR_IO;
}

void
syslog_out_send(struct syslog_out *s, int severity, const char *line)
{
	char msg[SYSLOG_OUT_LINE_MAX], stamp[32];
	struct tm tm;
	time_t now;
	int len;

	if (s == NULL || s->fd < 0)
		return;
	now = time(NULL);
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%b %e %H:%M:%S", &tm);
	len = snprintf(msg, sizeof(msg), "<%d>%s vep-authority[%ld]: %s",
	    s->facility | (severity & LOG_PRIMASK), stamp, (long)getpid(), line);
	if (len < 0)
		return;
	if ((size_t)len >= sizeof(msg))
		len = (int)sizeof(msg) - 1;
	if (sendto(s->fd, msg, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT,
	    (const struct sockaddr *)&s->addr, s->addrlen) != len)
		atomic_fetch_add(&s->dropped, 1);
}

void
syslog_out_close(struct syslog_out *s)
{
	if (s != NULL && s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
}
