/*
 * cmd_key.c - key commands: genkey, pubkey, init, rotate, retire, keys.
 *
 * Owns how keys are created and reported to the administrator; the key
 * directory's on-disk rules are keydir.c's. Must never print private key
 * material: only public JSON and fingerprints leave this file.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "key.h"
#include "keydir.h"
#include "audit_signer.h"
#include "kt.h"
#include "state.h"
#include "util.h"

/* What genkey can make: the domain key is RS256; the rest are user keys. */
static const struct {
	const char *alg;
	enum vep_family family;
	int bits;
} kt_genkey_algs[] = {
	{ "RS256", VEP_FAMILY_RSA, 2048 },
	{ "RS128", VEP_FAMILY_RSA, 1024 },
	{ "DS128", VEP_FAMILY_DSA, 1024 },
	{ "DS256", VEP_FAMILY_DSA, 2048 },
};

int
kt_cmd_genkey(const struct kt_cmd *self, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "alg", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *alg = "RS256";
	vep_key *k = NULL;
	char fp[VEP_FINGERPRINT_BUFSZ];
	size_t i;
	int c, r, rc;

	while ((c = getopt_long(argc, argv, "o:a:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'a': alg = optarg; break;
		case 'h': return kt_help(self);
		default: return kt_usage_error(self, "bad option");
		}
	}
	if (out == NULL || optind != argc)
		return kt_usage_error(self, "--out FILE is required (and nothing else)");
	for (i = 0; i < sizeof kt_genkey_algs / sizeof kt_genkey_algs[0]; i++)
		if (strcmp(kt_genkey_algs[i].alg, alg) == 0)
			break;
	if (i == sizeof kt_genkey_algs / sizeof kt_genkey_algs[0])
		return kt_usage_error(self, "unknown algorithm '%s'", alg);
	r = kt_genkey_algs[i].family == VEP_FAMILY_RSA
	    ? vep_key_generate_rsa(kt_genkey_algs[i].bits, &k)
	    : vep_key_generate_dsa(kt_genkey_algs[i].bits, &k);
	if (r != 0) {
		kt_err("key generation failed: %s", vep_strerror(r));
		rc = KT_EXIT_USAGE;
		goto out;
	}
	if ((r = vep_key_save_private(k, out)) != 0) {
		if (r == VEP_ERR_EXISTS)
			kt_err("%s: already exists; refusing to overwrite it", out);
		else
			kt_err("%s: %s", out, vep_strerror(r));
		rc = KT_EXIT_USAGE;
		goto out;
	}
	if (vep_key_fingerprint(k, fp) == 0)
		printf("%s %s\n", alg, fp);
	rc = KT_EXIT_OK;
out:
	vep_key_free(k);
	return rc;
}

/* Parses the one common "--dir DIR" form of init/rotate/retire/keys. */
static int
kt_dir_args(const struct kt_cmd *self, int argc, char **argv, const char **dir)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*dir = NULL;
	while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': *dir = optarg; break;
		case 'h': kt_help(self); return -1;
		default: kt_usage_error(self, "bad option"); return KT_EXIT_USAGE;
		}
	}
	if (*dir == NULL || optind != argc) {
		kt_usage_error(self, "--dir DIR is required (and nothing else)");
		return KT_EXIT_USAGE;
	}
	return 0;
}

/* Loads DIR's keys, printing why when it cannot. */
static int
kt_load_dir(const char *dir, struct vep_keyset *ks)
{
	int r = vep_keydir_load(dir, ks);

	if (r == VEP_ERR_PERM)
		kt_err("%s: a key file is accessible by group or others; fix it "
		    "with: chmod 600 %s/*.pem", dir, dir);
	else if (r == VEP_ERR_NOKEY)
		kt_err("%s: no %s (create one with: vep-keytool init --dir %s)",
		    dir, VEP_KEYDIR_CURRENT, dir);
	else if (r != 0)
		kt_err("%s: %s", dir, vep_strerror(r));
	return r;
}

