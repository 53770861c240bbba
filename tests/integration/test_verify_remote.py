#!/usr/bin/env python3
"""POST /verify for domains the authority does not serve (verify_remote):
discovery against a real HTTPS server (Python's, on 127.0.0.1, with a test
CA the authority is told to trust and verify_remote_connect pointing the
test's names at it). Checked: a domain's own key and a previous one from
"keys"; delegation to a login host; caching by max-age (and no caching
without it); refusals for a disabled domain, a delegation loop, a redirect,
another content type, a document over 32 KiB, a slow server (the total
timeout holds), a certificate for another name, a name that does not
resolve, and an address that is not allowed (loopback without
verify_remote_allow); at most 16 at once per loop (503 for the next)."""
import http.server
import json
import os
import shutil
import ssl
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402

C = vephelp.Checker("verify_remote")
AUD = "https://rp.example"
FORM = "application/x-www-form-urlencoded"
NAMES = ["other.test", "deleg.test", "login.other.test", "nocache.test", "disabled.test",
         "loop1.test", "loop2.test", "redirect.test", "html.test", "big.test", "slow.test"]
# In the certificate's names? Not this one: TLS must refuse it.
WRONG_NAME = "wrongname.test"
SLOW_S = 4
TOTAL_S = 2


class Docs(http.server.BaseHTTPRequestHandler):
    """Answers /.well-known/browserid for the Host asked, from server.docs:
    host -> (status, headers, body); counts requests per host."""

    def do_GET(self):
        host = (self.headers.get("Host") or "").split(":")[0]
        self.server.hits[host] = self.server.hits.get(host, 0) + 1
        status, headers, body = self.server.docs.get(host, (404, {}, b"{}"))
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if host != "slow.test":
            self.wfile.write(body)
            return
        # A byte at a time, each well within the per-step timeout: only
        # the total one can end it.
        try:
            for i in range(len(body)):
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                time.sleep(SLOW_S / len(body))
        except OSError:
            pass

    def log_message(self, *args):
        pass


class DocServer(http.server.ThreadingHTTPServer):
    # Sixteen verifications connect at once (check_busy): a backlog of
    # five would drop some.
    request_queue_size = 64

    def handle_error(self, request, client_address):
        # The authority refusing the certificate (the wrong-name check) ends
        # the handshake in the handler's thread: expected, not an error.
        if not isinstance(sys.exc_info()[1], ssl.SSLError):
            super().handle_error(request, client_address)


def serve_docs(crt, key):
    srv = DocServer(("127.0.0.1", 0), Docs)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(crt, key)
    # The handshake in each connection's thread, not one after another in
    # the accepting one.
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
    srv.daemon_threads = True
    srv.hits = {}
    srv.docs = {}
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


class World:
    def __init__(self, tmp):
        self.tmp = tmp
        self.n = 0
        self.user = os.path.join(tmp, "user.pem")
        self.ok("genkey", "--alg", "DS128", "--out", self.user)
        self.own = os.path.join(tmp, "own-keys")
        self.other = os.path.join(tmp, "other-keys")
        self.login = os.path.join(tmp, "login-keys")
        for d in (self.own, self.other, self.login):
            self.ok("init", "--dir", d)

    def ok(self, *args):
        rc, out, err = vephelp.kt(*args)
        C.require("vep-keytool %s: exit 0" % args[0], rc == 0, err)
        return out

    def backed(self, email, keydir, *extra):
        self.n += 1
        cert = vephelp.write(os.path.join(self.tmp, "c%d" % self.n),
                             self.ok("certify", "--dir", keydir, "--email", email,
                                     "--pubkey", self.user, *extra))
        return self.ok("sign-assertion", "--key", self.user, "--audience", AUD,
                       "--cert", cert).strip()

    def doc(self, keydir):
        return self.ok("support-doc", "--dir", keydir).encode()


def verify(auth, backed):
    r = auth.request("POST", "/verify", {"Content-Type": FORM},
                     urllib.parse.urlencode({"assertion": backed, "audience": AUD}))
    try:
        return r.status, r.json()
    except ValueError:
        return r.status, {}


