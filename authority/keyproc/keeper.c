/*
 * keyproc/keeper.c - the key process's body (contract in keyproc/keeper.h): one thread per
 * channel answering requests until the network process closes it. Before
 * any thread starts it gives up every capability but KEEPER_CAPS.
 *
 * Requests are dispatched from a table (OpenSSH's monitor table is the
 * model) naming, for each message type, its handler and the channels it is
 * permitted on: LOAD and COMMIT only on the control channel, which the
 * network process's main thread alone holds; SIGN and SPAWN only on a
 * loop's channel. A request not permitted on the channel it came on is
 * answered VEP_ERR_ARG with nothing done, and logged (warn): it can only
 * come from a network process that is broken or taken over, and the
 * refusal already leaves it nothing; keeping the channel open keeps the
 * loop that owns it signing. Unknown types are answered VEP_ERR_INVALID.
 */
#include "keyproc/keeper.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "cert.h"
#include "err.h"
#include "keymemo.h"
#include "keyproc/proto.h"
#include "core/log.h"
#include "auth/pam_spawn.h"
#include "core/privdrop.h"
#include "secmem.h"

/*
 * What the key process keeps of root's capabilities, for itself and for the
 * PAM helpers it starts (which run as root, so their capabilities after
 * execve are the bounding set's, limited by no-new-privileges to this
 * process's permitted set: these two, and no other):
 *   CAP_DAC_READ_SEARCH  read the domain keys, the TLS key, the alias
 *                        tables and the configuration whoever owns them
 *                        (key files are 0600, maybe an administrator's),
 *                        and /etc/shadow where it is mode 0000 (Fedora,
 *                        RHEL) for pam_unix; reading, never writing;
 *   CAP_AUDIT_WRITE      libpam's audit record of each attempt
 *                        (AUDIT_USER_AUTH, AUDIT_USER_ACCT); without it
 *                        libpam drops the record (older ones fail the
 *                        attempt).
 * Not kept: CAP_DAC_OVERRIDE (nothing is written), CAP_SETUID and
 * CAP_SETGID (pam_unix as root reads the shadow file itself and never
 * runs unix_chkpwd; no module in a sign-in stack changes IDs), CAP_KILL
 * (its helpers are its own, same uid), CAP_NET_BIND_SERVICE and CAP_CHOWN
 * (the network process binds and gives the state directory away),
 * CAP_SETPCAP (used once, here, to drop the rest), everything else.
 * The systemd unit's CapabilityBoundingSet is these two plus the network
 * process's (binding low ports, chown, setuid, setgid).
 */
#define KEEPER_CAPS (PRIVDROP_CAP(CAP_DAC_READ_SEARCH) | PRIVDROP_CAP(CAP_AUDIT_WRITE))

struct keeper_srv {
	const struct keeper_params *p;
	char *helper_path;               /* owned */
	struct log log;                  /* refused requests (stderr, warn) */
	pthread_rwlock_t lock;           /* guards pending, cur and prev */
	struct keyring *pending;         /* owned: loaded, not yet committed */
	struct keyring *cur;             /* owned: the last committed load */
	struct keyring *prev;            /* owned: the one before, still signing */
	/* Loop channels: loop i's thread signs with slot i of each keyring's
	 * signers (keyring_signer), its own copies of the keys, so loops
	 * never share a key's OpenSSL blinding state or each other's
	 * prepared contexts. The signers live in the keyring, so they are
	 * freed with it (do_load, do_commit, the end of keeper_run), never
	 * used past it: do_sign uses one only under the read lock, and a
	 * keyring is freed only once unlinked under the write lock. */
	size_t nloops;
};

/* The kinds of channel, as permit bits. */
#define CHAN_CONTROL 0x1u                /* the network process's main thread: load, commit */
#define CHAN_LOOP 0x2u                   /* one per event loop: sign, spawn */

struct chan_srv {
	struct keeper_srv *k;
	int sock;
	unsigned kind;                   /* CHAN_CONTROL or CHAN_LOOP */
	size_t index;                    /* the loop's index (CHAN_LOOP), for logs */
	struct pam_spawn helper;         /* this channel's PAM helper */
	pthread_t thread;
	/* Owned, this thread's alone (made at its first SIGN; NULL: none):
	 * the certified keys that passed the strict parse, so a renewing
	 * browser's key is parsed once, not per certificate. */
	vep_keymemo *memo;
};

