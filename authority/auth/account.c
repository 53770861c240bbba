/*
 * auth/account.c - address to PAM user mapping (contract in auth/account.h).
 *
 * Owns: the suffix and the alias file's text. The file is read whole into
 * one buffer and the table points into it (one allocation for the text, one
 * for the table, however many entries), then sorted once so that a lookup
 * is a binary search.
 * Must never: touch the file again after account_map_new, log (errors go
 * back to the caller as text), or hand out "root" or a name PAM or NSS
 * could misread.
 */
#include "auth/account.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "email.h"
#include "err.h"
#include "file.h"

struct alias {
	const char *local;     /* into account_map.text */
	const char *user;      /* into account_map.text */
	unsigned long line;    /* where it was read, for the duplicate message */
};

struct account_map {
	char *suffix;          /* owned, NULL for none */
	size_t suffix_len;
	char *text;            /* owned: the alias file, tokens NUL-terminated in place */
	struct alias *v;       /* owned, sorted by local (then line) */
	size_t n;
};

/* The user no mapping may produce, whatever the table or suffix says.
 * Compared without regard to case: NSS back ends that match names case
 * insensitively (sssd, winbind) would resolve "Root" to the superuser. */
static const char root_user[] = "root";

/* 1 when c may appear in a user name: not a control character, not
 * whitespace, not '/' (paths: home directories, pam_mkhomedir) and not ':'
 * (the field separator of passwd, group and pam_matrix files). Bytes above
 * 0x7f pass; addresses are ASCII, and an administrator's alias may name a
 * UTF-8 account. */
static int
user_char_ok(unsigned char c)
{
	return c > ' ' && c != 0x7f && c != '/' && c != ':';
}

/* 1 when name (len bytes) can safely be handed to PAM and NSS as a user
 * name; a leading '-' would read as an option to the tools (su, passwd,
 * chage) that PAM modules and administrators run with it. */
static int
safe_name(const char *name, size_t len)
{
	size_t i;

	if (len == 0 || name[0] == '-')
		return 0;
	for (i = 0; i < len; i++)
		if (!user_char_ok((unsigned char)name[i]))
			return 0;
	return 1;
}

/* 1 when s could be a normalised address's local part, as far as its
 * characters and length go (RFC 5322 atext and '.'; see email.h). A table
 * line that no address can reach is an administrator's mistake (often a
 * whole address pasted in) and is refused rather than silently ignored. */
static int
local_ok(const char *s)
{
	static const char atext_punct[] = "!#$%&'*+-/=?^_`{|}~.";
	size_t i;

	for (i = 0; s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == VEP_EMAIL_LOCAL_MAX)
			return 0;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr(atext_punct, c) != NULL))
			return 0;
	}
	return i > 0;
}

/* Byte order on the local part, then file order: equal local parts end up
 * adjacent with the earlier line first, for the duplicate message. */
static int
alias_cmp(const void *a, const void *b)
{
	const struct alias *x = a, *y = b;
	int c = strcmp(x->local, y->local);

	if (c != 0)
		return c;
	return (x->line > y->line) - (x->line < y->line);
}

/* Reads the whole file into *out (NUL-terminated, *len bytes before the
 * NUL), refusing anything but a regular file that only its owner may write,
 * of at most ACCOUNT_ALIASES_FILE_MAX bytes (checked on the opened file, so
 * a rename between check and read cannot swap in another). */
static int
read_file(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
	int rc;

	rc = vep_file_read(path, ACCOUNT_ALIASES_FILE_MAX, VEP_FILE_OWNER_WRITES, out, len);
	if (rc == VEP_ERR_INVALID)
		snprintf(err, errlen, "%s: not a regular file", path);
	else if (rc == VEP_ERR_PERM)
		snprintf(err, errlen, "%s: writable by group or others, and it decides who signs "
		    "in as whom (chmod go-w %s)", path, path);
	else if (rc == VEP_ERR_TOOBIG)
		snprintf(err, errlen, "%s: larger than %ld bytes", path, ACCOUNT_ALIASES_FILE_MAX);
	else if (rc == VEP_ERR_NOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	else if (rc != 0)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return rc;
}

/* Cuts the next space- or tab-separated field out of *pp (NUL-terminating
 * it in place); NULL when none is left. */
static char *
next_field(char **pp)
{
	char *p = *pp, *start;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0') {
		*pp = p;
		return NULL;
	}
	start = p;
	while (*p != '\0' && *p != ' ' && *p != '\t')
		p++;
	if (*p != '\0')
		*p++ = '\0';
	*pp = p;
	return start;
}

