/*
 * test_keeper.c - the key process (authority/keeper*.c, keyproc/keyring.c) through
 * its real fork and channels: the first load's bundle carries public keys
 * and no private part; certificates it signs verify with the published key;
 * it refuses to sign anything but a certificate of the key's own domain
 * (arbitrary bytes, another issuer, an address elsewhere, a lifetime over
 * 24 h, a header naming another algorithm) and keys it does not hold; a
 * failed reload keeps the old keys and says why; after a rotation both the
 * new key and the one before sign (a loop may still hold the old set), and
 * a load the network process did not take up is dropped (each checked on
 * two loops' channels, every certificate verifying with the key it names
 * and no other: each loop signs with prepared signers of its own, kept in
 * each set, keyring_signer, which is also tested directly); and
 * when the process is killed, its life pipe says so and the channel reports the
 * failure instead of hanging. Each channel asks only what its holder needs:
 * LOAD and COMMIT on a loop's channel, SIGN and SPAWN on the control
 * channel are refused with nothing done, and logged, while the same
 * requests on their own channels work. The channels' framing: one ipc
 * frame per packet, a descriptor alongside, nothing over KEEPER_FRAME_MAX,
 * nothing but exactly one frame. Also privdrop_keep_caps, which the key process
 * starts with: as root, exactly the kept capabilities are left (effective,
 * permitted, bounding; none inheritable or ambient) with no-new-privileges,
 * and a second call changes nothing; without root nothing is done.
 * Delegation: a key shared by domains that delegate to one login host signs
 * each one's certificates under the login host's name and nothing else
 * (not under the domain's own name, not for the login host's addresses,
 * not another domain's with its own key).
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "harness.h"
#include "b64url.h"
#include "cert.h"
#include "core/config.h"
#include "err.h"
#include "keyproc/keeper.h"
#include "keyproc/proto.h"
#include "keydir.h"
#include "core/privdrop.h"
#include "util.h"

static char dir[64], conf[128], keys[128];

static int
make_cfg(void *arg, const char *text, size_t len, struct config **out, char *err,
    size_t errlen)
{
	return config_load_text(conf, text, len, out, err, errlen);
}

/* The domain's current public key from a bundle (new). */
static vep_key *
bundle_current(const json_t *bundle)
{
	vep_key *k = NULL;

	vep_key_from_json(json_object_get(json_array_get(json_object_get(bundle, "domains"), 0),
	    "current"), &k);
	return k;
}

/* vep_signer through the key process for pub (new text in *out). */
static int
sign_cert(struct keeper_chan *c, const vep_key *pub, const char *iss, const char *email,
    int64_t life_ms, const vep_key *user, char **out)
{
	char fp[VEP_FINGERPRINT_BUFSZ];
	struct keeper_key key = { c, fp };
	struct vep_signer s = { pub, keeper_sign, &key };
	struct vep_cert_params p = { iss, email, user, 1000, 1000 + life_ms, NULL };

	if (vep_key_fingerprint(pub, fp) != 0)
		return VEP_ERR_CRYPTO;
	return vep_cert_sign_with(&s, &p, out);
}

/* An ordinary certificate of example.test signed with pub: 0 or why not. */
static int
signs(struct keeper_chan *c, const vep_key *pub, const vep_key *user)
{
	char *cert = NULL;
	int rc = sign_cert(c, pub, "example.test", "alice@example.test", 600000, user, &cert);

	free(cert);
	return rc;
}

/* signs, and the certificate verifies with pub (and with no other key:
 * other, when not NULL, refuses it). 0 or why not (VEP_ERR_BADSIG). */
static int
signs_verified(struct keeper_chan *c, const vep_key *pub, const vep_key *other,
    const vep_key *user)
{
	const vep_key *ks[1];
	vep_cert *parsed = NULL;
	char *cert = NULL;
	int rc = sign_cert(c, pub, "example.test", "alice@example.test", 600000, user, &cert);

	if (rc == 0)
		rc = vep_cert_parse(cert, strlen(cert), &parsed);
	ks[0] = pub;
	if (rc == 0)
		rc = vep_cert_verify(parsed, ks, 1, 2000);
	ks[0] = other;
	if (rc == 0 && other != NULL && vep_cert_verify(parsed, ks, 1, 2000) == 0)
		rc = VEP_ERR_BADSIG;
	vep_cert_free(parsed);
	free(cert);
	return rc;
}

/* keeper_sign_send, then another request on the same channel (a LOAD,
 * refused on a loop's channel), then keeper_sign_recv: the LOAD reads
 * the signing answer first and keeps it, the signature verifies; a second
 * send before the answer is read, and a receive with nothing sent, are
 * refused. */
