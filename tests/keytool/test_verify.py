#!/usr/bin/env python3
"""vep-keytool certify / sign-assertion / verify-* / inspect, including
the clock skew at its edges, Mozilla's known-answer vectors verified as of
their own time, and the
forgeries that unsafe user keys allow (issue 11) refused."""
import hashlib
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402
from vephelp import b64url, clock_skew_ms, jws_payload as payload, now_ms  # noqa: E402

C = vephelp.Checker("keytool_verify")
SRCROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VECTORS = os.environ.get("VEP_VECTORS") or os.path.join(
    SRCROOT, "tests", "vectors", "browserid-crypto-vectors.json")


# --- certify -----------------------------------------------------------------


def certify_fields_and_times(k):
    d = k.keydir()
    u = k.user_key(alg="DS128")
    t0 = now_ms()
    c = k.ok("certify", "--dir", d, "--email", "Alice@Example.TEST", "--pubkey", u).strip()
    t1 = now_ms()
    pl = payload(c)
    C.eq("certify: iss is the domain", pl["iss"], "example.test")
    C.eq("certify: principal, the domain lowercased", pl["principal"],
         {"email": "Alice@example.test"})
    C.eq("certify: public-key is the user's", pl["public-key"], json.loads(k.ok("pubkey", u)))
    # iat back-dated 10 s, default lifetime 3600 s from now
    C.check("certify: iat back-dated 10 s", t0 - 10000 <= pl["iat"] <= t1 - 10000,
            (pl["iat"], t0))
    C.check("certify: exp 3600 s from now", t0 + 3600000 <= pl["exp"] <= t1 + 3600000,
            (pl["exp"], t0))


def duration_cap_and_issuer(k):
    d = k.keydir()
    u = k.user_key()
    rc, out, err = k.kt("certify", "--dir", d, "--email", "a@example.test",
                        "--pubkey", u, "--duration", "999999")
    C.eq("certify --duration 999999: exit 0", rc, 0, err)
    C.check("... says it is capped", "capped" in err, err)
    pl = payload(out.strip())
    C.eq("... at 24 h", pl["exp"] - pl["iat"], 24 * 3600 * 1000)
    pl = payload(k.ok("certify", "--dir", d, "--email", "a@example.test",
                      "--pubkey", u, "--duration", "60"))
    C.eq("certify --duration 60: exp - iat is 70 s (iat back-dated)",
         pl["exp"] - pl["iat"], 70000)
    rc, out, err = k.kt("certify", "--dir", d, "--email", "a@example.test",
                        "--pubkey", u, "--issuer", "IdP.Example")
    C.eq("certify --issuer: exit 0", rc, 0, err)
    C.check("... says the domain delegates", "delegates" in err, err)
    C.eq("... iss is the issuer, lowercased", payload(out.strip())["iss"], "idp.example")
    for bad in (["--email", "not-an-email"], ["--email", "é@example.test"],
                ["--email", "a@example.test", "--duration", "0"],
                ["--email", "a@example.test", "--duration", "x"],
                ["--email", "a@example.test", "--issuer", "bad issuer"]):
        C.eq("certify %s: exit 2" % " ".join(bad),
             k.kt("certify", "--dir", d, "--pubkey", u, *bad)[0], 2)
    C.eq("certify without a domain key: exit 2",
         k.kt("certify", "--email", "a@example.test", "--pubkey", u)[0], 2)
    # public key given as JSON on stdin
    pub = k.ok("pubkey", u)
    k.ok("certify", "--dir", d, "--email", "a@example.test", "--pubkey", "-", stdin=pub)


# --- verify-cert, verify-assertion, inspect ----------------------------------


