#!/usr/bin/env python3
"""vep-keytool key and support-document commands against real files."""
import json
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402

C = vephelp.Checker("keytool_keys")


def genkey_mode_and_no_overwrite(k):
    p = k.path("d.pem")
    out = k.ok("genkey", "--out", p)
    C.check("genkey: prints the algorithm first (RS256)", out.startswith("RS256 "), out)
    C.eq("genkey: the key file is 0600", stat.S_IMODE(os.stat(p).st_mode), 0o600)
    before = open(p).read()
    rc, _, err = k.kt("genkey", "--out", p)
    C.eq("genkey over an existing file: exit 2", rc, 2)
    C.check("... says it refuses to overwrite", "refusing to overwrite" in err, err)
    C.eq("... and leaves the file alone", open(p).read(), before)


def genkey_algs_and_usage(k):
    for alg, family in (("RS128", "RS"), ("DS128", "DS"), ("DS256", "DS")):
        p = k.user_key(alg + ".pem", alg)
        pub = json.loads(k.ok("pubkey", p))
        C.eq("genkey --alg %s: pubkey says algorithm %s" % (alg, family), pub["algorithm"],
             family)
    C.eq("genkey --alg RS64: exit 2", k.kt("genkey", "--alg", "RS64", "--out", k.path("x"))[0], 2)
    C.eq("genkey without --out: exit 2", k.kt("genkey")[0], 2)
    C.eq("an unknown command: exit 2", k.kt("nosuchcommand")[0], 2)
    C.eq("no command: exit 2", k.kt()[0], 2)
    for cmd in ("genkey", "pubkey", "init", "rotate", "retire", "keys", "support-doc",
                "certify", "sign-assertion", "verify-cert", "verify-assertion", "inspect"):
        rc, out, _ = k.kt(cmd, "--help")
        C.eq("%s --help: exit 0" % cmd, rc, 0)
        C.check("%s --help: prints its usage" % cmd, "usage: vep-keytool " + cmd in out, out)
    rc, out, _ = k.kt("--help")
    C.eq("--help: exit 0", rc, 0)
    C.check("--help: lists the commands (verify-assertion)", "verify-assertion" in out, out)


def private_key_permissions_refused(k):
    p = k.path("d.pem")
    k.ok("genkey", "--out", p)
    os.chmod(p, 0o640)
    rc, _, err = k.kt("pubkey", p)
    C.eq("pubkey of a 0640 private key: exit 2", rc, 2)
    C.check("... says chmod 600 and the file", "chmod 600 " + p in err, err)
    u = k.user_key()
    rc, _, err = k.kt("certify", "--key", p, "--email", "a@example.test", "--pubkey", u)
    C.eq("certify with a 0640 domain key: exit 2", rc, 2)
    C.check("... says chmod 600", "chmod 600" in err, err)
    d = k.keydir()
    os.chmod(os.path.join(d, "current.pem"), 0o644)
    rc, _, err = k.kt("rotate", "--dir", d)
    C.eq("rotate with a 0644 current.pem: exit 2", rc, 2)
    C.check("... says chmod 600", "chmod 600" in err, err)