/* Parses one line (NUL-terminated, without its newline) into *a, cleared
 * first: an entry fills it, a blank or comment line leaves a->local NULL.
 * Returns 0, or VEP_ERR_INVALID with *why set. */
static int
parse_line(char *line, size_t len, struct alias *a, const char **why)
{
	char *p = line, *local, *user;
	size_t ulen;

	memset(a, 0, sizeof(*a));
	if (len > 0 && line[len - 1] == '\r') /* CRLF file */
		line[--len] = '\0';
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0' || *p == '#')
		return 0;
	local = next_field(&p);
	user = next_field(&p);
	if (user == NULL || next_field(&p) != NULL) {
		*why = "expected \"LOCALPART PAMUSER\"";
		return VEP_ERR_INVALID;
	}
	if (!local_ok(local)) {
		*why = "LOCALPART is not an address's local part (1 to 64 characters "
		    "before the '@')";
		return VEP_ERR_INVALID;
	}
	ulen = strlen(user);
	if (ulen > ACCOUNT_USER_MAX) {
		*why = "PAMUSER longer than 256 bytes";
		return VEP_ERR_INVALID;
	}
	if (!safe_name(user, ulen)) {
		*why = "PAMUSER is not a safe user name (control characters, '/', ':' or a "
		    "leading '-')";
		return VEP_ERR_INVALID;
	}
	/* Refused here as well as at lookup, so the mistake stops start-up
	 * instead of surfacing as one user's failed sign-ins. */
	if (strcasecmp(user, root_user) == 0) {
		*why = "PAMUSER root never signs in";
		return VEP_ERR_INVALID;
	}
	a->local = local;
	a->user = user;
	return VEP_OK;
}