/* A new answer to a request of type, carrying rc; NULL when out of memory
 * (the caller then sends nothing and the channel closes). */
static struct ipc_msg *
answer_new(uint8_t type, int rc)
{
	struct ipc_msg *m = keeper_msg_new(type);

	if (m != NULL && ipc_msg_put_u32(m, KEEPER_TAG_RC, (uint32_t)rc) != VEP_OK) {
		ipc_msg_free(m);
		m = NULL;
	}
	return m;
}

/* Sends (and frees) an answer, with fd when >= 0. Returns 0, or VEP_ERR_*
 * when it could not be sent (m NULL included): the network process is then
 * out of step with this channel, which closes. */
static int
answer_send(struct chan_srv *c, struct ipc_msg *m, int fd)
{
	int rc = m != NULL ? keeper_send(c->sock, m, fd) : VEP_ERR_NOMEM;

	ipc_msg_free(m);
	return rc;
}

/* An answer of rc alone. */
static int
answer(struct chan_srv *c, uint8_t type, int rc)
{
	return answer_send(c, answer_new(type, rc), -1);
}

/* The certificate whose signing input is msg, read by the strict parser of
 * what verifiers read (on "input.AA"), or NULL. The certified key's costly
 * checks are the network process's (issuance policy, api/certificate.c):
 * they protect the key's owner, not the domain key, and one that took the
 * network process over could certify a key of its own anyway. */
static vep_cert *
input_cert(vep_keymemo *memo, const uint8_t *msg, size_t len)
{
	static const char dummy_sig[] = ".AA";
	vep_cert *cert = NULL;
	char *text;

	if (len > VEP_JWS_MAX_BYTES || (text = malloc(len + sizeof(dummy_sig))) == NULL)
		return NULL;
	memcpy(text, msg, len);
	memcpy(text + len, dummy_sig, sizeof(dummy_sig));
	if (vep_cert_parse_memo(text, len + sizeof(dummy_sig) - 1, VEP_KEY_CHECKS_CHEAP, memo,
	    &cert) != 0)
		cert = NULL;
	free(text);
	return cert;
}

/* The key with fingerprint fp that may sign cert, or NULL: the current key
 * (or the pending or previous set's) of the certified address's own
 * domain, *issuer set to what that domain's certificates must name (the
 * domain, or the login host it delegates to). So a key signs certificates
 * of exactly the domains configured with it, each under its own issuer. */
static const vep_key *
signer_for(const struct keeper_srv *k, const char *fp, const vep_cert *cert, const char **issuer)
{
	const char *at = strrchr(cert->email, '@');
	const vep_key *key;

	if (at == NULL)
		return NULL;
	if ((key = keyring_find(k->cur, fp, at + 1, issuer)) == NULL &&
	    (key = keyring_find(k->pending, fp, at + 1, issuer)) == NULL)
		key = keyring_find(k->prev, fp, at + 1, issuer);
	return key;
}

/* 1 when cert may be signed with key for a domain whose certificates name
 * issuer: its header names the key's algorithm, its issuer is that one, and
 * its lifetime is at most VEP_CERT_MAX_LIFETIME_MS. A network process that
 * was taken over can still have certificates of its own domains signed (as
 * it could ask for them anyway), but never anything else with a domain key. */
static int
cert_ok(const vep_cert *cert, const vep_key *key, const char *issuer)
{
	return cert->jws->alg == vep_key_alg(key) && strcmp(cert->issuer, issuer) == 0 &&
	    cert->iat_ms >= 0 && cert->exp_ms > cert->iat_ms &&
	    cert->exp_ms - cert->iat_ms <= VEP_CERT_MAX_LIFETIME_MS;
}

/* Signs one item, under the read lock: 0 with *sig (new) and *siglen, or
 * why not. The checks are the same for every item of a batch. */
