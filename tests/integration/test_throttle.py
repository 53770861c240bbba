#!/usr/bin/env python3
"""test_throttle - what an attack on sign-in finds, against the real binary
and a real PAM stack (pam_wrapper + pam_matrix, see signin.py):

- parallel bursts larger than the PAM worker count get no more attempts to
  PAM than the limits (per account and address, per address), counted by a
  pam_exec hook that logs every authentication PAM runs;
- guesses from many addresses exhaust the account-wide limit but do not
  lock the owner out of the address they signed in from; IPv6 clients
  count per /64; pam_user_case = insensitive counts Alice and alice as one;
- a failed sign-in does not end the session the request came with (a
  successful one does);
- a name refused before PAM (root) waits as long as an unknown user whose
  PAM stack asks for a fail delay (pam_faildelay).

Client addresses other than 127.0.0.1 come through X-Forwarded-For from a
trusted proxy (127.0.0.1), the way they do behind nginx.
"""
import os
import sqlite3
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("throttle")
FAIL_BODY = {"error": "wrong address or password"}


def login_from(auth, addr, email, pw):
    """One sign-in as if from addr (via the trusted proxy); returns the
    response."""
    return signin.Client(auth).login(email, pw, {"X-Forwarded-For": addr})


def statuses(rs):
    return sorted(getattr(r, "status", repr(r)) for r in rs)


def explain(auth, what, ok):
    """When a check about answers fails, the server's warnings and errors
    say why (a 503's cause is only in the log)."""
    if not ok:
        for line in auth.stderr().splitlines():
            if " warn " in line or " error " in line or "PWRAP_ERROR" in line:
                print("  server (%s): %s" % (what, line[:300]))


def check_bursts():
    """30 parallel guesses at one account from one address with 16 PAM
    workers, PAM taking a second for each: at most throttle_pair_max (5)
    reach PAM. Then 40 parallel guesses at 40 accounts from one address: at
    most throttle_addr_max."""
    w = signin.World(extra_config="pam_workers = 16\nthrottle_addr_max = 12\n"
                     "trusted_proxies = 127.0.0.1\n")
    auth = w.start()
    try:
        rs = vephelp.at_once([lambda: login_from(auth, "198.51.100.1", "slowpoke@example.test",
                                                 "wrong") for _ in range(30)])
        got = statuses(rs)
        pam = len(w.attempts("slowpoke"))
        C.check("burst on one account: at most 5 attempts reach PAM", pam <= 5,
                "%d reached PAM" % pam)
        C.check("burst on one account: 5 attempts were made", pam == 5, "%d" % pam)
        C.eq("burst on one account: the others get 429 (or 503 if PAM was busy)",
             got.count(429) + got.count(503), 30 - got.count(401))
        C.eq("burst on one account: the ones PAM saw get 401", got.count(401), pam)
        # The right password in a burst of wrong ones from a fresh address
        # gets no more guesses through.
        jobs = [lambda: login_from(auth, "198.51.100.2", "slowpoke@example.test", "wrong")
                for _ in range(19)]
        jobs.insert(10, lambda: login_from(auth, "198.51.100.2", "slowpoke@example.test",
                                           "slowpoke-pw"))
        vephelp.at_once(jobs)
        C.check("burst with the right password inside: at most 5 more reach PAM",
                len(w.attempts("slowpoke")) - pam <= 5,
                "%d" % (len(w.attempts("slowpoke")) - pam))
        before = len(w.attempts())
        rs = vephelp.at_once([(lambda i=i: login_from(auth, "198.51.100.3",
                                                      "slow%d@example.test" % i, "wrong"))
                              for i in range(40)])
        pam = len(w.attempts()) - before
        C.check("burst over 40 accounts: at most throttle_addr_max (12) reach PAM",
                pam <= 12, "%d reached PAM" % pam)
        got = statuses(rs)
        C.eq("burst over 40 accounts: the ones PAM saw get 401", got.count(401), pam)
        C.eq("burst over 40 accounts: the rest 429 (or 503 if PAM was busy)",
             got.count(429) + got.count(503), 40 - pam)
    finally:
        C.eq("bursts: clean exit", auth.stop(), 0)


