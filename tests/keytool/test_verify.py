#!/usr/bin/env python3
"""vep-keytool certify / sign-assertion / verify-* / inspect, including
Mozilla's known-answer vectors verified as of their own time."""
import base64
import json
import os

from kthelp import KeytoolCase, main, now_ms, VECTORS


def payload(jws):
    p = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))


class Certify(KeytoolCase):
    def test_certify_fields_and_times(self):
        d = self.keydir()
        u = self.user_key(alg="DS128")
        t0 = now_ms()
        c = self.ok("certify", "--dir", d, "--email", "Alice@Example.TEST", "--pubkey", u).strip()
        t1 = now_ms()
        pl = payload(c)
        self.assertEqual(pl["iss"], "example.test")
        self.assertEqual(pl["principal"], {"email": "Alice@example.test"})
        self.assertEqual(pl["public-key"], json.loads(self.ok("pubkey", u)))
        # iat back-dated 10 s, default lifetime 3600 s from now
        self.assertTrue(t0 - 10000 <= pl["iat"] <= t1 - 10000)
        self.assertTrue(t0 + 3600000 <= pl["exp"] <= t1 + 3600000)

    def test_duration_cap_and_issuer(self):
        d = self.keydir()
        u = self.user_key()
        rc, out, err = self.kt("certify", "--dir", d, "--email", "a@example.test",
                               "--pubkey", u, "--duration", "999999")
        self.assertEqual(rc, 0)
        self.assertIn("capped", err)
        pl = payload(out.strip())
        self.assertEqual(pl["exp"] - pl["iat"], 24 * 3600 * 1000)
        pl = payload(self.ok("certify", "--dir", d, "--email", "a@example.test",
                             "--pubkey", u, "--duration", "60"))
        self.assertEqual(pl["exp"] - pl["iat"], 70000)
        rc, out, err = self.kt("certify", "--dir", d, "--email", "a@example.test",
                               "--pubkey", u, "--issuer", "IdP.Example")
        self.assertEqual(rc, 0)
        self.assertIn("delegates", err)
        self.assertEqual(payload(out.strip())["iss"], "idp.example")
        for bad in (["--email", "not-an-email"], ["--email", "é@example.test"],
                    ["--email", "a@example.test", "--duration", "0"],
                    ["--email", "a@example.test", "--duration", "x"],
                    ["--email", "a@example.test", "--issuer", "bad issuer"]):
            self.assertEqual(self.kt("certify", "--dir", d, "--pubkey", u, *bad)[0], 2, bad)
        self.assertEqual(self.kt("certify", "--email", "a@example.test", "--pubkey", u)[0], 2)
        # public key given as JSON on stdin
        pub = self.ok("pubkey", u)
        self.ok("certify", "--dir", d, "--email", "a@example.test", "--pubkey", "-", stdin=pub)


