"""Secrets never leave the process, and every sign-in decision is logged.

A canary account's password, a wrong canary password, every session token
and CSRF token handed out in this run are looked for in the server's whole
log, in the database file and its WAL, and in every response body that is
not the one meant to carry them: none may appear. Every sign-in decision
(success, wrong password, unknown account, throttled, refused address) has
its own log line with outcome, account (or "unknown") and client address,
and client-supplied text in the log is escaped and cut short.

The access log: one line per request with the client address (after
trusted proxies), Host, method, path (never the query), status, bytes and
duration; on stderr by default, to a syslog socket with access_log =
syslog (facility and severity in the priority, the process id in the tag,
nothing on stderr), nowhere with access_log = off."""

import glob
import os
import re
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("logs")
CANARY = signin.ACCOUNTS["canary"][0]
WRONG = "CANARY-wrong-5c2b-pw"
TS = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z "
# client host method "path" status bytes duration
ACCESS = r'(\S+) (\S+) ([A-Z]+) "([^"]*)" (\d{3}) (\d+) (\d+\.\d)ms$'


def syslog_checks(secrets):
    """A second server whose access log goes to a syslog socket the test
    holds, behind a trusted proxy; then one with the access log off."""
    w = signin.World("trusted_proxies = 127.0.0.1\naccess_log = syslog\n"
                     "syslog_facility = local3\n")
    path = os.path.join(w.tmp, "log.sock")
    conf = open(w.config).read().replace("access_log = syslog\n", "access_log = syslog\n"
                                         "syslog_socket = %s\n" % path)
    with open(w.config, "w") as f:
        f.write(conf)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(5)
    auth = w.start()
    got = []
    try:
        cl = signin.Client(auth)
        C.eq("syslog server: canary signs in", cl.login("canary@example.test", CANARY).status,
             200)
        r = auth.get("/.well-known/browserid?x=private", {"X-Forwarded-For": "203.0.113.9"})
        C.eq("syslog server: support document through the proxy", r.status, 200)
        try:
            while not (any("203.0.113.9" in g for g in got) and
                       any('"/api/login"' in g for g in got)):
                got.append(sock.recv(4096).decode())
        except socket.timeout:
            pass
        err = auth.stderr()
    finally:
        C.eq("syslog server: clean exit", auth.stop(), 0)
        sock.close()
    pat = re.compile(r"^<158>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d vep-authority\[(\d+)\]: "
                     + ACCESS)
    parsed = [pat.match(g) for g in got]
    C.check("syslog: every line is <local3.info>TIMESTAMP vep-authority[PID]: an access line "
            "(%d lines)" % len(got), got and all(parsed), repr(got[:3]))
    fwd = [m for m in parsed if m and m.group(2) == "203.0.113.9"]
    C.check("syslog: the client behind the trusted proxy, its Host, method, path without the "
            "query, status",
            len(fwd) == 1 and fwd[0].group(3) == "%s:%d" % (auth.host, auth.port) and
            fwd[0].group(4, 5, 6) == ("GET", "/.well-known/browserid", "200"),
            repr([m.group(0) for m in fwd]))
    C.check("syslog: the sign-in POST is there too",
            any(m and m.group(4, 5, 6) == ("POST", "/api/login", "200") for m in parsed))
    C.check("syslog: no query string", not any("private" in g for g in got))
    C.check("syslog: no password or token in it",
            not any(s_ in g for g in got for s_ in secrets + [cl.csrf,
                                                              cl.cookie.split("=", 1)[1]]))
    C.check("syslog: no access line on stderr then",
            not any(re.search(ACCESS, ln) for ln in err.splitlines()))

    w2 = signin.World("access_log = off\n")
    auth = w2.start()
    try:
        auth.get("/.well-known/browserid")
        auth.get("/pk")
        err = auth.stderr()
    finally:
        C.eq("access_log = off: clean exit", auth.stop(), 0)
    C.check("access_log = off: no access line",
            not any(re.search(ACCESS, ln) for ln in err.splitlines()), err[-300:])