def valid(k):
    k.signed("bob@example.test")
    doc = k.doc(k.d)
    C.eq("verify-assertion --support-doc: prints the address",
         k.ok("verify-assertion", "--audience", "https://rp.example", "--support-doc", doc, k.b),
         "bob@example.test\n")
    C.eq("verify-cert --support-doc: prints the address",
         k.ok("verify-cert", "--support-doc", doc, k.c), "bob@example.test\n")
    C.eq("verify-cert --issuer-key PEM: prints the address",
         k.ok("verify-cert", "--issuer-key", os.path.join(k.d, "current.pem"), k.c),
         "bob@example.test\n")
    pub = k.write("pub.json", k.ok("pubkey", "--dir", k.d))
    k.ok("verify-cert", "--issuer-key", pub, k.c)
    k.ok("verify-assertion", "--audience", "https://rp.example", "--support-doc",
         doc, "-", stdin=open(k.b).read())


def invalid_verdicts(k):
    k.signed("bob@example.test")
    doc = k.doc(k.d)
    rc, out, err = k.kt("verify-assertion", "--audience", "https://other.example",
                        "--support-doc", doc, k.b)
    C.eq("another audience: exit 1, nothing printed", (rc, out), (1, ""))
    C.check("... says audience", "audience" in err, err)
    pl = payload(open(k.c).read())
    skew = clock_skew_ms()
    rc, _, err = k.kt("verify-cert", "--support-doc", doc, "--at", pl["exp"] + skew, k.c)
    C.eq("verify-cert --at exp + skew: exit 1", rc, 1)
    C.check("... says invalid: expired", "invalid: expired" in err, err)
    rc, _, err = k.kt("verify-cert", "--support-doc", doc, "--at", pl["iat"] - skew - 1, k.c)
    C.eq("verify-cert --at more than the skew before iat: exit 1", rc, 1)
    C.check("... says issued in the future", "issued in the future" in err, err)
    # a key that did not sign it
    other = k.keydir("other")
    rc, _, err = k.kt("verify-assertion", "--audience", "https://rp.example",
                      "--support-doc", k.doc(other, "o.json"), k.b)
    C.eq("another domain key's document: exit 1", rc, 1)
    # tampered certificate payload
    h, p, s = open(k.c).read().strip().split(".")
    pl["principal"]["email"] = "mallory@example.test"
    p2 = b64url(json.dumps(pl).encode())
    t = k.write("tampered", ".".join([h, p2, s]))
    C.eq("a tampered certificate: exit 1", k.kt("verify-cert", "--support-doc", doc, t)[0], 1)
    # wrong issuer: certified for another domain
    c2 = k.cert(["--dir", k.d], "bob@example.test", k.u, "--issuer", "elsewhere.example")
    b2 = k.backed(k.u, c2)
    rc, _, err = k.kt("verify-assertion", "--audience", "https://rp.example",
                      "--support-doc", doc, b2)
    C.eq("a certificate issued for another domain: exit 1", rc, 1)
    C.check("... says which issuer was expected", "expected example.test" in err, err)
    # two certificates: chain refused
    chain = k.write("chain", open(k.c).read().strip() + "~" + open(k.b).read())
    C.eq("two certificates (a chain): exit 1",
         k.kt("verify-assertion", "--audience", "https://rp.example",
              "--support-doc", doc, chain)[0], 1)
    # disabled
    dis = k.write("dis.json", '{"disabled":true}')
    rc, _, err = k.kt("verify-assertion", "--audience", "https://rp.example",
                      "--support-doc", dis, k.b)
    C.eq("a disabled domain: exit 1", rc, 1)
    C.check("... says disabled", "disabled" in err, err)
    # garbage input, usage and I/O errors
    C.eq("garbage x.y.z: exit 1",
         k.kt("verify-cert", "--support-doc", doc, k.write("g", "x.y.z"))[0], 1)
    C.eq("a missing input file: exit 2",
         k.kt("verify-cert", "--support-doc", doc, k.path("missing"))[0], 2)
    C.eq("verify-cert without a key source: exit 2", k.kt("verify-cert", k.c)[0], 2)
    C.eq("verify-assertion without --audience: exit 2",
         k.kt("verify-assertion", "--support-doc", doc, k.b)[0], 2)
    C.eq("verify-cert --at -5: exit 2",
         k.kt("verify-cert", "--support-doc", doc, "--at", "-5", k.c)[0], 2)


