/*
 * fuzz_ipc.c - the framing of the private channels (ipc_take_msg and the
 * field getters), as either side reads it: with the PAM helper's cap, and
 * with the key process's (KEEPER_FRAME_MAX, ipc_take_msg_max).
 *
 * Invariants: the buffer only ever shrinks by whole frames; a message taken
 * re-serialises to exactly the bytes it was taken from; getters never read
 * past a field (ASan) and string getters honour their limits.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ipc/ipc.h"
#include "keyproc/proto.h"

static void
probe_fields(const struct ipc_msg *m)
{
	const uint8_t *p;
	size_t n;
	uint32_t v32;
	uint64_t v64;
	char *s;

	for (unsigned tag = 0; tag < 16; tag++) {
		if (ipc_msg_get(m, (uint8_t)tag, &p, &n) == 0 && n > 0)
			FUZZ_CHECK(p != NULL);
		(void)ipc_msg_get_u32(m, (uint8_t)tag, &v32);
		(void)ipc_msg_get_u64(m, (uint8_t)tag, &v64);
		if (ipc_msg_get_str(m, (uint8_t)tag, 64, &s) == 0) {
			FUZZ_CHECK(strlen(s) <= 64);
			free(s);
		}
	}
}

/* Takes frames of at most max bytes off data until one fails. */
static void
take_all(const uint8_t *data, size_t len, size_t max)
{
	struct ipc_buf in = { 0 };
	struct ipc_msg *m = NULL;
	int rc;

	if (ipc_buf_append(&in, data, len) != 0)
		return;
	for (;;) {
		size_t before = in.len;
		struct ipc_buf again = { 0 };

		if (max == IPC_FRAME_MAX_BYTES)
			rc = ipc_take_msg(&in, &m);
		else
			rc = ipc_take_msg_max(&in, max, &m);
		if (rc != 0 || m == NULL)
			break;
		FUZZ_CHECK(in.len < before);
		probe_fields(m);
		FUZZ_CHECK(ipc_msg_append_frame(m, &again) == 0);
		FUZZ_CHECK(again.len == before - in.len);
		FUZZ_CHECK(memcmp(again.data, data + (len - before), again.len) == 0);
		ipc_buf_clear(&again);
		ipc_msg_free(m);
		m = NULL;
	}
	ipc_buf_clear(&in);
}

int
fuzz_main(const uint8_t *data, size_t len)
{
	take_all(data, len, IPC_FRAME_MAX_BYTES);
	take_all(data, len, KEEPER_FRAME_MAX);
	return 0;
}
