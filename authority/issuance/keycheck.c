/*
 * issuance/keycheck.c - the per-loop memory of keys that passed the costly checks
 * (contract in issuance/keycheck.h).
 */
#include "issuance/keycheck.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"


struct keycheck {
	char fp[KEYCHECK_SLOTS][VEP_FINGERPRINT_HEX_LEN]; /* all zero: empty */
};

int
keycheck_new(struct keycheck **out)
{
	*out = calloc(1, sizeof(**out));
	return *out != NULL ? VEP_OK : VEP_ERR_NOMEM;
}

/* The slot of a fingerprint: its first hex digits are uniformly spread. */
static size_t
slot_of(const char *fp)
{
	size_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 4 | (size_t)(fp[i] <= '9' ? fp[i] - '0' : fp[i] - 'a' + 10);
	return v % KEYCHECK_SLOTS;
}

int
keycheck_costly(struct keycheck *kc, const vep_key *k, const char fp[VEP_FINGERPRINT_BUFSZ])
{
	size_t s;
	int rc;

	if (kc == NULL || k == NULL || fp == NULL || strlen(fp) != VEP_FINGERPRINT_HEX_LEN)
		return VEP_ERR_ARG;
	s = slot_of(fp);
	if (memcmp(kc->fp[s], fp, VEP_FINGERPRINT_HEX_LEN) == 0)
		return VEP_OK;
	if ((rc = vep_key_check_costly(k)) != 0)
		return rc;
	memcpy(kc->fp[s], fp, VEP_FINGERPRINT_HEX_LEN);
	return VEP_OK;
}

void
keycheck_free(struct keycheck *kc)
{
	free(kc);
}
