/*
 * main.c - vep-authority: command line, start-up order, the event loop and
 * clean shutdown.
 *
 *   vep-authority --config FILE [--check] [--listen ADDR:PORT] [--set KEY=VALUE]...
 *   vep-authority --demo [--state DIR] [--listen ADDR:PORT] [--check] [--set KEY=VALUE]...
 *
 * Owns struct authority (the only place state is created and freed) and the
 * signal table. Must never do a module's job itself: it wires config,
 * domains, server and router together, in that order, and tears them down
 * in reverse. Exit status: 0 clean stop or "configuration OK", 1 runtime
 * failure (e.g. cannot bind), 2 usage or configuration error.
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>
#include <jansson.h>

#include "server/shared.h"
#include "core/config.h"
#include "demo/demo.h"
#include "core/domain.h"
#include "err.h"
#include "keyproc/keeper.h"
#include "core/log.h"
#include "core/privdrop.h"
#include "core/reloadstate.h"
#include "core/sdnotify.h"
#include "auth/pam_spawn.h"
#include "api/metrics.h"
#include "api/router.h"
#include "secmem.h"
#include "vep_version.h"
#include "edge/listener.h"
#include "server/loop.h"
#include "server/loops.h"
#include "server/mailbox.h"
#include "auth/faildelay.h"
#include "core/ratelimit.h"
#include "remote/cache.h"
#include "core/errors.h"
#include "store/db.h"

#define EXIT_RUNTIME 1
#define EXIT_CONFIG 2

/* Most --set options on one command line. */
#define OPTIONS_MAX_SETS 32

struct options {
	const char *config;
	const char *state;
	const char *listen;
	int check;
	int demo;
	int list_keys;
	long long reload_pid;        /* --reload PID, 0 when not given */
	const char *sets[OPTIONS_MAX_SETS];  /* --set KEY=VALUE, in order */
	size_t nsets;
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: vep-authority --config FILE [--check] [--listen ADDR:PORT] "
	    "[--set KEY=VALUE]...\n"
	    "       vep-authority --demo [--state DIR] [--listen ADDR:PORT] [--check]\n"
	    "                     [--set KEY=VALUE]...\n"
	    "       vep-authority --config FILE --reload PID\n"
	    "       vep-authority --list-keys | --version\n"
	    "\n"
	    "  --config FILE       read settings from FILE (see CONFIG.md)\n"
	    "  --check             validate the configuration and keys, then exit\n"
	    "  --demo              serve example.test with a generated key, no configuration\n"
	    "  --state DIR         state directory (overrides state_dir; demo default\n"
	    "                      ~/.local/state/vep-authority-demo)\n"
	    "  --listen ADDR:PORT  listen address (overrides listen; port 0 picks one)\n"
	    "  --set KEY=VALUE     set a global configuration key (repeatable; after the\n"
	    "                      file or the demo's defaults, e.g. --set shim_origin=URL)\n"
	    "  --reload PID        ask the authority PID (serving FILE's state_dir) to\n"
	    "                      reload, wait for the outcome: exit 0 reloaded, 1 not\n"
	    "                      (the reason on stderr); systemd's ExecReload\n"
	    "  --list-keys         print every configuration key with its default\n"
	    "  --version           print the version (\"vep-authority " VEP_VERSION "\")\n");
}

/* Returns 0, or EXIT_CONFIG after printing why. */
static int
parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'k' },
		{ "demo", no_argument, NULL, 'd' },
		{ "state", required_argument, NULL, 's' },
		{ "listen", required_argument, NULL, 'l' },
		{ "list-keys", no_argument, NULL, 'K' },
		{ "set", required_argument, NULL, 'S' },
		{ "reload", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 'k': o->check = 1; break;
		case 'd': o->demo = 1; break;
		case 's': o->state = optarg; break;
		case 'l': o->listen = optarg; break;
		case 'K': o->list_keys = 1; break;
		case 'S':
			if (o->nsets == OPTIONS_MAX_SETS || strchr(optarg, '=') == NULL) {
				fprintf(stderr, "vep-authority: --set KEY=VALUE (at most %d)\n",
				    OPTIONS_MAX_SETS);
				return EXIT_CONFIG;
			}
			o->sets[o->nsets++] = optarg;
			break;
		case 'R': {
			char *end;
			errno = 0;
			o->reload_pid = strtoll(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg || o->reload_pid <= 1 ||
			    o->reload_pid > INT_MAX) {
				fprintf(stderr, "vep-authority: --reload PID: not a process id: "
				    "'%s'\n", optarg);
				return EXIT_CONFIG;
			}
			break;
		}
		case 'h': usage(stdout); exit(0);
		case 'V': printf("vep-authority %s\n", VEP_VERSION); exit(0);
		default: usage(stderr); return EXIT_CONFIG;
		}
	}
	if (optind != argc || (!o->list_keys && (o->demo == (o->config != NULL)))) {
		fprintf(stderr, "vep-authority: give exactly one of --config FILE or --demo\n");
		usage(stderr);
		return EXIT_CONFIG;
	}
	return 0;
}

