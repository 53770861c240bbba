/*
 * remote/discover.c - the delegation walk (see remote/discover.h).
 */
#include "remote/discover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "email.h"
#include "err.h"

/* 0 when host may be the next hop after the n hosts of chain, else
 * VEP_ERR_DELEGATION with why. */
static int
next_hop_ok(char *const *chain, size_t n, const char *host, char *why, size_t whylen)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcasecmp(chain[i], host) == 0) {
			snprintf(why, whylen, "delegation loop at %s", host);
			return VEP_ERR_DELEGATION;
		}
	}
	if (n == VEP_MAX_DELEGATIONS + 1) {
		snprintf(why, whylen, "more than %d delegations", VEP_MAX_DELEGATIONS);
		return VEP_ERR_DELEGATION;
	}
	return 0;
}

int
discover_walk(const char *email_domain, discover_get_fn get, void *arg,
    struct vep_support **doc, char **issuer, char *why, size_t whylen)
{
	char *chain[VEP_MAX_DELEGATIONS + 1] = { NULL };
	struct vep_support *s = NULL;
	char *text = NULL;
	size_t len = 0, n = 0, i;
	int rc;

	*doc = NULL;
	*issuer = NULL;
	if ((chain[n++] = strdup(email_domain)) == NULL)
		return VEP_ERR_NOMEM;
	for (;;) {
		const char *host = chain[n - 1];

		if ((rc = get(arg, (int)n - 1, host, &text, &len, why, whylen)) != 0)
			goto out;
		rc = vep_support_parse(text, len, &s);
		free(text);
		text = NULL;
		if (rc != 0) {
			snprintf(why, whylen, "support document of %s: %s", host, vep_strerror(rc));
			goto out;
		}
		if (s->disabled) {
			snprintf(why, whylen, "%s has disabled BrowserID", host);
			rc = VEP_ERR_DISABLED;
			goto out;
		}
		if (s->authority == NULL)
			break;
		if ((rc = next_hop_ok(chain, n, s->authority, why, whylen)) != 0)
			goto out;
		if ((chain[n] = strdup(s->authority)) == NULL) {
			rc = VEP_ERR_NOMEM;
			goto out;
		}
		vep_domain_lower(chain[n++]);
		vep_support_free(s);
		s = NULL;
	}
	if (s->nkeys == 0) {
		snprintf(why, whylen, "support document of %s has no key", chain[n - 1]);
		rc = VEP_ERR_INVALID;
		goto out;
	}
	*issuer = chain[n - 1];
	chain[n - 1] = NULL;
	*doc = s;
	s = NULL;
	rc = 0;
out:
	for (i = 0; i < n; i++)
		free(chain[i]);
	vep_support_free(s);
	free(text);
	return rc;
}
