#!/usr/bin/env python3
"""test_cluster - several machines: two real vep-authority instances on one
real PostgreSQL 15 cluster (tests/pgcluster.py: initdb in a temporary
directory, a Unix socket, no system service), a real HAProxy in front
(tests/haproxy.py, the README's recipe) and a real PAM stack (signin.py):

- a session made on one instance works on the other; sign-out on one ends
  it on both; a sign-in's second step (a pam_oath code) through HAProxy
  comes back to the instance that asked, by HAProxy's cookie; certificates issued by either verify against the keys both
  publish; every audit row names the instance that wrote it;
- the throttle holds for the cluster: failed sign-ins alternating between
  the instances stop at the limit, and so does a race of parallel failed
  sign-ins on both at once;
- PostgreSQL stopped under load: sign-in, sign-out and issuance answer 503
  with Retry-After at once, discovery keeps answering, /healthz says
  degraded; PostgreSQL started again: everything works, no restart;
- an instance killed with SIGKILL under load behind HAProxy: the requests
  carry on on the other instance, and every certificate a client received
  has its audit row.
"""
import http.client
import os
import re
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import haproxy  # noqa: E402
import pgcluster  # noqa: E402
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("cluster")
totp = signin.totp
FAIL_BODY = {"error": "wrong address or password"}


class Endpoint:
    """An address that answers HTTP (HAProxy's front end), as signin.Client
    wants its server."""

    def __init__(self, port, host="127.0.0.1"):
        self.host, self.port = host, port

    def request(self, method, path, headers=None, body=None):
        return vephelp.request(self.host, self.port, method, path, headers, body)

    def get(self, path, headers=None):
        return self.request("GET", path, headers)


class Cluster:
    """One PAM world, one PostgreSQL, instances i1 and i2 (same keys, each
    its own state directory), HAProxy in front."""

    def __init__(self, pg, extra=""):
        self.pg = pg
        # mail.alice also has a second factor (pam_oath); the others,
        # without a line in its users file, pass it by (user_unknown=ignore).
        self.world = signin.World(extra_config="database = %s\ninstance_name = i1\n"
                                  "trusted_proxies = 127.0.0.1\n"
                                  "metrics_listen = 127.0.0.1:0\n%s" % (pg.conninfo, extra),
                                  auth_last="auth [user_unknown=ignore success=ok default=bad] "
                                  "%s usersfile=@USERS@ window=20\n" % signin.OATH_MODULE)
        w = self.world
        w.oath_users(("mail.alice",))
        with open(w.config) as f:
            text = f.read()
        os.mkdir(os.path.join(w.tmp, "state2"), 0o700)
        self.config2 = vephelp.write(
            os.path.join(w.tmp, "vep2.conf"),
            text.replace("instance_name = i1", "instance_name = i2")
                .replace("state_dir = %s" % w.state, "state_dir = %s/state2" % w.tmp))
        self.i1 = w.start()
        self.i2 = vephelp.serve(self.config2, w.tmp, env=w.env())
        self.lb = haproxy.HaProxy([(self.i1.host, self.i1.port), (self.i2.host, self.i2.port)],
                                  w.tmp)
        self.front = Endpoint(self.lb.port)
        self.pub = vephelp.user_key(w.tmp)[1]

    def instances(self):
        return [self.i1, self.i2]

    def close(self):
        self.lb.stop()
        codes = []
        for a in (self.i1, self.i2):
            try:
                codes.append(a.stop())
            except Exception:
                codes.append(None)
        return codes

    def audit(self, where="true"):
        """Audit rows as dicts (id, event, email, key_fp, iat_ms, exp_ms,
        outcome, instance)."""
        out = self.pg.psql("SELECT id, event, email, coalesce(key_fp, ''),"
                           " coalesce(iat_ms, 0), coalesce(exp_ms, 0), outcome,"
                           " coalesce(instance, '') FROM audit WHERE %s ORDER BY id" % where)
        rows = []
        for line in out.splitlines():
            f = line.split("|")
            if len(f) == 8:
                rows.append({"id": int(f[0]), "event": int(f[1]), "email": f[2],
                             "key_fp": f[3], "iat_ms": int(f[4]), "exp_ms": int(f[5]),
                             "outcome": f[6], "instance": f[7]})
        return rows


