/*
 * core/config.c - the configuration file parser and the one table of keys.
 *
 * Owns the line format, the key table and value validation. Must never
 * touch the resources the values name (key files, sockets, directories):
 * --check does that through core/domain.c and main.c after parsing succeeds.
 */
#include "core/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "email.h"
#include "err.h"
#include "file.h"
#include "edge/proxy.h"
#include "core/fixed_limits.h"
#include "core/syslog_out.h"

enum config_scope { SCOPE_GLOBAL, SCOPE_DOMAIN };

struct config_key;
/* Validates text and stores it in field. Writes a reason (no file or line)
 * to why on error. */
typedef int (*config_setter)(const struct config_key *k, void *field,
    const char *text, const char *base_dir, char *why, size_t whylen);

struct config_key {
	const char *name;
	enum config_scope scope;
	config_setter set;
	const char *def;        /* default as text, NULL when there is none */
	long min, max;          /* bounds for integer keys */
	size_t offset;          /* of the field in struct config / config_domain */
	int required;
	const char *doc;
};

static int set_int(const struct config_key *, void *, const char *, const char *, char *, size_t);
static int set_path(const struct config_key *, void *, const char *, const char *, char *, size_t);
static int set_access_log(const struct config_key *, void *, const char *, const char *, char *,
    size_t);
static int set_facility(const struct config_key *, void *, const char *, const char *, char *,
    size_t);
static int set_listen(const struct config_key *, void *, const char *, const char *, char *,
    size_t);
static int set_url(const struct config_key *, void *, const char *, const char *, char *, size_t);
static int set_loglevel(const struct config_key *, void *, const char *, const char *, char *,
    size_t);
static int set_case(const struct config_key *, void *, const char *, const char *, char *, size_t);
static int set_bool(const struct config_key *, void *, const char *, const char *, char *, size_t);
static int set_name(const struct config_key *, void *, const char *, const char *, char *, size_t);
static int set_suffix(const struct config_key *, void *, const char *, const char *, char *,
    size_t);
static int set_proxies(const struct config_key *, void *, const char *, const char *, char *,
    size_t);
static int set_origins(const struct config_key *, void *, const char *, const char *, char *,
    size_t);
static int set_authority(const struct config_key *, void *, const char *, const char *, char *,
    size_t);
static int set_addr_text(const struct config_key *, void *, const char *, const char *, char *,
    size_t);
static int set_text(const struct config_key *, void *, const char *, const char *, char *,
    size_t);
static int set_connect_map(const struct config_key *, void *, const char *, const char *,
    char *, size_t);

#define G(m) offsetof(struct config, m)
#define D(m) offsetof(struct config_domain, m)

/* Every setting. Adding one: a struct member and one row here (and its
 * paragraph in CONFIG.md; the integration tests check every key is there). */
