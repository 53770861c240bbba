/*
 * privdrop.h - the network process giving up root for good, after binding
 * its sockets and before it reads a byte from a client.
 *
 * Promises: the drop is all or nothing (supplementary groups, real,
 * effective and saved IDs, then no-new-privileges, then proof that root
 * cannot be regained), and the state directory (not its subdirectories)
 * belongs to the account before the database is opened as it.
 */
#ifndef AUTHORITY_PRIVDROP_H
#define AUTHORITY_PRIVDROP_H

#include <stddef.h>
#include <sys/types.h>

/* The account's uid and primary gid. VEP_ERR_INVALID (no such account,
 * or it is root) with a reason in err. */
int privdrop_lookup(const char *user, uid_t *uid, gid_t *gid, char *err, size_t errlen);

/* Creates dir (0700) if missing, then gives it and the regular files
 * directly in it (the database, its WAL and journal) to uid:gid, never
 * following a symbolic link. VEP_ERR_IO with a reason in err. */
int privdrop_own_state(const char *dir, uid_t uid, gid_t gid, char *err, size_t errlen);

/* setgroups(gid only), setresgid, setresuid, PR_SET_NO_NEW_PRIVS, and
 * PR_SET_DUMPABLE 0 again (changing IDs resets it); then checks that
 * setuid(0) fails. VEP_ERR_PERM with a reason in err: the caller must
 * not go on. */
int privdrop_to(uid_t uid, gid_t gid, char *err, size_t errlen);

#endif