static int
sign_item(struct chan_srv *c, const char *fp, const uint8_t *in, size_t len, uint8_t **sig,
    size_t *siglen)
{
	const char *issuer = NULL;
	const vep_key *key;
	struct keyring *sets[3];
	vep_key_signer *ks = NULL;
	vep_cert *cert;
	size_t i;
	int rc;

	cert = input_cert(c->memo, in, len);
	if (cert == NULL || (key = signer_for(c->k, fp, cert, &issuer)) == NULL ||
	    !cert_ok(cert, key, issuer))
		rc = VEP_ERR_INVALID;
	else {
		/* This loop's own signer of that very key, from the set that
		 * holds it (slot c->index: SIGN comes only on loop channels,
		 * each served by one thread, so the slot is this thread's). */
		sets[0] = c->k->cur;
		sets[1] = c->k->pending;
		sets[2] = c->k->prev;
		rc = VEP_ERR_NOKEY;
		for (i = 0; i < 3 && rc == VEP_ERR_NOKEY; i++)
			rc = keyring_signer(sets[i], key, c->index, c->k->nloops, &ks);
		if (rc == 0)
			rc = vep_key_signer_sign(ks, in, len, sig, siglen);
	}
	vep_cert_free(cert);
	return rc;
}

/* A batch of signing inputs, all for the key named by FINGERPRINT, each
 * checked and signed on its own: one item refused does not refuse the
 * others. Back to back, so the signatures after the first find the key
 * and the exponentiation's tables still in this core's caches. */
static int
do_sign(struct chan_srv *c, const struct ipc_msg *req)
{
	char fp[VEP_FINGERPRINT_BUFSZ];
	const uint8_t *p, *in[KEEPER_SIGN_BATCH_MAX];
	size_t len[KEEPER_SIGN_BATCH_MAX];
	struct ipc_msg *ans;
	uint8_t *sig;
	size_t n, i, count = 0, siglen;
	int rc = VEP_ERR_INVALID, known, irc;

	if (ipc_msg_get(req, KEEPER_TAG_FINGERPRINT, &p, &n) != VEP_OK ||
	    n != VEP_FINGERPRINT_HEX_LEN)
		return answer(c, KEEPER_SIGN, rc);
	memcpy(fp, p, VEP_FINGERPRINT_HEX_LEN);
	fp[VEP_FINGERPRINT_HEX_LEN] = '\0';
	/* Items are numbered from 0 without a gap. */
	for (i = 0; i < KEEPER_SIGN_BATCH_MAX; i++) {
		if (ipc_msg_get(req, (uint8_t)(KEEPER_TAG_ITEM + i), &p, &n) != VEP_OK)
			continue;
		if (i != count)
			return answer(c, KEEPER_SIGN, rc);
		in[count] = p;
		len[count++] = n;
	}
	if (count == 0)
		return answer(c, KEEPER_SIGN, rc);
	/* Without memory for the memo, every key is parsed: the same check. */
	if (c->memo == NULL && vep_keymemo_new(&c->memo) != 0)
		c->memo = NULL;
	if ((ans = answer_new(KEEPER_SIGN, 0)) == NULL)
		return VEP_ERR_NOMEM;
	pthread_rwlock_rdlock(&c->k->lock);
	/* Pending too: loops take up a new set as soon as it is swapped in,
	 * a moment before the commit arrives. */
	known = keyring_find(c->k->cur, fp, NULL, NULL) != NULL ||
	    keyring_find(c->k->pending, fp, NULL, NULL) != NULL ||
	    keyring_find(c->k->prev, fp, NULL, NULL) != NULL;
	for (i = 0, rc = 0; i < count && rc == 0; i++) {
		sig = NULL;
		siglen = 0;
		irc = known ? sign_item(c, fp, in[i], len[i], &sig, &siglen) : VEP_ERR_NOKEY;
		rc = keeper_put_result(ans, i, irc, sig, siglen);
		free(sig);
	}
	pthread_rwlock_unlock(&c->k->lock);
	if (rc != 0) {
		ipc_msg_free(ans);
		ans = answer_new(KEEPER_SIGN, VEP_ERR_NOMEM);
	}
	return answer_send(c, ans, -1);
}

/* The bundle's text in a memfd, or -1 with errno (EFBIG: over
 * KEEPER_BUNDLE_MAX, which the network process would refuse). */
static int
bundle_fd(const json_t *bundle)
{
	char *text = json_dumps(bundle, JSON_COMPACT);
	size_t len, off = 0;
	ssize_t n;
	int fd = -1, e;

	if (text == NULL) {
		errno = ENOMEM;
		return -1;
	}
	len = strlen(text);
	if (len > KEEPER_BUNDLE_MAX)
		errno = EFBIG;
	else if ((fd = memfd_create("vep-bundle", MFD_CLOEXEC)) >= 0) {
		while (off < len && (n = write(fd, text + off, len - off)) > 0)
			off += (size_t)n;
		if (off < len) {
			close(fd);
			fd = -1;
		}
	}
	e = errno;
	/* It holds the TLS key: wiped (jansson's free wipes too). */
	vep_memzero(text, len);
	free(text);
	errno = e;
	return fd;
}

