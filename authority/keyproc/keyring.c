/*
 * keyproc/keyring.c - the privileged side's keys and the public bundle (contract in
 * keyproc/keyring.h).
 */
#include "keyproc/keyring.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "auth/account.h"
#include "core/domain.h"
#include "err.h"
#include "key.h"
#include "secmem.h"
#include "edge/tls.h"

/* Signs with k and verifies with the public key as published (parsed back
 * from its BrowserID JSON): a private key that does not sign for its public
 * half (damaged parameters, a mixed-up file) is refused before anyone is
 * given a certificate nobody can verify. Returns 0, VEP_ERR_BADSIG or
 * another VEP_ERR_*. */
static int
key_selftest(const vep_key *k)
{
	static const uint8_t msg[] = "vep-authority key self-test";
	vep_key *pub = NULL;
	uint8_t *sig = NULL;
	size_t siglen = 0;
	json_t *j;
	int rc;

	if ((j = vep_key_to_json(k)) == NULL)
		return VEP_ERR_NOMEM;
	rc = vep_key_from_json(j, &pub);
	json_decref(j);
	if (rc == 0)
		rc = vep_key_sign(k, msg, sizeof(msg) - 1, &sig, &siglen);
	if (rc == 0)
		rc = vep_key_verify(pub, msg, sizeof(msg) - 1, sig, siglen);
	free(sig);
	vep_key_free(pub);
	return rc;
}

/* key_selftest for every key the set publishes. */
static int
keyset_selftest(const struct vep_keyset *ks)
{
	const vep_key *keys[VEP_KEYSET_MAX];
	size_t i, n = vep_keyset_published(ks, keys);
	int rc;

	for (i = 0; i < n; i++)
		if ((rc = key_selftest(keys[i])) != 0)
			return rc;
	return VEP_OK;
}

/* The public JSON of k, or JSON null for no key (new reference). */
static json_t *
key_or_null(const vep_key *k)
{
	return k != NULL ? vep_key_to_json(k) : json_null();
}

/* The alias table at path as a JSON string, or JSON null without one
 * (new reference). */
static int
aliases_string(const char *path, json_t **out, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if (path == NULL) {
		*out = json_null();
		return VEP_OK;
	}
	if ((rc = account_read_aliases(path, &text, &len, err, errlen)) != 0)
		return rc;
	if ((*out = json_stringn_nocheck(text, len)) == NULL) {
		snprintf(err, errlen, "out of memory");
		rc = VEP_ERR_NOMEM;
	}
	free(text);
	return rc;
}

/* When DIR's current key file was last written (a rotation writes it), in
 * seconds since the epoch; 0 when it cannot be told. For the metrics. */
static long long
key_file_time(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	int n = snprintf(path, sizeof(path), "%s/%s", dir, VEP_KEYDIR_CURRENT);

	if (n < 0 || (size_t)n >= sizeof(path) || stat(path, &st) != 0)
		return 0;
	return (long long)st.st_mtime;
}

/* Whether dir, or its current.pem, does not exist: the domain was never
 * given a key, which vep-keytool init does (not a damaged or unreadable
 * key, which the load's own error names). */
static int
no_key_yet(const char *dir)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/current.pem", dir);
	return (stat(dir, &st) != 0 && errno == ENOENT) ||
	    (stat(path, &st) != 0 && errno == ENOENT);
}

