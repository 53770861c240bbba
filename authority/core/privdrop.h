/*
 * core/privdrop.h - the network process giving up root for good, after binding
 * its sockets and before it reads a byte from a client.
 *
 * Promises: the drop is all or nothing (supplementary groups, real,
 * effective and saved IDs, then no-new-privileges, then proof that root
 * cannot be regained), and the state directory (not its subdirectories)
 * belongs to the account before the database is opened as it.
 *
 * Also the key process keeping root but only the capabilities it names
 * (privdrop_keep_caps): raw capget/capset and prctl, no libcap.
 */
#ifndef AUTHORITY_CORE_PRIVDROP_H
#define AUTHORITY_CORE_PRIVDROP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bit of capability number cap (linux/capability.h's CAP_*) in a mask. */
#define PRIVDROP_CAP(cap) (UINT64_C(1) << (cap))

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

/* Confines a process that stays privileged (the key process) to the
 * capabilities in keep (PRIVDROP_CAP bits), for itself and for every
 * program it starts. When any real, effective or saved ID is 0, or it
 * holds any capability: no-new-privileges; every capability outside keep
 * dropped from the bounding set (when it has CAP_SETPCAP to do so; under a
 * service manager that withheld CAP_SETPCAP, its bounding set stands);
 * the permitted and inheritable sets cut to keep (so ambient ones too),
 * and effective = permitted. Then each set is read back and checked. For
 * root, execve's new permitted set is bounding | inheritable; with
 * no-new-privileges it is also at most the caller's permitted set, so a
 * program started afterwards gets at most keep either way. A process with
 * no ID 0 and no capability is left alone (*applied 0): it has nothing to
 * give up, and a setgid helper such as pam_unix's unix_chkpwd keeps
 * working for it. Acts on the calling thread only: call before threads
 * start. Returns 0 (*applied 1 when it confined), or VEP_ERR_PERM with a
 * reason in err: the caller must not go on. */
int privdrop_keep_caps(uint64_t keep, int *applied, char *err, size_t errlen);

#endif