def check_no_lockout():
    """The owner signs in from home; 20 guesses from 20 other addresses use
    up the account-wide limit; a 21st address is refused, home is not."""
    w = signin.World(extra_config="trusted_proxies = 127.0.0.1\npam_workers = 32\n")
    auth = w.start()
    try:
        home = "198.51.100.10"
        C.eq("lockout: the owner signs in from home",
             login_from(auth, home, "alice@example.test", "wonderland").status, 200)
        rs = vephelp.at_once([(lambda i=i: login_from(auth, "203.0.113.%d" % i,
                                                      "alice@example.test", "guess%d" % i))
                              for i in range(20)])
        C.eq("lockout: 20 guesses from 20 addresses each get 401", statuses(rs), [401] * 20)
        explain(auth, "lockout", statuses(rs) == [401] * 20)
        r = login_from(auth, "203.0.113.200", "alice@example.test", "guess")
        C.eq("lockout: a 21st address is refused (account-wide limit)", r.status, 429)
        r = login_from(auth, home, "alice@example.test", "wonderland")
        C.eq("lockout: the owner still signs in from home", r.status, 200)
        # One address gets throttle_pair_max guesses at an account.
        for i in range(5):
            login_from(auth, "203.0.113.250", "carol@example.test", "no")
        C.eq("lockout: 6th guess from one address refused",
             login_from(auth, "203.0.113.250", "carol@example.test", "no").status, 429)
        C.eq("lockout: carol from elsewhere is not",
             login_from(auth, "203.0.113.251", "carol@example.test", "c" * 1024).status, 200)
    finally:
        C.eq("lockout: clean exit", auth.stop(), 0)


def check_ipv6_and_case():
    """IPv6 clients count per /64; with pam_user_case = insensitive, names
    that differ in case count as one account."""
    w = signin.World(extra_config="trusted_proxies = 127.0.0.1\nthrottle_addr_max = 3\n"
                     "throttle_pair_max = 2\npam_user_case = insensitive\n")
    auth = w.start()
    try:
        rs = vephelp.at_once([(lambda i=i: login_from(auth, "2001:db8:0:1::%x" % (i + 1),
                                                      "user%d@example.test" % i, "no"))
                              for i in range(3)])
        C.eq("ipv6: three guesses from one /64", statuses(rs), [401] * 3)
        C.eq("ipv6: a fourth address in the same /64 is refused",
             login_from(auth, "2001:db8:0:1:ffff::1", "user9@example.test", "no").status, 429)
        C.eq("ipv6: the next /64 is not",
             login_from(auth, "2001:db8:0:2::1", "alice@example.test", "wonderland").status, 200)
        login_from(auth, "198.51.100.20", "Alice@example.test", "no")
        login_from(auth, "198.51.100.20", "ALICE@example.test", "no")
        C.eq("case: Alice, ALICE and alice count as one account when insensitive",
             login_from(auth, "198.51.100.20", "alice@example.test", "wonderland").status, 429)
    finally:
        C.eq("ipv6/case: clean exit", auth.stop(), 0)
    w = signin.World(extra_config="trusted_proxies = 127.0.0.1\nthrottle_pair_max = 2\n")
    auth = w.start()
    try:
        login_from(auth, "198.51.100.20", "Alice@example.test", "no")
        login_from(auth, "198.51.100.20", "ALICE@example.test", "no")
        C.eq("case: they are different accounts by default",
             login_from(auth, "198.51.100.20", "alice@example.test", "wonderland").status, 200)
    finally:
        C.eq("case default: clean exit", auth.stop(), 0)