def clock_skew(k):
    """The clock skew (VEP_CLOCK_SKEW_MS) at its edges, as libvep applies
    it: valid while iat - skew <= at < exp + skew, for the certificate and
    the assertion alike."""
    k.signed("bob@example.test")
    doc = k.doc(k.d)
    skew = clock_skew_ms()
    C.eq("VEP_CLOCK_SKEW_MS is 30 s, as README and docs/PROTOCOL.md say", skew, 30000)
    cpl = payload(open(k.c).read())
    for at, rc_want, what in ((cpl["iat"] - skew + 1, 0, "iat - skew + 1"),
                              (cpl["iat"] - skew, 0, "iat - skew"),
                              (cpl["iat"] - skew - 1, 1, "iat - skew - 1"),
                              (cpl["exp"] + skew - 1, 0, "exp + skew - 1"),
                              (cpl["exp"] + skew, 1, "exp + skew"),
                              (cpl["exp"] + skew + 1, 1, "exp + skew + 1")):
        rc, out, err = k.kt("verify-cert", "--support-doc", doc, "--at", at, k.c)
        C.eq("verify-cert --at certificate's %s: exit %d" % (what, rc_want), rc, rc_want, err)
    # An assertion of 1 s, made as the certificate begins, so both windows
    # overlap: its exp decides at its own edges.
    b = k.backed(k.u, k.c, "https://rp.example", "--duration", "1",
                 "--at", str(cpl["iat"]))
    aexp = payload(open(b).read().split("~")[1])["exp"]
    for at, rc_want in ((aexp + skew - 1, 0), (aexp + skew, 1), (aexp + skew + 1, 1)):
        rc, out, err = k.kt("verify-assertion", "--audience", "https://rp.example",
                            "--support-doc", doc, "--at", at, b)
        C.eq("verify-assertion --at assertion's exp %+d ms: exit %d"
             % (at - aexp, rc_want), rc, rc_want, err)
        if rc_want:
            C.check("... says expired", "expired" in err, err)


def json_line(what, out):
    """The one JSON object verify-assertion --json printed, or None."""
    lines = out.splitlines()
    C.eq(what + ": one line on stdout", len(lines), 1, out)
    try:
        return json.loads(lines[0]) if len(lines) == 1 else None
    except ValueError as e:
        C.check(what + ": stdout is JSON", False, "%s: %r" % (e, out))
        return None


def json_failure(k, what, args, reason, rc_want=1):
    """verify-assertion --json ARGS fails: exit rc_want and exactly
    {"status":"failure","reason":reason}, POST /verify's shape."""
    rc, out, err = k.kt("verify-assertion", "--json", *args)
    C.eq(what + ": exit %d" % rc_want, rc, rc_want, err)
    o = json_line(what, out)
    C.eq(what + ": {status: failure, reason}", o, {"status": "failure", "reason": reason})