static const struct config_key config_keys[] = {
	{ "listen", SCOPE_GLOBAL, set_listen, "127.0.0.1:8080", 0, 0, G(listen), 0,
	  "address and port to listen on, ADDR:PORT or [IPv6]:PORT; port 0 picks a free port" },
	{ "metrics_listen", SCOPE_GLOBAL, set_listen, NULL, 0, 0, G(metrics_listen), 0,
	  "address and port of a second listener that serves only GET /metrics (Prometheus "
	  "text format) for the operator; unset = off" },
	{ "state_dir", SCOPE_GLOBAL, set_path, "/var/lib/vep-authority", 0, 0, G(state_dir), 0,
	  "directory for the authority's state (database); must not be accessible by group "
	  "or others" },
	{ "max_age", SCOPE_GLOBAL, set_int, "300", LIMIT_MAX_AGE_S_MIN, LIMIT_MAX_AGE_S_MAX,
	  G(max_age_s), 0,
	  "seconds clients and verifiers may cache discovery documents (Cache-Control max-age)" },
	{ "request_timeout", SCOPE_GLOBAL, set_int, "30", LIMIT_REQUEST_TIMEOUT_S_MIN,
	  LIMIT_REQUEST_TIMEOUT_S_MAX, G(request_timeout_s), 0,
	  "seconds a connection may stay idle or take to send a request before it is closed" },
	{ "header_timeout", SCOPE_GLOBAL, set_int, "10", LIMIT_REQUEST_TIMEOUT_S_MIN,
	  LIMIT_REQUEST_TIMEOUT_S_MAX, G(header_timeout_s), 0,
	  "seconds from a request's first byte to the end of its headers, however steadily "
	  "they trickle in; then the connection is closed" },
	{ "body_timeout", SCOPE_GLOBAL, set_int, "10", LIMIT_REQUEST_TIMEOUT_S_MIN,
	  LIMIT_REQUEST_TIMEOUT_S_MAX, G(body_timeout_s), 0,
	  "seconds from the end of a request's headers to the end of its body; then the "
	  "connection is closed" },
	{ "max_connections", SCOPE_GLOBAL, set_int, "0", 0, LIMIT_CONNECTIONS_MAX,
	  G(max_connections), 0,
	  "open client connections; beyond it a new one gets 503 and is closed; 0 = the "
	  "descriptor limit minus a reserve" },
	{ "max_connections_per_addr", SCOPE_GLOBAL, set_int, "256", 0, LIMIT_CONNECTIONS_MAX,
	  G(max_connections_per_addr), 0,
	  "open client connections from one address (IPv6: one /64); beyond it a new one gets "
	  "503 and is closed; trusted_proxies are exempt; 0 = no cap" },
	{ "tls_cert", SCOPE_GLOBAL, set_path, NULL, 0, 0, G(tls_cert), 0,
	  "PEM certificate chain (leaf first) for native HTTPS on listen; with tls_key; "
	  "reloaded on SIGHUP" },
	{ "tls_key", SCOPE_GLOBAL, set_path, NULL, 0, 0, G(tls_key), 0,
	  "PEM private key of tls_cert, mode 0600" },
	{ "hsts_max_age", SCOPE_GLOBAL, set_int, "31536000", LIMIT_HSTS_MAX_AGE_S_MIN,
	  LIMIT_HSTS_MAX_AGE_S_MAX, G(hsts_max_age_s), 0,
	  "seconds of the Strict-Transport-Security header on every HTTPS response (with "
	  "tls_cert); 0 tells browsers to forget it" },
	{ "hsts_include_subdomains", SCOPE_GLOBAL, set_bool, "no", 0, 0,
	  G(hsts_include_subdomains), 0,
	  "yes or no: whether Strict-Transport-Security covers every subdomain of the host "
	  "(includeSubDomains); only if all of them serve HTTPS" },
	{ "trusted_proxies", SCOPE_GLOBAL, set_proxies, NULL, 0, 0, G(trusted_proxies), 0,
	  "addresses or prefixes (ADDR[/BITS], separated by spaces or commas) of reverse proxies "
	  "whose X-Forwarded-For names the client; unset = the peer is the client" },
	{ "user", SCOPE_GLOBAL, set_name, NULL, 1, LIMIT_USER_NAME_BYTES, G(user), 0,
	  "when started as root: the unprivileged account the network process runs as after "
	  "binding (the domain keys stay in a separate root process); unset = no change" },
	{ "workers", SCOPE_GLOBAL, set_int, "0", 0, LIMIT_WORKERS_MAX, G(workers), 0,
	  "event loops serving requests, each in its own thread; 0 = one per online CPU" },
	{ "log_level", SCOPE_GLOBAL, set_loglevel, "info", 0, 0, G(log_level), 0,
	  "least severe messages logged to stderr: error, warn, info or debug" },
	{ "access_log", SCOPE_GLOBAL, set_access_log, "stderr", 0, 0, G(access_log), 0,
	  "where the access log goes, one line per request (client address, host, method, path, "
	  "status, bytes, duration): stderr (with the other messages, at level info), syslog "
	  "(syslog_socket) or off" },
	{ "syslog_socket", SCOPE_GLOBAL, set_path, "/dev/log", 0, 0, G(syslog_socket), 0,
	  "the syslog daemon's datagram socket, for access_log = syslog" },
	{ "syslog_facility", SCOPE_GLOBAL, set_facility, "daemon", 0, 0, G(syslog_facility), 0,
	  "syslog facility of the access log: daemon, user, auth, authpriv or local0 to local7" },
	{ "shim_origin", SCOPE_GLOBAL, set_url, NULL, 0, 0, G(shim_origin), 0,
	  "origin the legacy BrowserID pages load the user agent's shim from "
	  "(provisioning_api.js, authentication_api.js); the provisioning page may be framed "
	  "by it; unset = the legacy provisioning page is off" },
	{ "embed_origins", SCOPE_GLOBAL, set_origins, NULL, 0, 0, G(embed_origins), 0,
	  "origins (https://HOST[:PORT], separated by spaces or commas; http:// only for a "
	  "loopback host) of webmails that may frame /embed and hand it a password; unset = none" },
	{ "db_max_mib", SCOPE_GLOBAL, set_int, "0", 0, LIMIT_DB_MAX_MIB, G(db_max_mib), 0,
	  "largest size of the database file in MiB; writes beyond it fail as on a full disk "
	  "(sign-in and issuance answer 503); 0 = no cap" },
	{ "database", SCOPE_GLOBAL, set_text, NULL, 1, LIMIT_DATABASE_BYTES, G(database), 0,
	  "the PostgreSQL store that several instances share: a libpq connection string "
	  "(host=... dbname=... user=...) or postgresql:// URI; keep its password in the "
	  "service user's ~/.pgpass, not here; unset = the SQLite file in state_dir" },
	{ "instance_name", SCOPE_GLOBAL, set_name, NULL, 1, LIMIT_INSTANCE_NAME_BYTES,
	  G(instance_name), 0,
	  "this instance's name in every audit row it writes (A-Z a-z 0-9 . _ -); unset = the "
	  "machine's host name" },
	{ "pam_service", SCOPE_GLOBAL, set_name, "vep-authority", 1, LIMIT_PAM_SERVICE_BYTES,
	  G(pam_service), 0,
	  "PAM service name sign-in uses (its stack is /etc/pam.d/NAME)" },
	{ "pam_timeout", SCOPE_GLOBAL, set_int, "10", LIMIT_PAM_TIMEOUT_S_MIN,
	  LIMIT_PAM_TIMEOUT_S_MAX, G(pam_timeout_s), 0,
	  "seconds one PAM attempt may take; then its worker is killed and the client gets 503" },
	{ "second_factor_prompt", SCOPE_GLOBAL, set_text, NULL, 1, LIMIT_PROMPT_BYTES,
	  G(second_factor_prompt), 0,
	  "the question shown when the PAM stack asks for a second factor, for every account: "
	  "then a sign-in PAM refuses before asking anything is asked it too, so the question "
	  "tells nothing about the password or the account; unset = PAM's own words, and no "
	  "question without PAM's" },
	{ "pam_answer_timeout", SCOPE_GLOBAL, set_int, "120", LIMIT_PAM_ANSWER_TIMEOUT_S_MIN,
	  LIMIT_PAM_ANSWER_TIMEOUT_S_MAX, G(pam_answer_timeout_s), 0,
	  "seconds a user has to answer a further question of the PAM stack (a one-time "
	  "code); then the sign-in ends and must start again" },
	{ "pam_workers", SCOPE_GLOBAL, set_int, "16", 1, LIMIT_PAM_WORKERS_MAX, G(pam_workers), 0,
	  "PAM attempts running at once (each event loop runs its share); more wait their turn, "
	  "and beyond 4 waiting per worker get 503 at once" },
	{ "pam_user_case", SCOPE_GLOBAL, set_case, "sensitive", 0, 0,
	  G(pam_user_case_insensitive), 0,
	  "sensitive or insensitive: whether the PAM backend treats user names that differ "
	  "only in case as one account (LDAP, SSSD: insensitive); the throttle counts alike" },
	{ "pam_min_uid", SCOPE_GLOBAL, set_int, "1000", 0, LIMIT_PAM_MIN_UID_MAX,
	  G(pam_min_uid), 0,
	  "lowest UID that may sign in (system accounts are below it); 0 disables the check; "
	  "root never signs in" },
	{ "session_idle", SCOPE_GLOBAL, set_int, "3600", LIMIT_SESSION_S_MIN, LIMIT_SESSION_S_MAX,
	  G(session_idle_s), 0, "seconds a session lasts without being used" },
	{ "session_lifetime", SCOPE_GLOBAL, set_int, "86400", LIMIT_SESSION_S_MIN,
	  LIMIT_SESSION_S_MAX, G(session_lifetime_s), 0,
	  "seconds a session lasts at most after sign-in, however much it is used" },
	{ "cert_max_duration", SCOPE_GLOBAL, set_int, "21600", LIMIT_CERT_DURATION_S_MIN,
	  LIMIT_CERT_DURATION_S_MAX, G(cert_max_duration_s), 0,
	  "longest certificate lifetime issued, in seconds (requests ask for less or get this)" },
	{ "throttle_pair_max", SCOPE_GLOBAL, set_int, "5", 1, LIMIT_THROTTLE_ACCOUNT_MAX,
	  G(throttle_pair_max), 0,
	  "failed sign-ins per account from one client address (IPv6: its /64) per account "
	  "window before 429" },
	{ "throttle_account_max", SCOPE_GLOBAL, set_int, "20", 1, LIMIT_THROTTLE_ACCOUNT_MAX,
	  G(throttle_account_max), 0,
	  "failed sign-ins per account from all addresses per window before 429; not applied "
	  "to an address the account signed in from within throttle_known_for" },
	{ "throttle_account_window", SCOPE_GLOBAL, set_int, "900", 1, LIMIT_THROTTLE_WINDOW_S_MAX,
	  G(throttle_account_window_s), 0,
	  "seconds of the per-account and per-account-and-address windows" },
	{ "throttle_known_for", SCOPE_GLOBAL, set_int, "2592000", 0, LIMIT_THROTTLE_KNOWN_S_MAX,
	  G(throttle_known_for_s), 0,
	  "seconds an address stays known to an account after a sign-in from it; 0 = the "
	  "account-wide limit holds everywhere" },
	{ "throttle_addr_max", SCOPE_GLOBAL, set_int, "20", 1, LIMIT_THROTTLE_ADDR_MAX,
	  G(throttle_addr_max), 0,
	  "failed sign-ins per client address (IPv6: its /64) per window before 429" },
	{ "throttle_addr_window", SCOPE_GLOBAL, set_int, "900", 1, LIMIT_THROTTLE_WINDOW_S_MAX,
	  G(throttle_addr_window_s), 0, "seconds of the per-address window" },
	{ "verify_rate", SCOPE_GLOBAL, set_int, "50", 1, LIMIT_VERIFY_RATE_MAX, G(verify_rate), 0,
	  "POST /verify requests per second one client address (IPv6: its /64) may make, "
	  "after its verify_burst; beyond, 429 with Retry-After" },
	{ "verify_burst", SCOPE_GLOBAL, set_int, "100", 1, LIMIT_VERIFY_RATE_MAX,
	  G(verify_burst), 0, "POST /verify requests one client address may make at once" },
	{ "verify_remote", SCOPE_GLOBAL, set_bool, "no", 0, 0, G(verify_remote), 0,
	  "yes or no: whether POST /verify also checks assertions of other domains, "
	  "discovering their keys over HTTPS" },
	{ "verify_remote_timeout", SCOPE_GLOBAL, set_int, "5", 1, LIMIT_REMOTE_TIMEOUT_S_MAX,
	  G(verify_remote_timeout_s), 0,
	  "seconds a support document fetch may spend connecting, and waiting for each read "
	  "or write" },
	{ "verify_remote_total", SCOPE_GLOBAL, set_int, "10", 1, LIMIT_REMOTE_TIMEOUT_S_MAX,
	  G(verify_remote_total_s), 0,
	  "seconds one remote verification may take in all, every delegation's fetch included" },
	{ "verify_remote_cafile", SCOPE_GLOBAL, set_path, NULL, 0, 0, G(verify_remote_cafile), 0,
	  "PEM file of the certificate authorities trusted for other domains' HTTPS "
	  "(default: the system's)" },
	{ "verify_remote_allow", SCOPE_GLOBAL, set_addr_text, NULL, 0, 0,
	  G(verify_remote_allow), 0,
	  "addresses or prefixes (ADDR[/BITS], separated by spaces or commas) that discovery "
	  "may connect to although loopback, private, link-local or otherwise not public" },
	{ "verify_remote_connect", SCOPE_GLOBAL, set_connect_map, NULL, 0, 0,
	  G(verify_remote_connect), 0,
	  "HOST=ADDR:PORT entries (spaces or commas between): discovery for HOST connects to "
	  "ADDR:PORT instead (testing, split DNS); TLS still checks HOST's certificate" },
	{ "key_dir", SCOPE_DOMAIN, set_path, NULL, 0, 0, D(key_dir), 1,
	  "directory with the domain's current.pem (and previous.pem), as vep-keytool writes it" },
	{ "public_url", SCOPE_DOMAIN, set_url, NULL, 0, 0, D(public_url), 0,
	  "scheme://host[:port] where this authority is reached for the domain; absolute links "
	  "in host-meta and WebFinger use it (default: http:// and the request's Host)" },
	{ "account_suffix", SCOPE_DOMAIN, set_suffix, NULL, 1, LIMIT_ACCOUNT_SUFFIX_BYTES,
	  D(account_suffix), 0,
	  "text appended to an address's local part to make its PAM user name" },
	{ "account_aliases", SCOPE_DOMAIN, set_path, NULL, 0, 0, D(account_aliases), 0,
	  "file of 'LOCALPART PAMUSER' lines overriding the default mapping" },
	{ "authority", SCOPE_DOMAIN, set_authority, NULL, 0, 0, D(authority), 0,
	  "BrowserID delegation: the login host (HOST[:PORT]) that issues the domain's "
	  "certificates (iss = HOST) and serves its keys and pages; the domain itself serves "
	  "{\"authority\":\"HOST\"} (vep-keytool support-doc --delegate HOST)" },
};

