#!/usr/bin/env python3
"""Sign-in through the real PAM stack (pam_wrapper + pam_matrix + pam_exec,
nss_wrapper for UIDs): /api/login, /api/session, /api/logout, cookies,
CSRF and Origin checks, throttling that survives a restart, identical
failures, account mapping, PAM deadlines, and the audit trail."""
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("login")
FAIL_BODY = {"error": "wrong address or password"}


def timed_login(cl, email, pw):
    t = time.monotonic()
    r = cl.login(email, pw)
    return r, time.monotonic() - t


def check_success(auth):
    cl = signin.Client(auth)
    r = cl.login("alice@example.test", "wonderland")
    C.eq("login: 200", r.status, 200)
    body = r.json()
    C.eq("login: email", body.get("email"), "alice@example.test")
    C.check("login: csrf token of 43 base64url chars",
            isinstance(body.get("csrf"), str) and len(body["csrf"]) == 43)
    now_ms = time.time() * 1000
    C.check("login: expires is the idle timeout ahead, in ms",
            abs(body.get("expires", 0) - (now_ms + 3600 * 1000)) < 10000, body.get("expires"))
    sc = r.header("Set-Cookie") or ""
    attrs = [a.strip() for a in sc.split(";")]
    C.check("cookie: __Host- name", attrs[0].startswith("__Host-vep_session="), sc)
    for a in ("Secure", "HttpOnly", "SameSite=None", "Path=/"):
        C.check("cookie: %s" % a, a in attrs, sc)
    C.check("cookie: no Domain", not any(a.lower().startswith("domain=") for a in attrs), sc)
    C.eq("login: no-store", r.header("Cache-Control"), "no-store")

    s = cl.get("/api/session")
    C.eq("session: 200 with the cookie", s.status, 200)
    C.eq("session: same email and csrf", (s.json().get("email"), s.json().get("csrf")),
         ("alice@example.test", body["csrf"]))
    C.eq("session: 401 without a cookie", auth.get("/api/session").status, 401)
    C.eq("session: 401 with a forged cookie",
         auth.get("/api/session", {"Cookie": "__Host-vep_session=" + "A" * 43}).status, 401)
    C.eq("session: 401 with a malformed cookie",
         auth.get("/api/session", {"Cookie": "__Host-vep_session=abc"}).status, 401)
    dup = "%s; %s" % (cl.cookie, cl.cookie)
    C.eq("session: 401 with the cookie twice",
         auth.get("/api/session", {"Cookie": dup}).status, 401)

    # A second sign-in gets a fresh token and ends the session it came with.
    old = cl.cookie
    r2 = cl.login("alice@example.test", "wonderland")
    C.check("relogin: new token", r2.status == 200 and cl.cookie != old)
    C.eq("relogin: old session ended",
         auth.get("/api/session", {"Cookie": old}).status, 401)

    # Logout needs the CSRF token; then the session is gone.
    csrf = cl.csrf
    cl.csrf = None
    C.eq("logout: 403 without X-CSRF-Token", cl.post("/api/logout", {}).status, 403)
    cl.csrf = "x" * 43
    C.eq("logout: 403 with a wrong token", cl.post("/api/logout", {}).status, 403)
    cl.csrf = csrf
    lo = cl.post("/api/logout", {})
    C.eq("logout: 200", lo.status, 200)
    C.check("logout: cookie cleared", "Max-Age=0" in (lo.header("Set-Cookie") or ""))
    C.eq("logout: session gone", cl.get("/api/session").status, 401)
    C.eq("logout: again is 401", cl.post("/api/logout", {}).status, 401)


def check_passwords(auth):
    cl = signin.Client(auth)
    C.eq("password: spaces, tab and UTF-8 byte for byte",
         cl.login("bob@example.test", "spaces inside\tand ünïcödé").status, 200)
    C.eq("password: a trailing space is a different password",
         cl.login("bob@example.test", "spaces inside\tand ünïcödé ").status, 401)
    C.eq("password: 1024 bytes", cl.login("carol@example.test", "c" * 1024).status, 200)
    C.eq("password: case matters", cl.login("alice@example.test", "WONDERLAND").status, 401)
    C.eq("domain part case-insensitive", cl.login("alice@EXAMPLE.Test", "wonderland").status,
         200)
    C.eq("email in session is lowercase-domain", cl.get("/api/session").json()["email"],
         "alice@example.test")


