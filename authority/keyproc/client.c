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
};

struct keeper {
	pid_t pid;
	int life;        /* read end of a pipe whose write end only the key process holds */
	struct keeper_chan *chans;
	size_t n;
};

int
keeper_start(const struct keeper_params *p, size_t nchan, struct keeper **out, char *err,
    size_t errlen)
{
	struct keeper *k;
	int *theirs = NULL, sv[2], life[2] = { -1, -1 }, devnull;
	pid_t parent = getpid();
	size_t i;
	int rc = VEP_ERR_NOMEM;

	*out = NULL;
	if ((k = calloc(1, sizeof(*k))) == NULL || (k->chans = calloc(nchan, sizeof(*k->chans))) == NULL ||
	    (theirs = calloc(nchan, sizeof(*theirs))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	k->life = -1;
	for (i = 0; i < nchan; i++)
		k->chans[i].sock = theirs[i] = -1;
	k->n = nchan;
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
		keeper_run(p, theirs, nchan);
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
	return k != NULL && i < k->n ? &k->chans[i] : NULL;
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

/* One request and its answer of the same type. */
static int
ask(struct keeper_chan *c, uint32_t type, const void *body, size_t len, struct keeper_hdr *h,
    void *ans, size_t cap, size_t *anslen, int *fd, int timeout_ms)
{
	struct keeper_hdr req = { type, 0 };
	int rc;

	*fd = -1;
	if (c == NULL || c->broken)
		return VEP_ERR_IO;
	if ((rc = keeper_send(c->sock, &req, body, len, -1)) == 0)
		rc = keeper_recv(c->sock, h, ans, cap, anslen, fd, timeout_ms);
	if (rc == 0 && h->type != type)
		rc = VEP_ERR_IO;
	if (rc != 0) {
		c->broken = 1;
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
	return rc;
}

int
keeper_sign(void *ctx, const vep_key *pub, const uint8_t *msg, size_t len, uint8_t **sig,
    size_t *siglen)
{
	const struct keeper_key *key = ctx;
	struct keeper_hdr h;
	uint8_t *req = NULL, ans[1024];
	size_t anslen = 0;
	int rc, fd;

	(void)pub;
	*sig = NULL;
	*siglen = 0;
	if (len > KEEPER_BODY_MAX - 64)
		return VEP_ERR_TOOBIG;
	if (strlen(key->fingerprint) != 64)
		return VEP_ERR_ARG;
	if ((req = malloc(64 + len)) == NULL)
		return VEP_ERR_NOMEM;
	memcpy(req, key->fingerprint, 64);
	memcpy(req + 64, msg, len);
	rc = ask(key->chan, KEEPER_SIGN, req, 64 + len, &h, ans, sizeof(ans), &anslen, &fd,
	    KEEPER_ANSWER_TIMEOUT_MS);
	free(req);
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		return rc;
	if (h.rc != 0)
		return h.rc;
	if (anslen == 0 || (*sig = malloc(anslen)) == NULL)
		return anslen == 0 ? VEP_ERR_IO : VEP_ERR_NOMEM;
	memcpy(*sig, ans, anslen);
	*siglen = anslen;
	return VEP_OK;
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
	struct keeper_hdr h;
	char ans[2048];
	size_t anslen = 0;
	int rc, fd;

	*bundle = NULL;
	rc = ask(c, KEEPER_LOAD, NULL, 0, &h, ans, sizeof(ans) - 1, &anslen, &fd,
	    KEEPER_LOAD_TIMEOUT_MS);
	if (rc != 0) {
		snprintf(err, errlen, "the key process did not answer");
		return rc;
	}
	if (h.rc != 0) {
		ans[anslen] = '\0';
		snprintf(err, errlen, "%s", anslen > 0 ? ans : vep_strerror(h.rc));
		if (fd >= 0)
			close(fd);
		return h.rc;
	}
	if (fd < 0) {
		snprintf(err, errlen, "the key process passed no keys on");
		return VEP_ERR_IO;
	}
	rc = read_bundle(fd, bundle, err, errlen);
	close(fd);
	return rc;
}

int
keeper_commit(struct keeper_chan *c, int taken)
{
	struct keeper_hdr h;
	uint8_t flag = taken ? 1 : 0;
	size_t anslen = 0;
	int rc, fd;

	rc = ask(c, KEEPER_COMMIT, &flag, 1, &h, NULL, 0, &anslen, &fd, KEEPER_ANSWER_TIMEOUT_MS);
	if (fd >= 0)
		close(fd);
	return rc != 0 ? rc : h.rc;
}

int
keeper_spawn_helper(void *arg, int *fd, pid_t *pid)
{
	struct keeper_chan *c = arg;
	struct keeper_hdr h;
	int32_t pid32 = 0;
	size_t anslen = 0;
	int rc;

	*pid = 0;
	rc = ask(c, KEEPER_SPAWN, NULL, 0, &h, &pid32, sizeof(pid32), &anslen, fd,
	    KEEPER_ANSWER_TIMEOUT_MS);
	if (rc == 0 && (h.rc != 0 || anslen != sizeof(pid32) || *fd < 0))
		rc = h.rc != 0 ? h.rc : VEP_ERR_IO;
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
	for (i = 0; k->chans != NULL && i < k->n; i++)
		if (k->chans[i].sock >= 0)
			close(k->chans[i].sock);
	/* Its threads end on end of file, after ending their helpers. */
	if (k->pid > 0)
		waitpid(k->pid, NULL, 0);
	if (k->life >= 0)
		close(k->life);
	free(k->chans);
	free(k);
}
