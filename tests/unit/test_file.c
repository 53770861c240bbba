/*
 * test_file.c - libvep/file.c, the one whole-file reader: empty, exactly
 * at the cap, one byte over (as the file says and as it grows), missing,
 * not a regular file (a directory, a FIFO that must not hang), a symbolic
 * link with and without VEP_FILE_NOFOLLOW, the permission rules, a stream
 * longer than the first buffer, and NUL termination.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "file.h"
#include "harness.h"

static char tmpdir[] = "/tmp/vep-test-file-XXXXXX";
static char path[256], other[256];

static void
at(char *buf, const char *name)
{
	snprintf(buf, 256, "%s/%s", tmpdir, name);
}

/* Writes n bytes of c to path with mode; 0 or -1. */
static int
make(const char *p, char c, size_t n, mode_t mode)
{
	char *b = malloc(n + 1);
	int fd, ok;

	if (b == NULL)
		return -1;
	memset(b, c, n);
	(void)unlink(p);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	ok = fd >= 0 && write(fd, b, n) == (ssize_t)n;
	if (fd >= 0)
		close(fd);
	free(b);
	return ok && chmod(p, mode) == 0 ? 0 : -1;
}

static void
test_sizes(void)
{
	char *buf = (char *)1;
	size_t len = 99;

	at(path, "empty");
	ASSERT_EQ(make(path, 'x', 0, 0600), 0);
	ASSERT_EQ(vep_file_read(path, 10, 0, &buf, &len), 0);
	ASSERT_EQ(len, 0);
	ASSERT_STREQ(buf, "");
	vep_file_free(buf, len);

	at(path, "exact");
	ASSERT_EQ(make(path, 'e', 100, 0600), 0);
	ASSERT_EQ(vep_file_read(path, 100, 0, &buf, &len), 0);
	ASSERT_EQ(len, 100);
	ASSERT_EQ(buf[99], 'e');
	ASSERT_EQ(buf[100], '\0');
	ASSERT_EQ(strlen(buf), 100);
	free(buf);

	/* One over the cap: refused, and the out-parameters stay clear. */
	ASSERT_EQ(vep_file_read(path, 99, 0, &buf, &len), VEP_ERR_TOOBIG);
	ASSERT_TRUE(buf == NULL);
	ASSERT_EQ(len, 0);
	ASSERT_EQ(vep_file_read(path, 0, 0, &buf, &len), VEP_ERR_TOOBIG);

	/* Larger than the first stream buffer, read whole. */
	at(path, "big");
	ASSERT_EQ(make(path, 'b', 100000, 0600), 0);
	ASSERT_EQ(vep_file_read(path, 100000, 0, &buf, &len), 0);
	ASSERT_EQ(len, 100000);
	ASSERT_EQ(strlen(buf), 100000);
	vep_file_free(buf, len);
	vep_file_free(NULL, 0);
}

static void
test_not_regular(void)
{
	char *buf = NULL;
	size_t len = 0;

	at(path, "missing");
	ASSERT_EQ(vep_file_read(path, 10, 0, &buf, &len), VEP_ERR_IO);
	ASSERT_EQ(errno, ENOENT);
	ASSERT_EQ(vep_file_read(tmpdir, 10, 0, &buf, &len), VEP_ERR_INVALID);
	at(path, "fifo");
	ASSERT_EQ(mkfifo(path, 0600), 0);
	ASSERT_EQ(vep_file_read(path, 10, 0, &buf, &len), VEP_ERR_INVALID);  /* no hang */
	ASSERT_EQ(unlink(path), 0);
	ASSERT_EQ(vep_file_read("/dev/null", 10, 0, &buf, &len), VEP_ERR_INVALID);
	ASSERT_TRUE(buf == NULL);
	ASSERT_EQ(vep_file_read(NULL, 10, 0, &buf, &len), VEP_ERR_ARG);
	ASSERT_EQ(vep_file_read(tmpdir, 10, 0, NULL, &len), VEP_ERR_ARG);
}

