"""--demo: state directory (0700) with a generated key (0600) under --state or
the default ~/.local/state/vep-authority-demo, key reused on restart, a
non-private state directory refused, SIGINT and SIGTERM clean exits."""

import os
import signal
import stat
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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
kt = vephelp.keytool()
if kt:
    import subprocess
    a = vephelp.Authority(["--demo", "--state", state, "--listen", "127.0.0.1:0"], tmp=tmp)
    before = a.get("/.well-known/browserid").json()
    p = subprocess.run([kt, "rotate", "--dir", os.path.dirname(keyfile)],
                       capture_output=True, text=True)
    c.eq("vep-keytool rotate: exit 0", p.returncode, 0)
    c.eq("no reload before SIGHUP", a.get("/.well-known/browserid").json(), before)
    a.send_signal(signal.SIGHUP)
    import time
    after = before
    for _ in range(50):
        after = a.get("/.well-known/browserid").json()
        if after != before:
            break
        time.sleep(0.1)
    c.check("SIGHUP: new current key", after["public-key"] != before["public-key"])
    c.eq("SIGHUP: previous key still published", after["keys"][1:], [before["public-key"]])
    c.eq("SIGHUP: /pk follows", a.get("/pk").json(), after["public-key"])
    c.eq("SIGTERM after reload: exit 0", a.stop(), 0)
else:
    print("note: VEP_KEYTOOL not built; SIGHUP reload not exercised")
sys.exit(c.finish())