def json_verdicts(k):
    """verify-assertion --json prints the object POST /verify answers, on
    one line of stdout, with the same exit codes as without it."""
    k.signed("bob@example.test")
    doc = k.doc(k.d)
    rc, out, err = k.kt("verify-assertion", "--json", "--audience", "https://rp.example",
                        "--support-doc", doc, k.b)
    C.eq("--json valid: exit 0", rc, 0, err)
    C.eq("--json valid: nothing on stderr", err, "")
    o = json_line("--json valid", out)
    cpl, apl = payload(open(k.c).read()), payload(open(k.b).read().split("~")[1])
    C.eq("--json valid: exactly these fields, in /verify's order",
         list(o or {}), ["status", "email", "audience", "expires", "issuer"])
    C.eq("--json valid: the values", o, {
        "status": "okay", "email": "bob@example.test", "audience": "https://rp.example",
        "expires": apl["exp"], "issuer": cpl["iss"]})
    C.check("--json valid: expires is an integer (ms)",
            type((o or {}).get("expires")) is int and o["expires"] > now_ms(), o)
    C.check("--json valid: the others are strings",
            all(type(o[f]) is str for f in ("status", "email", "audience", "issuer")), o)
    # audience: the assertion's aud, not what the relying party passed
    rc, out, _ = k.kt("verify-assertion", "--json", "--audience", "RP.example:443",
                      "--support-doc", doc, k.b)
    C.eq("--json for rp.example:443 (http): exit 1", rc, 1)
    rc, out, _ = k.kt("verify-assertion", "--json", "--audience", "https://RP.example:443/",
                      "--support-doc", doc, k.b)
    C.eq("--json for https://RP.example:443/: the assertion's aud",
         (rc, (json_line("--json default port", out) or {}).get("audience")),
         (0, "https://rp.example"))

    json_failure(k, "--json expired", ["--audience", "https://rp.example", "--support-doc", doc,
                                       "--at", apl["exp"] + clock_skew_ms(), k.b], "expired")
    json_failure(k, "--json not yet valid",
                 ["--audience", "https://rp.example", "--support-doc", doc,
                  "--at", cpl["iat"] - clock_skew_ms() - 1, k.b], "issued in the future")
    json_failure(k, "--json another audience", ["--audience", "https://other.example",
                                                "--support-doc", doc, k.b],
                 "audience does not match")
    json_failure(k, "--json a path in the relying party's audience",
                 ["--audience", "https://rp.example/login", "--support-doc", doc, k.b],
                 "audience does not match")
    h, p, sig = open(k.c).read().strip().split(".")
    cpl["principal"]["email"] = "mallory@example.test"
    tampered = k.write("tampered-b", ".".join([h, b64url(json.dumps(cpl).encode()), sig]) +
                       "~" + open(k.b).read().split("~")[1])
    json_failure(k, "--json a tampered certificate", ["--audience", "https://rp.example",
                                                     "--support-doc", doc, tampered],
                 "signature does not verify")
    json_failure(k, "--json garbage", ["--audience", "https://rp.example", "--support-doc", doc,
                                       k.write("garbage", "x.y.z")], "malformed input")
    json_failure(k, "--json another domain key's document",
                 ["--audience", "https://rp.example", "--support-doc",
                  k.doc(k.keydir("other"), "o.json"), k.b], "signature does not verify")
    # I/O (the delegated authority's document missing): exit 2, still JSON
    c2 = k.cert(["--dir", k.d], "carol@example.test", k.u, "--issuer", "idp.example")
    deleg = k.write("deleg.json", k.ok("support-doc", "--delegate", "idp.example"))
    json_failure(k, "--json a document that cannot be read",
                 ["--audience", "https://rp.example", "--support-doc", deleg, k.backed(k.u, c2)],
                 "input/output error", rc_want=2)
    # usage errors: exit 2, no JSON
    rc, out, err = k.kt("verify-assertion", "--json", "--support-doc", doc, k.b)
    C.eq("--json without --audience: exit 2, nothing on stdout", (rc, out), (2, ""), err)
    rc, out, err = k.kt("verify-cert", "--json", "--support-doc", doc, k.c)
    C.eq("verify-cert --json: a usage error (exit 2)", (rc, out), (2, ""), err)
    C.check("... says it is for verify-assertion", "verify-assertion" in err, err)


def rotation_keeps_previous_valid(k):
    k.signed("bob@example.test")
    k.ok("rotate", "--dir", k.d)
    doc = k.doc(k.d)
    k.ok("verify-assertion", "--audience", "https://rp.example", "--support-doc", doc, k.b)
    k.ok("retire", "--dir", k.d, "--force")
    doc = k.doc(k.d, "doc2.json")
    C.eq("after retire: the old key's certificate, exit 1",
         k.kt("verify-assertion", "--audience", "https://rp.example",
              "--support-doc", doc, k.b)[0], 1)


ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def max_delegations():
    """VEP_MAX_DELEGATIONS as libvep/support.h defines it."""
    with open(os.path.join(ROOT, "libvep", "support.h"), encoding="utf-8") as f:
        return int(re.search(r"#define VEP_MAX_DELEGATIONS (\d+)", f.read()).group(1))