def database_up(auth):
    """vep_database_up as the instance's metrics listener says it."""
    m = re.search(r"metrics on (http://127\.0\.0\.1:(\d+)/metrics)", auth.stderr())
    if not m:
        return None
    r = vephelp.request("127.0.0.1", int(m.group(2)), "GET", "/metrics")
    v = re.search(r"^vep_database_up (\S+)$", r.body.decode(), re.M)
    return float(v.group(1)) if v else None


def on(auth, cl):
    """A copy of client cl talking to auth (same cookie and CSRF token)."""
    c = signin.Client(auth)
    c.cookie, c.csrf = cl.cookie, cl.csrf
    return c


def cert_status(cl, pub):
    return cl.post("/api/cert", {"pubkey": pub, "duration": 600})


def check_sessions_across(cl):
    w = cl.world
    pub = cl.pub
    a = signin.Client(cl.i1)
    C.require("one session: signed in on i1", a.login("alice@example.test",
                                                        "wonderland").status == 200)
    b = on(cl.i2, a)
    r = b.get("/api/session")
    C.eq("one session: i2 knows i1's session", r.status, 200)
    C.eq("one session: as alice", r.json().get("email") if r.status == 200 else None,
         "alice@example.test")
    rc, out = signin.issue_and_verify(w, cl.i2, b, pub)
    C.eq("one session: i2 certifies it (vep-keytool verify-cert)", rc, 0, out)
    rc, out = signin.issue_and_verify(w, cl.i1, a, pub)
    C.eq("one session: so does i1", rc, 0, out)
    C.eq("one session: both publish the same keys", cl.i1.support(), cl.i2.support())
    C.eq("one session: signed out on i1", a.post("/api/logout", {}).status, 200)
    C.eq("one session: gone on i2 (401)", b.get("/api/session").status, 401)
    C.eq("one session: and a certificate on i2 refused (401)", cert_status(b, pub).status, 401)
    rows = cl.audit("email = 'alice@example.test'")
    C.check("one session: audit rows name their instance",
            {r["instance"] for r in rows} == {"i1", "i2"} and
            [r["instance"] for r in rows if r["event"] == 1] == ["i1"] and
            any(r["instance"] == "i2" and r["event"] == 3 for r in rows) and
            any(r["instance"] == "i1" and r["event"] == 5 for r in rows), rows)
    c = signin.Client(cl.front)
    C.eq("through HAProxy: sign in", c.login("bob@example.test",
                                             signin.ACCOUNTS["bob"][0]).status, 200)
    statuses = [c.get("/api/session").status for _ in range(4)]
    C.eq("through HAProxy: the session answers on both instances in turn", statuses, [200] * 4)
    C.eq("through HAProxy: sign out", c.post("/api/logout", {}).status, 200)
    C.eq("through HAProxy: ended everywhere", [c.get("/api/session").status
                                                for _ in range(2)], [401, 401])


def check_throttle_across(cl):
    # pair limit: 5 per account and address per 15 min, for the cluster.
    statuses = []
    for i in range(7):
        auth = cl.instances()[i % 2]
        statuses.append(signin.Client(auth).login("carol@example.test", "wrong").status)
    C.eq("throttle: alternating instances, 5 failures then 429", statuses,
         [401] * 5 + [429] * 2)
    r = signin.Client(cl.i2).login("carol@example.test", signin.ACCOUNTS["carol"][0])
    C.eq("throttle: even the right password waits (429)", r.status, 429)
    C.check("throttle: with Retry-After", (r.header("Retry-After") or "0").isdigit() and
            int(r.header("Retry-After")) > 0, r.headers)
    # A race: 12 parallel failures for one account, 6 on each instance.
    before = len(cl.world.attempts("canary"))
    jobs = [(lambda a=a: signin.Client(a).login("canary@example.test", "nope"))
            for a in cl.instances() * 6]
    rs = vephelp.at_once(jobs)
    codes = sorted(getattr(r, "status", repr(r)) for r in rs)
    C.eq("throttle race: 12 at once on two instances: 5 reach PAM (401), 7 get 429",
         codes, [401] * 5 + [429] * 7)
    C.eq("throttle race: PAM saw exactly 5", len(cl.world.attempts("canary")) - before, 5)
    rows = cl.pg.psql("SELECT failures FROM throttle WHERE kind = 3 AND name LIKE '%% canary'")
    C.eq("throttle race: the shared counter says 5", rows.split(), ["5"])


