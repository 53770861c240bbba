"""The audit trail is complete: what an administrator must be able to
answer from it after the fact.

Against a running server with an alias table, the rows in the database
(read directly: the trail is the database's, whatever prints it) show:
each certificate with the fingerprint of the domain key that signed it (as
vep-keytool pubkey --fingerprint prints it), also after a rotation; each
refused certificate request (cert_refused) with its reason and, when the
key was parsed, its fingerprint; each throttled sign-in attempt; the PAM
account a sign-in used when an alias maps the address; attempts for a
domain not served, as such, with the address typed (its domain in lower case); and a flood of those
is recorded at most 20 a second per event loop (the rest are counted in the
log), so it cannot turn into a write per request."""

import json
import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("audit")
EVENTS = {1: "login_success", 2: "login_failure", 3: "cert_issued", 4: "cert_refused"}


def rows(w, since_id=0):
    """The audit rows after since_id, as dicts, once the deferred writes
    have landed (waits until two reads a moment apart agree)."""
    prev = None
    for _ in range(50):
        con = sqlite3.connect("file:%s?mode=ro" % os.path.join(w.state, "authority.db"),
                              uri=True)
        try:
            con.row_factory = sqlite3.Row
            got = [dict(r) for r in con.execute(
                "SELECT * FROM audit WHERE id > ? ORDER BY id", (since_id,))]
        finally:
            con.close()
        if got == prev:
            return got
        prev = got
        time.sleep(0.2)
    return prev


def fingerprint(path):
    return vephelp.kt("pubkey", "--fingerprint", path)[1].strip()


def main():
    w = signin.World("throttle_account_max = 2\nworkers = 1\n")
    aliases = vephelp.write(os.path.join(w.tmp, "aliases"), "postmaster alice\n")
    with open(w.config, "a") as f:
        f.write("account_aliases = %s\n" % aliases)
    auth = w.start()
    current = os.path.join(w.keys, "current.pem")
    fp_first = fingerprint(current)
    try:
        cl = signin.Client(auth)
        C.eq("postmaster signs in (alias of alice)",
             cl.login("postmaster@example.test", "wonderland").status, 200)
        _, pub = vephelp.user_key(w.tmp)
        C.eq("a certificate", cl.post("/api/cert", {"pubkey": pub, "duration": 600}).status,
             200)
        C.eq("refused: a key that is not one",
             cl.post("/api/cert", {"pubkey": {"algorithm": "RS", "n": "15", "e": "3"}}).status,
             400)
        C.eq("refused: another address",
             cl.post("/api/cert", {"pubkey": pub, "email": "bob@example.test"}).status, 403)
        for pw in ("x", "y"):
            signin.Client(auth).login("bob@example.test", pw)
        C.eq("bob throttled", signin.Client(auth).login("bob@example.test", "z").status, 429)
        C.eq("a domain not served",
             signin.Client(auth).login("Eve@Elsewhere.test", "z").status, 400)
        # A rotation: later certificates name the new key.
        C.eq("rotate", vephelp.kt("rotate", "--dir", w.keys)[0], 0)
        before = auth.support()
        auth.reload(before)
        time.sleep(0.5)
        fp_second = fingerprint(current)
        C.eq("a certificate after the rotation",
             cl.post("/api/cert", {"pubkey": pub, "duration": 600}).status, 200)
        got = rows(w)
        issued = [r for r in got if r["event"] == 3]
        C.eq("cert_issued rows name the key that signed each",
             [r["signer_fp"] for r in issued], [fp_first, fp_second])
        C.check("... and the user key and lifetime as before",
                all(r["key_fp"] and r["exp_ms"] > r["iat_ms"] for r in issued))
        refused = [r for r in got if r["event"] == 4]
        C.eq("cert_refused rows, with the reason",
             [(r["email"], r["outcome"]) for r in refused],
             [("postmaster@example.test", "bad_key"),
              ("postmaster@example.test", "other_address")])
        C.check("... neither names a user key (both refused before one was parsed)",
                len(refused) == 2 and refused[0]["key_fp"] is None and
                refused[1]["key_fp"] is None)
        ok = [r for r in got if r["event"] == 1]
        C.eq("the sign-in row names the PAM account the alias used",
             [(r["email"], r["account"]) for r in ok], [("postmaster@example.test", "alice")])
        thr = [r for r in got if r["event"] == 2 and r["outcome"] == "throttled"]
        C.eq("the throttled attempt is recorded", [(r["email"], r["account"]) for r in thr],
             [("bob@example.test", "bob")])
        ns = [r for r in got if r["outcome"] == "domain_not_served"]
        C.eq("the attempt for a domain not served is recorded as such, with the address",
             [(EVENTS[r["event"]], r["email"], r["client_addr"]) for r in ns],
             [("login_failure", "Eve@elsewhere.test", "127.0.0.1")])

        rc, out, _ = vephelp.kt("audit", "--state", w.state, "--json")
        shown = [json.loads(ln) for ln in out.splitlines()]
        C.check("vep-keytool audit --json shows the signer and the account",
                rc == 0 and [x["signer_fingerprint"] for x in shown
                             if x["event"] == "cert_issued"] == [fp_first, fp_second] and
                any(x["account"] == "alice" for x in shown), out[-400:])
        rc, out, _ = vephelp.kt("audit", "--state", w.state)
        C.check("... and so does its text form",
                rc == 0 and ("signed by " + fp_second) in out and " account alice" in out,
                out[-400:])

        # A flood of refusals costs at most 20 rows a second (one loop).
        last = got[-1]["id"] if got else 0
        t0 = time.monotonic()
        n = 0
        while time.monotonic() - t0 < 1.5:
            signin.Client(auth).login("x%d@elsewhere.test" % n, "z")
            n += 1
        flood = [r for r in rows(w, last) if r["outcome"] == "domain_not_served"]
        per_second = {}
        for r in flood:
            per_second[r["ts_ms"] // 1000] = per_second.get(r["ts_ms"] // 1000, 0) + 1
        C.check("a flood of %d refusals: at most 20 recorded in any second (%r)"
                % (n, sorted(per_second.values())), flood and max(per_second.values()) <= 20)
        if n > 3 * 20:
            C.check("... so fewer than sent (%d of %d), and the log says how many were not"
                    % (len(flood), n), len(flood) < n and
                    "refused sign-in attempts not recorded" in auth.stderr())
    finally:
        C.eq("server: clean exit", auth.stop(), 0)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
