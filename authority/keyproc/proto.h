/*
 * keyproc/proto.h - the wire between the network process and the key
 * process (keyproc/keeper.h): one request and one answer at a time per channel, each
 * one SOCK_SEQPACKET message (a header, then a body), with at most one
 * descriptor passed alongside (SCM_RIGHTS).
 *
 *   SIGN   body: fingerprint (64 hex) + signing input -> rc, signature
 *   LOAD   body: empty -> rc, a memfd holding the bundle text (keyproc/keyring.h),
 *          or on failure the reason as text
 *   COMMIT body: 1 (the last LOAD is in use) or 0 (it was not taken up) -> rc
 *   SPAWN  body: empty -> rc, the helper's pid (int32) and its socket
 *
 * Must never carry a private key.
 */
#ifndef AUTHORITY_KEYPROC_PROTO_H
#define AUTHORITY_KEYPROC_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jws.h"

enum keeper_msg {
	KEEPER_SIGN = 1,
	KEEPER_LOAD = 2,
	KEEPER_SPAWN = 3,
	KEEPER_COMMIT = 4,
};

struct keeper_hdr {
	uint32_t type;   /* enum keeper_msg */
	int32_t rc;      /* answers: 0 or VEP_ERR_* */
};

/* Largest message body: a certificate's signing input and its key's
 * fingerprint, with room to spare. */
#define KEEPER_BODY_MAX (VEP_JWS_MAX_BYTES + 1024)
/* Largest bundle accepted from a memfd (alias tables are up to 16 MiB). */
#define KEEPER_BUNDLE_MAX (256L * 1024 * 1024)
/* How long the network process waits for an answer (a signature, a helper,
 * a commit; a load reads files and may take longer), in milliseconds. */
#define KEEPER_ANSWER_TIMEOUT_MS 10000
#define KEEPER_LOAD_TIMEOUT_MS 120000

/* Sends one message, passing fd when fd >= 0. Returns 0 or VEP_ERR_IO. */
int keeper_send(int sock, const struct keeper_hdr *h, const void *body, size_t len, int fd);

/* Receives one message into body (cap bytes); *len its length, *fd a passed
 * descriptor or -1 (close it). timeout_ms < 0 waits for ever. Returns 0,
 * VEP_ERR_IO (error, end of file, timeout) or VEP_ERR_TOOBIG. */
int keeper_recv(int sock, struct keeper_hdr *h, void *body, size_t cap, size_t *len, int *fd,
    int timeout_ms);

#endif