def load(stop, target, work, results):
    """Runs work(target) in a loop until stop is set; appends its results."""
    while not stop.is_set():
        try:
            results.append(work(target))
        except Exception as e:  # a connection reset counts as a result too
            results.append(e)


def check_postgres_down(cl):
    w = cl.world
    pub = cl.pub
    a = signin.Client(cl.i1)
    C.require("pg down: signed in first", a.login("alice@example.test", "wonderland")
              .status == 200)
    C.require("pg down: a certificate first", cert_status(a, pub).status == 200)
    stop, results = threading.Event(), []
    since = int(time.time() * 1000) - 1000

    def one(c):
        r = cert_status(c, pub)
        return (r.status, r.json() if r.status == 200 else None)
    threads = [threading.Thread(target=load, args=(stop, on(auth, a), one, results))
               for auth in cl.instances()]
    for t in threads:
        t.start()
    time.sleep(0.5)
    cl.pg.stop("fast")
    try:
        time.sleep(1.5)
        for name, auth in (("i1", cl.i1), ("i2", cl.i2)):
            c = on(auth, a)
            t0 = time.monotonic()
            r = cert_status(c, pub)
            dt = time.monotonic() - t0
            C.eq("pg down (%s): issuance 503" % name, r.status, 503)
            C.check("pg down (%s): at once (< 1 s)" % name, dt < 1.0, "%.3f s" % dt)
            C.check("pg down (%s): with Retry-After" % name,
                    r.header("Retry-After") is not None, r.headers)
            t0 = time.monotonic()
            r = signin.Client(auth).login("bob@example.test", signin.ACCOUNTS["bob"][0])
            dt = time.monotonic() - t0
            C.eq("pg down (%s): sign-in 503" % name, r.status, 503)
            C.check("pg down (%s): sign-in at once (< 1.5 s)" % name, dt < 1.5, "%.3f s" % dt)
            C.check("pg down (%s): sign-in with Retry-After" % name,
                    r.header("Retry-After") is not None, r.headers)
            C.eq("pg down (%s): session 503" % name, c.get("/api/session").status, 503)
            C.eq("pg down (%s): discovery 200" % name,
                 auth.get("/.well-known/browserid").status, 200)
            r = auth.get("/healthz")
            C.eq("pg down (%s): /healthz degraded (200)" % name,
                 (r.status, r.body), (200, b'{"status":"degraded"}\n'))
            C.eq("pg down (%s): vep_database_up 0" % name, database_up(auth), 0)
        r = cl.front.get("/.well-known/browserid")
        C.eq("pg down: discovery through HAProxy (instances kept in)", r.status, 200)
    finally:
        cl.pg.start()
    # Back: every loop of each instance reconnects by itself (its next
    # ping, within a second or two): 20 answers in a row on new
    # connections, which land on any loop.
    t_back = time.monotonic()
    deadline = t_back + 10
    ok = {}
    for name, auth in (("i1", cl.i1), ("i2", cl.i2)):
        streak = 0
        while time.monotonic() < deadline and streak < 20:
            if cert_status(on(auth, a), pub).status == 200:
                streak += 1
            else:
                streak = 0
                time.sleep(0.1)
        if streak == 20:
            ok[name] = time.monotonic() - t_back
    stop.set()
    for t in threads:
        t.join()
    C.eq("pg back: both instances certify again, no restart", sorted(ok), ["i1", "i2"])
    C.check("pg back: within 5 s", ok and max(ok.values()) < 5, ok)
    C.eq("pg back: /healthz ok", [x.get("/healthz").body for x in cl.instances()],
         [b'{"status":"ok"}\n'] * 2)
    C.eq("pg back: vep_database_up 1", [database_up(x) for x in cl.instances()], [1, 1])
    kinds = {r[0] if isinstance(r, tuple) else "error" for r in results}
    C.check("pg down: the load saw only 200 and 503", kinds <= {200, 503}, sorted(map(str, kinds)))
    C.check("pg down: and both", {200, 503} <= kinds, sorted(map(str, kinds)))
    for name, auth in (("i1", cl.i1), ("i2", cl.i2)):
        C.check("pg back (%s): the process is the one started" % name,
                auth.proc.poll() is None)
    ok = [r[1] for r in results if isinstance(r, tuple) and r[0] == 200]
    have = {(r["email"], r["iat_ms"], r["exp_ms"])
            for r in cl.audit("event = 3 AND ts_ms >= %d" % since)}
    C.eq("pg down: every certificate the load received has its audit row",
         [c for c in ok if (c["email"], c["iat"], c["exp"]) not in have], [])


