/*
 * rp-verify - a relying party's check of a sign-in, with libvep, for a web
 * server to run once per request (CGI-style): verifies the backed
 * assertion on standard input for this site's audience against the email
 * domain's support document, then refuses it if it was accepted before.
 *
 *   rp-verify --audience https://shop.example --domain example.com
 *       [--issuer login.example.com] --support-doc FILE --seen FILE
 *
 * --support-doc: the domain's /.well-known/browserid, fetched by the caller
 * (a cron job, say; this program does no network I/O). --issuer: the host
 * the domain delegates to, when it does (the document is then that host's).
 * --seen: the replay record, a file this program keeps (locked while used).
 *
 * Exit 0: accepted, the address on standard output. 1: refused, the
 * reason on standard error. 2: usage, I/O or a full replay record.
 */
/* flock, strtok_r and fdatasync, also when built as plain C17. */
#define _DEFAULT_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <unistd.h>

#include "assertion.h"
#include "digest.h"
#include "email.h"
#include "err.h"
#include "file.h"
#include "support.h"
#include "util.h"

enum { EXIT_ACCEPTED = 0, EXIT_REFUSED = 1, EXIT_TROUBLE = 2 };

/* Persona's limit on what a verifier reads. */
#define MAX_ASSERTION_BYTES (10 * 1024)
#define MAX_SUPPORT_DOC_BYTES (64 * 1024)
/* The replay record holds at most this many accepted assertions... */
#define SEEN_MAX 10000
/* ...each until it expires, so it refuses assertions that would stay
 * longer than this (browsers make them valid for 2 minutes): otherwise
 * a few far-future ones would fill it for good. */
#define MAX_AHEAD_MS (10 * 60 * 1000LL)
#define KEY_HEX (2 * VEP_SHA256_BYTES)
/* A record line: expiry (ms), a space, the key in hex, a newline. */
#define SEEN_LINE_MAX (20 + 1 + KEY_HEX + 1)

struct args {
	const char *audience, *domain, *issuer, *support_doc, *seen;
};

struct seen_entry {
	int64_t exp_ms;
	char key[KEY_HEX + 1];
};

static int
usage(void)
{
	fprintf(stderr, "usage: rp-verify --audience ORIGIN --domain DOMAIN "
	    "[--issuer HOST] --support-doc FILE --seen FILE < ASSERTION\n");
	return EXIT_TROUBLE;
}

static int
refuse(const char *why)
{
	fprintf(stderr, "rp-verify: refused: %s\n", why);
	return EXIT_REFUSED;
}

static int
parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "audience", required_argument, NULL, 'a' },
		{ "domain", required_argument, NULL, 'd' },
		{ "issuer", required_argument, NULL, 'i' },
		{ "support-doc", required_argument, NULL, 's' },
		{ "seen", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof *a);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a': a->audience = optarg; break;
		case 'd': a->domain = optarg; break;
		case 'i': a->issuer = optarg; break;
		case 's': a->support_doc = optarg; break;
		case 'S': a->seen = optarg; break;
		default: return -1;
		}
	}
	if (optind != argc || a->audience == NULL || a->domain == NULL ||
	    a->support_doc == NULL || a->seen == NULL)
		return -1;
	if (a->issuer == NULL)
		a->issuer = a->domain;
	return 0;
}

/* Loads the keys the domain publishes. */
static int
load_support(const char *path, struct vep_support **doc)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	if ((rc = vep_file_read(path, MAX_SUPPORT_DOC_BYTES, 0, &text, &len)) == 0)
		rc = vep_support_parse(text, len, doc);
	free(text);
	if (rc != 0) {
		fprintf(stderr, "rp-verify: %s: %s\n", path, vep_strerror(rc));
		return -1;
	}
	if ((*doc)->disabled || (*doc)->authority != NULL) {
		fprintf(stderr, "rp-verify: %s: %s\n", path, (*doc)->disabled ?
		    "the domain has disabled sign-in" :
		    "a delegation: pass the authority's document and --issuer");
		return -1;
	}
	return 0;
}

/* 1 when the certified address belongs to domain: the keys were published
 * by that domain (or its authority), and vouch for its addresses only. */
static int
of_domain(const vep_backed *b, const char *domain)
{
	char *local = NULL, *dom = NULL;
	int ok;

	if (vep_email_split(b->cert->email, &local, &dom) != 0) {
		free(local);
		return 0;
	}
	vep_domain_lower(dom);
	ok = strcasecmp(dom, domain) == 0;
	free(local);
	free(dom);
	return ok;
}

/*
 * The replay record's key: a hash of what the user's signature covers
 * (the assertion's header and payload), not of the whole text, which can
 * be re-sent with another certificate of the same key or its signature
 * written with a leading zero byte, and still verify.
 */
static int
replay_key(const vep_backed *b, char out[KEY_HEX + 1])
{
	uint8_t h[VEP_SHA256_BYTES];
	size_t i;

	if (vep_sha256(b->assertion->signing_input, b->assertion->signing_input_len, h) != 0)
		return -1;
	for (i = 0; i < sizeof h; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
	return 0;
}

/* Reads the record's entries still valid at now into e (at most SEEN_MAX;
 * *n of them). -1 on a damaged record. */
static int
seen_parse(char *text, int64_t now, struct seen_entry *e, size_t *n)
{
	char *line, *end, *save = NULL;
	long long exp;

	*n = 0;
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		errno = 0;
		exp = strtoll(line, &end, 10);
		if (errno != 0 || *end != ' ' || strlen(end + 1) != KEY_HEX ||
		    strspn(end + 1, "0123456789abcdef") != KEY_HEX || *n >= SEEN_MAX)
			return -1;
		if (exp <= now)
			continue;
		e[*n].exp_ms = exp;
		memcpy(e[*n].key, end + 1, KEY_HEX + 1);
		(*n)++;
	}
	return 0;
}

