#!/usr/bin/env python3
"""test_ops - an administrator's daily work with vep-keytool against the
real, running authority (real PAM through pam_wrapper, see signin.py):

- --version on vep-authority, vep-keytool and vep-pam-helper prints the
  version meson's project() gives (VEP_VERSION), and the server's start-up
  log line names it;
- `sessions` lists live sessions without any token; `sessions revoke`
  (by id, by address) makes the server refuse the revoked cookie on its
  next request, leaves the others alone, and is in the audit trail;
- `throttle` lists the counts of a locked-out account; `throttle clear`
  lets it sign in again at once (by account; by an IPv6 address, counted
  per /64);
- `backup` during a burst of certificate issuance: mode 0600, refuses to
  overwrite without --force; restored into a fresh state directory it
  passes integrity_check, holds every audit row committed before the
  backup began (and no gap), and a server starts on it and knows its
  sessions; `restore` refuses while a server holds the database;
- `audit prune` deletes old rows while the server runs and records on.
"""
import json
import os
import sqlite3
import stat
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("ops")
SESSION_KEYS = {"id", "email", "created", "last_seen", "expires", "absolute_expiry"}


def kt_json(*args):
    rc, out, err = vephelp.kt(*args)
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    return rc, rows, err


def eventually(fn, limit=30):
    """fn()'s value once it is true, or its last value after limit seconds:
    sign-ins are audited by the writer thread after the answer, not before."""
    deadline = time.monotonic() + limit
    v = fn()
    while not v and time.monotonic() < deadline:
        time.sleep(0.05)
        v = fn()
    return v


def check_versions():
    want = os.environ.get("VEP_VERSION")
    C.require("VEP_VERSION is set by meson", want)
    helper = os.path.join(os.path.dirname(vephelp.binary()), "vep-pam-helper")
    for name, path in (("vep-authority", vephelp.binary()), ("vep-keytool", vephelp.keytool()),
                       ("vep-pam-helper", helper)):
        p = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
        C.eq("%s --version" % name, (p.returncode, p.stdout), (0, "%s %s\n" % (name, want)))
    p = subprocess.run([helper, "--bogus"], capture_output=True, text=True, timeout=60)
    C.eq("vep-pam-helper refuses other arguments", p.returncode, 2)
    return want


