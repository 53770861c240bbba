"""HTTP limits of authority/core/fixed_limits.h, as the real server enforces
them: LIMIT_HEADER_BYTES (400 + close), LIMIT_BODY_BYTES (413 + close),
LIMIT_URI_BYTES (414), LIMIT_QUERY_PARAMS (400), ambiguous framing (400 +
close: Transfer-Encoding with Content-Length, duplicates, obsolete line
folding; test_http.py has the rest) and the request timeout (connection
closed)."""

import os
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402

HEADER_BYTES = 8 * 1024
BODY_BYTES = 16 * 1024
URI_BYTES = 2048
QUERY_PARAMS = 32
TIMEOUT_S = 1

c = vephelp.Checker("limits")
tmp = tempfile.mkdtemp(prefix="vep-lim-")
keydir = vephelp.demo_keydir(tmp)
a = vephelp.serve(vephelp.write_config(tmp, keydir, extra="request_timeout = %d\n" % TIMEOUT_S),
                  tmp)


def raw(data):
    return vephelp.parse_raw_response(a.raw(data))


def get_with_headers(total):
    """A GET whose request line + headers are exactly total bytes."""
    head = b"GET /pk HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n"
    filler = total - len(head) - len(b"X-Pad: \r\n\r\n")
    return head + b"X-Pad: " + b"a" * filler + b"\r\n\r\n"


# Headers.
r = raw(get_with_headers(HEADER_BYTES - 64))
c.eq("headers just under LIMIT_HEADER_BYTES: 200", r.status, 200)
r = raw(get_with_headers(HEADER_BYTES + 64))
c.eq("headers over LIMIT_HEADER_BYTES: 400", r.status, 400)
c.eq("headers over the limit: connection closed", r.header("Connection"), "close")
r = raw(b"GET /pk?" + b"a" * (HEADER_BYTES + 10) + b" HTTP/1.1\r\nHost: x\r\n\r\n")
c.eq("request line over LIMIT_HEADER_BYTES: 400", r.status, 400)

# Request target.
path = "/pk?x="
ok = path + "a" * (URI_BYTES - len(path))
r = a.get(ok)
c.eq("target of exactly LIMIT_URI_BYTES: served", r.status, 200)
r = a.get(ok + "a")
c.eq("target over LIMIT_URI_BYTES: 414", r.status, 414)
c.check("414 has a JSON error body", r.json().get("error") is not None)

# Query parameters.
q = "&".join("p%d=1" % i for i in range(QUERY_PARAMS))
c.eq("LIMIT_QUERY_PARAMS parameters: served", a.get("/pk?" + q).status, 200)
r = a.get("/pk?" + q + "&one=more")
c.eq("over LIMIT_QUERY_PARAMS: 400", r.status, 400)

# Body.
r = raw(b"POST /pk HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n"
        b"Content-Length: %d\r\n\r\n"
        % BODY_BYTES + b"a" * BODY_BYTES)
c.eq("body of exactly LIMIT_BODY_BYTES reaches the router (405 here)", r.status, 405)
r = raw(b"POST /pk HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (BODY_BYTES + 1))
c.eq("Content-Length over LIMIT_BODY_BYTES: 413 before the body", r.status, 413)
c.eq("413: connection closed", r.header("Connection"), "close")
r = raw(b"POST /pk HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
        b"%x\r\n" % (BODY_BYTES + 1) + b"a" * (BODY_BYTES + 1) + b"\r\n0\r\n\r\n")
c.eq("chunked body over LIMIT_BODY_BYTES: 413", r.status, 413)

# Ambiguous framing (request smuggling through a proxy that reads it
# differently): refused with 400 and the connection closed.
ambiguous = [
    ("Transfer-Encoding with Content-Length",
     b"POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ("two Content-Length headers",
     b"POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
     b"Content-Length: 2\r\n\r\n{}"),
    ("Transfer-Encoding other than chunked",
     b"POST /api/login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n"
     b"Content-Length: 2\r\n\r\n{}"),
    ("obsolete line folding",
     b"GET /.well-known/browserid HTTP/1.1\r\nHost: example.test\r\nX-Folded: a\r\n"
     b" b\r\n\r\n"),
    ("obsolete line folding with a tab",
     b"GET /.well-known/browserid HTTP/1.1\r\nHost: example.test\r\nX-Folded: a\r\n"
     b"\tb\r\n\r\n"),
]
for what, data in ambiguous:
    r = raw(data + b"GET /.well-known/browserid HTTP/1.1\r\nHost: example.test\r\n\r\n")
    c.eq(what + ": 400", r.status, 400)
    c.eq(what + ": connection closed", r.header("Connection"), "close")
    c.check(what + ": the request after it is not read", r.body.count(b"HTTP/1.1") == 0,
            repr(r.body[:80]))
r = raw(b"GET /.well-known/browserid HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n"
        b"X-Spaces: a  b\t c\r\n\r\n")
c.eq("spaces and tabs inside a header value are not folding: 200", r.status, 200)
r = raw(b"\r\nGET /.well-known/browserid HTTP/1.1\r\nHost: example.test\r\n"
        b"Connection: close\r\n\r\n")
c.eq("an empty line before the request line: 400", r.status, 400)
r = raw(b"POST /pk HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n"
        b"Transfer-Encoding: chunked\r\n"
        b"\r\n2\r\n{}\r\n0\r\n\r\n")
c.eq("a plain chunked body reaches the router (405 here)", r.status, 405)

# Request timeout: a slow client is cut off after request_timeout seconds.
s = a.connect()
s.sendall(b"GET /pk HTTP/1.1\r\nHost: exa")
t0 = time.time()
s.settimeout(TIMEOUT_S + 10)
try:
    data = s.recv(4096)
except (ConnectionResetError, socket.timeout):
    data = b""
elapsed = time.time() - t0
s.close()
c.check("slow request: closed without an answer (libevent sends no 408)", data == b"", data[:80])
c.check("slow request: after about request_timeout (%ds)" % TIMEOUT_S,
        TIMEOUT_S - 0.3 <= elapsed <= TIMEOUT_S + 5, "%.2fs" % elapsed)
s = a.connect()
t0 = time.time()
s.settimeout(TIMEOUT_S + 10)
try:
    data = s.recv(4096)
except (ConnectionResetError, socket.timeout):
    data = b"timeout"
elapsed = time.time() - t0
s.close()
c.check("idle connection: closed (EOF)", data == b"", data[:80])
c.check("idle connection: after about request_timeout", elapsed <= TIMEOUT_S + 5,
        "%.2fs" % elapsed)
c.eq("server still answers afterwards", a.get("/pk").status, 200)
c.eq("SIGTERM: exit 0", a.stop(), 0)
sys.exit(c.finish())