static void
test_symlink(void)
{
	char *buf = NULL;
	size_t len = 0;

	at(path, "target");
	ASSERT_EQ(make(path, 't', 5, 0600), 0);
	at(other, "link");
	(void)unlink(other);
	ASSERT_EQ(symlink(path, other), 0);
	ASSERT_EQ(vep_file_read(other, 10, 0, &buf, &len), 0);
	ASSERT_STREQ(buf, "ttttt");
	free(buf);
	buf = NULL;
	ASSERT_EQ(vep_file_read(other, 10, VEP_FILE_NOFOLLOW, &buf, &len), VEP_ERR_IO);
	ASSERT_EQ(errno, ELOOP);
	ASSERT_TRUE(buf == NULL);
}

static void
test_permissions(void)
{
	static const struct {
		mode_t mode;
		unsigned flags;
		int want;
	} cases[] = {
		{ 0600, VEP_FILE_OWNER_ONLY, 0 },
		{ 0400, VEP_FILE_OWNER_ONLY, 0 },
		{ 0640, VEP_FILE_OWNER_ONLY, VEP_ERR_PERM },
		{ 0604, VEP_FILE_OWNER_ONLY, VEP_ERR_PERM },
		{ 0601, VEP_FILE_OWNER_ONLY, VEP_ERR_PERM },
		{ 0644, VEP_FILE_OWNER_WRITES, 0 },
		{ 0664, VEP_FILE_OWNER_WRITES, VEP_ERR_PERM },
		{ 0646, VEP_FILE_OWNER_WRITES, VEP_ERR_PERM },
		{ 0666, 0, 0 },
	};
	char *buf;
	size_t i, len;

	at(path, "mode");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(make(path, 'm', 3, cases[i].mode), 0);
		buf = NULL;
		ASSERT_EQ(vep_file_read(path, 10, cases[i].flags, &buf, &len), cases[i].want);
		ASSERT_TRUE((buf != NULL) == (cases[i].want == 0));
		free(buf);
	}
}

static void
test_stream(void)
{
	char *buf = NULL, chunk[1000];
	size_t len = 0, i;
	int p[2];

	memset(chunk, 's', sizeof(chunk));
	ASSERT_EQ(pipe(p), 0);
	/* 10000 bytes: more than the first buffer, less than a pipe holds. */
	for (i = 0; i < 10; i++)
		ASSERT_EQ(write(p[1], chunk, sizeof(chunk)), (ssize_t)sizeof(chunk));
	close(p[1]);
	ASSERT_EQ(vep_file_read_fd(p[0], 10000, &buf, &len), 0);
	ASSERT_EQ(len, 10000);
	ASSERT_EQ(strlen(buf), 10000);
	vep_file_free(buf, len);
	close(p[0]);

	ASSERT_EQ(pipe(p), 0);
	ASSERT_EQ(write(p[1], chunk, sizeof(chunk)), (ssize_t)sizeof(chunk));
	close(p[1]);
	buf = NULL;
	ASSERT_EQ(vep_file_read_fd(p[0], 999, &buf, &len), VEP_ERR_TOOBIG);
	ASSERT_TRUE(buf == NULL);
	close(p[0]);
	ASSERT_EQ(vep_file_read_fd(-1, 10, &buf, &len), VEP_ERR_ARG);
}

int
main(void)
{
	if (mkdtemp(tmpdir) == NULL)
		return 77;
	RUN(test_sizes);
	RUN(test_not_regular);
	RUN(test_symlink);
	RUN(test_permissions);
	RUN(test_stream);
	{
		static const char *const names[] = {
			"empty", "exact", "big", "target", "link", "mode",
		};
		size_t i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			at(path, names[i]);
			(void)unlink(path);
		}
		(void)rmdir(tmpdir);
	}
	return harness_done();
}
