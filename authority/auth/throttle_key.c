/*
 * auth/throttle_key.c - counting names for accounts and client addresses
 * (contract in auth/throttle_key.h).
 */
#include "auth/throttle_key.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

/* The bytes of an IPv6 address that name its /64. */
#define IPV6_PREFIX_BYTES 8

static int
copy_out(const char *s, char *out, size_t outlen)
{
	size_t n = strlen(s);

	if (n >= outlen) {
		out[0] = '\0';
		return VEP_ERR_TOOBIG;
	}
	memcpy(out, s, n + 1);
	return VEP_OK;
}

int
throttle_key_account(const char *account, int fold_case, char *out, size_t outlen)
{
	char *p;
	int rc;

	if (account == NULL || out == NULL || outlen == 0)
		return VEP_ERR_ARG;
	if ((rc = copy_out(account, out, outlen)) != 0 || !fold_case)
		return rc;
	/* ASCII only: what a directory folds beyond it is its own business,
	 * and a locale must not change what counts as one account. */
	for (p = out; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return VEP_OK;
}

int
throttle_key_addr(const char *addr, char *out, size_t outlen)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	struct in6_addr a6;
	char text[INET6_ADDRSTRLEN];

	if (addr == NULL || out == NULL || outlen == 0)
		return VEP_ERR_ARG;
	if (inet_pton(AF_INET6, addr, &a6) != 1)
		return copy_out(addr, out, outlen);  /* IPv4 text, or no address */
	if (memcmp(a6.s6_addr, v4mapped, sizeof(v4mapped)) == 0) {
		if (inet_ntop(AF_INET, a6.s6_addr + sizeof(v4mapped), text, sizeof(text)) == NULL)
			return VEP_ERR_ARG;
		return copy_out(text, out, outlen);
	}
	memset(a6.s6_addr + IPV6_PREFIX_BYTES, 0, sizeof(a6.s6_addr) - IPV6_PREFIX_BYTES);
	if (inet_ntop(AF_INET6, &a6, text, sizeof(text)) == NULL)
		return VEP_ERR_ARG;
	if ((size_t)snprintf(out, outlen, "%s/64", text) >= outlen) {
		out[0] = '\0';
		return VEP_ERR_TOOBIG;
	}
	return VEP_OK;
}
