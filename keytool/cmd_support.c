/*
 * cmd_support.c - support-doc: prints the /.well-known/browserid document
 * exactly as the authority builds it (vep_support_build), so an
 * administrator can publish it by hand or compare with what is served.
 *
 * Owns the default IdP page paths of the tool. Must never include a
 * private key: only public halves go into the document.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "email.h"
#include "err.h"
#include "keydir.h"
#include "kt.h"
#include "support.h"

/* The authority's IdP pages (keep in step with the server's routes). */
#define KT_DEFAULT_AUTHENTICATION "/sign-in/authenticate"
#define KT_DEFAULT_PROVISIONING "/sign-in/provision"
/* Largest "host:port" accepted for --delegate (chars). */
#define KT_DELEGATE_MAX (VEP_DOMAIN_MAX + 6)

/* A delegation target: a domain, optionally ":port" as verifiers allow for
 * testing. */
static int
kt_delegate_valid(const char *s)
{
	char host[KT_DELEGATE_MAX + 1];
	const char *colon;
	size_t n = strlen(s), i;

	if (n == 0 || n > KT_DELEGATE_MAX)
		return 0;
	memcpy(host, s, n + 1);
	if ((colon = strchr(s, ':')) != NULL) {
		host[colon - s] = '\0';
		if (colon[1] == '\0' || strlen(colon + 1) > 5)
			return 0;
		for (i = 1; colon[i] != '\0'; i++)
			if (colon[i] < '0' || colon[i] > '9')
				return 0;
	}
	return vep_domain_valid(host);
}

/* An IdP page path: absolute, printable ASCII, no spaces. */
static int
kt_path_valid(const char *p)
{
	size_t i;

	if (p[0] != '/')
		return 0;
	for (i = 0; p[i] != '\0'; i++)
		if ((unsigned char)p[i] <= ' ' || (unsigned char)p[i] >= 0x7f)
			return 0;
	return 1;
}

int
kt_cmd_support_doc(const struct kt_cmd *self, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "authentication", required_argument, NULL, 'a' },
		{ "provisioning", required_argument, NULL, 'p' },
		{ "delegate", required_argument, NULL, 'D' },
		{ "disabled", no_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *delegate = NULL;
	const char *auth = KT_DEFAULT_AUTHENTICATION, *prov = KT_DEFAULT_PROVISIONING;
	struct vep_keyset ks = { 0 };
	const vep_key *keys[VEP_KEYSET_MAX];
	char *doc = NULL;
	int c, disabled = 0, modes, r, rc;

	while ((c = getopt_long(argc, argv, "d:a:p:D:Xh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 'a': auth = optarg; break;
		case 'p': prov = optarg; break;
		case 'D': delegate = optarg; break;
		case 'X': disabled = 1; break;
		case 'h': return kt_help(self);
		default: return kt_usage_error(self, "bad option");
		}
	}
	modes = (dir != NULL) + (delegate != NULL) + disabled;
	if (modes != 1 || optind != argc)
		return kt_usage_error(self, "give exactly one of --dir, --delegate, --disabled");
	if (!kt_path_valid(auth) || !kt_path_valid(prov))
		return kt_usage_error(self, "page paths must start with '/' and "
		    "contain no spaces or control characters");
	if (disabled) {
		r = vep_support_build_disabled(&doc);
	} else if (delegate != NULL) {
		if (!kt_delegate_valid(delegate))
			return kt_usage_error(self, "'%s' is not a host name", delegate);
		r = vep_support_build_delegated(delegate, &doc);
	} else {
		r = vep_keydir_load(dir, &ks);
		if (r == VEP_ERR_PERM) {
			kt_err("%s: a key file is accessible by group or others; "
			    "fix it with: chmod 600 %s/*.pem", dir, dir);
			rc = KT_EXIT_USAGE;
			goto out;
		}
		if (r != 0) {
			kt_err("%s: %s", dir, vep_strerror(r));
			rc = KT_EXIT_USAGE;
			goto out;
		}
		r = vep_support_build(keys, vep_keyset_published(&ks, keys), auth, prov, &doc);
	}
	if (r != 0) {
		kt_err("cannot build the document: %s", vep_strerror(r));
		rc = KT_EXIT_USAGE;
		goto out;
	}
	printf("%s\n", doc);
	rc = KT_EXIT_OK;
out:
	free(doc);
	vep_keyset_clear(&ks);
	return rc;
}