def check_instance_killed(cl):
    w = cl.world
    pub = cl.pub
    a = signin.Client(cl.front)
    C.require("kill -9: signed in through HAProxy",
              a.login("alice@example.test", "wonderland").status == 200)
    stop, results = threading.Event(), []

    def one(c):
        try:
            r = cert_status(c, pub)
        except (OSError, http.client.HTTPException) as e:
            # HAProxy closed the connection without an answer: a request
            # in flight at the kill that it could not retry. When, as for
            # a 502, tells it from one lost later.
            return ("closed", (repr(e), time.monotonic()))
        return (r.status, r.json() if r.status == 200 else (r.body[:120], time.monotonic()))
    threads = [threading.Thread(target=load, args=(stop, on(cl.front, a), one, results))
               for _ in range(4)]
    since = int(time.time() * 1000) - 1000
    for t in threads:
        t.start()
    time.sleep(1.0)
    n_before = len(results)
    t_kill = time.monotonic()
    cl.i1.proc.send_signal(signal.SIGKILL)
    cl.i1.proc.wait()
    time.sleep(2.0)
    stop.set()
    for t in threads:
        t.join()
    got = list(results)
    ok = [r[1] for r in got if isinstance(r, tuple) and r[0] == 200]
    bad = [r for r in got if not (isinstance(r, tuple) and r[0] == 200)]
    C.check("kill -9: certificates before the kill", n_before > 0, n_before)
    C.check("kill -9: and after it, from i2", len(got) - n_before > 5, len(got) - n_before)
    # HAProxy retries a request the dead instance refused or closed without
    # a byte of answer; one whose answer had begun to arrive it cannot (502,
    # or its connection closed without an answer), so at most the requests
    # in flight at the kill fail: one per client thread, within a second of
    # it.
    late = [b for b in bad if not (isinstance(b, tuple) and b[0] in (502, 503, "closed") and
                                   -0.2 <= b[1][1] - t_kill <= 1.0)]
    C.check("kill -9: HAProxy's retries carried the rest (all 200)",
            not late and len(bad) <= len(threads),
            "%d of %d failed: %r" % (len(bad), len(got), [
                (b[0], b[1][0], round(b[1][1] - t_kill, 3)) if isinstance(b, tuple) else b
                for b in bad[:5]]))
    rows = cl.audit("event = 3 AND ts_ms >= %d" % since)
    have = {(r["email"], r["iat_ms"], r["exp_ms"]) for r in rows}
    missing = [c for c in ok if (c["email"], c["iat"], c["exp"]) not in have]
    C.eq("kill -9: every certificate received has its audit row", missing, [])
    C.check("kill -9: audit rows from both instances",
            {r["instance"] for r in rows} == {"i1", "i2"}, {r["instance"] for r in rows})


