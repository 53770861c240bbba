/*
 * auth/faildelay.c - how long to wait before answering a failed sign-in (policy
 * and contract in auth/faildelay.h).
 *
 * Owns: the per-process jitter secret and the arithmetic (HMAC and
 * randomness come from libvep's digest.h).
 * Must never: sleep, log the user name, or keep the secret after free.
 */
#include "auth/faildelay.h"

#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "err.h"
#include "secmem.h"

struct faildelay {
	unsigned char secret[FAILDELAY_SECRET_BYTES];
};

int
faildelay_new(struct faildelay **out)
{
	struct faildelay *fd;
	int rc = VEP_ERR_NOMEM;

	*out = NULL;
	fd = calloc(1, sizeof(*fd));
	if (fd == NULL)
		goto out;
	if ((rc = vep_random(fd->secret, sizeof(fd->secret))) != 0)
		goto out;
	*out = fd;
	fd = NULL;
	rc = VEP_OK;
out:
	faildelay_free(fd);
	return rc;
}

/* Stable jitter for user in [0, FAILDELAY_JITTER_MS). If HMAC fails (it
 * cannot, short of memory), the widest jitter is the safe answer. */
static uint32_t
jitter_ms(const struct faildelay *fd, const char *user)
{
	uint8_t mac[VEP_SHA256_BYTES];
	uint32_t v;

	if (vep_hmac_sha256(fd->secret, sizeof(fd->secret), user, strlen(user), mac) != 0)
		return FAILDELAY_JITTER_MS - 1;
	v = (uint32_t)mac[0] << 24 | (uint32_t)mac[1] << 16 |
	    (uint32_t)mac[2] << 8 | mac[3];
	vep_memzero(mac, sizeof(mac));
	return v % FAILDELAY_JITTER_MS;
}

uint32_t
faildelay_target_ms(const struct faildelay *fd, const char *user,
    uint32_t pam_delay_us)
{
	uint32_t pam_ms = pam_delay_us / 1000;

	if (pam_ms > FAILDELAY_PAM_MAX_MS)
		pam_ms = FAILDELAY_PAM_MAX_MS;
	return FAILDELAY_MIN_MS + jitter_ms(fd, user) + pam_ms;
}

uint32_t
faildelay_remaining_ms(const struct faildelay *fd, const char *user,
    uint32_t pam_delay_us, uint64_t elapsed_ms)
{
	uint32_t target = faildelay_target_ms(fd, user, pam_delay_us);

	return elapsed_ms >= target ? 0 : (uint32_t)(target - elapsed_ms);
}

void
faildelay_free(struct faildelay *fd)
{
	if (fd == NULL)
		return;
	vep_memzero(fd, sizeof(*fd));
	free(fd);
}
