"""vephelp - the one harness and the shared helpers of every Python test
(tests/integration and tests/keytool). Python 3 standard library only.

The harness: each test file builds a Checker, runs its checks (one printed
line each, "ok   ..." or "FAIL ..."), optionally in groups (Checker.group:
a failed require() or an exception ends only its group), and ends with
sys.exit(checker.finish()): 0 pass, 1 fail; skip() exits 77.

The helpers: Authority starts the real vep-authority (path in
$VEP_AUTHORITY) with --listen 127.0.0.1:0, reads the "listening on
http://ADDR:PORT" line from its stdout, makes requests with http.client or
raw sockets, and stops it with SIGTERM, checking that it exits cleanly;
run() runs it to completion. kt() runs vep-keytool ($VEP_KEYTOOL), and
KeytoolDir gives a group of keytool checks a private directory. Then JWS
decoding, test keys (pure Python RSA, OpenSSL's key dumps) and /proc.

A test file finds this module by putting its parent directory (tests/) on
sys.path, so it also runs by hand: VEP_AUTHORITY=... python3 FILE.
"""

import base64
import hashlib
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
import threading
import time
import traceback

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


def skip(why):
    """Ends the test as skipped (exit 77), saying why."""
    print("skip: %s" % why)
    sys.stdout.flush()
    sys.exit(SKIP)


def binary():
    path = os.environ.get("VEP_AUTHORITY")
    if not path or not os.access(path, os.X_OK):
        skip("VEP_AUTHORITY is not set to an executable")
    return path


def keytool():
    path = os.environ.get("VEP_KEYTOOL")
    return path if path and os.access(path, os.X_OK) else None


# --- The harness -------------------------------------------------------------


