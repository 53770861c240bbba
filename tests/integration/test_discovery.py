"""Discovery endpoints of a demo authority: /.well-known/browserid, /pk,
host-meta (XRD, JRD), WebFinger; HEAD, ETag/304, domain selection, errors,
405 + Allow, security headers, and a clean SIGTERM exit."""

import json
import signal
import os
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402

c = vephelp.Checker("discovery")
tmp = tempfile.mkdtemp(prefix="vep-disc-")
# The demo preloads pam_wrapper into its PAM helper, which an ASan build's
# link-order check would refuse (the helper would never run: /healthz says so).
a = vephelp.Authority(["--demo", "--state", os.path.join(tmp, "state"),
                       "--listen", "127.0.0.1:0"], tmp=tmp,
                      env={"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") +
                           ":verify_asan_link_order=0"})
o = a.origin
SEC = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


def common_headers(what, r, cache=True):
    for k, v in SEC.items():
        c.eq("%s: %s" % (what, k), r.header(k), v)
    csp = r.header("Content-Security-Policy") or ""
    c.check("%s: CSP default-src 'none'" % what, "default-src 'none'" in csp, csp)
    if cache:
        c.eq("%s: Cache-Control" % what, r.header("Cache-Control"), "public, max-age=300")
        et = r.header("ETag") or ""
        c.check("%s: strong ETag" % what, et.startswith('"') and et.endswith('"') and
                len(et) > 10, et)


def is_json_error(what, r, status):
    c.eq("%s: status" % what, r.status, status)
    try:
        body = r.json()
    except ValueError:
        body = None
    c.check("%s: JSON error body" % what, isinstance(body, dict) and
            isinstance(body.get("error"), str), r.body[:200])
    c.check("%s: error content type" % what, r.header("Content-Type") == "application/json")
    c.eq("%s: errors not cached" % what, r.header("Cache-Control"), "no-store")


# --- support document ---------------------------------------------------------
r = a.get("/.well-known/browserid")
c.eq("support: 200", r.status, 200)
c.eq("support: content type", r.header("Content-Type"), "application/json")
common_headers("support", r)
c.eq("support: CORS", r.header("Access-Control-Allow-Origin"), "*")
c.eq("support: Content-Length", int(r.header("Content-Length")), len(r.body))
doc = r.json()
support = doc
c.eq("support: member order", list(doc.keys()),
     ["public-key", "keys", "authentication", "provisioning"])
pk = doc.get("public-key", {})
c.eq("support: RS key", sorted(pk.keys()), ["algorithm", "e", "n"])
c.eq("support: algorithm", pk.get("algorithm"), "RS")
c.check("support: 2048-bit modulus", 2 ** 2047 <= int(pk.get("n", "0")) < 2 ** 2048)
c.eq("support: e", pk.get("e"), "65537")
c.eq("support: keys[0] is public-key", doc.get("keys", [None])[0], pk)
c.eq("support: one key before any rotation", len(doc.get("keys", [])), 1)
c.eq("support: authentication", doc.get("authentication"), "/sign-in/authenticate")
c.eq("support: provisioning", doc.get("provisioning"), "/sign-in/provision")
etag = r.header("ETag")

# --- /pk ---------------------------------------------------------------------------
r = a.get("/pk")
c.eq("pk: 200", r.status, 200)
c.eq("pk: content type", r.header("Content-Type"), "application/json")
common_headers("pk", r)
c.eq("pk: equals support public-key", r.json(), pk)
keydir = os.path.join(tmp, "state", "keys", "example.test")
if vephelp.keytool():
    rc, out, err = vephelp.kt("pubkey", "--dir", keydir)
    c.eq("pk: vep-keytool pubkey exits 0", rc, 0)
    try:
        c.eq("pk: equals vep-keytool pubkey of the key dir", json.loads(out), pk)
    except ValueError:
        c.check("pk: vep-keytool pubkey prints JSON", False, out[:200])
