"""Deadlines and caps of authority/edge/conn.c against the real server: a request
trickling in byte by byte is closed at header_timeout / body_timeout (libevent's
own timeouts restart with every byte), while 1,000 such connections leave a
probe unharmed; max_connections answers 503 and closes the ones beyond it,
and service resumes when they go; running out of descriptors neither spins
nor crashes; a client that reads slowly still gets every pipelined answer
whole (answers are written straight to the socket, the rest when it drains)."""

import os
import resource
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402

HEADER_S = 2
BODY_S = 2
SLOW_CONNS = 1000

c = vephelp.Checker("deadlines")
tmp = tempfile.mkdtemp(prefix="vep-dl-")
keydir = vephelp.demo_keydir(tmp)


def authority(name, extra, nofile=None):
    # Every client here is 127.0.0.1: the per-address cap (test_http.py's)
    # is off, so the caps and deadlines under test are the ones that act.
    conf = vephelp.write_config(tmp, keydir, name, "log_level = warn\n"
                                "max_connections_per_addr = 0\n" + extra)
    return vephelp.serve(conf, tmp, nofile=nofile)


def closed_after(s, trickle, limit):
    """Sends trickle one byte every 0.25 s until the server closes s;
    returns the seconds it took (None if still open after limit)."""
    s.setblocking(False)
    start = time.monotonic()
    i = 0
    while time.monotonic() - start < limit:
        try:
            data = s.recv(4096)
            if data == b"":
                return time.monotonic() - start
        except BlockingIOError:
            pass
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic() - start
        try:
            s.send(trickle[i % len(trickle):i % len(trickle) + 1])
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic() - start
        i += 1
        time.sleep(0.25)
    return None


def probe(a):
    try:
        return a.get("/.well-known/browserid").status
    except OSError as e:
        return str(e)


def open_clients(a, n):
    """Up to n idle connections to a (fewer if connecting fails)."""
    socks = []
    for _ in range(n):
        try:
            socks.append(socket.create_connection((a.host, a.port), timeout=2))
        except OSError:
            break
    return socks


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# Room for our own 1,000 sockets.
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 4096), hard), hard))

a = authority("deadline", "header_timeout = %d\nbody_timeout = %d\nrequest_timeout = 30\n"
              % (HEADER_S, BODY_S))

# Headers trickling in: closed at header_timeout (+1 s), not kept alive by
# every byte as libevent's idle timeout would be.
s = a.connect()
s.sendall(b"GET /.well-known/browserid HTTP/1.1\r\n")
t = closed_after(s, b"X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", HEADER_S + 5)
s.close()
c.check("headers one byte every 0.25 s: closed at header_timeout (+1 s)",
        t is not None and HEADER_S - 0.3 <= t <= HEADER_S + 1, "closed after %r s" % t)

# A body trickling in: closed body_timeout after the headers ended.
s = a.connect()
s.sendall(b"POST /api/login HTTP/1.1\r\nHost: example.test\r\n"
          b"Content-Type: application/json\r\nContent-Length: 200\r\n\r\n")
t = closed_after(s, b"{" + b" " * 198 + b"}", BODY_S + 5)
s.close()
c.check("body one byte every 0.25 s: closed at body_timeout (+1 s)",
        t is not None and BODY_S - 0.3 <= t <= BODY_S + 1, "closed after %r s" % t)

# Nothing sent at all: the first request's deadline runs from the accept.
gone, t = vephelp.wait_closed(a.connect(), HEADER_S + 5)
c.check("a silent connection: closed at header_timeout (+1 s)",
        gone and t <= HEADER_S + 1, "after %.2f s" % t)

# Keep-alive is not a request in progress: a pause between two requests on
# one connection is up to request_timeout, not header_timeout.
s = a.connect()
req = b"GET /.well-known/browserid HTTP/1.1\r\nHost: example.test\r\n\r\n"
s.sendall(req)
first = s.recv(65536)
time.sleep(HEADER_S + 1)
s.sendall(req)
second = s.recv(65536)
s.close()
c.check("keep-alive: a second request after a pause longer than header_timeout is served",
        first.startswith(b"HTTP/1.1 200") and second.startswith(b"HTTP/1.1 200"),
        repr(second[:40]))

# Pipelined requests in one write are all answered.
s = a.connect()
s.sendall(req * 3)
s.settimeout(5)
got = b""
while got.count(b"HTTP/1.1 200") < 3:
    chunk = s.recv(65536)
    if not chunk:
        break
    got += chunk
s.close()
c.eq("three pipelined requests: three answers", got.count(b"HTTP/1.1 200"), 3)