class Stop(Exception):
    """A failed Checker.require(): the rest of its group cannot run."""


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

    def eq(self, what, got, want, detail=""):
        return self.check(what, got == want, "got %r, want %r%s"
                          % (got, want, ("; %s" % detail) if detail else ""))

    def require(self, what, cond, detail=""):
        """check(), and when it fails, Stop: for a step the rest of a group
        builds on."""
        if not self.check(what, cond, detail):
            raise Stop(what)
        return True

    def group(self, fn, *args):
        """Runs fn(*args), a group of checks. A failed require() ends the
        group (it is counted already); any other exception counts as one
        failure, with its traceback. Either way the next group runs."""
        try:
            fn(*args)
        except Stop:
            print("     (the rest of %s not run)" % fn.__name__)
        except Exception:
            self.check("%s: ran to the end" % fn.__name__, False, traceback.format_exc())

    def finish(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        return 1 if self.failed else 0


# --- The authority -----------------------------------------------------------


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


def request(host, port, method, path, headers=None, body=None):
    """One HTTP request on a new connection: a Response."""
    conn = http.client.HTTPConnection(host, port, timeout=IO_TIMEOUT_S)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
        return Response(resp.status, resp.getheaders(), data)
    finally:
        conn.close()


def private_tmp(args, env, dirs):
    """The command prefix that gives a server whose PAM runs under
    pam_wrapper (preloaded, or --demo) a /tmp of its own (see
    tests/private-tmp for why), keeping the directories under /tmp that it
    needs: dirs, the binaries, this source tree, and every /tmp path among
    its arguments and environment. Empty for any other server. Moves
    LD_PRELOAD aside in env: the wrapper's own programs must not load
    pam_wrapper (it would make its /tmp/pam.X directories in them)."""
    if "pam_wrapper" not in env.get("LD_PRELOAD", "") and "--demo" not in args:
        return []
    paths = list(dirs) + [binary(), os.path.abspath(__file__)] + list(args) + list(env.values())
    for a in args:
        # A configuration file names more paths (key_dir, account_aliases...).
        if isinstance(a, str) and a.startswith("/tmp/") and os.path.isfile(a):
            with open(a, errors="replace") as f:
                paths += re.findall(r"/tmp/[^/\s\"']+", f.read())
    keep = set()
    for p in paths:
        if isinstance(p, str):
            for part in p.split(":"):
                if part.startswith("/tmp/") and len(part.split("/")) > 2 and part.split("/")[2]:
                    top = "/tmp/" + part.split("/")[2]
                    if os.path.isdir(top):
                        keep.add(top)
    here = os.path.dirname(os.path.abspath(__file__))
    if "LD_PRELOAD" in env:
        env["VEP_PRIVATE_TMP_PRELOAD"] = env.pop("LD_PRELOAD")
    return [os.path.join(here, "private-tmp")] + sorted(keep) + ["--"]


_deny_pam_dir = []


def deny_pam_dir():
    """A PAM service directory whose service vep-authority denies everyone
    (pam_deny), made once per test process."""
    if not _deny_pam_dir:
        d = tempfile.mkdtemp(prefix="vep-pam-deny-")
        write(os.path.join(d, "vep-authority"),
              "auth required pam_deny.so\naccount required pam_deny.so\n", 0o644)
        _deny_pam_dir.append(d)
    return _deny_pam_dir[0]


class Authority:
    """One running vep-authority process. A server given no PAM setup (no
    PAM_WRAPPER in env) is pointed at deny_pam_dir(), through pam_wrapper's
    variables, which is where the server then looks for its PAM service: it
    refuses to start without one, and the tests never touch /etc/pam.d.
    (Not preloaded, pam_wrapper changes nothing else: such a server's PAM
    helpers use the system's libpam, and its tests sign nobody in.)"""

    def __init__(self, args, env=None, tmp=None, nofile=None):
        """nofile: (soft, hard) RLIMIT_NOFILE for the server process."""
        self.tmp = tmp or tempfile.mkdtemp(prefix="vep-it-")
        self.errpath = os.path.join(self.tmp, "stderr-%d.log" % int(time.time() * 1e6))
        self.err = open(self.errpath, "wb")
        full_env = dict(os.environ)
        full_env.update(env or {})
        if "--demo" not in args and "PAM_WRAPPER" not in full_env:
            full_env.update(PAM_WRAPPER="1", PAM_WRAPPER_SERVICE_DIR=deny_pam_dir())
        limit = None
        if nofile is not None:
            import resource

            def limit():
                resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
        prefix = private_tmp(args, full_env, [self.tmp])
        self.proc = subprocess.Popen(prefix + WRAPPER + [binary()] + list(args),
                                     stdout=subprocess.PIPE,
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
        return request(self.host, self.port, method, path, headers, body)

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

    def support(self):
        return self.get("/.well-known/browserid").json()

    def reload(self, before):
        """Sends SIGHUP and waits up to 5 s for the support document to
        differ from before: the new one (before, if it never changed)."""
        self.send_signal(signal.SIGHUP)
        after = before
        for _ in range(50):
            after = self.support()
            if after != before:
                break
            time.sleep(0.1)
        return after

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


def sh(*args):
    """Runs a command that must succeed; its stdout."""
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (args[0], p.returncode, p.stderr))
    return p.stdout


def make_ca(d, names):
    """A test CA and one server certificate for the DNS names, in d:
    (ca.pem, server.pem, server.key)."""
    ca_key, ca = os.path.join(d, "ca.key"), os.path.join(d, "ca.pem")
    key, csr, crt = (os.path.join(d, n) for n in ("server.key", "server.csr", "server.pem"))
    ext = write(os.path.join(d, "server.ext"),
                "subjectAltName = %s\nbasicConstraints = CA:FALSE\n"
                "extendedKeyUsage = serverAuth\n" % ", ".join("DNS:" + n for n in names))
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key,
       "-out", ca, "-days", "2", "-subj", "/CN=vep test CA",
       "-addext", "basicConstraints=critical,CA:TRUE",
       "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
       "-subj", "/CN=" + names[0])
    sh("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
       "-out", crt, "-days", "2", "-extfile", ext)
    return ca, crt, key


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


def readme_block(first_line_prefix):
    """The indented code block of README.md whose first line starts with
    first_line_prefix (after its indentation), dedented, ending at a blank
    line: what an administrator copies."""
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "README.md")) as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        if line.strip().startswith(first_line_prefix) and line.startswith("    "):
            indent = len(line) - len(line.lstrip())
            out = []
            for ln in lines[i:]:
                if ln.strip() == "" or len(ln) - len(ln.lstrip()) < indent:
                    break
                out.append(ln[indent:])
            return "\n".join(out) + "\n"
    raise RuntimeError("README.md has no block starting %r" % first_line_prefix)


