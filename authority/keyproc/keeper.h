/*
 * keyproc/keeper.h - privilege separation: the key process.
 *
 * The authority runs as two processes. The network process (the one started,
 * which drops to the configured user after binding when started as root)
 * serves HTTP and never reads, opens or maps a domain's private key. The
 * key process, forked from it at start before any key is read, keeps the
 * user it was started as (root) but, before anything else, gives up every
 * capability except CAP_DAC_READ_SEARCH and CAP_AUDIT_WRITE and sets
 * no-new-privileges, for itself and the PAM helpers it starts (keyproc/keeper.c,
 * KEEPER_CAPS, says why these two); then it does what needs them:
 *   - reads the configuration, the domain keys (self-tested), the TLS pair
 *     and the alias tables (keyproc/keyring.h), at start and on every reload, and
 *     passes on everything but the private keys (the bundle);
 *   - signs certificates' signing inputs with a domain's current key, named
 *     by its public key's fingerprint (the current and the previous load's
 *     keys answer, so a loop still serving the old set during a reload
 *     gets its certificates signed);
 *   - starts the PAM helpers (which must run with the privileges PAM
 *     needs), replacing one when asked, and reaps them.
 * Each event loop has its own channel (keyproc/proto.h), answered by its own
 * thread in the key process, so loops sign in parallel as before; loading
 * and committing go over one more channel, the control channel, held by
 * the network process's main thread. Each channel may ask only what its
 * holder needs (keyproc/keeper.c's table): a loop's channel signs and spawns, the
 * control channel loads and commits; anything else is refused (VEP_ERR_ARG)
 * and logged. The key
 * process cannot be traced or dumped (PR_SET_DUMPABLE 0, RLIMIT_CORE 0,
 * inherited), ignores terminal signals and ends when the network process
 * closes its channels or dies (PR_SET_PDEATHSIG).
 *
 * The network side's calls block for the answer (a batch of signatures
 * takes about as long as signing them in the loop did; loading, only at
 * start and reload); a batch can also be sent first and its answer read
 * later (keeper_sign_send, keeper_sign_recv), the loop working meanwhile.
 */
#ifndef AUTHORITY_KEYPROC_KEEPER_H
#define AUTHORITY_KEYPROC_KEEPER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "key.h"
#include "keyproc/keyring.h"
#include "keyproc/proto.h"

struct keeper_params {
	const char *config_path;          /* NULL: built-in configuration */
	config_maker_fn make_cfg;       /* how configuration text becomes a config */
	void *make_cfg_arg;
	const char *const *helper_env;    /* extra PAM helper environment, may be NULL */
};

struct keeper;
struct keeper_chan;

/* Forks the key process with the control channel and nloops loop
 * channels (one per event loop). Call before any thread starts. Returns 0
 * with *out, or VEP_ERR_* with a reason in err. */
int keeper_start(const struct keeper_params *p, size_t nloops, struct keeper **out,
    char *err, size_t errlen);

/* Loop i's channel, for keeper_sign and keeper_spawn_helper (borrowed; one
 * thread at a time uses a channel). */
struct keeper_chan *keeper_chan(struct keeper *k, size_t i);

/* The control channel, for keeper_load and keeper_commit (borrowed; one
 * thread at a time). */
struct keeper_chan *keeper_control(struct keeper *k);

/* The key process's pid. */
pid_t keeper_pid(const struct keeper *k);

/* A descriptor that becomes readable (end of file) when the key process
 * has ended, for the network process to notice and stop. */
int keeper_life_fd(const struct keeper *k);

/* 0 when a request on c went unanswered (the key process is gone or
 * stalled; nothing more is asked on it), else 1. */
int keeper_chan_ok(const struct keeper_chan *c);

/* A domain key held by the key process, as the network process names it:
 * the fingerprint (vep_key_fingerprint) of its public half, computed once
 * per load (struct domain), and the channel to ask on. */