/* "FILE:LINE" of the global key name for messages, or "FILE" when the
 * file does not set it (its default, or the command line's). */
static const char *
key_where(const struct config *cfg, const char *name, char *buf, size_t buflen)
{
	const char *file = cfg->path != NULL ? cfg->path : "demo";
	unsigned line = config_key_line(cfg, name);

	if (line > 0)
		snprintf(buf, buflen, "%s:%u", file, line);
	else
		snprintf(buf, buflen, "%s", file);
	return buf;
}

/* The state directory the start will use: an existing one must be private
 * (others reading it would see sessions), a missing one must be creatable
 * (the server makes only its last component, with mode 0700). */
static int
check_state_dir(const struct config *cfg, char *err, size_t errlen)
{
	char where[4200], parent[4096], *slash;
	struct stat st;

	if (stat(cfg->state_dir, &st) == 0) {
		if (S_ISDIR(st.st_mode) && (st.st_mode & 077) == 0)
			return VEP_OK;
		snprintf(err, errlen, "%.300s: key 'state_dir': '%.300s' must be a directory "
		    "with mode 0700", key_where(cfg, "state_dir", where, sizeof(where)),
		    cfg->state_dir);
		return VEP_ERR_PERM;
	}
	/* The demo makes its own directories. */
	if (cfg->path == NULL || errno != ENOENT)
		return VEP_OK;
	snprintf(parent, sizeof(parent), "%s", cfg->state_dir);
	if ((slash = strrchr(parent, '/')) != NULL)
		*(slash == parent ? slash + 1 : slash) = '\0';
	if (stat(parent, &st) == 0 && S_ISDIR(st.st_mode))
		return VEP_OK;
	snprintf(err, errlen, "%.300s: key 'state_dir': cannot create '%.300s': its parent "
	    "'%.300s' %s (the "
	    "server creates only the last directory)",
	    key_where(cfg, "state_dir", where, sizeof(where)), cfg->state_dir, parent,
	    stat(parent, &st) == 0 ? "is not a directory" : "does not exist");
	return VEP_ERR_IO;
}

/* Permission checks beyond the key files' own (vep_key_load_private): a
 * key directory others can write lets them swap the domain key, and a
 * state directory others can read exposes sessions. */
static int
check_permissions(const struct config *cfg, char *err, size_t errlen)
{
	struct stat st;
	size_t i;

	for (i = 0; i < cfg->ndomains; i++) {
		const struct config_domain *d = &cfg->domains[i];
		if (stat(d->key_dir, &st) == 0 && (st.st_mode & 022) != 0) {
			snprintf(err, errlen, "%s:%u: [domain %s] key_dir '%s': writable by group "
			    "or others", cfg->path != NULL ? cfg->path : "demo", d->key_dir_line,
			    d->name, d->key_dir);
			return VEP_ERR_PERM;
		}
	}
	return check_state_dir(cfg, err, errlen);
}

/* Where libpam will look for the service: pam_wrapper's directory when it
 * is preloaded (tests), else the system's. */
static int
pam_service_present(const char *service, char *where, size_t wherelen)
{
	static const char *const dirs[] = { "/etc/pam.d", "/usr/lib/pam.d" };
	const char *wrapped = getenv("PAM_WRAPPER_SERVICE_DIR"), *on = getenv("PAM_WRAPPER");
	char path[4096];
	size_t i;

	if (wrapped != NULL && on != NULL && strcmp(on, "1") == 0) {
		snprintf(where, wherelen, "%s", wrapped);
		snprintf(path, sizeof(path), "%s/%s", wrapped, service);
		return access(path, R_OK) == 0;
	}
	snprintf(where, wherelen, "/etc/pam.d or /usr/lib/pam.d");
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], service);
		if (access(path, R_OK) == 0)
			return 1;
	}
	return 0;
}