/* One domain's keys (loaded, self-tested) and its bundle entry. */
static int
load_domain(const struct config *cfg, size_t i, struct vep_keyset *ks,
    char fp[VEP_FINGERPRINT_BUFSZ], json_t *domains, char *err, size_t errlen)
{
	const struct config_domain *cd = &cfg->domains[i];
	const char *file = cfg->path != NULL ? cfg->path : "(built in)";
	json_t *entry = NULL, *aliases = NULL;
	struct vep_keydir_fault fault;
	char msg[512];
	int rc;

	if ((rc = vep_keydir_load_explained(cd->key_dir, ks, &fault)) != 0 &&
	    no_key_yet(cd->key_dir)) {
		snprintf(err, errlen, "%s:%u: [domain %s] key_dir '%s': no key there (no "
		    "current.pem); create it with: vep-keytool init --dir %s", file,
		    cd->key_dir_line, cd->name, cd->key_dir, cd->key_dir);
		return rc;
	}
	if (rc != 0) {
		vep_keydir_fault_text(rc, &fault, msg, sizeof(msg));
		snprintf(err, errlen, "%s:%u: [domain %s] key_dir '%s': %s", file, cd->key_dir_line,
		    cd->name, cd->key_dir, msg);
		return rc;
	}
	if ((rc = keyset_selftest(ks)) == 0)
		rc = vep_key_fingerprint(ks->current, fp);
	if (rc != 0) {
		snprintf(err, errlen, "%s:%u: [domain %s] key_dir '%s': %s", file, cd->key_dir_line,
		    cd->name, cd->key_dir, rc == VEP_ERR_BADSIG ?
		    "key self-test failed: a signature does not verify with the key's public "
		    "half (damaged or mismatched key file)" : vep_strerror(rc));
		return rc;
	}
	if ((rc = aliases_string(cd->account_aliases, &aliases, msg, sizeof(msg))) != 0) {
		snprintf(err, errlen, "%s:%u: [domain %s] account_aliases: %s", file,
		    cd->account_aliases_line, cd->name, msg);
		return rc;
	}
	entry = json_pack("{s:o, s:o, s:o, s:o, s:I}", "current", key_or_null(ks->current),
	    "next", key_or_null(ks->next), "previous", key_or_null(ks->previous),
	    "aliases", aliases, "current_since", (json_int_t)key_file_time(cd->key_dir));
	if (entry == NULL || json_array_append_new(domains, entry) != 0) {
		snprintf(err, errlen, "out of memory");
		return VEP_ERR_NOMEM;
	}
	return VEP_OK;
}

static int
tls_strings(const struct config *cfg, json_t *bundle, char *err, size_t errlen)
{
	const char *file = cfg->path != NULL ? cfg->path : "(built in)";
	char *cert = NULL, *key = NULL, msg[512];
	size_t cert_len = 0, key_len = 0;
	int rc = VEP_OK;

	if ((cfg->tls_cert == NULL) != (cfg->tls_key == NULL)) {
		snprintf(err, errlen, "%s: keys 'tls_cert' and 'tls_key': set both or neither",
		    file);
		return VEP_ERR_INVALID;
	}
	if (cfg->tls_cert == NULL)
		return json_object_set_new(bundle, "tls_cert", json_null()) == 0 &&
		    json_object_set_new(bundle, "tls_key", json_null()) == 0 ?
		    VEP_OK : VEP_ERR_NOMEM;
	if ((rc = tls_read_files(cfg->tls_cert, cfg->tls_key, &cert, &cert_len, &key, &key_len,
	    msg, sizeof(msg))) != 0) {
		/* tls_read_files says "TLS key ..." or "TLS certificate ...". */
		int is_key = strncmp(msg, "TLS key", 7) == 0;
		snprintf(err, errlen, "%s:%u: key '%s': %s", file,
		    config_key_line(cfg, is_key ? "tls_key" : "tls_cert"),
		    is_key ? "tls_key" : "tls_cert", msg);
		return rc;
	}
	if (json_object_set_new(bundle, "tls_cert", json_stringn_nocheck(cert, cert_len)) != 0 ||
	    json_object_set_new(bundle, "tls_key", json_stringn_nocheck(key, key_len)) != 0) {
		snprintf(err, errlen, "out of memory");
		rc = VEP_ERR_NOMEM;
	}
	vep_memzero(key, key_len);
	free(key);
	free(cert);
	return rc;
}

int
keyring_load(const char *config_path, config_maker_fn make_cfg, void *arg,
    struct keyring **out, json_t **bundle, char *err, size_t errlen)
{
	struct keyring *kr = NULL;
	struct domain_set *check = NULL;
	json_t *b = NULL, *domains;
	char *text = NULL;
	size_t len = 0, i;
	int rc = VEP_ERR_NOMEM;

