/*
 * keyproc/proto.h - the wire between the network process and the key
 * process (keyproc/keeper.h): ipc/ipc.h's frames, the framing of every private
 * channel, each carried whole in one SOCK_SEQPACKET packet with at most one
 * descriptor passed alongside (SCM_RIGHTS). One request and one answer at
 * a time per channel; an answer has its request's type and an RC field.
 *
 *   SIGN    FINGERPRINT (64 hex), ITEM+0 .. ITEM+n-1 (signing inputs, 1 <= n <=
 *           KEEPER_SIGN_BATCH_MAX) -> RC (of the request as a whole), and
 *           for each item i ITEM+i: its own rc (u32), then its signature
 *           when that rc is 0. A loop's certificates of one event-loop
 *           pass travel in one request: one wake-up of the key process
 *           and one round trip for all, signed back to back.
 *   LOAD    (no field) -> RC, a memfd holding the bundle text (keyproc/keyring.h),
 *           or on failure REASON
 *   COMMIT  TAKEN (u32 1: the last LOAD is in use, 0: it was not taken
 *           up) -> RC
 *   SPAWN   (no field) -> RC, PID (u32) and the helper's socket
 *
 * Why packets here when the PAM helper's channels are byte streams: these
 * pass descriptors, and a packet binds its descriptor to exactly one
 * message; a short or oversized message is seen whole (MSG_TRUNC) and
 * refused instead of putting the channel out of step. The PAM channels
 * pass none, and one of them is a pipe.
 *
 * Which channel may carry which request is the key process's table
 * (keyproc/keeper.c): LOAD and COMMIT on the control channel only, SIGN and SPAWN
 * on the loops' channels only.
 *
 * Must never carry a private key.
 */
#ifndef AUTHORITY_KEYPROC_PROTO_H
#define AUTHORITY_KEYPROC_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/ipc.h"
#include "jws.h"

/* Message types. */
enum keeper_msg {
	KEEPER_SIGN = 1,
	KEEPER_LOAD = 2,
	KEEPER_SPAWN = 3,
	KEEPER_COMMIT = 4,
};

/* Field tags. */
enum keeper_tag {
	KEEPER_TAG_RC = 1,           /* u32: answers, 0 or VEP_ERR_* (two's complement) */
	KEEPER_TAG_FINGERPRINT = 2,  /* VEP_FINGERPRINT_HEX_LEN hex: vep_key_fingerprint
	                              * of the key to sign with */
	KEEPER_TAG_REASON = 5,       /* text: why a LOAD failed */
	KEEPER_TAG_TAKEN = 6,        /* u32: 1 or 0 */
	KEEPER_TAG_PID = 7,          /* u32: the helper's pid */
	KEEPER_TAG_ITEM = 32,        /* 32 + i: a SIGN's item i (see above) */
};

/* Largest signing input plus its key's fingerprint: a certificate's
 * signing input, with room to spare. */
#define KEEPER_BODY_MAX (VEP_JWS_MAX_BYTES + 1024)
/* Most signing inputs in one SIGN request, and what they may come to:
 * the sum over them of each one's length plus KEEPER_ITEM_OVERHEAD (its
 * field header). The largest single input, KEEPER_BODY_MAX - 64 bytes,
 * fits alone. A whole batch fits in a frame (checked in keyproc/proto.c);
 * its answer (a signature is at most a few hundred bytes) is smaller. */
#define KEEPER_SIGN_BATCH_MAX 16
#define KEEPER_ITEM_OVERHEAD 3
#define KEEPER_SIGN_BATCH_BYTES (KEEPER_BODY_MAX - 64 + KEEPER_ITEM_OVERHEAD)
/* Largest frame body on these channels, in bytes: a SIGN request (type
 * byte, two field headers and KEEPER_BODY_MAX), the largest message. */
#define KEEPER_FRAME_MAX (KEEPER_BODY_MAX + 64)
/* Largest bundle accepted from a memfd (alias tables are up to 16 MiB). */
#define KEEPER_BUNDLE_MAX (256L * 1024 * 1024)
/* How long the network process waits for an answer (a signature, a helper,
 * a commit; a load reads files and may take longer), in milliseconds. */
#define KEEPER_ANSWER_TIMEOUT_MS 10000
#define KEEPER_LOAD_TIMEOUT_MS 120000

/* A new message of type for these channels (body cap KEEPER_FRAME_MAX),
 * or NULL (no memory). */
struct ipc_msg *keeper_msg_new(uint8_t type);

/* Sends m as one packet, passing fd when fd >= 0. Returns 0 or
 * VEP_ERR_IO (VEP_ERR_NOMEM when m cannot be laid out). */
int keeper_send(int sock, const struct ipc_msg *m, int fd);

/* Receives one packet: 0 with *out (new, ipc_msg_free) and *fd a passed
 * descriptor or -1 (close it). timeout_ms < 0 waits for ever. Returns
 * VEP_ERR_IO (error, end of file, timeout), VEP_ERR_TOOBIG (over
 * KEEPER_FRAME_MAX), VEP_ERR_INVALID (not exactly one well-formed frame) or
 * VEP_ERR_NOMEM, with *out NULL and *fd -1. */
int keeper_recv(int sock, struct ipc_msg **out, int *fd, int timeout_ms);

/* A SIGN answer's item i: its rc, then the signature (sig, siglen; none
 * unless rc is 0). Returns 0 or what ipc_msg_put does. */
int keeper_put_result(struct ipc_msg *m, size_t i, int rc, const uint8_t *sig,
    size_t siglen);

/* Reads item i of a SIGN answer: *rc, and for rc 0 the signature (*sig
 * borrowed from m, *siglen > 0). Returns 0, or VEP_ERR_INVALID when the
 * field is absent or malformed (shorter than its rc, a signature with an
 * error or none with success). */
int keeper_get_result(const struct ipc_msg *m, size_t i, int *rc, const uint8_t **sig,
    size_t *siglen);

#endif
