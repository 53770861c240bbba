#!/usr/bin/env python3
"""vep-keytool --fetch against real local HTTP(S) servers (127.0.0.1, port
0): both URL forms, delegation with --connect, the transport rules
(redirect, content type, status, body cap, timeout) and TLS verification."""
import http.server
import os
import shutil
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402

C = vephelp.Checker("keytool_fetch")
AUD = "https://rp.example"


class Handler(http.server.BaseHTTPRequestHandler):
    routes = {}  # (host-without-port or "*", domain param) -> (status, ctype, body)
    log = []

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query)
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        Handler.log.append((host, self.path))
        # Logged before replying: the client may exit as soon as it has the body.
        Handler.log.append(("domain", (q.get("domain") or [""])[0]))
        if u.path.startswith("/slow"):
            time.sleep(5)
        key = (host, u.path) if (host, u.path) in self.routes else ("*", u.path)
        status, ctype, body, extra = self.routes.get(key, (404, "text/plain", "no", {}))
        body = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def start(k, tls_ctx=None):
    """A local HTTP(S) server of Handler's routes until k is closed: its port."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls_ctx:
        srv.socket = tls_ctx.wrap_socket(srv.socket, server_side=True)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    k.add_cleanup(srv.server_close)
    k.add_cleanup(srv.shutdown)
    return srv.server_address[1]


def signed(k):
    """Every group's start: k.signed() for dave@example.test, and the
    server serves that key directory's support document."""
    Handler.routes = {}
    Handler.log = []
    k.signed("dave@example.test")
    k.docjson = k.ok("support-doc", "--dir", k.d).strip()
    Handler.routes[("*", "/.well-known/browserid")] = (200, "application/json", k.docjson, {})


def va(k, url, *extra, inp=None):
    return k.kt("verify-assertion", "--audience", AUD, "--fetch", url, *extra, inp or k.b)


def url_forms(k):
    signed(k)
    port = start(k)
    base = "http://127.0.0.1:%d" % port
    rc, out, err = va(k, base)
    C.eq("--fetch http://HOST:PORT: verified", (rc, out), (0, "dave@example.test\n"), err)
    C.check("... asked for the assertion's domain", ("domain", "example.test") in Handler.log,
            Handler.log)
    rc, out, err = va(k, base + "/")
    C.eq("--fetch http://HOST:PORT/: exit 0", rc, 0, err)
    rc, out, err = va(k, base + "/.well-known/browserid?domain=example.test")
    C.eq("--fetch of the whole document URL: exit 0", rc, 0, err)
    rc, out, err = k.kt("verify-cert", "--fetch", base, k.c)
    C.eq("verify-cert --fetch: verified", (rc, out), (0, "dave@example.test\n"), err)


def transport_rules(k):
    signed(k)
    port = start(k)
    base = "http://127.0.0.1:%d" % port
    wk = "/.well-known/browserid"
    cases = [
        ((302, "application/json", k.docjson, {"Location": "http://x/"}), 1, "redirect"),
        ((200, "text/html", k.docjson, {}), 1, "application/json"),
        ((500, "application/json", k.docjson, {}), 1, "status 500"),
        ((200, "application/json", "{", {}), 1, "support document"),
        ((200, "application/json", " " * (64 * 1024 + 1), {}), 1, "too large"),
    ]
    for route, want, msg in cases:
        Handler.routes[("*", wk)] = route
        rc, out, err = va(k, base)
        C.eq("answer %d %s: refused, exit %d" % (route[0], route[1], want), (rc, out),
             (want, ""), err)
        C.check("answer %d %s: says %s" % (route[0], route[1], msg), msg in err, err)
    # exactly at the cap is read (then parsed: padding is fine JSON)
    Handler.routes[("*", wk)] = (200, "application/json; charset=utf-8",
                                 k.docjson + " " * (64 * 1024 - len(k.docjson)), {})
    C.eq("a document of exactly 64 KiB: read, exit 0", va(k, base)[0], 0)
    # nobody listening: I/O error
    rc, _, err = va(k, "http://127.0.0.1:1")
    C.eq("nobody listening: exit 2", rc, 2, err)
    # not a URL
    C.eq("an ftp:// URL: exit 2", va(k, "ftp://127.0.0.1/")[0], 2)


def timeout(k):
    signed(k)
    port = start(k)
    t0 = time.time()
    rc, _, err = va(k, "http://127.0.0.1:%d/slow/.well-known/browserid" % port,
                    "--timeout", "1")
    C.eq("a server slower than --timeout 1: exit 2", rc, 2, err)
    # timeout 1 s + 1 s backstop, slack for load
    C.check("... within 8 s", time.time() - t0 < 8, "%.1f s" % (time.time() - t0))
    C.eq("--timeout 0: exit 2", va(k, "http://127.0.0.1:%d" % port, "--timeout", "0")[0], 2)
    C.eq("--timeout 121: exit 2", va(k, "http://127.0.0.1:%d" % port, "--timeout", "121")[0], 2)


def delegation_over_connect(k):
    signed(k)
    port = start(k)
    c = k.cert(["--dir", k.d], "erin@example.test", k.u, "--issuer", "idp.example")
    b = k.backed(k.u, c)
    Handler.routes[("example.test", "/.well-known/browserid")] = (
        200, "application/json", '{"authority":"idp.example"}', {})
    url = "http://example.test/.well-known/browserid?domain=example.test"
    rc, out, err = va(k, url, "--connect", "127.0.0.1:%d" % port, inp=b)
    C.eq("delegated over --connect: verified", (rc, out), (0, "erin@example.test\n"), err)
    C.check("... the authority's document asked for by its name",
            ("idp.example", "/.well-known/browserid?domain=example.test") in Handler.log,
            Handler.log)
    # the same assertion, but the domain's own keys are expected: refused
    rc, _, err = va(k, url, "--connect", "127.0.0.1:%d" % port)
    C.eq("a certificate of the domain itself, which delegates: exit 1", rc, 1, err)
    C.check("... says issuer", "issuer" in err, err)
    C.eq("--connect nope: exit 2", va(k, url, "--connect", "nope")[0], 2)


def https(k):
    if not shutil.which("openssl"):
        print("skip https: no openssl CLI")
        return
    signed(k)
    key, crt = k.path("tls.key"), k.path("tls.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-keyout", key, "-out", crt, "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(crt, key)
    port = start(k, ctx)
    rc, out, err = va(k, "https://127.0.0.1:%d" % port, "--cafile", crt)
    C.eq("https://127.0.0.1 with --cafile: verified", (rc, out), (0, "dave@example.test\n"),
         err)
    rc, out, err = va(k, "https://localhost:%d" % port, "--cafile", crt)
    C.eq("https://localhost with --cafile: exit 0", rc, 0, err)
    # untrusted chain (system CAs only): refused, an I/O error
    rc, _, err = va(k, "https://127.0.0.1:%d" % port)
    C.eq("an untrusted chain: exit 2", rc, 2, err)
    C.check("... says TLS", "TLS" in err, err)
    # right CA, wrong name (connect elsewhere, keep the name)
    rc, _, err = va(k, "https://wrong.example:%d" % port, "--cafile", crt,
                    "--connect", "127.0.0.1:%d" % port)
    C.eq("the right CA, another name: exit 2", rc, 2, err)


if __name__ == "__main__":
    sys.exit(vephelp.keytool_main(C, [
        url_forms, transport_rules, timeout, delegation_over_connect, https]))