/* Replaces the record's content with e[0..n). */
static int
seen_write(int fd, const struct seen_entry *e, size_t n)
{
	char *buf, *p;
	size_t i, len;
	ssize_t w;
	int rc = 0;

	if ((buf = malloc(n * SEEN_LINE_MAX + 1)) == NULL)
		return -1;
	for (p = buf, i = 0; i < n; i++)
		p += sprintf(p, "%" PRId64 " %s\n", e[i].exp_ms, e[i].key);
	len = (size_t)(p - buf);
	/* Written first, cut to length after: a crash in between leaves old
	 * lines or a damaged record (refused), never one missing entries. */
	for (p = buf; len > 0; p += w, len -= (size_t)w) {
		if ((w = pwrite(fd, p, len, p - buf)) < 0 && errno != EINTR) {
			rc = -1;
			break;
		}
		if (w < 0)
			w = 0;
	}
	if (rc == 0 && ftruncate(fd, p - buf) != 0)
		rc = -1;
	if (rc == 0 && fdatasync(fd) != 0)
		rc = -1;
	free(buf);
	return rc;
}

enum { SEEN_NEW, SEEN_BEFORE, SEEN_FULL, SEEN_ERROR };

/*
 * Records key (valid until exp_ms) in the file at path unless it is there
 * already. The lock makes the check and the record one step for every
 * copy of this program the web server runs at once.
 */
static int
seen_admit(const char *path, const char *key, int64_t exp_ms, int64_t now)
{
	struct seen_entry *e = NULL;
	char *text = NULL;
	size_t len = 0, n = 0, i;
	int fd, rc = SEEN_ERROR;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) != 0) {
		fprintf(stderr, "rp-verify: %s: %s\n", path, strerror(errno));
		goto out;
	}
	if ((e = calloc(SEEN_MAX + 1, sizeof *e)) == NULL ||
	    vep_file_read_fd(fd, SEEN_MAX * SEEN_LINE_MAX, &text, &len) != 0 ||
	    seen_parse(text, now, e, &n) != 0) {
		fprintf(stderr, "rp-verify: %s: unreadable or damaged (it may be removed "
		    "once every assertion it lists has expired)\n", path);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(e[i].key, key) == 0) {
			rc = SEEN_BEFORE;
			goto out;
		}
	}
	if (n >= SEEN_MAX) {
		rc = SEEN_FULL;
		goto out;
	}
	e[n].exp_ms = exp_ms;
	memcpy(e[n].key, key, KEY_HEX + 1);
	if (seen_write(fd, e, n + 1) != 0) {
		fprintf(stderr, "rp-verify: %s: %s\n", path, strerror(errno));
		goto out;
	}
	rc = SEEN_NEW;
out:
	if (fd >= 0)
		close(fd);
	free(text);
	free(e);
	return rc;
}

/* Accepts b, verified, unless it was accepted before: the address on
 * standard output, or why not. */
static int
accept_once(const char *seen, const vep_backed *b, int64_t now)
{
	char key[KEY_HEX + 1];

	if (b->exp_ms > now + MAX_AHEAD_MS)
		return refuse("valid too far ahead (is the computer's clock right?)");
	if (replay_key(b, key) != 0)
		return EXIT_TROUBLE;
	switch (seen_admit(seen, key, b->exp_ms, now)) {
	case SEEN_NEW:
		printf("%s\n", b->cert->email);
		return EXIT_ACCEPTED;
	case SEEN_BEFORE:
		return refuse("already used: a replay");
	case SEEN_FULL:
		fprintf(stderr, "rp-verify: the replay record is full, try again later\n");
		return EXIT_TROUBLE;
	default:
		return EXIT_TROUBLE;
	}
}

/* The verdict on the len bytes of text. */
static int
verify(const struct args *a, const struct vep_support *doc, const char *text, size_t len)
{
	vep_backed *b = NULL;
	int64_t now = vep_now_ms();
	int rc;

	if ((rc = vep_backed_parse(text, len, &b)) != 0)
		return refuse(vep_strerror(rc));
	if (!of_domain(b, a->domain))
		rc = refuse("not an address of this site's domain");
	else if ((rc = vep_backed_verify(b, a->audience, a->issuer,
	    (const vep_key *const *)doc->keys, doc->nkeys, now)) != 0)
		rc = refuse(vep_strerror(rc));
	else
		rc = accept_once(a->seen, b, now);
	vep_backed_free(b);
	return rc;
}

int
main(int argc, char **argv)
{
	struct vep_support *doc = NULL;
	struct args a;
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (parse_args(argc, argv, &a) != 0)
		return usage();
	if (load_support(a.support_doc, &doc) != 0)
		return EXIT_TROUBLE;
	rc = vep_file_read_fd(STDIN_FILENO, MAX_ASSERTION_BYTES, &text, &len);
	if (rc == VEP_ERR_TOOBIG)
		rc = refuse("assertion over 10 KiB");
	else if (rc != 0)
		rc = refuse("cannot read the assertion");
	else {
		/* A form field or `echo` may end it with a newline. */
		while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
			text[--len] = '\0';
		rc = verify(&a, doc, text, len);
	}
	free(text);
	vep_support_free(doc);
	return rc;
}
