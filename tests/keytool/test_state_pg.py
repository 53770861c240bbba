#!/usr/bin/env python3
"""test_state_pg - vep-keytool's commands on the authority's store when it
is PostgreSQL (--database CONNINFO), on a private PostgreSQL 15 cluster
(../pgcluster.py): sessions (list, revoke, and the revocation's audit
row), throttle (list, clear), audit (list, prune), retire asking the
shared audit trail, a postgresql:// URI as well as a keyword/value string;
and the refusals: --state with --database (or neither), an empty
--database, a database not at this build's schema version (left as it
was), a server that cannot be reached (no connection string, no password
in the message), backup and restore (pg_dump and pg_restore named instead,
and the README's two commands, run as written, bringing the rows back).

Each group gets a database of its own, its schema made as the authority's
migration leaves it: schema/pg/NNNN_*.sql in order in one transaction,
then vep_schema at the number of files. A missing PostgreSQL is a failure,
never a skip.
"""
import glob
import json
import os
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import pgcluster  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("keytool_state_pg")
SCHEMA_PG = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "schema", "pg")
PG = []             # the cluster, once started
PASSWORD = "Sekrit-Pw-4711"


class Store:
    """One database of the cluster, at this build's schema version."""

    def __init__(self, name, schema=True):
        self.pg = PG[0]
        self.name = name
        self.pg.psql("CREATE DATABASE %s OWNER %s" % (name, pgcluster.ROLE),
                     user=pgcluster.SUPERUSER, dbname="postgres")
        # A password the trusting cluster ignores: it must never be shown.
        self.conninfo = self.pg.dsn(dbname=name) + " password=" + PASSWORD
        if schema:
            files = sorted(glob.glob(os.path.join(SCHEMA_PG, "[0-9][0-9][0-9][0-9]_*.sql")))
            text = "".join(open(f).read() + "\n" for f in files)
            self.sql("BEGIN;\n%s\nCREATE TABLE vep_schema (version INTEGER NOT NULL);\n"
                     "INSERT INTO vep_schema VALUES (%d);\nCOMMIT;\n" % (text, len(files)))

    def sql(self, statements):
        return self.pg.psql(statements, dbname=self.name)

    def rows(self, query):
        return [tuple(line.split("|")) for line in self.sql(query).splitlines() if line]

    def uri(self):
        """The same database as a postgresql:// URI (the socket directory
        percent-encoded as the host)."""
        return "postgresql://%s:%d/%s?user=%s" % (
            urllib.parse.quote(self.pg.socket_dir, safe=""), self.pg.port, self.name,
            pgcluster.ROLE)


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def secret_free(what, err, conninfo):
    C.check("%s: the message names no connection string, no password" % what,
            conninfo not in err and PASSWORD not in err and "host=" not in err, err)


def sessions(k):
    s = Store("sessions")
    now = int(time.time())
    rc, out, err = k.kt("sessions", "--database", s.conninfo)
    C.eq("sessions of an empty store: exit 0, says so", (rc, out, err.strip()),
         (0, "", "no live sessions"))
    for i, (email, created, expires) in enumerate([
            ("alice@example.com", now - 100, now + 3500),
            ("bob@example.com", now - 50, now + 3550),
            ("gone@example.com", now - 9000, now - 10)]):
        s.sql("INSERT INTO sessions (token_hash, email, created, last_seen, idle_s, absolute_at,"
              " expires_at) VALUES ('\\x%s', '%s', %d, %d, 3600, %d, %d)"
              % (("%02x" % (i + 1)) * 32, email, created, created, created + 86400, expires))
    out = k.ok("sessions", "--database", s.conninfo)
    C.check("sessions --database: a header, then the live sessions",
            out.startswith("ID ") and "alice@example.com" in out and "bob@example.com" in out
            and "gone@" not in out, out)
    rows = json_lines(k.ok("sessions", "--database", s.uri(), "--json"))
    C.eq("sessions --database URI --json: the two live sessions",
         sorted(r["email"] for r in rows), ["alice@example.com", "bob@example.com"])
    alice = [r for r in rows if r["email"] == "alice@example.com"][0]
    C.eq("sessions --json: times as stored", alice["created"], now - 100)
    out = k.ok("sessions", "revoke", "--database", s.conninfo, "--id", alice["id"])
    C.check("revoke --id: says which",
            "revoked session %d of alice@example.com" % alice["id"] in out, out)
    C.eq("revoke --id: the row is gone from PostgreSQL",
         s.rows("SELECT count(*) FROM sessions WHERE email = 'alice@example.com'"), [("0",)])
    C.eq("revoke: its audit row, in PostgreSQL",
         s.rows("SELECT event, email, client_addr, outcome FROM audit"),
         [("5", "alice@example.com", "vep-keytool", "revoked")])
    C.eq("revoke of an expired session: exit 1 (not live)",
         k.kt("sessions", "revoke", "--database", s.conninfo, "--email", "gone@example.com")[0],
         1)
    out = k.ok("sessions", "revoke", "--database", s.conninfo, "--all")
    C.check("revoke --all", "of bob@example.com" in out, out)
    C.eq("revoke --all: only the expired row is left",
         s.rows("SELECT email FROM sessions"), [("gone@example.com",)])