struct keeper_key {
	struct keeper_chan *chan;
	const char *fingerprint;
};

/* One signing input of a batch (keeper_sign_batch): input and len are
 * the caller's; rc, and for rc 0 sig (new, free()) and siglen, the
 * answer. */
struct keeper_item {
	const uint8_t *input;
	size_t len;
	int rc;
	uint8_t *sig;
	size_t siglen;
};

/* Signs n inputs (1 <= n <= KEEPER_SIGN_BATCH_MAX, lengths plus
 * KEEPER_ITEM_OVERHEAD each at most KEEPER_SIGN_BATCH_BYTES, all of
 * keyproc/proto.h) with key in one request and one answer, the key process
 * signing them back to back. Returns 0 when the request was answered, each
 * item's rc then saying what keeper_sign would have for it alone; else
 * VEP_ERR_ARG or VEP_ERR_TOOBIG (nothing asked) or VEP_ERR_IO (the key
 * process is gone or did not answer), set in every item's rc too. */
int keeper_sign_batch(const struct keeper_key *key, struct keeper_item *items, size_t n);

/* keeper_sign_batch in two halves, so the caller can work while the key
 * process signs: keeper_sign_send asks (the same checks; items' rc set
 * and the error returned when it did not), keeper_sign_recv then waits
 * for the answer and fills items as keeper_sign_batch does (items and n
 * the same as sent; VEP_ERR_ARG, items untouched, when nothing was sent). One request at a
 * time is due on a channel: another keeper_sign_send before the answer
 * is read is refused (VEP_ERR_ARG). Anything else asked on the channel
 * meanwhile (keeper_spawn_helper) reads the signing answer first and
 * keeps it for keeper_sign_recv. */
int keeper_sign_send(const struct keeper_key *key, struct keeper_item *items, size_t n);
int keeper_sign_recv(const struct keeper_key *key, struct keeper_item *items, size_t n);

/* vep_signer's sign function (ctx: a struct keeper_key *; pub is not
 * looked at). Returns 0 or VEP_ERR_NOKEY (no current key with that
 * fingerprint), VEP_ERR_INVALID (msg is not a certificate of an address
 * of a domain configured with that key, with that domain's issuer: the
 * domain, or the login host its "authority" names), VEP_ERR_TOOBIG (msg
 * over KEEPER_BODY_MAX - 64), VEP_ERR_IO (the key process is gone or did
 * not answer: the channel stays broken). */
int keeper_sign(void *ctx, const vep_key *pub, const uint8_t *msg, size_t len,
    uint8_t **sig, size_t *siglen);

/* Asks for a (re)load, on the control channel: on success *bundle (new reference) is what
 * domain_set_from_bundle builds from, and the key process signs with the
 * new keys as well as the ones in use. On failure the key process keeps
 * what it had, and err says why. A switch between HTTP and HTTPS is
 * refused. */
int keeper_load(struct keeper_chan *c, json_t **bundle, char *err, size_t errlen);

/* After a successful keeper_load, on the control channel: taken (1: the new keys are in use; the
 * ones in use before still sign until the next commit) or not (0: the
 * loaded keys are dropped). Returns 0 or VEP_ERR_*. */
int keeper_commit(struct keeper_chan *c, int taken);

/* pam_client's spawn function (arg: a struct keeper_chan *): the key
 * process kills and reaps the channel's previous helper, starts a new one
 * and passes its socket. Returns 0 with *fd and *pid, or VEP_ERR_*. */
int keeper_spawn_helper(void *arg, int *fd, pid_t *pid);

/* Closes the channels and waits for the key process to end. NULL-safe. */
void keeper_stop(struct keeper *k);

/* The key process's body (keyproc/keeper.c), run in the child, answering on the
 * control channel's socket and nloops loop channels' sockets: never
 * returns. */
void keeper_run(const struct keeper_params *p, int control, const int *loops,
    size_t nloops) __attribute__((noreturn));

#endif