static void
test_sign_split(struct keeper_chan *c, const vep_key *pub, const vep_key *user)
{
	char fp[VEP_FINGERPRINT_BUFSZ], *in = NULL, *cert = NULL, err[256];
	struct keeper_key key = { c, fp };
	struct keeper_item it[1], again[1];
	struct vep_cert_params p = { "example.test", "split@example.test", user, 1000, 601000,
				     NULL };
	const vep_key *ks[1] = { pub };
	json_t *bundle = NULL;
	vep_cert *parsed = NULL;
	size_t inlen;

	ASSERT_EQ(vep_key_fingerprint(pub, fp), VEP_OK);
	ASSERT_EQ(vep_cert_signing_input(pub, &p, &in, &inlen), VEP_OK);
	it[0].input = again[0].input = (const uint8_t *)in;
	it[0].len = again[0].len = inlen;
	ASSERT_EQ(keeper_sign_recv(&key, it, 1), VEP_ERR_ARG);
	ASSERT_EQ(keeper_sign_send(&key, it, 1), VEP_OK);
	ASSERT_EQ(keeper_sign_send(&key, again, 1), VEP_ERR_ARG);
	ASSERT_EQ(keeper_load(c, &bundle, err, sizeof(err)), VEP_ERR_ARG);
	ASSERT_TRUE(bundle == NULL);
	ASSERT_TRUE(keeper_chan_ok(c));
	ASSERT_EQ(keeper_sign_recv(&key, it, 1), VEP_OK);
	ASSERT_EQ(it[0].rc, VEP_OK);
	ASSERT_EQ(vep_jws_join(in, it[0].sig, it[0].siglen, &cert), VEP_OK);
	ASSERT_EQ(vep_cert_parse(cert, strlen(cert), &parsed), VEP_OK);
	ASSERT_EQ(vep_cert_verify(parsed, ks, 1, 2000), VEP_OK);
	ASSERT_STREQ(parsed->email, "split@example.test");
	/* Nothing due any more: the channel is in step. */
	ASSERT_EQ(keeper_sign_recv(&key, it + 0, 1), VEP_ERR_ARG);
	ASSERT_TRUE(keeper_chan_ok(c));
	vep_cert_free(parsed);
	free(cert);
	free(it[0].sig);
	free(in);
}

/* Signs len bytes of msg (raw, not a certificate) through the channel. */
static int
sign_raw(struct keeper_chan *c, const vep_key *pub, const char *msg, size_t len)
{
	char fp[VEP_FINGERPRINT_BUFSZ];
	struct keeper_key key = { c, fp };
	uint8_t *sig = NULL;
	size_t siglen = 0;
	int rc;

	if (vep_key_fingerprint(pub, fp) != 0)
		return VEP_ERR_CRYPTO;
	rc = keeper_sign(&key, pub, (const uint8_t *)msg, len, &sig, &siglen);
	free(sig);
	return rc;
}

/* Batches: each item checked and signed on its own (a refused one
 * refuses no other), every signature that of its own input; the limits
 * refused before anything is sent. */
static void
test_batch(struct keeper_chan *c, const vep_key *pub, const vep_key *user)
{
	char fp[VEP_FINGERPRINT_BUFSZ], *in[KEEPER_SIGN_BATCH_MAX + 1], *cert;
	struct keeper_key key = { c, fp };
	struct keeper_item it[KEEPER_SIGN_BATCH_MAX + 1];
	struct vep_cert_params p = { "example.test", NULL, user, 1000, 601000, NULL };
	char email[64];
	const vep_key *ks[1] = { pub };
	vep_cert *parsed;
	uint8_t *big;
	size_t i, inlen;

	ASSERT_EQ(vep_key_fingerprint(pub, fp), VEP_OK);
	for (i = 0; i < KEEPER_SIGN_BATCH_MAX + 1; i++) {
		snprintf(email, sizeof(email), "user%zu@example.test", i);
		p.email = email;
		ASSERT_EQ(vep_cert_signing_input(pub, &p, &in[i], &inlen), VEP_OK);
		it[i].input = (const uint8_t *)in[i];
		it[i].len = inlen;
	}
	/* Item 1 is no certificate, item 2 one of a domain not ours. */
	it[1].input = (const uint8_t *)"not a certificate";
	it[1].len = 17;
	p.issuer = "example.org";
	p.email = "bob@example.org";
	free(in[2]);
	ASSERT_EQ(vep_cert_signing_input(pub, &p, &in[2], &inlen), VEP_OK);
	it[2].input = (const uint8_t *)in[2];
	it[2].len = inlen;
	ASSERT_EQ(keeper_sign_batch(&key, it, KEEPER_SIGN_BATCH_MAX), VEP_OK);
	for (i = 0; i < KEEPER_SIGN_BATCH_MAX; i++) {
		if (i == 1 || i == 2) {
			ASSERT_EQ(it[i].rc, VEP_ERR_INVALID);
			ASSERT_TRUE(it[i].sig == NULL && it[i].siglen == 0);
			continue;
		}
		ASSERT_EQ(it[i].rc, VEP_OK);
		ASSERT_EQ(vep_jws_join(in[i], it[i].sig, it[i].siglen, &cert), VEP_OK);
		parsed = NULL;
		ASSERT_EQ(vep_cert_parse(cert, strlen(cert), &parsed), VEP_OK);
		ASSERT_EQ(vep_cert_verify(parsed, ks, 1, 2000), VEP_OK);
		snprintf(email, sizeof(email), "user%zu@example.test", i);
		ASSERT_STREQ(parsed->email, email);
		vep_cert_free(parsed);
		free(cert);
		free(it[i].sig);
	}
	/* One item more than a request takes, none, too many bytes. */
	ASSERT_EQ(keeper_sign_batch(&key, it, KEEPER_SIGN_BATCH_MAX + 1), VEP_ERR_ARG);
	ASSERT_EQ(it[0].rc, VEP_ERR_IO);
	ASSERT_EQ(keeper_sign_batch(&key, it, 0), VEP_ERR_ARG);
	big = calloc(1, KEEPER_SIGN_BATCH_BYTES);
	ASSERT_TRUE(big != NULL);
	it[1].input = big;
	it[1].len = KEEPER_SIGN_BATCH_BYTES - KEEPER_ITEM_OVERHEAD - it[0].len -
	    KEEPER_ITEM_OVERHEAD + 1;
	ASSERT_EQ(keeper_sign_batch(&key, it, 2), VEP_ERR_TOOBIG);
	it[1].len--;
	/* Exactly full: sent, answered (the filler refused, the certificate
	 * signed). */
	ASSERT_EQ(keeper_sign_batch(&key, it, 2), VEP_OK);
	ASSERT_EQ(it[0].rc, VEP_OK);
	ASSERT_EQ(it[1].rc, VEP_ERR_INVALID);
	free(it[0].sig);
	free(big);
	for (i = 0; i < KEEPER_SIGN_BATCH_MAX + 1; i++)
		free(in[i]);
}

