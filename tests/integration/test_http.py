"""HTTP at the edge, byte by byte, with raw sockets:

- the over-capacity 503 says exactly as many bytes as it sends;
- strict framing (a reverse proxy in front turns leniency into request
  smuggling): each ambiguous request, first on its connection or pipelined
  behind a good one, gets our JSON 400 (413, 417, 501) with the security
  headers and the connection closed, and the requests before it are still
  answered;
- Host: only served domains, public_url hosts and the listen address
  (421 otherwise, also behind the DNS name of a rebinding attack);
- max_connections_per_addr: one address cannot hold every connection, while
  another address and trusted proxies are still served."""

import email.utils
import os
import re
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402

HEADER_BYTES = 8 * 1024      # LIMIT_HEADER_BYTES
BODY_BYTES = 16 * 1024       # LIMIT_BODY_BYTES
READ_S = 5 * vephelp.TIME_SCALE
GOOD = b"GET /.well-known/browserid HTTP/1.1\r\nHost: example.test\r\n\r\n"

c = vephelp.Checker("http")
tmp = tempfile.mkdtemp(prefix="vep-http-")
keydir = vephelp.demo_keydir(tmp)


def authority(name, extra="", domain_extra=""):
    return vephelp.serve(vephelp.write_config(tmp, keydir, name, extra, domain_extra), tmp)


def exchange(a, data, source=None):
    """Sends data on a new connection (from source, an address to bind),
    reads until the server closes it: (bytes, closed by the server)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(READ_S)
    if source:
        s.bind((source, 0))
    s.connect((a.host, a.port))
    chunks, closed = [], False
    try:
        s.sendall(data)
        while True:
            d = s.recv(65536)
            if not d:
                closed = True
                break
            chunks.append(d)
    except socket.timeout:
        pass
    except ConnectionResetError:
        closed = True
    finally:
        s.close()
    return b"".join(chunks), closed


def responses(data):
    """Splits a byte stream into responses (by Content-Length)."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            out.append(vephelp.parse_raw_response(data))
            break
        r = vephelp.parse_raw_response(head + b"\r\n\r\n")
        n = int(r.header("Content-Length") or 0)
        if r.status == 304 or r.status < 200:
            n = 0
        r.body, data = rest[:n], rest[n:]
        r.declared = r.header("Content-Length")
        out.append(r)
    return out


def ours(what, r, status):
    """r is one of our JSON error answers with the security headers."""
    c.eq(what + ": %d" % status, r.status, status)
    c.eq(what + ": Content-Length is the body's length", r.header("Content-Length"),
         str(len(r.body)))
    try:
        err = r.json().get("error")
    except ValueError:
        err = None
    c.check(what + ": JSON error body", isinstance(err, str) and err, repr(r.body[:80]))
    c.eq(what + ": nosniff", r.header("X-Content-Type-Options"), "nosniff")
    c.check(what + ": CSP", (r.header("Content-Security-Policy") or "").startswith(
        "default-src 'none'"))
    c.eq(what + ": no-store", r.header("Cache-Control"), "no-store")


def refused(a, what, data, status=400, before=0):
    """data (after `before` good pipelined requests) is refused and the
    connection closed; nothing after it is answered."""
    got, closed = exchange(a, data + GOOD)
    rs = responses(got)
    c.eq(what + ": %d answers before the refusal, then one" % before, len(rs), before + 1)
    for i in range(min(before, len(rs))):
        c.eq(what + ": pipelined request %d before it answered 200" % (i + 1), rs[i].status,
             200)
    if len(rs) > before:
        ours(what, rs[before], status)
        c.eq(what + ": Connection: close", rs[before].header("Connection"), "close")
    c.check(what + ": connection closed", closed)


# 6. The over-capacity 503, byte by byte.
a = authority("busy", "workers = 1\nmax_connections = 2\n")
held = [a.connect() for _ in range(2)]
for x in held:
    x.sendall(GOOD)
    x.recv(65536)
got, closed = exchange(a, GOOD)
rs = responses(got)
c.eq("over max_connections: one answer", len(rs), 1)
if rs:
    ours("over max_connections", rs[0], 503)
    c.eq("over max_connections: exactly the declared bytes, nothing more",
         got.partition(b"\r\n\r\n")[2], (b'{"error":"service unavailable",'
                                              b'"status":"failure","reason":"service unavailable"}'))
    c.eq("over max_connections: Retry-After", rs[0].header("Retry-After"), "1")
