"""SIGHUP reloads the configuration and the domain keys without a failed
request.

While clients keep fetching the support document and asking for
certificates, the key directory is broken three ways (garbage, a truncated
PEM, an RSA key whose private half does not sign for its public half) and
SIGHUP sent each time: the old key stays in use, the log says why, and not
one request fails. Then a real rotation (vep-keytool rotate) and SIGHUP:
the documents change, the previous key stays published, and certificates
issued afterwards verify against the new document. Then the configuration
file: a broken one changes nothing and the log names file, line and key; a
new max_age is served after SIGHUP, and a changed workers is logged as
waiting for a restart. At start, the same
self-test refuses a mismatched key before listening."""

import base64
import os
import re
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("reload")


def der_len(n):
    if n < 0x80:
        return bytes([n])
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(b)]) + b


def der_int(v):
    b = v.to_bytes(v.bit_length() // 8 + 1, "big")
    return b"\x02" + der_len(len(b)) + b


def mismatched_pem(pem_path):
    """The key of pem_path with d and dP changed: it still parses, but its
    signatures do not verify (OpenSSL falls back from a bad CRT result to
    d, so both must be wrong)."""
    v = vephelp.openssl_rsa_numbers(pem_path)
    seq = (der_int(0) + der_int(v["modulus"]) + der_int(v["publicExponent"]) +
           der_int(v["privateExponent"] + 2) + der_int(v["prime1"]) + der_int(v["prime2"]) +
           der_int(v["exponent1"] + 2) + der_int(v["exponent2"]) + der_int(v["coefficient"]))
    der = b"\x30" + der_len(len(seq)) + seq
    b64 = base64.encodebytes(der).decode().replace("\n", "")
    lines = [b64[i:i + 64] for i in range(0, len(b64), 64)]
    return ("-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) +
            "\n-----END RSA PRIVATE KEY-----\n")


class Load(threading.Thread):
    """Fetches the support document and asks for certificates until
    stopped; counts every answer that is not 200."""

    def __init__(self, auth, cl, pub):
        super().__init__(daemon=True)
        self.auth, self.cl, self.pub = auth, cl, pub
        self.stop = threading.Event()
        self.done = 0
        self.failures = []

    def run(self):
        while not self.stop.is_set():
            for call in (lambda: self.auth.get("/.well-known/browserid"),
                         lambda: self.cl.post("/api/cert", {"pubkey": self.pub,
                                                            "duration": 600})):
                try:
                    st = call().status
                except OSError as e:
                    st = str(e)
                self.done += 1
                if st != 200:
                    self.failures.append(st)
            time.sleep(0.01)


def write_key(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_CREAT, 0o600)
    os.write(fd, text.encode() if isinstance(text, str) else text)
    os.close(fd)


def main():
    if vephelp.keytool() is None:
        C.check("vep-keytool available", False)
        return C.finish()
    w = signin.World("workers = 2\n")
    current = os.path.join(w.keys, "current.pem")
    good = open(current).read()
    _, pub = vephelp.user_key(w.tmp)
    bad = mismatched_pem(current)

    # At start: the self-test refuses the mismatched key.
    write_key(current, bad)
    rc, out, err = vephelp.run(["--config", w.config, "--check"], env=w.env())
    C.eq("--check with a mismatched key: exit 2", rc, 2)
    C.check("--check says the self-test failed", "self-test failed" in err, err)
    write_key(current, good)

    auth = w.start()
    try:
        cl = signin.Client(auth)
        C.eq("signed in", cl.login("alice@example.test", "wonderland").status, 200)
        before = auth.support()
        rc, out = signin.issue_and_verify(w, auth, cl, pub)
        C.check("a certificate verifies before any reload", rc == 0, out)
        load = Load(auth, cl, pub)
        load.start()
        for what, text in [("garbage", b"\x00not a key at all\xff" * 10),
                           ("a truncated PEM", good[:len(good) // 2]),
                           ("a mismatched key", bad)]:
            write_key(current, text)
            mark = len(auth.stderr())
            auth.send_signal(signal.SIGHUP)
            time.sleep(0.6)
            log = auth.stderr()[mark:]
            C.check("SIGHUP with %s: an error in the log" % what,
                    "reload:" in log and "still serving the old configuration and keys" in log, log[-300:])
            C.eq("SIGHUP with %s: the old key is still served" % what, auth.support(), before)
            rc, out = signin.issue_and_verify(w, auth, cl, pub)
            C.check("SIGHUP with %s: certificates still verify" % what, rc == 0, out)
        write_key(current, good)

        # A real rotation.
        C.eq("vep-keytool rotate: exit 0", vephelp.kt("rotate", "--dir", w.keys)[0], 0)
        after = auth.reload(before)
        C.check("SIGHUP after a rotation: a new public key",
                after["public-key"] != before["public-key"])
        C.eq("SIGHUP after a rotation: the previous key still published",
             after["keys"][1:], [before["public-key"]])
        time.sleep(0.5)   # every loop has swapped
        rc, out = signin.issue_and_verify(w, auth, cl, pub)
        C.check("certificates after the rotation verify against the new document", rc == 0, out)
        # The configuration file is read again too: a broken one changes
        # nothing; a good one changes what a reload can, and the log names
        # what only a restart changes.
        conf = open(w.config).read()
        with open(w.config, "w") as f:
            f.write(conf.replace("workers = 2", "workers = 2\nno_such_key = 1"))
        mark = len(auth.stderr())
        auth.send_signal(signal.SIGHUP)
        time.sleep(0.6)
        log = auth.stderr()[mark:]
        C.check("SIGHUP with a broken configuration: the error names file, line and key",
                re.search(r"reload: .*vep.conf:\d+: .*no_such_key.*still serving the old", log),
                log[-300:])
        C.check("... and the old max-age is still sent",
                "max-age=300" in auth.get("/.well-known/browserid").header("Cache-Control"))
        with open(w.config, "w") as f:
            f.write(conf.replace("workers = 2", "workers = 3\nmax_age = 120"))
        mark = len(auth.stderr())
        auth.send_signal(signal.SIGHUP)
        cc = ""
        for _ in range(50):
            cc = auth.get("/.well-known/browserid").header("Cache-Control")
            if "max-age=120" in cc:
                break
            time.sleep(0.1)
        C.check("SIGHUP with a new max_age: served from then on", "max-age=120" in cc, cc)
        log = auth.stderr()[mark:]
        C.check("... and the log says workers waits for a restart",
                "workers changed in the configuration: takes effect at the next start" in log,
                log[-300:])
        with open(w.config, "w") as f:
            f.write(conf)
        load.stop.set()
        load.join()
        C.check("no request failed during %d requests and 6 reloads (%d failures)"
                % (load.done, len(load.failures)),
                not load.failures and load.done > 50, repr(load.failures[:5]))
    finally:
        C.eq("server: clean exit", auth.stop(), 0)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
