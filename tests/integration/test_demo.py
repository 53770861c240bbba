"""--demo: state directory (0700) with a generated key (0600) under --state or
the default ~/.local/state/vep-authority-demo, key reused on restart, a
non-private state directory refused, SIGINT and SIGTERM clean exits. The
demo website verifies assertions for its own configured origin, never the
Host header's; embed_origins decides who may frame /embed (https:// only,
http:// only on loopback); without shim_origin the legacy provisioning page
is off."""

import json
import os
import re
import select
import signal
import stat
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402

c = vephelp.Checker("demo")
tmp = tempfile.mkdtemp(prefix="vep-demo-")
state = os.path.join(tmp, "nested", "state")


def mode(p):
    return stat.S_IMODE(os.stat(p).st_mode)


a = vephelp.Authority(["--demo", "--state", state, "--listen", "127.0.0.1:0"], tmp=tmp)
c.eq("listens on 127.0.0.1", a.host, "127.0.0.1")
c.check("real port printed", a.port > 0)
keyfile = os.path.join(state, "keys", "example.test", "current.pem")
c.eq("state dir mode 0700", oct(mode(state)), oct(0o700))
c.eq("keys dir mode 0700", oct(mode(os.path.join(state, "keys"))), oct(0o700))
c.eq("key dir mode 0700", oct(mode(os.path.dirname(keyfile))), oct(0o700))
c.eq("key file mode 0600", oct(mode(keyfile)), oct(0o600))
with open(keyfile) as f:
    c.check("key file is PKCS#8 PEM", f.read().startswith("-----BEGIN PRIVATE KEY-----"))
r = a.get("/.well-known/browserid")
c.eq("serves example.test at http://127.0.0.1:PORT", r.status, 200)
c.eq("serves example.test by name", a.get("/pk", {"Host": "example.test"}).status, 200)
pk1 = a.get("/pk").json()
c.eq("SIGINT: exit 0", a.stop(signal.SIGINT), 0)

a = vephelp.Authority(["--demo", "--state", state, "--listen", "127.0.0.1:0"], tmp=tmp)
c.eq("restart keeps the key", a.get("/pk").json(), pk1)
c.eq("SIGTERM: exit 0", a.stop(), 0)

# Relative --state is relative to the working directory.
cwd = os.getcwd()
os.chdir(tmp)
rc, out, err = vephelp.run(["--demo", "--state", "relstate", "--check"])
os.chdir(cwd)
c.eq("relative --state: --check exit 0", rc, 0)
c.check("relative --state: created under the working directory",
        os.path.exists(os.path.join(tmp, "relstate", "keys", "example.test", "current.pem")))
c.eq("--demo --check says so", out.strip(), "configuration OK")

# Default location, from HOME (and XDG_STATE_HOME when set).
home = os.path.join(tmp, "home")
os.mkdir(home)
env = {"HOME": home}
env_no_xdg = dict(os.environ, HOME=home)
env_no_xdg.pop("XDG_STATE_HOME", None)
old = dict(os.environ)
os.environ.clear()
os.environ.update(env_no_xdg)
rc, out, err = vephelp.run(["--demo", "--check"])
c.eq("default state: exit 0", rc, 0)
dflt = os.path.join(home, ".local", "state", "vep-authority-demo")
c.check("default state under ~/.local/state", os.path.isdir(dflt), err)
c.eq("default state mode 0700", oct(mode(dflt)) if os.path.isdir(dflt) else None, oct(0o700))
rc, out, err = vephelp.run(["--demo", "--check"], env={"XDG_STATE_HOME": os.path.join(tmp, "x")})
c.check("XDG_STATE_HOME honoured", rc == 0 and os.path.isdir(os.path.join(
    tmp, "x", "vep-authority-demo")), err)
os.environ.clear()
os.environ.update(old)

# A state directory others can read is refused, never chmod-ed.
shared = os.path.join(tmp, "shared")
os.mkdir(shared)
os.chmod(shared, 0o755)
rc, out, err = vephelp.run(["--demo", "--state", shared, "--listen", "127.0.0.1:0"])
c.eq("open state dir: exit 2", rc, 2)
c.check("open state dir: says why", "0700" in err and shared in err, err)
c.eq("open state dir: left alone", oct(mode(shared)), oct(0o755))
c.check("open state dir: no key written", not os.path.exists(os.path.join(shared, "keys")))

