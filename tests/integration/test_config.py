"""Configuration file: --check, error messages (file, line, key; exit 2),
every key's validation, relative paths, permissions, several domains,
public_url, max_age, --listen override, --list-keys against CONFIG.md."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402

c = vephelp.Checker("config")
tmp = tempfile.mkdtemp(prefix="vep-cfg-")
key1 = vephelp.demo_keydir(tmp, "s1")
key2 = vephelp.demo_keydir(tmp, "s2")
state = os.path.join(tmp, "state")
os.mkdir(state, 0o700)
n = [0]

# --check also validates the deployment's PAM service: give this run one,
# where libpam (under pam_wrapper) would look for it.
PAMDIR = os.path.join(tmp, "pam.d")
os.mkdir(PAMDIR, 0o700)
vephelp.write(os.path.join(PAMDIR, "vep-authority"), "auth required pam_deny.so\n", 0o644)
_run = vephelp.run


def run_with_pam_service(args, env=None, **kw):
    e = {"PAM_WRAPPER": "1", "PAM_WRAPPER_SERVICE_DIR": PAMDIR}
    e.update(env or {})
    return _run(args, e, **kw)


vephelp.run = run_with_pam_service


def cfg(text):
    n[0] += 1
    return vephelp.write(os.path.join(tmp, "c%d.conf" % n[0]), text)


GOOD = "# a comment\n\nlisten = 127.0.0.1:0\nstate_dir = %s\nmax_age = 60\n" \
       "[domain example.test]\nkey_dir = %s\n" % (state, key1)

rc, out, err = vephelp.run(["--config", cfg(GOOD), "--check"])
c.eq("--check good config: exit 0", rc, 0)
c.eq("--check good config: says so", out.strip(), "configuration OK")


rc, out, err = vephelp.run(["--config", cfg(GOOD + ""), "--check"],
                           {"PAM_WRAPPER_SERVICE_DIR": os.path.join(tmp, "nowhere")})
c.eq("--check without the PAM service: exit 2", rc, 2)
c.check("--check without the PAM service: says which and where",
        "no PAM service 'vep-authority' in" in err and "nowhere" in err, err)
rc, out, err = vephelp.run(["--config", cfg(GOOD.replace("max_age = 60", "pam_service = absent")),
                            "--check"], {"PAM_WRAPPER": "0"})
c.eq("--check looks in /etc/pam.d without pam_wrapper: exit 2", rc, 2)
c.check("... and says so", "/etc/pam.d" in err, err)
c.check("... naming the file and line of pam_service", ".conf:5: key 'pam_service'" in err, err)

# The server itself refuses to start without its PAM service: libpam would
# fall back to 'other', which on Debian includes common-auth (the machine's
# login stack), so the configured service would silently not be the one
# used.
rc, out, err = vephelp.run(["--config", cfg(GOOD), "--listen", "127.0.0.1:0"],
                           {"PAM_WRAPPER_SERVICE_DIR": os.path.join(tmp, "nowhere")})
c.eq("start without the PAM service: refused, exit 2", rc, 2, err)
c.check("... says which service, where it looked, and why",
        "key 'pam_service': no PAM service 'vep-authority' in %s/nowhere" % tmp in err and
        "'other'" in err and "common-auth" in err and "listening" not in out, err)
rc, out, err = vephelp.run(["--config", cfg("\n\npam_service = gone\n" + GOOD), "--listen",
                            "127.0.0.1:0"])
c.eq("start with a pam_service that has no file: refused, exit 2", rc, 2, err)
c.check("... naming the file and line of the key", re.search(r"c\d+\.conf:3: key 'pam_service': "
                                                            r"no PAM service 'gone'", err), err)


# --set KEY=VALUE overrides, checked like the file, cross-checks included.
good = cfg(GOOD)
rc, out, err = vephelp.run(["--config", good, "--set", "workers=1", "--set", "max_age=5", "--check"])
c.eq("--set: accepted", rc, 0)
rc, out, err = vephelp.run(["--config", good, "--set", "nosuchkey=1", "--check"])
c.eq("--set unknown key: exit 2", rc, 2)
c.check("--set unknown key: named", "unknown key 'nosuchkey'" in err, err)
rc, out, err = vephelp.run(["--config", good, "--set", "workers=many", "--check"])
c.eq("--set bad value: exit 2", rc, 2)
rc, out, err = vephelp.run(["--config", good, "--set", "session_idle=90000", "--check"])
c.eq("--set session_idle over session_lifetime: exit 2", rc, 2)
c.check("... says why", "must not exceed session_lifetime" in err, err)
rc, out, err = vephelp.run(["--config", good, "--set", "session_idle=90000",
                            "--set", "session_lifetime=100000", "--check"])
c.eq("--set both, in any order: accepted", rc, 0)


# --check finds a missing PAM helper (the binary alone, as a broken install).
lone = os.path.join(tmp, "lone")
os.mkdir(lone)
shutil.copy(vephelp.binary(), lone)
p = subprocess.run([os.path.join(lone, os.path.basename(vephelp.binary())), "--config",
                    cfg(GOOD), "--check"], capture_output=True, text=True,
                   env=dict(os.environ, PAM_WRAPPER="1", PAM_WRAPPER_SERVICE_DIR=PAMDIR))
c.eq("--check without vep-pam-helper beside the binary: exit 2", p.returncode, 2)
c.check("... names the missing helper", "vep-pam-helper is missing" in p.stderr, p.stderr)


def bad(what, text, line, key, reason=None):
    path = cfg(text)
    rc, out, err = vephelp.run(["--config", path, "--check"])
    c.eq("%s: exit 2" % what, rc, 2)
    where = "%s:%d:" % (path, line) if line else path + ":"
    c.check("%s: names file and line" % what, where in err, err.strip())
    if key:
        c.check("%s: names the key" % what, "'%s'" % key in err, err.strip())
    if reason:
        c.check("%s: says why" % what, reason in err, err.strip())
    c.check("%s: no 'configuration OK'" % what, "configuration OK" not in out)


D = "[domain example.test]\nkey_dir = %s\n" % key1
bad("unknown key", "colour = blue\n" + D, 1, "colour", "unknown key")
bad("unknown domain key", D + "colour = blue\n", 3, "colour", "unknown key")
bad("max_age negative", "max_age = -1\n" + D, 1, "max_age", "0 to 86400")
bad("max_age too big", "max_age = 86401\n" + D, 1, "max_age", "0 to 86400")
bad("max_age not a number", "\n\nmax_age = 5m\n" + D, 3, "max_age")
bad("max_age hex", "max_age = 0x10\n" + D, 1, "max_age")
bad("request_timeout zero", "request_timeout = 0\n" + D, 1, "request_timeout", "1 to 600")
bad("request_timeout too big", "request_timeout = 601\n" + D, 1, "request_timeout")
bad("log_level", "log_level = loud\n" + D, 1, "log_level")
bad("hsts_max_age too big", "hsts_max_age = 63072001\n" + D, 1, "hsts_max_age",
    "0 to 63072000")
bad("hsts_max_age negative", "hsts_max_age = -1\n" + D, 1, "hsts_max_age")
bad("hsts_include_subdomains", "hsts_include_subdomains = true\n" + D, 1,
    "hsts_include_subdomains", "yes or no")
bad("trusted_proxies not an address", "trusted_proxies = 127.0.0.1 proxy.lan\n" + D, 1,
    "trusted_proxies", "not an IPv4 or IPv6 address")
bad("trusted_proxies host bits", "trusted_proxies = 10.0.0.1/8\n" + D, 1, "trusted_proxies",
    "host bits")
bad("trusted_proxies prefix", "trusted_proxies = ::1/200\n" + D, 1, "trusted_proxies", "prefix")
bad("user with a slash", "user = ../x\n" + D, 1, "user")
bad("user that does not exist", "user = nosuchuser-vep\n" + D, 1, "user", "no account")
bad("user root", "\nuser = root\n" + D, 2, "user", "is root")
bad("listen without port", "listen = 127.0.0.1\n" + D, 1, "listen")
bad("listen host name", "listen = localhost:80\n" + D, 1, "listen")
bad("listen port range", "listen = 127.0.0.1:65536\n" + D, 1, "listen")
bad("listen v6 without brackets", "listen = ::1:80\n" + D, 1, "listen")
bad("duplicate key", "max_age = 1\nmax_age = 2\n" + D, 2, "max_age", "twice")
bad("empty value", "max_age =\n" + D, 1, "max_age", "empty")
bad("domain key in global scope", "key_dir = /x\n" + D, 1, "key_dir", "[domain")
bad("global key in a domain", D + "max_age = 5\n", 3, "max_age", "global")
bad("missing key_dir", "[domain example.test]\npublic_url = https://id.example.test\n",
    1, "key_dir", "missing")
bad("no domain", "max_age = 5\n", 0, None, "no [domain")
bad("bad domain name", "[domain not_valid]\nkey_dir = /x\n", 1, None, "not a valid domain")
bad("duplicate domain", D + "[domain EXAMPLE.test]\nkey_dir = %s\n" % key1, 3, None, "twice")
bad("unknown section", "[server]\n" + D, 1, None, "unknown section")
bad("unterminated section", "[domain example.test\n", 1, None)
bad("not an assignment", "listen 127.0.0.1:80\n" + D, 1, None, "key = value")
bad("public_url with path", D + "public_url = https://id.example.test/x\n", 3, "public_url")
bad("public_url scheme", D + "public_url = ftp://id.example.test\n", 3, "public_url")
rc, out, err = vephelp.run(["--config", cfg(
    GOOD + "public_url = https://login.example.test\nauthority = login.example.test\n"
    "[domain example.org]\nkey_dir = %s\nauthority = login.example.test\n" % key1),
    "--check"])
c.eq("two domains delegating to one login host with one key: OK", (rc, out.strip()),
     (0, "configuration OK"), err.strip())
bad("authority not a host", D + "authority = https://login.example.test\n", 3, "authority",
    "host name")
bad("authority port range", D + "authority = login.example.test:70000\n", 3, "authority",
    "host name")
bad("authority is the domain itself", D + "authority = EXAMPLE.test\n", 3, "authority",
    "itself")
bad("authority not public_url's host",
    D + "public_url = https://id.example.test\nauthority = login.example.test\n", 4,
    "authority", "public_url")
bad("domains sharing a login host with different keys",
    D + "authority = login.example.test\n[domain example.org]\nkey_dir = %s\n"
    "authority = login.example.test\n" % key2, 3, "authority", "same key_dir")
bad("a delegating domain's login host served with another key",
    D + "authority = login.example.test\n[domain login.example.test]\nkey_dir = %s\n"
    % key2, 3, "authority", "same key_dir")
bad("line too long (LIMIT_CONFIG_LINE_BYTES=1024)", "# " + "x" * 1030 + "\n" + D, 1, None,
    "longer than 1024")
bad("missing key dir", "[domain example.test]\n\nkey_dir = %s/none\n" % tmp, 3, None,
    "[domain example.test] key_dir")
bad("missing key dir: says how to make the key",
    "[domain example.test]\n\nkey_dir = %s/none\n" % tmp, 3, None,
    "no key there (no current.pem); create it with: vep-keytool init --dir %s/none" % tmp)
os.mkdir(os.path.join(tmp, "emptykeys"), 0o700)
bad("key dir without current.pem: says how to make the key",
    "[domain example.test]\nkey_dir = %s/emptykeys\n" % tmp, 2, None,
    "vep-keytool init --dir %s/emptykeys" % tmp)
rc, out, err = vephelp.run(["--config", cfg("# " + "x" * 1018 + "\n" + D), "--check"])
c.eq("line of exactly 1024 bytes is fine", rc, 0)

# LIMIT_CONFIG_DOMAINS = 64
many = "".join("[domain d%d.example]\nkey_dir = %s\n" % (i, key1) for i in range(64))
rc, out, err = vephelp.run(["--config", cfg(many), "--check"])
c.eq("64 domains: OK", rc, 0)
bad("65 domains (LIMIT_CONFIG_DOMAINS)", many + "[domain d64.example]\nkey_dir = %s\n" % key1,
    129, None, "more than 64")
# LIMIT_CONFIG_FILE_BYTES = 256 KiB
big = cfg(D + ("#" * 1000 + "\n") * 263)
rc, out, err = vephelp.run(["--config", big, "--check"])
c.check("file over 256 KiB refused", rc == 2 and "larger than 262144" in err, err)
rc, out, err = vephelp.run(["--config", cfg(D + ("#" * 1000 + "\n") * 250), "--check"])
c.eq("file under 256 KiB accepted", rc, 0)
rc, out, err = vephelp.run(["--config", os.path.join(tmp, "absent.conf"), "--check"])
c.check("unreadable file: exit 2 naming it", rc == 2 and "absent.conf" in err, err)

# Permissions.
loose = vephelp.copy_keydir(key1, os.path.join(tmp, "loose"))
os.chmod(os.path.join(loose, "current.pem"), 0o644)
bad("key file readable by others", "[domain example.test]\nkey_dir = %s\n" % loose, 2, None,
    "key_dir")
gw = vephelp.copy_keydir(key1, os.path.join(tmp, "gw"))
os.chmod(gw, 0o770)
bad("key dir writable by group", "[domain example.test]\nkey_dir = %s\n" % gw, 2, None,
    "writable by group")
open_state = os.path.join(tmp, "openstate")
os.mkdir(open_state)
os.chmod(open_state, 0o755)
bad("state_dir readable by others", "state_dir = %s\n" % open_state + D, 1, "state_dir", "0700")

# state_dir: the server creates only its last directory, so a missing
# parent is caught by --check and refused at start, naming file and line.
lost = "\nstate_dir = %s/no-such-parent/state\n" % tmp + D
bad("state_dir whose parent is missing", lost, 2, "state_dir",
    "its parent '%s/no-such-parent' does not exist" % tmp)
rc, out, err = vephelp.run(["--config", cfg(lost), "--listen", "127.0.0.1:0"])
c.eq("state_dir whose parent is missing: the server refuses to start (exit 2)", rc, 2, err)
c.check("... saying why", "its parent" in err and "does not exist" in err, err)
rc, out, err = vephelp.run(["--config", cfg("state_dir = %s/fresh\n" % tmp + D), "--check"])
c.eq("state_dir missing but its parent there: --check accepts it (the start creates it)",
     rc, 0, err)

# The database: --check opens it read-only; a damaged one, or one made by a
# newer version (a downgrade), is refused naming the file and the key.
import sqlite3  # noqa: E402


def db_state(name, make):
    d = os.path.join(tmp, name)
    os.mkdir(d, 0o700)
    make(os.path.join(d, "authority.db"))
    return d, "state_dir = %s\n" % d + D


def garbage(path):
    vephelp.write(path, "this is not a database\n" * 200)


def damaged(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)")
    conn.execute("CREATE INDEX t_b ON t (b)")
    conn.executemany("INSERT INTO t (b) VALUES (?)", [("x%05d" % i,) for i in range(3000)])
    conn.commit()
    conn.close()
    with open(path, "r+b") as f:
        f.seek(4096 * 5 + 100)
        f.write(b"\xff" * 2000)


def newer(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (a)")
    conn.execute("PRAGMA user_version = 9999")
    conn.commit()
    conn.close()


d, text = db_state("db-garbage", garbage)
bad("database that is not one", text, 1, "state_dir", "damaged or not a database")
d, text = db_state("db-damaged", damaged)
bad("database with a damaged page", text, 1, "state_dir", "damaged")
c.check("... the message names the file", os.path.join(d, "authority.db") in
        vephelp.run(["--config", cfg(text), "--check"])[2])
d, text = db_state("db-newer", newer)
bad("database of a newer version (a downgrade)", text, 1, "state_dir",
    "database schema is newer than this program (a downgrade: see README.md, Upgrading)")
rc, out, err = vephelp.run(["--config", cfg(text), "--listen", "127.0.0.1:0"])
c.eq("database of a newer version: the server refuses to start (exit 1)", rc, 1, err)
c.check("... saying why", "database schema is newer than this program" in err, err)
conn = sqlite3.connect(os.path.join(d, "authority.db"))
c.eq("... and leaves the file as it was", conn.execute("PRAGMA user_version").fetchone()[0],
     9999)
conn.close()

# An upgrade: a database of the first schema version is accepted by --check
# (the unit's ExecStartPre runs before the migration) and migrated by the
# start to the last version, one step at a time.
schema = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schema")
steps = sorted(f for f in os.listdir(schema) if re.match(r"^\d{4}_.*\.sql$", f))


def first_version(path):
    conn = sqlite3.connect(path)
    with open(os.path.join(schema, steps[0])) as f:
        conn.executescript(f.read())
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()


d, text = db_state("db-old", first_version)
rc, out, err = vephelp.run(["--config", cfg(text), "--check"])
c.eq("database of an older version: --check accepts it (the start migrates it)", rc, 0, err)
a = vephelp.Authority(["--config", cfg(text), "--listen", "127.0.0.1:0"], tmp=tmp)
c.eq("... the server starts on it", a.get("/healthz", {"Host": "example.test"}).status, 200)
c.eq("... and stops cleanly", a.stop(), 0)
conn = sqlite3.connect(os.path.join(d, "authority.db"))
c.eq("... having migrated it to the last version (%d)" % len(steps),
     conn.execute("PRAGMA user_version").fetchone()[0], len(steps))
conn.close()

# Relative key_dir resolves against the file's directory.
sub = os.path.join(tmp, "etc")
os.mkdir(sub)
vephelp.copy_keydir(key1, os.path.join(sub, "keys"))
rel = vephelp.write(os.path.join(sub, "rel.conf"), "state_dir = %s\n[domain example.test]\n"
                    "key_dir = keys\n" % state)
rc, out, err = vephelp.run(["--config", rel, "--check"], )
c.eq("relative key_dir is relative to the config file", rc, 0)

# Usage errors.
rc, out, err = vephelp.run([])
c.eq("no arguments: exit 2", rc, 2)
rc, out, err = vephelp.run(["--demo", "--config", cfg(GOOD)])
c.eq("--demo with --config: exit 2", rc, 2)
rc, out, err = vephelp.run(["--config", cfg(GOOD), "--bogus"])
c.eq("unknown option: exit 2", rc, 2)
rc, out, err = vephelp.run(["--config", cfg(GOOD), "--listen", "nowhere", "--check"])
c.check("bad --listen: exit 2 naming it", rc == 2 and "--listen" in err, err)

# --list-keys and CONFIG.md.
rc, out, err = vephelp.run(["--list-keys"])
c.eq("--list-keys: exit 0", rc, 0)
keys = [ln.split("\t")[0] for ln in out.splitlines() if ln]
c.check("--list-keys: lists keys", {"listen", "state_dir", "max_age", "key_dir",
                                    "public_url"} <= set(keys), keys)
doc_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "authority", "CONFIG.md")
with open(doc_path) as f:
    doc = f.read()
for k in keys:
    c.check("CONFIG.md documents '%s'" % k, re.search(r"^### `%s`" % re.escape(k), doc, re.M))

# Serving from a configuration: two domains, max_age, public_url, --listen.
two = cfg("listen = 127.0.0.1:1\nstate_dir = %s\nmax_age = 60\n"
          "[domain a.example]\nkey_dir = %s\n"
          "[domain b.example]\nkey_dir = %s\npublic_url = https://id.b.example:8443/\n"
          % (state, key1, key2))
a = vephelp.Authority(["--config", two, "--listen", "127.0.0.1:0"], tmp=tmp)
c.check("--listen overrides the file", a.port not in (0, 1))
ra = a.get("/.well-known/browserid", {"Host": "a.example"})
rb = a.get("/.well-known/browserid", {"Host": "b.example"})
c.eq("domain a: 200", ra.status, 200)
c.eq("domain b: 200", rb.status, 200)
c.check("each domain publishes its own key", ra.json()["public-key"] != rb.json()["public-key"])
c.eq("?domain=b.example selects b", a.get("/pk?domain=b.example").json(),
     rb.json()["public-key"])
c.eq("IP Host: first domain", a.get("/pk").json(), ra.json()["public-key"])
c.eq("max_age = 60", ra.header("Cache-Control"), "public, max-age=60")
hm = a.get("/.well-known/host-meta.json", {"Host": "b.example"}).json()
c.eq("public_url used for links", hm["links"][0]["template"],
     "https://id.b.example:8443/.well-known/webfinger?resource={uri}")
wf = a.get("/.well-known/webfinger?resource=acct:x@b.example").json()
c.eq("public_url used in WebFinger", wf["links"][0]["href"], "https://id.b.example:8443/pk")
wf = a.get("/.well-known/webfinger?resource=acct:x@a.example", {"Host": "b.example"}).json()
c.eq("WebFinger for a.example links via the Host", wf["links"][0]["href"],
     "http://b.example/pk")
c.eq("unserved Host: 421", a.get("/pk", {"Host": "c.example"}).status, 421)
c.eq("SIGTERM: exit 0", a.stop(), 0)
c.check("the server made its database", os.path.isfile(os.path.join(state, "authority.db")))
rc, out, err = vephelp.run(["--config", cfg("state_dir = %s\n" % state + D), "--check"])
c.eq("a database the server made: --check accepts it", rc, 0, err)
sys.exit(c.finish())
