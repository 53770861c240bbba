#!/usr/bin/env python3
"""Nothing is lost: a database that fills up (db_max_mib, as a full disk
would) and kill -9 during a burst of issuance. Afterwards PRAGMA
integrity_check is ok and every certificate a client received has its audit
row; a certificate that could not be recorded was never sent."""
import os
import random
import sqlite3
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("durability")
KILLS = 100


def times(cert):
    p = vephelp.jws_payload(cert)
    return (p["iat"], p["exp"])


def dbpath(w):
    return os.path.join(w.state, "authority.db")


def integrity(w):
    db = sqlite3.connect(dbpath(w), timeout=10)
    try:
        return db.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        db.close()


def audited(w):
    db = sqlite3.connect(dbpath(w), timeout=10)
    try:
        rows = db.execute("SELECT iat_ms, exp_ms FROM audit WHERE event = 3").fetchall()
    finally:
        db.close()
    counts = {}
    for r in rows:
        counts[r] = counts.get(r, 0) + 1
    return counts


def all_recorded(received, counts):
    need = {}
    for t in received:
        need[t] = need.get(t, 0) + 1
    return [t for t, n in need.items() if counts.get(t, 0) < n]


def check_full():
    w = signin.World(extra_config="db_max_mib = 1\n")
    _, pub = vephelp.user_key(w.tmp, "DS128")
    a = w.start()
    C.eq("full: first start", a.stop(), 0)
    # Fill the file past 1 MiB, then free a little room inside it.
    db = sqlite3.connect(dbpath(w))
    with db:
        db.executemany("INSERT INTO audit (ts_ms, event, email, client_addr, outcome) "
                       "VALUES (0, 2, ?, 'x', 'junk')", (("j%06d%s" % (i, "x" * 200),)
                                                          for i in range(6000)))
    with db:
        db.execute("DELETE FROM audit WHERE outcome = 'junk' AND id % 40 = 0")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    C.check("full: database over the cap", os.path.getsize(dbpath(w)) > 1024 * 1024)
    a = w.start()
    try:
        cl = signin.Client(a)
        C.eq("full: sign in while there is room", cl.login("alice@example.test",
                                                           "wonderland").status, 200)
        received, statuses = [], []
        for _ in range(2000):
            r = cl.post("/api/cert", {"pubkey": pub, "duration": 600})
            statuses.append(r.status)
            if r.status == 200:
                received.append(times(r.json()["cert"]))
            else:
                C.check("full: a refused certificate is not in the answer",
                        b"eyJ" not in r.body, r.body[:80])
                break
        C.check("full: certificates issued until the database was full",
                len(received) > 0 and statuses[-1] == 503, (len(received), statuses[-1:]))
        C.eq("full: discovery still served", a.get("/.well-known/browserid").status, 200)
        C.eq("full: another 503, not a crash",
             cl.post("/api/cert", {"pubkey": pub, "duration": 600}).status, 503)
    finally:
        C.eq("full: clean exit", a.stop(), 0)
    C.eq("full: integrity_check", integrity(w), "ok")
    C.eq("full: every certificate received has its audit row",
         all_recorded(received, audited(w)), [])
    # The administrator makes room: issuance resumes.
    db = sqlite3.connect(dbpath(w))
    with db:
        db.execute("DELETE FROM audit WHERE outcome = 'junk'")
    db.close()
    a = w.start()
    try:
        cl2 = signin.Client(a)
        cl2.cookie, cl2.csrf = cl.cookie, cl.csrf
        C.eq("full: issuance resumes once there is room",
             cl2.post("/api/cert", {"pubkey": pub, "duration": 600}).status, 200)
    finally:
        C.eq("full: clean exit after making room", a.stop(), 0)


def check_kill9():
    w = signin.World()
    _, pub = vephelp.user_key(w.tmp, "DS128")
    a = w.start()
    cl = signin.Client(a)
    C.eq("kill: sign in", cl.login("alice@example.test", "wonderland").status, 200)
    received = []
    lock = threading.Lock()
    bad = []
    for i in range(KILLS):
        if i > 0:
            a = w.start()
        stop = threading.Event()

        def burst(auth=a):
            c = signin.Client(auth)
            c.cookie, c.csrf = cl.cookie, cl.csrf
            while not stop.is_set():
                try:
                    r = c.post("/api/cert", {"pubkey": pub, "duration": 600})
                except Exception:
                    return  # the server died mid-request: nothing received
                if r.status == 200:
                    with lock:
                        received.append(times(r.json()["cert"]))
                elif r.status != 503:
                    bad.append(r.status)
        threads = [threading.Thread(target=burst) for _ in range(3)]
        for t in threads:
            t.start()
        # (Under a wrapper such as Valgrind the server is TIME_SCALE times slower.)
        time.sleep(random.uniform(0.15, 0.4) * vephelp.TIME_SCALE)
        a.kill()
        stop.set()
        for t in threads:
            t.join()
        a.proc.stdout.close()
        a.err.close()
        res = integrity(w)
        if res != "ok":
            C.eq("kill %d: integrity_check" % i, res, "ok")
    C.check("kill: certificates were issued during the bursts", len(received) > KILLS,
            len(received))
    C.eq("kill: only 200 or 503 answers", bad, [])
    C.eq("kill: integrity_check after %d kill -9" % KILLS, integrity(w), "ok")
    C.eq("kill: every certificate received has its audit row",
         all_recorded(received, audited(w)), [])


def main():
    if vephelp.keytool() is None:
        C.check("vep-keytool available", False)
        return C.finish()
    check_full()
    check_kill9()
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