def throttle(k):
    s = Store("throttle")
    now = int(time.time())
    for kind, name, n in [(1, "alice", 3), (2, "2001:db8:1:2::/64", 5),
                          (3, "2001:db8:1:2::/64 alice", 5), (3, "192.0.2.7 alice", 2),
                          (4, "192.0.2.8 alice", 1), (1, "old", 9)]:
        s.sql("INSERT INTO throttle (kind, name, window_end, failures) VALUES (%d, '%s', %d, %d)"
              % (kind, name, now + (600 if name != "old" else -5), n))
    out = k.ok("throttle", "--database", s.conninfo)
    C.check("throttle --database: a table of the running counts",
            out.startswith("KIND ") and "old" not in out and out.count("alice") == 4, out)
    got = json_lines(k.ok("throttle", "--database", s.conninfo, "--json"))
    C.check("throttle --json: a pair split into account and address",
            {"kind": "pair", "account": "alice", "address": "192.0.2.7", "count": 2,
             "until": now + 600} in got, got)
    out = k.ok("throttle", "clear", "--database", s.conninfo, "--address",
               "2001:db8:1:2:aaaa::1")
    C.eq("clear --address (another address of the /64)", out, "cleared 2 counts\n")
    C.eq("clear --address again: exit 1",
         k.kt("throttle", "clear", "--database", s.conninfo, "--address", "2001:db8:1:2::1")[0],
         1)
    out = k.ok("throttle", "clear", "--database", s.conninfo, "--account", "alice")
    C.eq("clear --account: the account's count and its pair", out, "cleared 2 counts\n")
    C.eq("clear: known addresses (and ended rows) stay in PostgreSQL",
         sorted(r[0] for r in s.rows("SELECT kind FROM throttle")), ["1", "4"])


def audit(k):
    s = Store("audit")
    now_ms = int(time.time() * 1000)
    for i in range(5):
        s.sql("INSERT INTO audit (ts_ms, event, email, client_addr, outcome) VALUES "
              "(%d, 1, 'alice@example.com', '192.0.2.1', 'ok')" % (1000 + i))
    s.sql("INSERT INTO audit (ts_ms, event, email, client_addr, outcome, account) VALUES "
          "(%d, 2, 'bob@example.com', '192.0.2.2', 'denied', 'bob')" % now_ms)
    out = k.ok("audit", "--database", s.conninfo)
    C.eq("audit --database: every row, oldest first", out.count("\n"), 6, out)
    C.check("... the newest last", out.splitlines()[-1].find("bob@example.com") > 0, out)
    rows = json_lines(k.ok("audit", "--database", s.conninfo, "--email", "bob", "--json"))
    C.eq("audit --email ACCOUNT --json", [(r["email"], r["account"]) for r in rows],
         [("bob@example.com", "bob")])
    out = k.ok("audit", "prune", "--database", s.conninfo, "--before", "2000")
    C.eq("audit prune --before", out.split(" older")[0], "deleted 5 audit rows")
    C.eq("audit prune: the recent row stays in PostgreSQL",
         s.rows("SELECT email FROM audit"), [("bob@example.com",)])