c.check("over max_connections: closed", closed)
for x in held:
    x.close()
c.eq("busy: exit status 0", a.stop(), 0)

# 7. Framing.
a = authority("strict", domain_extra="public_url = https://id.example.org\n")
got, closed = exchange(a, GOOD + GOOD.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
c.eq("two good pipelined requests: two 200", [r.status for r in responses(got)], [200, 200])
# The head byte by byte: the status line, an IMF-fixdate of now, the
# length and cache lifetime in decimal; HTTP/1.0 gets a 1.0 status line.
for version in (b"1.1", b"1.0"):
    got, _ = exchange(a, GOOD.replace(b"HTTP/1.1", b"HTTP/" + version).replace(
        b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
    what = "HTTP/%s answer" % version.decode()
    c.check(what + ": status line", got.startswith(b"HTTP/" + version + b" 200 OK\r\n"),
            repr(got[:40]))
    r = responses(got)[0]
    c.eq(what + ": Content-Length in decimal", r.header("Content-Length"), str(len(r.body)))
    c.eq(what + ": Cache-Control", r.header("Cache-Control"), "public, max-age=300")
    date = r.header("Date")
    if version == b"1.1":
        c.check(what + ": Date is an IMF-fixdate", date is not None and re.fullmatch(
            r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct"
            r"|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT", date), repr(date))
        try:
            skew = abs(email.utils.parsedate_to_datetime(date).timestamp() - time.time())
        except (TypeError, ValueError):
            skew = None
        c.check(what + ": Date is now", skew is not None and skew < 5, repr(date))
got, _ = exchange(a, b"POST /pk HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
c.eq("a plain chunked body reaches the router (405)", responses(got)[0].status, 405)
got, _ = exchange(a, b"POST /pk HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n"
                     b"Content-Length:\t2 \r\n\r\n{}")
c.eq("Content-Length with OWS around its digits: served (405)", responses(got)[0].status, 405)
got, _ = exchange(a, b"GET /.well-known/browserid HTTP/1.0\r\n\r\n")
c.eq("HTTP/1.0 without Host: served", responses(got)[0].status, 200)
got, _ = exchange(a, b"POST /pk HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n"
                     b"Expect: 100-continue\r\nContent-Length: 2\r\n\r\n{}")
c.eq("Expect: 100-continue is fine", responses(got)[-1].status, 405)

P = b"POST /pk HTTP/1.1\r\nHost: example.test\r\n"
G = b"GET /.well-known/browserid HTTP/1.1\r\n"
bad = [
    ("HTTP/1.1 without Host", G + b"\r\n"),
    ("two Host headers", G + b"Host: example.test\r\nHost: example.test\r\n\r\n"),
    ("obs-fold", G + b"Host: example.test\r\nX-A: a\r\n b\r\n\r\n"),
    ("obs-fold with a tab", G + b"Host: example.test\r\nX-A: a\r\n\tb\r\n\r\n"),
    ("Content-Length +2", P + b"Content-Length: +2\r\n\r\n{}"),
    ("Content-Length 0x2", P + b"Content-Length: 0x2\r\n\r\n{}"),
    ("Content-Length -0", P + b"Content-Length: -0\r\n\r\n"),
    ("Content-Length 2 2", P + b"Content-Length: 2 2\r\n\r\n{}"),
    ("Content-Length empty", P + b"Content-Length: \r\n\r\n"),
    ("two equal Content-Lengths", P + b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}"),
    ("chunk size 0x2", P + b"Transfer-Encoding: chunked\r\n\r\n0x2\r\n{}\r\n0\r\n\r\n"),
    ("chunk size +2", P + b"Transfer-Encoding: chunked\r\n\r\n+2\r\n{}\r\n0\r\n\r\n"),
    ("chunk size with a space", P + b"Transfer-Encoding: chunked\r\n\r\n2 \r\n{}\r\n0\r\n\r\n"),
    ("chunk extension", P + b"Transfer-Encoding: chunked\r\n\r\n2;x=1\r\n{}\r\n0\r\n\r\n"),
    ("chunk data without CRLF", P + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}0\r\n\r\n"),
    ("trailer field", P + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"
                          b"Origin: http://example.test\r\n\r\n"),
    ("NUL in a header value", G + b"Host: example.test\r\nX-A: a\x00b\r\n\r\n"),
    ("control character in a header value", G + b"Host: example.test\r\nX-A: a\x01b\r\n\r\n"),
    ("DEL in a header value", G + b"Host: example.test\r\nX-A: a\x7fb\r\n\r\n"),
    ("bare CR in a header value", G + b"Host: example.test\r\nX-A: a\rb\r\n\r\n"),
    ("bare LF ending a header line", G + b"Host: example.test\nX-A: b\r\n\r\n"),
    ("space in a header name", G + b"Host: example.test\r\nX A: b\r\n\r\n"),
    ("space before the colon", G + b"Host : example.test\r\n\r\n"),
    ("Content-Length with a space before the colon",
     P + b"Content-Length : 2\r\n\r\n{}"),
    ("header line without a colon", G + b"Host: example.test\r\nX-A\r\n\r\n"),
    ("Transfer-Encoding identity", P + b"Transfer-Encoding: identity\r\n\r\n"),
    ("Transfer-Encoding chunked, chunked",
     P + b"Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n"),
    ("Transfer-Encoding xchunked", P + b"Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"),
    ("two Transfer-Encodings", P + b"Transfer-Encoding: chunked\r\n"
                               b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ("Transfer-Encoding with Content-Length",
     P + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ("Transfer-Encoding in HTTP/1.0",
     b"POST /pk HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ("a body on HEAD (libevent would read it as the next request)",
     b"HEAD /pk HTTP/1.1\r\nHost: example.test\r\nContent-Length: %d\r\n\r\n" % len(GOOD)),
    ("HTTP/1.2", b"GET /pk HTTP/1.2\r\nHost: example.test\r\n\r\n"),
    ("two spaces in the request line", b"GET  /pk HTTP/1.1\r\nHost: example.test\r\n\r\n"),
    ("an empty line before the request line", b"\r\n" + GOOD),
    ("head over LIMIT_HEADER_BYTES",
     G + b"Host: example.test\r\nX-Pad: " + b"a" * HEADER_BYTES + b"\r\n\r\n"),
]
for what, data in bad:
    refused(a, what, data)
    refused(a, "pipelined after a good request: " + what, GOOD + data, before=1)
refused(a, "unknown method", b"BREW /pk HTTP/1.1\r\nHost: example.test\r\n\r\n", 501)
refused(a, "CONNECT (libevent would answer its own page)",
        b"CONNECT /pk HTTP/1.1\r\nHost: example.test\r\n\r\n", 501)
refused(a, "an absolute-form target", b"GET http://example.test/pk HTTP/1.1\r\n"
        b"Host: example.test\r\n\r\n")
refused(a, "a target starting with // (libevent would answer its own page)",
        b"GET //[::1/pk HTTP/1.1\r\nHost: example.test\r\n\r\n")
refused(a, "Expect other than 100-continue",
        P + b"Expect: tea\r\nContent-Length: 2\r\n\r\n{}", 417)
refused(a, "Content-Length over LIMIT_BODY_BYTES",
        P + b"Content-Length: %d\r\n\r\n" % (BODY_BYTES + 1), 413)
refused(a, "chunked body over LIMIT_BODY_BYTES",
        P + b"Transfer-Encoding: chunked\r\n\r\n%x\r\n" % (BODY_BYTES + 1)
        + b"a" * (BODY_BYTES + 1) + b"\r\n0\r\n\r\n", 413)

# A pipelined refusal behind a request a handler holds (the bad bytes
# arrive while it is answered): the first is still answered.
s = a.connect()
s.sendall(GOOD)
first = s.recv(65536)
s.sendall(GOOD + G + b"Host: example.test\r\nX-A: a\r\n b\r\n\r\n" + GOOD)
rest = b""
s.settimeout(READ_S)
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        rest += d
except socket.timeout:
    pass
s.close()
rs = responses(first + rest)
c.eq("keep-alive, then a pipelined pair with a folded second: 200, 200, 400",
     [r.status for r in rs], [200, 200, 400])

# The bytes of a refused request trickling in: refused as soon as the bad
# byte arrives, with its head not even complete (evhttp already parsed the
# first lines).
s = a.connect()
s.sendall(G + b"Host: example.test\r\n")
time.sleep(0.2)
s.sendall(b"X-A: a\r\n b\r\n")
s.settimeout(READ_S)
try:
    got = s.recv(65536)
except socket.timeout:
    got = b""
s.close()
c.eq("a folded line arriving in a later packet: 400 at once",
     vephelp.parse_raw_response(got).status, 400)

# 8. Host.
port = a.port
hosts = [
    ("example.test", 200), ("EXAMPLE.test.", 200), ("example.test:443", 200),
    ("127.0.0.1:%d" % port, 200), ("localhost:%d" % port, 200), ("LocalHost", 200),
    ("evil.example", 421), ("evil.example:%d" % port, 421), ("127.0.0.2:%d" % port, 421),
    ("[::1]:%d" % port, 421), ("10.0.0.1", 421), ("example.test.evil.example", 421),
    ("example.test:0", 400), ("example.test:65536", 400), ("example.test:", 400),
    ("exa mple.test", 400),
]
for host, want in hosts:
    r = a.get("/.well-known/browserid", {"Host": host})
    c.eq("Host %r: %d" % (host, want), r.status, want)
    if want == 421:
        ours("Host %r" % host, r, 421)
r = a.get("/.well-known/browserid", {"Host": "id.example.org"})
c.check("Host: the public_url's host is not refused", r.status not in (400, 421), r.status)
r = a.get("/.well-known/host-meta", {"Host": "rebind.attacker.example"})
c.eq("DNS rebinding: host-meta under the attacker's name: 421", r.status, 421)
c.check("DNS rebinding: nothing of the attacker's name in the answer",
        b"attacker" not in r.body, r.body[:120])
r = a.get("/api/session", {"Host": "rebind.attacker.example"})
c.eq("DNS rebinding: the session API: 421", r.status, 421)
c.eq("strict: exit status 0", a.stop(), 0)

# 10. Connections per address: workers = 2, so the count spans loops.
CAP = 6
a = authority("peraddr", "workers = 2\nmax_connections_per_addr = %d\n"
              "trusted_proxies = 127.0.0.3\n" % CAP)


def served(sock):
    try:
        sock.sendall(GOOD)
        return sock.recv(65536).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def open_from(source):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(READ_S)
    s.bind((source, 0))
    s.connect((a.host, a.port))
    return s


held = [open_from("127.0.0.1") for _ in range(CAP)]
c.eq("max_connections_per_addr = %d: that many from 127.0.0.1 served" % CAP,
     sum(1 for x in held if served(x)), CAP)
extra = []
for _ in range(3):
    got, closed = exchange(a, GOOD, source="127.0.0.1")
    extra.append((responses(got)[0].status if got else None, closed))
c.eq("beyond it: 503 and closed, each time", extra, [(503, True)] * 3)
got, _ = exchange(a, GOOD, source="127.0.0.1")
if got:
    ours("over max_connections_per_addr", responses(got)[0], 503)
got, closed = exchange(a, GOOD.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"),
                       source="127.0.0.2")
c.eq("meanwhile another address is served", responses(got)[0].status if got else None, 200)
proxied = [open_from("127.0.0.3") for _ in range(CAP + 2)]
c.eq("a trusted proxy is exempt: %d connections served" % (CAP + 2),
     sum(1 for x in proxied if served(x)), CAP + 2)
for x in proxied:
    x.close()
held.pop().close()
time.sleep(0.3)
x = open_from("127.0.0.1")
c.check("one closed: one more from 127.0.0.1 served", served(x))
x.close()
for x in held:
    x.close()
c.eq("peraddr: exit status 0", a.stop(), 0)

# The key's bounds.
for bad_value in ("-1", "1000001", "many"):
    conf = vephelp.write(os.path.join(tmp, "bad.conf"),
                         "state_dir = %s\nmax_connections_per_addr = %s\n"
                         "[domain example.test]\nkey_dir = %s\n"
                         % (os.path.join(tmp, "state-busy"), bad_value, keydir))
    rc, out, err = vephelp.run(["--check", "--config", conf])
    c.check("max_connections_per_addr = %s refused, naming the key" % bad_value,
            rc != 0 and "max_connections_per_addr" in err, (rc, err[-200:]))

sys.exit(c.finish())
