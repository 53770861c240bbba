"""signin - a real PAM world for sign-in tests, and an HTTP client that
signs in.

World builds, under a private temporary directory: a domain key (via the
demo's generator), a pam_wrapper service directory whose stack uses
pam_matrix (passwords) with pam_exec hooks (a locked account, a module that
hangs), nss_wrapper passwd/group files giving the accounts UIDs, and a
configuration file. start() runs the real vep-authority with pam_wrapper and
nss_wrapper preloaded, so its PAM helper (which inherits the environment)
runs the real libpam against these files. Nothing here mocks PAM.
"""
import glob
import json
import os
import subprocess
import tempfile
import time

import vephelp

SERVICE = "vep-it"

# user: (password, uid); passwords are bytes so tests can use any byte.
ACCOUNTS = {
    "alice": ("wonderland", 1001),
    "bob": ("spaces inside\tand ünïcödé", 1002),
    "carol": ("c" * 1024, 1003),
    "locked": ("locked-pw", 1004),
    "lowuid": ("lowuid-pw", 500),
    "root": ("rootpw", 0),
    "sleeper": ("sleeper-pw", 1005),
    "mail.alice": ("suffix-pw", 1006),
    "dave-pam": ("alias-pw", 1007),
    "canary": ("CANARY-7d1e-pw", 1010),
    "slowpoke": ("slowpoke-pw", 1011),   # PAM takes a second for slow*
}


# Debian's pam_oath (libpam-oath), and the TOTP secret the tests give
# their accounts (hex; codes from oathtool, Debian's oathtool).
OATH_MODULE = "/usr/lib/x86_64-linux-gnu/security/pam_oath.so"
OATH_SECRET = "3132333435363738393031323334353637383930"


def totp(offset_s=0):
    """The 6-digit TOTP code of OATH_SECRET now, or offset_s seconds from
    now (pam_oath refuses a code it accepted before: a later time step
    gives a new one)."""
    args = ["oathtool", "--totp", "-d", "6", OATH_SECRET]
    if offset_s:
        args[1:1] = ["--now", time.strftime("%Y-%m-%d %H:%M:%S UTC",
                                            time.gmtime(time.time() + offset_s))]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()


def libdir():
    for d in glob.glob("/usr/lib/*-linux-gnu") + ["/usr/lib64", "/usr/lib"]:
        if os.path.exists(os.path.join(d, "pam_wrapper", "pam_matrix.so")):
            return d
    return None


