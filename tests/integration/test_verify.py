#!/usr/bin/env python3
"""POST /verify, Persona's verifier contract, as relying-party code speaks
it: form-encoded and JSON bodies, the answer's shape for every verdict and
for every malformed request (400, 405, 413, 415 with status "failure"), the
keys it verifies with through a rotation (next, current, previous: yes; a
retired key: no), its per-client rate limit (429, Retry-After, a reload
changes it) and its access log line. Certificates are made with vep-keytool
from the server's own key directory: no sign-in is needed."""
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402

C = vephelp.Checker("verify")
AUD = "https://rp.example"
FORM = "application/x-www-form-urlencoded"
# Persona's limit on a request body, and the server's on any request.
VERIFY_MAX = 10 * 1024
BODY_MAX = 16 * 1024


class World:
    def __init__(self, tmp, extra=""):
        self.tmp = tmp
        self.keys = os.path.join(tmp, "keys")
        self.ok("init", "--dir", self.keys)
        self.user = os.path.join(tmp, "user.pem")
        self.ok("genkey", "--alg", "DS128", "--out", self.user)
        self.n = 0
        self.extra = extra
        self.conf = vephelp.write_config(tmp, self.keys, extra=extra)
        self.auth = vephelp.serve(self.conf, tmp)

    def ok(self, *args):
        rc, out, err = vephelp.kt(*args)
        C.require("vep-keytool %s: exit 0" % args[0], rc == 0, err)
        return out

    def backed(self, email="alice@example.test", keyargs=None, audience=AUD, *extra):
        self.n += 1
        cert = vephelp.write(os.path.join(self.tmp, "c%d" % self.n),
                             self.ok("certify", *(keyargs or ["--dir", self.keys]),
                                     "--email", email, "--pubkey", self.user))
        return self.ok("sign-assertion", "--key", self.user, "--audience", audience,
                       "--cert", cert, *extra).strip()

    def post(self, body, ctype=FORM, method="POST"):
        headers = {"Content-Type": ctype} if ctype else {}
        if isinstance(body, dict):
            body = (json.dumps(body) if ctype == "application/json"
                    else urllib.parse.urlencode(body))
        return self.auth.request(method, "/verify", headers, body)


def persona(r):
    try:
        return r.json()
    except ValueError:
        return {}


def failure(what, r, status, reason_part="", keys=("reason", "status")):
    j = persona(r)
    C.check("%s: %d, status failure%s" % (what, status,
                                          ", saying '%s'" % reason_part if reason_part else ""),
            r.status == status and j.get("status") == "failure" and
            sorted(j) == sorted(keys) and reason_part in j.get("reason", ""),
            repr((r.status, r.body[:200])))