def rp_js_max_delegations():
    """MAX_DELEGATIONS as www/rp.js states it."""
    with open(os.path.join(ROOT, "www", "rp.js"), encoding="utf-8") as f:
        return int(re.search(r"const MAX_DELEGATIONS = (\d+);", f.read()).group(1))


def delegation_files(k):
    k.signed("bob@example.test")
    # example.test delegates to idp.example, whose keys sign.
    c = k.cert(["--dir", k.d], "carol@example.test", k.u, "--issuer", "idp.example")
    b = k.backed(k.u, c)
    deleg = k.write("deleg.json", k.ok("support-doc", "--delegate", "idp.example"))
    idp = k.doc(k.d, "idp.json")
    C.eq("delegation: verify-assertion with both documents",
         k.ok("verify-assertion", "--audience", "https://rp.example",
              "--support-doc", deleg, "--support-doc", "IDP.example=" + idp, b),
         "carol@example.test\n")
    k.ok("verify-cert", "--support-doc", deleg, "--support-doc", "idp.example=" + idp, c)
    # the authority's document is missing: I/O (cannot decide)
    C.eq("delegation: the authority's document missing, exit 2",
         k.kt("verify-assertion", "--audience", "https://rp.example",
              "--support-doc", deleg, b)[0], 2)
    # a loop
    back = k.write("back.json", '{"authority":"example.test"}')
    rc, _, err = k.kt("verify-assertion", "--audience", "https://rp.example",
                      "--support-doc", deleg, "--support-doc", "idp.example=" + back, b)
    C.eq("delegation loop: exit 1", rc, 1)
    C.check("... says loop", "loop" in err, err)
    # Exactly VEP_MAX_DELEGATIONS hops are followed, one more is refused:
    # example.test -> d1 -> ... -> dN, dN publishing the keys.
    n = max_delegations()
    C.eq("VEP_MAX_DELEGATIONS is browserid-local-verify's maxDelegations", n, 5)
    C.eq("www/rp.js follows as many", rp_js_max_delegations(), n)
    for hops, verdict in ((n, 0), (n + 1, 1)):
        last = "d%d.example" % hops
        c = k.cert(["--dir", k.d], "carol@example.test", k.u, "--issuer", last)
        b = k.backed(k.u, c)
        args = ["--support-doc", k.write("h0", '{"authority":"d1.example"}')]
        for i in range(1, hops):
            args += ["--support-doc", "d%d.example=%s" % (i, k.write(
                "h%d" % i, '{"authority":"d%d.example"}' % (i + 1)))]
        args += ["--support-doc", "%s=%s" % (last, idp)]
        rc, out, err = k.kt("verify-assertion", "--audience", "https://rp.example", *args, b)
        if verdict == 0:
            C.eq("delegation over %d hops: verified" % hops, (rc, out),
                 (0, "carol@example.test\n"), err)
        else:
            C.eq("delegation over %d hops: exit 1" % hops, rc, 1)
            C.check("... says delegations", "delegations" in err, err)


def input_cap(k):
    k.signed("bob@example.test")
    big = k.write("big", "a" * (64 * 1024 + 1))
    rc, _, err = k.kt("verify-cert", "--issuer-key", os.path.join(k.d, "current.pem"), big)
    C.eq("an input over 64 KiB: exit 2", rc, 2)
    C.check("... says larger than", "larger than" in err, err)
    exact = k.write("exact", "a" * (64 * 1024))
    # read, then undecodable
    C.eq("an input of exactly 64 KiB: read (exit 1, undecodable)", k.kt("inspect", exact)[0], 1)


