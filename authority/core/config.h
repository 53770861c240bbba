/*
 * core/config.h - the authority's configuration: what the file says, validated.
 *
 * File format (documented for administrators in authority/CONFIG.md):
 *
 *     # comment (only on a line of its own)
 *     listen = 127.0.0.1:8080
 *     max_age = 300
 *     [domain example.com]
 *     key_dir = /etc/vep-authority/keys/example.com
 *
 * Keys before the first section are global; keys after "[domain NAME]"
 * belong to that served domain. Every key is one row of the table in
 * core/config.c (name, scope, setter, default, bounds, doc), so adding a setting
 * is adding a row and a struct member. Unknown keys, repeated keys, bad
 * values and missing required keys are errors that name the file, the line
 * and the key.
 *
 * Owns parsing and value validation only: it never opens key files,
 * sockets or databases (core/domain.c and edge/listener.c do, with these values).
 */
#ifndef AUTHORITY_CORE_CONFIG_H
#define AUTHORITY_CORE_CONFIG_H

#include <netinet/in.h>
#include <stddef.h>

#include <stdio.h>

#include "core/log.h"

struct proxy_list;

struct config_domain {
	char *name;          /* lowercase domain name, valid per vep_domain_valid */
	char *key_dir;       /* absolute path of the vep_keydir directory */
	char *public_url;    /* "scheme://host[:port]" without trailing slash, or NULL */
	unsigned line;       /* line of the [domain] header (0 when built in) */
	unsigned key_dir_line; /* line of key_dir (0 when built in) */
	char *account_suffix;  /* appended to the local part for PAM, or NULL */
	char *account_aliases; /* absolute path of the alias table, or NULL */
	unsigned account_aliases_line; /* line of account_aliases (0 when unset) */
	char *authority;     /* BrowserID delegation: the login host ("host[:port]",
	                      * lowercase) that issues this domain's certificates, or NULL */
	unsigned authority_line; /* line of authority (0 when unset) */
};

/* access_log: one line per request, to the diagnostic log (stderr, the
 * journal under systemd), to syslog_socket, or nowhere. */
enum config_access_log {
	CONFIG_ACCESS_LOG_STDERR = 0,
	CONFIG_ACCESS_LOG_SYSLOG = 1,
	CONFIG_ACCESS_LOG_OFF = 2,
};

/* Most keys the table in core/config.c may hold (checked there). */
#define CONFIG_KEYS_MAX 96

struct config {
	char *path;                 /* file read, or NULL when built in (demo) */
	/* Line of each global key in the file, by its row in the key table;
	 * 0: its default or the command line's. Read with config_key_line. */
	unsigned key_lines[CONFIG_KEYS_MAX];
	char *listen;               /* "ADDR:PORT" (IPv6 as "[ADDR]:PORT") */
	char *metrics_listen;       /* "ADDR:PORT" of the Prometheus listener, or NULL: off */
	char *state_dir;            /* absolute path */
	long max_age_s;             /* Cache-Control max-age of discovery documents */
	long request_timeout_s;     /* idle / slow request timeout per connection */
	long header_timeout_s;      /* deadline: first byte to end of headers */
	long body_timeout_s;        /* deadline: end of headers to end of body */
	long max_connections;       /* open connections; 0 = from RLIMIT_NOFILE */
	long max_connections_per_addr; /* open connections per client address
	                                * (IPv6: /64); 0 = no cap */
	long workers;               /* event loops; 0 = one per online CPU */
	long log_level;             /* enum log_level */
	long access_log;            /* enum config_access_log: where request lines go */
	char *syslog_socket;        /* absolute path of the syslog socket */
	long syslog_facility;       /* syslog.h facility value (LOG_DAEMON...) */
	char *shim_origin;          /* origin of the legacy user agent's shim scripts, or NULL */
	char *embed_origins;        /* origins that may frame /embed, canonical ("https://a
	                             * https://b:8443", one space between), or NULL: none */
	long db_max_mib;            /* database file cap in MiB; 0 = none */
	char *database;             /* PostgreSQL connection string, or NULL: SQLite */
	char *instance_name;        /* name in audit rows, or NULL: the host name */
	char *pam_service;          /* PAM service name */
	char *tls_cert;             /* PEM chain for native HTTPS, or NULL (plain HTTP) */
	char *tls_key;              /* its PEM key (mode 0600), or NULL */
	long hsts_max_age_s;        /* Strict-Transport-Security max-age (HTTPS only) */
	long hsts_include_subdomains; /* ... with includeSubDomains */
	char *user;                 /* account to run the network process as, or NULL */
	struct proxy_list *trusted_proxies; /* owned (edge/proxy.h), or NULL: none */
	long pam_timeout_s;         /* per attempt, then the worker is killed */
	long pam_workers;           /* concurrent PAM attempts */
	long pam_answer_timeout_s;  /* a user's time to answer PAM's further question */
	char *second_factor_prompt; /* the first further question's words, asked of
	                             * every account; NULL: PAM's own */
	long pam_min_uid;           /* lowest UID that signs in; 0 = no check */
	long session_idle_s;        /* session ends after this long unused */
	long session_lifetime_s;    /* ... and this long after sign-in at most */
	long cert_max_duration_s;   /* longest certificate lifetime issued */
	long throttle_pair_max;     /* sign-ins per account from one address per window */
	long throttle_account_max;  /* per account from addresses not known to it */
	long throttle_account_window_s;
	long throttle_known_for_s;  /* how long a signed-in-from address stays known */
	long pam_user_case_insensitive; /* the PAM backend ignores case in user names */
	long throttle_addr_max;     /* failed sign-ins per client address per window */
	long throttle_addr_window_s;
	long verify_rate;           /* POST /verify requests per second per client */
	long verify_burst;          /* ... and at once */
	long verify_remote;         /* 1: /verify also checks other domains' assertions */
	long verify_remote_timeout_s; /* per step of a support document fetch */
	long verify_remote_total_s; /* one remote verification in all */
	char *verify_remote_cafile; /* CAs for other domains' HTTPS, NULL: the system's */
	char *verify_remote_allow;  /* addresses discovery may reach though not public
	                             * (edge/proxy.h list syntax), or NULL */
	char *verify_remote_connect; /* "HOST=ADDR:PORT ..." connect overrides, or NULL */
	struct config_domain *domains; /* in file order; the first is the default */
	size_t ndomains;
};