static void
test_keeper(void)
{
	struct keeper_params kp = { conf, make_cfg, NULL, NULL };
	struct keeper *k = NULL;
	struct keeper_chan *c, *c0;
	json_t *bundle = NULL;
	vep_key *pub = NULL, *pub2 = NULL, *pub3 = NULL, *pub4 = NULL, *user = NULL,
	    *other = NULL;
	vep_cert *parsed = NULL;
	char err[1024], *cert = NULL, *text, *h64, *p64, *forged, *big;
	const vep_key *keys1[1];
	struct pollfd pfd;
	FILE *f;

	ASSERT_EQ(vep_key_generate_rsa(2048, &user), VEP_OK);
	ASSERT_EQ(vep_key_generate_rsa(2048, &other), VEP_OK);
	ASSERT_EQ(keeper_start(&kp, 2, &k, err, sizeof(err)), VEP_OK);
	c = keeper_chan(k, 1);
	c0 = keeper_chan(k, 0);
	ASSERT_TRUE(keeper_chan_ok(c) && c0 != NULL && c0 != c);

	ASSERT_EQ(keeper_load(keeper_control(k), &bundle, err, sizeof(err)), VEP_OK);
	text = json_dumps(bundle, JSON_COMPACT);
	ASSERT_TRUE(text != NULL && strstr(text, "\"d\"") == NULL &&
	    strstr(text, "PRIVATE") == NULL);
	free(text);
	pub = bundle_current(bundle);
	ASSERT_TRUE(pub != NULL && !vep_key_has_private(pub));
	json_decref(bundle);
	ASSERT_EQ(keeper_commit(keeper_control(k), 1), VEP_OK);
	ASSERT_EQ(keeper_commit(keeper_control(k), 1), VEP_ERR_INVALID);   /* nothing pending */

	/* A certificate of its domain: signed, and it verifies. */
	ASSERT_EQ(sign_cert(c, pub, "example.test", "alice@example.test", 600000, user, &cert), 0);
	ASSERT_EQ(vep_cert_parse(cert, strlen(cert), &parsed), VEP_OK);
	keys1[0] = pub;
	ASSERT_EQ(vep_cert_verify(parsed, keys1, 1, 2000), VEP_OK);
	vep_cert_free(parsed);
	free(cert);
	cert = NULL;

	/* Anything else: refused. */
	ASSERT_EQ(sign_raw(c, pub, "any bytes at all", 16), VEP_ERR_INVALID);
	/* Sizes: over what a JWS may be is refused by the key process, over
	 * a message's room before anything is sent. */
	big = malloc(KEEPER_BODY_MAX);
	ASSERT_TRUE(big != NULL);
	memset(big, 'a', KEEPER_BODY_MAX);
	ASSERT_EQ(sign_raw(c, pub, big, VEP_JWS_MAX_BYTES + 1), VEP_ERR_INVALID);
	ASSERT_EQ(sign_raw(c, pub, big, KEEPER_BODY_MAX - 63), VEP_ERR_TOOBIG);
	ASSERT_TRUE(keeper_chan_ok(c));
	free(big);
	ASSERT_EQ(sign_cert(c, pub, "example.org", "alice@example.org", 600000, user, &cert),
	    VEP_ERR_INVALID);
	ASSERT_EQ(sign_cert(c, pub, "example.test", "alice@example.org", 600000, user, &cert),
	    VEP_ERR_INVALID);
	ASSERT_EQ(sign_cert(c, pub, "example.test", "alice@example.test",
	    VEP_CERT_MAX_LIFETIME_MS, user, &cert), VEP_OK);
	free(cert);
	cert = NULL;
	/* A header naming another algorithm over a valid payload. */
	h64 = vep_b64url_encode((const uint8_t *)"{\"alg\":\"DS128\"}", 15);
	p64 = vep_b64url_encode((const uint8_t *)"{\"iss\":\"example.test\",\"iat\":1,\"exp\":2,"
	    "\"public-key\":{\"algorithm\":\"RS\",\"n\":\"3\",\"e\":\"3\"},"
	    "\"principal\":{\"email\":\"a@example.test\"}}", 117);
	ASSERT_TRUE(h64 != NULL && p64 != NULL && asprintf(&forged, "%s.%s", h64, p64) > 0);
	ASSERT_EQ(sign_raw(c, pub, forged, strlen(forged)), VEP_ERR_INVALID);
	free(forged);
	free(h64);
	free(p64);
	/* A key it does not hold. */
	ASSERT_EQ(signs(c, other, user), VEP_ERR_NOKEY);
	test_batch(c, pub, user);
	ASSERT_TRUE(keeper_chan_ok(c));

	/* A broken key: the reload fails with the reason, the old key signs. */
	if ((f = fopen(keys, "w")) != NULL) {
		fputs("not a key\n", f);
		fclose(f);
	}
	ASSERT_TRUE(keeper_load(keeper_control(k), &bundle, err, sizeof(err)) != VEP_OK &&
	    bundle == NULL);
	ASSERT_TRUE(strstr(err, "key_dir") != NULL);
	ASSERT_EQ(signs(c, pub, user), 0);

	/* A rotation: the new key signs, and so does the previous one, on
	 * both loops' channels (each signs with signers of its own, in each
	 * set), before the commit and after; each certificate verifies with
	 * the key it names and not with the other. */
	ASSERT_EQ(signs_verified(c0, pub, NULL, user), 0);
	unlink(keys);
	ASSERT_EQ(vep_keydir_ensure(dir, NULL), VEP_OK);
	ASSERT_EQ(keeper_load(keeper_control(k), &bundle, err, sizeof(err)), VEP_OK);
	pub2 = bundle_current(bundle);
	json_decref(bundle);
	ASSERT_TRUE(pub2 != NULL && !vep_key_public_equal(pub, pub2));
	ASSERT_EQ(signs(c, pub2, user), 0);
	ASSERT_EQ(signs(c, pub, user), 0);
	ASSERT_EQ(signs_verified(c, pub2, pub, user), 0);
	ASSERT_EQ(signs_verified(c0, pub2, pub, user), 0);
	ASSERT_EQ(signs_verified(c0, pub, pub2, user), 0);
	ASSERT_EQ(keeper_commit(keeper_control(k), 1), VEP_OK);
	ASSERT_EQ(signs(c, pub, user), 0);
	for (int round = 0; round < 3; round++) {
		ASSERT_EQ(signs_verified(c, pub2, pub, user), 0);
		ASSERT_EQ(signs_verified(c, pub, pub2, user), 0);
		ASSERT_EQ(signs_verified(c0, pub2, pub, user), 0);
		ASSERT_EQ(signs_verified(c0, pub, pub2, user), 0);
	}

	/* Another rotation, not taken up: its key signs while pending (so
	 * the dropped set had signers), never after; the last one does. */
	unlink(keys);
	ASSERT_EQ(vep_keydir_ensure(dir, NULL), VEP_OK);
	ASSERT_EQ(keeper_load(keeper_control(k), &bundle, err, sizeof(err)), VEP_OK);
	pub3 = bundle_current(bundle);
	json_decref(bundle);
	ASSERT_EQ(signs_verified(c, pub3, pub2, user), 0);
	ASSERT_EQ(keeper_commit(keeper_control(k), 0), VEP_OK);
	ASSERT_EQ(signs(c, pub3, user), VEP_ERR_NOKEY);
	ASSERT_EQ(signs(c0, pub3, user), VEP_ERR_NOKEY);
	ASSERT_EQ(signs(c, pub2, user), 0);

	/* One more, taken up: the oldest set (whose signers both loops used)
	 * is dropped, its key refused; the two newest sign and verify. */
	unlink(keys);
	ASSERT_EQ(vep_keydir_ensure(dir, NULL), VEP_OK);
	ASSERT_EQ(keeper_load(keeper_control(k), &bundle, err, sizeof(err)), VEP_OK);
	pub4 = bundle_current(bundle);
	json_decref(bundle);
	ASSERT_TRUE(pub4 != NULL && !vep_key_public_equal(pub2, pub4));
	ASSERT_EQ(keeper_commit(keeper_control(k), 1), VEP_OK);
	ASSERT_EQ(signs(c, pub, user), VEP_ERR_NOKEY);
	ASSERT_EQ(signs(c0, pub, user), VEP_ERR_NOKEY);
	ASSERT_EQ(signs_verified(c, pub4, pub2, user), 0);
	ASSERT_EQ(signs_verified(c0, pub4, pub2, user), 0);
	ASSERT_EQ(signs_verified(c, pub2, pub4, user), 0);
	ASSERT_EQ(signs_verified(c0, pub2, pub4, user), 0);

	/* Killed: its life pipe is readable, the channel fails and stays failed. */
	kill(keeper_pid(k), SIGKILL);
	pfd.fd = keeper_life_fd(k);
	pfd.events = POLLIN;
	ASSERT_EQ(poll(&pfd, 1, 5000), 1);
	ASSERT_EQ(signs(c, pub2, user), VEP_ERR_IO);
	ASSERT_TRUE(!keeper_chan_ok(c));
	keeper_stop(k);
	vep_key_free(pub);
	vep_key_free(pub2);
	vep_key_free(pub3);
	vep_key_free(pub4);
	vep_key_free(user);
	vep_key_free(other);
}