def start(w, srv, ca, extra="", total_s=TOTAL_S):
    connect = " ".join("%s=127.0.0.1:%d" % (n, srv.server_address[1])
                       for n in NAMES + [WRONG_NAME])
    conf = vephelp.write_config(w.tmp, w.own, name="r%d" % w.n, extra=(
        "verify_remote = yes\nverify_remote_cafile = %s\nverify_remote_connect = %s\n"
        "verify_remote_timeout = 1\nverify_remote_total = %d\n%s"
        % (ca, connect, total_s, extra)))
    w.n += 1
    return vephelp.serve(conf, w.tmp)


def check_remote(w, srv, auth):
    json_h = {"Content-Type": "application/json", "Cache-Control": "public, max-age=60"}
    srv.docs["other.test"] = (200, json_h, w.doc(w.other))
    st, j = verify(auth, w.backed("carol@other.test", w.other))
    C.eq("another domain, its key: okay, issuer the domain", (st, j.get("status"),
         j.get("email"), j.get("issuer")), (200, "okay", "carol@other.test", "other.test"), j)
    # max-age: the second verification takes the document from the cache.
    hits = srv.hits.get("other.test", 0)
    st, j = verify(auth, w.backed("carol@other.test", w.other))
    C.eq("cached for its max-age: okay without a fetch",
         (j.get("status"), srv.hits.get("other.test", 0)), ("okay", hits), j)
    srv.docs["nocache.test"] = (200, {"Content-Type": "application/json"}, w.doc(w.login))
    for _ in range(2):
        verify(auth, w.backed("dan@nocache.test", w.login, "--issuer", "nocache.test"))
    C.eq("without max-age: fetched every time", srv.hits.get("nocache.test", 0), 2)
    # "keys": after a rotation, the previous key it lists still verifies.
    old = w.backed("dan@nocache.test", w.login, "--issuer", "nocache.test")
    w.ok("prepare", "--dir", w.login)
    w.ok("rotate", "--dir", w.login)
    srv.docs["nocache.test"] = (200, {"Content-Type": "application/json"}, w.doc(w.login))
    C.require("the rotated document lists two keys",
              len(json.loads(srv.docs["nocache.test"][2]).get("keys", [])) == 2)
    st, j = verify(auth, old)
    C.eq("a previous key from \"keys\": okay", j.get("status"), "okay", j)
    w.ok("retire", "--dir", w.login, "--force")
    srv.docs["nocache.test"] = (200, {"Content-Type": "application/json"}, w.doc(w.login))
    st, j = verify(auth, old)
    C.check("once retired: failure", j.get("status") == "failure", j)
    # Delegation: deleg.test names login.other.test, whose keys sign.
    srv.docs["deleg.test"] = (200, json_h, b'{"authority":"login.other.test"}')
    srv.docs["login.other.test"] = (200, json_h, w.doc(w.login))
    st, j = verify(auth, w.backed("erin@deleg.test", w.login, "--issuer", "login.other.test"))
    C.eq("delegation: okay, issuer the login host", (j.get("status"), j.get("issuer")),
         ("okay", "login.other.test"), j)
    st, j = verify(auth, w.backed("erin@deleg.test", w.login))
    C.check("delegation: a certificate issued by the domain itself is refused",
            j.get("status") == "failure" and "issuer" in j.get("reason", ""), j)


def refused(what, auth, backed, part):
    t0 = time.time()
    st, j = verify(auth, backed)
    C.check("%s: 200 failure saying '%s'" % (what, part),
            st == 200 and j.get("status") == "failure" and part in j.get("reason", ""),
            repr((st, j)))
    return time.time() - t0