else:
    print("note: VEP_KEYTOOL not built; compared /pk with the support document only")

# --- HEAD --------------------------------------------------------------------------
for path in ["/.well-known/browserid", "/pk", "/.well-known/host-meta",
             "/.well-known/host-meta.json",
             "/.well-known/webfinger?resource=acct:alice@example.test"]:
    g = a.get(path)
    raw = a.raw(("HEAD %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n"
                 % (path, a.host, a.port)).encode())
    h = vephelp.parse_raw_response(raw)
    c.eq("HEAD %s: status" % path, h.status, 200)
    c.eq("HEAD %s: no body bytes" % path, h.body, b"")
    for name in ["Content-Type", "Content-Length", "ETag", "Cache-Control",
                 "X-Content-Type-Options", "Access-Control-Allow-Origin"]:
        c.eq("HEAD %s: %s as GET" % (path, name), h.header(name), g.header(name))
    c.eq("HEAD %s: Content-Length is the GET body's" % path,
         h.header("Content-Length"), str(len(g.body)))

# --- ETag / 304 --------------------------------------------------------------------
p = "/.well-known/browserid"
for what, inm, want in [
        ("exact", etag, 304),
        ("weak prefix", "W/" + etag, 304),
        ("in a list", '"nope", ' + etag, 304),
        ("list without spaces", '"a",' + etag + ',"b"', 304),
        ("star", "*", 304),
        ("other tag", '"0123"', 200),
        ("unquoted", etag.strip('"'), 200),
        ("star inside a list", '"x", *', 200),
        ("garbage", "W/", 200)]:
    r = a.get(p, {"If-None-Match": inm})
    c.eq("If-None-Match %s: status" % what, r.status, want)
    if want == 304:
        c.eq("If-None-Match %s: no body" % what, r.body, b"")
        c.eq("If-None-Match %s: ETag repeated" % what, r.header("ETag"), etag)
        c.eq("If-None-Match %s: Cache-Control repeated" % what, r.header("Cache-Control"),
             "public, max-age=300")
r = a.request("HEAD", p, {"If-None-Match": etag})
c.eq("HEAD with matching If-None-Match: 304", r.status, 304)
r = a.get("/pk", {"If-None-Match": etag})
c.eq("another document's tag does not match", r.status, 200)
r1 = a.get("/.well-known/host-meta")
r2 = a.get("/.well-known/host-meta", {"If-None-Match": r1.header("ETag")})
c.eq("host-meta: 304 on its tag", r2.status, 304)
w1 = a.get("/.well-known/webfinger?resource=acct:alice@example.test")
w2 = a.get("/.well-known/webfinger?resource=acct:alice@example.test",
           {"If-None-Match": w1.header("ETag")})
c.eq("webfinger: 304 on its tag", w2.status, 304)

# --- domain selection ----------------------------------------------------------------
r = a.get("/.well-known/browserid?domain=example.test")
c.eq("?domain=example.test: 200", r.status, 200)
c.eq("?domain=: same document", r.json(), support)
c.eq("?domain=EXAMPLE.TEST: case-insensitive", a.get(p + "?domain=EXAMPLE.TEST").status, 200)
is_json_error("?domain=other.test", a.get(p + "?domain=other.test"), 404)
is_json_error("?domain=not..valid", a.get(p + "?domain=not..valid"), 400)
is_json_error("?domain=localhost (one label)", a.get(p + "?domain=localhost"), 400)
is_json_error("?domain= empty", a.get(p + "?domain="), 400)
is_json_error("duplicate domain", a.get(p + "?domain=example.test&domain=example.test"), 400)
is_json_error("bad percent-encoding", a.get(p + "?domain=%zz"), 400)
is_json_error("truncated percent-encoding", a.get(p + "?domain=example.tes%7"), 400)
is_json_error("encoded NUL", a.get(p + "?domain=example.test%00"), 400)
c.eq("percent-encoded domain decodes", a.get(p + "?domain=example%2Etest").status, 200)
c.eq("unrelated parameters are ignored", a.get(p + "?x=1&&y").status, 200)
for host, want in [("example.test", 200), ("EXAMPLE.test:8080", 200), ("example.test.", 200),
                   ("localhost", 200), ("localhost:1234", 200), ("127.0.0.1:9", 200),
                   ("[::1]:80", 421), ("other.test", 421), ("bad_host", 400),
                   ("example.test:x", 400), ("[nope]", 400)]:
    r = a.get(p, {"Host": host})
    c.eq("Host %s: status" % host, r.status, want)
    if want != 200:
        is_json_error("Host %s" % host, r, want)
