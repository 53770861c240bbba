"""vephelp - the Python tests' driver for the real vep-authority binary.

Starts the binary (path in $VEP_AUTHORITY) with --listen 127.0.0.1:0, reads
the "listening on http://ADDR:PORT" line from its stdout, makes requests with
http.client or raw sockets, and stops it with SIGTERM, checking that it exits
cleanly. Python 3 standard library only.

Each test file builds a Checker, runs its checks (one printed line each) and
ends with sys.exit(checker.finish()): 0 pass, 1 fail, 77 skip.

It lives in tests/, beside the suites' folders: a test file puts its parent
directory on sys.path, so it also runs by hand (VEP_AUTHORITY=... python3 FILE).
"""

import http.client
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

# VEP_WRAPPER: a command the server runs under (tests/valgrind.sh sets it
# to valgrind); VEP_TIME_SCALE stretches the harness's own timeouts for it.
WRAPPER = os.environ.get("VEP_WRAPPER", "").split()
TIME_SCALE = float(os.environ.get("VEP_TIME_SCALE", "1"))
START_TIMEOUT_S = 60 * TIME_SCALE     # RSA key generation under ASan can be slow
STOP_TIMEOUT_S = 20 * TIME_SCALE
IO_TIMEOUT_S = 10 * TIME_SCALE
SKIP = 77

# Absolute now, so tests may change directory.
for _var in ("VEP_AUTHORITY", "VEP_KEYTOOL"):
    if os.environ.get(_var):
        os.environ[_var] = os.path.abspath(os.environ[_var])


def binary():
    path = os.environ.get("VEP_AUTHORITY")
    if not path or not os.access(path, os.X_OK):
        print("skip: VEP_AUTHORITY is not set to an executable")
        sys.exit(SKIP)
    return path


def keytool():
    path = os.environ.get("VEP_KEYTOOL")
    return path if path and os.access(path, os.X_OK) else None


