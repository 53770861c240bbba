"""haproxy - a real HAProxy (Debian's haproxy) in front of several
vep-authority instances on loopback, for the cluster tests and the bench.
Python 3 standard library only.

    lb = HaProxy([(host, port), (host, port)], tmpdir)   # starts, waits for checks
    lb.port                                              # the front end on 127.0.0.1
    lb.stop()

The configuration is README.md's recipe ("Several machines"), read from
README.md and written to tmpdir/haproxy.cfg with only what a test must
change (config() says what): round robin; each instance checked with GET
/healthz every 500 ms (two failures take it out, two successes put it
back); a connection refused, an empty answer or a timed-out answer is
retried on another instance (retry-on, option redispatch), which is what
carries requests across an instance killed under load. HAProxy runs in the
foreground as a child of this process (no daemon, no pid file, no system
service), as whatever user runs the tests; its log goes to tmpdir/haproxy.log.
"""

import os
import socket
import subprocess
import time

import vephelp

HAPROXY = "/usr/sbin/haproxy"
README_FIRST_LINE = "# /etc/haproxy/haproxy.cfg"
START_TIMEOUT_S = 10


class HaProxyMissing(RuntimeError):
    pass


def free_port():
    """A TCP port on 127.0.0.1 nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(backends, port, host="example.test"):
    """README's haproxy.cfg ("Several machines"), with what a test must
    change: no daemon, user or syslog (a child of the test, logging to its
    stderr), plain HTTP on 127.0.0.1:port instead of TLS on :443, the
    health check's Host, and the instances' addresses. Everything else as
    written there."""
    out, servers_done = [], False
    for line in vephelp.readme_block(README_FIRST_LINE).rstrip("\n").split("\n"):
        word = line.split()[0] if line.split() else ""
        if word in ("user", "group", "daemon"):
            continue
        if line.strip() == "log /dev/log local0":
            line = line.replace("log /dev/log local0", "log stderr format short local0 notice")
        elif word == "bind":
            line = line[:line.index("bind")] + "bind 127.0.0.1:%d" % port
        elif word == "http-check" and " hdr Host " in line:
            line = line[:line.index(" hdr Host ")] + " hdr Host " + host
        elif word == "server":
            if servers_done:
                continue
            indent = line[:line.index("server")]
            cookie = " cookie" in line
            line = "\n".join("%sserver i%d %s:%d check%s" % (
                indent, i + 1, a, p, " cookie i%d" % (i + 1) if cookie else "")
                for i, (a, p) in enumerate(backends))
            servers_done = True
        out.append(line)
    return "\n".join(out) + "\n"


class HaProxy:
    def __init__(self, backends, tmp, host="example.test"):
        if not os.access(HAPROXY, os.X_OK):
            raise HaProxyMissing("haproxy is not installed (apt-get install haproxy)")
        self.port = free_port()
        self.path = os.path.join(tmp, "haproxy.cfg")
        self.log_path = os.path.join(tmp, "haproxy.log")
        with open(self.path, "w") as f:
            f.write(config(backends, self.port, host))
        check = subprocess.run([HAPROXY, "-c", "-q", "-f", self.path],
                               capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError("haproxy -c: %s%s" % (check.stdout, check.stderr))
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([HAPROXY, "-db", "-f", self.path],
                                     stdout=self._log, stderr=subprocess.STDOUT)
        self._wait_listening()

    def _wait_listening(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("haproxy exited %d: %s" % (self.proc.returncode,
                                                              self.log()))
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("haproxy did not listen within %d s" % START_TIMEOUT_S)

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
