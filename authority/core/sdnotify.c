/*
 * core/sdnotify.c - systemd's notify protocol (see core/sdnotify.h).
 */
#include "core/sdnotify.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
sdnotify_open(struct sdnotify *n)
{
	const char *path = getenv("NOTIFY_SOCKET");
	size_t len;

	memset(n, 0, sizeof(*n));
	n->fd = -1;
	if (path == NULL)
		return 0;
	len = strlen(path);
	/* A path socket, or '@' for Linux's abstract namespace (the name is
	 * then not NUL-terminated: its length is the address length). */
	if (len < 2 || (path[0] != '/' && path[0] != '@') || len >= sizeof(n->addr.sun_path)) {
		unsetenv("NOTIFY_SOCKET");
		return -1;
	}
	n->addr.sun_family = AF_UNIX;
	memcpy(n->addr.sun_path, path, len);
	if (path[0] == '@')
		n->addr.sun_path[0] = '\0';
	n->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
	    (path[0] == '/' ? 1 : 0));
	unsetenv("NOTIFY_SOCKET");
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	return n->fd >= 0 ? 0 : -1;
}

void
sdnotify_send(const struct sdnotify *n, const char *fmt, ...)
{
	char msg[SDNOTIFY_MSG_MAX];
	va_list ap;
	int len;

	if (n == NULL || n->fd < 0)
		return;
	va_start(ap, fmt);
	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (len <= 0)
		return;
	if ((size_t)len >= sizeof(msg))
		len = (int)sizeof(msg) - 1;
	/* Best effort by design (see the header). */
	(void)!sendto(n->fd, msg, (size_t)len, MSG_NOSIGNAL, (const struct sockaddr *)&n->addr,
	    n->addrlen);
}

void
sdnotify_close(struct sdnotify *n)
{
	if (n != NULL && n->fd >= 0) {
		close(n->fd);
		n->fd = -1;
	}
}
