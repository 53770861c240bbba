"""Prometheus metrics on their own listener (metrics_listen).

A real scrape, after sign-ins of every outcome, certificates issued and
refused, a failed reload and a killed PAM helper, passes `promtool check
metrics` and says exactly what happened: sign-ins by outcome, certificates
by result, PAM and request latency histograms (their counts agree with what
was sent), sessions alive, the domain key's age, reload failures and
whether the last reload succeeded, the PAM helper's restarts. /metrics is
not on the public listener; the metrics listener serves nothing else; it is
off by default; it may not share the public address."""

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("metrics")
HERE = os.path.dirname(os.path.abspath(__file__))


def promtool():
    local = os.path.join(HERE, "..", "..", "build-tools", "promtool")
    return local if os.access(local, os.X_OK) else shutil.which("promtool")


def metrics_url(auth):
    for _ in range(50):
        m = re.search(r"metrics on (http://\S+/metrics)", auth.stderr())
        if m:
            return m.group(1)
        time.sleep(0.1)
    return None


def scrape(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.headers.get("Content-Type"), r.read().decode()


def value(text, name, labels=""):
    m = re.search(r"^%s%s (\S+)$" % (re.escape(name), re.escape(labels)), text, re.M)
    return float(m.group(1)) if m else None


def status_of(url, method="GET"):
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def main():
    tool = promtool()
    if tool is None:
        C.check("promtool available (tests/integration/setup.sh)", False)
        return C.finish()
    w = signin.World("metrics_listen = 127.0.0.1:0\nthrottle_account_max = 2\n")
    auth = w.start()
    current = os.path.join(w.keys, "current.pem")
    good = open(current, "rb").read()
    try:
        url = metrics_url(auth)
        C.check("the log names the metrics address", url is not None, auth.stderr()[-300:])
        st, ctype, text = scrape(url)
        C.eq("scrape: 200", st, 200)
        C.eq("scrape: Prometheus text format 0.0.4", ctype,
             "text/plain; version=0.0.4; charset=utf-8")

        cl = signin.Client(auth)
        C.eq("alice signs in", cl.login("alice@example.test", "wonderland").status, 200)
        C.eq("bob: wrong password", signin.Client(auth).login("bob@example.test", "x").status,
             401)
        C.eq("bob: wrong password again",
             signin.Client(auth).login("bob@example.test", "y").status, 401)
        C.eq("bob: throttled", signin.Client(auth).login("bob@example.test", "z").status, 429)
        C.eq("a domain not served: 400",
             signin.Client(auth).login("eve@elsewhere.test", "z").status, 400)
        _, pub = vephelp.user_key(w.tmp)
        C.eq("a certificate", cl.post("/api/cert", {"pubkey": pub, "duration": 600}).status, 200)
        C.eq("a refused certificate request", cl.post("/api/cert", {"pubkey": "x"}).status, 400)
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        C.eq("/verify: a verdict (failure)", auth.request(
            "POST", "/verify", form, "assertion=x.y.z~a.b.c&audience=https://rp.example").status,
            200)
        C.eq("/verify: a refused request", auth.request(
            "POST", "/verify", form, "assertion=x").status, 400)

        # A reload that fails.
        fd = os.open(current, os.O_WRONLY | os.O_TRUNC)
        os.write(fd, b"not a key")
        os.close(fd)
        rc, _, err = vephelp.run(["--config", w.config, "--reload", str(auth.proc.pid)],
                                 env=w.env())
        C.eq("a reload that fails: exit 1", rc, 1)

        # A PAM helper that dies is replaced.
        kids, todo = [], [auth.proc.pid]
        while todo:
            more = vephelp.children(todo.pop())
            kids += more
            todo += more
        helpers = [k for k in kids if vephelp.comm(k) == "vep-pam-helper"]
        C.check("a PAM helper runs", helpers, repr([vephelp.comm(k) for k in kids]))
        for h in helpers[:1]:
            os.kill(h, signal.SIGKILL)
        time.sleep(1)
        C.eq("alice signs in again after the helper died (its replacement answers)",
             signin.Client(auth).login("alice@example.test", "wonderland").status, 200)

        st, _, text = scrape(url)
        p = subprocess.run([tool, "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=60)
        C.eq("promtool check metrics: the scrape is valid", (p.returncode, p.stdout + p.stderr),
             (0, ""))
        C.eq("sign-ins ok: 2", value(text, "vep_signins_total", '{outcome="ok"}'), 2)
        C.eq("sign-ins auth_failed: 2",
             value(text, "vep_signins_total", '{outcome="auth_failed"}'), 2)
        C.eq("sign-ins throttled: 1", value(text, "vep_signins_total", '{outcome="throttled"}'), 1)
        C.eq("sign-ins refused (domain not served): 1",
             value(text, "vep_signins_total", '{outcome="refused"}'), 1)
        C.eq("certificates issued: 1",
             value(text, "vep_certificates_total", '{result="issued"}'), 1)
        C.eq("certificates refused: 1",
             value(text, "vep_certificates_total", '{result="refused"}'), 1)
        C.eq("PAM latency: one observation per PAM attempt (4)",
             value(text, "vep_pam_duration_seconds_count"), 4)
        C.check("PAM latency: buckets are cumulative and end at the count",
                value(text, "vep_pam_duration_seconds_bucket", '{le="+Inf"}') == 4 and
                value(text, "vep_pam_duration_seconds_bucket", '{le="0.001"}') <=
                value(text, "vep_pam_duration_seconds_bucket", '{le="10"}') <= 4)
        C.eq("verifications: 0 okay, 1 failure, 1 refused",
             [value(text, "vep_verifications_total", '{result="%s"}' % r)
              for r in ("okay", "failure", "refused")], [0, 1, 1])
        # 6 sign-ins, 2 certificate requests, 2 verifications and the first
        # scrape (this scrape is answered after it is rendered).
        C.eq("request latency: every request before this scrape counted (11)",
             value(text, "vep_request_duration_seconds_count"), 11)
        C.eq("reload failures: 1", value(text, "vep_reload_failures_total"), 1)
        C.eq("last reload succeeded: 0", value(text, "vep_last_reload_success"), 0)
        C.check("PAM helper restarts: at least 1",
                (value(text, "vep_pam_helper_restarts_total") or 0) >= 1)
        C.eq("sessions alive: 2", value(text, "vep_sessions"), 2)
        C.eq("database up: 1", value(text, "vep_database_up"), 1)
        age = value(text, "vep_domain_key_age_seconds", '{domain="example.test"}')
        # The served key's file was written when this test copied it.
        C.check("key age of example.test: since the key file was written (0 to 600 s)",
                age is not None and 0 <= age < 600, repr(age))
        C.check("start time: a few seconds ago",
                abs(time.time() - (value(text, "vep_start_time_seconds") or 0)) < 600)

        host = url.rsplit("/", 1)[0]
        C.eq("metrics listener: other paths 404", status_of(host + "/.well-known/browserid"),
             404)
        C.eq("metrics listener: POST /metrics 405", status_of(url, "POST"), 405)
        C.eq("public listener: no /metrics (404)", auth.get("/metrics").status, 404)
    finally:
        fd = os.open(current, os.O_WRONLY | os.O_TRUNC)
        os.write(fd, good)
        os.close(fd)
        C.eq("server: clean exit", auth.stop(), 0)

    w2 = signin.World("")
    auth = w2.start()
    try:
        C.check("off by default: no metrics listener in the log",
                "metrics on" not in auth.stderr())
    finally:
        C.eq("server without metrics: clean exit", auth.stop(), 0)
    conf = "listen = 127.0.0.1:18099\nmetrics_listen = 127.0.0.1:18099\n"
    w3 = signin.World(conf)
    rc, _, err = vephelp.run(["--config", w3.config, "--check"], env=w3.env())
    C.eq("metrics_listen = listen: --check exit 2", rc, 2)
    C.check("... naming the file, line and key",
            re.search(r"vep\.conf:\d+: key 'metrics_listen': must differ from listen", err), err)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