/* The PAM service must exist: without its file libpam falls back to the
 * service "other", which on Debian includes common-auth, so sign-in would
 * run whatever stack the machine's logins use instead of the one
 * configured. Checked at start and by --check (the demo writes its own). */
static int
check_pam_service(const struct config *cfg, char *err, size_t errlen)
{
	char where[256], at[4200];

	if (pam_service_present(cfg->pam_service, where, sizeof(where)))
		return VEP_OK;
	snprintf(err, errlen, "%.300s: key 'pam_service': no PAM service '%s' in %.200s: create it "
	    "(see README.md, Real PAM); without it libpam would use the service 'other', "
	    "which on Debian includes common-auth",
	    key_where(cfg, "pam_service", at, sizeof(at)), cfg->pam_service, where);
	return VEP_ERR_IO;
}

/* --check's look at the rest of the deployment: the PAM service exists,
 * the PAM helper is installed where the key process will run it, and the
 * database (if there is one yet) is one this program can use. */
static int
check_deployment(const struct config *cfg, char *err, size_t errlen)
{
	char *helper, at[4200];
	int rc;

	if ((rc = check_pam_service(cfg, err, errlen)) != 0)
		return rc;
	/* The path the key process will run (auth/pam_spawn.h). */
	if ((helper = pam_spawn_default_path()) != NULL && access(helper, X_OK) != 0) {
		snprintf(err, errlen, "the PAM helper %.512s is missing or not executable "
		    "(meson install puts it there)", helper);
		free(helper);
		return VEP_ERR_IO;
	}
	free(helper);
	if (cfg->database != NULL) {
		/* Never the value itself in a message: it may hold a password. */
		if ((rc = db_check_pg(cfg->database)) != 0) {
			snprintf(err, errlen, "%.300s: key 'database': the PostgreSQL store: %s%s",
			    key_where(cfg, "database", at, sizeof(at)), srv_strerror(rc),
			    rc == DB_ERR_NEWER ? " (a downgrade: see README.md, Upgrading)" :
			    rc == DB_ERR_DOWN ? " (is the server running, and the connection "
			    "string's host, port, user and password right?)" : "");
			return rc;
		}
		return VEP_OK;
	}
	if ((rc = db_check_file(cfg->state_dir)) != 0) {
		snprintf(err, errlen, "%.300s: key 'state_dir': database %.300s/%s: %s%s",
		    key_where(cfg, "state_dir", at, sizeof(at)), cfg->state_dir,
		    DB_FILE_NAME, srv_strerror(rc), rc == DB_ERR_NEWER ?
		    " (a downgrade: see README.md, Upgrading)" : rc == DB_ERR_CORRUPT ?
		    " (restore it from a backup, or move it away to start afresh)" : "");
		return rc;
	}
	return VEP_OK;
}

/* What make_config needs: the command line, and whether this is the key
 * process (which alone may create the demo's key). */
struct config_source {
	const struct options *o;
	int make_key;
};

/* config_maker_fn: the configuration from the file's text (or the demo's
 * built-in one when text is NULL) with the command line's overrides, the
 * same in both processes. */
