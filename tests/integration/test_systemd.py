"""What systemd (and an administrator's monitoring) sees of the authority.

Readiness through the notify protocol: with NOTIFY_SOCKET set, READY=1 and
MAINPID arrive once the authority answers, and no child (key process, PAM
helper) inherits the variable. `vep-authority --reload PID` (the unit's
ExecReload) exits 0 after a good reload and 1 after a failed one, with the
reason: for a key file, the file, its size and what is allowed. /healthz
says "degraded" (still 200) while the last reload failed, "ok" again after
a good one. A good reload logs the fingerprints now served. --reload never
signals a process that is not the authority serving that state directory.
SIGTERM sends STOPPING=1."""

import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("systemd")


class Notify:
    """The service manager's end: a datagram socket NOTIFY_SOCKET names."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.got = []

    def wait_for(self, field, timeout=20):
        """Messages until one has the line `field` (e.g. "READY=1"): that
        message as a dict, or None after timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                break
            self.got.append(data)
            if field in data.split("\n"):
                return dict(line.split("=", 1) for line in data.split("\n") if "=" in line)
        return None


def reload(w, pid):
    return vephelp.run(["--config", w.config, "--reload", str(pid)], env=w.env())


def write_key(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_CREAT, 0o600)
    os.write(fd, data)
    os.close(fd)


def health(auth):
    r = auth.get("/healthz")
    return r.status, r.json().get("status")


def main():
    w = signin.World("workers = 2\n")
    note = Notify(os.path.join(w.tmp, "notify.sock"))
    env = dict(w.env(), NOTIFY_SOCKET=note.path)
    auth = vephelp.Authority(["--config", w.config], env=env, tmp=w.tmp)
    current = os.path.join(w.keys, "current.pem")
    good = open(current, "rb").read()
    try:
        ready = note.wait_for("READY=1")
        C.check("READY=1 once listening", ready is not None, repr(note.got))
        C.eq("... with MAINPID, the process systemd started", (ready or {}).get("MAINPID"),
             str(auth.proc.pid))
        C.eq("... and it answers", health(auth), (200, "ok"))
        kids, todo = [], [auth.proc.pid]
        while todo:
            more = vephelp.children(todo.pop())
            kids += more
            todo += more
        # /proc/PID/environ shows the environment a process was exec'd
        # with: the PAM helper's is what the key process passed on (the key
        # process itself is forked, and shows its parent's first one).
        helpers = [k for k in kids if vephelp.comm(k).startswith("vep-pam")]
        environs = []
        for k in helpers:
            with open("/proc/%d/environ" % k, "rb") as f:
                environs.append(f.read())
        C.check("the PAM helper does not inherit NOTIFY_SOCKET (%d processes)" % len(helpers),
                helpers and not any(b"NOTIFY_SOCKET=" in e for e in environs),
                repr([vephelp.comm(k) for k in kids]))
        status = os.path.join(w.state, "reload-status")
        C.eq("the reload status file is 0600", oct(os.stat(status).st_mode & 0o777), "0o600")

        rc, out, err = reload(w, auth.proc.pid)
        C.eq("--reload: exit 0 after a good reload", rc, 0)
        C.check("... says so", "reloaded" in out, out + err)
        C.check("... systemd heard RELOADING=1, then READY=1",
                note.wait_for("READY=1", 5) is not None and
                any("RELOADING=1" in m for m in note.got), repr(note.got[-3:]))
        fp = vephelp.kt("pubkey", "--fingerprint", current)[1].strip()
        C.check("... and the log names the signing key's fingerprint",
                fp and ("configuration and keys loaded; signing %s" % fp) in auth.stderr(),
                fp)

        # A key file that is far too large.
        write_key(current, b"\x00" * 100000)
        rc, out, err = reload(w, auth.proc.pid)
        C.eq("--reload with a 100000-byte key file: exit 1", rc, 1)
        C.check("... names the file, its size and the limit",
                "current.pem: 100000 bytes, a key file holds at most 65536 bytes" in err, err)
        C.check("... the log says the same",
                "current.pem: 100000 bytes, a key file holds at most 65536 bytes (still "
                "serving the old configuration and keys)" in auth.stderr())
        C.eq("... /healthz: 200 degraded", health(auth), (200, "degraded"))
        C.check("... systemd's STATUS says the reload failed",
                "the last reload failed" in (note.wait_for("READY=1", 5) or {}).get("STATUS", ""),
                repr(note.got[-1:]))

        # A key of a size BrowserID does not have.
        big = os.path.join(w.tmp, "rsa4096.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                        "rsa_keygen_bits:4096", "-out", big], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        write_key(current, open(big, "rb").read())
        rc, out, err = reload(w, auth.proc.pid)
        C.eq("--reload with an RSA-4096 key: exit 1", rc, 1)
        C.check("... says what the key is and which keys are allowed",
                "current.pem: key size not allowed (an RSA key of 4096 bits; the keys allowed: "
                "RSA 2048 or 1024 bits, DSA 1024/160 or 2048/256 bits)" in err, err)
        C.eq("... the old key still serves: health still 200 degraded", health(auth),
             (200, "degraded"))

        write_key(current, good)
        rc, out, err = reload(w, auth.proc.pid)
        C.eq("--reload after the key is put back: exit 0", rc, 0)
        C.eq("... /healthz: ok again", health(auth), (200, "ok"))

        # --reload signals only the authority serving this state directory.
        other = subprocess.Popen(["sleep", "30"])
        try:
            rc, out, err = reload(w, other.pid)
            time.sleep(0.2)
            C.eq("--reload PID of another process: exit 1", rc, 1)
            C.check("... says it did not signal it", "not signalled" in err, err)
            C.check("... and that process got no SIGHUP", other.poll() is None)
        finally:
            other.kill()
            other.wait()
        for bad in ("0", "1", "x", "-5"):
            rc, _, err = vephelp.run(["--config", w.config, "--reload", bad], env=w.env())
            C.eq("--reload %s: usage error (exit 2)" % bad, rc, 2)
        with open(status) as f:
            st = json.load(f)
        C.eq("the status file: this process, 4 reloads, the last one ok",
             (st["pid"], st["reloads"], st["ok"]), (auth.proc.pid, 4, True))
    finally:
        write_key(current, good)
        C.eq("server: clean exit", auth.stop(), 0)
        C.check("SIGTERM: systemd heard STOPPING=1", note.wait_for("STOPPING=1", 5) is not None,
                repr(note.got[-2:]))
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
