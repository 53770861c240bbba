/*
 * core/privdrop.c - giving up root (contract in core/privdrop.h).
 */
#include "core/privdrop.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "err.h"

/* Capability numbers prctl(PR_CAPBSET_READ) is asked about: the kernel
 * answers EINVAL past its last one (/proc/sys/kernel/cap_last_cap), and
 * capget's 64-bit sets end here. */
#define PRIVDROP_CAP_COUNT 64

int
privdrop_lookup(const char *user, uid_t *uid, gid_t *gid, char *err, size_t errlen)
{
	struct passwd pw, *found = NULL;
	char buf[4096];
	int e;

	if ((e = getpwnam_r(user, &pw, buf, sizeof(buf), &found)) != 0 || found == NULL) {
		snprintf(err, errlen, "key 'user': no account '%s'%s%s", user, e != 0 ? ": " : "",
		    e != 0 ? strerror(e) : "");
		return VEP_ERR_INVALID;
	}
	if (pw.pw_uid == 0 || pw.pw_gid == 0) {
		snprintf(err, errlen, "key 'user': '%s' is root or in group root; name an "
		    "unprivileged account", user);
		return VEP_ERR_INVALID;
	}
	*uid = pw.pw_uid;
	*gid = pw.pw_gid;
	return VEP_OK;
}

int
privdrop_own_state(const char *dir, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd, rc = VEP_OK;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "state_dir '%s': cannot create: %s", dir, strerror(errno));
		return VEP_ERR_IO;
	}
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    fchown(fd, uid, gid) != 0 || (d = fdopendir(fd)) == NULL) {
		snprintf(err, errlen, "state_dir '%s': cannot give it to the user: %s", dir,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		return VEP_ERR_IO;
	}
	while ((e = readdir(d)) != NULL) {
		if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (fchownat(fd, e->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) != 0) {
			snprintf(err, errlen, "state_dir '%s': cannot give '%s' to the user: %s",
			    dir, e->d_name, strerror(errno));
			rc = VEP_ERR_IO;
			break;
		}
	}
	closedir(d);
	return rc;
}

int
privdrop_to(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	uid_t r, e, s;

	if (setgroups(1, &gid) != 0 || setresgid(gid, gid, gid) != 0 ||
	    setresuid(uid, uid, uid) != 0) {
		snprintf(err, errlen, "cannot drop privileges to uid %u: %s", (unsigned)uid,
		    strerror(errno));
		return VEP_ERR_PERM;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_DUMPABLE, 0) != 0) {
		snprintf(err, errlen, "cannot set no-new-privileges: %s", strerror(errno));
		return VEP_ERR_PERM;
	}
	if (setuid(0) == 0 || getresuid(&r, &e, &s) != 0 || r != uid || e != uid || s != uid) {
		snprintf(err, errlen, "privileges were not dropped: root could be regained");
		return VEP_ERR_PERM;
	}
	return VEP_OK;
}

/* The calling thread's effective, permitted and inheritable sets, through
 * the raw syscall (64-bit sets: _LINUX_CAPABILITY_VERSION_3). Returns 0,
 * or VEP_ERR_IO with errno set (the caller says why). */
static int
caps_get(uint64_t *eff, uint64_t *prm, uint64_t *inh)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) != 0)
		return VEP_ERR_IO;
	*eff = d[0].effective | (uint64_t)d[1].effective << 32;
	*prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	*inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	return VEP_OK;
}

/* Sets them. Returns 0, or VEP_ERR_IO with errno set. */
static int
caps_set(uint64_t eff, uint64_t prm, uint64_t inh)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	d[0].effective = (uint32_t)eff;
	d[1].effective = (uint32_t)(eff >> 32);
	d[0].permitted = (uint32_t)prm;
	d[1].permitted = (uint32_t)(prm >> 32);
	d[0].inheritable = (uint32_t)inh;
	d[1].inheritable = (uint32_t)(inh >> 32);
	return syscall(SYS_capset, &h, d) == 0 ? VEP_OK : VEP_ERR_IO;
}

/* The bounding set, as a mask. Returns 0, or VEP_ERR_IO with errno set
 * when it cannot be read. */
static int
bounding_get(uint64_t *bnd)
{
	int cap, r;

	*bnd = 0;
	for (cap = 0; cap < PRIVDROP_CAP_COUNT; cap++) {
		if ((r = prctl(PR_CAPBSET_READ, (unsigned long)cap, 0, 0, 0)) < 0) {
			if (errno == EINVAL)
				break;   /* past the kernel's last capability */
			return VEP_ERR_IO;
		}
		if (r == 1)
			*bnd |= PRIVDROP_CAP(cap);
	}
	return VEP_OK;
}

int
privdrop_keep_caps(uint64_t keep, int *applied, char *err, size_t errlen)
{
	uint64_t eff, prm, inh, bnd;
	uid_t r, e, s;
	int cap;

	*applied = 0;
	if (getresuid(&r, &e, &s) != 0 || caps_get(&eff, &prm, &inh) != 0 ||
	    bounding_get(&bnd) != 0) {
		snprintf(err, errlen, "cannot read the process's capabilities: %s",
		    strerror(errno));
		return VEP_ERR_PERM;
	}
	if (r != 0 && e != 0 && s != 0 && eff == 0 && prm == 0)
		return VEP_OK;
	/* No program started from here on gains a privilege by execve (a
	 * set-ID bit, file capabilities, or root's bounding set beyond what
	 * this process holds). */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		snprintf(err, errlen, "cannot set no-new-privileges: %s", strerror(errno));
		return VEP_ERR_PERM;
	}
	/* Dropping from the bounding set needs CAP_SETPCAP, which goes with
	 * the rest just below. */
	if ((eff & PRIVDROP_CAP(CAP_SETPCAP)) != 0) {
		for (cap = 0; cap < PRIVDROP_CAP_COUNT; cap++) {
			if ((bnd & PRIVDROP_CAP(cap)) == 0 || (keep & PRIVDROP_CAP(cap)) != 0)
				continue;
			if (prctl(PR_CAPBSET_DROP, (unsigned long)cap, 0, 0, 0) != 0) {
				snprintf(err, errlen, "cannot drop capability %d from the bounding "
				    "set: %s", cap, strerror(errno));
				return VEP_ERR_PERM;
			}
		}
	}
	/* Lowering permitted and inheritable takes the ambient set down with
	 * them (it is always within both). */
	prm &= keep;
	inh &= keep;
	if (caps_set(prm, prm, inh) != 0) {
		snprintf(err, errlen, "cannot give up capabilities: %s", strerror(errno));
		return VEP_ERR_PERM;
	}
	{
		uint64_t eff2, prm2, inh2, bnd2;

		if (caps_get(&eff2, &prm2, &inh2) != 0 || bounding_get(&bnd2) != 0 ||
		    eff2 != prm || prm2 != prm || inh2 != inh || (prm2 & ~keep) != 0 ||
		    ((eff & PRIVDROP_CAP(CAP_SETPCAP)) != 0 && (bnd2 & ~keep) != 0) ||
		    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
			snprintf(err, errlen, "capabilities were not given up as asked");
			return VEP_ERR_PERM;
		}
	}
	*applied = 1;
	return VEP_OK;
}