def retire(k):
    """retire --database asks the shared audit trail until when the
    previous key's certificates are valid."""
    s = Store("retire")
    d = k.keydir()
    k.ok("rotate", "--dir", d)
    prev = [ln.split()[2] for ln in k.ok("keys", "--dir", d).splitlines()
            if ln.startswith("previous")][0]
    exp_ms = int(time.time() * 1000) + 3600 * 1000
    s.sql("INSERT INTO audit (ts_ms, event, email, key_fp, iat_ms, exp_ms, client_addr,"
          " outcome, signer_fp) VALUES (%d, 3, 'alice@example.com', NULL, %d, %d, '192.0.2.1',"
          " 'ok', '%s')" % (exp_ms - 3600 * 1000, exp_ms - 3600 * 1000, exp_ms, prev))
    rc, _, err = k.kt("retire", "--dir", d, "--database", s.conninfo)
    C.check("retire --database while a certificate of the previous key is valid: exit 1",
            rc == 1 and "valid until" in err, (rc, err))
    s.sql("UPDATE audit SET exp_ms = 1000")
    rc, out, err = k.kt("retire", "--dir", d, "--database", s.conninfo)
    C.check("retire --database once they all expired: exit 0",
            rc == 0 and out.startswith("retired"), (rc, out, err))
    C.eq("retire with --state and --database: exit 2",
         k.kt("retire", "--dir", d, "--state", k.tmp, "--database", s.conninfo)[0], 2)


def refusals(k):
    s = Store("refusals")
    d = k.path("state")
    os.mkdir(d, 0o700)
    bak = k.path("x.bak")
    # (command words, what follows the options)
    commands = [(["audit"], []), (["audit", "prune"], []), (["sessions"], []),
                (["sessions", "revoke"], ["--all"]), (["throttle"], []),
                (["throttle", "clear"], ["--all"]), (["backup"], [bak]), (["restore"], [bak])]
    for words, rest in commands:
        name = " ".join(words)
        rc, out, err = k.kt(*words, "--state", d, "--database", s.conninfo, *rest)
        C.check("%s --state --database: exit 2, says give exactly one" % name,
                rc == 2 and "exactly one of --state DIR and --database" in err, (rc, err))
        secret_free("%s --state --database" % name, err, s.conninfo)
        rc, _, err = k.kt(*words, *rest)
        C.check("%s with neither: exit 2" % name, rc == 2 and "exactly one" in err, (rc, err))
    rc, _, err = k.kt("sessions", "--database", "")
    C.check("an empty --database: exit 2", rc == 2 and "not empty" in err, (rc, err))

    rc, out, err = k.kt("backup", "--database", s.conninfo, bak)
    C.check("backup --database: exit 2, names pg_dump",
            rc == 2 and 'pg_dump --format=custom --file=vep.dump "CONNINFO"' in err, (rc, err))
    C.check("backup --database: no file", not os.path.exists(bak))
    secret_free("backup --database", err, s.conninfo)
    rc, out, err = k.kt("restore", "--database", s.conninfo, bak)
    C.check("restore --database: exit 2, names pg_restore, stopping the instances",
            rc == 2 and 'pg_restore --clean --if-exists --dbname="CONNINFO" vep.dump' in err
            and "stop every authority" in err, (rc, err))
    secret_free("restore --database", err, s.conninfo)

    # No server at all: at once, exit 2, nothing of the string.
    down = "host=/nonexistent dbname=vep user=vep password=" + PASSWORD
    for cmd in (["sessions"], ["audit"], ["throttle", "clear", "--all"]):
        t0 = time.time()
        rc, out, err = k.kt(*cmd, "--database", down)
        C.check("%s on an unreachable server: exit 2, says so" % " ".join(cmd),
                rc == 2 and "cannot open the PostgreSQL store: database server unreachable"
                in err, (rc, err))
        secret_free("%s on an unreachable server" % " ".join(cmd), err, down)
        C.check("... within 10 s", time.time() - t0 < 10, "%.1f s" % (time.time() - t0))
    keys = k.keydir()
    k.ok("rotate", "--dir", keys)
    rc, _, err = k.kt("retire", "--dir", keys, "--database", down)
    C.check("retire --database on an unreachable server: exit 2, says so",
            rc == 2 and "cannot open the PostgreSQL store" in err, (rc, err))
    secret_free("retire on an unreachable server", err, down)
    C.eq("... the previous key is still there",
         [ln.split()[0] for ln in k.ok("keys", "--dir", keys).splitlines()],
         ["current", "previous"])

    # A database the authority never migrated: refused, left empty.
    empty = Store("empty", schema=False)
    for cmd in (["sessions"], ["sessions", "revoke", "--all"], ["audit", "prune"]):
        rc, _, err = k.kt(*cmd, "--database", empty.conninfo)
        C.check("%s on a database without the schema: exit 2, says start the authority"
                % " ".join(cmd), rc == 2 and "schema version" in err, (rc, err))
        secret_free("%s on a database without the schema" % " ".join(cmd), err,
                    empty.conninfo)
    C.eq("... and nothing was created in it",
         empty.rows("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"), [("0",)])