/* Returns a new configuration holding every global default and no domain,
 * or NULL on allocation failure. */
struct config *config_new(void);

/* Reads path into a new configuration. On error returns VEP_ERR_INVALID
 * (syntax or value), VEP_ERR_IO (unreadable) or VEP_ERR_TOOBIG, writes a
 * one-line message "FILE:LINE: key 'K': reason" to err (errlen bytes) and
 * leaves *out NULL. At least one [domain] section is required. */
int config_load(const char *path, struct config **out, char *err, size_t errlen);

/* Reads a configuration file's bytes (at most LIMIT_CONFIG_FILE_BYTES):
 * *out is new (free()), NUL-terminated, *outlen its length. Returns 0,
 * VEP_ERR_IO, VEP_ERR_TOOBIG or VEP_ERR_NOMEM with "PATH: reason" in err. */
int config_read_file(const char *path, char **out, size_t *outlen, char *err, size_t errlen);

/* config_load on text already read from path (path names the file in
 * messages and anchors relative paths); text is borrowed. */
int config_load_text(const char *path, const char *text, size_t len, struct config **out,
    char *err, size_t errlen);

/* Appends a served domain built in code (the demo). name must be valid;
 * key_dir absolute. Returns 0, VEP_ERR_INVALID, VEP_ERR_EXISTS (duplicate),
 * VEP_ERR_TOOBIG or VEP_ERR_NOMEM. */
int config_add_domain(struct config *cfg, const char *name, const char *key_dir);

/* Sets a global key from text as the file would (used for command-line
 * overrides such as --listen and --state). Same errors as config_load, with
 * the message naming source instead of a file. */
int config_set(struct config *cfg, const char *source, const char *key,
    const char *value, char *err, size_t errlen);

/* The rules between keys (session_idle <= session_lifetime), for a
 * configuration changed after loading (config_set); the message names
 * source. Returns 0 or VEP_ERR_INVALID. */
int config_check(const struct config *cfg, const char *source, char *err, size_t errlen);

/* Parses "ADDR:PORT" (IPv4 dotted quad, or [IPv6]) into host (hostlen bytes,
 * without brackets) and port (0..65535; 0 picks a free port). Host names
 * are refused: the listener never depends on DNS. Returns 0 or
 * VEP_ERR_INVALID. */
int config_parse_listen(const char *s, char *host, size_t hostlen, unsigned *port);

/* Looks up a served domain by lowercase name; NULL when not served. */
const struct config_domain *config_find_domain(const struct config *cfg, const char *name);

/* The host of url ("scheme://host[:port]", IPv6 in brackets) into out
 * (outlen bytes), lowercase, without brackets. Returns 0 or
 * VEP_ERR_INVALID. */
int config_url_host(const char *url, char *out, size_t outlen);

/* Looks host (lowercase) up in a verify_remote_connect value (already
 * validated, or NULL): 1 with its address (IP text) and port, else 0. */
int config_connect_lookup(const char *map, const char *host, char addr[INET6_ADDRSTRLEN],
    unsigned *port);

/* The iss of the domain's certificates: its authority when it delegates,
 * else its own name. Borrowed. */
const char *config_domain_issuer(const struct config_domain *d);

/* 1 when host (lowercase, no port, no brackets) is the host part of the
 * domain's authority (a delegated login host), else 0. */
int config_domain_is_authority_host(const struct config_domain *d, const char *host);

/* Writes the key table (name, scope, default, doc) to f, one key per line:
 * what --list-keys prints, and what tests compare with CONFIG.md. */
void config_print_keys(FILE *f);

/* How many keys that take effect only at start differ between the running
 * configuration and next (a reload's), their names ("listen, workers")
 * written to names (nameslen bytes, cut to fit). */
size_t config_restart_changes(const struct config *running, const struct config *next,
    char *names, size_t nameslen);

/* The line of the file that set the global key name, 0 when the file did
 * not (its default, or the command line's), for messages that name what a
 * value refers to ("FILE:LINE: key 'state_dir': ...") after parsing. */
unsigned config_key_line(const struct config *cfg, const char *name);

void config_free(struct config *cfg);

/* Builds a configuration from the file's text (NULL, 0 for the built-in
 * demo configuration) plus the command line's overrides, so both processes
 * read the same file the same way. Returns 0 with *out, or an error with a
 * message in err. */
typedef int (*config_maker_fn)(void *arg, const char *text, size_t len,
    struct config **out, char *err, size_t errlen);

#endif