static int
do_load(struct chan_srv *c, const struct ipc_msg *req)
{
	struct keyring *kr = NULL, *old;
	struct ipc_msg *ans;
	json_t *bundle = NULL;
	char err[1024];
	int rc, fd = -1, switches;

	(void)req;
	rc = keyring_load(c->k->p->config_path, c->k->p->make_cfg, c->k->p->make_cfg_arg, &kr,
	    &bundle, err, sizeof(err));
	/* Sockets speak HTTP or HTTPS from the start on. */
	pthread_rwlock_rdlock(&c->k->lock);
	switches = rc == 0 && c->k->cur != NULL &&
	    (kr->cfg->tls_cert == NULL) != (c->k->cur->cfg->tls_cert == NULL);
	pthread_rwlock_unlock(&c->k->lock);
	if (switches) {
		rc = VEP_ERR_INVALID;
		snprintf(err, sizeof(err), "switching between HTTP and HTTPS (tls_cert) needs a "
		    "restart");
	}
	if (rc == 0 && (fd = bundle_fd(bundle)) < 0) {
		rc = errno == EFBIG ? VEP_ERR_TOOBIG : VEP_ERR_NOMEM;
		snprintf(err, sizeof(err), "cannot pass the keys on: %s", errno == EFBIG ?
		    "keys and alias tables come to more than 256 MiB" : strerror(errno));
	}
	json_decref(bundle);
	if (rc != 0) {
		keyring_free(kr);
		ans = answer_new(KEEPER_LOAD, rc);
		/* Without its reason the answer still says it failed. */
		if (ans != NULL)
			(void)ipc_msg_put_str(ans, KEEPER_TAG_REASON, err);
		return answer_send(c, ans, -1);
	}
	pthread_rwlock_wrlock(&c->k->lock);
	old = c->k->pending;
	c->k->pending = kr;
	pthread_rwlock_unlock(&c->k->lock);
	keyring_free(old);
	rc = answer_send(c, answer_new(KEEPER_LOAD, 0), fd);
	close(fd);
	return rc;
}

/* The network process took the pending load up (cur becomes prev, which
 * loops still holding the old set sign with until they let go) or did
 * not (it is dropped). */
static int
do_commit(struct chan_srv *c, const struct ipc_msg *req)
{
	struct keyring *drop;
	uint32_t taken = 0;
	int rc = VEP_OK;

	pthread_rwlock_wrlock(&c->k->lock);
	if (c->k->pending == NULL || ipc_msg_get_u32(req, KEEPER_TAG_TAKEN, &taken) != VEP_OK ||
	    taken > 1) {
		drop = NULL;
		rc = VEP_ERR_INVALID;
	} else if (taken == 1) {
		drop = c->k->prev;
		c->k->prev = c->k->cur;
		c->k->cur = c->k->pending;
	} else {
		drop = c->k->pending;
	}
	if (rc == VEP_OK)
		c->k->pending = NULL;
	pthread_rwlock_unlock(&c->k->lock);
	keyring_free(drop);
	return answer(c, KEEPER_COMMIT, rc);
}