/* keyring_signer in this process (the key process ends with _exit, so
 * only here does the leak checker see a keyring freed with its signers):
 * each slot has its own signer of each row's key, the same one on every
 * call, signing vep_key_sign's bytes; threads filling their slots at once
 * share one table; a key that is not the keyring's, a slot out of range
 * or another slot count are refused; keyring_free frees it all. */
struct slot_job {
	struct keyring *kr;
	const vep_key *key;
	size_t slot;
	vep_key_signer *got;
	int rc;
};

static void *
slot_thread(void *arg)
{
	struct slot_job *j = arg;
	vep_key_signer *again = NULL;
	uint8_t *sig = NULL;
	size_t siglen = 0;

	if ((j->rc = keyring_signer(j->kr, j->key, j->slot, 4, &j->got)) == 0 &&
	    (j->rc = keyring_signer(j->kr, j->key, j->slot, 4, &again)) == 0 &&
	    (j->rc = again == j->got ? 0 : VEP_ERR_INVALID) == 0)
		j->rc = vep_key_signer_sign(j->got, (const uint8_t *)"slot", 4, &sig, &siglen);
	if (j->rc == 0)
		j->rc = vep_key_verify(j->key, (const uint8_t *)"slot", 4, sig, siglen);
	free(sig);
	return NULL;
}