static int
make_config(void *arg, const char *text, size_t len, struct config **cfg, char *err,
    size_t errlen)
{
	const struct config_source *src = arg;
	const struct options *o = src->o;
	char *abs = NULL, cwd[4096];
	size_t i;
	int rc;

	*cfg = NULL;
	if (o->demo || text == NULL)
		rc = demo_config(o->state, src->make_key, cfg, err, errlen);
	else
		rc = config_load_text(o->config, text, len, cfg, err, errlen);
	for (i = 0; rc == 0 && i < o->nsets; i++) {
		char key[64];
		size_t klen = strcspn(o->sets[i], "=");
		snprintf(key, sizeof(key), "%.*s", (int)klen, o->sets[i]);
		rc = config_set(*cfg, "--set", key, o->sets[i] + klen + 1, err, errlen);
	}
	if (rc == 0 && o->listen != NULL)
		rc = config_set(*cfg, "--listen", "listen", o->listen, err, errlen);
	if (rc == 0 && o->state != NULL && !o->demo) {
		/* On the command line, relative means relative to here. */
		if (o->state[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL &&
		    asprintf(&abs, "%s/%s", cwd, o->state) < 0)
			abs = NULL;
		rc = config_set(*cfg, "--state", "state_dir", abs != NULL ? abs : o->state,
		    err, errlen);
		free(abs);
	}
	/* The file's own cross-checks ran before the overrides: again. */
	if (rc == 0 && o->nsets > 0)
		rc = config_check(*cfg, "--set", err, errlen);
	if (rc != 0) {
		config_free(*cfg);
		*cfg = NULL;
	}
	return rc;
}

/* The configuration the process starts with (its sockets, loops and
 * identity), read here; the key process reads the file again for keys.
 * Returns 0 or EXIT_CONFIG after printing why. */
static int
load_config(const struct options *o, struct config **cfg)
{
	struct config_source src = { o, 0 };
	char err[1024], *text = NULL;
	size_t len = 0;
	int rc = 0;

	*cfg = NULL;
	if (!o->demo)
		rc = config_read_file(o->config, &text, &len, err, sizeof(err));
	if (rc == 0)
		rc = make_config(&src, text, len, cfg, err, sizeof(err));
	free(text);
	if (rc != 0) {
		fprintf(stderr, "vep-authority: %s\n", err);
		return EXIT_CONFIG;
	}
	return 0;
}

/* jansson's free: request bodies (passwords) and replies (CSRF tokens,
 * certificates) pass through jansson's buffers, so whatever it frees is
 * wiped first. */
static void
json_free_wiped(void *p)
{
	if (p != NULL)
		vep_memzero(p, malloc_usable_size(p));
	free(p);
}

static void
on_stop(evutil_socket_t sig, short what, void *arg)
{
	struct authority *a = arg;
	size_t i;

	log_info(&a->log, "signal %d: shutting down", (int)sig);
	sdnotify_send(&a->notify, "STOPPING=1\nSTATUS=shutting down (signal %d)", (int)sig);
	for (i = 0; i < a->nloops; i++)
		loop_stop(a->loops[i]);
}

/* Asks the key process to (re)load and builds the domain set from what it
 * passes on. Returns 0 with *out (then tell the key process whether it was
 * taken up: settle_domains), or VEP_ERR_* with a reason in err. */
static int
load_domains(struct authority *a, struct domain_set **out, char *err, size_t errlen)
{
	json_t *bundle = NULL;
	int rc;

	*out = NULL;
	if ((rc = keeper_load(keeper_control(a->keeper), &bundle, err, errlen)) != 0)
		return rc;
	rc = domain_set_from_bundle(bundle, a->make_cfg, a->make_cfg_arg, out, err, errlen);
	json_decref(bundle);
	if (rc != 0)
		(void)keeper_commit(keeper_control(a->keeper), 0);
	return rc;
}

/* Tells the key process whether the last load is in use. A failure here
 * means its channel is broken: the key process is gone or stalled, which
 * the loops notice on their own. */
static void
settle_domains(struct authority *a, int taken)
{
	if (keeper_commit(keeper_control(a->keeper), taken) != 0)
		log_error(&a->log, "the key process did not take the %s load", taken ? "new" :
		    "refused");
}

/* Writes what one domain now serves into buf: the signing key's
 * fingerprint, then the other published keys'. */
static void
served_keys_text(const struct domain *d, char *buf, size_t len)
{
	const struct {
		const vep_key *k;
		const char *role;
	} keys[] = {
		{ d->keys.current, "signing" }, { d->keys.next, "next" },
		{ d->keys.previous, "previous" },
	};
	char fp[VEP_FINGERPRINT_BUFSZ];
	size_t used = 0, i;
	int n;

	buf[0] = '\0';
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]) && used < len; i++) {
		if (keys[i].k == NULL || vep_key_fingerprint(keys[i].k, fp) != 0)
			continue;
		n = snprintf(buf + used, len - used, "%s%s %s", used > 0 ? ", " : "", keys[i].role,
		    fp);
		used += n > 0 ? (size_t)n : 0;
	}
}

/* Records a reload's outcome where --reload and /healthz look, and tells
 * systemd the service is ready again. */
static void
reload_done(struct authority *a, int ok, const char *reason)
{
	struct reloadstate st = { (long long)getpid(), ++a->reloads, ok, "" };

	snprintf(st.reason, sizeof(st.reason), "%s", reason);
	atomic_store(&a->reload_failed, !ok);
	if (!ok)
		atomic_fetch_add_explicit(&a->metrics.reload_failures, 1, memory_order_relaxed);
	if (reloadstate_write(a->cfg->state_dir, &st) != 0)
		log_warn(&a->log, "reload: cannot write %s/%s: %s (vep-authority --reload will "
		    "not see this outcome)", a->cfg->state_dir, RELOADSTATE_FILE, strerror(errno));
	sdnotify_send(&a->notify, "READY=1\nSTATUS=%s", ok ? "serving; last reload succeeded" :
	    "serving the old configuration and keys: the last reload failed");
}