#define NKEYS (sizeof(config_keys) / sizeof(config_keys[0]))
_Static_assert(NKEYS <= CONFIG_KEYS_MAX, "raise CONFIG_KEYS_MAX in core/config.h");

unsigned
config_key_line(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (config_keys[i].scope == SCOPE_GLOBAL && strcmp(config_keys[i].name, name) == 0)
			return cfg->key_lines[i];
	return 0;
}

static void
whyf(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
whyf(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/* Replaces the string field with a copy of text. */
static int
store_text(void *field, const char *text, char *why, size_t whylen)
{
	char **dst = field, *p;

	if ((p = strdup(text)) == NULL) {
		whyf(why, whylen, "out of memory");
		return VEP_ERR_NOMEM;
	}
	free(*dst);
	*dst = p;
	return VEP_OK;
}

static int
set_int(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	/* Digits only: strtol alone would take "+5", " 5" or "0x10". */
	if (!isdigit((unsigned char)text[0]) || *end != '\0' || errno != 0 ||
	    v < k->min || v > k->max) {
		whyf(why, whylen, "must be an integer from %ld to %ld", k->min, k->max);
		return VEP_ERR_INVALID;
	}
	*(long *)field = v;
	return VEP_OK;
}

static int
set_path(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	char **dst = field;
	char *p;

	if (text[0] == '\0') {
		whyf(why, whylen, "must be a path");
		return VEP_ERR_INVALID;
	}
	/* A relative path means relative to the configuration file's
	 * directory, never to whatever the working directory happens to be. */
	if (text[0] != '/' && base_dir == NULL) {
		whyf(why, whylen, "must be an absolute path");
		return VEP_ERR_INVALID;
	}
	if (text[0] == '/') {
		p = strdup(text);
	} else if (asprintf(&p, "%s/%s", base_dir, text) < 0) {
		p = NULL;
	}
	if (p == NULL) {
		whyf(why, whylen, "out of memory");
		return VEP_ERR_NOMEM;
	}
	free(*dst);
	*dst = p;
	return VEP_OK;
}

int
config_parse_listen(const char *s, char *host, size_t hostlen, unsigned *port)
{
	const char *colon, *h = s, *hend;
	unsigned char buf[sizeof(struct in6_addr)];
	char tmp[INET6_ADDRSTRLEN];
	unsigned long p;
	char *end;
	size_t n;
	int v6 = 0;

	if (s == NULL)
		return VEP_ERR_INVALID;
	if (s[0] == '[') {
		hend = strchr(s, ']');
		if (hend == NULL || hend[1] != ':')
			return VEP_ERR_INVALID;
		h = s + 1;
		colon = hend + 1;
		v6 = 1;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL)
			return VEP_ERR_INVALID;
		hend = colon;
	}
	n = (size_t)(hend - h);
	if (n == 0 || n >= sizeof(tmp) || n >= hostlen)
		return VEP_ERR_INVALID;
	memcpy(tmp, h, n);
	tmp[n] = '\0';
	if (inet_pton(v6 ? AF_INET6 : AF_INET, tmp, buf) != 1)
		return VEP_ERR_INVALID;
	if (!isdigit((unsigned char)colon[1]) || strlen(colon + 1) > 5)
		return VEP_ERR_INVALID;
	p = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || p > 65535)
		return VEP_ERR_INVALID;
	memcpy(host, tmp, n + 1);
	*port = (unsigned)p;
	return VEP_OK;
}

