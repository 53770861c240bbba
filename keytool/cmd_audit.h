/*
 * cmd_audit.h - `vep-keytool audit`: reading the authority's audit trail,
 * and `audit prune`, deleting the rows past the retention.
 *
 * Declares the command's entry points (the unit test calls cmd_audit).
 */
#ifndef VEP_KT_CMD_AUDIT_H
#define VEP_KT_CMD_AUDIT_H

struct kt_cmd;

/* The retention `audit prune` keeps without --before (seconds: 365 days). */
#define CMD_AUDIT_RETENTION_DEFAULT_S (365LL * 86400)

/* vep-keytool audit (--state DIR | --database CONNINFO) [--email ADDR|ACCOUNT]
 *     [--since TIME] [--limit N] [--json]
 * vep-keytool audit prune (--state DIR | --database CONNINFO) [--before TIME]
 * argv[0] is "audit". Reading opens DIR's database (or the PostgreSQL
 * store) read-only (it never migrates or writes it) and prints the matching rows oldest first (with
 * --limit, the newest N), to stdout. prune deletes the rows older than
 * TIME (default: CMD_AUDIT_RETENTION_DEFAULT_S ago) and prints how many.
 * Returns 0, or 2 for usage, I/O and database errors (reason on stderr). */
int cmd_audit(int argc, char **argv);

/* The same, in the shape of the keytool's subcommand table (kt.h). */
int kt_cmd_audit(const struct kt_cmd *self, int argc, char **argv);

#endif
