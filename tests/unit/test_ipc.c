/*
 * test_ipc.c - the framing of authority/ipc/ipc.c: round trips, partial and
 * back-to-back frames, every size cap on both sides (the PAM channels' and
 * a channel's own), malformed frames, and that consumed bytes are wiped.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "err.h"
#include "ipc/ipc.h"

static struct ipc_msg *
sample(void)
{
	static const uint8_t secret[] = { 'p', ' ', 'W', 0xff, 'x' };
	struct ipc_msg *m = ipc_msg_new(7);

	if (m == NULL || ipc_msg_put_u32(m, 1, 0xdeadbeefu) != 0 ||
	    ipc_msg_put_u64(m, 2, 0x0102030405060708ull) != 0 ||
	    ipc_msg_put_str(m, 3, "alice") != 0 ||
	    ipc_msg_put(m, 4, secret, sizeof(secret)) != 0 ||
	    ipc_msg_put(m, 5, "", 0) != 0) {
		ipc_msg_free(m);
		return NULL;
	}
	return m;
}

static void
test_round_trip(void)
{
	struct ipc_buf b = { 0 };
	struct ipc_msg *m = sample(), *got = NULL;
	const uint8_t *p;
	size_t n;
	uint32_t v32;
	uint64_t v64;
	char *s = NULL;

	ASSERT_TRUE(m != NULL);
	ASSERT_EQ(ipc_msg_append_frame(m, &b), 0);
	ipc_msg_free(m);
	ASSERT_EQ(ipc_take_msg(&b, &got), 0);
	ASSERT_TRUE(got != NULL);
	ASSERT_EQ(b.len, 0);
	ASSERT_EQ(ipc_msg_type(got), 7);
	ASSERT_EQ(ipc_msg_get_u32(got, 1, &v32), 0);
	ASSERT_EQ(v32, 0xdeadbeefu);
	ASSERT_EQ(ipc_msg_get_u64(got, 2, &v64), 0);
	ASSERT_TRUE(v64 == 0x0102030405060708ull);
	ASSERT_EQ(ipc_msg_get_str(got, 3, 64, &s), 0);
	ASSERT_STREQ(s, "alice");
	free(s);
	ASSERT_EQ(ipc_msg_get(got, 4, &p, &n), 0);
	ASSERT_EQ(n, 5);
	ASSERT_MEMEQ(p, "p W\xffx", 5);
	ASSERT_EQ(ipc_msg_get(got, 5, &p, &n), 0);
	ASSERT_EQ(n, 0);
	ASSERT_EQ(ipc_msg_get(got, 9, &p, &n), VEP_ERR_INVALID);
	ASSERT_TRUE(p == NULL);
	/* Integer fields must have their exact width. */
	ASSERT_EQ(ipc_msg_get_u32(got, 2, &v32), VEP_ERR_INVALID);
	ASSERT_EQ(ipc_msg_get_u64(got, 1, &v64), VEP_ERR_INVALID);
	ipc_msg_free(got);
	ipc_buf_clear(&b);
}

static void
test_partial_and_back_to_back(void)
{
	struct ipc_buf whole = { 0 }, b = { 0 };
	struct ipc_msg *m = sample(), *got = NULL;
	size_t i, frames = 0;

	ASSERT_TRUE(m != NULL);
	ASSERT_EQ(ipc_msg_append_frame(m, &whole), 0);
	ASSERT_EQ(ipc_msg_append_frame(m, &whole), 0);
	ipc_msg_free(m);
	/* Byte by byte: a message appears exactly when its last byte does. */
	for (i = 0; i < whole.len; i++) {
		ASSERT_EQ(ipc_buf_append(&b, whole.data + i, 1), 0);
		ASSERT_EQ(ipc_take_msg(&b, &got), 0);
		if (got != NULL) {
			frames++;
			ASSERT_EQ(i + 1, frames * whole.len / 2);
			ipc_msg_free(got);
			got = NULL;
		}
	}
	ASSERT_EQ(frames, 2);
	ASSERT_EQ(b.len, 0);
	ipc_buf_clear(&whole);
	ipc_buf_clear(&b);
}