def check_failed_signin_keeps_session():
    w = signin.World()
    auth = w.start()
    try:
        cl = signin.Client(auth)
        C.eq("session: signed in", cl.login("alice@example.test", "wonderland").status, 200)
        old = cl.cookie
        r = cl.post("/api/login", {"email": "alice@example.test", "password": "wrong"})
        C.eq("session: a failed sign-in with the cookie is 401", r.status, 401)
        C.eq("session: ... and the session it came with still works",
             cl.get("/api/session").status, 200)
        r = cl.post("/api/login", {"email": "nobody@example.test", "password": "x"})
        C.eq("session: so after an unknown user's failure", cl.get("/api/session").status, 200)
        C.eq("session: a successful sign-in with the cookie",
             cl.login("alice@example.test", "wonderland").status, 200)
        C.check("session: ... gets a new token", cl.cookie != old)
        C.eq("session: ... and ends the old session",
             auth.get("/api/session", {"Cookie": old}).status, 401)
        C.eq("session: the new one works", cl.get("/api/session").status, 200)
    finally:
        C.eq("session: clean exit", auth.stop(), 0)


def check_locked_database():
    """The reservation waits out another writer's lock for up to three busy
    timeouts (about 3 s); longer, and the sign-in is a 503 with
    Retry-After, never an uncounted attempt at PAM."""
    w = signin.World()
    auth = w.start()
    try:
        db = sqlite3.connect(os.path.join(w.state, "authority.db"), timeout=5,
                             check_same_thread=False)
        db.execute("BEGIN EXCLUSIVE")
        release = threading.Timer(1.5, db.rollback)
        release.start()
        t = time.monotonic()
        r = signin.Client(auth).login("alice@example.test", "wonderland")
        release.join()
        C.eq("locked 1.5 s: the sign-in waits and succeeds", r.status, 200)
        C.check("locked 1.5 s: answered once the lock went", 1.4 <= time.monotonic() - t < 4,
                "%.2f s" % (time.monotonic() - t))
        before = len(w.attempts())
        db.execute("BEGIN EXCLUSIVE")
        try:
            t = time.monotonic()
            r = signin.Client(auth).login("alice@example.test", "wonderland")
            dt = time.monotonic() - t
        finally:
            db.rollback()
            db.close()
        C.eq("locked longer: 503", r.status, 503)
        C.check("locked longer: Retry-After", r.header("Retry-After") is not None)
        C.check("locked longer: after about three busy timeouts", 2.5 <= dt < 6, "%.2f s" % dt)
        C.eq("locked longer: PAM never asked", len(w.attempts()), before)
        C.eq("lock gone: signs in again",
             signin.Client(auth).login("alice@example.test", "wonderland").status, 200)
    finally:
        C.eq("locked: clean exit", auth.stop(), 0)


def check_refused_timing():
    """With pam_faildelay asking for 2 s, PAM-checked failures wait
    1 s + jitter + about 2 s; root, refused before PAM, must wait alike."""
    sysmod = signin.libdir() + "/security"
    w = signin.World(auth_first="auth optional %s/pam_faildelay.so delay=2000000\n" % sysmod)
    auth = w.start()
    try:
        cases = [("root", "root@example.test", "rootpw"),
                 ("unknown user", "nobody@example.test", "x"),
                 ("wrong password", "alice@example.test", "x"),
                 ("root again", "root@example.test", "other"),
                 ("unsafe name", "-x@example.test", "x")]
        times = {}

        def one(label, email, pw):
            t = time.monotonic()
            r = signin.Client(auth).login(email, pw)
            times[label] = (r, time.monotonic() - t)
        vephelp.at_once([(lambda c=c: one(*c)) for c in cases])
        for label, (r, dt) in sorted(times.items()):
            C.eq("timing (%s): 401" % label, r.status, 401)
            C.eq("timing (%s): generic body" % label, r.json(), FAIL_BODY)
            # 1 s + jitter [0, 0.5) + libpam's 2 s delay spread to [1, 3).
            C.check("timing (%s): waited for PAM's delay (1.95-5.5 s)" % label,
                    1.95 <= dt <= 5.5, "%.3f s" % dt)
        C.check("timing: root's password never reached PAM", "root" not in w.attempts())
        C.check("timing: the stand-in did", "vep-refused-name" in w.attempts())
    finally:
        C.eq("timing: clean exit", auth.stop(), 0)


def main():
    if signin.libdir() is None:
        vephelp.skip("libpam-wrapper is not installed")
    check_bursts()
    check_no_lockout()
    check_ipv6_and_case()
    check_failed_signin_keeps_session()
    check_locked_database()
    check_refused_timing()
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
