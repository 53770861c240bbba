"""The key rotation runbook of README.md, followed step by step against the
real server, with a relying party that caches the support document for
max_age: no certificate or assertion that is still valid stops verifying,
neither against the fresh document nor against the one a verifier cached.

  1. vep-keytool prepare; SIGHUP   (next key published, current signs)
  2. wait max_age; vep-keytool rotate; SIGHUP   (next signs, old one previous)
  3. after the longest certificate lifetime + max_age: vep-keytool retire; SIGHUP

And why step 1 exists: rotating without it, a verifier holding the document
from before the rotation refuses the new key's certificates."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("rotation")
MAX_AGE = 1


def exp_ms(cert):
    return vephelp.jws_payload(cert)["exp"]


class RP:
    """A relying party's view: the documents it fetched, by name."""

    def __init__(self, w, auth):
        self.w, self.auth, self.n = w, auth, 0

    def fetch(self):
        doc = self.auth.get("/.well-known/browserid").json()
        self.n += 1
        path = os.path.join(self.w.tmp, "doc%d.json" % self.n)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path, doc

    def verify(self, cert, doc, at=None):
        self.n += 1
        path = os.path.join(self.w.tmp, "cert%d.jws" % self.n)
        with open(path, "w") as f:
            f.write(cert)
        args = ["verify-cert", "--support-doc", "example.test=" + doc]
        if at is not None:
            args += ["--at", str(at)]
        return vephelp.kt(*(args + [path]))[0] == 0


def reload(auth, before):
    doc = auth.reload(before)
    if doc != before:
        time.sleep(0.3)   # every event loop has the new set
    return doc


def main():
    w = signin.World("max_age = %d\nworkers = 2\n" % MAX_AGE)
    _, pub = vephelp.user_key(w.tmp)
    auth = w.start()
    try:
        cl = signin.Client(auth)
        C.eq("signed in", cl.login("alice@example.test", "wonderland").status, 200)
        rp = RP(w, auth)

        def cert():
            r = cl.post("/api/cert", {"pubkey": pub, "duration": 600})
            return r.json()["cert"]

        doc0, d0 = rp.fetch()
        c0 = cert()
        C.check("before: a certificate verifies", rp.verify(c0, doc0))

        # 1. Publish the next key.
        rc, out, err = vephelp.kt("prepare", "--dir", w.keys)
        C.eq("prepare: exit 0", rc, 0)
        rc, out, err = vephelp.kt("prepare", "--dir", w.keys)
        C.eq("prepare again: exit 2", rc, 2)
        C.check("prepare again: says there is a next key", "next key already" in out + err,
                out + err)
        d1 = reload(auth, d0)
        doc1, _ = rp.fetch()
        C.eq("step 1: the current key still signs", d1["public-key"], d0["public-key"])
        C.eq("step 1: the next key is published", len(d1["keys"]), 2)
        C.check("step 1: old certificates verify", rp.verify(c0, doc1))
        c0b = cert()  # still signed by the current (soon previous) key
        C.check("step 1: new certificates verify against the old document",
                rp.verify(c0b, doc0))

        # 2. After max_age every verifier's cache has the next key: switch.
        time.sleep(MAX_AGE)
        rc, out, err = vephelp.kt("rotate", "--dir", w.keys)
        C.eq("rotate: exit 0", rc, 0)
        d2 = reload(auth, d1)
        doc2, _ = rp.fetch()
        C.eq("step 2: the next key signs now", d2["public-key"], d1["keys"][1])
        C.eq("step 2: the old key is previous", d2["keys"][1:], [d0["public-key"]])
        c1 = cert()
        C.check("step 2: a new certificate verifies against the fresh document",
                rp.verify(c1, doc2))
        C.check("step 2: ... and against the document cached in step 1", rp.verify(c1, doc1))
        C.check("step 2: the old certificate still verifies", rp.verify(c0, doc2))

        # 3. Retire once every certificate of the old key has expired and
        # max_age has passed (simulated with --at: lifetimes are minutes);
        # a verifier accepts it until the clock skew after its exp.
        after = exp_ms(c0) + (MAX_AGE + 1) * 1000 + vephelp.clock_skew_ms()
        C.check("step 3: by then the old certificate is expired whatever the document",
                not rp.verify(c0, doc2, at=after))
        # The audit trail knows the old key's certificate is still valid
        # (this test skips the waiting by verifying "at" a later time).
        fp_old = vephelp.kt("pubkey", "--fingerprint",
                            os.path.join(w.keys, "previous.pem"))[1].strip()
        rc, out, err = vephelp.kt("retire", "--dir", w.keys, "--state", w.state)
        C.eq("retire --state while a certificate of the old key is valid: exit 1", rc, 1)
        # The last certificate the old key signed is c0b (seconds after c0:
        # the minute may differ).
        until = time.strftime("%Y-%m-%dT%H:%M", time.gmtime(exp_ms(c0b) / 1000))
        C.check("... it names the key and until when its certificates are valid",
                fp_old in err and "valid until " + until in err, err)
        C.check("... and the key is still there",
                os.path.exists(os.path.join(w.keys, "previous.pem")))
        rc, out, err = vephelp.kt("retire", "--dir", w.keys)
        C.eq("retire without --state or --force: exit 2", rc, 2)
        rc, out, err = vephelp.kt("retire", "--dir", w.keys, "--force")
        C.eq("retire --force: exit 0", rc, 0)
        d3 = reload(auth, d2)
        doc3, _ = rp.fetch()
        C.eq("step 3: only the current key is published", d3["keys"], [d2["public-key"]])
        C.check("step 3: current certificates verify", rp.verify(c1, doc3))
        C.check("step 3: ... also at the retirement time", rp.verify(c1, doc3, at=exp_ms(c1) - 1))

        # Without step 1: the cached document does not know the new key.
        vephelp.kt("rotate", "--dir", w.keys)
        d4 = reload(auth, d3)
        c2 = cert()
        C.check("without prepare: the fresh document verifies the new key", rp.verify(c2, rp.fetch()[0]))
        C.check("without prepare: a verifier's cached document refuses it",
                not rp.verify(c2, doc3))
        C.check("the served document changed", d4 != d3)
    finally:
        C.eq("server: clean exit", auth.stop(), 0)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