static void
test_keyring_signers(void)
{
	struct keyring *kr = NULL, *kr2 = NULL;
	struct slot_job jobs[4];
	pthread_t t[4];
	json_t *bundle = NULL;
	vep_key_signer *s = NULL;
	const vep_key *key;
	uint8_t *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;
	char err[1024], fp[VEP_FINGERPRINT_BUFSZ];

	ASSERT_EQ(keyring_load(conf, make_cfg, NULL, &kr, &bundle, err, sizeof(err)), VEP_OK);
	json_decref(bundle);
	bundle = NULL;
	ASSERT_EQ(keyring_load(conf, make_cfg, NULL, &kr2, &bundle, err, sizeof(err)), VEP_OK);
	json_decref(bundle);
	key = kr->sets[0].current;
	ASSERT_EQ(vep_key_fingerprint(key, fp), VEP_OK);
	ASSERT_TRUE(keyring_find(kr, fp, "example.test", NULL) == key);
	for (size_t i = 0; i < 4; i++) {
		jobs[i] = (struct slot_job){ kr, key, i, NULL, -1 };
		ASSERT_EQ(pthread_create(&t[i], NULL, slot_thread, &jobs[i]), 0);
	}
	for (size_t i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ASSERT_EQ(jobs[i].rc, 0);
	}
	for (size_t i = 0; i < 4; i++)
		for (size_t j = i + 1; j < 4; j++)
			ASSERT_TRUE(jobs[i].got != jobs[j].got);
	ASSERT_EQ(vep_key_sign(key, (const uint8_t *)"same bytes", 10, &a, &alen), 0);
	ASSERT_EQ(vep_key_signer_sign(jobs[2].got, (const uint8_t *)"same bytes", 10, &b, &blen),
	    0);
	ASSERT_TRUE(alen == blen);
	ASSERT_MEMEQ(a, b, alen);
	free(a);
	free(b);
	/* Another keyring's key (the same file, another load: another key
	 * object) is not this one's, and gets that keyring's own signer. */
	ASSERT_EQ(keyring_signer(kr, kr2->sets[0].current, 0, 4, &s), VEP_ERR_NOKEY);
	ASSERT_TRUE(s == NULL);
	ASSERT_EQ(keyring_signer(NULL, key, 0, 4, &s), VEP_ERR_NOKEY);
	ASSERT_EQ(keyring_signer(kr2, kr2->sets[0].current, 0, 4, &s), VEP_OK);
	ASSERT_TRUE(s != NULL && s != jobs[0].got);
	ASSERT_EQ(keyring_signer(kr, key, 4, 4, &s), VEP_ERR_ARG);
	ASSERT_TRUE(s == NULL);
	ASSERT_EQ(keyring_signer(kr, key, 0, 5, &s), VEP_ERR_ARG);
	ASSERT_EQ(keyring_signer(kr, NULL, 0, 4, &s), VEP_ERR_ARG);
	ASSERT_EQ(keyring_signer(kr, key, 0, 4, NULL), VEP_ERR_ARG);
	keyring_free(kr);
	keyring_free(kr2);
	keyring_free(NULL);
}

/* Domains delegating to login.example.test share the key in dir; other.test
 * has its own. Each certificate is signed only under its domain's issuer. */