def main():
    w = signin.World("throttle_account_max = 3\n")
    auth = w.start()
    secrets = [CANARY, WRONG]
    bodies = []    # bodies that must carry no secret
    try:
        cl = signin.Client(auth)
        r = cl.login("canary@example.test", WRONG)
        C.eq("wrong canary password: 401", r.status, 401)
        bodies.append(r.body)
        r = cl.login("canary@example.test", CANARY)
        C.eq("canary signs in", r.status, 200)
        secrets += [cl.cookie.split("=", 1)[1], cl.csrf]
        r = cl.post("/api/cert", {"pubkey": vephelp.user_key(w.tmp)[1], "duration": 600})
        C.eq("canary gets a certificate", r.status, 200)
        # Errors that see the secrets must not echo them.
        r = cl.post("/api/cert", raw=('{"pubkey": "%s"' % CANARY).encode())
        C.eq("malformed JSON with the password in it: 400", r.status, 400)
        bodies.append(r.body)
        r = cl.post("/api/cert", {"pubkey": CANARY})
        C.eq("password as a key: 400", r.status, 400)
        bodies.append(r.body)
        r = cl.post("/api/login", {"email": "canary@example.test", "password": CANARY,
                                   "pasword": CANARY})
        C.eq("unknown field beside the password: 400", r.status, 400)
        bodies.append(r.body)
        r = auth.request("POST", "/api/cert", {"Content-Type": "application/json",
                                              "Cookie": cl.cookie, "X-CSRF-Token": WRONG},
                         b"{}")
        C.eq("wrong CSRF token: 403", r.status, 403)
        bodies.append(r.body)
        r = auth.get("/api/session", {"Cookie": "__Host-vep_session=" + WRONG})
        C.eq("unknown session token: 401", r.status, 401)
        bodies.append(r.body)
        r = cl.post("/api/logout", {})
        C.eq("canary signs out", r.status, 200)
        # Another session, so two tokens are in play.
        cl2 = signin.Client(auth)
        C.eq("canary signs in again", cl2.login("canary@example.test", CANARY).status, 200)
        secrets += [cl2.cookie.split("=", 1)[1], cl2.csrf]

        # Decisions of every kind.
        C.eq("unknown account: 401",
             signin.Client(auth).login("nobody@example.test", WRONG).status, 401)
        for _ in range(3):
            signin.Client(auth).login("alice@example.test", WRONG)
        r = signin.Client(auth).login("alice@example.test", "wonderland")
        C.eq("throttled: 429", r.status, 429)
        C.eq("domain not served: 400",
             signin.Client(auth).login("alice@elsewhere.test", WRONG).status, 400)
        # Hostile text for the log: a control character and a long target.
        auth.get("/x%0a%1b[31mFAKE-LINE" + "y" * 3000)
        err = auth.stderr()
    finally:
        C.eq("server: clean exit", auth.stop(), 0)
    err = auth.stderr()

    files = {"log": err.encode()}
    for p in glob.glob(os.path.join(w.state, "authority.db*")):
        files[os.path.basename(p)] = open(p, "rb").read()
    for i, b in enumerate(bodies):
        files["error body %d" % i] = b
    for name, data in files.items():
        found = [s for s in secrets if s.encode() in data]
        C.check("%s: no password or token in it (%d secrets)" % (name, len(secrets)),
                not found, "found %d" % len(found))

    lines = err.splitlines()
    C.check("every log line starts with a UTC timestamp",
            all(re.match(TS, ln) for ln in lines if not ln.startswith("PWRAP")),
            next((ln for ln in lines if not re.match(TS, ln)), "")[:120])

    def decision(outcome, account):
        pat = re.compile(TS + r"info  sign-in %s: account %s from 127\.0\.0\.1$"
                         % (re.escape(outcome), re.escape(account)))
        return any(pat.match(ln) for ln in lines)

    C.check("log: success, with account and address", decision("ok", "canary@example.test"))
    C.check("log: wrong password", decision("auth-failed", "canary@example.test"))
    C.check("log: unknown account, same outcome as a wrong password",
            decision("auth-failed", "nobody@example.test"))
    C.check("log: throttled", decision("throttled", "alice@example.test"))
    C.check("log: a domain not served, account unknown",
            decision("refused (domain not served)", "unknown"))
    hostile = [ln for ln in lines if "FAKE-LINE" in ln]
    C.eq("log: the hostile target stays on one line", len(hostile), 1)
    C.check("log: no raw control character anywhere",
            not any(ord(ch) < 0x20 and ch not in "\n" for ch in err))
    C.check("log: it is cut short", hostile and len(hostile[0]) < 600 and "..." in hostile[0],
            str(len(hostile[0])) if hostile else "")

    access = [re.match(TS + r"info  " + ACCESS, ln) for ln in lines]
    access = [m for m in access if m]
    host = "%s:%d" % (auth.host, auth.port)
    C.check("access log: one line per request, with client, Host, method, path, status, bytes "
            "and duration (%d lines)" % len(access),
            any(m.group(1, 2, 3, 4, 5) == ("127.0.0.1", host, "POST", "/api/cert", "200")
                and int(m.group(6)) > 500 for m in access) and
            any(m.group(3, 4, 5) == ("GET", "/api/session", "401") for m in access) and
            any(m.group(3, 4, 5) == ("POST", "/api/login", "429") for m in access))
    syslog_checks(secrets)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