/* Asks the key process to read the configuration and keys again, builds
 * the new domain set from what it passes on and swaps it in whole: a
 * configuration or key that fails leaves everything as it was. */
static void
on_reload(evutil_socket_t sig, short what, void *arg)
{
	struct authority *a = arg;
	struct domain_set *next = NULL;
	char err[1024], names[256], keys[4 * VEP_FINGERPRINT_BUFSZ];
	size_t i;
	int rc;

	sdnotify_send(&a->notify, "RELOADING=1\nSTATUS=reloading");
	if ((rc = load_domains(a, &next, err, sizeof(err))) != 0) {
		log_error(&a->log, "reload: %s (still serving the old configuration and keys)",
		    err);
		reload_done(a, 0, err);
		return;
	}
	if (config_restart_changes(a->cfg, next->cfg, names, sizeof(names)) > 0)
		log_warn(&a->log, "reload: %s changed in the configuration: takes effect "
		    "at the next start (the rest is reloaded)", names);
	if ((rc = loops_domains_swap(a, next)) != 0) {
		snprintf(err, sizeof(err), "%s", rc == VEP_ERR_EXISTS ?
		    "the previous reload is still settling; send SIGHUP again" :
		    vep_strerror(rc));
		log_error(&a->log, "reload: %s (still serving the old configuration and keys)",
		    err);
		settle_domains(a, 0);
		reload_done(a, 0, err);
		return;
	}
	settle_domains(a, 1);
	for (i = 0; i < next->n; i++) {
		served_keys_text(&next->v[i], keys, sizeof(keys));
		log_info(&a->log, "reload %s: configuration and keys loaded; %s",
		    next->v[i].cfg->name, keys);
	}
	if (next->tls != NULL)
		log_info(&a->log, "reload: TLS certificate loaded for new connections");
	reload_done(a, 1, "reloaded");
}

/* The key process ended while we serve: nothing can be signed and no PAM
 * helper replaced, so stop (the service manager restarts us). */
static void
on_keeper_gone(evutil_socket_t fd, short what, void *arg)
{
	struct authority *a = arg;
	size_t i;

	log_error(&a->log, "the key process ended unexpectedly: stopping");
	a->failed = 1;
	for (i = 0; i < a->nloops; i++)
		loop_stop(a->loops[i]);
}

/* What each signal does: stop cleanly, or reload keys after a rotation. */
static const struct {
	int signo;
	event_callback_fn cb;
} signal_table[] = {
	{ SIGTERM, on_stop },
	{ SIGINT, on_stop },
	{ SIGHUP, on_reload },
};

#define NSIGNALS (sizeof(signal_table) / sizeof(signal_table[0]))

/* This process holds the domain keys and sees passwords in flight: no core
 * file may ever contain them, and no process of the same user may attach
 * to read them (ptrace, /proc/PID/mem). The PAM helper does the same. */
static void
protect_memory(const struct log *lg)
{
	struct rlimit none = { 0, 0 };

	if (setrlimit(RLIMIT_CORE, &none) != 0 || prctl(PR_SET_DUMPABLE, 0) != 0)
		log_warn(lg, "cannot disable core dumps and tracing: %s", strerror(errno));
}

/* Client connections are most of our descriptors: use all the hard limit
 * allows (systemd's LimitNOFILE, ulimit -Hn). Failing leaves the soft
 * limit, which max_connections = 0 then follows. */
static void
raise_nofile(const struct log *lg)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		log_warn(lg, "cannot raise the descriptor limit: %s", strerror(errno));
}

/* Whom the network process serves as. */
struct run_as {
	int drop;       /* 1: started as root with `user`: drop to uid:gid */
	uid_t uid;
	gid_t gid;
};

/* Looks `user` up when it will be used (started as root) or when always
 * (--check). Returns 0, or VEP_ERR_INVALID with "FILE:LINE: key 'user': ..."
 * in err. */