# Bind failure: exit 1 with a reason.
a = vephelp.Authority(["--demo", "--state", state, "--listen", "127.0.0.1:0"], tmp=tmp)
rc, out, err = vephelp.run(["--demo", "--state", state, "--listen", "127.0.0.1:%d" % a.port])
c.eq("port in use: exit 1", rc, 1)
c.check("port in use: logged", "cannot listen" in err, err)
c.eq("first server still stops cleanly", a.stop(), 0)

# SIGHUP reloads keys after a rotation (needs vep-keytool to rotate).
if vephelp.keytool():
    a = vephelp.Authority(["--demo", "--state", state, "--listen", "127.0.0.1:0"], tmp=tmp)
    before = a.support()
    c.eq("vep-keytool rotate: exit 0",
         vephelp.kt("rotate", "--dir", os.path.dirname(keyfile))[0], 0)
    c.eq("no reload before SIGHUP", a.support(), before)
    after = a.reload(before)
    c.check("SIGHUP: new current key", after["public-key"] != before["public-key"])
    c.eq("SIGHUP: previous key still published", after["keys"][1:], [before["public-key"]])
    c.eq("SIGHUP: /pk follows", a.get("/pk").json(), after["public-key"])
    c.eq("SIGTERM after reload: exit 0", a.stop(), 0)
else:
    print("note: VEP_KEYTOOL not built; SIGHUP reload not exercised")


def read_line(a, limit=vephelp.START_TIMEOUT_S):
    """The next line the server prints on stdout ('' on timeout)."""
    fd, line, deadline = a.proc.stdout.fileno(), b"", time.time() + limit
    while not line.endswith(b"\n") and time.time() < deadline:
        if select.select([fd], [], [], 0.2)[0]:
            ch = os.read(fd, 1)
            if not ch:
                break
            line += ch
    return line.decode().strip()


def rp_verify(a, rp_port, assertion, host):
    r = vephelp.request("127.0.0.1", rp_port, "POST", "/verify",
                        {"Host": host, "Content-Type": "application/json"},
                        json.dumps({"assertion": assertion}))
    return r.status, json.loads(r.body.decode() or "{}")


# The demo website's audience is its own origin, fixed at start: an
# assertion made for another site is refused whatever Host it comes with.
if vephelp.keytool():
    a = vephelp.Authority(["--demo", "--state", state, "--listen", "127.0.0.1:0"], tmp=tmp)
    line = read_line(a)
    m = re.match(r"^demo relying party on http://127\.0\.0\.1:(\d+)$", line)
    c.check("demo website address printed", m, line)
    rp_port = int(m.group(1)) if m else 0
    rp = "http://127.0.0.1:%d" % rp_port
    ukey, pub = vephelp.user_key(tmp)
    pubfile = vephelp.write(os.path.join(tmp, "user.json"), json.dumps(pub))
    rc, cert, err = vephelp.kt("certify", "--dir", os.path.dirname(keyfile), "--email",
                               "alice@example.test", "--pubkey", pubfile)
    c.eq("certify the demo user's key: exit 0", rc, 0)
    certfile = vephelp.write(os.path.join(tmp, "user.cert"), cert.strip())

    def assertion_for(aud):
        rc, out, err = vephelp.kt("sign-assertion", "--key", ukey, "--audience", aud,
                                  "--cert", certfile)
        return out.strip()

    for aud, host in [("http://evil.example", "evil.example"),
                      ("http://evil.example:%d" % rp_port, "evil.example:%d" % rp_port),
                      ("http://127.0.0.1:%d" % a.port, "127.0.0.1:%d" % a.port),
                      ("http://localhost:%d" % rp_port, "localhost:%d" % rp_port)]:
        st, body = rp_verify(a, rp_port, assertion_for(aud), host)
        c.check("demo website: an assertion for %s with Host: %s is refused" % (aud, host),
                st == 401 and "audience" in body.get("error", ""), repr((st, body)))
    good = assertion_for(rp)
    st, body = rp_verify(a, rp_port, good, "127.0.0.1:%d" % rp_port)
    c.eq("demo website: an assertion for its own origin is accepted", (st, body.get("email"),
         body.get("audience")), (200, "alice@example.test", rp))
    st, body = rp_verify(a, rp_port, good, "evil.example")
    c.eq("demo website: ... whatever the Host header says", (st, body.get("audience")),
         (200, rp))
    # embed_origins of the demo: its website at the default address, and
    # the log says what to set when the website is elsewhere (port 0 here).
    r = a.get("/embed")
    c.check("demo: /embed may be framed by the demo website's default origin only",
            (r.header("Content-Security-Policy") or "").endswith(
                "frame-ancestors http://127.0.0.1:8081"), r.header("Content-Security-Policy"))
    c.check("demo: the log says which embed_origins the demo webmail needs",
            "--set embed_origins=%s" % rp in a.stderr(), a.stderr())
    c.eq("stop: exit 0", a.stop(), 0)

