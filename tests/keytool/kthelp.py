"""Shared helpers for the vep-keytool CLI tests: run the real binary (path in
$VEP_KEYTOOL) in a private temporary directory."""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

KEYTOOL = os.environ.get("VEP_KEYTOOL", "")
SRCROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VECTORS = os.environ.get("VEP_VECTORS") or os.path.join(
    SRCROOT, "tests", "vectors", "browserid-crypto-vectors.json")


def now_ms():
    return int(time.time() * 1000)


class KeytoolCase(unittest.TestCase):
    def setUp(self):
        if not KEYTOOL or not os.access(KEYTOOL, os.X_OK):
            self.skipTest("VEP_KEYTOOL not set")
        self.tmp = tempfile.mkdtemp(prefix="kt-test.")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def kt(self, *args, stdin=None, timeout=60):
        p = subprocess.run([KEYTOOL] + [str(a) for a in args], input=stdin,
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def ok(self, *args, **kw):
        rc, out, err = self.kt(*args, **kw)
        self.assertEqual(rc, 0, "%r failed: %s" % (args, err))
        return out

    def write(self, name, text, mode=0o600):
        p = self.path(name)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, mode)
        return p

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


def main():
    unittest.main(verbosity=2)


__all__ = ["KeytoolCase", "main", "now_ms", "json", "os", "VECTORS"]