raw = a.raw(b"GET /.well-known/browserid HTTP/1.0\r\n\r\n")
c.eq("HTTP/1.0 without Host: first domain", vephelp.parse_raw_response(raw).status, 200)

# --- unknown paths, methods, targets -------------------------------------------------
for path in ["/nope", "/sign-in/", "/demo-rp/index", "/pk/", "/.well-known/", "/.well-known/browserid/x", "/PK"]:
    is_json_error("unknown path %s" % path, a.get(path), 404)
for method in ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"]:
    r = a.request(method, "/.well-known/browserid", body=b"" if method != "OPTIONS" else None)
    is_json_error("%s support doc" % method, r, 405)
    c.eq("%s support doc: Allow" % method, r.header("Allow"), "GET, HEAD")
is_json_error("encoded slash in path", a.get("/.well-known%2Fbrowserid"), 400)
c.eq("percent-encoded path letters decode", a.get("/%70k").status, 200)
is_json_error("bad escape in path", a.get("/pk%"), 400)
raw = vephelp.parse_raw_response(a.raw(b"GET http://example.test/pk HTTP/1.1\r\n"
                                       b"Host: example.test\r\nConnection: close\r\n\r\n"))
c.check("absolute-form target refused", raw.status in (400,), raw.status)

# --- host-meta ------------------------------------------------------------------------
r = a.get("/.well-known/host-meta")
c.eq("host-meta: 200", r.status, 200)
c.eq("host-meta: XRD type", r.header("Content-Type"), "application/xrd+xml")
common_headers("host-meta", r)
try:
    root = ET.fromstring(r.body)
except ET.ParseError as e:
    root = None
    c.check("host-meta: well-formed XML", False, str(e))
if root is not None:
    ns = "{http://docs.oasis-open.org/ns/xri/xrd-1.0}"
    c.eq("host-meta: XRD root", root.tag, ns + "XRD")
    links = {ln.get("rel"): ln for ln in root.findall(ns + "Link")}
    lrdd = links.get("lrdd")
    c.eq("host-meta: lrdd template", lrdd.get("template") if lrdd is not None else None,
         o + "/.well-known/webfinger?resource={uri}")
    pkl = links.get("https://browserid.org/vocab#publicKey")
    c.eq("host-meta: publicKey href", pkl.get("href") if pkl is not None else None, o + "/pk")
    db = links.get("describedby")
    c.eq("host-meta: describedby href", db.get("href") if db is not None else None,
         o + "/.well-known/browserid")
r = a.get("/.well-known/host-meta.json")
c.eq("host-meta.json: 200", r.status, 200)
c.eq("host-meta.json: JRD type", r.header("Content-Type"), "application/jrd+json")
common_headers("host-meta.json", r)
jrd = r.json()
rels = {ln["rel"]: ln for ln in jrd.get("links", [])}
c.eq("host-meta.json: lrdd", rels.get("lrdd", {}).get("template"),
     o + "/.well-known/webfinger?resource={uri}")
c.eq("host-meta.json: publicKey", rels.get("https://browserid.org/vocab#publicKey",
                                           {}).get("href"), o + "/pk")
c.eq("host-meta.json: describedby", rels.get("describedby", {}).get("href"),
     o + "/.well-known/browserid")