static void
test_delegation(void)
{
	struct keeper_params kp = { conf, make_cfg, NULL, NULL };
	char err[1024], *cert = NULL, odir[96], saved[160];
	struct keeper *k = NULL;
	struct keeper_chan *c;
	json_t *bundle = NULL, *doms;
	vep_key *pub = NULL, *opub = NULL, *user = NULL;
	FILE *f;

	snprintf(odir, sizeof(odir), "%s/other", dir);
	snprintf(saved, sizeof(saved), "%s.saved", conf);
	ASSERT_EQ(rename(conf, saved), 0);
	ASSERT_TRUE(mkdir(odir, 0700) == 0 && vep_keydir_ensure(odir, NULL) == 0);
	ASSERT_TRUE((f = fopen(conf, "w")) != NULL);
	fprintf(f, "state_dir = %s/state\n[domain example.test]\nkey_dir = %s\n"
	    "authority = login.example.test\n[domain example.org]\nkey_dir = %s\n"
	    "authority = login.example.test\n[domain other.test]\nkey_dir = %s\n", dir, dir, dir,
	    odir);
	fclose(f);
	ASSERT_EQ(vep_key_generate_rsa(2048, &user), VEP_OK);
	ASSERT_EQ(keeper_start(&kp, 1, &k, err, sizeof(err)), VEP_OK);
	c = keeper_chan(k, 0);
	ASSERT_EQ(keeper_load(keeper_control(k), &bundle, err, sizeof(err)), VEP_OK);
	pub = bundle_current(bundle);
	doms = json_object_get(bundle, "domains");
	vep_key_from_json(json_object_get(json_array_get(doms, 2), "current"), &opub);
	json_decref(bundle);
	ASSERT_TRUE(pub != NULL && opub != NULL);
	ASSERT_EQ(keeper_commit(keeper_control(k), 1), VEP_OK);

	ASSERT_EQ(sign_cert(c, pub, "login.example.test", "alice@example.test", 600000, user,
	    &cert), VEP_OK);
	free(cert);
	cert = NULL;
	ASSERT_EQ(sign_cert(c, pub, "login.example.test", "bob@example.org", 600000, user,
	    &cert), VEP_OK);
	free(cert);
	cert = NULL;
	ASSERT_EQ(sign_cert(c, pub, "example.test", "alice@example.test", 600000, user, &cert),
	    VEP_ERR_INVALID);
	ASSERT_EQ(sign_cert(c, pub, "login.example.test", "alice@login.example.test", 600000,
	    user, &cert), VEP_ERR_INVALID);
	ASSERT_EQ(sign_cert(c, pub, "login.example.test", "carol@other.test", 600000, user,
	    &cert), VEP_ERR_INVALID);
	ASSERT_EQ(sign_cert(c, opub, "login.example.test", "alice@example.test", 600000, user,
	    &cert), VEP_ERR_INVALID);
	ASSERT_EQ(sign_cert(c, opub, "other.test", "carol@other.test", 600000, user, &cert),
	    VEP_OK);
	free(cert);
	keeper_stop(k);
	vep_key_free(pub);
	vep_key_free(opub);
	vep_key_free(user);
	ASSERT_EQ(rename(saved, conf), 0);
	snprintf(saved, sizeof(saved), "%s/current.pem", odir);
	unlink(saved);
	rmdir(odir);
}

/* Each channel asks only what its holder needs; a refusal does nothing,
 * is logged, and leaves the channel working. */