# embed_origins: exactly the list, none when empty; https:// or loopback
# http:// only, without a path.
a = vephelp.Authority(["--demo", "--state", state, "--listen", "127.0.0.1:0", "--set",
                       "embed_origins=https://Mail.Example.com:443, https://webmail.example.net:8443"],
                      tmp=tmp)
r = a.get("/embed")
want = "https://mail.example.com https://webmail.example.net:8443"
c.check("embed_origins: frame-ancestors is exactly the list, canonical",
        (r.header("Content-Security-Policy") or "").endswith("frame-ancestors " + want),
        r.header("Content-Security-Policy"))
c.check("embed_origins: the page is told the same list",
        ('<meta name="vep-embed-origins" content="%s">' % want).encode() in r.body, r.body)
c.eq("embed_origins: no X-Frame-Options when framing is allowed", r.header("X-Frame-Options"),
     None)
r = a.get("/sign-in/provision")
c.check("shim_origin unset by default: the legacy provisioning page is off and says so",
        r.status == 404 and b"shim_origin is not configured" in r.body, repr((r.status, r.body)))
r = a.get("/sign-in/authenticate")
c.check("shim_origin unset: the authentication page loads no shim",
        r.status == 200 and b"_api.js" not in r.body and
        "persona" not in (r.header("Content-Security-Policy") or ""), r.body)
c.eq("stop: exit 0", a.stop(), 0)

a = vephelp.Authority(["--demo", "--state", state, "--listen", "127.0.0.1:0", "--set",
                       "embed_origins="], tmp=tmp)
r = a.get("/embed")
c.check("embed_origins empty: nobody may frame /embed",
        (r.header("Content-Security-Policy") or "").endswith("frame-ancestors 'none'") and
        r.header("X-Frame-Options") == "DENY", r.headers)
c.check("embed_origins empty: the page is told no origin",
        b'<meta name="vep-embed-origins" content="">' in r.body, r.body)
c.eq("stop: exit 0", a.stop(), 0)

for value, ok in [("https://mail.example.com", True),
                  ("http://127.0.0.1:8081 http://[::1]:8081 http://localhost:8081", True),
                  ("http://mail.example.com", False),
                  ("http://10.0.0.5:8081", False),
                  ("https://mail.example.com/", False),
                  ("https://mail.example.com/inbox", False),
                  ("https://*.example.com", False),
                  ("https://user@mail.example.com", False),
                  ("mail.example.com", False),
                  ("https://mail.example.com https://MAIL.example.com:443", False),
                  (" ".join("https://m%d.example.com" % i for i in range(17)), False)]:
    rc, out, err = vephelp.run(["--demo", "--state", state, "--check", "--set",
                                "embed_origins=" + value])
    c.check("embed_origins=%.60s: %s" % (value, "accepted" if ok else "refused"),
            (rc == 0) if ok else (rc == 2 and "embed_origins" in err), err)
rc, out, err = vephelp.run(["--demo", "--state", state, "--check", "--set",
                            "embed_origins=http://mail.example.com"])
c.check("embed_origins: an http:// webmail on the network is refused, saying https://",
        "https://" in err and "loopback" in err, err)
rc, out, err = vephelp.run(["--list-keys"])
c.check("--list-keys: shim_origin has no default, embed_origins neither",
        re.search(r"^shim_origin\tglobal\t\(none\)\t", out, re.M) and
        re.search(r"^embed_origins\tglobal\t\(none\)\t", out, re.M), out)
sys.exit(c.finish())