static int
resolve_user(const struct config *cfg, int always, struct run_as *as, char *err,
    size_t errlen)
{
	char msg[512], at[4200];

	memset(as, 0, sizeof(*as));
	if (cfg->user == NULL || (!always && geteuid() != 0))
		return VEP_OK;
	if (privdrop_lookup(cfg->user, &as->uid, &as->gid, msg, sizeof(msg)) != 0) {
		snprintf(err, errlen, "%.300s: %s", key_where(cfg, "user", at,
		    sizeof(at)), msg);
		return VEP_ERR_INVALID;
	}
	as->drop = geteuid() == 0;
	return VEP_OK;
}

/* Creates the loops (loop 0 first: the others bind the port it got), gives
 * up root when as says so (after binding, before reading a byte from
 * anyone), opens the rest of each loop, and starts every loop but 0 in its
 * thread. */
static int
start_loops(struct authority *a, size_t n, const struct run_as *as, char *err, size_t errlen)
{
	size_t i;
	int rc;

	if (as->drop && (rc = privdrop_own_state(a->cfg->state_dir, as->uid, as->gid, err,
	    errlen)) != 0)
		return rc;
	if ((a->loops = calloc(n, sizeof(*a->loops))) == NULL ||
	    (a->mailboxes = calloc(n, sizeof(*a->mailboxes))) == NULL)
		return VEP_ERR_NOMEM;
	a->nloops = n;
	for (i = 0; i < n; i++) {
		const char *listen = i == 0 ? a->cfg->listen : server_address(a->loops[0]->server);
		if ((rc = loop_new(a, i, listen, &a->loops[i], err, errlen)) != 0)
			return rc;
	}
	/* The metrics listener on loop 0, bound (like the others) before any
	 * privilege is dropped. */
	if (a->cfg->metrics_listen != NULL && (rc = server_listen(a->loops[0],
	    a->cfg->metrics_listen, 0, api_metrics, &a->metrics_server)) != 0) {
		snprintf(err, errlen, "metrics_listen %s: cannot listen", a->cfg->metrics_listen);
		return rc;
	}
	if (as->drop) {
		if ((rc = privdrop_to(as->uid, as->gid, err, errlen)) != 0)
			return rc;
		log_info(&a->log, "serving as user %s (uid %u); the domain keys and PAM stay with "
		    "the key process (pid %d)", a->cfg->user, (unsigned)as->uid,
		    (int)keeper_pid(a->keeper));
	} else if (geteuid() == 0) {
		log_warn(&a->log, "running as root: set 'user' so the network process drops root "
		    "after binding (the domain keys are in the key process either way)");
	} else {
		log_info(&a->log, "running as uid %u, not root: PAM modules that need "
		    "root (pam_unix reading /etc/shadow) can check only this user's "
		    "password", (unsigned)geteuid());
	}
	for (i = 0; i < n; i++)
		if ((rc = loop_open(a->loops[i], err, errlen)) != 0)
			return rc;
	for (i = 1; i < n; i++) {
		if ((rc = loop_start_thread(a->loops[i])) != 0) {
			snprintf(err, errlen, "cannot start event loop thread %zu", i);
			return rc;
		}
	}
	return VEP_OK;
}

/* The served domains from the key process's first load. Returns 0 or
 * EXIT_CONFIG after printing why. */
static int
first_load(struct authority *a)
{
	struct domain_set *set = NULL;
	char err[1024];
	int rc;

	if ((rc = load_domains(a, &set, err, sizeof(err))) != 0) {
		fprintf(stderr, "vep-authority: %s\n", err);
		return EXIT_CONFIG;
	}
	atomic_store(&a->domains, set);
	settle_domains(a, 1);
	return 0;
}

/* --check: everything the key process and the network process would load,
 * in this process, which then exits. */
static int
check_all(const struct options *o, const struct config *cfg)
{
	/* The demo's key is made here as it would be at start. */
	struct config_source src = { o, o->demo };
	struct keyring *kr = NULL;
	json_t *bundle = NULL;
	struct run_as as;
	char err[1024];
	int rc;

	rc = keyring_load(o->demo ? NULL : o->config, make_config, &src, &kr, &bundle, err,
	    sizeof(err));
	keyring_free(kr);
	json_decref(bundle);
	if (rc == 0)
		rc = check_permissions(cfg, err, sizeof(err));
	if (rc == 0 && !o->demo)
		rc = check_deployment(cfg, err, sizeof(err));
	if (rc == 0)
		rc = resolve_user(cfg, 1, &as, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "vep-authority: %s\n", err);
		return EXIT_CONFIG;
	}
	printf("configuration OK\n");
	return 0;
}

