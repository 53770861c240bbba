/*
 * cmd_backup.c - `vep-keytool backup`: a consistent copy of a running
 * authority's database in one file; `vep-keytool restore`: put such a copy
 * back while no server holds the database.
 *
 * The copy goes through SQLite's online backup API (store/backup.h), never
 * a file copy, which would lose what sits in the write-ahead log. It is
 * written to a temporary file (mode 0600) beside FILE, checked, synced,
 * and only then given FILE's name: by link(2), which refuses an existing
 * FILE, or with --force by rename(2). So FILE is either untouched or a
 * complete, checked backup, never half of one.
 *
 * Both are for the SQLite store of a state directory only. A PostgreSQL
 * store (--database) is refused with the pg_dump or pg_restore command
 * that does the job: PostgreSQL's own tools take a consistent dump of a
 * live server, and a copy through this tool's file format would be no
 * backup of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_state.h"
#include "state.h"
#include "store/backup.h"
#include "store/db.h"
#include "err.h"

static const char backup_usage[] =
    "usage: vep-keytool backup --state DIR [--force] FILE\n"
    "Copies the database of the authority whose state directory is DIR into\n"
    "FILE (mode 0600), consistent as of one moment while the authority runs\n"
    "and writes (SQLite's online backup), then checks the copy (PRAGMA\n"
    "integrity_check). Refuses an existing FILE unless --force; FILE is\n"
    "replaced only by a complete, checked copy. Restore it with\n"
    "`vep-keytool restore`.\n"
    "A PostgreSQL store (--database) is backed up with pg_dump instead:\n"
    "  pg_dump --format=custom --file=vep.dump \"CONNINFO\"\n";

static const char restore_usage[] =
    "usage: vep-keytool restore --state DIR [--force] FILE\n"
    "Checks the backup FILE (integrity, a schema version this build knows) and\n"
    "copies it into DIR's database in one transaction. Refuses while any\n"
    "process (a running vep-authority) has the database open: stop the\n"
    "authority first, restore, start it (it migrates an older backup). Refuses\n"
    "to replace an existing database unless --force.\n"
    "A PostgreSQL store (--database) is restored with pg_restore instead,\n"
    "with every authority instance on it stopped:\n"
    "  pg_restore --clean --if-exists --dbname=\"CONNINFO\" vep.dump\n";

/* What backup and restore say to a PostgreSQL store: PostgreSQL's own tool,
 * with the placeholder CONNINFO, never the string given (a password). */
static const char backup_pg_refusal[] =
    "vep-keytool backup: not for a PostgreSQL store: back it up with pg_dump,\n"
    "while the authorities run:\n"
    "  pg_dump --format=custom --file=vep.dump \"CONNINFO\"\n";
static const char restore_pg_refusal[] =
    "vep-keytool restore: not for a PostgreSQL store: stop every authority\n"
    "instance on it, then restore with pg_restore:\n"
    "  pg_restore --clean --if-exists --dbname=\"CONNINFO\" vep.dump\n";

struct backup_opts {
	struct kt_store store;
	const char *file;
	int force;
};

/* parse_opts's answer when it printed the help: exit 0 without work. */
#define BACKUP_HELP_DONE 100

/* Returns 0, BACKUP_HELP_DONE, or the usage exit code after printing why
 * (refusal: what to say to a PostgreSQL store). */
static int
parse_opts(int argc, char **argv, const char *cmd, const char *usage, const char *refusal,
    struct backup_opts *o)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, KT_STORE_OPT_STATE },
		{ "database", required_argument, NULL, KT_STORE_OPT_DATABASE },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;   /* GNU: restart the scan */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+s:D:fh", opts, NULL)) != -1) {
		switch (c) {
		case KT_STORE_OPT_STATE:
			o->store.state_dir = optarg;
			break;
		case KT_STORE_OPT_DATABASE:
			o->store.conninfo = optarg;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return BACKUP_HELP_DONE;
		default:
			goto usage;
		}
	}
	if (kt_store_check(cmd, &o->store) != 0)
		goto usage;
	if (o->store.conninfo != NULL) {
		fputs(refusal, stderr);
		return KT_STATE_EXIT_USAGE;
	}
	if (optind != argc - 1 || argv[optind][0] == '\0')
		goto usage;
	o->file = argv[optind];
	return 0;
usage:
	fputs(usage, stderr);
	return KT_STATE_EXIT_USAGE;
}

/* Flushes path's contents (or a directory's entries) to disk. */
static int
sync_path(const char *path, int flags)
{
	int fd, ret;

	if ((fd = open(path, flags | O_CLOEXEC)) < 0)
		return VEP_ERR_IO;
	ret = fsync(fd) == 0 ? VEP_OK : VEP_ERR_IO;
	(void)close(fd);
	return ret;
}

static int
sync_dir_of(const char *path)
{
	char *copy = strdup(path);
	int ret;

	if (copy == NULL)
		return VEP_ERR_NOMEM;
	ret = sync_path(dirname(copy), O_RDONLY | O_DIRECTORY);
	free(copy);
	return ret;
}

/* The live database itself, or a file of SQLite's beside it, must never
 * be replaced by a backup of it. */
static int
is_live_file(const char *db_path, const char *file)
{
	static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
	struct stat a, b;
	char *p;
	size_t i;
	int same = 0;

	if (stat(file, &b) != 0)
		return 0;
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]) && !same; i++) {
		if (asprintf(&p, "%s%s", db_path, suffixes[i]) < 0)
			return 1;
		same = stat(p, &a) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
		free(p);
	}
	return same;
}

/* Writes the backup into a new temporary file beside o->file and returns
 * its name (malloc'd) in *tmp_out, complete, checked and synced. */