def init_rotate_retire_and_support_doc(k):
    d = k.path("keys")
    out1 = k.ok("init", "--dir", d).split()
    C.eq("init: current RS256 ...", out1[:2], ["current", "RS256"])
    C.eq("init: the key directory is 0700", stat.S_IMODE(os.stat(d).st_mode), 0o700)
    C.eq("init again: leaves the key alone", k.ok("init", "--dir", d).split(), out1)
    fp1 = out1[2]
    C.eq("pubkey --fingerprint --dir: the fingerprint init printed",
         k.ok("pubkey", "--fingerprint", "--dir", d).strip(), fp1)

    doc = json.loads(k.ok("support-doc", "--dir", d))
    C.eq("support-doc: members in order", list(doc),
         ["public-key", "keys", "authentication", "provisioning"])
    C.eq("support-doc: default authentication", doc["authentication"], "/sign-in/authenticate")
    C.eq("support-doc: default provisioning", doc["provisioning"], "/sign-in/provision")
    C.eq("support-doc: keys is [public-key]", doc["keys"], [doc["public-key"]])
    C.eq("pubkey --dir: the document's public-key", json.loads(k.ok("pubkey", "--dir", d)),
         doc["public-key"])

    fp2 = k.ok("rotate", "--dir", d).strip()
    C.eq("rotate: prints a 64-character fingerprint", len(fp2), 64)
    C.check("rotate: a new key", fp2 != fp1, fp2)
    keys = k.ok("keys", "--dir", d).split("\n")
    C.eq("keys: current is the new key", keys[0].split(), ["current", "RS256", fp2])
    C.eq("keys: previous is the old key", keys[1].split(), ["previous", "RS256", fp1])
    doc2 = json.loads(k.ok("support-doc", "--dir", d, "--authentication", "/a",
                           "--provisioning", "/p"))
    C.eq("support-doc after rotate: two keys", len(doc2["keys"]), 2)
    C.eq("... the second the old public-key", doc2["keys"][1], doc["public-key"])
    C.eq("... the first the new public-key", doc2["keys"][0], doc2["public-key"])
    C.eq("support-doc --authentication --provisioning",
         (doc2["authentication"], doc2["provisioning"]), ("/a", "/p"))

    rc, _, err = k.kt("retire", "--dir", d)
    C.eq("retire without --state or --force: exit 2", rc, 2)
    C.check("... says what it needs", "give --state DIR" in err and "--force" in err, err)
    rc, _, err = k.kt("retire", "--dir", d, "--state", k.path("nostate"))
    C.eq("retire --state of a directory without a database: exit 2", rc, 2)
    out = k.ok("retire", "--dir", d, "--force")
    C.eq("retire: prints the retired key", out.split(), ["retired", "RS256", fp1])
    doc3 = json.loads(k.ok("support-doc", "--dir", d))
    C.eq("support-doc after retire: one key", len(doc3["keys"]), 1)
    C.eq("retire again: exit 0", k.kt("retire", "--dir", d, "--force")[0], 0)
    C.eq("rotate of a missing directory: exit 2", k.kt("rotate", "--dir", k.path("none"))[0], 2)


def support_doc_modes(k):
    C.eq("support-doc --delegate", json.loads(k.ok("support-doc", "--delegate", "idp.example")),
         {"authority": "idp.example"})
    C.eq("support-doc --delegate with a port",
         json.loads(k.ok("support-doc", "--delegate", "idp.example:8443")),
         {"authority": "idp.example:8443"})
    C.eq("support-doc --disabled", json.loads(k.ok("support-doc", "--disabled")),
         {"disabled": True})
    C.eq("support-doc without a source: exit 2", k.kt("support-doc")[0], 2)
    C.eq("support-doc --disabled --delegate: exit 2",
         k.kt("support-doc", "--disabled", "--delegate", "a.example")[0], 2)
    C.eq("support-doc --delegate 'not a host': exit 2",
         k.kt("support-doc", "--delegate", "not a host")[0], 2)
    C.eq("support-doc --delegate with a bad port: exit 2",
         k.kt("support-doc", "--delegate", "a.example:x")[0], 2)
    d = k.keydir()
    C.eq("support-doc --authentication relative: exit 2",
         k.kt("support-doc", "--dir", d, "--authentication", "relative")[0], 2)
    C.eq("support-doc --provisioning with a space: exit 2",
         k.kt("support-doc", "--dir", d, "--provisioning", "/a b")[0], 2)


if __name__ == "__main__":
    sys.exit(vephelp.keytool_main(C, [
        genkey_mode_and_no_overwrite, genkey_algs_and_usage, private_key_permissions_refused,
        init_rotate_retire_and_support_doc, support_doc_modes]))
