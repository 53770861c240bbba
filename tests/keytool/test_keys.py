#!/usr/bin/env python3
"""vep-keytool key and support-document commands against real files."""
import json
import os
import stat

from kthelp import KeytoolCase, main


class Keys(KeytoolCase):
    def test_genkey_mode_and_no_overwrite(self):
        p = self.path("d.pem")
        out = self.ok("genkey", "--out", p)
        self.assertTrue(out.startswith("RS256 "))
        self.assertEqual(stat.S_IMODE(os.stat(p).st_mode), 0o600)
        before = open(p).read()
        rc, _, err = self.kt("genkey", "--out", p)
        self.assertEqual(rc, 2)
        self.assertIn("refusing to overwrite", err)
        self.assertEqual(open(p).read(), before)

    def test_genkey_algs_and_usage(self):
        for alg, family in (("RS128", "RS"), ("DS128", "DS"), ("DS256", "DS")):
            p = self.user_key(alg + ".pem", alg)
            pub = json.loads(self.ok("pubkey", p))
            self.assertEqual(pub["algorithm"], family)
        self.assertEqual(self.kt("genkey", "--alg", "RS64", "--out", self.path("x"))[0], 2)
        self.assertEqual(self.kt("genkey")[0], 2)
        self.assertEqual(self.kt("nosuchcommand")[0], 2)
        self.assertEqual(self.kt()[0], 2)
        for cmd in ("genkey", "pubkey", "init", "rotate", "retire", "keys", "support-doc",
                    "certify", "sign-assertion", "verify-cert", "verify-assertion", "inspect"):
            rc, out, _ = self.kt(cmd, "--help")
            self.assertEqual(rc, 0, cmd)
            self.assertIn("usage: vep-keytool " + cmd, out)
        rc, out, _ = self.kt("--help")
        self.assertEqual(rc, 0)
        self.assertIn("verify-assertion", out)

    def test_private_key_permissions_refused(self):
        p = self.path("d.pem")
        self.ok("genkey", "--out", p)
        os.chmod(p, 0o640)
        rc, _, err = self.kt("pubkey", p)
        self.assertEqual(rc, 2)
        self.assertIn("chmod 600 " + p, err)
        u = self.user_key()
        rc, _, err = self.kt("certify", "--key", p, "--email", "a@example.test", "--pubkey", u)
        self.assertEqual(rc, 2)
        self.assertIn("chmod 600", err)
        d = self.keydir()
        os.chmod(os.path.join(d, "current.pem"), 0o644)
        rc, _, err = self.kt("rotate", "--dir", d)
        self.assertEqual(rc, 2)
        self.assertIn("chmod 600", err)

    def test_init_rotate_retire_and_support_doc(self):
        d = self.path("keys")
        out1 = self.ok("init", "--dir", d).split()
        self.assertEqual(out1[:2], ["current", "RS256"])
        self.assertEqual(stat.S_IMODE(os.stat(d).st_mode), 0o700)
        self.assertEqual(self.ok("init", "--dir", d).split(), out1)  # left alone
        fp1 = out1[2]
        self.assertEqual(self.ok("pubkey", "--fingerprint", "--dir", d).strip(), fp1)

        doc = json.loads(self.ok("support-doc", "--dir", d))
        self.assertEqual(list(doc), ["public-key", "keys", "authentication", "provisioning"])
        self.assertEqual(doc["authentication"], "/sign-in/authenticate")
        self.assertEqual(doc["provisioning"], "/sign-in/provision")
        self.assertEqual(doc["keys"], [doc["public-key"]])
        self.assertEqual(json.loads(self.ok("pubkey", "--dir", d)), doc["public-key"])

        fp2 = self.ok("rotate", "--dir", d).strip()
        self.assertEqual(len(fp2), 64)
        self.assertNotEqual(fp2, fp1)
        keys = self.ok("keys", "--dir", d).split("\n")
        self.assertEqual(keys[0].split(), ["current", "RS256", fp2])
        self.assertEqual(keys[1].split(), ["previous", "RS256", fp1])
        doc2 = json.loads(self.ok("support-doc", "--dir", d, "--authentication", "/a",
                                  "--provisioning", "/p"))
        self.assertEqual(len(doc2["keys"]), 2)
        self.assertEqual(doc2["keys"][1], doc["public-key"])
        self.assertEqual(doc2["keys"][0], doc2["public-key"])
        self.assertEqual((doc2["authentication"], doc2["provisioning"]), ("/a", "/p"))

        out = self.ok("retire", "--dir", d)
        self.assertEqual(out.split(), ["retired", "RS256", fp1])
        doc3 = json.loads(self.ok("support-doc", "--dir", d))
        self.assertEqual(len(doc3["keys"]), 1)
        self.assertEqual(self.kt("retire", "--dir", d)[0], 0)
        self.assertEqual(self.kt("rotate", "--dir", self.path("none"))[0], 2)

    def test_support_doc_modes(self):
        self.assertEqual(json.loads(self.ok("support-doc", "--delegate", "idp.example")),
                         {"authority": "idp.example"})
        self.assertEqual(json.loads(self.ok("support-doc", "--delegate", "idp.example:8443")),
                         {"authority": "idp.example:8443"})
        self.assertEqual(json.loads(self.ok("support-doc", "--disabled")), {"disabled": True})
        self.assertEqual(self.kt("support-doc")[0], 2)
        self.assertEqual(self.kt("support-doc", "--disabled", "--delegate", "a.example")[0], 2)
        self.assertEqual(self.kt("support-doc", "--delegate", "not a host")[0], 2)
        self.assertEqual(self.kt("support-doc", "--delegate", "a.example:x")[0], 2)
        d = self.keydir()
        self.assertEqual(self.kt("support-doc", "--dir", d, "--authentication", "relative")[0], 2)
        self.assertEqual(self.kt("support-doc", "--dir", d, "--provisioning", "/a b")[0], 2)


if __name__ == "__main__":
    main()
