/*
 * keyproc/proto.c - the key process's channels carry ipc/ipc.h's frames, one per
 * SOCK_SEQPACKET packet, with a descriptor alongside (keyproc/proto.h).
 */
#include "keyproc/proto.h"

#include <errno.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "err.h"

/* A whole batch fits in one frame: type byte, fingerprint field, the
 * items with their field headers; and its fields in a message. */
_Static_assert(1 + 3 + VEP_FINGERPRINT_HEX_LEN + KEEPER_SIGN_BATCH_BYTES <= KEEPER_FRAME_MAX,
    "a batch fits in a frame");
_Static_assert(1 + KEEPER_SIGN_BATCH_MAX <= IPC_MAX_FIELDS, "a batch's fields fit");

struct ipc_msg *
keeper_msg_new(uint8_t type)
{
	return ipc_msg_new_max(type, KEEPER_FRAME_MAX);
}

int
keeper_send(int sock, const struct ipc_msg *msg, int fd)
{
	struct ipc_buf frame = { 0 };
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m;
	ssize_t n;
	int rc;

	if ((rc = ipc_msg_append_frame(msg, &frame)) != VEP_OK)
		goto out;
	iov.iov_base = frame.data;
	iov.iov_len = frame.len;
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
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
	rc = n == (ssize_t)frame.len ? VEP_OK : VEP_ERR_IO;
out:
	/* A signing input or a reason: wiped like every frame. */
	ipc_buf_clear(&frame);
	return rc;
}

int
keeper_recv(int sock, struct ipc_msg **out, int *fd, int timeout_ms)
{
	/* A frame longer than this is cut short (MSG_TRUNC) and refused. */
	const size_t want = IPC_HEADER_BYTES + KEEPER_FRAME_MAX;
	struct pollfd p = { sock, POLLIN, 0 };
	struct ipc_buf in = { 0 };
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m;
	struct cmsghdr *c;
	ssize_t n;
	int rc;

	*out = NULL;
	*fd = -1;
	/* Without a timeout the recvmsg below waits by itself: one system
	 * call a request fewer for the key process's threads. */
	if (timeout_ms >= 0) {
		do
			rc = poll(&p, 1, timeout_ms);
		while (rc < 0 && errno == EINTR);
		if (rc <= 0) {
			rc = VEP_ERR_IO;
			goto out;
		}
	}
	if ((rc = ipc_buf_reserve(&in, want)) != VEP_OK)
		goto out;
	iov.iov_base = in.data;
	iov.iov_len = want;
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	/* What the kernel wrote is what ipc_buf_clear wipes. */
	in.len = n > 0 ? (size_t)n : 0;
	for (c = CMSG_FIRSTHDR(&m); n > 0 && c != NULL; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	if (n <= 0) {
		rc = VEP_ERR_IO;
		goto out;
	}
	if ((m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
		rc = VEP_ERR_TOOBIG;
		goto out;
	}
	/* Exactly one whole frame: a packet that holds less (*out NULL) or
	 * more is not one of ours. */
	rc = ipc_take_msg_max(&in, KEEPER_FRAME_MAX, out);
	if (rc == VEP_OK && (*out == NULL || in.len != 0))
		rc = VEP_ERR_INVALID;
out:
	if (rc != VEP_OK) {
		ipc_msg_free(*out);
		*out = NULL;
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
	ipc_buf_clear(&in);
	return rc;
}

int
keeper_put_result(struct ipc_msg *m, size_t i, int rc, const uint8_t *sig, size_t siglen)
{
	uint8_t *v;
	size_t n = 4 + (rc == 0 ? siglen : 0);
	uint32_t u = (uint32_t)rc;
	int e;

	if (i >= KEEPER_SIGN_BATCH_MAX || (rc == 0 && (sig == NULL || siglen == 0)))
		return VEP_ERR_ARG;
	if ((v = malloc(n)) == NULL)
		return VEP_ERR_NOMEM;
	/* VEP_ERR_* travel as their two's complement, big-endian. */
	v[0] = (uint8_t)(u >> 24);
	v[1] = (uint8_t)(u >> 16);
	v[2] = (uint8_t)(u >> 8);
	v[3] = (uint8_t)u;
	if (rc == 0)
		memcpy(v + 4, sig, siglen);
	e = ipc_msg_put(m, (uint8_t)(KEEPER_TAG_ITEM + i), v, n);
	free(v);
	return e;
}

int
keeper_get_result(const struct ipc_msg *m, size_t i, int *rc, const uint8_t **sig,
    size_t *siglen)
{
	const uint8_t *p;
	size_t n;
	uint32_t u;

	*rc = VEP_ERR_IO;
	*sig = NULL;
	*siglen = 0;
	if (i >= KEEPER_SIGN_BATCH_MAX ||
	    ipc_msg_get(m, (uint8_t)(KEEPER_TAG_ITEM + i), &p, &n) != VEP_OK || n < 4)
		return VEP_ERR_INVALID;
	u = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	if ((u == 0) != (n > 4))
		return VEP_ERR_INVALID;
	*rc = (int)(int32_t)u;
	if (u == 0) {
		*sig = p + 4;
		*siglen = n - 4;
	}
	return VEP_OK;
}