static int
backup_to_temp(struct db *db, const struct backup_opts *o, char **tmp_out)
{
	char *tmp = NULL;
	int fd, err;

	*tmp_out = NULL;
	if (asprintf(&tmp, "%s.tmp-XXXXXX", o->file) < 0)
		return VEP_ERR_NOMEM;
	/* mkstemp makes it 0600 whatever the umask; fchmod says so anyway. */
	if ((fd = mkstemp(tmp)) < 0) {
		fprintf(stderr, "vep-keytool backup: cannot create %s: %s\n", tmp,
		    strerror(errno));
		free(tmp);
		return VEP_ERR_IO;
	}
	err = fchmod(fd, 0600) == 0 ? VEP_OK : VEP_ERR_IO;
	(void)close(fd);
	if (err == 0 && (err = db_backup(db, tmp)) == 0)
		err = sync_path(tmp, O_RDONLY);
	if (err != 0) {
		(void)unlink(tmp);
		free(tmp);
		return err;
	}
	*tmp_out = tmp;
	return VEP_OK;
}

int
cmd_backup(int argc, char **argv)
{
	struct backup_opts o = { 0 };
	struct db *db = NULL;
	char *db_path = NULL, *tmp = NULL;
	struct stat st;
	int ret, err, version = 0;

	if ((ret = parse_opts(argc, argv, "backup", backup_usage, backup_pg_refusal, &o)) != 0)
		return ret == BACKUP_HELP_DONE ? KT_STATE_EXIT_OK : ret;
	ret = KT_STATE_EXIT_USAGE;
	if (asprintf(&db_path, "%s/%s", o.store.state_dir, DB_FILE_NAME) < 0) {
		db_path = NULL;
		goto out;
	}
	if (!o.force && lstat(o.file, &st) == 0) {
		fprintf(stderr, "vep-keytool backup: %s exists (--force replaces it)\n", o.file);
		goto out;
	}
	if (is_live_file(db_path, o.file)) {
		fprintf(stderr, "vep-keytool backup: %s is the live database\n", o.file);
		goto out;
	}
	if (kt_state_open("backup", &o.store, KT_STATE_READ, &db) != 0)
		goto out;
	if ((err = backup_to_temp(db, &o, &tmp)) != 0) {
		ret = kt_state_fail("backup", err);
		goto out;
	}
	if (o.force ? rename(tmp, o.file) != 0 : link(tmp, o.file) != 0) {
		fprintf(stderr, "vep-keytool backup: cannot write %s: %s%s\n", o.file,
		    strerror(errno), errno == EEXIST ? " (--force replaces it)" : "");
		goto out;
	}
	if ((err = sync_dir_of(o.file)) != 0 ||
	    (err = db_backup_check(o.file, &version)) != 0) {
		ret = kt_state_fail("backup", err);
		goto out;
	}
	printf("backup of %s written to %s (schema version %d, integrity ok)\n", db_path,
	    o.file, version);
	ret = fflush(stdout) == 0 ? KT_STATE_EXIT_OK : KT_STATE_EXIT_USAGE;
out:
	if (tmp != NULL)
		(void)unlink(tmp);   /* after link(2), or a failed rename(2) */
	free(tmp);
	free(db_path);
	db_close(db);
	return ret;
}

int
cmd_restore(int argc, char **argv)
{
	struct backup_opts o = { 0 };
	char *db_path = NULL;
	struct stat st;
	int ret, err, version = 0;

	if ((ret = parse_opts(argc, argv, "restore", restore_usage, restore_pg_refusal,
	    &o)) != 0)
		return ret == BACKUP_HELP_DONE ? KT_STATE_EXIT_OK : ret;
	ret = KT_STATE_EXIT_USAGE;
	if (asprintf(&db_path, "%s/%s", o.store.state_dir, DB_FILE_NAME) < 0) {
		db_path = NULL;
		goto out;
	}
	if ((err = db_backup_check(o.file, &version)) != 0) {
		fprintf(stderr, "vep-keytool restore: %s: %s\n", o.file,
		    err == VEP_ERR_IO ? "no such file or no access" :
		    err == DB_ERR_SCHEMA ? "not an authority database" : srv_strerror(err));
		goto out;
	}
	if (is_live_file(db_path, o.file)) {
		fprintf(stderr, "vep-keytool restore: %s is the live database\n", o.file);
		goto out;
	}
	if (!o.force && lstat(db_path, &st) == 0) {
		fprintf(stderr, "vep-keytool restore: %s exists (--force replaces it)\n",
		    db_path);
		goto out;
	}
	err = db_restore(db_path, o.file);
	if (err == DB_ERR_BUSY) {
		fprintf(stderr, "vep-keytool restore: %s is in use: stop vep-authority "
		    "first (nothing was changed)\n", db_path);
		goto out;
	}
	if (err != 0) {
		fprintf(stderr, "vep-keytool restore: %s: %s\n", db_path,
		    err == DB_ERR_CORRUPT ? "damaged: move it (and its -wal and -shm "
		    "files) away, then restore again" : srv_strerror(err));
		goto out;
	}
	printf("restored %s into %s (schema version %d, integrity ok)\n", o.file, db_path,
	    version);
	ret = fflush(stdout) == 0 ? KT_STATE_EXIT_OK : KT_STATE_EXIT_USAGE;
out:
	free(db_path);
	return ret;
}

int
kt_cmd_backup(const struct kt_cmd *self, int argc, char **argv)
{
	(void)self;
	return cmd_backup(argc, argv);
}

int
kt_cmd_restore(const struct kt_cmd *self, int argc, char **argv)
{
	(void)self;
	return cmd_restore(argc, argv);
}