static void
test_send_caps(void)
{
	struct ipc_msg *m = ipc_msg_new(1);
	uint8_t *big = calloc(1, IPC_FRAME_MAX_BYTES + 1);
	int i;

	ASSERT_TRUE(m != NULL && big != NULL);
	/* Body = type byte + field header (3) + value: the largest value that
	 * fits is IPC_FRAME_MAX_BYTES - 4. */
	ASSERT_EQ(ipc_msg_put(m, 1, big, IPC_FRAME_MAX_BYTES - 3), VEP_ERR_TOOBIG);
	ASSERT_EQ(ipc_msg_put(m, 1, big, IPC_FRAME_MAX_BYTES - 4), 0);
	ASSERT_EQ(ipc_msg_put(m, 2, "", 0), VEP_ERR_TOOBIG);
	ipc_msg_free(m);

	m = ipc_msg_new(1);
	ASSERT_TRUE(m != NULL);
	ASSERT_EQ(ipc_msg_put_u32(m, 1, 1), 0);
	ASSERT_EQ(ipc_msg_put_u32(m, 1, 2), VEP_ERR_INVALID);   /* duplicate */
	for (i = 2; i <= IPC_MAX_FIELDS; i++)
		ASSERT_EQ(ipc_msg_put_u32(m, (uint8_t)i, 0), 0);
	ASSERT_EQ(ipc_msg_put_u32(m, 100, 0), VEP_ERR_INVALID);  /* one too many */
	ipc_msg_free(m);
	free(big);
}

/* A channel's own cap (the key process's is larger than the PAM
 * channels'): kept when sending and receiving; a field stays under 64 KiB
 * whatever the cap. */
static void
test_own_cap(void)
{
	const size_t cap = 3 * IPC_FRAME_MAX_BYTES;
	struct ipc_buf b = { 0 };
	struct ipc_msg *m = ipc_msg_new_max(1, cap), *got = NULL;
	uint8_t *big = calloc(1, 70000);

	ASSERT_TRUE(m != NULL && big != NULL);
	ASSERT_EQ(ipc_msg_put(m, 1, big, cap - 3), VEP_ERR_TOOBIG);
	ASSERT_EQ(ipc_msg_put(m, 1, big, cap - 4), 0);
	ASSERT_EQ(ipc_msg_append_frame(m, &b), 0);
	ipc_msg_free(m);
	/* Over the PAM channels' cap, within its own. */
	ASSERT_EQ(ipc_take_msg(&b, &got), VEP_ERR_TOOBIG);
	ASSERT_EQ(ipc_take_msg_max(&b, cap - 1, &got), VEP_ERR_TOOBIG);
	ASSERT_TRUE(got == NULL);
	ASSERT_EQ(ipc_take_msg_max(&b, cap, &got), 0);
	ASSERT_TRUE(got != NULL && ipc_msg_type(got) == 1);
	ASSERT_EQ(b.len, 0);
	ipc_msg_free(got);
	ipc_buf_clear(&b);

	m = ipc_msg_new_max(1, 100000);
	ASSERT_TRUE(m != NULL);
	ASSERT_EQ(ipc_msg_put(m, 1, big, 65536), VEP_ERR_TOOBIG);
	ASSERT_EQ(ipc_msg_put(m, 1, big, 65535), 0);
	ipc_msg_free(m);
	free(big);
}

static int
take_raw(const uint8_t *raw, size_t n)
{
	struct ipc_buf b = { 0 };
	struct ipc_msg *m = NULL;
	int rc;

	if (ipc_buf_append(&b, raw, n) != 0)
		return -100;
	rc = ipc_take_msg(&b, &m);
	if (rc == 0 && m == NULL)
		rc = 1;   /* incomplete */
	ipc_msg_free(m);
	ipc_buf_clear(&b);
	return rc;
}