def inspect(k):
    k.signed("bob@example.test")
    out = k.ok("inspect", k.b)
    C.check("inspect: says nothing is verified", "nothing here has been verified" in out, out)
    C.check("inspect: certificate 1", "certificate 1:" in out, out)
    C.check("inspect: assertion", "assertion:" in out, out)
    C.check("inspect: the email", '"email": "bob@example.test"' in out, out)
    C.check("inspect: the user key's algorithm and fingerprint",
            "public key  DS128, fingerprint " + k.ok("pubkey", "--fingerprint", k.u).strip()
            in out, out)
    C.check("inspect: expiry as an ISO time",
            re.search(r"expires     \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", out), out)
    C.check("inspect: the audience", '"aud": "https://rp.example"' in out, out)
    C.eq("inspect not.a.jws: exit 1", k.kt("inspect", k.write("bad", "not.a.jws"))[0], 1)


# --- Mozilla's known-answer vectors ------------------------------------------


def vectors():
    if not os.path.exists(VECTORS):
        print("skip vectors: none at " + VECTORS)
        return None
    with open(VECTORS) as f:
        return json.load(f)


def cert_vectors(k):
    vs = vectors()
    for i, v in enumerate(vs["CERTS"] if vs else []):
        key = k.write("k%d.json" % i, json.dumps(v["certifierPublicKey"]))
        cert = k.write("c%d" % i, v["cert"])
        at = int(v["issued_at"]) + 1
        rc, out, err = k.kt("verify-cert", "--issuer-key", key, "--at", at, cert)
        C.eq("certificate vector %d: verified as of its time" % i, (rc, out),
             (0, v["email"] + "\n"), err)
        rc, _, _ = k.kt("verify-cert", "--issuer-key", key, "--at",
                        int(v["expires_at"]) + clock_skew_ms(), cert)
        C.eq("certificate vector %d: expired the clock skew after its exp" % i, rc, 1)


def backed_vectors(k):
    vs = vectors()
    for i, v in enumerate(vs["BACKED_ASSERTIONS"] if vs else []):
        doc = k.write("d%d.json" % i, json.dumps({
            "public-key": v["certifyingKey"], "authentication": "/a", "provisioning": "/p"}))
        b = k.write("b%d" % i, v["assertion"])
        at = int(v["issued_at"]) + 1
        rc, out, err = k.kt("verify-assertion", "--audience", v["audience"],
                            "--support-doc", doc, "--at", at, b)
        C.eq("assertion vector %d: verified as of its time" % i, (rc, out),
             (0, v["email"] + "\n"), err)
        rc, _, _ = k.kt("verify-assertion", "--audience", "https://evil.example",
                        "--support-doc", doc, "--at", at, b)
        C.eq("assertion vector %d: refused for another audience" % i, rc, 1)


# --- Unsafe user keys (issue 11): forgeries made without any private key ---
# A certificate is public (every relying party sees it), so a certified user
# key that anyone can sign with lets anyone speak for its address anywhere.
# These groups build such certificates with a domain key of their own (pure
# Python RSA, so no libvep code signs them) and check that vep-keytool
# neither issues them nor accepts assertions made with them.

RNG = random.Random(11)
DOMAIN = "example.test"
VICTIM = "victim@example.test"
RP = "https://victim-rp.example"
DOMAIN_KEY = []   # the domain's own (honest) RS256 key (n, d), made once


def jws_input(header, body):
    return (b64url(json.dumps(header, separators=(",", ":")).encode()) + "." +
            b64url(json.dumps(body, separators=(",", ":")).encode()))


def domain_key():
    if not DOMAIN_KEY:
        DOMAIN_KEY.append(vephelp.rsa_key(2048, RNG))
    return DOMAIN_KEY[0]


def support_doc(k):
    return k.write("doc.json", json.dumps({
        "public-key": {"algorithm": "RS", "n": str(domain_key()[0]), "e": "65537"},
        "authentication": "/sign-in", "provisioning": "/provision"}))


def cert_for(pubkey):
    now = now_ms()
    inp = jws_input({"alg": "RS256"}, {
        "iss": DOMAIN, "iat": now - 10000, "exp": now + 3600000,
        "public-key": pubkey, "principal": {"email": VICTIM}})
    return inp + "." + b64url(vephelp.rsa_sign(*domain_key(), inp.encode()))