def pg_tool(k, prog, *args):
    """Runs one of PostgreSQL 15's programs (pg_dump, pg_restore), which
    must succeed, in k's directory, with no PG* variable of ours."""
    env = {key: v for key, v in os.environ.items() if not key.startswith("PG")}
    p = subprocess.run([os.path.join(PG[0].bindir, prog)] + list(args), cwd=k.tmp, env=env,
                       capture_output=True, text=True, timeout=120)
    C.require("%s: exit 0" % prog, p.returncode == 0, p.stderr)


def dump_and_restore(k):
    """The README's pg_dump and pg_restore commands, as written, on a store
    the keytool then reads as before."""
    s = Store("dumped")
    now = int(time.time())
    s.sql("INSERT INTO sessions (token_hash, email, created, last_seen, idle_s, absolute_at,"
          " expires_at) VALUES ('\\x%s', 'alice@example.com', %d, %d, 3600, %d, %d)"
          % ("ab" * 32, now, now, now + 86400, now + 3600))
    s.sql("INSERT INTO audit (ts_ms, event, email, client_addr, outcome) VALUES "
          "(%d, 1, 'alice@example.com', '192.0.2.1', 'ok')" % (now * 1000))
    before = k.ok("audit", "--database", s.conninfo)
    pg_tool(k, "pg_dump", "--format=custom", "--file=vep.dump", s.conninfo)
    k.ok("sessions", "revoke", "--database", s.conninfo, "--all")
    C.eq("after the dump: the session revoked, a second audit row",
         (k.kt("sessions", "--database", s.conninfo)[2].strip(),
          k.ok("audit", "--database", s.conninfo).count("\n")), ("no live sessions", 2))
    pg_tool(k, "pg_restore", "--clean", "--if-exists", "--dbname=" + s.conninfo, "vep.dump")
    C.eq("after pg_restore: the audit trail as dumped", k.ok("audit", "--database", s.conninfo),
         before)
    C.check("after pg_restore: the session back",
            "alice@example.com" in k.ok("sessions", "--database", s.conninfo))


def help_texts(k):
    for cmd in ("audit", "sessions", "throttle"):
        rc, out, _ = k.kt(cmd, "--help")
        C.check("%s --help names --database" % cmd, rc == 0 and "--database CONNINFO" in out,
                out)
    for cmd, tool in (("backup", "pg_dump"), ("restore", "pg_restore")):
        rc, out, _ = k.kt(cmd, "--help")
        C.check("%s --help names %s" % (cmd, tool), rc == 0 and tool in out, out)
    rc, out, _ = k.kt("--help")
    C.check("--help: the store commands take --database",
            rc == 0 and out.count("--database CONNINFO") >= 6, out)
    rc, out, _ = k.kt("sessions", "--help")
    C.check("sessions --help: the password in ~/.pgpass", ".pgpass" in out, out)


def main():
    if vephelp.keytool() is None:
        vephelp.skip("VEP_KEYTOOL is not set to an executable")
    try:
        PG.append(pgcluster.PgCluster().start())
    except Exception as e:      # PgMissing too: a failure, never a skip
        C.check("a private PostgreSQL 15 cluster starts", False, e)
        return C.finish()
    try:
        return vephelp.keytool_main(C, [sessions, throttle, audit, retire, refusals,
                                        dump_and_restore, help_texts])
    finally:
        PG[0].close()


if __name__ == "__main__":
    sys.exit(main())