class World:
    """auth_first: PAM auth lines put before the stack's own (e.g. a fail
    delay); auth_last: after them (e.g. a second factor), with
    matrix_control the password module's control ("required",
    "requisite"). Every PAM authentication appends its user name to
    attempts_log, so a test can count what reached PAM."""

    def __init__(self, extra_config="", domain_extra="", auth_first="", auth_last="",
                 matrix_control="required"):
        lib = libdir()
        if lib is None:
            raise RuntimeError("libpam-wrapper is not installed")
        self.lib = lib
        self.tmp = tempfile.mkdtemp(prefix="vep-signin-")
        os.chmod(self.tmp, 0o700)
        self.pamdir = os.path.join(self.tmp, "pam")
        os.mkdir(self.pamdir, 0o700)
        self.state = os.path.join(self.tmp, "state")
        self.keys = vephelp.copy_keydir(vephelp.demo_keydir(self.tmp),
                                        os.path.join(self.tmp, "keys"))
        passdb = "".join("%s:%s:%s\n" % (u, pw, SERVICE) for u, (pw, _) in ACCOUNTS.items())
        vephelp.write(os.path.join(self.pamdir, "passdb"), passdb)
        self.attempts_log = os.path.join(self.pamdir, "attempts.log")
        hook = ("#!/bin/sh\n"
                "echo \"$PAM_USER\" >> %s\n"
                "case \"$PAM_USER\" in\n" % self.attempts_log +
                "sleeper) exec sleep 30;;\n"
                "slow*) sleep 1;;\n"
                "esac\nexit 0\n")
        vephelp.write(os.path.join(self.pamdir, "auth-hook.sh"), hook, 0o700)
        acct = "#!/bin/sh\n[ \"$PAM_USER\" = locked ] && exit 1\nexit 0\n"
        vephelp.write(os.path.join(self.pamdir, "acct-hook.sh"), acct, 0o700)
        matrix = os.path.join(lib, "pam_wrapper", "pam_matrix.so")
        sysmod = os.path.join(lib, "security")
        stack = (auth_first +
                 "auth required %s/pam_exec.so quiet %s/auth-hook.sh\n" % (sysmod, self.pamdir) +
                 "auth %s %s passdb=%s/passdb\n" % (matrix_control, matrix, self.pamdir) +
                 auth_last +
                 "account required %s/pam_exec.so quiet %s/acct-hook.sh\n" % (sysmod, self.pamdir) +
                 "account required %s passdb=%s/passdb\n" % (matrix, self.pamdir))
        vephelp.write(os.path.join(self.pamdir, SERVICE), stack, 0o644)
        # libpam falls back to "other" for services it does not know.
        vephelp.write(os.path.join(self.pamdir, "other"),
                      "auth required %s/pam_deny.so\naccount required %s/pam_deny.so\n"
                      % (sysmod, sysmod), 0o644)
        passwd = "".join("%s:x:%d:%d::/nonexistent:/bin/false\n" % (u, uid, uid)
                         for u, (_, uid) in ACCOUNTS.items())
        vephelp.write(os.path.join(self.pamdir, "passwd"), passwd, 0o644)
        vephelp.write(os.path.join(self.pamdir, "group"),
                      "".join("%s:x:%d:\n" % (u, uid) for u, (_, uid) in ACCOUNTS.items()),
                      0o644)
        self.config = os.path.join(self.tmp, "vep.conf")
        vephelp.write(self.config,
                      "state_dir = %s\npam_service = %s\n%s\n"
                      "[domain example.test]\nkey_dir = %s\n%s\n"
                      % (self.state, SERVICE, extra_config, self.keys, domain_extra))

    def oath_users(self, names):
        """Gives names a TOTP line (OATH_SECRET) in a users file, which the
        stack's @USERS@ then names."""
        users = vephelp.write(os.path.join(self.pamdir, "users.oath"),
                              "".join("HOTP/T30/6 %s - %s\n" % (u, OATH_SECRET) for u in names))
        path = os.path.join(self.pamdir, SERVICE)
        with open(path) as f:
            stack = f.read()
        vephelp.write(path, stack.replace("@USERS@", users), 0o644)

    def env(self):
        return {
            "LD_PRELOAD": "%s/libpam_wrapper.so:%s/libnss_wrapper.so" % (self.lib, self.lib),
            "PAM_WRAPPER": "1",
            "PAM_WRAPPER_SERVICE_DIR": self.pamdir,
            "PAM_WRAPPER_DISABLE_DEEPBIND": "1",
            "UID_WRAPPER_DISABLE_DEEPBIND": "1",
            "NSS_WRAPPER_DISABLE_DEEPBIND": "1",
            "NSS_WRAPPER_PASSWD": os.path.join(self.pamdir, "passwd"),
            "NSS_WRAPPER_GROUP": os.path.join(self.pamdir, "group"),
            # The preloaded wrappers are not instrumented; ASan must not
            # insist on coming first.
            "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0",
        }

    def attempts(self, user=None):
        """The PAM authentications so far (of user, if given)."""
        try:
            with open(self.attempts_log) as f:
                names = f.read().split()
        except FileNotFoundError:
            names = []
        return [n for n in names if user is None or n == user]

    def start(self):
        return vephelp.serve(self.config, self.tmp, env=self.env())


class Client:
    """A browser-like client of one authority: keeps the session cookie and
    the CSRF token it was given."""

    def __init__(self, auth):
        self.auth = auth
        self.cookie = None
        self.csrf = None

    def post(self, path, obj=None, headers=None, raw=None):
        h = {"Content-Type": "application/json"}
        if self.cookie:
            h["Cookie"] = self.cookie
        if self.csrf:
            h["X-CSRF-Token"] = self.csrf
        h.update(headers or {})
        body = raw if raw is not None else json.dumps(obj).encode()
        return self.auth.request("POST", path, h, body)

    def get(self, path, headers=None):
        h = {"Cookie": self.cookie} if self.cookie else {}
        h.update(headers or {})
        return self.auth.get(path, h)

    def login(self, email, password, headers=None):
        r = self.post("/api/login", {"email": email, "password": password}, headers)
        if r.status == 200:
            self.signed_in(r)
        return r

    def signed_in(self, r):
        """Keeps the session cookie (not a load balancer's) and the CSRF
        token of a 200 sign-in answer."""
        for name, value in r.headers:
            if name.lower() == "set-cookie" and "vep_session=" in value.split(";", 1)[0]:
                self.cookie = value.split(";", 1)[0]
        self.csrf = r.json()["csrf"]


def issue_and_verify(w, auth, cl, pub):
    """Asks for a certificate of pub as cl and verifies it with vep-keytool
    against the support document auth serves now: (exit status, what
    vep-keytool or the server said)."""
    r = cl.post("/api/cert", {"pubkey": pub, "duration": 600})
    if r.status != 200:
        return 1, "status %d" % r.status
    cert = vephelp.write(os.path.join(w.tmp, "cert.jws"), r.json()["cert"])
    doc = vephelp.write(os.path.join(w.tmp, "support.json"), json.dumps(auth.support()))
    rc, out, err = vephelp.kt("verify-cert", "--support-doc", "example.test=" + doc, cert)
    return rc, out + err
