#!/usr/bin/env python3
"""test_state - vep-keytool's commands on a state directory (sessions,
throttle, backup, restore, audit prune) as an administrator meets them,
on a real database built from the project's own migrations (schema/*.sql,
as the server applies them), with no server running: tables and JSON
output, no token ever shown, control characters neutralised, IPv6
addresses cleared per /64, the backup's mode and overwrite rules, restore's
refusals (a database held open, a file that is no backup, an existing
database without --force), usage errors, help, and --version. The running
server's side is tests/integration/test_ops.py.
"""
import glob
import json
import os
import sqlite3
import stat
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402

C = vephelp.Checker("keytool_state")
SCHEMA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "schema")


def make_state(k, name="state"):
    """A state directory whose database is at this build's schema version,
    made by applying schema/*.sql in order as the server does."""
    d = k.path(name)
    os.mkdir(d, 0o700)
    db = sqlite3.connect(os.path.join(d, "authority.db"), isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    files = sorted(glob.glob(os.path.join(SCHEMA, "[0-9][0-9][0-9][0-9]_*.sql")))
    for f in files:
        with open(f) as fh:
            db.executescript("BEGIN;" + fh.read() + "COMMIT;")
    db.execute("PRAGMA user_version = %d" % len(files))
    db.close()
    return d


def sql(d, statement, args=()):
    db = sqlite3.connect(os.path.join(d, "authority.db"), isolation_level=None, timeout=10)
    try:
        return db.execute(statement, args).fetchall()
    finally:
        db.close()


def add_session(d, email, token_hash, created, expires):
    sql(d, "INSERT INTO sessions (token_hash, email, created, last_seen, idle_s, absolute_at,"
        " expires_at) VALUES (?, ?, ?, ?, 3600, ?, ?)",
        (token_hash, email, created, created, created + 86400, expires))


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def sessions(k):
    d = make_state(k)
    now = int(time.time())
    rc, out, err = k.kt("sessions", "--state", d)
    C.eq("sessions of an empty database: exit 0, says so", (rc, out, err.strip()),
         (0, "", "no live sessions"))
    secret = bytes(range(32))
    add_session(d, "alice@example.com", secret, now - 100, now + 3500)
    add_session(d, "evil\x1b[2J@example.com", bytes(32), now - 50, now + 3550)
    add_session(d, "gone@example.com", b"\x01" * 32, now - 9000, now - 10)
    out = k.ok("sessions", "--state", d)
    C.check("sessions: a header, then the live sessions", out.startswith("ID ")
            and "alice@example.com" in out and "gone@" not in out, out)
    C.check("sessions: no escape character reaches the terminal",
            "\x1b" not in out and "evil?[2J@example.com" in out, repr(out))
    C.check("sessions: nothing of the token hash", secret.hex()[:8] not in out)
    rows = json_lines(k.ok("sessions", "--state", d, "--json"))
    C.eq("sessions --json: two live sessions", len(rows), 2)
    C.eq("sessions --json: its fields", sorted(rows[0]),
         ["absolute_expiry", "created", "email", "expires", "id", "last_seen"])
    alice = [r for r in rows if r["email"] == "alice@example.com"][0]
    C.eq("sessions --json: times in seconds", alice["created"], now - 100)
    out = k.ok("sessions", "revoke", "--state", d, "--id", alice["id"])
    C.check("revoke --id: says which", "revoked session %d of alice@example.com" % alice["id"]
            in out, out)
    C.eq("revoke --id: the row is gone",
         sql(d, "SELECT count(*) FROM sessions WHERE email = 'alice@example.com'"), [(0,)])
    C.eq("revoke: recorded in the audit trail",
         sql(d, "SELECT event, email, client_addr, outcome FROM audit"),
         [(5, "alice@example.com", "vep-keytool", "revoked")])
    C.eq("revoke of an expired session: exit 1 (not live)",
         k.kt("sessions", "revoke", "--state", d, "--email", "gone@example.com")[0], 1)
    rc, out, err = k.kt("sessions", "revoke", "--state", d, "--all")
    C.check("revoke --all: names the address without its escape character",
            rc == 0 and "of evil?[2J@example.com" in out and "\x1b" not in out, out + err)
    C.eq("revoke --all: only the expired row is left",
         sql(d, "SELECT email FROM sessions"), [("gone@example.com",)])
    for args in (["--id", "1", "--all"], ["--id", "x"], ["--id", "0"], [],
                 ["--email", "a@b", "--all"]):
        C.eq("revoke %s: usage error" % " ".join(args),
             k.kt("sessions", "revoke", "--state", d, *args)[0], 2)
    C.eq("sessions --all (revoke's option): usage error",
         k.kt("sessions", "--state", d, "--all")[0], 2)
    C.eq("sessions without --state: usage error", k.kt("sessions")[0], 2)
    rc, out, _ = k.kt("sessions", "--help")
    C.check("sessions --help", rc == 0 and "revoke" in out and "no secret" in out, out)
    empty = k.path("empty")
    os.mkdir(empty)
    rc, _, err = k.kt("sessions", "revoke", "--state", empty, "--all")
    C.check("revoke on a directory without a database: exit 2, no file made",
            rc == 2 and not os.path.exists(os.path.join(empty, "authority.db")), err)


def throttle(k):
    d = make_state(k)
    now = int(time.time())
    rows = [(1, "alice", 3), (2, "2001:db8:1:2::/64", 5), (3, "2001:db8:1:2::/64 alice", 5),
            (3, "192.0.2.7 alice", 2), (4, "192.0.2.8 alice", 1), (1, "old", 9)]
    for kind, name, n in rows:
        sql(d, "INSERT INTO throttle (kind, name, window_end, failures) VALUES (?, ?, ?, ?)",
            (kind, name, now + (600 if name != "old" else -5), n))
    out = k.ok("throttle", "--state", d)
    C.check("throttle: a table of the running counts", out.startswith("KIND ")
            and "old" not in out and out.count("alice") == 4, out)
    got = json_lines(k.ok("throttle", "--state", d, "--json"))
    C.check("throttle --json: pair split into account and address",
            {"kind": "pair", "account": "alice", "address": "192.0.2.7", "count": 2,
             "until": now + 600} in got, got)
    C.check("throttle --json: a known address",
            any(e["kind"] == "known" and e["address"] == "192.0.2.8" for e in got), got)
    out = k.ok("throttle", "clear", "--state", d, "--address", "2001:db8:1:2:aaaa::1")
    C.eq("clear --address (another address of the /64)", out, "cleared 2 counts\n")
    C.eq("clear --address again: exit 1",
         k.kt("throttle", "clear", "--state", d, "--address", "2001:db8:1:2::1")[0], 1)
    out = k.ok("throttle", "clear", "--state", d, "--account", "alice")
    C.eq("clear --account: the account's count and its pair", out, "cleared 2 counts\n")
    C.eq("clear: known addresses (and ended rows) stay",
         sorted(r[0] for r in sql(d, "SELECT kind FROM throttle")), [1, 4])
    C.eq("clear --all with --account: usage error",
         k.kt("throttle", "clear", "--state", d, "--all", "--account", "a")[0], 2)
    C.eq("throttle --account (clear's option): usage error",
         k.kt("throttle", "--state", d, "--account", "a")[0], 2)
    rc, out, _ = k.kt("throttle", "--help")
    C.check("throttle --help", rc == 0 and "/64" in out, out)


def backup_restore(k):
    d = make_state(k)
    for i in range(50):
        sql(d, "INSERT INTO audit (ts_ms, event, email, client_addr, outcome)"
            " VALUES (?, 1, 'alice@example.com', '192.0.2.1', 'ok')", (1000 + i,))
    bak = k.path("db.bak")
    old = os.umask(0)
    try:
        out = k.ok("backup", "--state", d, bak)
    finally:
        os.umask(old)
    C.check("backup: says where and that it checked", "integrity ok" in out, out)
    C.eq("backup: mode 0600 whatever the umask", stat.S_IMODE(os.stat(bak).st_mode), 0o600)
    C.eq("backup: no temporary file left",
         sorted(f for f in os.listdir(k.tmp) if f.startswith("db.bak")), ["db.bak"])
    rc, _, err = k.kt("backup", "--state", d, bak)
    C.check("backup over an existing file: exit 2, says --force", rc == 2 and "--force" in err,
            err)
    sql(d, "INSERT INTO audit (ts_ms, event, email, client_addr, outcome)"
        " VALUES (9999, 2, 'x', 'y', 'z')")
    k.ok("backup", "--state", d, "--force", bak)
    C.eq("backup --force: replaced by a new copy",
         sqlite3.connect(bak).execute("SELECT count(*) FROM audit").fetchone()[0], 51)
    C.eq("backup of a missing state directory: exit 2",
         k.kt("backup", "--state", k.path("none"), k.path("x.bak"))[0], 2)
    C.check("backup that failed left no file", not os.path.exists(k.path("x.bak")))
    C.eq("backup without FILE: usage error", k.kt("backup", "--state", d)[0], 2)

    fresh = k.path("fresh")
    os.mkdir(fresh, 0o700)
    out = k.ok("restore", "--state", fresh, bak)
    with open(os.path.join(fresh, "authority.db"), "rb") as f:
        C.eq("restore: the database in WAL mode, as the server keeps it", f.read(20)[18], 2)
    rc, out, err = k.kt("audit", "--state", fresh, "--limit", "2")
    C.check("restore then audit --state (the README's check of a backup): the newest rows",
            rc == 0 and out.count("\n") == 2, (rc, out, err))
    C.eq("restore: every row", sql(fresh, "SELECT count(*) FROM audit"), [(51,)])
    C.eq("restore: mode 0600",
         stat.S_IMODE(os.stat(os.path.join(fresh, "authority.db")).st_mode), 0o600)
    rc, _, err = k.kt("restore", "--state", fresh, bak)
    C.check("restore over a database without --force: exit 2", rc == 2 and "--force" in err,
            err)
    # A process holding the database open (as a running server does).
    holder = sqlite3.connect(os.path.join(fresh, "authority.db"), isolation_level=None)
    holder.execute("PRAGMA journal_mode = WAL")
    holder.execute("SELECT count(*) FROM audit").fetchone()
    rc, _, err = k.kt("restore", "--state", fresh, "--force", bak)
    C.check("restore while the database is open elsewhere: exit 2, nothing changed",
            rc == 2 and "in use" in err, err)
    holder.close()
    sql(fresh, "DELETE FROM audit WHERE id > 10")
    k.ok("restore", "--state", fresh, "--force", bak)
    C.eq("restore --force once it is free: every row back",
         sql(fresh, "SELECT count(*) FROM audit"), [(51,)])
    junk = k.write("junk.bak", "not a database\n" * 100)
    rc, _, err = k.kt("restore", "--state", fresh, "--force", junk)
    C.eq("restore of a file that is no database: exit 2", rc, 2, err)
    C.eq("restore of a missing file: exit 2",
         k.kt("restore", "--state", fresh, "--force", k.path("none.bak"))[0], 2)
    C.eq("restore: the database after the refusals",
         sql(fresh, "SELECT count(*) FROM audit"), [(51,)])
    rc, out, _ = k.kt("restore", "--help")
    C.check("restore --help", rc == 0 and "stop the" in out, out)
    rc, out, _ = k.kt("audit", "prune", "--state", fresh, "--before", "2000")
    C.eq("audit prune --before (epoch seconds)", (rc, out.split(" older")[0]),
         (0, "deleted 51 audit rows"))


def prune_batches_and_lock_wait(k):
    """audit prune deletes in batches of 1000 until none is left; a writing
    command waits for a write lock another connection holds (up to 10 s)
    instead of failing at once."""
    d = make_state(k)
    db = sqlite3.connect(os.path.join(d, "authority.db"), isolation_level=None,
                         check_same_thread=False)
    db.execute("BEGIN")
    db.executemany("INSERT INTO audit (ts_ms, event, email, client_addr, outcome)"
                   " VALUES (?, 2, 'x', 'y', 'z')", [(1000 + i,) for i in range(2500)])
    db.execute("INSERT INTO audit (ts_ms, event, email, client_addr, outcome)"
               " VALUES (?, 2, 'new', 'y', 'z')", (int(time.time()) * 1000,))
    db.execute("COMMIT")
    # Held for a second by another connection, as the server holds it for
    # one transaction.
    db.execute("BEGIN IMMEDIATE")
    release = threading.Timer(1.0, lambda: db.execute("COMMIT"))
    release.start()
    rc, out, err = k.kt("audit", "prune", "--state", d)
    release.join()
    db.close()
    C.eq("audit prune across batches, after waiting for the lock",
         (rc, out.split(" older")[0]), (0, "deleted 2500 audit rows"), err)
    C.eq("audit prune: the recent row stays", sql(d, "SELECT count(*), min(email) FROM audit"),
         [(1, "new")])


def help_and_version(k):
    rc, out, _ = k.kt("--help")
    for cmd in ("sessions", "throttle", "backup", "restore", "audit prune"):
        C.check("--help names %s" % cmd, rc == 0 and cmd in out, out)
    rc, out, _ = k.kt("--version")
    C.check("--version", rc == 0 and out.startswith("vep-keytool ") and out.count(" ") == 1, out)
    want = os.environ.get("VEP_VERSION")
    if want:
        C.eq("--version is meson's project version", out, "vep-keytool %s\n" % want)


if __name__ == "__main__":
    sys.exit(vephelp.keytool_main(C, [sessions, throttle, backup_restore, prune_batches_and_lock_wait,
                                         help_and_version]))
