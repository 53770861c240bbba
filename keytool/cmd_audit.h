/*
 * cmd_audit.h - `vep-keytool audit`: reading the authority's audit trail.
 *
 * Declares the command's entry points and its time parser (exported so the
 * unit test can pin its grammar down).
 */
#ifndef VEP_KT_CMD_AUDIT_H
#define VEP_KT_CMD_AUDIT_H

#include <stdint.h>

struct kt_cmd;

/* Latest absolute time --since accepts (seconds: 9999-12-31T23:59:59Z). */
#define CMD_AUDIT_TIME_MAX_S 253402300799LL

/* vep-keytool audit --state DIR [--email ADDR] [--since TIME] [--limit N] [--json]
 * argv[0] is "audit". Opens DIR's database read-only (it never migrates or
 * writes it) and prints the matching rows oldest first, to stdout. Returns
 * 0, or 2 for usage, I/O and database errors (reason on stderr). */
int cmd_audit(int argc, char **argv);

/* The same, in the shape of the keytool's subcommand table (kt.h). */
int kt_cmd_audit(const struct kt_cmd *self, int argc, char **argv);

/* Parses a --since TIME relative to now_s into *out_s (seconds since the
 * epoch): ISO-8601 UTC "YYYY-MM-DD", "YYYY-MM-DDTHH:MM[:SS][Z]"; epoch
 * seconds (digits only); or an age "N" followed by s, m, h, d or w ("1h",
 * "7d"), meaning now_s minus that. Returns 0 or VEP_ERR_INVALID. */
int cmd_audit_parse_time(const char *s, int64_t now_s, int64_t *out_s);

#endif