static int
set_listen(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	char host[INET6_ADDRSTRLEN];
	unsigned port;

	if (config_parse_listen(text, host, sizeof(host), &port) != 0) {
		whyf(why, whylen, "must be IPv4-ADDRESS:PORT or [IPv6-ADDRESS]:PORT");
		return VEP_ERR_INVALID;
	}
	return store_text(field, text, why, whylen);
}

/* Accepts http(s)://host[:port][/] and nothing else: the value is a base
 * that paths are appended to, so a path, query or user part would produce
 * wrong links. */
static int
set_url(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	char **dst = field, *p;
	const char *h;
	size_t n, i;
	int ok = 1;

	if (strncasecmp(text, "https://", 8) == 0)
		h = text + 8;
	else if (strncasecmp(text, "http://", 7) == 0)
		h = text + 7;
	else
		h = NULL;
	n = h != NULL ? strlen(h) : 0;
	if (n > 0 && h[n - 1] == '/')
		n--;
	if (h == NULL || n == 0 || n > VEP_DOMAIN_MAX + 8)
		ok = 0;
	for (i = 0; ok && i < n; i++) {
		unsigned char c = (unsigned char)h[i];
		if (!isalnum(c) && c != '.' && c != '-' && c != ':' && c != '[' && c != ']')
			ok = 0;
	}
	if (!ok) {
		whyf(why, whylen, "must be http://HOST[:PORT] or https://HOST[:PORT] "
		    "without a path");
		return VEP_ERR_INVALID;
	}
	n += (size_t)(h - text);
	if ((p = strndup(text, n)) == NULL) {
		whyf(why, whylen, "out of memory");
		return VEP_ERR_NOMEM;
	}
	for (i = 0; i < n; i++)
		p[i] = (char)tolower((unsigned char)p[i]);
	free(*dst);
	*dst = p;
	return VEP_OK;
}

static int
set_loglevel(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	enum log_level lvl;

	if (log_level_parse(text, &lvl) != 0) {
		whyf(why, whylen, "must be error, warn, info or debug");
		return VEP_ERR_INVALID;
	}
	*(long *)field = (long)lvl;
	return VEP_OK;
}

/* "sensitive" (0) or "insensitive" (1). */
static int
set_case(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	(void)k;
	(void)base_dir;
	if (strcmp(text, "sensitive") == 0)
		*(long *)field = 0;
	else if (strcmp(text, "insensitive") == 0)
		*(long *)field = 1;
	else {
		whyf(why, whylen, "must be sensitive or insensitive");
		return VEP_ERR_INVALID;
	}
	return VEP_OK;
}

static int
set_access_log(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	static const char *const names[] = {
		[CONFIG_ACCESS_LOG_STDERR] = "stderr", [CONFIG_ACCESS_LOG_SYSLOG] = "syslog",
		[CONFIG_ACCESS_LOG_OFF] = "off",
	};
	size_t i;

	(void)k;
	(void)base_dir;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(text, names[i]) == 0) {
			*(long *)field = (long)i;
			return VEP_OK;
		}
	}
	whyf(why, whylen, "must be stderr, syslog or off");
	return VEP_ERR_INVALID;
}

static int
set_facility(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	int v;

	(void)k;
	(void)base_dir;
	if (syslog_facility_parse(text, &v) != 0) {
		whyf(why, whylen, "must be daemon, user, auth, authpriv or local0 to local7");
		return VEP_ERR_INVALID;
	}
	*(long *)field = v;
	return VEP_OK;
}

/* "no" (0) or "yes" (1). */
static int
set_bool(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	(void)k;
	(void)base_dir;
	if (strcmp(text, "no") == 0)
		*(long *)field = 0;
	else if (strcmp(text, "yes") == 0)
		*(long *)field = 1;
	else {
		whyf(why, whylen, "must be yes or no");
		return VEP_ERR_INVALID;
	}
	return VEP_OK;
}

/* Text of min..max bytes without control characters: words shown to users,
 * a libpq connection string (whose syntax is libpq's, checked when the
 * server or --check connects). */
static int
set_text(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	const unsigned char *c;
	size_t n = strlen(text);

	if (n < (size_t)k->min || n > (size_t)k->max) {
		whyf(why, whylen, "must be %ld to %ld bytes", k->min, k->max);
		return VEP_ERR_INVALID;
	}
	for (c = (const unsigned char *)text; *c != '\0'; c++)
		if (*c < 0x20 || *c == 0x7f) {
			whyf(why, whylen, "must not hold control characters");
			return VEP_ERR_INVALID;
		}
	return store_text(field, text, why, whylen);
}

/* A short name: min..max bytes of [A-Za-z0-9._-], not "." or "..". PAM
 * turns the service name into a path under /etc/pam.d. */
static int
set_name(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	size_t n = strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-");

	if (text[n] != '\0' || n < (size_t)k->min || n > (size_t)k->max ||
	    strcmp(text, ".") == 0 || strcmp(text, "..") == 0) {
		whyf(why, whylen, "must be %ld to %ld characters of A-Z a-z 0-9 . _ -", k->min,
		    k->max);
		return VEP_ERR_INVALID;
	}
	return store_text(field, text, why, whylen);
}

static int
set_proxies(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	struct proxy_list **dst = field, *l;
	int rc;

	if ((rc = proxy_list_parse(text, &l, why, whylen)) != 0)
		return rc;
	proxy_list_free(*dst);
	*dst = l;
	return VEP_OK;
}

/* An address list (edge/proxy.h's syntax), kept as the text given: the
 * remote verifier's threads parse their own copy, since a reload may free
 * this configuration while they run. */
static int
set_addr_text(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	struct proxy_list *l;
	int rc;

	if ((rc = proxy_list_parse(text, &l, why, whylen)) != 0)
		return rc;
	proxy_list_free(l);
	return store_text(field, text, why, whylen);
}

/* Reads the entry of map at *p (advanced past it) into host, addr and port.
 * Returns 1 for an entry, 0 at the end, -1 for a malformed one. */
static int
connect_entry(const char **p, char host[VEP_DOMAIN_MAX + 1], char addr[INET6_ADDRSTRLEN],
    unsigned *port)
{
	char hp[VEP_DOMAIN_MAX + 1], ap[INET6_ADDRSTRLEN + 8];
	int n = 0;

	*p += strspn(*p, " ,\t");
	if (**p == '\0')
		return 0;
	if (sscanf(*p, "%253[^= ,\t]=%53[^ ,\t]%n", hp, ap, &n) != 2 || n == 0 ||
	    ((*p)[n] != '\0' && strchr(" ,\t", (*p)[n]) == NULL) || !vep_domain_valid(hp) ||
	    config_parse_listen(ap, addr, INET6_ADDRSTRLEN, port) != 0 || *port == 0)
		return -1;
	*p += n;
	memcpy(host, hp, sizeof hp);
	vep_domain_lower(host);
	return 1;
}

int
config_connect_lookup(const char *map, const char *host, char addr[INET6_ADDRSTRLEN],
    unsigned *port)
{
	char h[VEP_DOMAIN_MAX + 1];
	const char *p = map;
	int r;

	while (map != NULL && (r = connect_entry(&p, h, addr, port)) == 1)
		if (strcasecmp(h, host) == 0)
			return 1;
	return 0;
}

/* "HOST=ADDR:PORT" entries (config_connect_lookup), kept as the text given
 * (see set_addr_text). */
