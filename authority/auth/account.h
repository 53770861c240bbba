/*
 * auth/account.h - which PAM user signs in for an address of a served domain.
 *
 * Default rule: the address's local part, plus the domain's account_suffix
 * when one is configured (alice@example.com -> "alice", or with suffix
 * "@example.com" -> "alice@example.com"). An alias table (account_aliases,
 * "LOCALPART PAMUSER" lines) overrides the rule for the local parts it
 * lists; local parts are matched byte for byte (the address normaliser
 * keeps the local part's case, and so does the table). Whatever the
 * mapping, "root" never signs in (in any case: "Root", "ROOT", since some
 * NSS back ends fold case), and a name PAM or NSS could misread
 * (empty, control characters, whitespace, '/', ':', a leading '-') is
 * refused.
 *
 * Owns: the suffix and the alias table (the file's text, read once, sorted
 * once and binary-searched). A map is never changed after account_map_new,
 * so the event-loop threads may share one without locking.
 * Must never: do I/O or log after account_map_new; accept an alias file
 * that group or others may write (it decides who signs in as whom).
 */
#ifndef AUTHORITY_AUTH_ACCOUNT_H
#define AUTHORITY_AUTH_ACCOUNT_H

#include <stddef.h>

#include "pamhelper/proto.h"

/* Longest PAM user name produced, in bytes without the NUL: what the PAM
 * helper accepts, so a mapped name always fits its request. */
#define ACCOUNT_USER_MAX PAMP_USER_MAX_BYTES
/* Most entries an alias table may hold. */
#define ACCOUNT_ALIASES_MAX 100000
/* Longest line of an alias file, in bytes without the newline. */
#define ACCOUNT_ALIASES_LINE_MAX 1024
/* Largest alias file read, in bytes (16 MiB). */
#define ACCOUNT_ALIASES_FILE_MAX (16L * 1024 * 1024)

struct account_map;

/* suffix: appended to the local part (NULL = none). aliases_path: file of
 * "LOCALPART PAMUSER" lines (NULL = none); '#' comment lines and blank lines
 * allowed; at most ACCOUNT_ALIASES_MAX entries, lines at most 1024 bytes;
 * a duplicate local part, a bad line or bad names is an error naming
 * "PATH:LINE: reason" in err. */
/*
 * Details of the alias file: fields are separated by spaces or tabs; CRLF
 * line ends are accepted; a line whose first non-blank character is '#' is
 * a comment (so a local part beginning with '#' cannot be aliased); there
 * are no trailing comments. LOCALPART is 1 to VEP_EMAIL_LOCAL_MAX (64)
 * characters an address's local part may hold; PAMUSER is a safe name (as
 * for account_map_user) of at most ACCOUNT_USER_MAX bytes and never "root"
 * (in any case).
 * Errors about the whole file read "PATH: reason".
 *
 * Returns 0 with *out set (free with account_map_free); otherwise *out is
 * NULL, err (errlen bytes, may be 0) says why, and the code is
 * VEP_ERR_INVALID (bad line, bad name, duplicate, not a regular file, bad
 * suffix), VEP_ERR_PERM (file writable by group or others: chmod go-w),
 * VEP_ERR_TOOBIG (file over ACCOUNT_ALIASES_FILE_MAX, more than
 * ACCOUNT_ALIASES_MAX entries, line over ACCOUNT_ALIASES_LINE_MAX, suffix
 * over ACCOUNT_USER_MAX), VEP_ERR_IO (cannot open or read) or
 * VEP_ERR_NOMEM.
 */
int account_map_new(const char *suffix, const char *aliases_path,
    struct account_map **out, char *err, size_t errlen);

/* account_map_new's two halves, for a file read by another process: the
 * read (its checks and errors: VEP_ERR_IO, VEP_ERR_PERM, VEP_ERR_TOOBIG,
 * VEP_ERR_INVALID for a non-regular file; *out new, free()) and the map
 * built from the bytes read (text borrowed; aliases_path names them in
 * messages, NULL for no table). */
int account_read_aliases(const char *path, char **out, size_t *outlen, char *err,
    size_t errlen);
int account_map_new_text(const char *suffix, const char *aliases_path, const char *text,
    size_t len, struct account_map **out, char *err, size_t errlen);

/* Writes the PAM user for local (a normalised address's local part) into
 * out (outlen bytes). An alias wins; otherwise local + suffix. Returns 0,
 * VEP_ERR_PERM when the result is "root" (never signed in, whatever the
 * mapping), VEP_ERR_INVALID when the result is not a safe PAM user name
 * (empty, control characters, whitespace, '/', ':', or starting with '-'),
 * VEP_ERR_TOOBIG when it does not fit outlen or exceeds ACCOUNT_USER_MAX. */
/* "root" is matched without regard to case. Also VEP_ERR_ARG when m, local
 * or out is NULL (a programming error). On any error out is left
 * empty (when outlen > 0), so a refused name is never used by mistake. */
int account_map_user(const struct account_map *m, const char *local, char *out,
    size_t outlen);

/* Entries in the alias table (0 for NULL or no table). */
size_t account_map_alias_count(const struct account_map *m);

/* Frees the map and its table. NULL-safe. */
void account_map_free(struct account_map *m);

#endif
