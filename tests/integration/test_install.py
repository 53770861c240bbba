"""meson install into a DESTDIR: the tree an administrator gets (programs,
the PAM helper in libexec, the systemd unit, README.md and CONFIG.md where
the unit's Documentation= points, the example configuration and PAM service
file, man pages that render and lint clean), the example configuration
accepted by the installed server's --check, the installed helper refusing
to run by hand, and an installed server that finds its helper (its PAM
helpers run from libexec, /healthz 200) or names where it belongs."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402

C = vephelp.Checker("install")
build = os.environ.get("VEP_BUILD_ROOT")
if not build or not os.path.isfile(os.path.join(build, "build.ninja")):
    vephelp.skip("VEP_BUILD_ROOT is not a meson build directory")
tmp = tempfile.mkdtemp(prefix="vep-install-")
dest = os.path.join(tmp, "dest")

p = subprocess.run(["meson", "install", "-C", build, "--destdir", dest, "--no-rebuild"],
                   capture_output=True, text=True, timeout=300)
C.require("meson install --destdir: exit 0", p.returncode == 0, (p.stdout + p.stderr)[-2000:])

# Where everything went: read from the build's own options, so the test
# holds for any --prefix.
opts = subprocess.run(["meson", "introspect", "--buildoptions", build], capture_output=True,
                      text=True, check=True).stdout
import json  # noqa: E402
opt = {o["name"]: o["value"] for o in json.loads(opts)}


def inst(*parts):
    """A path of the installed tree, in DESTDIR."""
    p = os.path.join(opt["prefix"], *parts)
    return dest + p


bindir, libexec = inst(opt["bindir"]), inst(opt["libexecdir"], "vep-authority")
docdir = inst(opt["datadir"], "doc", "vep-authority")
mandir = inst(opt["mandir"])
unit = inst("lib", "systemd", "system", "vep-authority.service")
server, keytool = os.path.join(bindir, "vep-authority"), os.path.join(bindir, "vep-keytool")
helper = os.path.join(libexec, "vep-pam-helper")

for path in (server, keytool, helper):
    C.check("installed and executable: %s" % path[len(dest):], os.access(path, os.X_OK))
C.check("vep-pam-helper is not in bindir (it is not a command)",
        not os.path.exists(os.path.join(bindir, "vep-pam-helper")))
for name in ("README.md", "CONFIG.md", "examples/vep-authority.conf",
             "examples/pam.d/vep-authority"):
    C.check("installed: %s" % os.path.join(docdir, name)[len(dest):],
            os.path.isfile(os.path.join(docdir, name)))

# The unit points at what was installed.
text = open(unit).read() if os.path.isfile(unit) else ""
C.check("the unit is installed", text != "", unit)
m = re.search(r"^Documentation=file://(\S+)$", text, re.M)
C.check("the unit's Documentation= names an installed file",
        m is not None and os.path.isfile(dest + m.group(1)), m.group(1) if m else text[:300])
m = re.search(r"^ExecStart=(\S+) ", text, re.M)
C.check("the unit's ExecStart= is the installed server",
        m is not None and dest + m.group(1) == server, m.group(1) if m else "")
C.check("the unit says how to follow another state_dir",
        "ReadWritePaths=/var/lib/vep-authority" in text and "systemctl edit" in text)

# Man pages: render and lint (mandoc), or at least render (groff).
pages = {"man8/vep-authority.8": ["--check", "Upgrading".upper()],
         "man1/vep-keytool.1": ["init", "rotate"],
         "man5/vep-authority.conf.5": ["hsts_max_age", "state_dir", "key_dir"]}
mandoc, groff = shutil.which("mandoc"), shutil.which("groff")
C.require("mandoc or groff is there to render the man pages", mandoc or groff)
for page, words in pages.items():
    path = os.path.join(mandir, page)
    C.check("man page installed: %s" % page, os.path.isfile(path), path)
    if not os.path.isfile(path):
        continue
    if mandoc:
        lint = subprocess.run([mandoc, "-T", "lint", "-W", "error", path], capture_output=True,
                              text=True)
        C.eq("%s: mandoc -T lint finds no error" % page, lint.returncode, 0,
             lint.stdout + lint.stderr)
        out = subprocess.run([mandoc, "-T", "utf8", path], capture_output=True, text=True)
    else:
        out = subprocess.run([groff, "-man", "-Tutf8", "-ww", path], capture_output=True,
                             text=True)
    plain = re.sub(".\b", "", out.stdout)
    C.check("%s: renders (exit 0, NAME and SYNOPSIS)" % page,
            out.returncode == 0 and "NAME" in plain and "SYNOPSIS" in plain, out.stderr[-300:])
    for w in words:
        C.check("%s: says '%s' (made from the README / CONFIG.md)" % (page, w), w in plain)

# The installed helper, run by hand: a usage that says what it is, exit 2.
for args in (["--help"], []):
    h = subprocess.run([helper] + args, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       timeout=20)
    C.eq("vep-pam-helper %s by hand: exit 2" % " ".join(args), h.returncode, 2, h.stderr)
    C.check("... says it is started by vep-authority",
            "started by" in h.stderr and "vep-authority" in h.stderr and "protocol error"
            not in h.stderr, h.stderr)

# The example configuration, with this machine's paths, is accepted by the
# installed server's --check; the example PAM service is where pam_wrapper
# looks (tests never touch /etc/pam.d).
pamdir = os.path.join(tmp, "pam.d")
os.mkdir(pamdir)
shutil.copy(os.path.join(docdir, "examples/pam.d/vep-authority"), pamdir)
keys = os.path.join(tmp, "keys")
os.mkdir(keys, 0o700)
k = subprocess.run([keytool, "init", "--dir", os.path.join(keys, "example.com")],
                   capture_output=True, text=True, timeout=120)
C.require("installed vep-keytool init: exit 0", k.returncode == 0, k.stderr)
example = open(os.path.join(docdir, "examples/vep-authority.conf")).read()
conf = example.replace("/etc/vep-authority/keys", keys) \
              .replace("/var/lib/vep-authority", os.path.join(tmp, "state")) \
              .replace("user = vep-authority", "user = nobody")
C.check("the example names the paths the test replaces",
        "/etc/vep-authority/keys/example.com" in example and
        "state_dir = /var/lib/vep-authority" in example and "user = vep-authority" in example)
conf_path = vephelp.write(os.path.join(tmp, "vep-authority.conf"), conf)
env = dict(os.environ, PAM_WRAPPER="1", PAM_WRAPPER_SERVICE_DIR=pamdir)


def check(binary, path):
    r = subprocess.run([binary, "--config", path, "--check"], capture_output=True, text=True,
                       env=env, timeout=120)
    report = vephelp.sanitizer_report(r.stderr)
    return ("sanitizer report" if report else r.returncode), r.stdout, r.stderr


rc, out, err = check(server, conf_path)
C.eq("the example configuration: installed --check exit 0", rc, 0, err)
C.eq("... says configuration OK", out.strip(), "configuration OK", err)

# An installed server finds its helper in libexec: its key process runs
# it from there, and /healthz (which needs a running helper) is 200.
run_conf = vephelp.write(os.path.join(tmp, "run.conf"),
                         re.sub(r"^user = .*\n", "", conf, flags=re.M))
os.environ["VEP_AUTHORITY"] = server
a = vephelp.Authority(["--config", run_conf, "--listen", "127.0.0.1:0"],
                      {"PAM_WRAPPER": "1", "PAM_WRAPPER_SERVICE_DIR": pamdir}, tmp=tmp)
try:
    r = a.get("/healthz", {"Host": "example.com"})
    C.eq("installed server: /healthz 200 (its PAM helper runs)", r.status, 200, r.body)
    helpers = [h for kp in vephelp.children(a.proc.pid) for h in vephelp.children(kp)
               if vephelp.comm(h) == "vep-pam-helper"]
    exes = sorted(set(os.readlink("/proc/%d/exe" % h) for h in helpers))
    C.check("... and runs the helper from libexec", exes == [helper], exes)
finally:
    C.eq("installed server: clean exit", a.stop(), 0)

# Without the helper, --check names where it belongs.
os.rename(helper, helper + ".away")
rc, out, err = check(server, conf_path)
C.eq("installed helper missing: --check exit 2", rc, 2, err)
C.check("... names the libexec path (no bin/..)", helper in err, err)
os.rename(helper + ".away", helper)
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(C.finish())