def check_failures_alike(auth):
    """Wrong password, unknown user, locked account, low UID and root: one
    status, one body, one timing profile (at least the minimum delay)."""
    cases = [("wrong password", "alice@example.test", "nope"),
             ("unknown user", "nobody@example.test", "nope"),
             ("locked account", "locked@example.test", "locked-pw"),
             ("UID below pam_min_uid", "lowuid@example.test", "lowuid-pw"),
             ("root", "root@example.test", "rootpw"),
             ("empty password", "alice@example.test", "")]
    results = vephelp.at_once([(lambda e=email, p=pw: timed_login(signin.Client(auth), e, p))
                               for _, email, pw in cases])
    for (label, _, _), (r, dt) in zip(cases, results):
        C.eq("failure (%s): 401" % label, r.status, 401)
        C.eq("failure (%s): generic body" % label, r.json(), FAIL_BODY)
        C.check("failure (%s): no cookie" % label, r.header("Set-Cookie") is None)
        C.check("failure (%s): answered after 1.0-1.8 s" % label, 0.95 <= dt <= 1.8,
                "%.3f s" % dt)


def check_requests(auth):
    cl = signin.Client(auth)
    C.eq("login: 415 for a form post",
         cl.post("/api/login", headers={"Content-Type": "application/x-www-form-urlencoded"},
                 raw=b"email=a&password=b").status, 415)
    C.eq("login: 415 for a non-UTF-8 charset",
         cl.post("/api/login", {"email": "a", "password": "b"},
                 headers={"Content-Type": "application/json; charset=latin1"}).status, 415)
    C.eq("login: charset=utf-8 accepted",
         cl.post("/api/login", {"email": "alice@example.test", "password": "wonderland"},
                 headers={"Content-Type": "application/json; charset=UTF-8"}).status, 200)
    r = cl.post("/api/login", raw=b'{"email": "a@example.test", "password": ')
    C.check("login: 400 malformed JSON with a message",
            r.status == 400 and "JSON" in r.json().get("error", ""), r.body)
    C.eq("login: 400 duplicate keys", cl.post("/api/login", raw=(
        b'{"email":"alice@example.test","password":"x","password":"wonderland"}')).status, 400)
    C.eq("login: 400 not an object", cl.post("/api/login", raw=b'["x"]').status, 400)
    C.eq("login: 400 missing password",
         cl.post("/api/login", {"email": "alice@example.test"}).status, 400)
    r = cl.post("/api/login", {"email": "alice@example.test", "password": "wonderland",
                               "remember": True})
    C.check("login: 400 naming an unknown field",
            r.status == 400 and "remember" in r.json().get("error", ""), r.body)
    C.eq("login: 400 password not a string",
         cl.post("/api/login", {"email": "alice@example.test", "password": 5}).status, 400)
    C.eq("login: 400 bad address",
         cl.post("/api/login", {"email": "not-an-address", "password": "x"}).status, 400)
    r = cl.post("/api/login", {"email": "alice@other.test", "password": "x"})
    C.check("login: 400 for a domain not served, saying so",
            r.status == 400 and "domain" in r.json().get("error", ""), r.body)
    C.eq("login: 413 password over 4096 bytes",
         cl.post("/api/login", {"email": "alice@example.test", "password": "x" * 4097}).status,
         413)
    C.eq("login: 413 body over 16 KiB",
         cl.post("/api/login", raw=b'{"email":"' + b"a" * 17000 + b'"}').status, 413)
    C.eq("login: 405 for GET", auth.get("/api/login").status, 405)
    C.eq("login: 403 foreign Origin", cl.post(
        "/api/login", {"email": "alice@example.test", "password": "wonderland"},
        headers={"Origin": "https://evil.example"}).status, 403)
    C.eq("login: 403 Origin null", cl.post(
        "/api/login", {"email": "alice@example.test", "password": "wonderland"},
        headers={"Origin": "null"}).status, 403)
    C.eq("login: own Origin accepted", cl.post(
        "/api/login", {"email": "alice@example.test", "password": "wonderland"},
        headers={"Origin": auth.origin}).status, 200)