def check_refusals(w, srv, auth):
    json_h = {"Content-Type": "application/json"}
    b = lambda email: w.backed(email, w.other, "--issuer", email.split("@")[1])  # noqa: E731
    srv.docs["disabled.test"] = (200, json_h, b'{"disabled":true}')
    refused("a disabled domain", auth, b("a@disabled.test"), "disabled")
    srv.docs["loop1.test"] = (200, json_h, b'{"authority":"loop2.test"}')
    srv.docs["loop2.test"] = (200, json_h, b'{"authority":"loop1.test"}')
    refused("a delegation loop", auth, b("a@loop1.test"), "delegation loop")
    srv.docs["redirect.test"] = (302, {"Location": "https://other.test/.well-known/browserid"},
                                 b"")
    refused("a redirect", auth, b("a@redirect.test"), "redirect")
    srv.docs["html.test"] = (200, {"Content-Type": "text/html"}, w.doc(w.other))
    refused("another content type", auth, b("a@html.test"), "Content-Type")
    srv.docs["big.test"] = (200, json_h, b'{"x":"' + b"a" * (33 * 1024) + b'"}')
    refused("a document over 32 KiB", auth, b("a@big.test"), "too large")
    srv.docs["slow.test"] = (200, json_h, b'{"disabled":false, "pad":"' + b"x" * 40 + b'"}')
    took = refused("a slow server", auth, b("a@slow.test"), "slow.test")
    C.check("a slow server: ended by the total (%d s), not by a step's timeout" % TOTAL_S,
            TOTAL_S - 0.5 < took < TOTAL_S + 1.5, took)
    srv.docs[WRONG_NAME] = (200, json_h, w.doc(w.other))
    refused("a certificate for another name", auth, b("a@" + WRONG_NAME), "TLS")
    refused("a name that does not resolve", auth, b("a@nowhere.invalid"), "resolve")
    st, j = verify(auth, w.backed("carol@other.test", w.other))
    C.eq("after all that, other.test still verifies", j.get("status"), "okay", j)


def check_busy(w, srv, ca):
    """One loop verifies at most REMOTE_MAX_INFLIGHT (16) remote assertions
    at once: the next is refused with 503, Retry-After and a Persona-shaped
    body, and verification works again once they end."""
    # The slow server answers in SLOW_S: the total must outlast it here.
    auth = start(w, srv, ca, "verify_remote_allow = 127.0.0.1\nworkers = 1\n",
                 total_s=SLOW_S + 4)
    try:
        json_h = {"Content-Type": "application/json"}
        srv.docs["slow.test"] = (200, json_h, b'{"disabled":false, "pad":"' + b"x" * 40 + b'"}')
        slow = w.backed("a@slow.test", w.other, "--issuer", "slow.test")
        before = srv.hits.get("slow.test", 0)
        results = []
        threads = [threading.Thread(target=lambda: results.append(verify(auth, slow)))
                   for _ in range(16)]
        for t in threads:
            t.start()
        t0 = time.time()
        while srv.hits.get("slow.test", 0) < before + 16 and time.time() < t0 + SLOW_S - 1:
            time.sleep(0.02)
        C.eq("16 slow verifications reached the slow server", srv.hits.get("slow.test", 0),
             before + 16)
        r = auth.request("POST", "/verify", {"Content-Type": FORM},
                         urllib.parse.urlencode({"assertion": slow, "audience": AUD}))
        C.eq("the 17th at once: 503", r.status, 503)
        C.eq("... with Retry-After: 1", r.header("Retry-After"), "1")
        j = r.json()
        C.eq("... and a Persona-shaped failure", j, {"status": "failure",
                                                   "reason": "service unavailable"})
        for t in threads:
            t.join()
        C.eq("the 16 got their verdicts", sorted(st for st, _ in results), [200] * 16)
        st, j = verify(auth, w.backed("carol@other.test", w.other))
        C.eq("after they end, remote verification works again", (st, j.get("status")),
             (200, "okay"), j)
    finally:
        C.eq("server exits cleanly", auth.stop(), 0)


def check_not_allowed(w, srv, ca):
    """Loopback is refused unless verify_remote_allow lists it."""
    auth = start(w, srv, ca)
    try:
        hits = dict(srv.hits)
        refused("loopback without verify_remote_allow", auth,
                w.backed("carol@other.test", w.other), "not allowed")
        C.eq("... and nothing was fetched", srv.hits, hits)
    finally:
        C.eq("server exits cleanly", auth.stop(), 0)


def main():
    if vephelp.keytool() is None:
        vephelp.skip("VEP_KEYTOOL is not set to an executable")
    tmp = tempfile.mkdtemp(prefix="vep-vremote-")
    try:
        w = World(tmp)
        ca, crt, key = vephelp.make_ca(tmp, NAMES)
        srv = serve_docs(crt, key)
        auth = start(w, srv, ca, "verify_remote_allow = 127.0.0.1\n")
        try:
            C.group(check_remote, w, srv, auth)
            C.group(check_refusals, w, srv, auth)
        finally:
            C.eq("server exits cleanly", auth.stop(), 0)
        C.group(check_busy, w, srv, ca)
        C.group(check_not_allowed, w, srv, ca)
        srv.shutdown()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