/* --reload PID: exit 0 when PID reloaded, 1 when its reload failed or it
 * could not be asked (the reason on stderr). */
static int
request_reload(const struct config *cfg, pid_t pid)
{
	char msg[RELOADSTATE_REASON_MAX + 128];
	int rc = reloadstate_request(cfg->state_dir, pid, RELOADSTATE_WAIT_MS, msg, sizeof(msg));

	if (rc == 0) {
		printf("vep-authority: process %lld reloaded\n", (long long)pid);
		return 0;
	}
	fprintf(stderr, "vep-authority: %s%s\n", rc == 1 ? "reload failed: " : "", msg);
	return EXIT_RUNTIME;
}

/* Serving: the reload status starts over, and systemd hears that we are
 * ready (Type=notify) and which process is the main one. */
static void
started(struct authority *a)
{
	struct reloadstate st = { (long long)getpid(), 0, 1, "started" };

	if (reloadstate_write(a->cfg->state_dir, &st) != 0)
		log_warn(&a->log, "cannot write %s/%s: %s (vep-authority --reload will not work)",
		    a->cfg->state_dir, RELOADSTATE_FILE, strerror(errno));
	sdnotify_send(&a->notify, "READY=1\nMAINPID=%lld\nSTATUS=listening on %s",
	    (long long)getpid(), server_address(a->loops[0]->server));
}

static void
stop_loops(struct authority *a)
{
	size_t i;

	server_free(a->metrics_server);
	a->metrics_server = NULL;
	for (i = 0; i < a->nloops; i++)
		loop_stop(a->loops[i]);
	/* Loop 0 last: the retirement timer lives on its base. */
	for (i = a->nloops; i-- > 1;)
		loop_free(a->loops[i]);
	if (a->retire_timer != NULL)
		event_free(a->retire_timer);
	a->retire_timer = NULL;
	if (a->nloops > 0)
		loop_free(a->loops[0]);
	/* Every loop is gone: nothing posts any more. */
	for (i = 0; a->mailboxes != NULL && i < a->nloops; i++)
		mailbox_free(a->mailboxes[i]);
	free(a->mailboxes);
	a->mailboxes = NULL;
	free(a->loops);
	a->loops = NULL;
	a->nloops = 0;
}