def check_contract(w):
    b = w.backed()
    pl = vephelp.jws_payload(b.split("~")[1])
    for ctype in (FORM, "application/json", FORM + "; charset=UTF-8"):
        r = w.post({"assertion": b, "audience": AUD}, ctype)
        C.eq("%s: 200 okay with Persona's fields" % ctype, (r.status, persona(r)),
             (200, {"status": "okay", "email": "alice@example.test", "audience": AUD,
                    "expires": pl["exp"], "issuer": "example.test"}))
    r = w.post({"assertion": b, "audience": AUD})
    C.eq("okay: JSON, not cached", (r.header("Content-Type"), r.header("Cache-Control")),
         ("application/json", "no-store"))
    # Persona's libraries send extra fields ("experimental_allowUnverified"...).
    r = w.post({"assertion": b + "\r\n", "audience": " " + AUD + "\n"})
    C.eq("line ends and spaces around the fields are dropped", persona(r).get("status"), "okay")
    r = w.post({"assertion": b, "audience": AUD, "experimental_forceIssuer": "x"})
    C.eq("unknown fields are ignored", persona(r).get("status"), "okay")
    # A form encoder writes a space as "+" and a "+" as %2B: "+" decodes to
    # a space, so an audience with "+" in place of a character fails.
    raw = "assertion=%s&audience=%s" % (b, urllib.parse.quote(AUD, safe=""))
    C.eq("form: percent-encoded audience", persona(w.post(raw)).get("status"), "okay")
    failure("form: '+' is a space", w.post("assertion=%s&audience=https://rp+example" % b),
            200, "audience")
    r = w.post({"assertion": b, "audience": "https://other.example"})
    failure("another audience", r, 200, "audience does not match")
    # Verdicts that are "failure" with a 200.
    expired = w.backed("alice@example.test", None, AUD, "--at",
                       str(vephelp.now_ms() - 3 * 3600 * 1000), "--duration", "60")
    failure("an expired assertion", w.post({"assertion": expired, "audience": AUD}), 200,
            "expired")
    head, payload, sig = b.split("~")[1].split(".")
    tampered = b.split("~")[0] + "~" + head + "." + payload + "." + \
        ("A" if sig[0] != "A" else "B") + sig[1:]
    failure("a tampered assertion", w.post({"assertion": tampered, "audience": AUD}), 200,
            "signature")
    cert = b.split("~")[0]
    failure("a chain", w.post({"assertion": cert + "~" + b, "audience": AUD}), 200,
            "certificate")
    failure("not a backed assertion", w.post({"assertion": "x.y.z", "audience": AUD}), 200)
    other = os.path.join(w.tmp, "other-keys")
    w.ok("init", "--dir", other)
    failure("another domain's key", w.post({"assertion": w.backed(
        "alice@example.test", ["--dir", other]), "audience": AUD}), 200, "signature")
    failure("a domain not served here", w.post({"assertion": w.backed(
        "bob@other.test", ["--dir", other]), "audience": AUD}), 200,
        "not a domain of this authority")


def check_malformed(w):
    b = w.backed()
    for what, body in (("no field", {}), ("no audience", {"assertion": b}),
                       ("no assertion", {"audience": AUD}),
                       ("an empty audience", {"assertion": b, "audience": ""}),
                       ("a blank audience", {"assertion": b, "audience": " \n"})):
        failure("%s (form)" % what, w.post(body), 400, "need assertion and audience")
        failure("%s (JSON)" % what, w.post(body, "application/json"), 400,
                "need assertion and audience")
    failure("assertion twice", w.post("assertion=%s&assertion=%s&audience=%s" % (b, b, AUD)),
            400, "more than once")
    failure("a non-string field", w.post({"assertion": 5, "audience": AUD}, "application/json"),
            400, "string")
    failure("malformed JSON", w.post('{"assertion":', "application/json"), 400)
    failure("JSON with a duplicate key",
            w.post('{"assertion":"a","assertion":"b","audience":"c"}', "application/json"), 400)
    failure("a bad escape", w.post("assertion=%zz&audience=x"), 400, "malformed form body")
    failure("an encoded NUL", w.post("assertion=a%00b&audience=x"), 400, "malformed form body")
    failure("a raw NUL", w.post(b"assertion=a\x00b&audience=x"), 400, "malformed form body")
    failure("text/plain", w.post("assertion=a&audience=b", "text/plain"), 415)
    failure("no content type", w.post("assertion=a&audience=b", None), 415)
    failure("JSON in another charset",
            w.post({"assertion": b, "audience": AUD}, "application/json; charset=latin1"), 415)
    pad = "&pad=" + "x" * VERIFY_MAX
    failure("a body over 10 KiB", w.post("assertion=a&audience=b" + pad), 413)
    r = w.post("assertion=a&audience=b&pad=" + "x" * (VERIFY_MAX - 30))
    C.eq("a body just under 10 KiB is read", (r.status, persona(r).get("status")),
         (200, "failure"))
    r = w.post("a" * (BODY_MAX + 1))
    # Refused before the route is known: both shapes.
    failure("a body over the server's limit (refused before routing)", r, 413,
            keys=("error", "reason", "status"))
    for method in ("GET", "PUT", "DELETE"):
        r = w.post(None, None, method)
        failure(method, r, 405)
        C.eq("%s: Allow: POST" % method, r.header("Allow"), "POST")
    r = w.auth.request("HEAD", "/verify")
    C.eq("HEAD: 405", r.status, 405)