static int
do_spawn(struct chan_srv *c, const struct ipc_msg *req)
{
	struct ipc_msg *ans;
	pid_t pid = 0;
	int fd = -1, rc;

	(void)req;
	/* The network process asks again only after it saw the last one's
	 * socket close or misbehave: pam_spawn_next ends it now. */
	rc = pam_spawn_next(&c->helper, &fd, &pid);
	ans = answer_new(KEEPER_SPAWN, rc);
	if (ans != NULL && rc == 0 &&
	    ipc_msg_put_u32(ans, KEEPER_TAG_PID, (uint32_t)pid) != VEP_OK) {
		ipc_msg_free(ans);
		ans = NULL;
	}
	rc = answer_send(c, ans, fd);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* What each channel may ask. A handler answers (always, exactly once) and
 * returns 0, or VEP_ERR_* when the answer could not be sent. */
static const struct keeper_dispatch {
	uint8_t type;                    /* enum keeper_msg */
	const char *name;                /* for logs */
	unsigned permit;                 /* CHAN_* it may arrive on */
	int (*fn)(struct chan_srv *c, const struct ipc_msg *req);
} dispatch_table[] = {
	{ KEEPER_SIGN, "SIGN", CHAN_LOOP, do_sign },
	{ KEEPER_LOAD, "LOAD", CHAN_CONTROL, do_load },
	{ KEEPER_SPAWN, "SPAWN", CHAN_LOOP, do_spawn },
	{ KEEPER_COMMIT, "COMMIT", CHAN_CONTROL, do_commit },
};

/* Finds req's entry, checks its permit and runs it. Returns what the
 * handler does (0, or the channel must close). */
static int
dispatch(struct chan_srv *c, const struct ipc_msg *req)
{
	const struct keeper_dispatch *d = NULL;
	uint8_t type = ipc_msg_type(req);
	size_t i;

	for (i = 0; i < sizeof(dispatch_table) / sizeof(dispatch_table[0]); i++)
		if (dispatch_table[i].type == type)
			d = &dispatch_table[i];
	if (d == NULL)
		return answer(c, type, VEP_ERR_INVALID);
	if ((d->permit & c->kind) == 0) {
		if (c->kind == CHAN_CONTROL)
			log_warn(&c->k->log, "key process: %s refused on the control channel "
			    "(permitted on the loops' channels only)", d->name);
		else
			log_warn(&c->k->log, "key process: %s refused on loop %zu's channel "
			    "(permitted on the control channel only)", d->name, c->index);
		return answer(c, type, VEP_ERR_ARG);
	}
	return d->fn(c, req);
}

static void *
chan_thread(void *arg)
{
	struct chan_srv *c = arg;
	struct ipc_msg *req;
	int fd, rc;

	for (;;) {
		if (keeper_recv(c->sock, &req, &fd, -1) != 0)
			break;
		/* No request passes a descriptor. */
		if (fd >= 0)
			close(fd);
		rc = dispatch(c, req);
		/* Wipes the signing input. */
		ipc_msg_free(req);
		if (rc != 0)
			break;
	}
	close(c->sock);
	/* Its socket in the network process is closed too: it ends itself. */
	pam_spawn_end(&c->helper, PAM_SPAWN_STOP_GRACE_MS);
	return NULL;
}

void
keeper_run(const struct keeper_params *p, int control, const int *loops, size_t nloops)
{
	struct keeper_srv k;
	struct chan_srv *c;
	struct log lg;
	char err[256];
	size_t i, started = 0;
	int confined;

	/* Ctrl-C and the service manager's signals are for the network
	 * process; this one ends when its channels close. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* Capabilities are per thread: before the channel threads start,
	 * which inherit what is left. A key process that could not give them
	 * up does not serve (the network process sees it end and stops). */
	if (privdrop_keep_caps(KEEPER_CAPS, &confined, err, sizeof(err)) != 0) {
		log_init(&lg, LOGL_ERROR, stderr);
		log_error(&lg, "key process: %s", err);
		_exit(1);
	}
	memset(&k, 0, sizeof(k));
	k.p = p;
	k.nloops = nloops;
	log_init(&k.log, LOGL_WARN, stderr);
	/* c[0] is the control channel, c[1 + i] loop i's. */
	if ((k.helper_path = pam_spawn_default_path()) == NULL ||
	    pthread_rwlock_init(&k.lock, NULL) != 0 ||
	    (c = calloc(nloops + 1, sizeof(*c))) == NULL)
		_exit(1);
	for (i = 0; i < nloops + 1; i++) {
		c[i].k = &k;
		c[i].sock = i == 0 ? control : loops[i - 1];
		c[i].kind = i == 0 ? CHAN_CONTROL : CHAN_LOOP;
		c[i].index = i == 0 ? 0 : i - 1;
		c[i].helper.helper_path = k.helper_path;
		c[i].helper.extra_env = p->helper_env;
		if (pthread_create(&c[i].thread, NULL, chan_thread, &c[i]) != 0)
			break;
		started++;
	}
	for (i = 0; i < started; i++) {
		pthread_join(c[i].thread, NULL);
		vep_keymemo_free(c[i].memo);
	}
	/* No thread signs any more: the keyrings go with their signers. */
	keyring_free(k.pending);
	keyring_free(k.cur);
	keyring_free(k.prev);
	_exit(started == nloops + 1 ? 0 : 1);
}