static int
set_connect_map(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	char host[VEP_DOMAIN_MAX + 1], addr[INET6_ADDRSTRLEN];
	const char *p = text;
	unsigned port;
	int r, count = 0;

	while ((r = connect_entry(&p, host, addr, &port)) == 1) {
		if (++count > LIMIT_REMOTE_CONNECT_MAX) {
			whyf(why, whylen, "more than %d entries", LIMIT_REMOTE_CONNECT_MAX);
			return VEP_ERR_TOOBIG;
		}
	}
	if (r < 0 || count == 0) {
		whyf(why, whylen, "entries must be HOST=IPv4-ADDRESS:PORT or HOST=[IPv6]:PORT");
		return VEP_ERR_INVALID;
	}
	return store_text(field, text, why, whylen);
}

/* A host name browsers put in an origin as is: ASCII labels of 1-63
 * letters, digits and '-' (not at either end), at most 253 bytes, and a
 * last label that is not all digits (the browser would read "10.1" as an
 * IPv4 address and write it otherwise). */
static int
origin_hostname_ok(const char *h, size_t n)
{
	size_t i, label = 0, start = 0;
	int digits = 1;

	if (n == 0 || n > VEP_DOMAIN_MAX)
		return 0;
	for (i = 0; i <= n; i++) {
		if (i == n || h[i] == '.') {
			label = i - start;
			if (label == 0 || label > 63 || h[start] == '-' || h[i - 1] == '-')
				return 0;
			if (i < n) {
				start = i + 1;
				digits = 1;
			}
			continue;
		}
		if (!isalnum((unsigned char)h[i]) && h[i] != '-')
			return 0;
		if (!isdigit((unsigned char)h[i]))
			digits = 0;
	}
	return !digits;
}

/* One origin of embed_origins, s[0..n), written canonically (lowercase,
 * IP addresses as browsers serialise them, the scheme's default port
 * dropped) to out: exactly what a browser reports as event.origin and
 * matches in frame-ancestors. https://HOST[:PORT] only; http:// only for a
 * loopback host, which browsers treat as a secure context and no network
 * attacker can stand in for (the webmail hands /embed a password). */
static int
origin_canonical(const char *s, size_t n, char *out, size_t outlen, char *why, size_t whylen)
{
	char host[VEP_DOMAIN_MAX + 1], addr[INET6_ADDRSTRLEN];
	unsigned char bin[sizeof(struct in6_addr)];
	const char *h, *hend, *end = s + n;
	unsigned long port = 0;
	size_t i, hlen;
	int https, v4 = 0, loopback;

	if (n > 8 && strncasecmp(s, "https://", 8) == 0) {
		https = 1;
		h = s + 8;
	} else if (n > 7 && strncasecmp(s, "http://", 7) == 0) {
		https = 0;
		h = s + 7;
	} else {
		whyf(why, whylen, "'%.*s' must be https://HOST[:PORT]", (int)(n > 80 ? 80 : n), s);
		return VEP_ERR_INVALID;
	}
	if (h < end && *h == '[') {
		hend = memchr(h, ']', (size_t)(end - h));
		if (hend == NULL)
			goto bad;
		hlen = (size_t)(hend - h - 1);
		if (hlen == 0 || hlen >= sizeof(addr))
			goto bad;
		memcpy(addr, h + 1, hlen);
		addr[hlen] = '\0';
		if (inet_pton(AF_INET6, addr, bin) != 1 ||
		    inet_ntop(AF_INET6, bin, addr, sizeof(addr)) == NULL)
			goto bad;
		snprintf(host, sizeof(host), "[%s]", addr);
		hend++;
	} else {
		for (hend = h; hend < end && *hend != ':'; hend++)
			;
		hlen = (size_t)(hend - h);
		if (hlen == 0 || hlen >= sizeof(host))
			goto bad;
		for (i = 0; i < hlen; i++)
			host[i] = (char)tolower((unsigned char)h[i]);
		host[hlen] = '\0';
		if (strspn(host, "0123456789.") == hlen) {
			if (inet_pton(AF_INET, host, bin) != 1 ||
			    inet_ntop(AF_INET, bin, addr, sizeof(addr)) == NULL ||
			    strcmp(addr, host) != 0)
				goto bad;
			v4 = 1;
		} else if (!origin_hostname_ok(host, hlen)) {
			goto bad;
		}
	}
	if (hend < end) {
		char *pend;
		if (*hend != ':' || end - hend < 2 || end - hend > 6 ||
		    !isdigit((unsigned char)hend[1]) || hend[1] == '0')
			goto bad;
		for (i = 1; i < (size_t)(end - hend); i++)
			if (!isdigit((unsigned char)hend[i]))
				goto bad;
		port = strtoul(hend + 1, &pend, 10);
		if (port == 0 || port > 65535)
			goto bad;
	}
	loopback = strcmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0 ||
	    (v4 && strncmp(host, "127.", 4) == 0);
	if (!https && !loopback) {
		whyf(why, whylen, "'%.*s': http:// only for a loopback host (127.0.0.1, [::1], "
		    "localhost); a webmail on the network must use https://",
		    (int)(n > 80 ? 80 : n), s);
		return VEP_ERR_INVALID;
	}
	if (port == (https ? 443UL : 80UL))
		port = 0;
	if (port != 0)
		i = (size_t)snprintf(out, outlen, "%s://%s:%lu", https ? "https" : "http", host,
		    port);
	else
		i = (size_t)snprintf(out, outlen, "%s://%s", https ? "https" : "http", host);
	if (i >= outlen)
		goto bad;
	return VEP_OK;
bad:
	whyf(why, whylen, "'%.*s' must be https://HOST[:PORT]: a host name or IP address, an "
	    "optional port, no path", (int)(n > 80 ? 80 : n), s);
	return VEP_ERR_INVALID;
}

/* A list of origins separated by spaces or commas, stored canonically with
 * one space between (core/config.h); empty text means none. */
static int
set_origins(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	char list[LIMIT_EMBED_ORIGINS_BYTES + 1], one[VEP_DOMAIN_MAX + 32], **dst = field, *p;
	const char *s = text, *sep = " ,\t";
	size_t used = 0, count = 0, n;
	int rc;

	(void)k;
	(void)base_dir;
	list[0] = '\0';
	for (s += strspn(s, sep); *s != '\0'; s += strspn(s, sep)) {
		n = strcspn(s, sep);
		if ((rc = origin_canonical(s, n, one, sizeof(one), why, whylen)) != 0)
			return rc;
		s += n;
		if (++count > LIMIT_EMBED_ORIGINS) {
			whyf(why, whylen, "more than %d origins", LIMIT_EMBED_ORIGINS);
			return VEP_ERR_INVALID;
		}
		for (p = list; (p = strstr(p, one)) != NULL; p += strlen(one)) {
			char after = p[strlen(one)];
			if ((p == list || p[-1] == ' ') && (after == '\0' || after == ' ')) {
				whyf(why, whylen, "'%s' listed twice", one);
				return VEP_ERR_INVALID;
			}
		}
		if (used + (used > 0) + strlen(one) > LIMIT_EMBED_ORIGINS_BYTES) {
			whyf(why, whylen, "longer than %d bytes", LIMIT_EMBED_ORIGINS_BYTES);
			return VEP_ERR_INVALID;
		}
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
		    used > 0 ? " " : "", one);
	}
	if (used == 0) {
		free(*dst);
		*dst = NULL;
		return VEP_OK;
	}
	return store_text(field, list, why, whylen);
}

