/*
 * keyproc/proto.c - framing of the key process's channel (keyproc/proto.h).
 */
#include "keyproc/proto.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "err.h"

int
keeper_send(int sock, const struct keeper_hdr *h, const void *body, size_t len, int fd)
{
	struct iovec iov[2] = {
		{ (void *)h, sizeof(*h) },
		{ (void *)body, len },
	};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m;
	ssize_t n;

	memset(&m, 0, sizeof(m));
	m.msg_iov = iov;
	m.msg_iovlen = len > 0 ? 2 : 1;
	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		m.msg_control = u.buf;
		m.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)(sizeof(*h) + len) ? VEP_OK : VEP_ERR_IO;
}

int
keeper_recv(int sock, struct keeper_hdr *h, void *body, size_t cap, size_t *len, int *fd,
    int timeout_ms)
{
	struct pollfd p = { sock, POLLIN, 0 };
	struct iovec iov[2] = {
		{ h, sizeof(*h) },
		{ body, cap },
	};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m;
	struct cmsghdr *c;
	ssize_t n;
	int rc;

	*len = 0;
	*fd = -1;
	do
		rc = poll(&p, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc <= 0)
		return VEP_ERR_IO;
	memset(&m, 0, sizeof(m));
	m.msg_iov = iov;
	m.msg_iovlen = 2;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	for (c = CMSG_FIRSTHDR(&m); n > 0 && c != NULL; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	if (n < (ssize_t)sizeof(*h) || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return n > 0 ? VEP_ERR_TOOBIG : VEP_ERR_IO;
	}
	*len = (size_t)n - sizeof(*h);
	return VEP_OK;
}
