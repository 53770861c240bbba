/*
 * keyproc/client.c - the network process's side of the key process
 * (contract in keyproc/keeper.h): starting it, and asking it over a channel.
 */
#include "keyproc/keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "keyproc/proto.h"
#include "secmem.h"


struct keeper_chan {
	int sock;
	int broken;      /* a request went unanswered: the channel is out of step */
	int awaiting;    /* a SIGN request was sent (keeper_sign_send), its answer not read */
	struct ipc_msg *held; /* that answer, read early by another request, or NULL */
};

struct keeper {
	pid_t pid;
	int life;        /* read end of a pipe whose write end only the key process holds */
	struct keeper_chan *chans;   /* [0] the control channel, [1 + i] loop i's */
	size_t nchan;                /* 1 + loops, once all are set up */
};

int
keeper_start(const struct keeper_params *p, size_t nloops, struct keeper **out, char *err,
    size_t errlen)
{
	struct keeper *k;
	int *theirs = NULL, sv[2], life[2] = { -1, -1 }, devnull;
	pid_t parent = getpid();
	size_t i, nchan = nloops + 1;
	int rc = VEP_ERR_NOMEM;

	*out = NULL;
	if ((k = calloc(1, sizeof(*k))) == NULL ||
	    (k->chans = calloc(nchan, sizeof(*k->chans))) == NULL ||
	    (theirs = calloc(nchan, sizeof(*theirs))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	k->life = -1;
	for (i = 0; i < nchan; i++)
		k->chans[i].sock = theirs[i] = -1;
	k->nchan = nchan;
	rc = VEP_ERR_IO;
	/* When the key process ends, for whatever reason, the kernel closes
	 * its end and ours reads end of file: no polling, no pid reuse. */
	if (pipe2(life, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "cannot watch the key process: %s", strerror(errno));
		goto fail;
	}
	for (i = 0; i < nchan; i++) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
			snprintf(err, errlen, "cannot create the key process's channels: %s",
			    strerror(errno));
			goto fail;
		}
		k->chans[i].sock = sv[0];
		theirs[i] = sv[1];
	}
	fflush(NULL);
	if ((k->pid = fork()) < 0) {
		snprintf(err, errlen, "cannot start the key process: %s", strerror(errno));
		goto fail;
	}
	if (k->pid == 0) {
		/* The child: only its ends of the channels, no stdout (the
		 * network process's "listening on" line is its own). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		for (i = 0; i < nchan; i++)
			close(k->chans[i].sock);
		close(life[0]);
		if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
			dup2(devnull, STDIN_FILENO);
			dup2(devnull, STDOUT_FILENO);
		}
		prctl(PR_SET_NAME, "vep-keeper");
		keeper_run(p, theirs[0], theirs + 1, nloops);
	}
	for (i = 0; i < nchan; i++)
		close(theirs[i]);
	free(theirs);
	close(life[1]);
	k->life = life[0];
	*out = k;
	return VEP_OK;
fail:
	for (i = 0; theirs != NULL && i < nchan; i++)
		if (theirs[i] >= 0)
			close(theirs[i]);
	free(theirs);
	if (life[0] >= 0) {
		close(life[0]);
		close(life[1]);
	}
	keeper_stop(k);
	return rc;
}

struct keeper_chan *
keeper_chan(struct keeper *k, size_t i)
{
	return k != NULL && i + 1 < k->nchan ? &k->chans[1 + i] : NULL;
}

struct keeper_chan *
keeper_control(struct keeper *k)
{
	return k != NULL && k->nchan > 0 ? &k->chans[0] : NULL;
}

int
keeper_chan_ok(const struct keeper_chan *c)
{
	return c != NULL && !c->broken;
}

pid_t
keeper_pid(const struct keeper *k)
{
	return k != NULL ? k->pid : 0;
}

int
keeper_life_fd(const struct keeper *k)
{
	return k != NULL ? k->life : -1;
}

/* The RC field of ans, an answer to a request of type type, in *rc
 * (VEP_ERR_* travel as their two's complement): 0, or VEP_ERR_IO when ans
 * is of another type or has none. */
static int
answer_rc(const struct ipc_msg *ans, uint8_t type, int *rc)
{
	uint32_t v = 0;

	if (ipc_msg_type(ans) != type || ipc_msg_get_u32(ans, KEEPER_TAG_RC, &v) != 0)
		return VEP_ERR_IO;
	*rc = (int)(int32_t)v;
	return VEP_OK;
}

/* Sends req (freed) and waits for its answer (*ans, new), of the same
 * type and with an RC field, read into *rc. A passed descriptor comes back
 * in *fd (-1 when none). Anything else - no answer, a timeout, a malformed
 * one - leaves the channel out of step: it is marked broken and VEP_ERR_IO
 * or VEP_ERR_* returned. */
static int
ask(struct keeper_chan *c, struct ipc_msg *req, int timeout_ms, struct ipc_msg **ans,
    int *rc, int *fd)
{
	int e;

	*ans = NULL;
	*rc = 0;
	*fd = -1;
	if (c == NULL || c->broken || req == NULL) {
		e = req == NULL ? VEP_ERR_NOMEM : VEP_ERR_IO;
		ipc_msg_free(req);
		return e;
	}
	/* Answers come in the order asked: a signing answer still due is
	 * read first and kept for keeper_sign_recv. */
	if (c->awaiting && c->held == NULL &&
	    (e = keeper_recv(c->sock, &c->held, fd, KEEPER_ANSWER_TIMEOUT_MS)) != 0) {
		c->broken = 1;
		ipc_msg_free(req);
		return e;
	}
	if (*fd >= 0) {
		/* No SIGN answer passes a descriptor. */
		close(*fd);
		*fd = -1;
	}
	if ((e = keeper_send(c->sock, req, -1)) == 0)
		e = keeper_recv(c->sock, ans, fd, timeout_ms);
	if (e == 0)
		e = answer_rc(*ans, ipc_msg_type(req), rc);
	ipc_msg_free(req);
	if (e != 0) {
		c->broken = 1;
		ipc_msg_free(*ans);
		*ans = NULL;
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return e;
	}
	return VEP_OK;
}

/* Clears items for an answer: no signature, rc VEP_ERR_IO until one says
 * otherwise. */
static void
items_reset(struct keeper_item *items, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		items[i].rc = VEP_ERR_IO;
		items[i].sig = NULL;
		items[i].siglen = 0;
	}
}

/* Sets rc in every item, their signatures freed. */
static void
items_fail(struct keeper_item *items, size_t n, int rc)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(items[i].sig);
		items[i].sig = NULL;
		items[i].siglen = 0;
		items[i].rc = rc;
	}
}

