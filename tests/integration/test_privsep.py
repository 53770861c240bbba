"""Privilege separation, started as root with user = vepnet (uid 65534).

The process started (the network process) ends up with uid, gid and groups
65534 only, no-new-privileges set and not dumpable; the key process (its
child, vep-keeper) stays root but keeps only CAP_DAC_READ_SEARCH and
CAP_AUDIT_WRITE (effective, permitted and bounding sets exactly those, none
inheritable or ambient, no-new-privileges), and so do the PAM helpers it
starts. The domain keys belong to another account (mode 0600), so reading
them takes CAP_DAC_READ_SEARCH. The network process has no descriptor on the
key directory and its memory holds no trace of the domain key's private
half: its secret prime is searched for, byte for byte, in every readable
mapping of both processes; found in the key process (so the search works),
absent from the network process. Then the service works as the unprivileged
user: sign-in through PAM (helpers started by the key process), certificate
issuance that verifies, a PAM helper killed and replaced, a key rotation
reloaded with SIGHUP. The state directory and database belong to the user;
a state directory that is a symbolic link is refused, not followed.
A bad user is refused before start; killing the key process stops the
network process with an error instead of leaving it unable to sign.

Needs root (CI runs as root); elsewhere it says so and is skipped."""

import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("privsep")
UID = 65534
KEY_OWNER = 65532        # an account that is neither root nor the network process's
CAP_DAC_READ_SEARCH = 2
CAP_AUDIT_WRITE = 29
KEPT = (1 << CAP_DAC_READ_SEARCH) | (1 << CAP_AUDIT_WRITE)