def check_second_step(cl):
    """A sign-in with a second factor through HAProxy: its cookie brings
    the step back to the instance whose PAM helper asked (README); without
    it, the other instance knows nothing of the question."""
    pw = signin.ACCOUNTS["mail.alice"][0]
    for i in range(4):
        c = signin.Client(cl.front)
        r = c.post("/api/login", {"email": "mail.alice@example.test", "password": pw})
        if not C.eq("second step %d through HAProxy: 202" % i, r.status, 202, r.body):
            return
        lb = [v.split(";", 1)[0] for k, v in r.headers
              if k.lower() == "set-cookie" and v.startswith("vep_lb=")]
        C.eq("... HAProxy's cookie names an instance", len(lb), 1, r.headers)
        r2 = c.post("/api/login/continue", {"continuation": r.json()["continuation"],
                                            "answer": totp(30 * (i + 1))},
                    {"Cookie": lb[0]} if lb else {})
        C.eq("... the step with the cookie reaches it: signed in", r2.status, 200, r2.body)
    # Straight to each instance: the one that did not ask says restart.
    r = signin.Client(cl.i1).post("/api/login", {"email": "mail.alice@example.test",
                                                 "password": pw})
    if C.eq("second step on i1: 202", r.status, 202):
        r2 = signin.Client(cl.i2).post("/api/login/continue",
                                       {"continuation": r.json()["continuation"],
                                        "answer": totp(150)})
        C.eq("... its step sent to i2: 401 restart", (r2.status, r2.json().get("reason")),
             (401, "restart"))


def check_configuration(cl):
    """--check connects; a store out of reach or a bad value is refused by
    name, never showing the connection string."""
    w = cl.world
    rc, out, err = vephelp.run(["--config", w.config, "--check"], env=w.env())
    C.eq("--check with the PostgreSQL store: OK", (rc, out.strip()), (0, "configuration OK"), err)
    with open(w.config) as f:
        text = f.read()
    secret = "host=/nonexistent-vep-socket password=SECRET-7f3a"
    bad = vephelp.write(os.path.join(w.tmp, "bad.conf"),
                        text.replace("database = %s" % cl.pg.conninfo, "database = " + secret))
    rc, out, err = vephelp.run(["--config", bad, "--check"], env=w.env())
    C.eq("--check, store out of reach: exit 2", rc, 2, err)
    C.check("... naming the key and the reason",
            re.search(r"bad\.conf:\d+: key 'database': the PostgreSQL store: database server "
                      r"unreachable", err), err)
    C.check("... never the connection string", "SECRET-7f3a" not in out + err, err)
    rc, out, err = vephelp.run(["--config", bad, "--listen", "127.0.0.1:0"], env=w.env(),
                               timeout=30)
    C.check("start, store out of reach: refused", rc != 0, (rc, err))
    C.check("... never the connection string", "SECRET-7f3a" not in out + err, err)
    for value, why in (("database = host=a\x01b", "control characters"),
                       ("database = " + "h" * 1001, "1 to 1000 bytes"),
                       ("instance_name = idp/1", "A-Z a-z 0-9"),
                       ("instance_name = " + "x" * 65, "1 to 64 characters")):
        f = vephelp.write(os.path.join(w.tmp, "v.conf"),
                          value + "\n" + re.sub(r"(?m)^(database|instance_name) = .*\n", "",
                                                text))
        rc, out, err = vephelp.run(["--config", f, "--check"], env=w.env())
        C.check("refused: %s (%s)" % (value[:40].replace("\x01", "\\x01"), why),
                rc == 2 and why in err, (rc, err))


def main():
    if signin.libdir() is None:
        vephelp.skip("libpam-wrapper is not installed")
    with pgcluster.PgCluster() as pg:
        cl = Cluster(pg)
        try:
            C.group(check_configuration, cl)
            C.group(check_sessions_across, cl)
            C.group(check_second_step, cl)
            C.group(check_throttle_across, cl)
            C.group(check_postgres_down, cl)
            C.group(check_instance_killed, cl)
        finally:
            codes = cl.close()
            C.eq("clean exit of the instance still running", codes[1], 0)
            if C.failed:
                print(cl.lb.log()[-3000:])
                for a in cl.instances():
                    print("\n".join(a.stderr().splitlines()[-15:]))
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