static int
load_aliases(struct account_map *m, const char *path, const char *text, size_t len,
    char *err, size_t errlen)
{
	char *p, *end, *eol;
	const char *why = NULL;
	unsigned long lineno = 0;
	size_t cap = 0, i;
	struct alias a;
	int rc;

	if ((m->text = malloc(len + 1)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return VEP_ERR_NOMEM;
	}
	memcpy(m->text, text, len);
	m->text[len] = '\0';
	p = m->text;
	end = m->text + len;
	while (p < end) {
		lineno++;
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			eol = end; /* last line without a newline; *end is the NUL */
		if ((size_t)(eol - p) > ACCOUNT_ALIASES_LINE_MAX) {
			why = "line longer than 1024 bytes";
			rc = VEP_ERR_TOOBIG;
			goto out;
		}
		/* A NUL would end the line early and hide the rest of it. */
		if (memchr(p, '\0', (size_t)(eol - p)) != NULL) {
			why = "NUL byte in line";
			rc = VEP_ERR_INVALID;
			goto out;
		}
		*eol = '\0';
		rc = parse_line(p, (size_t)(eol - p), &a, &why);
		p = eol + 1;
		if (rc != 0)
			goto out;
		if (a.local == NULL)
			continue;
		if (m->n == ACCOUNT_ALIASES_MAX) {
			why = "more than 100000 entries";
			rc = VEP_ERR_TOOBIG;
			goto out;
		}
		if (m->n == cap) {
			struct alias *nv;

			cap = cap != 0 ? cap * 2 : 64;
			if (cap > ACCOUNT_ALIASES_MAX)
				cap = ACCOUNT_ALIASES_MAX;
			if ((nv = realloc(m->v, cap * sizeof(*nv))) == NULL) {
				why = "out of memory";
				rc = VEP_ERR_NOMEM;
				goto out;
			}
			m->v = nv;
		}
		a.line = lineno;
		m->v[m->n++] = a;
	}
	rc = VEP_OK;
	if (m->n > 1) {
		qsort(m->v, m->n, sizeof(*m->v), alias_cmp);
		/* Every later line repeating a local part is a duplicate; report
		 * the first such line in the file. */
		for (i = 1; i < m->n; i++) {
			if (strcmp(m->v[i - 1].local, m->v[i].local) != 0)
				continue;
			if (rc == VEP_OK || m->v[i].line < lineno) {
				lineno = m->v[i].line;
				a = m->v[i - 1];
			}
			rc = VEP_ERR_INVALID;
		}
		if (rc != VEP_OK) {
			snprintf(err, errlen, "%s:%lu: local part '%s' already listed on line %lu",
			    path, lineno, a.local, a.line);
			return rc;
		}
	}
out:
	if (rc != VEP_OK)
		snprintf(err, errlen, "%s:%lu: %s", path, lineno, why);
	return rc;
}

int
account_map_new(const char *suffix, const char *aliases_path, struct account_map **out,
    char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if (aliases_path != NULL && (rc = read_file(aliases_path, &text, &len, err, errlen)) != 0)
		return rc;
	rc = account_map_new_text(suffix, aliases_path, text, len, out, err, errlen);
	free(text);
	return rc;
}

int
account_read_aliases(const char *path, char **out, size_t *outlen, char *err, size_t errlen)
{
	return read_file(path, out, outlen, err, errlen);
}

int
account_map_new_text(const char *suffix, const char *aliases_path, const char *text,
    size_t len, struct account_map **out, char *err, size_t errlen)
{
	struct account_map *m;
	int rc = VEP_ERR_NOMEM;

	*out = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (suffix != NULL && suffix[0] != '\0') {
		/* core/config.c checks the suffix already; checked again here so the
		 * map never depends on its caller for safety. A leading '-' is
		 * fine: the suffix never starts the name. */
		m->suffix_len = strlen(suffix);
		if (m->suffix_len > ACCOUNT_USER_MAX) {
			snprintf(err, errlen, "account_suffix longer than %d bytes",
			    ACCOUNT_USER_MAX);
			rc = VEP_ERR_TOOBIG;
			goto out;
		}
		for (size_t i = 0; i < m->suffix_len; i++) {
			if (!user_char_ok((unsigned char)suffix[i])) {
				snprintf(err, errlen, "account_suffix holds a character not "
				    "allowed in a user name");
				rc = VEP_ERR_INVALID;
				goto out;
			}
		}
		if ((m->suffix = strdup(suffix)) == NULL) {
			snprintf(err, errlen, "out of memory");
			rc = VEP_ERR_NOMEM;
			goto out;
		}
	}
	if (aliases_path != NULL &&
	    (rc = load_aliases(m, aliases_path, text, len, err, errlen)) != 0)
		goto out;
	*out = m;
	m = NULL;
	rc = VEP_OK;
out:
	account_map_free(m);
	return rc;
}

/* The alias for local, or NULL. */
static const struct alias *
find_alias(const struct account_map *m, const char *local)
{
	size_t lo = 0, hi = m->n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(local, m->v[mid].local);
		if (c == 0)
			return &m->v[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

int
account_map_user(const struct account_map *m, const char *local, char *out, size_t outlen)
{
	const struct alias *hit;
	const char *base, *suffix = "";
	size_t blen, slen = 0;
	int rc = VEP_ERR_TOOBIG;

	if (out != NULL && outlen > 0)
		out[0] = '\0';
	if (m == NULL || local == NULL || out == NULL)
		return VEP_ERR_ARG;
	/* An alias replaces the whole name: no suffix is added to it. */
	if ((hit = find_alias(m, local)) != NULL) {
		base = hit->user;
	} else {
		base = local;
		if (m->suffix != NULL) {
			suffix = m->suffix;
			slen = m->suffix_len;
		}
	}
	blen = strlen(base);
	if (blen > ACCOUNT_USER_MAX || slen > ACCOUNT_USER_MAX - blen ||
	    blen + slen >= outlen)
		goto out;
	memcpy(out, base, blen);
	memcpy(out + blen, suffix, slen);
	out[blen + slen] = '\0';
	/* Compared on the final name, so no split of "root" between local
	 * part and suffix ("ro" + "ot") gets through. */
	if (strcasecmp(out, root_user) == 0)
		rc = VEP_ERR_PERM;
	else if (!safe_name(out, blen + slen))
		rc = VEP_ERR_INVALID;
	else
		rc = VEP_OK;
out:
	if (rc != VEP_OK && outlen > 0)
		out[0] = '\0';
	return rc;
}

size_t
account_map_alias_count(const struct account_map *m)
{
	return m != NULL ? m->n : 0;
}

void
account_map_free(struct account_map *m)
{
	if (m == NULL)
		return;
	free(m->v);
	free(m->text);
	free(m->suffix);
	free(m);
}