def write(path, text, mode=0o600):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def write_config(tmp, keydir, name="a", extra="", domain_extra=""):
    """Writes tmp/NAME.conf: a new state directory tmp/state-NAME, the global
    lines extra, and example.test served from keydir with the lines
    domain_extra. Returns its path."""
    state = os.path.join(tmp, "state-" + name)
    os.mkdir(state, 0o700)
    return write(os.path.join(tmp, name + ".conf"),
                 "state_dir = %s\n%s[domain example.test]\nkey_dir = %s\n%s"
                 % (state, extra, keydir, domain_extra))


def serve(conf, tmp, **kw):
    """An Authority serving the configuration file conf on 127.0.0.1, port 0."""
    return Authority(["--config", conf, "--listen", "127.0.0.1:0"], tmp=tmp, **kw)


def at_once(jobs):
    """Runs the callables together (each in a thread, released at once);
    returns their results in order, an exception standing for its result."""
    out = [None] * len(jobs)
    start = threading.Barrier(len(jobs))

    def one(i, fn):
        start.wait()
        try:
            out[i] = fn()
        except Exception as e:  # a dead thread must still count as an answer
            out[i] = e
    threads = [threading.Thread(target=one, args=(i, fn)) for i, fn in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


# --- Processes (/proc) -------------------------------------------------------


def children(pid):
    """The pids of pid's children, over all its threads."""
    out = []
    for t in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, t)) as f:
            out += [int(x) for x in f.read().split()]
    return out


def comm(pid):
    with open("/proc/%d/comm" % pid) as f:
        return f.read().strip()


# --- vep-keytool -------------------------------------------------------------


