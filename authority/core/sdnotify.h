/*
 * core/sdnotify.h - systemd's notify protocol (sd_notify(3)), without
 * libsystemd: "READY=1" once the authority listens, "RELOADING=1" and
 * "READY=1" around a reload, "STOPPING=1", and "STATUS=..." lines.
 *
 * The socket's address comes from $NOTIFY_SOCKET, read once and removed from
 * the environment before the key process and PAM helpers start (only the
 * main process may notify: NotifyAccess=main). Sending never blocks and its
 * failures are ignored: a service manager that went away must not stop the
 * authority. Without $NOTIFY_SOCKET every call does nothing.
 */
#ifndef AUTHORITY_CORE_SDNOTIFY_H
#define AUTHORITY_CORE_SDNOTIFY_H

#include <sys/socket.h>
#include <sys/un.h>

struct sdnotify {
	int fd;                   /* owned datagram socket, -1 when not notifying */
	struct sockaddr_un addr;  /* $NOTIFY_SOCKET ('@' means the abstract namespace) */
	socklen_t addrlen;
};

/* Reads and unsets $NOTIFY_SOCKET and opens the socket. Returns 0 (also
 * when there is nothing to notify: n->fd is then -1), or -1 when the
 * variable names an address that cannot be used (the caller warns). */
int sdnotify_open(struct sdnotify *n);

/* Sends one notification ("READY=1\nSTATUS=..."); at most
 * SDNOTIFY_MSG_MAX bytes are sent. */
#define SDNOTIFY_MSG_MAX 1024
void sdnotify_send(const struct sdnotify *n, const char *fmt, ...)
__attribute__((format(printf, 2, 3)));

/* Closes the socket. Safe on a closed or never-opened one. */
void sdnotify_close(struct sdnotify *n);

#endif