def status(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            k, _, v = ln.partition(":")
            out[k] = v.split()
    return out


def caps(pid):
    """The capability sets of pid as integers, and its no-new-privileges."""
    st = status(pid)
    out = {k: int(st[k][0], 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
    out["NoNewPrivs"] = int(st["NoNewPrivs"][0])
    return out


def check_confined(what, pid):
    want = {"CapInh": 0, "CapPrm": KEPT, "CapEff": KEPT, "CapBnd": KEPT, "CapAmb": 0,
            "NoNewPrivs": 1}
    got = caps(pid)
    C.eq("%s: only CAP_DAC_READ_SEARCH and CAP_AUDIT_WRITE (effective, permitted, "
         "bounding), no-new-privileges" % what,
         {k: hex(v) for k, v in got.items()}, {k: hex(v) for k, v in want.items()})


def give_keys_away(keys):
    """The key directory and files to KEY_OWNER, 0700 and 0600: only
    CAP_DAC_READ_SEARCH (or more) lets root read them."""
    os.chown(keys, KEY_OWNER, KEY_OWNER)
    os.chmod(keys, 0o700)
    for f in os.listdir(keys):
        p = os.path.join(keys, f)
        if os.path.isfile(p) and not os.path.islink(p):
            os.chown(p, KEY_OWNER, KEY_OWNER)
            os.chmod(p, 0o600)


def helpers_of(keeper, want=2):
    """The key process's vep-pam-helper children, once want of them have
    exec'd (a child is "vep-keeper" until its execve), or after 5 s."""
    found = []
    for _ in range(50):
        found = [h for h in vephelp.children(keeper) if vephelp.comm(h) == "vep-pam-helper"]
        if len(found) == want:
            break
        time.sleep(0.1)
    return found


def prime_bytes(pem):
    """The key's first prime, big- and little-endian (OpenSSL keeps its
    BIGNUM limbs little-endian on this machine)."""
    v = vephelp.openssl_rsa_numbers(pem)["prime1"]
    be = v.to_bytes((v.bit_length() + 7) // 8, "big")
    return be, be[::-1]


def memory_holds(pid, needles):
    """1 when any needle is in a readable mapping of pid."""
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read().splitlines()
    with open("/proc/%d/mem" % pid, "rb", 0) as mem:
        for ln in maps:
            fields = ln.split()
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            if "r" not in fields[1] or hi - lo > (256 << 20) or ln.endswith(("[vvar]", "[vsyscall]")):
                continue
            try:
                mem.seek(lo)
                chunk = mem.read(hi - lo)
            except (OSError, ValueError, OverflowError):
                continue
            if any(n in chunk for n in needles):
                return True
    return False


def world(user):
    w = signin.World("workers = 2\nuser = %s\n" % user)
    # The network process looks the user up through nss_wrapper too.
    with open(os.path.join(w.pamdir, "passwd"), "a") as f:
        f.write("vepnet:x:%d:%d::/nonexistent:/bin/false\n" % (UID, UID))
        f.write("rootish:x:%d:0::/nonexistent:/bin/false\n" % (UID - 1))
    with open(os.path.join(w.pamdir, "group"), "a") as f:
        f.write("nogroup:x:%d:\n" % UID)
    # The unprivileged user must reach the state directory.
    os.chmod(w.tmp, 0o711)
    return w


def refused(user, why):
    w = world(user)
    rc, out, err = vephelp.run(["--config", w.config, "--listen", "127.0.0.1:0"], env=w.env())
    C.eq("user = %s: exit 2" % user, rc, 2)
    C.check("user = %s: says %s" % (user, why), why in err, err)


def main():
    if os.geteuid() != 0:
        vephelp.skip("privsep needs root")
    if vephelp.keytool() is None:
        C.check("vep-keytool available", False)
        return C.finish()
    refused("nosuchuser", "no account 'nosuchuser'")
    refused("root", "is root or in group root")
    refused("rootish", "is root or in group root")

    # A state directory that is a symbolic link is not given away.
    w = world("vepnet")
    target = tempfile.mkdtemp(prefix="vep-privsep-target-")   # 0700, root's
    os.symlink(target, w.state)
    rc, out, err = vephelp.run(["--config", w.config, "--listen", "127.0.0.1:0"], env=w.env())
    C.eq("state_dir a symbolic link: exit 1", rc, 1)
    C.check("... says so", "cannot give it to the user" in err, err[-300:])
    C.eq("... and its target keeps its owner", os.stat(target).st_uid, 0)

    w = world("vepnet")
    _, pub = vephelp.user_key(w.tmp)
    give_keys_away(w.keys)
    auth = w.start()
    pid = auth.proc.pid
    try:
        st = status(pid)
        C.eq("network process: uids", st["Uid"], [str(UID)] * 4)
        C.eq("network process: gids", st["Gid"], [str(UID)] * 4)
        C.eq("network process: supplementary groups", st.get("Groups"), [str(UID)])
        C.eq("network process: no-new-privileges", st["NoNewPrivs"], ["1"])
        C.eq("network process: no capabilities", st["CapEff"], ["0000000000000000"])
        # Not dumpable: the kernel then gives its /proc/PID files to root, so
        # no process of its own user may trace it or read its memory.
        C.eq("network process: not dumpable (its /proc/PID/mem is root's)",
             os.stat("/proc/%d/mem" % pid).st_uid, 0)
        keepers = [k for k in vephelp.children(pid) if vephelp.comm(k) == "vep-keeper"]
        C.eq("one key process, a child of the network process", len(keepers), 1)
        keeper = keepers[0]
        C.eq("key process: root", status(keeper)["Uid"], ["0"] * 4)
        check_confined("key process", keeper)
        helpers = helpers_of(keeper)
        C.eq("PAM helpers (one per loop) are the key process's children", len(helpers), 2)
        C.check("PAM helpers run as root",
                helpers and all(status(h)["Uid"][0] == "0" for h in helpers))
        for h in helpers:
            check_confined("PAM helper %d" % h, h)
        log = auth.stderr()
        C.check("the log says who serves and where the keys are",
                "serving as user vepnet (uid %d)" % UID in log, log)

        fds = [os.readlink("/proc/%d/fd/%s" % (pid, fd)) for fd in os.listdir("/proc/%d/fd" % pid)]
        C.check("network process: no descriptor on the key directory",
                not [f for f in fds if f.startswith(w.keys)], repr(fds))
        with open("/proc/%d/maps" % pid) as f:
            C.check("network process: nothing mapped from the key directory",
                    w.keys not in f.read())
        st_state = os.stat(w.state)
        C.eq("state directory belongs to the user", (st_state.st_uid, st_state.st_gid), (UID, UID))

        cl = signin.Client(auth)
        C.eq("sign-in through PAM as the unprivileged user", cl.login("alice@example.test",
                                                                     "wonderland").status, 200)
        C.eq("a wrong password still fails", signin.Client(auth).login(
            "alice@example.test", "nope").status, 401)
        rc, out = signin.issue_and_verify(w, auth, cl, pub)
        C.check("a certificate signed by the key process verifies", rc == 0, out)
        db = [f for f in os.listdir(w.state) if f.endswith(".db")]
        C.check("the database belongs to the user", db and all(
            os.stat(os.path.join(w.state, f)).st_uid == UID for f in db), repr(db))

        needles = prime_bytes(os.path.join(w.keys, "current.pem"))
        C.check("the key process's memory holds the private key (the search works)",
                memory_holds(keeper, needles))
        C.check("the network process's memory does not", not memory_holds(pid, needles))

        # A PAM helper killed: the key process starts another, sign-in goes on.
        os.kill(helpers[0], signal.SIGKILL)
        oks = 0
        for _ in range(8):
            if signin.Client(auth).login("alice@example.test", "wonderland").status == 200:
                oks += 1
        C.check("after a helper was killed, sign-ins succeed (%d of 8)" % oks, oks >= 6)
        now = helpers_of(keeper)
        C.check("... and the key process replaced it", len(now) == 2 and helpers[0] not in now,
                repr((helpers, now)))
        for h in now:
            check_confined("PAM helper %d after the replacement" % h, h)

        # Rotation and SIGHUP, read by the key process as root.
        before = auth.support()
        C.eq("vep-keytool rotate: exit 0", vephelp.kt("rotate", "--dir", w.keys)[0], 0)
        give_keys_away(w.keys)
        after = auth.reload(before)
        C.check("SIGHUP as the unprivileged user: the new key is published",
                after["public-key"] != before["public-key"])
        time.sleep(0.5)
        rc, out = signin.issue_and_verify(w, auth, cl, pub)
        C.check("certificates after the rotation verify against the new document", rc == 0, out)
        C.check("network process: still no key in memory after the reload",
                not memory_holds(pid, prime_bytes(os.path.join(w.keys, "current.pem"))))
        check_confined("key process after the reload", keeper)

        # The key process killed: the network process stops, with an error.
        os.kill(keeper, signal.SIGKILL)
        try:
            rc = auth.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            rc = None
        C.eq("key process killed: the network process exits 1", rc, 1)
        C.check("... and says why", "key process ended" in auth.stderr(), auth.stderr()[-300:])
    finally:
        if auth.proc.poll() is None:
            auth.stop()
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
