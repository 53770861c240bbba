/*
 * core/fixed_limits.h - every size, count and time limit of the authority server, in
 * one place, each with its unit in the name or the comment. Each one has a
 * test (tests/integration/test_limits.py for the HTTP ones, tests/unit for
 * the parser ones).
 *
 * Must never hold anything but constants, and never a configuration key's
 * default: a configurable value (max_age, request_timeout, ...) has its
 * bounds here and its default only in its row of core/config.c's key table
 * (which `vep-authority --list-keys` prints and authority/CONFIG.md
 * documents); everything else reads the configuration.
 */
#ifndef AUTHORITY_CORE_FIXED_LIMITS_H
#define AUTHORITY_CORE_FIXED_LIMITS_H

/* Request line plus all header lines, CRLFs included, in bytes. The raw
 * request scanner (edge/req.h) answers a request over it with our JSON 400 and
 * closes the connection, before libevent (whose own count, without CRLFs,
 * is never the first to trip); tests/integration/test_limits.py pins it. */
#define LIMIT_HEADER_BYTES (8 * 1024)

/* Request body in bytes. Our largest legitimate body is a public key (about
 * 700 bytes for RSA-2048, 1.2 KiB for DSA-2048) plus a little JSON; the raw
 * request scanner (edge/req.h) answers our JSON 413 to a larger Content-Length
 * before the body is read (and to a chunked body once it grows past this),
 * then closes; libevent's own limit is the same and never trips first. */
#define LIMIT_BODY_BYTES (16 * 1024)

/* Request target (path and query) in bytes; longer gets 414. */
#define LIMIT_URI_BYTES 2048

/* Query parameters per request; more gets 400. */
#define LIMIT_QUERY_PARAMS 32

/* Seconds a connection may sit idle or send a request slowly before
 * libevent closes it, without an answer (no 408), config key
 * request_timeout. */
#define LIMIT_REQUEST_TIMEOUT_S_MIN 1
#define LIMIT_REQUEST_TIMEOUT_S_MAX 600

/* Most open client connections (config keys max_connections and
 * max_connections_per_addr). */
#define LIMIT_CONNECTIONS_MAX 1000000L

/* Descriptors max_connections = 0 leaves for everything but clients: the
 * database and its WAL, the log, the PAM helpers' sockets and pipes, the
 * listeners, the writer threads' wake-ups. */
#define LIMIT_FD_RESERVE 64

/* Cache lifetime of discovery documents in seconds (config key max_age).
 * Verifiers cache the support document; a day bounds how long an old key
 * list can linger after a rotation. */
#define LIMIT_MAX_AGE_S_MIN 0
#define LIMIT_MAX_AGE_S_MAX 86400

/* Strict-Transport-Security max-age in seconds (config key hsts_max_age):
 * 0 tells browsers to forget the policy; two years is what the preload
 * lists ask for, and longer buys nothing. */
#define LIMIT_HSTS_MAX_AGE_S_MIN 0
#define LIMIT_HSTS_MAX_AGE_S_MAX 63072000

/* Configuration file: longest line in bytes (including the newline),
 * largest file in bytes, and most [domain] sections. */
#define LIMIT_CONFIG_LINE_BYTES 1024
#define LIMIT_CONFIG_FILE_BYTES (256 * 1024)
#define LIMIT_CONFIG_DOMAINS 64

/* Bytes of one untrusted string copied into a log line before "...". */
#define LIMIT_LOG_FIELD_CHARS 200

/* Sign-in and issuance settings (core/config.c bounds; defaults in its table). */
#define LIMIT_PAM_TIMEOUT_S_MIN 1
#define LIMIT_PAM_TIMEOUT_S_MAX 120       /* PAMP_DEADLINE_MS_MAX / 1000 */
#define LIMIT_PAM_WORKERS_MAX 256         /* PAMP_MAX_WORKERS_MAX */
#define LIMIT_PAM_MIN_UID_MAX 4294967294L /* (uid_t)-1 means "no user" */
#define LIMIT_PAM_SERVICE_BYTES 64        /* PAMP_SERVICE_MAX_BYTES */
#define LIMIT_USER_NAME_BYTES 32          /* the account named by user (useradd's limit) */
#define LIMIT_SESSION_S_MIN 60
#define LIMIT_SESSION_S_MAX (30L * 24 * 3600) /* DB_SESSION_LIFETIME_MAX_S */
#define LIMIT_CERT_DURATION_S_MIN 300     /* CERT_MIN_DURATION_S */
#define LIMIT_CERT_DURATION_S_MAX 86400   /* VEP_CERT_MAX_LIFETIME_MS / 1000 */
#define LIMIT_THROTTLE_ACCOUNT_MAX 1000
#define LIMIT_THROTTLE_ADDR_MAX 100000
#define LIMIT_THROTTLE_WINDOW_S_MAX 86400 /* DB_THROTTLE_WINDOW_MAX_S */
#define LIMIT_THROTTLE_KNOWN_S_MAX (365L * 24 * 3600) /* DB_THROTTLE_KNOWN_MAX_S */
#define LIMIT_ACCOUNT_SUFFIX_BYTES 64
#define LIMIT_EMBED_ORIGINS 16            /* origins in embed_origins */
#define LIMIT_EMBED_ORIGINS_BYTES 1024    /* their canonical list, spaces included */
#define LIMIT_DB_MAX_MIB 1048576          /* 1 TiB */
/* pam_answer_timeout bounds (seconds): long enough to read a code off a
 * phone, short enough that a waiting conversation frees its PAM worker. */
#define LIMIT_PAM_ANSWER_TIMEOUT_S_MIN 10
#define LIMIT_PAM_ANSWER_TIMEOUT_S_MAX 600
/* Longest second_factor_prompt (bytes). */
#define LIMIT_PROMPT_BYTES 200
/* Longest `database` connection string (bytes; a line holds 1024). */
#define LIMIT_DATABASE_BYTES 1000
/* Longest instance_name (bytes): it is stored in every audit row. */
#define LIMIT_INSTANCE_NAME_BYTES 64
#define LIMIT_WORKERS_MAX 256
#define LIMIT_VERIFY_RATE_MAX 1000000    /* verify_rate, verify_burst */
#define LIMIT_REMOTE_TIMEOUT_S_MAX 30     /* verify_remote_timeout, _total: a stop waits
	                                   * for remote verifications in flight */
#define LIMIT_REMOTE_CONNECT_MAX 64       /* entries of verify_remote_connect */

#endif