def check_rotation(w):
    """Every published key verifies; a retired one does not."""
    b0 = w.backed()
    before = w.auth.support()
    w.ok("prepare", "--dir", w.keys)
    nxt = w.auth.reload(before)
    C.require("prepare: a next key published", len(nxt.get("keys", [])) == 2, nxt)
    w.ok("rotate", "--dir", w.keys)
    rot = w.auth.reload(nxt)
    C.require("rotate: the next key is current", rot["public-key"] != before["public-key"])
    time.sleep(0.3)  # every loop has the new set
    C.eq("previous key: still verifies",
         persona(w.post({"assertion": b0, "audience": AUD})).get("status"), "okay")
    C.eq("new current key: verifies",
         persona(w.post({"assertion": w.backed(), "audience": AUD})).get("status"), "okay")
    w.ok("retire", "--dir", w.keys, "--force")
    w.auth.reload(rot)
    time.sleep(0.3)
    failure("a retired key", w.post({"assertion": b0, "audience": AUD}), 200, "signature")


def check_limit(tmp):
    w = World(tmp, extra="verify_rate = 1\nverify_burst = 3\n")
    try:
        b = w.backed()
        got = [w.post({"assertion": b, "audience": AUD}) for _ in range(4)]
        C.eq("burst 3: three verified", [persona(r).get("status") for r in got[:3]],
             ["okay"] * 3)
        failure("the fourth at once", got[3], 429, "too many")
        C.check("429: Retry-After", got[3].header("Retry-After") in ("1", "2"),
                got[3].header("Retry-After"))
        time.sleep(1.1)
        C.eq("a second later: one more", persona(w.post({"assertion": b, "audience": AUD}))
             .get("status"), "okay")
        # The limit is per client, not per connection or loop: the same
        # burst spent over new connections is refused too.
        got = [w.post({"assertion": b, "audience": AUD}) for _ in range(3)]
        C.eq("new connections share the client's bucket", got[-1].status, 429)
        # A reload applies a new rate at once (the bucket refills at the
        # new rate; a larger burst is room to refill, not a gift).
        with open(w.conf) as f:
            text = f.read()
        vephelp.write(w.conf, text.replace("verify_rate = 1\n", "verify_rate = 1000\n")
                      .replace("verify_burst = 3", "verify_burst = 50"))
        before = w.auth.support()
        w.auth.send_signal(signal.SIGHUP)
        deadline = time.time() + 5
        got = []
        while time.time() < deadline and got != [200] * 10:
            time.sleep(0.2)
            got = [w.post({"assertion": b, "audience": AUD}).status for _ in range(10)]
        C.eq("after a reload to rate 1000, burst 50: ten at once", got, [200] * 10)
        C.eq("the support document did not change", w.auth.support(), before)
        log = w.auth.stderr()
        C.check("access log: POST /verify 200 and 429",
                'POST "/verify" 200' in log and 'POST "/verify" 429' in log, log[-800:])
    finally:
        C.eq("server exits cleanly", w.auth.stop(), 0)


def main():
    if vephelp.keytool() is None:
        vephelp.skip("VEP_KEYTOOL is not set to an executable")
    tmp = tempfile.mkdtemp(prefix="vep-verify-")
    try:
        os.mkdir(os.path.join(tmp, "a"))
        w = World(os.path.join(tmp, "a"))
        try:
            C.group(check_contract, w)
            C.group(check_malformed, w)
            C.group(check_rotation, w)
        finally:
            C.eq("server exits cleanly", w.auth.stop(), 0)
        os.mkdir(os.path.join(tmp, "b"))
        C.group(check_limit, os.path.join(tmp, "b"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