r = a.get("/.well-known/host-meta.json", {"Host": "example.test"})
c.eq("host-meta.json: links follow the Host", r.json()["links"][1]["href"],
     "http://example.test/pk")
r = a.get("/.well-known/host-meta.json", {"Host": "other.test"})
is_json_error("host-meta for an unserved Host (421: never reflected)", r, 421)

# --- WebFinger -------------------------------------------------------------------------
WF = "/.well-known/webfinger?"


def wf(query, headers=None):
    return a.get(WF + query, headers)


r = wf("resource=acct:alice@example.test")
c.eq("webfinger: 200", r.status, 200)
c.eq("webfinger: JRD type", r.header("Content-Type"), "application/jrd+json")
c.eq("webfinger: CORS", r.header("Access-Control-Allow-Origin"), "*")
common_headers("webfinger", r)
j = r.json()
c.eq("webfinger: subject", j.get("subject"), "acct:alice@example.test")
c.eq("webfinger: links", j.get("links"), [
    {"rel": "https://browserid.org/vocab#publicKey", "type": "application/json",
     "href": o + "/pk"},
    {"rel": "describedby", "type": "application/json", "href": o + "/.well-known/browserid"}])
alice_links = j.get("links")


def shape(resp):
    d = resp.json()
    d.pop("subject", None)
    return d


for q in ["resource=acct:nobody-here@example.test", "resource=acct:root@example.test",
          "resource=acct:x@EXAMPLE.TEST", "resource=acct%3Abob%40example.test",
          "resource=ACCT:carol@example.test", "resource=acct:a.b+tag@example.test"]:
    r = wf(q)
    c.eq("webfinger %s: 200" % q, r.status, 200)
    c.eq("webfinger %s: same shape (no account oracle)" % q, shape(r), {"links": alice_links})
c.eq("webfinger: percent-encoded resource subject", wf("resource=acct%3Abob%40example.test")
     .json()["subject"], "acct:bob@example.test")
c.eq("webfinger: domain lowercased in subject", wf("resource=acct:x@EXAMPLE.TEST")
     .json()["subject"], "acct:x@example.test")
c.eq("webfinger: '+' kept in the local part", wf("resource=acct:a.b+tag@example.test")
     .json()["subject"], "acct:a.b+tag@example.test")
c.eq("webfinger: encoded userpart", wf("resource=acct:a%2525b@example.test")
     .json().get("subject"), "acct:a%25b@example.test")
r = wf("resource=acct:alice@example.test&rel=describedby")
c.eq("webfinger rel=describedby: one link", [ln["rel"] for ln in r.json()["links"]],
     ["describedby"])
r = wf("resource=acct:alice@example.test&rel=https%3A%2F%2Fbrowserid.org%2Fvocab%23publicKey")
c.eq("webfinger rel=publicKey (encoded)", [ln["rel"] for ln in r.json()["links"]],
     ["https://browserid.org/vocab#publicKey"])
r = wf("rel=describedby&resource=acct:alice@example.test"
       "&rel=https://browserid.org/vocab%23publicKey")
c.eq("webfinger rel repeated: both, in document order", [ln["rel"] for ln in r.json()["links"]],
     ["https://browserid.org/vocab#publicKey", "describedby"])
r = wf("resource=acct:alice@example.test&rel=DESCRIBEDBY")
c.eq("webfinger rel is case-sensitive", (r.status, r.json()["links"]), (200, []))
r = wf("resource=acct:alice@example.test&rel=lrdd")
c.eq("webfinger unknown rel: empty links", r.json().get("links"), [])
for what, q in [("missing", "rel=describedby"), ("empty", "resource="),
                ("repeated", "resource=acct:a@example.test&resource=acct:a@example.test"),
                ("mailto scheme", "resource=mailto:alice@example.test"),
                ("http scheme", "resource=http://example.test/"),
                ("no @", "resource=acct:alice"), ("empty local", "resource=acct:@example.test"),
                ("empty domain", "resource=acct:alice@"),
                ("bad percent", "resource=acct:al%zzice@example.test"),
                ("bad percent in query", "resource=acct%3zalice@example.test"),
                ("encoded NUL", "resource=acct:a%2500@example.test"),
                ("space", "resource=acct:al%20ice@example.test"),
                ("non-ASCII", "resource=acct:%C3%A9@example.test"),
                ("double dot", "resource=acct:a..b@example.test")]:
    is_json_error("webfinger %s" % what, wf(q), 400)