def kt(*args, stdin=None, timeout=120):
    """Runs vep-keytool with args (each str()-ed): (exit status, stdout,
    stderr) as text."""
    path = keytool()
    if path is None:
        raise RuntimeError("VEP_KEYTOOL is not set to an executable")
    p = subprocess.run([path] + [str(a) for a in args], input=stdin, capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def user_key(directory, alg="RS256", name=None):
    """A new user key (vep-keytool genkey) in directory, as
    (path of the private key, public key as a dict)."""
    path = os.path.join(directory, name or "user-%s.pem" % alg)
    for args in (("genkey", "--alg", alg, "--out", path), ("pubkey", path)):
        rc, out, err = kt(*args)
        if rc != 0:
            raise RuntimeError("vep-keytool %s: exit %d: %s" % (args[0], rc, err))
    return path, json.loads(out)


class KeytoolDir:
    """A private temporary directory for one group of vep-keytool checks
    (removed when the with-block ends, after the cleanups added, last
    first), and the steps they repeat. ok() runs a command that must
    succeed: a check, and the group's end if not."""

    def __init__(self, checker):
        self.C = checker
        self.tmp = tempfile.mkdtemp(prefix="kt-test.")
        self.cleanups = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self.cleanups:
            self.cleanups.pop()()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def add_cleanup(self, fn):
        self.cleanups.append(fn)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def kt(self, *args, stdin=None, timeout=60):
        return kt(*args, stdin=stdin, timeout=timeout)

    def ok(self, *args, stdin=None):
        rc, out, err = self.kt(*args, stdin=stdin)
        shown = " ".join(str(a) for a in args).replace(self.tmp + "/", "")
        self.C.require("vep-keytool %s: exit 0" % shown, rc == 0, err)
        return out

    def write(self, name, text, mode=0o600):
        return write(self.path(name), text, mode)

    def keydir(self, name="keys"):
        d = self.path(name)
        self.ok("init", "--dir", d)
        return d

    def user_key(self, name="user.pem", alg="RS256"):
        p = self.path(name)
        self.ok("genkey", "--alg", alg, "--out", p)
        return p

    def cert(self, keyargs, email, userkey, *extra):
        out = self.ok("certify", *keyargs, "--email", email, "--pubkey", userkey, *extra)
        return self.write("cert-%d" % now_ms(), out)

    def doc(self, d, name="doc.json"):
        return self.write(name, self.ok("support-doc", "--dir", d))

    def backed(self, userkey, cert, audience="https://rp.example", *extra):
        out = self.ok("sign-assertion", "--key", userkey, "--audience", audience,
                      "--cert", cert, *extra)
        return self.write("backed-%d" % now_ms(), out)

    def signed(self, email):
        """The usual start: a key directory (self.d), a DS128 user key
        (self.u), its certificate for email (self.c) and an assertion with
        it for https://rp.example (self.b)."""
        self.d = self.keydir()
        self.u = self.user_key(alg="DS128")
        self.c = self.cert(["--dir", self.d], email, self.u)
        self.b = self.backed(self.u, self.c)


def keytool_main(checker, groups):
    """The main of a vep-keytool test: skipped (77) without vep-keytool;
    else each group runs in a KeytoolDir of its own. Returns the exit
    status."""
    if keytool() is None:
        skip("VEP_KEYTOOL is not set to an executable")
    for group in groups:
        with KeytoolDir(checker) as k:
            checker.group(group, k)
    return checker.finish()


def now_ms():
    return int(time.time() * 1000)


def clock_skew_ms():
    """VEP_CLOCK_SKEW_MS as libvep/cert.h defines it: the allowance every
    libvep verdict gives iat and exp."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "libvep", "cert.h"), encoding="utf-8") as f:
        m = re.search(r"#define VEP_CLOCK_SKEW_MS \((\d+)LL \* 1000\)", f.read())
    return int(m.group(1)) * 1000


# --- JWS ---------------------------------------------------------------------


def b64url(data):
    """Unpadded base64url, as JWS uses it."""
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jws_payload(jws):
    """The payload of a compact JWS (a certificate or an assertion), decoded
    and parsed: nothing is verified."""
    return json.loads(b64url_decode(jws.strip().split(".")[1]))


# --- Test keys ---------------------------------------------------------------
# Keys made in pure Python, so that no libvep or OpenSSL code makes them: a
# forger's keys, or a domain key whose signatures the code under test must
# check. Deterministic from the random.Random the caller gives.

_SMALL_PRIMES = [p for p in range(3, 2000) if all(p % f for f in range(3, int(p ** 0.5) + 1, 2))]
_SHA256_DIGESTINFO = bytes.fromhex("3031300d060960864801650304020105000420")


def is_probable_prime(n, rng, rounds=20):
    """Miller-Rabin, witnesses drawn from rng."""
    if n < 2 or n % 2 == 0:
        return n == 2
    for p in _SMALL_PRIMES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for _ in range(rounds):
        x = pow(rng.randrange(2, n - 1), d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def prime(bits, rng):
    """A prime of exactly bits bits, its top two bits set."""
    while True:
        c = rng.getrandbits(bits) | (3 << (bits - 2)) | 1
        if is_probable_prime(c, rng):
            return c


def rsa_key(bits, rng, e=65537):
    """An RSA key (n, d) with an n of exactly bits bits."""
    while True:
        p, q = prime(bits // 2, rng), prime(bits // 2, rng)
        n = p * q
        if p != q and n.bit_length() == bits:
            return n, pow(e, -1, (p - 1) * (q - 1))


def rsa_sign(n, d, msg):
    """RSASSA-PKCS1-v1_5 with SHA-256 (RS256 and RS128 alike)."""
    k = (n.bit_length() + 7) // 8
    t = _SHA256_DIGESTINFO + hashlib.sha256(msg).digest()
    em = b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t
    return pow(int.from_bytes(em, "big"), d, n).to_bytes(k, "big")


def openssl_rsa_numbers(pem_path):
    """The numbers of an RSA private key file as `openssl rsa -text` prints
    them: {"modulus": n, "publicExponent": e, "privateExponent": d,
    "prime1": p, ...}, as integers."""
    text = subprocess.run(["openssl", "rsa", "-in", pem_path, "-text", "-noout"],
                          capture_output=True, text=True, check=True).stdout
    parts = {}
    name = None
    for ln in text.splitlines():
        m = re.match(r"^(\w+):\s*(\d+)?", ln)
        if m and not ln.startswith(" "):
            name = m.group(1)
            parts[name] = m.group(2) or ""
            if m.group(2):
                parts[name] = int(m.group(2))
                name = None
        elif name and ln.startswith(" "):
            parts[name] += ln.strip().replace(":", "")
    return {k: (int(x, 16) if isinstance(x, str) else x) for k, x in parts.items()}