/* Why n items cannot be asked for with key now (VEP_ERR_ARG,
 * VEP_ERR_TOOBIG, VEP_ERR_IO: the channel is gone or broken), or 0. */
static int
sign_refusal(const struct keeper_key *key, const struct keeper_item *items, size_t n)
{
	const struct keeper_chan *c = key->chan;
	size_t i, bytes = 0;

	for (i = 0; i < n; i++)
		bytes += items[i].len + KEEPER_ITEM_OVERHEAD;
	if (n == 0 || n > KEEPER_SIGN_BATCH_MAX ||
	    strlen(key->fingerprint) != VEP_FINGERPRINT_HEX_LEN || (c != NULL && c->awaiting))
		return VEP_ERR_ARG;
	if (bytes > KEEPER_SIGN_BATCH_BYTES)
		return VEP_ERR_TOOBIG;
	return c == NULL || c->broken ? VEP_ERR_IO : VEP_OK;
}

int
keeper_sign_send(const struct keeper_key *key, struct keeper_item *items, size_t n)
{
	struct keeper_chan *c = key->chan;
	struct ipc_msg *req;
	size_t i;
	int rc;

	items_reset(items, n);
	/* Nothing asked: every item's rc stays VEP_ERR_IO. */
	if ((rc = sign_refusal(key, items, n)) != 0)
		return rc;
	if ((req = keeper_msg_new(KEEPER_SIGN)) != NULL &&
	    ipc_msg_put(req, KEEPER_TAG_FINGERPRINT, key->fingerprint,
	    VEP_FINGERPRINT_HEX_LEN) != 0) {
		ipc_msg_free(req);
		req = NULL;
	}
	for (i = 0; req != NULL && i < n; i++)
		if (ipc_msg_put(req, (uint8_t)(KEEPER_TAG_ITEM + i), items[i].input,
		    items[i].len) != 0) {
			ipc_msg_free(req);
			req = NULL;
		}
	if (req == NULL) {
		items_fail(items, n, VEP_ERR_NOMEM);
		return VEP_ERR_NOMEM;
	}
	rc = keeper_send(c->sock, req, -1);
	ipc_msg_free(req);
	if (rc != 0) {
		c->broken = 1;
		items_fail(items, n, VEP_ERR_IO);
		return VEP_ERR_IO;
	}
	c->awaiting = 1;
	return VEP_OK;
}