/* Printable ASCII without spaces, '/' or ':' (the result is a user name
 * handed to PAM and NSS). */
/* A login host as verifiers take an "authority": a domain name, optionally
 * ":PORT" (browserid-local-verify allows one), stored lowercase. */
static int
set_authority(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	char host[VEP_DOMAIN_MAX + 1], *end;
	const char *colon = strchr(text, ':');
	size_t n = colon != NULL ? (size_t)(colon - text) : strlen(text);
	unsigned long port;
	char **dst = field;

	if (n == 0 || n > VEP_DOMAIN_MAX)
		goto bad;
	memcpy(host, text, n);
	host[n] = '\0';
	if (!vep_domain_valid(host))
		goto bad;
	if (colon != NULL) {
		errno = 0;
		port = strtoul(colon + 1, &end, 10);
		if (!isdigit((unsigned char)colon[1]) || *end != '\0' || errno != 0 ||
		    port == 0 || port > 65535)
			goto bad;
	}
	if (store_text(field, text, why, whylen) != 0)
		return VEP_ERR_NOMEM;
	vep_domain_lower(*dst);
	return VEP_OK;
bad:
	whyf(why, whylen, "must be a host name, optionally with :PORT");
	return VEP_ERR_INVALID;
}

static int
set_suffix(const struct config_key *k, void *field, const char *text, const char *base_dir,
    char *why, size_t whylen)
{
	size_t i, n = strlen(text);

	for (i = 0; i < n; i++)
		if (text[i] <= ' ' || text[i] == 0x7f || text[i] == '/' || text[i] == ':' ||
		    (unsigned char)text[i] > 0x7f)
			break;
	if (i != n || n < (size_t)k->min || n > (size_t)k->max) {
		whyf(why, whylen, "must be %ld to %ld printable ASCII characters without spaces, "
		    "'/' or ':'", k->min, k->max);
		return VEP_ERR_INVALID;
	}
	return store_text(field, text, why, whylen);
}

static const struct config_key *
find_key(const char *name)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (strcmp(config_keys[i].name, name) == 0)
			return &config_keys[i];
	return NULL;
}

struct config *
config_new(void)
{
	struct config *cfg;
	char why[160];
	size_t i;

	if ((cfg = calloc(1, sizeof(*cfg))) == NULL)
		return NULL;
	for (i = 0; i < NKEYS; i++) {
		const struct config_key *k = &config_keys[i];
		if (k->scope != SCOPE_GLOBAL || k->def == NULL)
			continue;
		/* Defaults go through the setters so they obey the same rules. */
		if (k->set(k, (char *)cfg + k->offset, k->def, NULL, why, sizeof(why)) != 0) {
			config_free(cfg);
			return NULL;
		}
	}
	return cfg;
}

static void
domain_clear(struct config_domain *d)
{
	free(d->name);
	free(d->key_dir);
	free(d->public_url);
	free(d->account_suffix);
	free(d->account_aliases);
	free(d->authority);
	memset(d, 0, sizeof(*d));
}

void
config_free(struct config *cfg)
{
	size_t i;

	if (cfg == NULL)
		return;
	for (i = 0; i < cfg->ndomains; i++)
		domain_clear(&cfg->domains[i]);
	free(cfg->domains);
	free(cfg->path);
	free(cfg->listen);
	free(cfg->metrics_listen);
	free(cfg->state_dir);
	free(cfg->pam_service);
	free(cfg->database);
	free(cfg->second_factor_prompt);
	free(cfg->instance_name);
	free(cfg->shim_origin);
	free(cfg->embed_origins);
	free(cfg->verify_remote_cafile);
	free(cfg->verify_remote_allow);
	free(cfg->verify_remote_connect);
	free(cfg->tls_cert);
	free(cfg->tls_key);
	free(cfg->syslog_socket);
	free(cfg->user);
	proxy_list_free(cfg->trusted_proxies);
	free(cfg);
}

/* Keys a running server cannot change: its sockets, threads, database,
 * PAM helpers and identity are set up once at start. */
static const char *const restart_only[] = {
	"listen", "metrics_listen", "state_dir", "request_timeout", "header_timeout",
	"body_timeout",
	"max_connections", "max_connections_per_addr", "workers", "log_level", "db_max_mib",
	"access_log", "syslog_socket", "syslog_facility",
	"pam_service", "pam_timeout", "pam_answer_timeout", "pam_workers", "pam_min_uid", "user",
	"database", "instance_name", "second_factor_prompt",
	/* Read by the database writer threads, outside any loop. */
	"session_idle", "session_lifetime", "throttle_pair_max", "throttle_account_max",
	"throttle_account_window", "throttle_known_for", "throttle_addr_max",
	"throttle_addr_window", "pam_user_case",
	/* Composed once per listener. */
	"hsts_max_age", "hsts_include_subdomains",
};

static int
key_differs(const struct config_key *k, const struct config *a, const struct config *b)
{
	const char *fa = (const char *)a + k->offset, *fb = (const char *)b + k->offset;

	if (k->set == set_int || k->set == set_loglevel || k->set == set_case ||
	    k->set == set_access_log || k->set == set_facility || k->set == set_bool)
		return *(const long *)fa != *(const long *)fb;
	if (*(char *const *)fa == NULL || *(char *const *)fb == NULL)
		return *(char *const *)fa != *(char *const *)fb;
	return strcmp(*(char *const *)fa, *(char *const *)fb) != 0;
}

size_t
config_restart_changes(const struct config *running, const struct config *next, char *names,
    size_t nameslen)
{
	size_t i, n = 0;

	if (nameslen > 0)
		names[0] = '\0';
	for (i = 0; i < sizeof(restart_only) / sizeof(restart_only[0]); i++) {
		const struct config_key *k = find_key(restart_only[i]);
		if (k == NULL || !key_differs(k, running, next))
			continue;
		n++;
		if (nameslen > 0 && strlen(names) + strlen(k->name) + 3 < nameslen)
			snprintf(names + strlen(names), nameslen - strlen(names), "%s%s",
			    n > 1 ? ", " : "", k->name);
	}
	return n;
}

const struct config_domain *
config_find_domain(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; cfg != NULL && name != NULL && i < cfg->ndomains; i++)
		if (strcmp(cfg->domains[i].name, name) == 0)
			return &cfg->domains[i];
	return NULL;
}

/* Contract in core/config.h; the router and the domain lookup share it. */
int
config_url_host(const char *url, char *out, size_t outlen)
{
	const char *h = strstr(url, "://"), *e;
	size_t n, i;

	if (h == NULL)
		return VEP_ERR_INVALID;
	h += 3;
	if (*h == '[')
		e = strchr(++h, ']');
	else
		e = h + strcspn(h, ":/");
	if (e == NULL || (n = (size_t)(e - h)) == 0 || n >= outlen)
		return VEP_ERR_INVALID;
	for (i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)h[i]);
	out[n] = '\0';
	return VEP_OK;
}

const char *
config_domain_issuer(const struct config_domain *d)
{
	return d->authority != NULL ? d->authority : d->name;
}