def check_sessions(w, auth, version):
    # The log line follows the "listening on" line of standard output.
    line = "vep-authority %s listening on" % version
    deadline = time.monotonic() + 30
    while line not in auth.stderr() and time.monotonic() < deadline:
        time.sleep(0.05)
    C.check("the start-up log line names the version", line in auth.stderr(),
            auth.stderr()[-500:])
    a1, a2, c = signin.Client(auth), signin.Client(auth), signin.Client(auth)
    C.eq("sessions: alice signs in (1)", a1.login("alice@example.test", "wonderland").status, 200)
    C.eq("sessions: alice signs in (2)", a2.login("alice@example.test", "wonderland").status, 200)
    C.eq("sessions: canary signs in", c.login("canary@example.test", "CANARY-7d1e-pw").status,
         200)
    rc, rows, err = kt_json("sessions", "--state", w.state, "--json")
    C.eq("sessions --json: exit 0", rc, 0, err)
    C.eq("sessions --json: three live sessions",
         sorted(r["email"] for r in rows),
         ["alice@example.test", "alice@example.test", "canary@example.test"])
    C.check("sessions --json: id, address and times only",
            all(set(r) == SESSION_KEYS for r in rows), rows)
    rc, text, err = vephelp.kt("sessions", "--state", w.state)
    C.check("sessions: a table with a header", rc == 0 and text.startswith("ID ")
            and text.count("alice@example.test") == 2, text + err)
    tokens = [cl.cookie.split("=", 1)[1] for cl in (a1, a2, c)]
    C.check("sessions: no token, cookie or CSRF token in the output",
            not any(t in text or t[:12] in text for t in tokens)
            and not any(cl.csrf in text for cl in (a1, a2, c)))
    rc, only, _ = kt_json("sessions", "--state", w.state, "--json", "--email",
                          "alice@Example.TEST")
    C.eq("sessions --email (domain in any case): alice's two", len(only), 2)

    first = min(r["id"] for r in rows if r["email"] == "alice@example.test")
    rc, out, err = vephelp.kt("sessions", "revoke", "--state", w.state, "--id", first)
    C.eq("revoke --id: exit 0", rc, 0, err)
    C.eq("revoke --id: the revoked cookie is refused on its next request",
         a1.get("/api/session").status, 401)
    C.eq("revoke --id: nor may it get a certificate",
         a1.post("/api/cert", {"pubkey": {"algorithm": "RS", "n": "1", "e": "3"}}).status, 401)
    C.eq("revoke --id: alice's other session lives", a2.get("/api/session").status, 200)
    rc, _, err = vephelp.kt("sessions", "revoke", "--state", w.state, "--id", first)
    C.eq("revoke --id again: exit 1, nothing matched", rc, 1, err)
    rc, _, err = vephelp.kt("sessions", "revoke", "--state", w.state, "--email",
                            "alice@example.test")
    C.eq("revoke --email: exit 0", rc, 0, err)
    C.eq("revoke --email: refused at once", a2.get("/api/session").status, 401)
    C.eq("revoke --email: another account's session lives", c.get("/api/session").status, 200)
    rc, _, err = vephelp.kt("sessions", "revoke", "--state", w.state)
    C.eq("revoke without --id, --email or --all: usage error", rc, 2, err)
    def alice_audit():
        rows = kt_json("audit", "--state", w.state, "--json", "--email", "alice")[1]
        return rows if sum(r["event"] == "login_success" for r in rows) == 2 else None
    audit = eventually(alice_audit) or []
    revoked = [r for r in audit if r["event"] == "logout" and r["outcome"] == "revoked"]
    C.eq("revocations are in the audit trail (audit --email ACCOUNT)", len(revoked), 2)
    C.check("audit --email ACCOUNT: alice's sign-ins too",
            len([r for r in audit if r["event"] == "login_success"]) == 2, audit)
    rc, newest, _ = kt_json("audit", "--state", w.state, "--json", "--limit", "1")
    C.check("audit --limit 1: the newest row (the last revocation)",
            len(newest) == 1 and newest[0]["outcome"] == "revoked", newest)


def login_from(auth, addr, email, pw):
    return signin.Client(auth).login(email, pw, {"X-Forwarded-For": addr})


