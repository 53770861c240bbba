/*
 * seedgen.c - writes the seed corpus of every fuzz harness: valid inputs
 * made with libvep's own signers and fresh keys, Mozilla's vectors, and
 * near-valid variants (one rule broken each), so the fuzzer starts from
 * inputs that reach deep into each parser.
 *
 * Usage: fuzz_seedgen CORPUS_DIR [VECTORS_JSON]   (run by seed.sh)
 * Files are named after what they hold; rerunning overwrites the signed
 * ones (fresh keys, so their bytes change) and is otherwise idempotent.
 * Never part of the test run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/bn.h>
#include <openssl/dsa.h>
#include <openssl/evp.h>

#include "assertion.h"
#include "b64url.h"
#include "cert.h"
#include "support.h"

#define T_IAT 1700000000000LL
#define T_EXP (T_IAT + 3600 * 1000LL)

static const char *root;

static void
put(const char *harness, const char *name, const char *text)
{
	char path[4096];
	if (text == NULL) {
		fprintf(stderr, "seedgen: nothing for %s/%s\n", harness, name);
		exit(1);
	}
	snprintf(path, sizeof path, "%s/%s", root, harness);
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof path, "%s/%s/%s", root, harness, name);
	FILE *f = fopen(path, "wb");
	if (f == NULL || fwrite(text, 1, strlen(text), f) != strlen(text) || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

static char *
sign_json(const vep_key *k, const char *json)
{
	json_error_t e;
	json_t *p = json_loads(json, 0, &e);
	char *out = NULL;
	if (p == NULL || vep_jws_sign(k, p, &out) != 0)
		out = NULL;
	json_decref(p);
	return out;
}

static char *
cert_for(const vep_key *dk, const vep_key *uk, const char *iss, const char *email)
{
	struct vep_cert_params p = { iss, email, uk, T_IAT, T_EXP, NULL };
	char *out = NULL;
	return vep_cert_sign(dk, &p, &out) == 0 ? out : NULL;
}

static char *
assertion_for(const vep_key *uk, const char *aud)
{
	char *out = NULL;
	return vep_assertion_sign(uk, aud, T_IAT + 120000, &out) == 0 ? out : NULL;
}

static char *
join(const char *a, const char *b)
{
	char *out = malloc(strlen(a) + strlen(b) + 2);
	sprintf(out, "%s~%s", a, b);
	return out;
}

/* Replaces the first occurrence of from by to (new string). */
static char *
subst(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	if (at == NULL)
		return strdup(s);
	char *out = malloc(strlen(s) + strlen(to) + 1);
	sprintf(out, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
	return out;
}

static void
seed_email(void)
{
	static const char *const seeds[][2] = {
		{ "valid", "alice@example.com" },
		{ "valid-atext", "a!#$%&'*+/=?^_`{|}~-b@sub.example.org" },
		{ "valid-upper-domain", "Alice.Smith@EXAMPLE.Com" },
		{ "bad-double-dot", "al..ice@example.com" },
		{ "bad-two-at", "a@b@example.com" },
		{ "bad-ip-literal", "alice@[127.0.0.1]" },
		{ "bad-single-label", "alice@localhost" },
		{ "bad-utf8", "al\xc3\xa9@example.com" },
		{ "bad-hyphen", "alice@-example.com" },
		{ "host-port", "localhost:10001" },
		{ "host-ipv4", "127.0.0.1" },
		{ "audience-pair", "https://rp.example\nhttps://RP.example:443/path" },
		{ "audience-pair-ipv6", "https://[::1]:8443\nhttps://[::1]:8443" },
		{ "audience-pair-ports", "http://localhost:10001\nhttp://localhost:10002" },
		{ "audience-userinfo", "https://user@rp.example\nhttps://rp.example" },
		{ "audience-rp-bare", "rp.example\nhttp://rp.example" },
		{ "audience-rp-bare-port", "rp.example:8080\nhttp://rp.example:8080/" },
		{ "audience-rp-path", "https://rp.example/path\nhttps://rp.example" },
		{ "audience-rp-slash", "https://rp.example/\nhttps://rp.example/a?b#c" },
	};
	for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
		put("email", seeds[i][0], seeds[i][1]);
}

/* BIGNUM -> new string: decimal, or lowercase hex without a leading zero
 * (free()); NULL on failure. */
static char *
bn_text(const BIGNUM *bn, int hex)
{
	char *s = hex ? BN_bn2hex(bn) : BN_bn2dec(bn), *out = NULL;
	if (s == NULL)
		return NULL;
	char *p = s;
	if (hex) {
		for (char *c = s; *c; c++)
			if (*c >= 'A' && *c <= 'F')
				*c = (char)(*c - 'A' + 'a');
		while (p[0] == '0' && p[1] != '\0')
			p++;
	}
	out = strdup(p);
	OPENSSL_free(s);
	return out;
}

static char *
rsa_text(const BIGNUM *n, const BIGNUM *e)
{
	char *ns = bn_text(n, 0), *es = bn_text(e, 0), *out = NULL;
	json_t *o = ns && es ?
	    json_pack("{s:s,s:s,s:s}", "algorithm", "RS", "n", ns, "e", es) : NULL;
	if (o != NULL)
		out = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	free(ns);
	free(es);
	return out;
}

static char *
dsa_text(const BIGNUM *y, const BIGNUM *p, const BIGNUM *q, const BIGNUM *g)
{
	char *ys = bn_text(y, 1), *ps = bn_text(p, 1), *qs = bn_text(q, 1), *gs = bn_text(g, 1);
	char *out = NULL;
	json_t *o = ys && ps && qs && gs ? json_pack("{s:s,s:s,s:s,s:s,s:s}", "algorithm", "DS",
	    "y", ys, "p", ps, "q", qs, "g", gs) : NULL;
	if (o != NULL)
		out = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	free(ys);
	free(ps);
	free(qs);
	free(gs);
	return out;
}

/* A number member of a key's canonical JSON as a new BIGNUM. */
static BIGNUM *
key_bn(const vep_key *k, const char *name, int hex)
{
	json_t *o = vep_key_to_json(k);
	const char *s = o ? json_string_value(json_object_get(o, name)) : NULL;
	BIGNUM *bn = NULL;
	if (s == NULL || (hex ? BN_hex2bn(&bn, s) : BN_dec2bn(&bn, s)) == 0)
		bn = NULL;
	json_decref(o);
	return bn;
}

/* Keys that anyone could sign with, each refused by the key policy (key.h):
 * one class each, near an honest key so the parser gets far. */
static void
seed_unsafe_keys(const vep_key *rsa2048, const vep_key *dsa1024,
    const vep_key *dsa2048)
{
	BN_CTX *ctx = BN_CTX_new();
	BIGNUM *n = key_bn(rsa2048, "n", 0), *e = BN_new(), *t = BN_new(), *u = BN_new();
	char *v;
	if (ctx == NULL || n == NULL || e == NULL || t == NULL || u == NULL ||
	    !BN_set_word(e, 65537)) {
		fprintf(stderr, "seedgen: unsafe keys\n");
		exit(1);
	}
	/* RSA */
	BN_sub(t, n, BN_value_one());
	put("key_json", "unsafe-rsa-n-even", v = rsa_text(t, e));
	free(v);
	BN_copy(t, n);
	BN_sub_word(t, BN_mod_word(t, 6));
	BN_add_word(t, 3);
	put("key_json", "unsafe-rsa-n-divisible-by-3", v = rsa_text(t, e));
	free(v);
	BN_generate_prime_ex(t, 2048, 0, NULL, NULL, NULL);
	put("key_json", "unsafe-rsa-n-prime", v = rsa_text(t, e));
	free(v);
	BN_copy(u, t);
	BN_sub_word(u, 2);
	put("key_json", "unsafe-rsa-n-prime-e-n-minus-2", v = rsa_text(t, u));
	free(v);
	BN_copy(u, n);
	BN_sub_word(u, 2);
	put("key_json", "unsafe-rsa-e-n-minus-2", v = rsa_text(n, u));
	free(v);
	BN_set_word(u, 1);
	put("key_json", "unsafe-rsa-e-one", v = rsa_text(n, u));
	free(v);
	BN_set_word(u, 0xffffffffUL);
	BN_add_word(u, 2);
	put("key_json", "unsafe-rsa-e-over-2-32", v = rsa_text(n, u));
	free(v);
	/* DSA, in both published groups */
	const vep_key *dk[2] = { dsa1024, dsa2048 };
	for (int i = 0; i < 2; i++) {
		BIGNUM *y = key_bn(dk[i], "y", 1), *p = key_bn(dk[i], "p", 1);
		BIGNUM *q = key_bn(dk[i], "q", 1), *g = key_bn(dk[i], "g", 1);
		char name[64];
		const char *sz = i == 0 ? "ds128" : "ds256";
		if (!y || !p || !q || !g) {
			fprintf(stderr, "seedgen: unsafe DSA keys\n");
			exit(1);
		}
		BN_sub(t, p, BN_value_one());
		snprintf(name, sizeof name, "unsafe-%s-y-p-minus-1", sz);
		put("key_json", name, v = dsa_text(t, p, q, g));
		free(v);
		snprintf(name, sizeof name, "unsafe-%s-g-p-minus-1", sz);
		put("key_json", name, v = dsa_text(y, p, q, t));
		free(v);
		snprintf(name, sizeof name, "unsafe-%s-y-one", sz);
		put("key_json", name, v = dsa_text(BN_value_one(), p, q, g));
		free(v);
		BN_add_word(t, 2);       /* p + 1 */
		snprintf(name, sizeof name, "unsafe-%s-y-p-plus-1", sz);
		put("key_json", name, v = dsa_text(t, p, q, g));
		free(v);
		BN_add_word(t, 1);       /* p + 2: odd, composite */
		snprintf(name, sizeof name, "unsafe-%s-p-composite", sz);
		put("key_json", name, v = dsa_text(y, t, q, g));
		free(v);
		BN_copy(u, q);
		BN_add_word(u, 1);
		snprintf(name, sizeof name, "unsafe-%s-q-even", sz);
		put("key_json", name, v = dsa_text(y, p, u, g));
		free(v);
		BN_copy(u, y);           /* y + 1: outside the subgroup */
		BN_add_word(u, 1);
		snprintf(name, sizeof name, "unsafe-%s-y-not-in-subgroup", sz);
		put("key_json", name, v = dsa_text(u, p, q, g));
		free(v);
		BN_free(y);
		BN_free(p);
		BN_free(q);
		BN_free(g);
	}
	/* issue 11's forgery: q even, p composite, g = y = p - 1 */
	BN_zero(t);
	BN_set_bit(t, 1023);             /* p - 1 */
	BN_copy(u, t);
	BN_add_word(u, 1);               /* p */
	BN_zero(e);
	BN_set_bit(e, 159);
	BN_add_word(e, 2);               /* q */
	put("key_json", "unsafe-dsa-forgery-even-q", v = dsa_text(t, u, e, t));
	free(v);
	/* a sound group of OpenSSL's making, but not a published one */
	EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_from_name(NULL, "DSA", NULL), *kc = NULL;
	EVP_PKEY *dom = NULL, *pk = NULL;
	BIGNUM *y = NULL, *p = NULL, *q = NULL, *g = NULL;
	if (pc == NULL || EVP_PKEY_paramgen_init(pc) != 1 ||
	    EVP_PKEY_CTX_set_dsa_paramgen_bits(pc, 1024) != 1 ||
	    EVP_PKEY_CTX_set_dsa_paramgen_q_bits(pc, 160) != 1 ||
	    EVP_PKEY_paramgen(pc, &dom) != 1 ||
	    (kc = EVP_PKEY_CTX_new_from_pkey(NULL, dom, NULL)) == NULL ||
	    EVP_PKEY_keygen_init(kc) != 1 || EVP_PKEY_keygen(kc, &pk) != 1 ||
	    !EVP_PKEY_get_bn_param(pk, "pub", &y) || !EVP_PKEY_get_bn_param(pk, "p", &p) ||
	    !EVP_PKEY_get_bn_param(pk, "q", &q) || !EVP_PKEY_get_bn_param(pk, "g", &g)) {
		fprintf(stderr, "seedgen: DSA parameters\n");
		exit(1);
	}
	put("key_json", "unsafe-ds128-other-group", v = dsa_text(y, p, q, g));
	free(v);
	BN_free(y);
	BN_free(p);
	BN_free(q);
	BN_free(g);
	EVP_PKEY_free(pk);
	EVP_PKEY_free(dom);
	EVP_PKEY_CTX_free(kc);
	EVP_PKEY_CTX_free(pc);
	BN_free(n);
	BN_free(e);
	BN_free(t);
	BN_free(u);
	BN_CTX_free(ctx);
}

static void
seed_keys(const vep_key *rsa2048, const vep_key *rsa1024, const vep_key *dsa1024,
    const vep_key *dsa2048)
{
	char *r2 = vep_key_to_json_text(rsa2048), *r1 = vep_key_to_json_text(rsa1024);
	char *d1 = vep_key_to_json_text(dsa1024), *d2 = vep_key_to_json_text(dsa2048);
	put("key_json", "rs256", r2);
	put("key_json", "rs128", r1);
	put("key_json", "ds128", d1);
	put("key_json", "ds256", d2);
	char *v;
	put("key_json", "bad-extra-member", v = subst(r2, "{", "{\"x\":1,"));
	free(v);
	put("key_json", "bad-e-leading-zero", v = subst(r2, "\"e\":\"", "\"e\":\"0"));
	free(v);
	put("key_json", "bad-e-even", v = subst(r2, "\"e\":\"65537\"", "\"e\":\"65536\""));
	free(v);
	put("key_json", "bad-algorithm", v = subst(r2, "\"RS\"", "\"EC\""));
	free(v);
	put("key_json", "bad-dsa-upper-algorithm", v = subst(d1, "\"DS\"", "\"ds\""));
	free(v);
	put("key_json", "bad-dsa-g-one", v = subst(d1, "\"g\":\"", "\"g\":\"1\",\"x\":\""));
	free(v);
	put("key_json", "bad-rs64", "{\"algorithm\":\"RS\",\"n\":\""
	    "123456789012345678901234567890123456789012345678901234567890"
	    "123456789012345678901234567890123456789012345678901234567890"
	    "1234567890123456789012345678901\",\"e\":\"65537\"}");
	put("key_json", "bad-duplicate",
	    "{\"algorithm\":\"RS\",\"algorithm\":\"RS\",\"n\":\"187\",\"e\":\"3\"}");
	put("key_json", "bad-number-types", "{\"algorithm\":\"RS\",\"n\":187,\"e\":3}");
	free(r2);
	free(r1);
	free(d1);
	free(d2);
}

static void
seed_tokens(const vep_key *dk, const vep_key *uk_rsa, const vep_key *uk_dsa,
    const vep_key *uk_dsa256)
{
	char *c_rsa = cert_for(dk, uk_rsa, "example.com", "alice@example.com");
	char *c_dsa = cert_for(dk, uk_dsa, "example.com", "bob@example.com");
	char *c_ds256 = cert_for(dk, uk_dsa256, "localhost:10001", "carol@example.org");
	char *a_rsa = assertion_for(uk_rsa, "https://rp.example");
	char *a_dsa = assertion_for(uk_dsa, "http://localhost:10001");
	char *a_ds256 = assertion_for(uk_dsa256, "https://[::1]:8443");
	char *v;

	put("jws", "cert-rs256", c_rsa);
	put("jws", "assertion-rs128", a_rsa);
	put("jws", "assertion-ds128", a_dsa);
	put("jws", "assertion-ds256", a_ds256);
	put("jws", "bad-two-parts", v = strndup(c_rsa, (size_t)(strrchr(c_rsa, '.') - c_rsa)));
	free(v);
	put("jws", "bad-alg-none", "eyJhbGciOiJub25lIn0.eyJhIjoxfQ.");
	put("jws", "bad-padding", "eyJhbGciOiJSUzI1NiJ9.e30=.AAAA");
	put("jws", "b64-raw", "SGVsbG8gd29ybGQ");

	put("cert", "rs256-with-rs128-key", c_rsa);
	put("cert", "rs256-with-ds128-key", c_dsa);
	put("cert", "rs256-with-ds256-key-hostport", c_ds256);
	put("cert", "no-iat", v = sign_json(dk, "{\"iss\":\"example.com\",\"exp\":1,"
	    "\"public-key\":{\"algorithm\":\"RS\",\"n\":\"187\",\"e\":\"3\"},"
	    "\"principal\":{\"email\":\"a@example.com\"}}"));
	free(v);
	put("cert", "bad-principal", v = sign_json(dk, "{\"iss\":\"example.com\",\"exp\":1,"
	    "\"principal\":\"a@example.com\"}"));
	free(v);
	put("cert", "bad-exp-string", v = sign_json(dk, "{\"iss\":\"example.com\",\"exp\":\"1\"}"));
	free(v);
	put("cert", "assertion-not-cert", a_rsa);
	char *kj = vep_key_to_json_text(uk_dsa), json[8192];
	snprintf(json, sizeof json, "{\"public-key\":%s,\"principal\":{\"email\":\"u@x.example\"},"
	    "\"iat\":1342634355913,\"exp\":1342634361913,\"iss\":\"127.0.0.1\"}", kj);
	put("cert", "mozilla-order-ipv4-issuer", v = sign_json(dk, json));
	free(v);
	snprintf(json, sizeof json, "{\"iss\":\"example.com\",\"iat\":\"0\",\"exp\":1,"
	    "\"public-key\":%s,\"principal\":{\"email\":\"u@example.com\"}}", kj);
	put("cert", "bad-iat-string", v = sign_json(dk, json));
	free(v);
	snprintf(json, sizeof json, "{\"iss\":\"example.com\",\"exp\":1.0e12,"
	    "\"public-key\":%s,\"principal\":{\"email\":\"u..v@example.com\"}}", kj);
	put("cert", "bad-email-real-exp", v = sign_json(dk, json));
	free(v);
	free(kj);
	/* Signed by the user key instead of the domain key. */
	put("cert", "self-signed",
	    v = cert_for(uk_rsa, uk_rsa, "example.com", "alice@example.com"));
	free(v);

	char *b1 = join(c_rsa, a_rsa), *b2 = join(c_dsa, a_dsa), *b3 = join(c_ds256, a_ds256);
	put("backed", "rsa-user", b1);
	put("backed", "dsa-user", b2);
	put("backed", "ds256-user-ipv6-audience", b3);
	put("backed", "wrong-user-key", v = join(c_rsa, a_dsa));
	free(v);
	char *chain = join(c_rsa, b1);
	put("backed", "chain-two-certs", chain);
	free(chain);
	put("backed", "swapped", v = join(a_rsa, c_rsa));
	free(v);
	char *a_iat = sign_json(uk_rsa,
	    "{\"aud\":\"https://rp.example\",\"exp\":1700000120000,\"iat\":1700000000000}");
	put("backed", "assertion-with-iat", v = join(c_rsa, a_iat));
	free(v);
	free(a_iat);
	put("backed", "empty-assertion", v = join(c_rsa, ""));
	free(v);
	free(b1);
	free(b2);
	free(b3);
	free(c_rsa);
	free(c_dsa);
	free(c_ds256);
	free(a_rsa);
	free(a_dsa);
	free(a_ds256);
}

static void
seed_support(const vep_key *k1, const vep_key *k2, const vep_key *kd)
{
	const vep_key *keys[] = { k1, k2, kd };
	char *doc = NULL, *v;

	if (vep_support_build(keys, 1, "/sign_in", "/provision", &doc) != 0)
		exit(1);
	put("support", "primary-one-key", doc);
	put("support", "bad-no-provisioning",
	    v = subst(doc, ",\"provisioning\":\"/provision\"", ""));
	free(v);
	put("support", "bad-public-key-string",
	    v = subst(doc, "\"public-key\":{", "\"public-key\":\"\",\"x\":{"));
	free(v);
	put("support", "disabled-wins", v = subst(doc, "{", "{\"disabled\":true,"));
	free(v);
	free(doc);
	if (vep_support_build(keys, 3, "/sign_in", "/provision", &doc) != 0)
		exit(1);
	put("support", "primary-three-keys", doc);
	free(doc);
	vep_support_build_delegated("login.example.org", &doc);
	put("support", "delegated", doc);
	free(doc);
	vep_support_build_disabled(&doc);
	put("support", "disabled", doc);
	free(doc);
	put("support", "delegated-hostport", "{\"authority\":\"localhost:10001\"}");
	put("support", "bad-authority", "{\"authority\":\"https://x.example/\"}");
	put("support", "bad-disabled-type", "{\"disabled\":\"true\"}");
	put("support", "bad-keys-type", "{\"public-key\":{},\"keys\":{},"
	    "\"authentication\":\"/a\",\"provisioning\":\"/p\"}");
	put("support", "bad-array", "[]");
}

/* Mozilla's vectors: tokens for jws/cert/backed, keys for key_json. */
static void
seed_vectors(const char *path)
{
	json_error_t e;
	json_t *v = json_load_file(path, 0, &e);
	if (v == NULL) {
		fprintf(stderr, "seedgen: no vectors at %s, skipped\n", path);
		return;
	}
	const json_t *c = json_array_get(json_object_get(v, "CERTS"), 0);
	const json_t *b = json_array_get(json_object_get(v, "BACKED_ASSERTIONS"), 0);
	const json_t *a = json_array_get(json_object_get(v, "ASSERTIONS"), 0);
	const char *cert = json_string_value(json_object_get(c, "cert"));
	const char *backed = json_string_value(json_object_get(b, "assertion"));
	const char *old = json_string_value(json_object_get(a, "assertion"));
	put("cert", "mozilla-cert", cert);
	put("jws", "mozilla-cert", cert);
	put("backed", "mozilla-backed", backed);
	put("backed", "mozilla-assertion-127", old);
	char *asrt = strdup(strchr(backed, '~') + 1);
	put("jws", "mozilla-assertion-ds128", asrt);
	free(asrt);
	char *k;
	put("key_json", "mozilla-rs-2047",
	    k = json_dumps(json_object_get(c, "certifierPublicKey"), JSON_COMPACT));
	free(k);
	put("key_json", "mozilla-ds128",
	    k = json_dumps(json_object_get(c, "containedPublicKey"), JSON_COMPACT));
	free(k);
	put("key_json", "mozilla-rs-2048",
	    k = json_dumps(json_object_get(b, "certifyingKey"), JSON_COMPACT));
	free(k);
	json_decref(v);
}

int
main(int argc, char **argv)
{
	vep_key *dk = NULL, *dk2 = NULL, *uk = NULL, *ud = NULL, *ud256 = NULL;

	if (argc < 2) {
		fprintf(stderr, "usage: fuzz_seedgen CORPUS_DIR [VECTORS_JSON]\n");
		return 2;
	}
	root = argv[1];
	if (vep_key_generate_rsa(2048, &dk) != 0 || vep_key_generate_rsa(2048, &dk2) != 0 ||
	    vep_key_generate_rsa(1024, &uk) != 0 || vep_key_generate_dsa(1024, &ud) != 0 ||
	    vep_key_generate_dsa(2048, &ud256) != 0) {
		fprintf(stderr, "seedgen: key generation failed\n");
		return 1;
	}
	seed_email();
	seed_keys(dk, uk, ud, ud256);
	seed_unsafe_keys(dk, ud, ud256);
	seed_tokens(dk, uk, ud, ud256);
	seed_support(dk, dk2, ud);
	if (argc > 2)
		seed_vectors(argv[2]);
	vep_key_free(dk);
	vep_key_free(dk2);
	vep_key_free(uk);
	vep_key_free(ud);
	vep_key_free(ud256);
	return 0;
}