int
config_domain_is_authority_host(const struct config_domain *d, const char *host)
{
	size_t n;

	if (d->authority == NULL || host == NULL)
		return 0;
	n = strcspn(d->authority, ":");
	return strlen(host) == n && strncmp(d->authority, host, n) == 0;
}

/* Appends an empty domain named name (validated, lowercased). */
static int
domain_append(struct config *cfg, const char *name, struct config_domain **out)
{
	struct config_domain *nd;
	char *lname;

	*out = NULL;
	if (strlen(name) > VEP_DOMAIN_MAX || !vep_domain_valid(name))
		return VEP_ERR_INVALID;
	if ((lname = strdup(name)) == NULL)
		return VEP_ERR_NOMEM;
	vep_domain_lower(lname);
	if (config_find_domain(cfg, lname) != NULL) {
		free(lname);
		return VEP_ERR_EXISTS;
	}
	if (cfg->ndomains >= LIMIT_CONFIG_DOMAINS) {
		free(lname);
		return VEP_ERR_TOOBIG;
	}
	nd = realloc(cfg->domains, (cfg->ndomains + 1) * sizeof(*nd));
	if (nd == NULL) {
		free(lname);
		return VEP_ERR_NOMEM;
	}
	cfg->domains = nd;
	memset(&nd[cfg->ndomains], 0, sizeof(*nd));
	nd[cfg->ndomains].name = lname;
	*out = &nd[cfg->ndomains++];
	return VEP_OK;
}

int
config_add_domain(struct config *cfg, const char *name, const char *key_dir)
{
	struct config_domain *d;
	int rc;

	if (key_dir == NULL || key_dir[0] != '/')
		return VEP_ERR_INVALID;
	if ((rc = domain_append(cfg, name, &d)) != 0)
		return rc;
	if ((d->key_dir = strdup(key_dir)) == NULL)
		return VEP_ERR_NOMEM; /* the half-built row is freed with cfg */
	return VEP_OK;
}

int
config_set(struct config *cfg, const char *source, const char *key, const char *value,
    char *err, size_t errlen)
{
	const struct config_key *k = find_key(key);
	char why[200];
	int rc;

	if (k == NULL || k->scope != SCOPE_GLOBAL) {
		snprintf(err, errlen, "%s: unknown key '%s'", source, key);
		return VEP_ERR_INVALID;
	}
	if ((rc = k->set(k, (char *)cfg + k->offset, value, NULL, why, sizeof(why))) != 0) {
		snprintf(err, errlen, "%s: key '%s': %s", source, key, why);
		return rc;
	}
	cfg->key_lines[k - config_keys] = 0;
	return rc;
}

/* The rules between keys, shared by the file's parser (which names the
 * line) and config_check: the key at fault, with why, or NULL. */