def check_throttle(w, auth):
    rs = vephelp.at_once([lambda: login_from(auth, "198.51.100.20", "alice@example.test",
                                             "wrong") for _ in range(5)])
    C.eq("throttle: five wrong passwords", sorted(r.status for r in rs), [401] * 5)
    r = login_from(auth, "198.51.100.20", "alice@example.test", "wonderland")
    C.eq("throttle: now even the right password waits", r.status, 429)
    rc, rows, err = kt_json("throttle", "--state", w.state, "--json")
    C.check("throttle --json: the pair count of alice from the address",
            {"kind": "pair", "account": "alice", "address": "198.51.100.20", "count": 5}
            in [{k: v for k, v in e.items() if k != "until"} for e in rows], rows)
    rc, text, err = vephelp.kt("throttle", "--state", w.state)
    C.check("throttle: a table", rc == 0 and text.startswith("KIND ") and "alice" in text,
            text + err)
    rc, out, err = vephelp.kt("throttle", "clear", "--state", w.state, "--account", "alice")
    C.eq("throttle clear --account: exit 0", rc, 0, err)
    r = login_from(auth, "198.51.100.20", "alice@example.test", "wonderland")
    C.eq("throttle clear: alice signs in again at once", r.status, 200)
    rc, out, err = vephelp.kt("throttle", "clear", "--state", w.state, "--account", "alice")
    C.eq("throttle clear again: exit 1, nothing matched", rc, 1, err)

    # IPv6 counts per /64: clearing another address of the /64 unlocks it.
    rs = vephelp.at_once([lambda: login_from(auth, "2001:db8:1:2::5", "canary@example.test",
                                             "wrong") for _ in range(5)])
    C.eq("throttle v6: five wrong passwords", sorted(r.status for r in rs), [401] * 5)
    C.eq("throttle v6: locked",
         login_from(auth, "2001:db8:1:2::5", "canary@example.test", "CANARY-7d1e-pw").status,
         429)
    rc, out, err = vephelp.kt("throttle", "clear", "--state", w.state, "--address",
                              "2001:db8:1:2::99")
    C.eq("throttle clear --address (same /64): exit 0", rc, 0, err)
    C.eq("throttle v6: signs in again at once",
         login_from(auth, "2001:db8:1:2::5", "canary@example.test", "CANARY-7d1e-pw").status,
         200)
    rc, _, err = vephelp.kt("throttle", "clear", "--state", w.state)
    C.eq("throttle clear without a target: usage error", rc, 2, err)


def audit_rows(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=10)
    try:
        return db.execute("SELECT id, ts_ms, event, email, key_fp, iat_ms, exp_ms,"
                          " client_addr, outcome FROM audit ORDER BY id").fetchall()
    finally:
        db.close()