class Verify(KeytoolCase):
    def setUp(self):
        super().setUp()
        self.d = self.keydir()
        self.u = self.user_key(alg="DS128")
        self.c = self.cert(["--dir", self.d], "bob@example.test", self.u)
        self.b = self.backed(self.u, self.c)

    def test_valid(self):
        doc = self.doc(self.d)
        self.assertEqual(self.ok("verify-assertion", "--audience", "https://rp.example",
                                 "--support-doc", doc, self.b), "bob@example.test\n")
        self.assertEqual(self.ok("verify-cert", "--support-doc", doc, self.c),
                         "bob@example.test\n")
        self.assertEqual(self.ok("verify-cert", "--issuer-key", os.path.join(self.d, "current.pem"),
                                 self.c), "bob@example.test\n")
        pub = self.write("pub.json", self.ok("pubkey", "--dir", self.d))
        self.ok("verify-cert", "--issuer-key", pub, self.c)
        self.ok("verify-assertion", "--audience", "https://rp.example", "--support-doc",
                doc, "-", stdin=open(self.b).read())

    def test_invalid_verdicts(self):
        doc = self.doc(self.d)
        rc, out, err = self.kt("verify-assertion", "--audience", "https://other.example",
                               "--support-doc", doc, self.b)
        self.assertEqual((rc, out), (1, ""))
        self.assertIn("audience", err)
        pl = payload(open(self.c).read())
        rc, _, err = self.kt("verify-cert", "--support-doc", doc, "--at", pl["exp"] + 1, self.c)
        self.assertEqual(rc, 1)
        self.assertIn("invalid:", err)
        rc, _, err = self.kt("verify-cert", "--support-doc", doc, "--at", pl["iat"] - 1, self.c)
        self.assertEqual(rc, 1)
        # a key that did not sign it
        other = self.keydir("other")
        rc, _, err = self.kt("verify-assertion", "--audience", "https://rp.example",
                             "--support-doc", self.doc(other, "o.json"), self.b)
        self.assertEqual(rc, 1)
        # tampered certificate payload
        h, p, s = open(self.c).read().strip().split(".")
        pl["principal"]["email"] = "mallory@example.test"
        p2 = base64.urlsafe_b64encode(json.dumps(pl).encode()).decode().rstrip("=")
        t = self.write("tampered", ".".join([h, p2, s]))
        self.assertEqual(self.kt("verify-cert", "--support-doc", doc, t)[0], 1)
        # wrong issuer: certified for another domain
        c2 = self.cert(["--dir", self.d], "bob@example.test", self.u, "--issuer", "elsewhere.example")
        b2 = self.backed(self.u, c2)
        rc, _, err = self.kt("verify-assertion", "--audience", "https://rp.example",
                             "--support-doc", doc, b2)
        self.assertEqual(rc, 1)
        self.assertIn("expected example.test", err)
        # two certificates: chain refused
        chain = self.write("chain", open(self.c).read().strip() + "~" + open(self.b).read())
        self.assertEqual(self.kt("verify-assertion", "--audience", "https://rp.example",
                                 "--support-doc", doc, chain)[0], 1)
        # disabled
        dis = self.write("dis.json", '{"disabled":true}')
        rc, _, err = self.kt("verify-assertion", "--audience", "https://rp.example",
                             "--support-doc", dis, self.b)
        self.assertEqual(rc, 1)
        self.assertIn("disabled", err)
        # garbage input, usage and I/O errors
        self.assertEqual(self.kt("verify-cert", "--support-doc", doc, self.write("g", "x.y.z"))[0], 1)
        self.assertEqual(self.kt("verify-cert", "--support-doc", doc, self.path("missing"))[0], 2)
        self.assertEqual(self.kt("verify-cert", self.c)[0], 2)
        self.assertEqual(self.kt("verify-assertion", "--support-doc", doc, self.b)[0], 2)
        self.assertEqual(self.kt("verify-cert", "--support-doc", doc, "--at", "-5", self.c)[0], 2)

    def test_rotation_keeps_previous_valid(self):
        self.ok("rotate", "--dir", self.d)
        doc = self.doc(self.d)
        self.ok("verify-assertion", "--audience", "https://rp.example", "--support-doc", doc, self.b)
        self.ok("retire", "--dir", self.d)
        doc = self.doc(self.d, "doc2.json")
        self.assertEqual(self.kt("verify-assertion", "--audience", "https://rp.example",
                                 "--support-doc", doc, self.b)[0], 1)

    def test_delegation_files(self):
        # example.test delegates to idp.example, whose keys sign.
        c = self.cert(["--dir", self.d], "carol@example.test", self.u, "--issuer", "idp.example")
        b = self.backed(self.u, c)
        deleg = self.write("deleg.json", self.ok("support-doc", "--delegate", "idp.example"))
        idp = self.doc(self.d, "idp.json")
        self.assertEqual(self.ok("verify-assertion", "--audience", "https://rp.example",
                                 "--support-doc", deleg, "--support-doc", "IDP.example=" + idp, b),
                         "carol@example.test\n")
        self.ok("verify-cert", "--support-doc", deleg, "--support-doc", "idp.example=" + idp, c)
        # the authority's document is missing: I/O (cannot decide)
        self.assertEqual(self.kt("verify-assertion", "--audience", "https://rp.example",
                                 "--support-doc", deleg, b)[0], 2)
        # a loop
        back = self.write("back.json", '{"authority":"example.test"}')
        rc, _, err = self.kt("verify-assertion", "--audience", "https://rp.example",
                             "--support-doc", deleg, "--support-doc", "idp.example=" + back, b)
        self.assertEqual(rc, 1)
        self.assertIn("loop", err)
        # too deep: d0 -> d1 -> ... -> d6 (limit 5 hops)
        args = ["--support-doc", self.write("h0", '{"authority":"d1.example"}')]
        for i in range(1, 7):
            args += ["--support-doc", "d%d.example=%s" % (i, self.write(
                "h%d" % i, '{"authority":"d%d.example"}' % (i + 1)))]
        args = args[:16]  # at most 8 files
        rc, _, err = self.kt("verify-assertion", "--audience", "https://rp.example", *args, b)
        self.assertEqual(rc, 1)
        self.assertIn("delegations", err)

    def test_input_cap(self):
        big = self.write("big", "a" * (64 * 1024 + 1))
        rc, _, err = self.kt("verify-cert", "--issuer-key", os.path.join(self.d, "current.pem"), big)
        self.assertEqual(rc, 2)
        self.assertIn("larger than", err)
        exact = self.write("exact", "a" * (64 * 1024))
        self.assertEqual(self.kt("inspect", exact)[0], 1)  # read, then undecodable

    def test_inspect(self):
        out = self.ok("inspect", self.b)
        self.assertIn("nothing here has been verified", out)
        self.assertIn("certificate 1:", out)
        self.assertIn("assertion:", out)
        self.assertIn('"email": "bob@example.test"', out)
        self.assertIn("public key  DS128, fingerprint " + self.ok("pubkey", "--fingerprint", self.u).strip(), out)
        self.assertRegex(out, r"expires     \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
        self.assertIn('"aud": "https://rp.example"', out)
        self.assertEqual(self.kt("inspect", self.write("bad", "not.a.jws"))[0], 1)


class Vectors(KeytoolCase):
    def setUp(self):
        super().setUp()
        if not os.path.exists(VECTORS):
            self.skipTest("no vectors at " + VECTORS)
        self.v = json.load(open(VECTORS))

    def test_cert_vectors(self):
        for i, v in enumerate(self.v["CERTS"]):
            key = self.write("k%d.json" % i, json.dumps(v["certifierPublicKey"]))
            cert = self.write("c%d" % i, v["cert"])
            at = int(v["issued_at"]) + 1
            rc, out, err = self.kt("verify-cert", "--issuer-key", key, "--at", at, cert)
            self.assertEqual((rc, out), (0, v["email"] + "\n"), err)
            rc, _, _ = self.kt("verify-cert", "--issuer-key", key, "--at", int(v["expires_at"]) + 1, cert)
            self.assertEqual(rc, 1)

    def test_backed_vectors(self):
        for i, v in enumerate(self.v["BACKED_ASSERTIONS"]):
            doc = self.write("d%d.json" % i, json.dumps({
                "public-key": v["certifyingKey"], "authentication": "/a", "provisioning": "/p"}))
            b = self.write("b%d" % i, v["assertion"])
            at = int(v["issued_at"]) + 1
            rc, out, err = self.kt("verify-assertion", "--audience", v["audience"],
                                   "--support-doc", doc, "--at", at, b)
            self.assertEqual((rc, out), (0, v["email"] + "\n"), err)
            rc, _, _ = self.kt("verify-assertion", "--audience", "https://evil.example",
                               "--support-doc", doc, "--at", at, b)
            self.assertEqual(rc, 1)


if __name__ == "__main__":
    main()