def check_expiry(auth, w):
    """A session past its end is refused: time is moved by editing the
    stored end, as the clock would."""
    import sqlite3
    cl = signin.Client(auth)
    cl.login("alice@example.test", "wonderland")
    C.eq("expiry: live session", cl.get("/api/session").status, 200)
    db = sqlite3.connect(os.path.join(w.state, "authority.db"), timeout=5)
    with db:
        db.execute("UPDATE sessions SET expires_at = ?, absolute_at = ? WHERE email = ?",
                   (int(time.time()) - 1, int(time.time()) - 1, "alice@example.test"))
    db.close()
    C.eq("expiry: expired session -> 401", cl.get("/api/session").status, 401)
    C.eq("expiry: no certificate for it", cl.post("/api/cert", {"pubkey": {}}).status, 401)


def check_disconnects(auth):
    """Clients that go away while PAM runs or while their failure delay
    runs: nothing crashes or leaks (the ASan build checks leaks at exit)."""
    body = json.dumps({"email": "alice@example.test", "password": "wrong"}).encode()
    slow = json.dumps({"email": "sleeper@example.test", "password": "sleeper-pw"}).encode()
    # This one is still waiting for PAM (10 s deadline) when the server is
    # stopped: shutdown must drop it cleanly.
    s = auth.connect()
    s.sendall(b"POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(slow) + slow)
    s.close()
    for _ in range(3):
        s = auth.connect()
        s.sendall(b"POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        s.close()
    time.sleep(2)
    C.eq("disconnect: server still answers",
         auth.get("/.well-known/browserid").status, 200)


def check_mapping():
    w = signin.World(domain_extra="account_suffix = .alice-never\n")
    aliases = vephelp.write(os.path.join(w.tmp, "aliases"),
                            "# local  pam-user\ndave dave-pam\npostmaster alice\n")
    w2 = signin.World(domain_extra="account_aliases = %s\n" % aliases)
    a2 = w2.start()
    try:
        cl = signin.Client(a2)
        C.eq("alias: dave signs in as dave-pam", cl.login("dave@example.test",
                                                          "alias-pw").status, 200)
        C.eq("alias: the session is the address, not the PAM user",
             cl.get("/api/session").json()["email"], "dave@example.test")
        C.eq("alias: postmaster -> alice", cl.login("postmaster@example.test",
                                                    "wonderland").status, 200)
        C.eq("alias: others keep the default rule", cl.login("alice@example.test",
                                                             "wonderland").status, 200)
    finally:
        C.eq("alias server: clean exit", a2.stop(), 0)
    w3 = signin.World(domain_extra="account_suffix = .alice\n")
    # "mail" + ".alice" is the PAM user "mail.alice".
    a3 = w3.start()
    try:
        cl = signin.Client(a3)
        C.eq("suffix: mail@ -> mail.alice", cl.login("mail@example.test",
                                                     "suffix-pw").status, 200)
        C.eq("suffix: alice@ -> alice.alice (no such user)",
             cl.login("alice@example.test", "wonderland").status, 401)
    finally:
        C.eq("suffix server: clean exit", a3.stop(), 0)


def check_throttle():
    w = signin.World(extra_config="throttle_account_max = 3\nthrottle_addr_max = 8\n")
    auth = w.start()
    try:
        cl = signin.Client(auth)
        for i in range(3):
            cl.login("alice@example.test", "wrong")
        r = cl.login("alice@example.test", "wonderland")
        C.eq("throttle: 429 after 3 failures, even with the right password", r.status, 429)
        ra = r.header("Retry-After")
        C.check("throttle: Retry-After in seconds", ra is not None and ra.isdigit() and
                0 < int(ra) <= 900, ra)
        C.check("throttle: retry_after in the body", r.json().get("retry_after") == int(ra))
        for i in range(3):
            cl.login("nobody@example.test", "wrong")
        C.eq("throttle: unknown accounts are throttled alike",
             cl.login("nobody@example.test", "wrong").status, 429)
        t = time.monotonic()
        cl.login("alice@example.test", "wonderland")
        C.check("throttle: refused at once, before PAM", time.monotonic() - t < 0.5)
    finally:
        C.eq("throttle: clean exit", auth.stop(), 0)
    auth = w.start()
    try:
        C.eq("throttle: survives a restart",
             signin.Client(auth).login("alice@example.test", "wonderland").status, 429)
        cl = signin.Client(auth)
        # 6 failures so far from this address; two more reach the cap of 8.
        cl.login("bob@example.test", "wrong")
        cl.login("carol@example.test", "wrong")
        C.eq("throttle: per client address across accounts",
             cl.login("bob@example.test", "spaces inside\tand ünïcödé").status, 429)
    finally:
        C.eq("throttle: clean exit after restart", auth.stop(), 0)


def check_throttle_window():
    w = signin.World(extra_config="throttle_account_max = 2\nthrottle_account_window = 6\n")
    auth = w.start()
    try:
        cl = signin.Client(auth)
        cl.login("alice@example.test", "wrong")
        cl.login("alice@example.test", "wrong")
        r = cl.login("alice@example.test", "wonderland")
        C.eq("window: throttled", r.status, 429)
        time.sleep(int(r.header("Retry-After") or "6") + 0.2)
        C.eq("window: allowed again once the window ends",
             cl.login("alice@example.test", "wonderland").status, 200)
        cl.login("alice@example.test", "wrong")
        C.eq("window: a success reset the account's count",
             cl.login("alice@example.test", "wonderland").status, 200)
    finally:
        C.eq("window: clean exit", auth.stop(), 0)


def check_pam_deadline():
    w = signin.World(extra_config="pam_timeout = 1\n")
    auth = w.start()
    try:
        got = {}

        def slow():
            t = time.monotonic()
            got["r"] = signin.Client(auth).login("sleeper@example.test", "sleeper-pw")
            got["dt"] = time.monotonic() - t
        th = threading.Thread(target=slow)
        th.start()
        time.sleep(0.2)
        worst = 0
        for _ in range(10):
            t = time.monotonic()
            ok = auth.get("/.well-known/browserid").status == 200
            worst = max(worst, time.monotonic() - t)
            C.check("deadline: discovery served meanwhile", ok)
        C.check("deadline: discovery fast meanwhile", worst < 0.5, "%.3f s" % worst)
        C.eq("deadline: others sign in meanwhile",
             signin.Client(auth).login("alice@example.test", "wonderland").status, 200)
        th.join()
        C.eq("deadline: hung module -> 503", got["r"].status, 503)
        C.check("deadline: answered near the deadline", got["dt"] < 4, "%.2f s" % got["dt"])
    finally:
        C.eq("deadline: clean exit", auth.stop(), 0)


def check_audit(w):
    if vephelp.keytool() is None:
        C.check("audit: vep-keytool available", False)
        return
    rc, out, err = vephelp.kt("audit", "--state", w.state, "--json", timeout=60)
    C.eq("audit: keytool exit", rc, 0)
    rows = [json.loads(x) for x in out.splitlines() if x.strip()]
    events = {(r.get("event"), r.get("email")) for r in rows}
    C.check("audit: success recorded", ("login_success", "alice@example.test") in events,
            sorted(events)[:10])
    C.check("audit: failure recorded", ("login_failure", "alice@example.test") in events)
    C.check("audit: unknown user's failure recorded",
            ("login_failure", "nobody@example.test") in events)
    C.check("audit: client address recorded",
            all(r.get("client") == "127.0.0.1" for r in rows), rows[:2])
    C.check("audit: logout recorded", ("logout", "alice@example.test") in events)
    C.check("audit: no password in the database",
            b"wonderland" not in open(os.path.join(w.state, "authority.db"), "rb").read())


def main():
    w = signin.World()
    auth = w.start()
    try:
        check_success(auth)
        check_passwords(auth)
        check_failures_alike(auth)
        check_requests(auth)
        check_expiry(auth, w)
        check_disconnects(auth)
        err = auth.stderr()
        C.check("log: no password or token in the log",
                "wonderland" not in err and "__Host-vep_session=" not in err)
    finally:
        C.eq("server: clean exit", auth.stop(), 0)
    check_audit(w)
    check_mapping()
    check_throttle()
    check_throttle_window()
    check_pam_deadline()
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