static void
test_permits(void)
{
	struct keeper_params kp = { conf, make_cfg, NULL, NULL };
	struct keeper *k = NULL;
	struct keeper_chan *ctl, *lp;
	json_t *bundle = NULL;
	vep_key *pub = NULL, *user = NULL;
	char err[1024], logpath[160], logtext[4096];
	ssize_t n;
	pid_t pid = 0;
	int saved, lf, fd = -1;

	ASSERT_EQ(vep_key_generate_rsa(2048, &user), VEP_OK);
	/* The key process logs on the stderr it starts with: a file here. */
	snprintf(logpath, sizeof(logpath), "%s/keeper.log", dir);
	lf = open(logpath, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600);
	saved = dup(STDERR_FILENO);
	ASSERT_TRUE(lf >= 0 && saved >= 0);
	fflush(stderr);
	ASSERT_EQ(dup2(lf, STDERR_FILENO), STDERR_FILENO);
	ASSERT_EQ(keeper_start(&kp, 2, &k, err, sizeof(err)), VEP_OK);
	ASSERT_EQ(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	ctl = keeper_control(k);
	lp = keeper_chan(k, 1);
	ASSERT_TRUE(ctl != NULL && lp != NULL && ctl != lp && keeper_chan(k, 2) == NULL);

	/* LOAD on a loop's channel: refused, nothing loaded (a commit finds
	 * nothing pending), the channel still answers. */
	ASSERT_EQ(keeper_load(lp, &bundle, err, sizeof(err)), VEP_ERR_ARG);
	ASSERT_TRUE(bundle == NULL);
	ASSERT_TRUE(keeper_chan_ok(lp));
	ASSERT_EQ(keeper_commit(ctl, 1), VEP_ERR_INVALID);
	/* On the control channel: loaded. */
	ASSERT_EQ(keeper_load(ctl, &bundle, err, sizeof(err)), VEP_OK);
	pub = bundle_current(bundle);
	json_decref(bundle);
	ASSERT_TRUE(pub != NULL);
	/* COMMIT on a loop's channel, either way: refused, the load stays
	 * pending; on the control channel it is taken up. */
	ASSERT_EQ(keeper_commit(lp, 1), VEP_ERR_ARG);
	ASSERT_EQ(keeper_commit(lp, 0), VEP_ERR_ARG);
	ASSERT_TRUE(keeper_chan_ok(lp));
	ASSERT_EQ(keeper_commit(ctl, 1), VEP_OK);
	ASSERT_EQ(keeper_commit(ctl, 1), VEP_ERR_INVALID);
	/* SIGN and SPAWN on the control channel: refused; SIGN on the loop's
	 * channel signs with the committed key. */
	ASSERT_EQ(signs(ctl, pub, user), VEP_ERR_ARG);
	ASSERT_EQ(keeper_spawn_helper(ctl, &fd, &pid), VEP_ERR_ARG);
	ASSERT_TRUE(fd == -1 && pid == 0);
	ASSERT_TRUE(keeper_chan_ok(ctl));
	ASSERT_EQ(signs(lp, pub, user), 0);
	test_sign_split(lp, pub, user);
	ASSERT_EQ(signs(lp, pub, user), 0);

	/* Each refusal was logged (before it was answered). */
	n = pread(lf, logtext, sizeof(logtext) - 1, 0);
	ASSERT_TRUE(n > 0);
	logtext[n > 0 ? n : 0] = '\0';
	ASSERT_TRUE(strstr(logtext, "LOAD refused on loop 1's channel") != NULL);
	ASSERT_TRUE(strstr(logtext, "COMMIT refused on loop 1's channel") != NULL);
	ASSERT_TRUE(strstr(logtext, "SIGN refused on the control channel") != NULL);
	ASSERT_TRUE(strstr(logtext, "SPAWN refused on the control channel") != NULL);
	close(lf);
	unlink(logpath);
	keeper_stop(k);
	vep_key_free(pub);
	vep_key_free(user);
}

/* The channels' framing (keyproc/proto.h) over a bare socket pair. */
static void
test_proto(void)
{
	struct ipc_msg *m, *got = NULL;
	uint8_t *big;
	const uint8_t *p;
	size_t n;
	uint32_t v = 0;
	int sv[2], fd = -1, pipefd[2];

	ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	ASSERT_EQ(pipe(pipefd), 0);
	big = calloc(1, IPC_HEADER_BYTES + KEEPER_FRAME_MAX + 1);
	ASSERT_TRUE(big != NULL);

	/* A message and a descriptor, together. */
	m = keeper_msg_new(KEEPER_SPAWN);
	ASSERT_TRUE(m != NULL);
	ASSERT_EQ(ipc_msg_put_u32(m, KEEPER_TAG_PID, 1234), VEP_OK);
	ASSERT_EQ(keeper_send(sv[0], m, pipefd[1]), VEP_OK);
	ipc_msg_free(m);
	ASSERT_EQ(keeper_recv(sv[1], &got, &fd, 1000), VEP_OK);
	ASSERT_TRUE(got != NULL && ipc_msg_type(got) == KEEPER_SPAWN && fd >= 0);
	ASSERT_EQ(ipc_msg_get_u32(got, KEEPER_TAG_PID, &v), VEP_OK);
	ASSERT_EQ(v, 1234);
	ASSERT_EQ(write(fd, "x", 1), 1);
	close(fd);
	ipc_msg_free(got);
	got = NULL;

	/* A SIGN answer's items: an rc with a signature only for success. */
	m = keeper_msg_new(KEEPER_SIGN);
	ASSERT_TRUE(m != NULL);
	ASSERT_EQ(keeper_put_result(m, 0, 0, (const uint8_t *)"sig", 3), VEP_OK);
	ASSERT_EQ(keeper_put_result(m, 1, VEP_ERR_INVALID, (const uint8_t *)"x", 1), VEP_OK);
	ASSERT_EQ(keeper_put_result(m, 2, 0, NULL, 0), VEP_ERR_ARG);
	ASSERT_EQ(keeper_put_result(m, KEEPER_SIGN_BATCH_MAX, VEP_ERR_INVALID, NULL, 0),
	    VEP_ERR_ARG);
	ASSERT_EQ(ipc_msg_put(m, KEEPER_TAG_ITEM + 2, "\0\0\0", 3), VEP_OK);
	ASSERT_EQ(ipc_msg_put(m, KEEPER_TAG_ITEM + 3, "\0\0\0\0", 4), VEP_OK);
	ASSERT_EQ(ipc_msg_put(m, KEEPER_TAG_ITEM + 4, "\xff\xff\xff\xfe" "s", 5), VEP_OK);
	{
		const uint8_t *sg;
		size_t sl;
		int irc;

		ASSERT_EQ(keeper_get_result(m, 0, &irc, &sg, &sl), VEP_OK);
		ASSERT_TRUE(irc == 0 && sl == 3 && memcmp(sg, "sig", 3) == 0);
		ASSERT_EQ(keeper_get_result(m, 1, &irc, &sg, &sl), VEP_OK);
		ASSERT_TRUE(irc == VEP_ERR_INVALID && sg == NULL && sl == 0);
		ASSERT_EQ(keeper_get_result(m, 2, &irc, &sg, &sl), VEP_ERR_INVALID); /* short */
		ASSERT_EQ(keeper_get_result(m, 3, &irc, &sg, &sl), VEP_ERR_INVALID); /* no sig */
		/* a signature with an error */
		ASSERT_EQ(keeper_get_result(m, 4, &irc, &sg, &sl), VEP_ERR_INVALID);
		ASSERT_EQ(keeper_get_result(m, 5, &irc, &sg, &sl), VEP_ERR_INVALID); /* absent */
	}
	ipc_msg_free(m);

	/* The largest SIGN request fits; one byte more does not. */
	m = keeper_msg_new(KEEPER_SIGN);
	ASSERT_TRUE(m != NULL);
	ASSERT_EQ(ipc_msg_put(m, KEEPER_TAG_FINGERPRINT, big, VEP_FINGERPRINT_HEX_LEN), VEP_OK);
	ASSERT_EQ(ipc_msg_put(m, KEEPER_TAG_ITEM, big, KEEPER_BODY_MAX - 64), VEP_OK);
	ASSERT_EQ(keeper_send(sv[0], m, -1), VEP_OK);
	ipc_msg_free(m);
	ASSERT_EQ(keeper_recv(sv[1], &got, &fd, 1000), VEP_OK);
	ASSERT_TRUE(ipc_msg_get(got, KEEPER_TAG_ITEM, &p, &n) == VEP_OK &&
	    n == KEEPER_BODY_MAX - 64);
	ipc_msg_free(got);
	got = NULL;
	m = keeper_msg_new(KEEPER_SIGN);
	ASSERT_TRUE(m != NULL);
	ASSERT_EQ(ipc_msg_put(m, KEEPER_TAG_ITEM, big, KEEPER_FRAME_MAX), VEP_ERR_TOOBIG);
	ipc_msg_free(m);

	/* Over the cap on the wire: refused. */
	big[0] = (uint8_t)((KEEPER_FRAME_MAX + 1) >> 24);
	big[1] = (uint8_t)((KEEPER_FRAME_MAX + 1) >> 16);
	big[2] = (uint8_t)((KEEPER_FRAME_MAX + 1) >> 8);
	big[3] = (uint8_t)(KEEPER_FRAME_MAX + 1);
	big[4] = KEEPER_SIGN;
	ASSERT_EQ(send(sv[0], big, IPC_HEADER_BYTES + KEEPER_FRAME_MAX + 1, 0),
	    IPC_HEADER_BYTES + KEEPER_FRAME_MAX + 1);
	ASSERT_EQ(keeper_recv(sv[1], &got, &fd, 1000), VEP_ERR_TOOBIG);
	ASSERT_TRUE(got == NULL && fd == -1);
	/* Not exactly one frame: half of one, two, a length that lies. */
	ASSERT_EQ(send(sv[0], "\0\0\0\1", 4, 0), 4);
	ASSERT_EQ(keeper_recv(sv[1], &got, &fd, 1000), VEP_ERR_INVALID);
	ASSERT_EQ(send(sv[0], "\0\0\0\1\2\0\0\0\1\2", 10, 0), 10);
	ASSERT_EQ(keeper_recv(sv[1], &got, &fd, 1000), VEP_ERR_INVALID);
	ASSERT_EQ(send(sv[0], "\0\0\0\2\2", 5, 0), 5);
	ASSERT_EQ(keeper_recv(sv[1], &got, &fd, 1000), VEP_ERR_INVALID);
	ASSERT_TRUE(got == NULL);
	/* Nothing within the timeout; the peer gone. */
	ASSERT_EQ(keeper_recv(sv[1], &got, &fd, 10), VEP_ERR_IO);
	close(sv[0]);
	ASSERT_EQ(keeper_recv(sv[1], &got, &fd, 1000), VEP_ERR_IO);
	close(sv[1]);
	close(pipefd[0]);
	close(pipefd[1]);
	free(big);
}

/* Field key of /proc/self/status read as hexadecimal (the Cap* sets; also
 * right for NoNewPrivs' 0 or 1), or UINT64_MAX when missing. */
static uint64_t
status_field(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	uint64_t v = UINT64_MAX;
	FILE *f = fopen("/proc/self/status", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, n) == 0 && line[n] == ':') {
			v = strtoull(line + n + 1, NULL, 16);
			break;
		}
	if (f != NULL)
		fclose(f);
	return v;
}