static void
test_receive_caps_and_malformed(void)
{
	/* Length prefix one over the cap: refused before any body arrives. */
	const uint32_t over = IPC_FRAME_MAX_BYTES + 1;
	const uint8_t too_big[] = {
		(uint8_t)(over >> 24), (uint8_t)(over >> 16),
		(uint8_t)(over >> 8), (uint8_t)over
	};
	const uint8_t empty[] = { 0, 0, 0, 0 };
	const uint8_t type_only[] = { 0, 0, 0, 1, 9 };
	const uint8_t dup_tag[] = { 0, 0, 0, 9, 1, 5, 0, 1, 'a', 5, 0, 1, 'b' };
	const uint8_t short_field[] = { 0, 0, 0, 5, 1, 5, 0, 9, 'a' };
	const uint8_t half_header[] = { 0, 0, 0, 3, 1, 5, 0 };
	const uint8_t nul_str[] = { 0, 0, 0, 6, 1, 3, 0, 2, 'a', 0 };
	struct ipc_buf b = { 0 };
	struct ipc_msg *m = NULL;
	uint8_t many[4 + 1 + 3 * (IPC_MAX_FIELDS + 1)];
	char *s = NULL;
	size_t i;

	ASSERT_EQ(take_raw(too_big, sizeof(too_big)), VEP_ERR_TOOBIG);
	ASSERT_EQ(take_raw(empty, sizeof(empty)), VEP_ERR_INVALID);
	ASSERT_EQ(take_raw(type_only, sizeof(type_only)), 0);
	ASSERT_EQ(take_raw(type_only, 4), 1);
	ASSERT_EQ(take_raw(dup_tag, sizeof(dup_tag)), VEP_ERR_INVALID);
	ASSERT_EQ(take_raw(short_field, sizeof(short_field)), VEP_ERR_INVALID);
	ASSERT_EQ(take_raw(half_header, sizeof(half_header)), VEP_ERR_INVALID);

	memset(many, 0, sizeof(many));
	many[3] = (uint8_t)(sizeof(many) - 4);
	many[4] = 1;
	for (i = 0; i <= IPC_MAX_FIELDS; i++)
		many[5 + 3 * i] = (uint8_t)(i + 1);
	ASSERT_EQ(take_raw(many, sizeof(many)), VEP_ERR_INVALID);

	ASSERT_EQ(ipc_buf_append(&b, nul_str, sizeof(nul_str)), 0);
	ASSERT_EQ(ipc_take_msg(&b, &m), 0);
	ASSERT_TRUE(m != NULL);
	ASSERT_EQ(ipc_msg_get_str(m, 3, 64, &s), VEP_ERR_INVALID);
	ASSERT_TRUE(s == NULL);
	ipc_msg_free(m);
	ipc_buf_clear(&b);

	m = ipc_msg_new(1);
	ASSERT_TRUE(m != NULL);
	ASSERT_EQ(ipc_msg_put_str(m, 1, "abcdef"), 0);
	ASSERT_EQ(ipc_msg_get_str(m, 1, 5, &s), VEP_ERR_TOOBIG);
	ASSERT_EQ(ipc_msg_get_str(m, 1, 6, &s), 0);
	ASSERT_STREQ(s, "abcdef");
	free(s);
	ipc_msg_free(m);
}

static void
test_consume_wipes(void)
{
	struct ipc_buf b = { 0 };
	size_t i;

	ASSERT_EQ(ipc_buf_append(&b, "hunter2-secret", 14), 0);
	ipc_buf_consume(&b, 8);
	ASSERT_EQ(b.len, 6);
	ASSERT_MEMEQ(b.data, "secret", 6);
	for (i = b.len; i < 14; i++)
		ASSERT_EQ(b.data[i], 0);
	ipc_buf_consume(&b, 100);
	ASSERT_EQ(b.len, 0);
	for (i = 0; i < 14; i++)
		ASSERT_EQ(b.data[i], 0);
	ipc_buf_clear(&b);
	ASSERT_TRUE(b.data == NULL);
	ipc_buf_clear(NULL);
	ipc_msg_free(NULL);
}

static void
test_fd_io(void)
{
	struct ipc_buf out = { 0 }, in = { 0 };
	struct ipc_msg *m = sample(), *got = NULL;
	uint8_t *junk = calloc(1, 3 * IPC_FRAME_MAX_BYTES);
	int sv[2], eof = 1;

	ASSERT_TRUE(m != NULL && junk != NULL);
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ASSERT_EQ(ipc_msg_append_frame(m, &out), 0);
	ipc_msg_free(m);
	ASSERT_EQ(ipc_buf_write_fd(&out, sv[0]), 0);
	ASSERT_EQ(out.len, 0);
	ASSERT_EQ(ipc_buf_read_fd(&in, sv[1], &eof), 0);
	ASSERT_EQ(eof, 0);
	ASSERT_EQ(ipc_take_msg(&in, &got), 0);
	ASSERT_TRUE(got != NULL);
	ipc_msg_free(got);

	/* A flood is read at most one maximal frame at a time. */
	ASSERT_EQ(write(sv[0], junk, 3 * IPC_FRAME_MAX_BYTES), 3 * IPC_FRAME_MAX_BYTES);
	ASSERT_EQ(ipc_buf_read_fd(&in, sv[1], &eof), 0);
	ASSERT_EQ(ipc_buf_read_fd(&in, sv[1], &eof), 0);
	ASSERT_TRUE(in.len <= IPC_HEADER_BYTES + IPC_FRAME_MAX_BYTES);
	ipc_buf_clear(&in);

	close(sv[0]);
	ASSERT_EQ(write(sv[1], "x", 1), -1);   /* peer gone: EPIPE or ECONNRESET */
	close(sv[1]);
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[0]);
	ASSERT_EQ(ipc_buf_read_fd(&in, sv[1], &eof), 0);
	ASSERT_EQ(eof, 1);
	close(sv[1]);
	ipc_buf_clear(&in);
	ipc_buf_clear(&out);
	free(junk);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(test_round_trip);
	RUN(test_partial_and_back_to_back);
	RUN(test_send_caps);
	RUN(test_own_cap);
	RUN(test_receive_caps_and_malformed);
	RUN(test_consume_wipes);
	RUN(test_fd_io);
	return harness_done();
}
