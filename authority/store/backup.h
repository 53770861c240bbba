/*
 * store/backup.h - copying the database while the authority runs, and
 * putting a copy back, through SQLite's online backup API.
 *
 * Copying the file with cp while the server writes loses whatever sits in
 * the write-ahead log and can tear pages; the backup API instead copies the
 * pages of one read transaction, so the copy is the database exactly as of
 * one commit, while the server keeps reading and writing (in WAL mode a
 * reader never blocks a writer).
 *
 * A backup file is a plain single-file database (rollback journal, no
 * -wal or -shm beside it), mode 0600 as the caller created it. A restore
 * writes it into the live file under an exclusive lock that no server may
 * hold meanwhile, all or nothing.
 */
#ifndef AUTHORITY_STORE_BACKUP_H
#define AUTHORITY_STORE_BACKUP_H

#include "store/db.h"

/* Copies the database of src (any connection, read-only included) into the
 * file at dest_path, which must exist and be empty (the caller creates it,
 * mode 0600, O_EXCL), as of one commit, then checks the copy with PRAGMA
 * integrity_check. Errors: VEP_ERR_ARG, VEP_ERR_IO (dest not writable, or
 * not empty), VEP_ERR_NOMEM, DB_ERR_FULL (disk full), DB_ERR_BUSY,
 * DB_ERR_CORRUPT (the copy failed its check); VEP_ERR_ARG for a PostgreSQL
 * store, which pg_dump backs up. On error dest_path may hold
 * a partial file: the caller removes it. */
int db_backup(struct db *src, const char *dest_path);

/* Checks the backup file at backup_path without changing it: a database
 * that passes PRAGMA integrity_check, at a schema version this binary
 * knows (the server migrates an older one when it next opens it). *version
 * (may be NULL) gets its version. Errors: VEP_ERR_IO (missing, unreadable),
 * DB_ERR_CORRUPT, DB_ERR_NEWER, DB_ERR_SCHEMA (version 0: not ours). */
int db_backup_check(const char *backup_path, int *version);

/* Replaces the database at db_path (created, mode 0600, when missing) with
 * the contents of the backup file at backup_path (checked first as by
 * db_backup_check). Holds an exclusive lock on db_path throughout: when any
 * other connection has it open (a running server), nothing is changed and
 * DB_ERR_BUSY is returned at once. The copy is one transaction: a crash
 * leaves the old database or the new one. Errors: those of
 * db_backup_check, DB_ERR_BUSY, DB_ERR_FULL, VEP_ERR_IO, DB_ERR_CORRUPT
 * (db_path is damaged and cannot be locked: move it away first). */
int db_restore(const char *db_path, const char *backup_path);

#endif