def refused(k, what, pubkey, assertion):
    """certify refuses the key; verify-assertion refuses cert~assertion
    made with it; verify-cert refuses the certificate."""
    kf = k.write("user.json", json.dumps(pubkey))
    d = k.keydir()
    rc, out, err = k.kt("certify", "--dir", d, "--email", VICTIM, "--pubkey", kf)
    C.check("%s: certify refuses the key" % what, rc != 0, "certified an unsafe key: " + out)
    C.eq("%s: ... prints no certificate" % what, out, "")
    C.check("%s: ... says unsafe key" % what, "unsafe key" in err, err)
    doc = support_doc(k)
    cert = cert_for(pubkey)
    backed = k.write("backed", cert + "~" + assertion)
    rc, out, err = k.kt("verify-assertion", "--audience", RP, "--support-doc", doc, backed)
    C.eq("%s: verify-assertion refuses the forged assertion" % what, (rc, out), (1, ""),
         "forged assertion accepted: " + err)
    C.check("%s: ... says unsafe key" % what, "unsafe key" in err, err)
    rc, out, err = k.kt("verify-cert", "--support-doc", doc, k.write("cert", cert))
    C.eq("%s: verify-cert refuses the certificate" % what, (rc, out), (1, ""))


def harness_domain_key_is_honest(k):
    """The same harness with an honest user key verifies, so the
    refusals below are about the user keys alone."""
    n, d = vephelp.rsa_key(2048, RNG)
    pk = {"algorithm": "RS", "n": str(n), "e": "65537"}
    inp = jws_input({"alg": "RS256"}, {"exp": now_ms() + 120000, "aud": RP})
    a = inp + "." + b64url(vephelp.rsa_sign(n, d, inp.encode()))
    backed = k.write("ok-backed", cert_for(pk) + "~" + a)
    C.eq("the forgery harness with an honest user key: verified",
         k.ok("verify-assertion", "--audience", RP, "--support-doc", support_doc(k), backed),
         VICTIM + "\n")


def dsa_even_q_composite_p_forgery(k):
    """q even, p composite, g = y = p - 1: g^q = (-1)^q = 1, so the old
    range checks passed, and r = s = 1 verifies every message whose
    SHA-1 is odd (g^u1 * y^u2 = (-1)^(H+1) = 1 = r mod q)."""
    p = (1 << 1023) + 1                  # odd, divisible by 3
    q = (1 << 159) + 2                   # 160 bits, even
    pk = {"algorithm": "DS", "y": "%x" % (p - 1), "p": "%x" % p,
          "q": "%x" % q, "g": "%x" % (p - 1)}
    exp = now_ms() + 120000
    while True:
        inp = jws_input({"alg": "DS128"}, {"exp": exp, "aud": RP})
        if hashlib.sha1(inp.encode()).digest()[-1] & 1:
            break
        exp += 1
    sig = (1).to_bytes(20, "big") + (1).to_bytes(20, "big")
    refused(k, "DSA, q even, p composite", pk, inp + "." + b64url(sig))


def rsa_prime_modulus_forgery(k):
    """n prime: d = e^-1 mod (n - 1) is a working private exponent that
    anyone can compute from the certificate."""
    while True:
        n = vephelp.prime(2048, RNG)
        if (n - 1) % 65537 != 0:
            break
    d = pow(65537, -1, n - 1)
    pk = {"algorithm": "RS", "n": str(n), "e": "65537"}
    inp = jws_input({"alg": "RS256"}, {"exp": now_ms() + 120000, "aud": RP})
    refused(k, "RSA, n prime", pk, inp + "." + b64url(vephelp.rsa_sign(n, d, inp.encode())))


if __name__ == "__main__":
    sys.exit(vephelp.keytool_main(C, [
        certify_fields_and_times, duration_cap_and_issuer,
        valid, invalid_verdicts, clock_skew, json_verdicts, rotation_keeps_previous_valid,
        delegation_files,
        input_cap, inspect, cert_vectors, backed_vectors,
        harness_domain_key_is_honest, dsa_even_q_composite_p_forgery,
        rsa_prime_modulus_forgery]))
