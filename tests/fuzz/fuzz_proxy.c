/*
 * fuzz_proxy.c - trusted_proxies lists (proxy_list_parse) and the
 * X-Forwarded-For walk (proxy_client_addr).
 *
 * Input: a list text, a NUL byte, then a header value. Invariants: the
 * client address is the peer or an address that appears in the header
 * (after inet_ntop's canonical form it parses again), never longer than an
 * IPv6 address; with no list, always the peer.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "edge/proxy.h"

static int
is_addr(const char *s)
{
	unsigned char b[16];

	return inet_pton(AF_INET, s, b) == 1 || inet_pton(AF_INET6, s, b) == 1;
}

int
fuzz_main(const uint8_t *data, size_t len)
{
	static const char *const peers[] = { "127.0.0.1", "10.1.2.3", "::1", "192.0.2.7" };
	const char *split = memchr(data, '\0', len);
	char *list = NULL, *xff = NULL, why[160], out[64];
	struct proxy_list *l = NULL;
	size_t llen = split != NULL ? (size_t)(split - (const char *)data) : len, i;

	if ((list = malloc(llen + 1)) == NULL)
		return 0;
	memcpy(list, data, llen);
	list[llen] = '\0';
	if (split != NULL && (xff = malloc(len - llen)) != NULL) {
		memcpy(xff, split + 1, len - llen - 1);
		xff[len - llen - 1] = '\0';
	}
	if (proxy_list_parse(list, &l, why, sizeof(why)) != 0)
		FUZZ_CHECK(l == NULL && why[0] != '\0');
	for (i = 0; i < sizeof(peers) / sizeof(peers[0]); i++) {
		proxy_client_addr(l, peers[i], xff, out, sizeof(out));
		FUZZ_CHECK(strlen(out) < 46 && is_addr(out));
		if (l == NULL || xff == NULL)
			FUZZ_CHECK(strcmp(out, peers[i]) == 0);
	}
	proxy_list_free(l);
	free(list);
	free(xff);
	return 0;
}