int
kt_cmd_pubkey(const struct kt_cmd *self, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "fingerprint", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vep_keyset ks = { 0 };
	const char *dir = NULL;
	vep_key *k = NULL;
	const vep_key *use;
	char *json = NULL, fp[VEP_FINGERPRINT_BUFSZ];
	int c, fingerprint = 0, rc;

	while ((c = getopt_long(argc, argv, "d:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 'f': fingerprint = 1; break;
		case 'h': return kt_help(self);
		default: return kt_usage_error(self, "bad option");
		}
	}
	if ((dir == NULL) == (optind + 1 != argc))
		return kt_usage_error(self, "give exactly one of FILE or --dir DIR");
	if (dir != NULL) {
		if (kt_load_dir(dir, &ks) != 0) {
			rc = KT_EXIT_USAGE;
			goto out;
		}
		use = ks.current;
	} else {
		if (kt_load_public(argv[optind], &k) != 0) {
			rc = KT_EXIT_USAGE;
			goto out;
		}
		use = k;
	}
	if (fingerprint) {
		if (vep_key_fingerprint(use, fp) != 0) {
			rc = KT_EXIT_USAGE;
			goto out;
		}
		printf("%s\n", fp);
	} else {
		if ((json = vep_key_to_json_text(use)) == NULL) {
			kt_err("out of memory");
			rc = KT_EXIT_USAGE;
			goto out;
		}
		printf("%s\n", json);
	}
	rc = KT_EXIT_OK;
out:
	free(json);
	vep_key_free(k);
	vep_keyset_clear(&ks);
	return rc;
}

/* Prints "role alg fingerprint" for one key. */
static void
kt_print_key(const char *role, const vep_key *k)
{
	char fp[VEP_FINGERPRINT_BUFSZ];

	if (vep_key_fingerprint(k, fp) != 0)
		snprintf(fp, sizeof fp, "?");
	printf("%-8s %s %s\n", role, vep_key_alg(k)->name, fp);
}

int
kt_cmd_init(const struct kt_cmd *self, int argc, char **argv)
{
	struct vep_keyset ks = { 0 };
	const char *dir;
	int r, created = 0, rc;

	if ((r = kt_dir_args(self, argc, argv, &dir)) != 0)
		return r < 0 ? KT_EXIT_OK : r;
	if ((r = vep_keydir_ensure(dir, &created)) != 0) {
		kt_err("%s: %s", dir, vep_strerror(r));
		rc = KT_EXIT_USAGE;
		goto out;
	}
	if (kt_load_dir(dir, &ks) != 0) {
		rc = KT_EXIT_USAGE;
		goto out;
	}
	fprintf(stderr, "%s\n", created ? "created a new current key" :
	    "a current key exists; left alone");
	kt_print_key("current", ks.current);
	rc = KT_EXIT_OK;
out:
	vep_keyset_clear(&ks);
	return rc;
}

int
kt_cmd_rotate(const struct kt_cmd *self, int argc, char **argv)
{
	struct vep_keyset ks = { 0 };
	const char *dir;
	char fp[VEP_FINGERPRINT_BUFSZ];
	int r, rc;

	if ((r = kt_dir_args(self, argc, argv, &dir)) != 0)
		return r < 0 ? KT_EXIT_OK : r;
	/* Load first so a permission problem is explained before we act. */
	if (kt_load_dir(dir, &ks) != 0) {
		rc = KT_EXIT_USAGE;
		goto out;
	}
	vep_keyset_clear(&ks);
	if ((r = vep_keydir_rotate(dir)) != 0) {
		kt_err("%s: rotation failed: %s", dir, vep_strerror(r));
		rc = KT_EXIT_USAGE;
		goto out;
	}
	if (kt_load_dir(dir, &ks) != 0) {
		rc = KT_EXIT_USAGE;
		goto out;
	}
	/* stdout is the new fingerprint alone, for scripts. */
	if (vep_key_fingerprint(ks.current, fp) != 0) {
		rc = KT_EXIT_USAGE;
		goto out;
	}
	printf("%s\n", fp);
	if (ks.previous != NULL && vep_key_fingerprint(ks.previous, fp) == 0)
		fprintf(stderr, "previous key (still published): %s\n", fp);
	rc = KT_EXIT_OK;
out:
	vep_keyset_clear(&ks);
	return rc;
}

int
kt_cmd_prepare(const struct kt_cmd *self, int argc, char **argv)
{
	struct vep_keyset ks = { 0 };
	const char *dir;
	int r, rc;

	if ((r = kt_dir_args(self, argc, argv, &dir)) != 0)
		return r < 0 ? KT_EXIT_OK : r;
	if (kt_load_dir(dir, &ks) != 0)
		return KT_EXIT_USAGE;
	vep_keyset_clear(&ks);
	if ((r = vep_keydir_prepare(dir)) != 0) {
		kt_err("%s: %s", dir, r == VEP_ERR_EXISTS ?
		    "there is a next key already (rotate to switch to it)" : vep_strerror(r));
		return KT_EXIT_USAGE;
	}
	if (kt_load_dir(dir, &ks) != 0)
		return KT_EXIT_USAGE;
	rc = KT_EXIT_USAGE;
	if (ks.next != NULL) {
		kt_print_key("next", ks.next);
		rc = KT_EXIT_OK;
	}
	vep_keyset_clear(&ks);
	return rc;
}

/* Whether certificates the key signed may still be valid, from the
 * authority's audit trail in store (NULL: not given): 0 when none can be
 * (or --force), else KT_EXIT_INVALID or KT_EXIT_USAGE after saying why. */
static int
retire_allowed(const vep_key *previous, const struct kt_store *store, int force)
{
	char fp[VEP_FINGERPRINT_BUFSZ], until[64];
	int64_t exp_ms = 0;

	if (force)
		return 0;
	if (store == NULL) {
		kt_err("cannot tell whether certificates signed by the previous key are still "
		    "valid: give --state DIR (the authority's state_dir) or --database "
		    "CONNINFO (its PostgreSQL store), or --force");
		return KT_EXIT_USAGE;
	}
	if (vep_key_fingerprint(previous, fp) != 0) {
		kt_err("cannot compute the previous key's fingerprint");
		return KT_EXIT_USAGE;
	}
	if (kt_audit_signer_expiry(store, fp, &exp_ms) != 0)
		return KT_EXIT_USAGE;
	if (exp_ms <= vep_now_ms())
		return 0;
	kt_iso8601(exp_ms, until);
	kt_err("certificates signed by the previous key %s are valid until %s: verifiers "
	    "need it published until then; retire after that, or with --force", fp, until);
	return KT_EXIT_INVALID;
}

int
kt_cmd_retire(const struct kt_cmd *self, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "state", required_argument, NULL, KT_STORE_OPT_STATE },
		{ "database", required_argument, NULL, KT_STORE_OPT_DATABASE },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vep_keyset ks = { 0 };
	struct kt_store store = { 0 };
	const struct kt_store *asked;
	const char *dir = NULL;
	int c, force = 0, r, rc;

	while ((c = getopt_long(argc, argv, "d:s:D:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case KT_STORE_OPT_STATE: store.state_dir = optarg; break;
		case KT_STORE_OPT_DATABASE: store.conninfo = optarg; break;
		case 'f': force = 1; break;
		case 'h': kt_help(self); return KT_EXIT_OK;
		default: kt_usage_error(self, "bad option"); return KT_EXIT_USAGE;
		}
	}
	if (dir == NULL || optind != argc)
		return kt_usage_error(self, "--dir DIR is required");
	/* Neither is fine with --force (or when there is nothing to retire);
	 * both are always a mistake. */
	asked = store.state_dir != NULL || store.conninfo != NULL ? &store : NULL;
	if (asked != NULL && kt_store_check("retire", asked) != 0)
		return KT_EXIT_USAGE;
	if (kt_load_dir(dir, &ks) != 0) {
		rc = KT_EXIT_USAGE;
		goto out;
	}
	if (ks.previous == NULL) {
		fprintf(stderr, "no previous key to retire\n");
		rc = KT_EXIT_OK;
		goto out;
	}
	if ((rc = retire_allowed(ks.previous, asked, force)) != 0)
		goto out;
	if ((r = vep_keydir_retire(dir)) != 0) {
		kt_err("%s: %s", dir, vep_strerror(r));
		rc = KT_EXIT_USAGE;
		goto out;
	}
	kt_print_key("retired", ks.previous);
	rc = KT_EXIT_OK;
out:
	vep_keyset_clear(&ks);
	return rc;
}

int
kt_cmd_keys(const struct kt_cmd *self, int argc, char **argv)
{
	struct vep_keyset ks = { 0 };
	const char *dir;
	int r;

	if ((r = kt_dir_args(self, argc, argv, &dir)) != 0)
		return r < 0 ? KT_EXIT_OK : r;
	if (kt_load_dir(dir, &ks) != 0)
		return KT_EXIT_USAGE;
	kt_print_key("current", ks.current);
	if (ks.next != NULL)
		kt_print_key("next", ks.next);
	if (ks.previous != NULL)
		kt_print_key("previous", ks.previous);
	vep_keyset_clear(&ks);
	return KT_EXIT_OK;
}