static const char *
cross_problem(const struct config *cfg, char *why, size_t whylen)
{
	if (cfg->session_idle_s > cfg->session_lifetime_s) {
		whyf(why, whylen, "must not exceed session_lifetime (%ld)",
		    cfg->session_lifetime_s);
		return "session_idle";
	}
	/* Both listeners use SO_REUSEPORT: on one address the kernel would
	 * spread the public clients over the metrics listener too. */
	if (cfg->metrics_listen != NULL && strcmp(cfg->metrics_listen, cfg->listen) == 0 &&
	    strcmp(cfg->listen + strlen(cfg->listen) - 2, ":0") != 0) {
		whyf(why, whylen, "must differ from listen (%s)", cfg->listen);
		return "metrics_listen";
	}
	/* A socket address holds sizeof(sun_path) - 1 bytes of path. */
	if (cfg->access_log == CONFIG_ACCESS_LOG_SYSLOG &&
	    strlen(cfg->syslog_socket) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		whyf(why, whylen, "longer than %zu bytes",
		    sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		return "syslog_socket";
	}
	return NULL;
}

int
config_check(const struct config *cfg, const char *source, char *err, size_t errlen)
{
	char why[256];
	const char *key = cross_problem(cfg, why, sizeof(why));

	if (key == NULL)
		return VEP_OK;
	snprintf(err, errlen, "%s: key '%s': %s", source, key, why);
	return VEP_ERR_INVALID;
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/* State of one parse: which keys were seen in the current scope. */
struct parse {
	const char *path;
	const char *base_dir;
	unsigned line;
	struct config *cfg;
	struct config_domain *dom;       /* current section, NULL for global */
	unsigned char seen_global[NKEYS];
	unsigned char seen_domain[NKEYS];
	unsigned line_global[NKEYS];     /* where each global key was set */
	char *err;
	size_t errlen;
};

static int
perr(struct parse *p, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
perr(struct parse *p, const char *key, const char *fmt, ...)
{
	char why[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (key != NULL)
		snprintf(p->err, p->errlen, "%s:%u: key '%s': %s", p->path, p->line, key, why);
	else
		snprintf(p->err, p->errlen, "%s:%u: %s", p->path, p->line, why);
	return VEP_ERR_INVALID;
}

/* Checks the finished section's required keys. */
static int
close_domain(struct parse *p)
{
	size_t i;

	if (p->dom == NULL)
		return VEP_OK;
	for (i = 0; i < NKEYS; i++) {
		if (config_keys[i].scope == SCOPE_DOMAIN && config_keys[i].required &&
		    !p->seen_domain[i]) {
			snprintf(p->err, p->errlen, "%s:%u: key '%s': missing in [domain %s]",
			    p->path, p->dom->line, config_keys[i].name, p->dom->name);
			return VEP_ERR_INVALID;
		}
	}
	return VEP_OK;
}

static int
parse_section(struct parse *p, char *s)
{
	char *name;
	int rc;

	if (s[strlen(s) - 1] != ']')
		return perr(p, NULL, "section header must end with ']'");
	s[strlen(s) - 1] = '\0';
	s = trim(s + 1);
	if (strncmp(s, "domain", 6) != 0 || (s[6] != ' ' && s[6] != '\t'))
		return perr(p, NULL, "unknown section '[%.40s]' (expected [domain NAME])", s);
	if ((rc = close_domain(p)) != 0)
		return rc;
	name = trim(s + 6);
	rc = domain_append(p->cfg, name, &p->dom);
	if (rc == VEP_ERR_EXISTS)
		return perr(p, NULL, "domain '%.253s' appears twice", name);
	if (rc == VEP_ERR_TOOBIG)
		return perr(p, NULL, "more than %d domains", LIMIT_CONFIG_DOMAINS);
	if (rc == VEP_ERR_NOMEM)
		return perr(p, NULL, "out of memory");
	if (rc != 0)
		return perr(p, NULL, "'%.253s' is not a valid domain name", name);
	p->dom->line = p->line;
	memset(p->seen_domain, 0, sizeof(p->seen_domain));
	return VEP_OK;
}

static int
parse_assignment(struct parse *p, char *s)
{
	const struct config_key *k;
	char *eq = strchr(s, '='), *key, *val, why[200];
	unsigned char *seen;
	size_t idx;
	void *base;

	if (eq == NULL)
		return perr(p, NULL, "expected 'key = value' or '[domain NAME]'");
	*eq = '\0';
	key = trim(s);
	val = trim(eq + 1);
	if ((k = find_key(key)) == NULL)
		return perr(p, key, "unknown key");
	idx = (size_t)(k - config_keys);
	if (k->scope == SCOPE_DOMAIN && p->dom == NULL)
		return perr(p, key, "belongs in a [domain NAME] section");
	if (k->scope == SCOPE_GLOBAL && p->dom != NULL)
		return perr(p, key, "is global: put it before the first [domain] section");
	seen = p->dom != NULL ? p->seen_domain : p->seen_global;
	if (seen[idx])
		return perr(p, key, "set twice");
	if (val[0] == '\0')
		return perr(p, key, "empty value");
	base = p->dom != NULL ? (void *)p->dom : (void *)p->cfg;
	if (k->set(k, (char *)base + k->offset, val, p->base_dir, why, sizeof(why)) != 0)
		return perr(p, key, "%s", why);
	seen[idx] = 1;
	if (p->dom != NULL && strcmp(k->name, "key_dir") == 0)
		p->dom->key_dir_line = p->line;
	if (p->dom != NULL && strcmp(k->name, "account_aliases") == 0)
		p->dom->account_aliases_line = p->line;
	if (p->dom != NULL && strcmp(k->name, "authority") == 0)
		p->dom->authority_line = p->line;
	if (p->dom == NULL) {
		p->line_global[idx] = p->line;
		p->cfg->key_lines[idx] = p->line;
	}
	return VEP_OK;
}

/* The rules of one delegated domain d against the others: its login host
 * is not itself, agrees with its public_url, and every domain whose
 * certificates a verifier checks against that host's support document
 * (one delegating to it, or the host served as a domain of its own) signs
 * with the same key: the host publishes one key set, whichever of them a
 * request names. */
static int
check_delegation(struct parse *p, const struct config_domain *d)
{
	const struct config_domain *e;
	const char *uh;
	size_t i;

	p->line = d->authority_line;
	if (strcmp(d->authority, d->name) == 0)
		return perr(p, "authority", "names the domain itself");
	if (d->public_url != NULL) {
		uh = strstr(d->public_url, "://") + 3;
		if (strcmp(uh, d->authority) != 0)
			return perr(p, "authority",
			    "must be the HOST[:PORT] of public_url (%.260s)", d->public_url);
	}
	for (i = 0; i < p->cfg->ndomains; i++) {
		e = &p->cfg->domains[i];
		if (e == d || (strcmp(e->name, d->authority) != 0 &&
		    (e->authority == NULL || strcmp(e->authority, d->authority) != 0)))
			continue;
		if (strcmp(e->key_dir, d->key_dir) != 0)
			return perr(p, "authority", "[domain %.253s] shares the login host %.260s "
			    "and must use the same key_dir (%.300s)", e->name, d->authority,
			    d->key_dir);
	}
	return VEP_OK;
}

static int
check_delegations(struct parse *p)
{
	size_t i;
	int rc;

	for (i = 0; i < p->cfg->ndomains; i++)
		if (p->cfg->domains[i].authority != NULL &&
		    (rc = check_delegation(p, &p->cfg->domains[i])) != 0)
			return rc;
	return VEP_OK;
}

static int
parse_text(struct parse *p, char *text, size_t len)
{
	char *line = text, *nl, *s, why[256];
	const char *bad;
	int rc;

	if (memchr(text, '\0', len) != NULL) {
		p->line = 1;
		return perr(p, NULL, "file contains a NUL byte");
	}
	while (line < text + len) {
		p->line++;
		nl = memchr(line, '\n', (size_t)(text + len - line));
		if (nl != NULL)
			*nl = '\0';
		if (strlen(line) + 1 > LIMIT_CONFIG_LINE_BYTES)
			return perr(p, NULL, "line longer than %d bytes", LIMIT_CONFIG_LINE_BYTES);
		s = trim(line);
		if (s[0] == '\0' || s[0] == '#')
			rc = 0;
		else if (s[0] == '[')
			rc = parse_section(p, s);
		else
			rc = parse_assignment(p, s);
		if (rc != 0)
			return rc;
		if (nl == NULL)
			break;
		line = nl + 1;
	}
	if ((rc = close_domain(p)) != 0)
		return rc;
	if ((bad = cross_problem(p->cfg, why, sizeof(why))) != NULL) {
		/* The line of the key at fault; else of the key it conflicts with. */
		p->line = p->line_global[find_key(bad) - config_keys];
		if (p->line == 0 && strcmp(bad, "session_idle") == 0)
			p->line = p->line_global[find_key("session_lifetime") - config_keys];
		if (p->line == 0 && strcmp(bad, "metrics_listen") == 0)
			p->line = p->line_global[find_key("listen") - config_keys];
		return perr(p, bad, "%s", why);
	}
	if (p->cfg->ndomains == 0) {
		snprintf(p->err, p->errlen, "%s: no [domain NAME] section: at least one served "
		    "domain is required", p->path);
		return VEP_ERR_INVALID;
	}
	return check_delegations(p);
}

int
config_read_file(const char *path, char **out, size_t *outlen, char *err, size_t errlen)
{
	int rc;

	rc = vep_file_read(path, LIMIT_CONFIG_FILE_BYTES, 0, out, outlen);
	if (rc == VEP_ERR_TOOBIG)
		snprintf(err, errlen, "%s: larger than %d bytes", path, LIMIT_CONFIG_FILE_BYTES);
	else if (rc == VEP_ERR_NOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	else if (rc == VEP_ERR_INVALID)
		snprintf(err, errlen, "%s: cannot open: not a regular file", path);
	else if (rc != 0)
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
	if (rc == VEP_ERR_INVALID)
		rc = VEP_ERR_IO;
	return rc;
}

int
config_load(const char *path, struct config **out, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len;
	int rc;

	*out = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if ((rc = config_read_file(path, &text, &len, err, errlen)) == 0)
		rc = config_load_text(path, text, len, out, err, errlen);
	free(text);
	return rc;
}

int
config_load_text(const char *path, const char *text, size_t len, struct config **out,
    char *err, size_t errlen)
{
	struct config *cfg = NULL;
	struct parse p;
	char *copy = NULL, *dir = NULL, *slash;
	int rc = VEP_ERR_NOMEM;

	*out = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if ((copy = malloc(len + 1)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	if ((cfg = config_new()) == NULL || (cfg->path = strdup(path)) == NULL ||
	    (dir = strdup(path)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	slash = strrchr(dir, '/');
	if (slash == NULL) {
		free(dir);
		dir = strdup(".");
	} else if (slash == dir) {
		slash[1] = '\0';
	} else {
		*slash = '\0';
	}
	if (dir == NULL)
		goto out;
	memset(&p, 0, sizeof(p));
	p.path = path;
	p.base_dir = dir;
	p.cfg = cfg;
	p.err = err;
	p.errlen = errlen;
	if ((rc = parse_text(&p, copy, len)) != 0)
		goto out;
	*out = cfg;
	cfg = NULL;
out:
	free(copy);
	free(dir);
	config_free(cfg);
	return rc;
}

void
config_print_keys(FILE *f)
{
	size_t i;

	for (i = 0; i < NKEYS; i++) {
		const struct config_key *k = &config_keys[i];
		fprintf(f, "%s\t%s\t%s\t%s\n", k->name,
		    k->scope == SCOPE_GLOBAL ? "global" : "domain",
		    k->def != NULL ? k->def : (k->required ? "(required)" : "(none)"), k->doc);
	}
}