is_json_error("webfinger unserved domain", wf("resource=acct:alice@other.test"), 404)
is_json_error("webfinger POST", a.request("POST", WF + "resource=acct:a@example.test",
                                          body=b""), 405)

# --- shutdown -------------------------------------------------------------------------
# Health, for load balancers: yes or no, nothing private, never cached.
r = a.get("/healthz")
c.eq("/healthz: 200", r.status, 200)
c.eq("/healthz says only ok", r.json(), {"status": "ok"})
c.eq("/healthz is never cached", r.header("Cache-Control"), "no-store")
c.check("/healthz names no domain", b"example" not in r.body and b"@" not in r.body)
c.eq("/healthz for HEAD: 200", a.request("HEAD", "/healthz").status, 200)
c.eq("/healthz for POST: 405", a.request("POST", "/healthz", body=b"").status, 405)

# No core dumps of a process that holds keys or sees passwords.
def core_limit(pid):
    for ln in open("/proc/%d/limits" % pid):
        if ln.startswith("Max core file size"):
            return ln.split()[4:6]
    return None


def descendants(pid):
    kids = vephelp.children(pid)
    return kids + [d for k in kids for d in descendants(k)]


c.eq("server: core dumps off (RLIMIT_CORE 0)", core_limit(a.proc.pid), ["0", "0"])
procs = descendants(a.proc.pid)
c.check("key process and PAM helpers: core dumps off too",
        sorted(set(vephelp.comm(p) for p in procs)) == ["vep-keeper", "vep-pam-helper"] and
        all(core_limit(p) == ["0", "0"] for p in procs),
        repr([(p, vephelp.comm(p)) for p in procs]))

# A part down: /healthz says 503 and only "unavailable"; the log says which.
# The PAM helpers are killed as fast as they come back (their respawn
# backoff grows), until a health check lands while one is down.
down = None
for _ in range(40):
    for p in descendants(a.proc.pid):
        if vephelp.comm(p) == "vep-pam-helper":
            os.kill(p, signal.SIGKILL)
    for _ in range(4):
        r = a.get("/healthz")
        if r.status == 503:
            down = r
            break
    if down is not None:
        break
    time.sleep(0.01)
c.check("PAM helper down: /healthz 503", down is not None)
c.eq("... saying only 'unavailable'", down and down.json(), {"status": "unavailable"})
c.check("... and the log says why", "health check failed: PAM helper not running" in a.stderr())
# Each event loop has its own helper and answers /healthz for itself: one
# 200 may come from a loop whose helper is back while the other's is still
# in its respawn backoff. Back means every loop says so: 20 in a row.
t0 = time.time()
healthy = 0
while time.time() - t0 < 15 and healthy < 20:
    healthy = healthy + 1 if a.get("/healthz").status == 200 else 0
    time.sleep(0.02 if healthy else 0.1)
c.eq("helpers back (respawned by the key process): /healthz 200 twenty times in a row",
     healthy, 20)

rc = a.stop()
c.eq("SIGTERM: exit status 0", rc, 0)
err = a.stderr()
c.check("SIGTERM: logged shutdown", "shutting down" in err and "stopped" in err, err[-300:])
# The demo's banner names its demo account; no other line may name anyone.
c.check("log never shows the query (addresses)",
        not any("alice@" in ln for ln in err.splitlines() if "demo: serving" not in ln))
sys.exit(c.finish())