/* In a child, which reports the first check that failed as its exit status. */
static int
keep_caps_child(uint64_t keep)
{
	int root = geteuid() == 0, applied = -1;
	char err[256];

	if (privdrop_keep_caps(keep, &applied, err, sizeof(err)) != 0)
		return 10;
	if (applied != root)
		return 11;
	if (!root)
		return status_field("NoNewPrivs") == 0 ? 0 : 12;
	if (status_field("CapEff") != keep)
		return 13;
	if (status_field("CapPrm") != keep)
		return 14;
	if (status_field("CapBnd") != keep)
		return 15;
	if (status_field("CapInh") != 0 || status_field("CapAmb") != 0)
		return 16;
	if (status_field("NoNewPrivs") != 1)
		return 17;
	/* Once more, now without CAP_SETPCAP: the same sets, no error. */
	if (privdrop_keep_caps(keep, &applied, err, sizeof(err)) != 0 || applied != 1 ||
	    status_field("CapEff") != keep || status_field("CapBnd") != keep)
		return 18;
	return 0;
}

static void
test_keep_caps(void)
{
	const uint64_t keep = PRIVDROP_CAP(CAP_DAC_READ_SEARCH) | PRIVDROP_CAP(CAP_AUDIT_WRITE);
	pid_t pid;
	int st = -1;

	if (geteuid() != 0)
		fprintf(stderr, "  not root: only checks that nothing is done\n");
	pid = fork();
	if (pid == 0)
		_exit(keep_caps_child(keep));
	ASSERT_TRUE(pid > 0);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 0);
}

int
main(void)
{
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/vep-keeper-XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(conf, sizeof(conf), "%s/vep.conf", dir);
	snprintf(keys, sizeof(keys), "%s/current.pem", dir);
	if (vep_keydir_ensure(dir, NULL) != 0 || (f = fopen(conf, "w")) == NULL) {
		fprintf(stderr, "cannot set up %s\n", dir);
		return 1;
	}
	fprintf(f, "state_dir = %s/state\n[domain example.test]\nkey_dir = %s\n", dir, dir);
	fclose(f);
	RUN(test_keeper);
	RUN(test_keyring_signers);
	RUN(test_permits);
	RUN(test_delegation);
	RUN(test_proto);
	RUN(test_keep_caps);
	unlink(conf);
	unlink(keys);
	rmdir(dir);
	return harness_done();
}