	*out = NULL;
	*bundle = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if (config_path != NULL &&
	    (rc = config_read_file(config_path, &text, &len, err, errlen)) != 0)
		goto out;
	if ((kr = calloc(1, sizeof(*kr))) == NULL ||
	    (b = json_pack("{s:o, s:[]}", "config", text != NULL ?
	    json_stringn_nocheck(text, len) : json_null(), "domains")) == NULL) {
		snprintf(err, errlen, "out of memory");
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	if ((rc = make_cfg(arg, text, len, &kr->cfg, err, errlen)) != 0)
		goto out;
	rc = VEP_ERR_NOMEM;
	if ((kr->sets = calloc(kr->cfg->ndomains + 1, sizeof(*kr->sets))) == NULL ||
	    (kr->fingerprints = calloc(kr->cfg->ndomains + 1, VEP_FINGERPRINT_BUFSZ)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	domains = json_object_get(b, "domains");
	for (i = 0; i < kr->cfg->ndomains; i++) {
		kr->n = i + 1;
		if ((rc = load_domain(kr->cfg, i, &kr->sets[i], kr->fingerprints[i], domains, err,
		    errlen)) != 0)
			goto out;
	}
	if ((rc = tls_strings(kr->cfg, b, err, errlen)) != 0)
		goto out;
	/* What the network process will build, built here first: a bundle
	 * it could not use is refused while the old keys are still in use. */
	if ((rc = domain_set_from_bundle(b, make_cfg, arg, &check, err, errlen)) != 0)
		goto out;
	*out = kr;
	*bundle = b;
	kr = NULL;
	b = NULL;
out:
	domain_set_free(check);
	json_decref(b);
	keyring_free(kr);
	free(text);
	return rc;
}

const vep_key *
keyring_find(const struct keyring *kr, const char *fingerprint, const char *domain,
    const char **issuer)
{
	size_t i;

	/* Several domains may share a key (those delegating to one login
	 * host do): the certified address's domain picks the row. */
	for (i = 0; kr != NULL && fingerprint != NULL && i < kr->n; i++) {
		if (strcmp(kr->fingerprints[i], fingerprint) != 0 ||
		    (domain != NULL && strcasecmp(kr->cfg->domains[i].name, domain) != 0))
			continue;
		if (issuer != NULL)
			*issuer = config_domain_issuer(&kr->cfg->domains[i]);
		return kr->sets[i].current;
	}
	return NULL;
}

/* The signer slots of a keyring: row i's current key, slot j, at
 * s[i * nslots + j]. */
struct keyring_signers {
	size_t nslots;
	vep_key_signer *s[];
};

/* kr's table, made (all slots empty) when there is none yet. Threads may
 * race here on the first signatures after a load: the one whose
 * compare-and-swap publishes its table wins, the others free theirs and
 * use the winner's (acquire: they then see its empty slots). */
static struct keyring_signers *
signers_table(struct keyring *kr, size_t nslots)
{
	struct keyring_signers *t, *expected = NULL;

	if ((t = atomic_load_explicit(&kr->signers, memory_order_acquire)) != NULL)
		return t;
	if (kr->n > (SIZE_MAX - sizeof(*t)) / sizeof(t->s[0]) / nslots ||
	    (t = calloc(1, sizeof(*t) + kr->n * nslots * sizeof(t->s[0]))) == NULL)
		return NULL;
	t->nslots = nslots;
	if (!atomic_compare_exchange_strong_explicit(&kr->signers, &expected, t,
	    memory_order_acq_rel, memory_order_acquire)) {
		free(t);
		t = expected;
	}
	return t;
}

int
keyring_signer(struct keyring *kr, const vep_key *key, size_t slot, size_t nslots,
    vep_key_signer **out)
{
	struct keyring_signers *t;
	vep_key_signer **sp;
	size_t i;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (out == NULL || key == NULL || nslots == 0 || slot >= nslots) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	for (i = 0; kr != NULL && i < kr->n && kr->sets[i].current != key; i++)
		;
	if (kr == NULL || i == kr->n) {
		rc = VEP_ERR_NOKEY;
		goto out;
	}
	if ((t = signers_table(kr, nslots)) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	if (t->nslots != nslots) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	/* This slot is the calling thread's alone (keyring.h): no lock. */
	sp = &t->s[i * nslots + slot];
	if (*sp == NULL && (rc = vep_key_signer_new(key, sp)) != 0)
		goto out;
	*out = *sp;
	rc = VEP_OK;
out:
	return rc;
}

void
keyring_free(struct keyring *kr)
{
	struct keyring_signers *t;
	size_t i;

	if (kr == NULL)
		return;
	/* The signers hold copies of the keys below: they go with them. */
	if ((t = atomic_load_explicit(&kr->signers, memory_order_acquire)) != NULL) {
		for (i = 0; i < kr->n * t->nslots; i++)
			vep_key_signer_free(t->s[i]);
		free(t);
	}
	for (i = 0; i < kr->n; i++)
		vep_keyset_clear(&kr->sets[i]);
	free(kr->sets);
	free(kr->fingerprints);
	config_free(kr->cfg);
	free(kr);
}
