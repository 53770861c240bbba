/*
 * cmd_state.h - the keytool commands on a running authority's store (its
 * state directory, or the PostgreSQL store of --database) besides audit
 * (cmd_audit.h): sessions (cmd_sessions.c), throttle (cmd_throttle.c),
 * backup and restore (cmd_backup.c, the state directory's store only).
 *
 * Each takes argv[0] as its own name and returns an exit code: 0 done,
 * 1 nothing matched (a revocation of an unknown session), 2 usage, I/O or
 * database error, with the reason on stderr.
 */
#ifndef VEP_KT_CMD_STATE_H
#define VEP_KT_CMD_STATE_H

struct kt_cmd;

/* vep-keytool sessions (--state DIR | --database CONNINFO) [--email ADDR] [--json]
 * vep-keytool sessions revoke (--state DIR | --database CONNINFO)
 *     (--id N | --email ADDR | --all) */
int cmd_sessions(int argc, char **argv);

/* vep-keytool throttle (--state DIR | --database CONNINFO) [--json]
 * vep-keytool throttle clear (--state DIR | --database CONNINFO)
 *     (--account NAME | --address ADDR
 *     | --account NAME --address ADDR | --all) */
int cmd_throttle(int argc, char **argv);

/* vep-keytool backup --state DIR [--force] FILE (--database: refused, exit 2,
 * with the pg_dump command to use) */
int cmd_backup(int argc, char **argv);

/* vep-keytool restore --state DIR [--force] FILE (--database: refused, exit
 * 2, with the pg_restore command to use) */
int cmd_restore(int argc, char **argv);

/* The same, in the shape of the keytool's subcommand table (kt.h). */
int kt_cmd_sessions(const struct kt_cmd *self, int argc, char **argv);
int kt_cmd_throttle(const struct kt_cmd *self, int argc, char **argv);
int kt_cmd_backup(const struct kt_cmd *self, int argc, char **argv);
int kt_cmd_restore(const struct kt_cmd *self, int argc, char **argv);

#endif
