/*
 * ipc/ipc.h - framed, typed messages: the one framing of every private channel
 * (the socketpair between the authority and vep-pam-helper, the pipe from a
 * PAM worker back to the helper, and the key process's channels).
 *
 * Owns: the wire format, its size caps, and the byte buffers that carry it.
 * A frame is a 4-byte big-endian body length, then the body: one type byte,
 * then fields, each a tag byte, a 2-byte big-endian length and that many
 * bytes. A tag appears at most once per message. Bodies over the channel's
 * cap (IPC_FRAME_MAX_BYTES unless the channel names its own) are refused on
 * both the sending and receiving side, so a confused or hostile peer cannot
 * make us allocate without bound.
 *
 * Two carriers, one framing. The PAM channels are byte streams read by
 * event loops (a pipe has no other kind), so frames are cut out of a
 * buffer (ipc_take_msg). The key process's channels carry each frame whole
 * in one SOCK_SEQPACKET packet (keyproc/proto.h), because they pass
 * descriptors: in a packet the descriptor belongs to exactly the message
 * it came with, and a short or oversized message is seen as such instead
 * of putting the stream out of step.
 *
 * Must never: know about PAM or libevent, or link anything beyond libc (the
 * PAM helper links this file and must stay free of OpenSSL, libevent and
 * SQLite). Passwords travel through these buffers, so every buffer and
 * message is wiped when bytes are consumed or released.
 */
#ifndef AUTHORITY_IPC_IPC_H
#define AUTHORITY_IPC_IPC_H

#include <stddef.h>
#include <stdint.h>

/* Largest frame body (type byte + fields) either side of the PAM channels
 * sends or accepts, in bytes. Room for a 4096-byte password plus user, host
 * and framing. */
#define IPC_FRAME_MAX_BYTES 8192

/* Most fields one message may carry (a key process SIGN: its fingerprint,
 * or its rc, and KEEPER_SIGN_BATCH_MAX items). */
#define IPC_MAX_FIELDS 24

/* Bytes of the length prefix in front of every body. */
#define IPC_HEADER_BYTES 4

/* A growable byte buffer that wipes what it drops. Zero-initialise it
 * (struct ipc_buf b = {0}); release with ipc_buf_clear. The bytes past len
 * never hold anything that was put in (consuming wipes the tail, growing
 * wipes the old block), so wiping the first len bytes wipes it all: code
 * that writes into data directly (a recvmsg) sets len to what was written
 * before anything else. */
struct ipc_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

/* One message, built for sending or parsed from a frame. Opaque. */
struct ipc_msg;

/* Makes room for need bytes in total (len included), keeping the
 * contents. Returns 0 or VEP_ERR_NOMEM (b unchanged then). */
int ipc_buf_reserve(struct ipc_buf *b, size_t need);

/* Appends n bytes. Returns 0 or VEP_ERR_NOMEM (b unchanged then). */
int ipc_buf_append(struct ipc_buf *b, const void *p, size_t n);

/* Drops the first n bytes (n <= len), wiping them. */
void ipc_buf_consume(struct ipc_buf *b, size_t n);

/* Wipes and frees the storage; b is empty and reusable afterwards. NULL-safe. */
void ipc_buf_clear(struct ipc_buf *b);

/* Reads what fd has (one read(2)) into b. Returns 0 when bytes were read or
 * the fd would block, VEP_ERR_IO on a read error; *eof is set to 1 at end of
 * stream, else 0. Reads at most what a single maximal frame can still need,
 * so the buffer stays bounded. */
int ipc_buf_read_fd(struct ipc_buf *b, int fd, int *eof);

/* Writes as much of b as fd takes and consumes (wipes) what was written.
 * Returns 0 (possibly with bytes left when fd would block) or VEP_ERR_IO
 * (EPIPE included: the peer is gone). */
int ipc_buf_write_fd(struct ipc_buf *b, int fd);

/* Starts a message of the given type whose body may grow to
 * IPC_FRAME_MAX_BYTES. Returns a new message or NULL (no memory). Release
 * with ipc_msg_free. */
struct ipc_msg *ipc_msg_new(uint8_t type);
/* The same with the channel's own cap on the body, in bytes. */
struct ipc_msg *ipc_msg_new_max(uint8_t type, size_t max);

/* Adds field tag with n bytes. Returns 0, VEP_ERR_TOOBIG (n over 65535, the
 * most a field's length says, or the frame would exceed the message's
 * cap), VEP_ERR_INVALID (tag already present or
 * IPC_MAX_FIELDS reached) or VEP_ERR_NOMEM. The bytes are copied. */
int ipc_msg_put(struct ipc_msg *m, uint8_t tag, const void *p, size_t n);
int ipc_msg_put_u32(struct ipc_msg *m, uint8_t tag, uint32_t v);
int ipc_msg_put_u64(struct ipc_msg *m, uint8_t tag, uint64_t v);
/* Adds a NUL-terminated string without its NUL. */
int ipc_msg_put_str(struct ipc_msg *m, uint8_t tag, const char *s);

/* Appends the complete frame (length prefix included) to out. Returns 0 or
 * VEP_ERR_NOMEM. */
int ipc_msg_append_frame(const struct ipc_msg *m, struct ipc_buf *out);

/* The message type byte. */
uint8_t ipc_msg_type(const struct ipc_msg *m);

/* Finds field tag: *p (borrowed, valid until ipc_msg_free) and *n. Returns 0
 * or VEP_ERR_INVALID when absent; out-parameters cleared on entry. */
int ipc_msg_get(const struct ipc_msg *m, uint8_t tag, const uint8_t **p, size_t *n);
/* Integer fields must have exactly their width. 0 or VEP_ERR_INVALID. */
int ipc_msg_get_u32(const struct ipc_msg *m, uint8_t tag, uint32_t *v);
int ipc_msg_get_u64(const struct ipc_msg *m, uint8_t tag, uint64_t *v);
/* Copies a string field into a new NUL-terminated string (*out, free with
 * free(), or vep-style wipe first if it is secret). Refuses an embedded NUL
 * (VEP_ERR_INVALID) and more than max bytes (VEP_ERR_TOOBIG); absent field:
 * VEP_ERR_INVALID. */
int ipc_msg_get_str(const struct ipc_msg *m, uint8_t tag, size_t max, char **out);

/* Takes the first complete frame off the front of in. Returns 0 with *out a
 * new message, 0 with *out NULL when no complete frame is buffered yet, or
 * VEP_ERR_TOOBIG / VEP_ERR_INVALID / VEP_ERR_NOMEM for a frame that cannot be
 * accepted: the stream is then out of sync and must be closed. */
int ipc_take_msg(struct ipc_buf *in, struct ipc_msg **out);
/* The same with the channel's own cap on the body (max bytes) instead of
 * IPC_FRAME_MAX_BYTES. */
int ipc_take_msg_max(struct ipc_buf *in, size_t max, struct ipc_msg **out);

/* Wipes and frees a message. NULL-safe. */
void ipc_msg_free(struct ipc_msg *m);

#endif