class Checker:
    def __init__(self, name):
        self.name = name
        self.failed = 0
        self.passed = 0

    def check(self, what, cond, detail=""):
        if cond:
            self.passed += 1
            print("ok   %s" % what)
        else:
            self.failed += 1
            print("FAIL %s%s" % (what, (": %s" % detail) if detail else ""))
        sys.stdout.flush()
        return bool(cond)

    def eq(self, what, got, want):
        return self.check(what, got == want, "got %r, want %r" % (got, want))

    def finish(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        return 1 if self.failed else 0


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers      # list of (name, value) as sent
        self.body = body

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def header_count(self, name):
        return sum(1 for k, _ in self.headers if k.lower() == name.lower())

    def json(self):
        return json.loads(self.body.decode("utf-8"))


class Authority:
    """One running vep-authority process."""

    def __init__(self, args, env=None, tmp=None, nofile=None):
        """nofile: (soft, hard) RLIMIT_NOFILE for the server process."""
        self.tmp = tmp or tempfile.mkdtemp(prefix="vep-it-")
        self.errpath = os.path.join(self.tmp, "stderr-%d.log" % int(time.time() * 1e6))
        self.err = open(self.errpath, "wb")
        full_env = dict(os.environ)
        full_env.update(env or {})
        limit = None
        if nofile is not None:
            import resource

            def limit():
                resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
        self.proc = subprocess.Popen(WRAPPER + [binary()] + list(args), stdout=subprocess.PIPE,
                                     stderr=self.err, env=full_env, preexec_fn=limit)
        self.host, self.port = self._read_listening()

    def _read_listening(self):
        deadline = time.time() + START_TIMEOUT_S
        line = b""
        fd = self.proc.stdout.fileno()
        while not line.endswith(b"\n"):
            left = deadline - time.time()
            if left <= 0 or self.proc.poll() is not None and not select.select([fd], [], [], 0)[0]:
                self.kill()
                raise RuntimeError("no listening line (exit %r): %s" % (self.proc.returncode,
                                                                       self.stderr()))
            r, _, _ = select.select([fd], [], [], min(left, 0.2))
            if r:
                c = os.read(fd, 1)
                if not c:
                    # End of file: it exited, or is about to.
                    try:
                        self.proc.wait(timeout=max(left, 0.1))
                    except subprocess.TimeoutExpired:
                        pass
                    self.kill()
                    raise RuntimeError("no listening line (exit %r): %s"
                                       % (self.proc.returncode, self.stderr()))
                line += c
        text = line.decode().strip()
        m = re.match(r"^listening on (https?)://(.*)$", text)
        if not m:
            self.kill()
            raise RuntimeError("unexpected first line %r" % text)
        self.scheme = m.group(1)
        addr = m.group(2)
        host, _, port = addr.rpartition(":")
        return host, int(port)

    @property
    def origin(self):
        return "http://%s:%d" % (self.host, self.port)

    def request(self, method, path, headers=None, body=None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=IO_TIMEOUT_S)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            data = resp.read()
            return Response(resp.status, resp.getheaders(), data)
        finally:
            conn.close()

    def get(self, path, headers=None):
        return self.request("GET", path, headers)

    def raw(self, data, timeout=IO_TIMEOUT_S):
        """Sends bytes on a new connection, returns everything read until
        the server closes it (or timeout)."""
        s = socket.create_connection((self.host, self.port), timeout=timeout)
        try:
            s.sendall(data)
            chunks = []
            while True:
                try:
                    c = s.recv(65536)
                except socket.timeout:
                    break
                except ConnectionResetError:
                    break
                if not c:
                    break
                chunks.append(c)
            return b"".join(chunks)
        finally:
            s.close()

    def connect(self):
        return socket.create_connection((self.host, self.port), timeout=IO_TIMEOUT_S)

    def stderr(self):
        if not self.err.closed:
            self.err.flush()
        with open(self.errpath, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def send_signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, sig=signal.SIGTERM):
        """Sends sig and returns the exit status (None on timeout: killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            rc = None
        self.proc.stdout.close()
        self.err.close()
        report = sanitizer_report(self.stderr())
        if report:
            print("sanitizer report from the server:\n" + report)
            return "sanitizer report"
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def wait_closed(sock, limit):
    """Reads from sock (sending nothing) until the server closes it or limit
    seconds pass; returns (closed, seconds waited). Closes sock."""
    start = time.monotonic()
    sock.settimeout(limit)
    try:
        closed = sock.recv(10) == b""
    except socket.timeout:
        closed = False
    except OSError:
        closed = True
    sock.close()
    return closed, time.monotonic() - start


def parse_raw_response(data):
    """Splits raw HTTP/1.x bytes into (status, headers list, body)."""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    headers = []
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        headers.append((k.strip(), v.strip()))
    return Response(status, headers, body)


def run(args, env=None, timeout=START_TIMEOUT_S):
    """Runs the binary to completion: (exit status, stdout, stderr)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    p = subprocess.run(WRAPPER + [binary()] + list(args), capture_output=True, env=full_env,
                       timeout=timeout)
    err = p.stderr.decode("utf-8", "replace")
    report = sanitizer_report(err)
    if report:
        print("sanitizer report from %r:\n%s" % (args, report))
        return "sanitizer report", "", err
    return p.returncode, p.stdout.decode("utf-8", "replace"), err


def sanitizer_report(text):
    """The ASan/UBSan/LSan lines in a server's stderr ('' when clean): UBSan
    only prints and carries on, so the exit status alone would miss it."""
    marks = ("runtime error:", "AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer")
    memcheck = re.compile(r"^==\d+== (Invalid |Conditional jump|Use of uninitialised|Syscall param|"
                          r"Mismatched free|.*definitely lost in|Source and destination overlap)")
    # Stack frames ("    #3 0x... in f file.c:12") come along, so that a
    # report in CI says where, not only that.
    frame = re.compile(r"^\s+#\d+ 0x|^(Direct|Indirect) leak of ")
    lines = [ln for ln in text.splitlines()
             if any(m in ln for m in marks) or memcheck.match(ln) or frame.match(ln)]
    if not any(any(m in ln for m in marks) or memcheck.match(ln) for ln in lines):
        return ""
    return "\n".join(lines[:80])


def demo_keydir(tmp, name="demo"):
    """Creates a demo state under tmp (generating a key) and returns the key
    directory, for tests that need a real key without vep-keytool."""
    state = os.path.join(tmp, name)
    rc, out, err = run(["--demo", "--check", "--state", state])
    if rc != 0:
        raise RuntimeError("demo --check failed (%d): %s" % (rc, err))
    return os.path.join(state, "keys", "example.test")


def copy_keydir(src, dst):
    os.makedirs(dst, mode=0o700)
    for f in os.listdir(src):
        shutil.copy2(os.path.join(src, f), os.path.join(dst, f))
        os.chmod(os.path.join(dst, f), 0o600)
    return dst


def write(path, text, mode=0o600):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path