def check_backup(w, auth):
    _, pub = vephelp.user_key(w.tmp, "DS128")
    cl = signin.Client(auth)
    C.eq("backup: alice signs in", cl.login("alice@example.test", "wonderland").status, 200)
    received = []   # (time the answer arrived, iat, exp)
    lock = threading.Lock()
    stop = threading.Event()

    def burst():
        c = signin.Client(auth)
        c.cookie, c.csrf = cl.cookie, cl.csrf
        while not stop.is_set():
            r = c.post("/api/cert", {"pubkey": pub, "duration": 600})
            if r.status == 200:
                p = vephelp.jws_payload(r.json()["cert"])
                with lock:
                    received.append((time.monotonic(), p["iat"], p["exp"]))
    threads = [threading.Thread(target=burst) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 60
        while len(received) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        bak = os.path.join(w.tmp, "authority.bak")
        began = time.monotonic()
        rc, out, err = vephelp.kt("backup", "--state", w.state, bak)
        n_before = len(received)
        # The burst goes on after the backup too.
        eventually(lambda: len(received) > n_before + 5, 60)
    finally:
        stop.set()
        for t in threads:
            t.join()
    C.eq("backup during the burst: exit 0", rc, 0, err)
    C.check("backup: certificates issued before and after it", n_before >= 20
            and len(received) > n_before, (n_before, len(received)))
    C.eq("backup: mode 0600", stat.S_IMODE(os.stat(bak).st_mode), 0o600)
    C.check("backup: one file, no -wal beside it", not os.path.exists(bak + "-wal"))
    rc, _, err = vephelp.kt("backup", "--state", w.state, bak)
    C.eq("backup: refuses to overwrite", rc, 2, err)
    C.check("backup: says why", "exists" in err, err)
    rc, _, err = vephelp.kt("backup", "--state", w.state, os.path.join(w.state, "authority.db"))
    C.eq("backup: never over the live database", rc, 2, err)

    live_before = os.stat(os.path.join(w.state, "authority.db")).st_size
    rc, _, err = vephelp.kt("restore", "--state", w.state, "--force", bak)
    C.eq("restore: refused while the server holds the database", rc, 2, err)
    C.check("restore: says to stop the server", "stop vep-authority" in err, err)
    C.check("restore: the live database is untouched",
            len(audit_rows(os.path.join(w.state, "authority.db"))) >= len(received))

    fresh = os.path.join(w.tmp, "restored")
    os.mkdir(fresh, 0o700)
    rc, out, err = vephelp.kt("restore", "--state", fresh, bak)
    C.eq("restore into a fresh state directory: exit 0", rc, 0, out + err)
    restored = os.path.join(fresh, "authority.db")
    db = sqlite3.connect(restored, timeout=10)
    C.eq("restored: PRAGMA integrity_check", db.execute("PRAGMA integrity_check").fetchone()[0],
         "ok")
    db.close()
    C.eq("restored: mode 0600", stat.S_IMODE(os.stat(restored).st_mode), 0o600)
    rows = audit_rows(restored)
    live = audit_rows(os.path.join(w.state, "authority.db"))
    C.check("restored: audit rows 1..N without a gap", rows and
            [r[0] for r in rows] == list(range(rows[0][0], rows[-1][0] + 1)), len(rows))
    C.check("restored: each row as the live database has it", rows == live[:len(rows)])
    certs = {(r[5], r[6]) for r in rows if r[2] == 3}
    missing = [t for t in received if t[0] < began and (t[1], t[2]) not in certs]
    C.eq("restored: every certificate received before the backup began has its row",
         missing, [])
    rc, _, err = vephelp.kt("restore", "--state", fresh, bak)
    C.eq("restore: refuses to replace a database without --force", rc, 2, err)

    conf = os.path.join(w.tmp, "restored.conf")
    with open(w.config) as f:
        text = f.read().replace("state_dir = %s\n" % w.state, "state_dir = %s\n" % fresh)
    vephelp.write(conf, text)
    a2 = vephelp.serve(conf, w.tmp, env=w.env())
    try:
        c2 = signin.Client(a2)
        c2.cookie, c2.csrf = cl.cookie, cl.csrf
        C.eq("restored: a server starts on it and knows the session",
             c2.get("/api/session").status, 200)
        C.eq("restored: and issues on",
             c2.post("/api/cert", {"pubkey": pub, "duration": 600}).status, 200)
    finally:
        C.eq("restored: clean exit", a2.stop(), 0)
    return bak


def check_prune(w, auth):
    cl = signin.Client(auth)
    now = int(time.time())
    rc, out, err = vephelp.kt("audit", "prune", "--state", w.state, "--before", now + 5)
    C.check("audit prune while the server runs", rc == 0 and out.startswith("deleted "),
            out + err)
    C.eq("audit prune: nothing older left",
         [r for r in audit_rows(os.path.join(w.state, "authority.db"))
          if r[1] < now * 1000], [])
    C.eq("audit prune: the server records on",
         cl.login("alice@example.test", "wonderland").status, 200)
    rows = eventually(lambda: [r for r in kt_json(
        "audit", "--state", w.state, "--json", "--email", "alice@example.test",
        "--since", now - 1)[1] if r["event"] == "login_success"])
    C.check("audit prune: the new sign-in is recorded", rows, rows)


def main():
    if vephelp.keytool() is None:
        C.check("vep-keytool available", False)
        return C.finish()
    version = check_versions()
    w = signin.World(extra_config="trusted_proxies = 127.0.0.1\n")
    auth = w.start()
    try:
        C.group(check_sessions, w, auth, version)
        C.group(check_throttle, w, auth)
        C.group(check_backup, w, auth)
        C.group(check_prune, w, auth)
    finally:
        C.eq("clean exit", auth.stop(), 0)
    # Stopped: the documented restore over the live database.
    bak = os.path.join(w.tmp, "authority.bak")
    rc, out, err = vephelp.kt("restore", "--state", w.state, "--force", bak)
    C.eq("restore --force over the stopped server's database", rc, 0, out + err)
    auth = w.start()
    C.eq("the server starts on it", auth.get("/healthz").status, 200)
    C.eq("clean exit after the restore", auth.stop(), 0)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
