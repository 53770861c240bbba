/*
 * account.h - which PAM user signs in for an address of a served domain.
 *
 * Default rule: the address's local part, plus the domain's account_suffix
 * when one is configured (alice@example.com -> "alice", or with suffix
 * "@example.com" -> "alice@example.com"). An alias table (account_aliases,
 * "LOCALPART PAMUSER" lines) overrides the rule for the local parts it
 * lists. Whatever the mapping, "root" never signs in, and a name PAM or
 * NSS could misread (control characters, whitespace, '/', ':', a leading
 * '-') is refused.
 *
 * Owns the table (sorted once, binary-searched). Must never do I/O after
 * account_map_new.
 */
#ifndef AUTHORITY_ACCOUNT_H
#define AUTHORITY_ACCOUNT_H

#include <stddef.h>

#include "pam_proto.h"

/* Longest PAM user name produced (bytes, without the NUL). */
#define ACCOUNT_USER_MAX PAMP_USER_MAX_BYTES
/* Most entries an alias table may hold. */
#define ACCOUNT_ALIASES_MAX 100000
/* Largest alias file read (bytes). */
#define ACCOUNT_ALIASES_FILE_MAX (16 * 1024 * 1024)

struct account_map;

/* suffix may be NULL (none); aliases_path may be NULL (no table). The file
 * must not be writable by group or others (it decides who signs in as
 * whom: VEP_ERR_PERM). '#' comment lines and blank lines are allowed; a
 * duplicate local part, a malformed line or an unsafe name is an error
 * "PATH:LINE: reason" in err. Returns 0, VEP_ERR_INVALID, VEP_ERR_PERM,
 * VEP_ERR_IO, VEP_ERR_TOOBIG or VEP_ERR_NOMEM. */
int account_map_new(const char *suffix, const char *aliases_path,
    struct account_map **out, char *err, size_t errlen);

/* Writes the PAM user for local into out (outlen bytes). Returns 0,
 * VEP_ERR_PERM ("root"), VEP_ERR_INVALID (unsafe name) or VEP_ERR_TOOBIG. */
int account_map_user(const struct account_map *m, const char *local, char *out,
    size_t outlen);

/* Entries in the alias table. */
size_t account_map_alias_count(const struct account_map *m);

void account_map_free(struct account_map *m);

#endif
