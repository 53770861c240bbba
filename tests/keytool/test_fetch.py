#!/usr/bin/env python3
"""vep-keytool --fetch against real local HTTP(S) servers (127.0.0.1, port
0): both URL forms, delegation with --connect, the transport rules
(redirect, content type, status, body cap, timeout) and TLS verification."""
import http.server
import json
import os
import shutil
import ssl
import subprocess
import threading
import time
import urllib.parse

from kthelp import KeytoolCase, main

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


class Fetch(KeytoolCase):
    def start(self, tls_ctx=None):
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls_ctx:
            srv.socket = tls_ctx.wrap_socket(srv.socket, server_side=True)
        t = threading.Thread(target=srv.serve_forever, daemon=True)
        t.start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        return srv.server_address[1]

    def setUp(self):
        super().setUp()
        Handler.routes = {}
        Handler.log = []
        self.d = self.keydir()
        self.u = self.user_key(alg="DS128")
        self.c = self.cert(["--dir", self.d], "dave@example.test", self.u)
        self.b = self.backed(self.u, self.c)
        self.docjson = self.ok("support-doc", "--dir", self.d).strip()
        Handler.routes[("*", "/.well-known/browserid")] = (200, "application/json", self.docjson, {})

    def va(self, url, *extra, inp=None):
        return self.kt("verify-assertion", "--audience", AUD, "--fetch", url, *extra, inp or self.b)

    def test_url_forms(self):
        port = self.start()
        base = "http://127.0.0.1:%d" % port
        rc, out, err = self.va(base)
        self.assertEqual((rc, out), (0, "dave@example.test\n"), err)
        self.assertIn(("domain", "example.test"), Handler.log)
        rc, out, err = self.va(base + "/")
        self.assertEqual(rc, 0, err)
        rc, out, err = self.va(base + "/.well-known/browserid?domain=example.test")
        self.assertEqual(rc, 0, err)
        rc, out, err = self.kt("verify-cert", "--fetch", base, self.c)
        self.assertEqual((rc, out), (0, "dave@example.test\n"), err)

    def test_transport_rules(self):
        port = self.start()
        base = "http://127.0.0.1:%d" % port
        wk = "/.well-known/browserid"
        cases = [
            ((302, "application/json", self.docjson, {"Location": "http://x/"}), 1, "redirect"),
            ((200, "text/html", self.docjson, {}), 1, "application/json"),
            ((500, "application/json", self.docjson, {}), 1, "status 500"),
            ((200, "application/json", "{", {}), 1, "support document"),
            ((200, "application/json", " " * (64 * 1024 + 1), {}), 1, "too large"),
        ]
        for route, want, msg in cases:
            Handler.routes[("*", wk)] = route
            rc, out, err = self.va(base)
            self.assertEqual((rc, out), (want, ""), (route[:2], err))
            self.assertIn(msg, err)
        # exactly at the cap is read (then parsed: padding is fine JSON)
        Handler.routes[("*", wk)] = (200, "application/json; charset=utf-8",
                                     self.docjson + " " * (64 * 1024 - len(self.docjson)), {})
        self.assertEqual(self.va(base)[0], 0)
        # nobody listening: I/O error
        rc, _, err = self.va("http://127.0.0.1:1")
        self.assertEqual(rc, 2, err)
        # not a URL
        self.assertEqual(self.va("ftp://127.0.0.1/")[0], 2)

    def test_timeout(self):
        port = self.start()
        t0 = time.time()
        rc, _, err = self.va("http://127.0.0.1:%d/slow/.well-known/browserid" % port,
                             "--timeout", "1")
        self.assertEqual(rc, 2, err)
        self.assertLess(time.time() - t0, 8)  # timeout 1 s + 1 s backstop, slack for load
        self.assertEqual(self.va("http://127.0.0.1:%d" % port, "--timeout", "0")[0], 2)
        self.assertEqual(self.va("http://127.0.0.1:%d" % port, "--timeout", "121")[0], 2)

    def test_delegation_over_connect(self):
        port = self.start()
        c = self.cert(["--dir", self.d], "erin@example.test", self.u, "--issuer", "idp.example")
        b = self.backed(self.u, c)
        Handler.routes[("example.test", "/.well-known/browserid")] = (
            200, "application/json", '{"authority":"idp.example"}', {})
        url = "http://example.test/.well-known/browserid?domain=example.test"
        rc, out, err = self.va(url, "--connect", "127.0.0.1:%d" % port, inp=b)
        self.assertEqual((rc, out), (0, "erin@example.test\n"), err)
        self.assertIn(("idp.example", "/.well-known/browserid?domain=example.test"), Handler.log)
        # the same assertion, but the domain's own keys are expected: refused
        rc, _, err = self.va(url, "--connect", "127.0.0.1:%d" % port)
        self.assertEqual(rc, 1, err)
        self.assertIn("issuer", err)
        self.assertEqual(self.va(url, "--connect", "nope")[0], 2)

    def test_https(self):
        if not shutil.which("openssl"):
            self.skipTest("no openssl CLI")
        key, crt = self.path("tls.key"), self.path("tls.crt")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                        "-keyout", key, "-out", crt, "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                       check=True, capture_output=True)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)
        port = self.start(ctx)
        rc, out, err = self.va("https://127.0.0.1:%d" % port, "--cafile", crt)
        self.assertEqual((rc, out), (0, "dave@example.test\n"), err)
        rc, out, err = self.va("https://localhost:%d" % port, "--cafile", crt)
        self.assertEqual(rc, 0, err)
        # untrusted chain (system CAs only): refused, an I/O error
        rc, _, err = self.va("https://127.0.0.1:%d" % port)
        self.assertEqual(rc, 2, err)
        self.assertIn("TLS", err)
        # right CA, wrong name (connect elsewhere, keep the name)
        rc, _, err = self.va("https://wrong.example:%d" % port, "--cafile", crt,
                             "--connect", "127.0.0.1:%d" % port)
        self.assertEqual(rc, 2, err)


if __name__ == "__main__":
    main()