# A client that reads slowly: answers the socket cannot take at once (the
# server writes each one straight to the socket, the rest once it drains)
# all arrive, whole and in order. 100 pipelined GETs of a 14 KiB file into
# a 4 KiB receive buffer, read only after a pause.
def read_answers(s, n, limit):
    """n HTTP/1.1 answers read from s: (status, body) each, Content-Length framed."""
    buf, out = b"", []
    end = time.monotonic() + limit
    while len(out) < n and time.monotonic() < end:
        head_end = buf.find(b"\r\n\r\n")
        if head_end >= 0:
            head = buf[:head_end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                k, _, v = line.partition(":")
                if k.strip().lower() == "content-length":
                    length = int(v.strip())
            if len(buf) >= head_end + 4 + length:
                out.append((head.split(" ")[1], buf[head_end + 4:head_end + 4 + length]))
                buf = buf[head_end + 4 + length:]
                continue
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return out


want = a.get("/vep.js").body
slow = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
slow.settimeout(10)
slow.connect((a.host, a.port))
slow.sendall(b"GET /vep.js HTTP/1.1\r\nHost: example.test\r\n\r\n" * 100)
time.sleep(0.5)
answers = read_answers(slow, 100, 20)
slow.close()
c.check("a slow reader: 100 pipelined answers of %d bytes, whole and in order" % len(want),
        len(want) > 8192 and len(answers) == 100 and
        all(st == "200" and body == want for st, body in answers),
        "%d answers, statuses %r" % (len(answers), sorted({st for st, _ in answers})))

# 1,000 slow connections and a probe every 100 ms: no probe fails, and the
# slow ones are all closed by their deadline.
slow = []
for i in range(SLOW_CONNS):
    try:
        x = socket.create_connection((a.host, a.port), timeout=5)
        x.setblocking(False)
        x.send(b"GET / HTTP/1.1\r\n")
        slow.append(x)
    except OSError:
        break
c.eq("%d slow connections opened" % SLOW_CONNS, len(slow), SLOW_CONNS)
failures = []
start = time.monotonic()
n = 0
while time.monotonic() - start < HEADER_S + 1.5:
    st = probe(a)
    n += 1
    if st != 200:
        failures.append(st)
    for x in slow:
        try:
            x.send(b"X")
        except OSError:
            pass
    time.sleep(0.1)
c.check("probes every 100 ms during %d slow connections: none failed (%d probes)"
        % (SLOW_CONNS, n), not failures and n >= 10, repr(failures[:5]))
open_after = 0
for x in slow:
    try:
        if x.recv(1) != b"":
            open_after += 1
    except BlockingIOError:
        open_after += 1
    except OSError:
        pass
    x.close()
c.eq("all slow connections closed by their deadline", open_after, 0)
c.eq("server survives: exit status 0", a.stop(), 0)

# The connection cap: one loop, so its share is exact.
CAP = 20
a = authority("cap", "workers = 1\nmax_connections = %d\n" % CAP)
held = [a.connect() for _ in range(CAP)]
for x in held:   # make sure each is accepted and served
    x.sendall(req)
ok = sum(1 for x in held if x.recv(65536).startswith(b"HTTP/1.1 200"))
c.eq("max_connections = %d: that many served" % CAP, ok, CAP)
start = time.monotonic()
extra = a.raw(req, timeout=3)
t = time.monotonic() - start
r = vephelp.parse_raw_response(extra)
c.check("one over the cap: 503 and closed within 1 s", r.status == 503 and t < 1,
        "status %r after %.2f s" % (r.status, t))
c.eq("503 over the cap says when to retry", r.header("Retry-After"), "1")
for x in held:
    x.close()
time.sleep(0.3)
c.eq("service resumes when connections close", probe(a), 200)
c.eq("server survives the cap: exit status 0", a.stop(), 0)

# Out of descriptors: 256 of them and 300 clients. No busy loop, no crash.
a = authority("nofile", "workers = 1\nmax_connections = 1000\n", nofile=(256, 256))
clients = open_clients(a, 300)
time.sleep(0.5)
before = cpu_s(a.proc.pid)
time.sleep(2)
used = cpu_s(a.proc.pid) - before
c.check("300 clients over a 256-descriptor limit: no busy loop (CPU %.2f s in 2 s)" % used,
        used < 0.5)
c.check("still running", a.proc.poll() is None)
c.check("the shortage is logged", "pausing new connections" in a.stderr(), a.stderr()[-500:])
for x in clients:
    x.close()
time.sleep(0.5)
c.eq("service resumes once descriptors free up", probe(a), 200)
c.eq("server survives descriptor exhaustion: exit status 0", a.stop(), 0)

# The default cap follows the descriptor limit: 256 - 64 - 4.
a = authority("auto", "workers = 1\n", nofile=(256, 256))
clients = open_clients(a, 220)
c.eq("220 connections accepted by the kernel", len(clients), 220)
refused = 0
time.sleep(0.5)
for x in clients:
    x.setblocking(False)
    try:
        d = x.recv(100)
        if d.startswith(b"HTTP/1.1 503") or d == b"":
            refused += 1
    except BlockingIOError:
        pass
    except OSError:
        refused += 1
for x in clients:
    x.close()
if vephelp.WRAPPER:
    # Valgrind keeps some descriptors for itself: the server sees fewer.
    c.check("max_connections = 0 under ulimit -n 256 (wrapped): at least 220 - 188 refused",
            220 - 188 <= refused <= 220 - 188 + 32, refused)
else:
    c.eq("max_connections = 0 under ulimit -n 256: 220 - 188 refused", refused, 220 - 188)
time.sleep(0.3)
c.eq("served afterwards", probe(a), 200)
c.eq("exit status 0", a.stop(), 0)

sys.exit(c.finish())
