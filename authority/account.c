/*
 * account.c - address to PAM user mapping (contract in account.h).
 */
#include "account.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

struct alias {
	char *local;
	char *user;
};

struct account_map {
	char *suffix;          /* owned, NULL for none */
	struct alias *v;       /* owned, sorted by local */
	size_t n;
};

/* 1 when name can safely be handed to PAM and NSS as a user name. */
static int
safe_name(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;

	if (*p == '\0' || *p == '-')
		return 0;
	for (; *p != '\0'; p++)
		if (*p <= ' ' || *p == 0x7f || *p == '/' || *p == ':')
			return 0;
	return 1;
}

static int
alias_cmp(const void *a, const void *b)
{
	return strcmp(((const struct alias *)a)->local, ((const struct alias *)b)->local);
}

/* Reads the whole file, refusing one others may write or too large. */
static int
read_file(const char *path, char **out, char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	ssize_t n;
	int fd, rc = VEP_ERR_IO;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return VEP_ERR_IO;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if ((st.st_mode & 022) != 0) {
		snprintf(err, errlen, "%s: writable by group or others (chmod go-w %s)", path, path);
		rc = VEP_ERR_PERM;
		goto out;
	}
	if (st.st_size > ACCOUNT_ALIASES_FILE_MAX) {
		snprintf(err, errlen, "%s: larger than %d bytes", path, ACCOUNT_ALIASES_FILE_MAX);
		rc = VEP_ERR_TOOBIG;
		goto out;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	if (got != (size_t)st.st_size) {
		snprintf(err, errlen, "%s: short read", path);
		goto out;
	}
	buf[got] = '\0';
	*out = buf;
	buf = NULL;
	rc = VEP_OK;
out:
	free(buf);
	close(fd);
	return rc;
}

/* Parses one "LOCAL USER" line (NUL-terminated, no newline) into a. */
static int
parse_line(char *line, struct alias *a, const char **why)
{
	char *local, *user, *extra, *save = NULL;

	local = strtok_r(line, " \t\r", &save);
	user = strtok_r(NULL, " \t\r", &save);
	extra = strtok_r(NULL, " \t\r", &save);
	if (local == NULL || user == NULL || extra != NULL) {
		*why = "expected \"LOCALPART PAMUSER\"";
		return VEP_ERR_INVALID;
	}
	if (!safe_name(local) || !safe_name(user) || strlen(user) > ACCOUNT_USER_MAX) {
		*why = "unsafe name";
		return VEP_ERR_INVALID;
	}
	if (strcmp(user, "root") == 0) {
		*why = "root never signs in";
		return VEP_ERR_INVALID;
	}
	if ((a->local = strdup(local)) == NULL || (a->user = strdup(user)) == NULL)
		return VEP_ERR_NOMEM;
	return VEP_OK;
}

static int
load_aliases(struct account_map *m, const char *path, char *err, size_t errlen)
{
	char *text = NULL, *line, *next;
	const char *why = NULL;
	unsigned lineno = 0;
	size_t cap = 0, i;
	int rc;

	if ((rc = read_file(path, &text, err, errlen)) != 0)
		return rc;
	for (line = text; line != NULL && *line != '\0'; line = next) {
		char *p;
		lineno++;
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (strlen(line) > 1024) {
			why = "line longer than 1024 bytes";
			rc = VEP_ERR_INVALID;
			break;
		}
		for (p = line; *p == ' ' || *p == '\t' || *p == '\r'; p++)
			;
		if (*p == '\0' || *p == '#')
			continue;
		if (m->n == ACCOUNT_ALIASES_MAX) {
			why = "too many entries";
			rc = VEP_ERR_TOOBIG;
			break;
		}
		if (m->n == cap) {
			struct alias *nv;
			cap = cap ? cap * 2 : 64;
			if ((nv = realloc(m->v, cap * sizeof(*nv))) == NULL) {
				rc = VEP_ERR_NOMEM;
				break;
			}
			m->v = nv;
		}
		memset(&m->v[m->n], 0, sizeof(m->v[m->n]));
		rc = parse_line(p, &m->v[m->n], &why);
		m->n++;
		if (rc != 0)
			break;
	}
	free(text);
	if (rc == 0 && m->n > 1) {
		qsort(m->v, m->n, sizeof(*m->v), alias_cmp);
		for (i = 1; i < m->n; i++) {
			if (strcmp(m->v[i - 1].local, m->v[i].local) == 0) {
				snprintf(err, errlen, "%s: local part '%s' listed twice", path,
				    m->v[i].local);
				return VEP_ERR_INVALID;
			}
		}
	}
	if (rc != 0)
		snprintf(err, errlen, "%s:%u: %s", path, lineno,
		    why != NULL ? why : "out of memory");
	return rc;
}

int
account_map_new(const char *suffix, const char *aliases_path, struct account_map **out,
    char *err, size_t errlen)
{
	struct account_map *m;
	int rc = VEP_ERR_NOMEM;

	*out = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if ((m = calloc(1, sizeof(*m))) == NULL ||
	    (suffix != NULL && (m->suffix = strdup(suffix)) == NULL)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (aliases_path != NULL && (rc = load_aliases(m, aliases_path, err, errlen)) != 0)
		goto out;
	*out = m;
	m = NULL;
	rc = VEP_OK;
out:
	account_map_free(m);
	return rc;
}

int
account_map_user(const struct account_map *m, const char *local, char *out, size_t outlen)
{
	struct alias key = { (char *)local, NULL }, *hit;
	int n;

	hit = m->n > 0 ? bsearch(&key, m->v, m->n, sizeof(*m->v), alias_cmp) : NULL;
	if (hit != NULL)
		n = snprintf(out, outlen, "%s", hit->user);
	else
		n = snprintf(out, outlen, "%s%s", local, m->suffix != NULL ? m->suffix : "");
	if (n < 0 || (size_t)n >= outlen || (size_t)n > ACCOUNT_USER_MAX) {
		if (outlen > 0)
			out[0] = '\0';
		return VEP_ERR_TOOBIG;
	}
	if (strcmp(out, "root") == 0)
		return VEP_ERR_PERM;
	return safe_name(out) ? VEP_OK : VEP_ERR_INVALID;
}

size_t
account_map_alias_count(const struct account_map *m)
{
	return m->n;
}

void
account_map_free(struct account_map *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++) {
		free(m->v[i].local);
		free(m->v[i].user);
	}
	free(m->v);
	free(m->suffix);
	free(m);
}
