/*
 * privdrop.c - giving up root (contract in privdrop.h).
 */
#include "privdrop.h"

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
#include <unistd.h>

#include "err.h"

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
			snprintf(err, errlen, "state_dir '%s': cannot give '%s' to the user: %s", dir,
			    e->d_name, strerror(errno));
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