int
keeper_sign_recv(const struct keeper_key *key, struct keeper_item *items, size_t n)
{
	struct keeper_chan *c = key->chan;
	struct ipc_msg *ans = NULL;
	const uint8_t *p;
	size_t i, siglen;
	int rc, arc = 0, fd = -1;

	/* Nothing sent: items are not looked at. */
	if (c == NULL || !c->awaiting || n == 0 || n > KEEPER_SIGN_BATCH_MAX)
		return VEP_ERR_ARG;
	c->awaiting = 0;
	if (c->held != NULL) {
		ans = c->held;
		c->held = NULL;
		rc = VEP_OK;
	} else {
		rc = keeper_recv(c->sock, &ans, &fd, KEEPER_ANSWER_TIMEOUT_MS);
		if (fd >= 0)
			close(fd);
	}
	if (rc == 0)
		rc = answer_rc(ans, KEEPER_SIGN, &arc);
	if (rc == 0)
		rc = arc;
	/* Every item answered and no more, or the channel is out of step. */
	for (i = 0; rc == 0 && i < n; i++) {
		if (keeper_get_result(ans, i, &items[i].rc, &p, &siglen) != 0)
			rc = VEP_ERR_IO;
		else if (items[i].rc == 0 && (items[i].sig = malloc(siglen)) == NULL)
			items[i].rc = VEP_ERR_NOMEM;
		else if (items[i].rc == 0) {
			memcpy(items[i].sig, p, siglen);
			items[i].siglen = siglen;
		}
	}
	if (rc == 0 && keeper_get_result(ans, n, &arc, &p, &siglen) == 0)
		rc = VEP_ERR_IO;
	if (rc == VEP_ERR_IO)
		c->broken = 1;
	if (rc != 0)
		items_fail(items, n, rc);
	ipc_msg_free(ans);
	return rc;
}

int
keeper_sign_batch(const struct keeper_key *key, struct keeper_item *items, size_t n)
{
	int rc;

	if ((rc = keeper_sign_send(key, items, n)) != 0)
		return rc;
	return keeper_sign_recv(key, items, n);
}

int
keeper_sign(void *ctx, const vep_key *pub, const uint8_t *msg, size_t len, uint8_t **sig,
    size_t *siglen)
{
	struct keeper_item it = { msg, len, 0, NULL, 0 };
	int rc;

	(void)pub;
	*sig = NULL;
	*siglen = 0;
	if (len > KEEPER_BODY_MAX - 64)
		return VEP_ERR_TOOBIG;
	if ((rc = keeper_sign_batch(ctx, &it, 1)) == 0 && (rc = it.rc) == 0) {
		*sig = it.sig;
		*siglen = it.siglen;
	}
	return rc;
}

