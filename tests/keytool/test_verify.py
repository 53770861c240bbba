#!/usr/bin/env python3
"""vep-keytool certify / sign-assertion / verify-* / inspect, including
Mozilla's known-answer vectors verified as of their own time, and the
forgeries that unsafe user keys allow (issue 11) refused."""
import base64
import hashlib
import json
import os
import random

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


# --- Unsafe user keys (issue 11): forgeries made without any private key ---
# A certificate is public (every relying party sees it), so a certified user
# key that anyone can sign with lets anyone speak for its address anywhere.
# These tests build such certificates with a domain key of their own (pure
# Python RSA, so no libvep code signs them) and check that vep-keytool
# neither issues them nor accepts assertions made with them.

_RNG = random.Random(11)
_SHA256_DIGESTINFO = bytes.fromhex("3031300d060960864801650304020105000420")


_SMALL_PRIMES = [p for p in range(3, 2000) if all(p % f for f in range(3, int(p ** 0.5) + 1, 2))]


def _is_probable_prime(n, rounds=16):
    if n < 2 or n % 2 == 0:
        return n == 2
    for p in _SMALL_PRIMES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for _ in range(rounds):
        x = pow(_RNG.randrange(2, n - 1), d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def _prime(bits):
    while True:
        c = _RNG.getrandbits(bits) | (3 << (bits - 2)) | 1
        if _is_probable_prime(c):
            return c


def _b64(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jws_input(header, body):
    return (_b64(json.dumps(header, separators=(",", ":")).encode()) + "." +
            _b64(json.dumps(body, separators=(",", ":")).encode()))


def _rsa_sign(n, d, msg):
    """RSASSA-PKCS1-v1_5 with SHA-256 (RS256 and RS128 alike)."""
    k = (n.bit_length() + 7) // 8
    t = _SHA256_DIGESTINFO + hashlib.sha256(msg).digest()
    em = b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t
    return pow(int.from_bytes(em, "big"), d, n).to_bytes(k, "big")


class UnsafeUserKeys(KeytoolCase):
    DOMAIN = "example.test"
    VICTIM = "victim@example.test"
    RP = "https://victim-rp.example"

    @classmethod
    def setUpClass(cls):
        # The domain's own (honest) RS256 key.
        while True:
            p, q = _prime(1024), _prime(1024)
            n = p * q
            if p != q and n.bit_length() == 2048:
                break
        cls.dn, cls.dd = n, pow(65537, -1, (p - 1) * (q - 1))

    def support_doc(self):
        return self.write("doc.json", json.dumps({
            "public-key": {"algorithm": "RS", "n": str(self.dn), "e": "65537"},
            "authentication": "/sign-in", "provisioning": "/provision"}))

    def cert_for(self, pubkey):
        now = now_ms()
        inp = _jws_input({"alg": "RS256"}, {
            "iss": self.DOMAIN, "iat": now - 10000, "exp": now + 3600000,
            "public-key": pubkey, "principal": {"email": self.VICTIM}})
        return inp + "." + _b64(_rsa_sign(self.dn, self.dd, inp.encode()))

    def refused(self, pubkey, assertion):
        """certify refuses the key; verify-assertion refuses cert~assertion
        made with it; verify-cert refuses the certificate."""
        kf = self.write("user.json", json.dumps(pubkey))
        d = self.keydir()
        rc, out, err = self.kt("certify", "--dir", d, "--email", self.VICTIM, "--pubkey", kf)
        self.assertNotEqual(rc, 0, "certified an unsafe key: " + out)
        self.assertEqual(out, "")
        self.assertIn("unsafe key", err)
        doc = self.support_doc()
        cert = self.cert_for(pubkey)
        backed = self.write("backed", cert + "~" + assertion)
        rc, out, err = self.kt("verify-assertion", "--audience", self.RP,
                               "--support-doc", doc, backed)
        self.assertEqual((rc, out), (1, ""), "forged assertion accepted: " + err)
        self.assertIn("unsafe key", err)
        rc, out, err = self.kt("verify-cert", "--support-doc", doc, self.write("cert", cert))
        self.assertEqual((rc, out), (1, ""))

    def test_harness_domain_key_is_honest(self):
        """The same harness with an honest user key verifies, so the
        refusals below are about the user keys alone."""
        while True:
            p, q = _prime(1024), _prime(1024)
            if p != q and (p * q).bit_length() == 2048:
                break
        n, d = p * q, pow(65537, -1, (p - 1) * (q - 1))
        pk = {"algorithm": "RS", "n": str(n), "e": "65537"}
        inp = _jws_input({"alg": "RS256"}, {"exp": now_ms() + 120000, "aud": self.RP})
        a = inp + "." + _b64(_rsa_sign(n, d, inp.encode()))
        backed = self.write("ok-backed", self.cert_for(pk) + "~" + a)
        self.assertEqual(self.ok("verify-assertion", "--audience", self.RP,
                                 "--support-doc", self.support_doc(), backed),
                         self.VICTIM + "\n")

    def test_dsa_even_q_composite_p_forgery(self):
        """q even, p composite, g = y = p - 1: g^q = (-1)^q = 1, so the old
        range checks passed, and r = s = 1 verifies every message whose
        SHA-1 is odd (g^u1 * y^u2 = (-1)^(H+1) = 1 = r mod q)."""
        p = (1 << 1023) + 1                  # odd, divisible by 3
        q = (1 << 159) + 2                   # 160 bits, even
        pk = {"algorithm": "DS", "y": "%x" % (p - 1), "p": "%x" % p,
              "q": "%x" % q, "g": "%x" % (p - 1)}
        exp = now_ms() + 120000
        while True:
            inp = _jws_input({"alg": "DS128"}, {"exp": exp, "aud": self.RP})
            if hashlib.sha1(inp.encode()).digest()[-1] & 1:
                break
            exp += 1
        sig = (1).to_bytes(20, "big") + (1).to_bytes(20, "big")
        self.refused(pk, inp + "." + _b64(sig))

    def test_rsa_prime_modulus_forgery(self):
        """n prime: d = e^-1 mod (n - 1) is a working private exponent that
        anyone can compute from the certificate."""
        while True:
            n = _prime(2048)
            if (n - 1) % 65537 != 0:
                break
        d = pow(65537, -1, n - 1)
        pk = {"algorithm": "RS", "n": str(n), "e": "65537"}
        inp = _jws_input({"alg": "RS256"}, {"exp": now_ms() + 120000, "aud": self.RP})
        self.refused(pk, inp + "." + _b64(_rsa_sign(n, d, inp.encode())))


if __name__ == "__main__":
    main()