int
main(int argc, char **argv)
{
	struct authority a;
	struct event *sigev[NSIGNALS] = { NULL }, *keeper_ev = NULL;
	struct config_source net_src, key_src;
	struct keeper_params kp;
	struct options o;
	char err[1024];
	size_t i, nloops;
	struct run_as as;
	int status = EXIT_RUNTIME;

	memset(&a, 0, sizeof(a));
	log_init(&a.log, LOGL_INFO, stderr);
	clock_gettime(CLOCK_REALTIME, &a.started);
	if ((status = parse_options(argc, argv, &o)) != 0)
		return status;
	if (o.list_keys) {
		config_print_keys(stdout);
		return 0;
	}
	/* A client that goes away mid-write must not kill the server. */
	signal(SIGPIPE, SIG_IGN);
	protect_memory(&a.log);
	json_set_alloc_funcs(malloc, json_free_wiped);
	status = EXIT_CONFIG;
	if (load_config(&o, &a.cfg) != 0)
		goto out;
	if (o.reload_pid > 0) {
		status = request_reload(a.cfg, (pid_t)o.reload_pid);
		goto out;
	}
	a.demo = o.demo;
	a.log.level = (enum log_level)a.cfg->log_level;
	if (router_self_check() != 0) {
		log_error(&a.log, "a route requires a check that does not exist");
		status = EXIT_RUNTIME;
		goto out;
	}
	if (o.check) {
		status = check_all(&o, a.cfg);
		goto out;
	}
	if (check_permissions(a.cfg, err, sizeof(err)) != 0 ||
	    (!o.demo && check_pam_service(a.cfg, err, sizeof(err)) != 0) ||
	    resolve_user(a.cfg, 0, &as, err, sizeof(err)) != 0) {
		fprintf(stderr, "vep-authority: %s\n", err);
		goto out;
	}
	status = EXIT_RUNTIME;
	a.access_syslog.fd = -1;
	if (a.cfg->access_log == CONFIG_ACCESS_LOG_SYSLOG && syslog_out_open(&a.access_syslog,
	    a.cfg->syslog_socket, (int)a.cfg->syslog_facility) != 0) {
		log_error(&a.log, "access_log = syslog: cannot use syslog_socket '%s'",
		    a.cfg->syslog_socket);
		goto out;
	}
	/* Before any child starts: only this process may notify. */
	if (sdnotify_open(&a.notify) != 0)
		log_warn(&a.log, "NOTIFY_SOCKET names no usable socket: systemd will not hear "
		    "that the authority is ready");
	if (a.demo && demo_pam_setup(a.cfg->state_dir, a.cfg->pam_service, &a.pam_env, err,
	    sizeof(err)) != 0) {
		log_error(&a.log, "%s", err);
		goto out;
	}
	/* The key process first, before any key is read and any thread runs. */
	net_src = (struct config_source){ &o, 0 };
	key_src = (struct config_source){ &o, 1 };
	kp = (struct keeper_params){
		o.demo ? NULL : o.config, make_config, &key_src,
		(const char *const *)a.pam_env
	};
	a.make_cfg = make_config;
	a.make_cfg_arg = &net_src;
	nloops = a.cfg->workers > 0 ? (size_t)a.cfg->workers : loop_default_count();
	if (keeper_start(&kp, nloops, &a.keeper, err, sizeof(err)) != 0) {
		log_error(&a.log, "%s", err);
		goto out;
	}
	if ((status = first_load(&a)) != 0)
		goto out;
	status = EXIT_RUNTIME;
	/* Loops wake each other (stop, reload acks): libevent must lock. */
	if (evthread_use_pthreads() != 0 || faildelay_new(&a.faildelay) != 0 ||
	    (a.verify_limit = ratelimit_new()) == NULL ||
	    (a.remote_cache = remote_cache_new()) == NULL) {
		log_error(&a.log, "cannot set up threads, randomness or memory");
		goto out;
	}
	raise_nofile(&a.log);
	if (start_loops(&a, nloops, &as, err, sizeof(err)) != 0) {
		log_error(&a.log, "%s", err);
		goto out;
	}
	for (i = 0; i < NSIGNALS; i++) {
		sigev[i] = evsignal_new(a.loops[0]->base, signal_table[i].signo,
		    signal_table[i].cb, &a);
		if (sigev[i] == NULL || evsignal_add(sigev[i], NULL) != 0) {
			log_error(&a.log, "cannot install signal handlers");
			goto out;
		}
	}
	keeper_ev = event_new(a.loops[0]->base, keeper_life_fd(a.keeper), EV_READ,
	    on_keeper_gone, &a);
	if (keeper_ev == NULL || event_add(keeper_ev, NULL) != 0) {
		log_error(&a.log, "cannot watch the key process");
		goto out;
	}
	/* The one line scripts and tests wait for: the real bound port. */
	printf("listening on %s://%s\n", authority_domains(&a)->tls != NULL ? "https" : "http",
	    server_address(a.loops[0]->server));
	fflush(stdout);
	if (a.metrics_server != NULL)
		log_info(&a.log, "metrics on http://%s%s", server_address(a.metrics_server),
		    PATH_METRICS);
	log_info(&a.log, "vep-authority %s listening on %s://%s (%zu domain%s, %zu event loop%s)",
	    VEP_VERSION, authority_domains(&a)->tls != NULL ? "https" : "http",
	    server_address(a.loops[0]->server), authority_domains(&a)->n,
	    authority_domains(&a)->n == 1 ? "" : "s", a.nloops, a.nloops == 1 ? "" : "s");
	if (a.demo && demo_start(&a) != 0)
		goto out;
	started(&a);
	if (event_base_dispatch(a.loops[0]->base) != 0) {
		log_error(&a.log, "event loop failed");
		goto out;
	}
	status = a.failed ? EXIT_RUNTIME : 0;
	log_info(&a.log, "stopped");
out:
	if (a.demo)
		demo_stop(&a);
	for (i = 0; i < NSIGNALS; i++)
		if (sigev[i] != NULL)
			event_free(sigev[i]);
	if (keeper_ev != NULL)
		event_free(keeper_ev);
	stop_loops(&a);
	keeper_stop(a.keeper);
	authority_domains_free(&a);
	demo_pam_env_free(a.pam_env);
	faildelay_free(a.faildelay);
	ratelimit_free(a.verify_limit);
	remote_cache_free(a.remote_cache);
	config_free(a.cfg);
	sdnotify_close(&a.notify);
	syslog_out_close(&a.access_syslog);
	return status;
}