/* Reads the bundle's text from the memfd and parses it. */
static int
read_bundle(int fd, json_t **bundle, char *err, size_t errlen)
{
	struct stat st;
	char *text = NULL;
	size_t off = 0;
	ssize_t n;
	json_error_t je;
	int rc = VEP_ERR_IO;

	if (fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size > KEEPER_BUNDLE_MAX) {
		snprintf(err, errlen, "the keys passed on are unreadable");
		return VEP_ERR_IO;
	}
	if ((text = malloc((size_t)st.st_size)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return VEP_ERR_NOMEM;
	}
	while (off < (size_t)st.st_size &&
	    (n = pread(fd, text + off, (size_t)st.st_size - off, (off_t)off)) > 0)
		off += (size_t)n;
	if (off == (size_t)st.st_size) {
		*bundle = json_loadb(text, off, JSON_REJECT_DUPLICATES, &je);
		rc = *bundle != NULL ? VEP_OK : VEP_ERR_INVALID;
	}
	if (rc != 0)
		snprintf(err, errlen, "the keys passed on are unreadable");
	vep_memzero(text, (size_t)st.st_size);
	free(text);
	return rc;
}

int
keeper_load(struct keeper_chan *c, json_t **bundle, char *err, size_t errlen)
{
	struct ipc_msg *ans = NULL;
	char *reason = NULL;
	int rc, arc, fd;

	*bundle = NULL;
	rc = ask(c, keeper_msg_new(KEEPER_LOAD), KEEPER_LOAD_TIMEOUT_MS, &ans, &arc, &fd);
	if (rc != 0) {
		snprintf(err, errlen, "the key process did not answer");
		return rc;
	}
	if (arc != 0) {
		(void)ipc_msg_get_str(ans, KEEPER_TAG_REASON, KEEPER_FRAME_MAX, &reason);
		snprintf(err, errlen, "%s", reason != NULL && reason[0] != '\0' ? reason :
		    vep_strerror(arc));
		free(reason);
		rc = arc;
	} else if (fd < 0) {
		snprintf(err, errlen, "the key process passed no keys on");
		rc = VEP_ERR_IO;
	} else
		rc = read_bundle(fd, bundle, err, errlen);
	if (fd >= 0)
		close(fd);
	ipc_msg_free(ans);
	return rc;
}

int
keeper_commit(struct keeper_chan *c, int taken)
{
	struct ipc_msg *req, *ans = NULL;
	int rc, arc, fd;

	if ((req = keeper_msg_new(KEEPER_COMMIT)) != NULL &&
	    ipc_msg_put_u32(req, KEEPER_TAG_TAKEN, taken ? 1 : 0) != 0) {
		ipc_msg_free(req);
		req = NULL;
	}
	rc = ask(c, req, KEEPER_ANSWER_TIMEOUT_MS, &ans, &arc, &fd);
	if (fd >= 0)
		close(fd);
	ipc_msg_free(ans);
	return rc != 0 ? rc : arc;
}

int
keeper_spawn_helper(void *arg, int *fd, pid_t *pid)
{
	struct keeper_chan *c = arg;
	struct ipc_msg *ans = NULL;
	uint32_t pid32 = 0;
	int rc, arc;

	*pid = 0;
	rc = ask(c, keeper_msg_new(KEEPER_SPAWN), KEEPER_ANSWER_TIMEOUT_MS, &ans, &arc, fd);
	if (rc == 0 && arc != 0)
		rc = arc;
	else if (rc == 0 && (ipc_msg_get_u32(ans, KEEPER_TAG_PID, &pid32) != 0 || *fd < 0))
		rc = VEP_ERR_IO;
	ipc_msg_free(ans);
	if (rc != 0) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return rc;
	}
	*pid = (pid_t)pid32;
	return VEP_OK;
}

void
keeper_stop(struct keeper *k)
{
	size_t i;

	if (k == NULL)
		return;
	for (i = 0; k->chans != NULL && i < k->nchan; i++) {
		if (k->chans[i].sock >= 0)
			close(k->chans[i].sock);
		ipc_msg_free(k->chans[i].held);
	}
	/* Its threads end on end of file, after ending their helpers. */
	if (k->pid > 0)
		waitpid(k->pid, NULL, 0);
	if (k->life >= 0)
		close(k->life);
	free(k->chans);
	free(k);
}
