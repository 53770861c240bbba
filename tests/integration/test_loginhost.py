#!/usr/bin/env python3
"""test_loginhost - the three ways verifiers and browsers reach the
authority of example.test, each behind a real nginx speaking TLS with a
certificate of a CA made here (openssl, in the test's directory), with the
nginx location blocks taken verbatim from README.md:

- a login host without delegation: Host login.example.test (the domain's
  public_url host) is served as example.test: pages, rp.js, discovery, the
  links host-meta and WebFinger publish, sign-in and certificates;
- delegation: example.test's web server serves only
  {"authority":"login.example.test"} (vep-keytool support-doc --delegate);
  certificates say iss = login.example.test; Mozilla's browserid-local-verify
  with its own HTTPS discovery (no in-memory hook: tests/interop/hostmap.js
  maps the host names to nginx's port, NODE_EXTRA_CA_CERTS trusts the CA)
  and vep-keytool verify-assertion --fetch follow the delegation and
  accept; a certificate naming example.test itself is refused;
- forwarding without delegation: example.test's web server forwards
  exactly the paths README.md lists; every script, style and API path the
  sign-in and provisioning pages use is among them; anything else stays the
  web site's; a full sign-in, certificate and verification go through it.
"""
import base64
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("loginhost")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INTEROP = os.path.join(ROOT, "tests", "interop")
DOMAIN = "example.test"
LOGIN = "login.example.test"
RP = "rp.example"
BROWSER = os.path.join(ROOT, "tests", "browser")
AUDIENCE = "https://rp.example"
# How long nginx gets to start listening (generous: the machine is shared).
NGINX_START_S = 30
# How long a reload gets to show (generous, as above).
RELOAD_WAIT_S = 30


def nginx_path():
    """nginx on PATH, in /usr/sbin, or unpacked by tests/integration/setup.sh."""
    for p in (shutil.which("nginx"), "/usr/sbin/nginx",
              os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build-tools",
                           "nginx")):
        if p and os.access(p, os.X_OK):
            return p
    return None


def need():
    if nginx_path() is None:
        vephelp.skip("nginx is missing (tests/integration/setup.sh unpacks it)")
    for prog in ("openssl", "node"):
        if shutil.which(prog) is None:
            vephelp.skip("%s is not installed" % prog)
    if not os.path.exists(os.path.join(INTEROP, "node_modules", "browserid-crypto", "libs",
                                       "minimal.js")):
        vephelp.skip("tests/interop/node_modules missing (run tests/interop/setup.sh)")
    if vephelp.keytool() is None:
        vephelp.skip("VEP_KEYTOOL is not set")


readme_block = vephelp.readme_block


def readme_forwarded_paths():
    """The paths README.md lists for forwarding without delegation."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    start = text.index("forwards to the authority exactly these paths")
    end = text.index("In nginx, in `example.com`'s server block", start)
    return re.findall(r"`(/[^`]*)`", text[start:end])


def make_ca(d):
    """A CA and one server certificate for DOMAIN, LOGIN and RP, in d:
    (ca.pem, server.pem, server.key)."""
    return vephelp.make_ca(d, [DOMAIN, LOGIN, RP])


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Nginx:
    """A real nginx on 127.0.0.1 (an unprivileged port), its prefix, config,
    logs and temp files under d, in the foreground (-g 'daemon off;')."""

    def __init__(self, d, servers):
        """servers(port) returns the text of the server blocks."""
        self.d = d
        os.makedirs(d, exist_ok=True)
        for attempt in range(5):
            self.port = free_port()
            conf = vephelp.write(os.path.join(d, "nginx.conf"), (
                "worker_processes 1;\npid %(d)s/nginx.pid;\nerror_log %(d)s/error.log;\n"
                "events { worker_connections 64; }\n"
                "http {\n  access_log off;\n  client_body_temp_path %(d)s/body;\n"
                "  proxy_temp_path %(d)s/proxy;\n  fastcgi_temp_path %(d)s/fastcgi;\n"
                "  uwsgi_temp_path %(d)s/uwsgi;\n  scgi_temp_path %(d)s/scgi;\n"
                "  default_type text/plain;\n%(servers)s}\n")
                % {"d": d, "servers": servers(self.port)}, 0o644)
            self.proc = subprocess.Popen([nginx_path(), "-p", d, "-e", os.path.join(d, "error.log"),
                                          "-c", conf, "-g", "daemon off;"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + NGINX_START_S
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", self.port), 1).close()
                    return
                except OSError:
                    time.sleep(0.1)
            self.stop()
        raise RuntimeError("nginx did not start: %s" % self.log())

    def log(self):
        try:
            with open(os.path.join(self.d, "error.log")) as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def tls_server(name, cert, key, port, body):
    return ("  server {\n    listen 127.0.0.1:%d ssl;\n    server_name %s;\n"
            "    ssl_certificate %s;\n    ssl_certificate_key %s;\n%s  }\n"
            % (port, name, cert, key, "".join("    " + ln + "\n"
                                                  for ln in body.rstrip("\n").split("\n"))))


def proxied(block, auth):
    """A README location block pointed at the running authority."""
    return block.replace("http://127.0.0.1:8080", "http://127.0.0.1:%d" % auth.port)


class Via:
    """An HTTPS client of host name `name` that connects to nginx at
    127.0.0.1:port (as curl --resolve would), checking the certificate
    against the test CA and the name: what a browser at https://name sees.
    Has request() and get() like vephelp.Authority, so signin.Client works
    through it."""

    def __init__(self, name, port, ca):
        self.name, self.port = name, port
        self.ctx = ssl.create_default_context(cafile=ca)

    def request(self, method, path, headers=None, body=None):
        sock = socket.create_connection(("127.0.0.1", self.port), vephelp.IO_TIMEOUT_S)
        conn = http.client.HTTPConnection(self.name, timeout=vephelp.IO_TIMEOUT_S)
        conn.sock = self.ctx.wrap_socket(sock, server_hostname=self.name)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return vephelp.Response(resp.status, resp.getheaders(), resp.read())
        finally:
            conn.close()

    def get(self, path, headers=None):
        return self.request("GET", path, headers)


def mozilla_verify(tmp, ng, assertion_file):
    """browserid-local-verify's verdict with its own HTTPS discovery."""
    env = dict(os.environ)
    env["NODE_EXTRA_CA_CERTS"] = os.path.join(tmp, "ca.pem")
    env["VEP_HOSTMAP"] = ",".join("%s=127.0.0.1:%d" % (n, ng.port) for n in (DOMAIN, LOGIN, RP))
    p = subprocess.run(["node", "--require", os.path.join(INTEROP, "hostmap.js"),
                        os.path.join(INTEROP, "verify_https.js"), assertion_file, AUDIENCE],
                       capture_output=True, text=True, env=env, timeout=120)
    if p.returncode != 0:
        return {"ok": False, "err": "node exit %d: %s" % (p.returncode, p.stderr[-500:])}
    return json.loads(p.stdout)


def spki_hash(crt):
    """base64 SHA-256 of the certificate's public key (Chromium's
    --ignore-certificate-errors-spki-list: accept this one certificate)."""
    pub = subprocess.run(["openssl", "x509", "-in", crt, "-pubkey", "-noout"],
                         capture_output=True, check=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pub,
                         capture_output=True, check=True).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


RP_PAGE = """<!doctype html><meta charset="utf-8"><title>a relying party</title>
<input id="email"><button id="go">Sign in</button>
<script src="https://%s/rp.js"></script>
<script>
document.getElementById('go').onclick = () => {
  vepRP.request({ email: document.getElementById('email').value }).then(
    (a) => { window.result = { assertion: a }; },
    (e) => { window.result = { error: e.code + ': ' + e.message }; });
};
</script>
"""


def browser_rp(tmp, ng, crt, email, password):
    """rp.js in Chromium at https://RP, given only the address: its result
    ({"ok", "assertion", "authority"} or {"ok": false, "err"})."""
    hostmap = ",".join("%s=127.0.0.1:%d" % (n, ng.port) for n in (DOMAIN, LOGIN, RP))
    p = subprocess.run(["node", os.path.join(BROWSER, "rp_discover.js"), "https://" + RP,
                        email, password, hostmap, spki_hash(crt)],
                       capture_output=True, text=True, timeout=300)
    if p.returncode == vephelp.SKIP:
        vephelp.skip(p.stdout.strip())
    if p.returncode != 0:
        return {"ok": False, "err": "node exit %d: %s" % (p.returncode, p.stderr[-500:])}
    return json.loads(p.stdout)


def keytool_verify(tmp, ng, assertion_file):
    return vephelp.kt("verify-assertion", "--audience", AUDIENCE, "--fetch",
                      "https://" + DOMAIN, "--connect", "127.0.0.1:%d" % ng.port,
                      "--cafile", os.path.join(tmp, "ca.pem"), assertion_file)


def sign_in_and_certify(w, site, origin, what):
    """Signs alice in through site (a Via), gets a certificate for a new
    user key and makes a backed assertion for AUDIENCE: (certificate
    payload, path of the backed assertion), or None."""
    cl = signin.Client(site)
    r = cl.login("alice@" + DOMAIN, "wonderland", {"Origin": origin})
    C.eq("%s: sign-in through nginx" % what, r.status, 200, r.body[:200])
    if r.status != 200:
        return None
    ukey, upub = vephelp.user_key(w.tmp, name="user-%d.pem" % vephelp.now_ms())
    r = cl.post("/api/cert", {"pubkey": upub, "duration": 600}, {"Origin": origin})
    C.eq("%s: certificate through nginx" % what, r.status, 200, r.body[:200])
    if r.status != 200:
        return None
    cert = vephelp.write(os.path.join(w.tmp, "cert-%d.jws" % vephelp.now_ms()),
                         r.json()["cert"])
    rc, out, err = vephelp.kt("sign-assertion", "--key", ukey, "--audience", AUDIENCE,
                              "--cert", cert)
    C.require("%s: backed assertion made" % what, rc == 0, err)
    backed = vephelp.write(os.path.join(w.tmp, "backed-%d" % vephelp.now_ms()), out)
    return vephelp.jws_payload(r.json()["cert"]), backed, ukey, upub


def check_login_host(tmp, ca, crt, key):
    """No delegation: the login host is the domain's public_url host."""
    w = signin.World(extra_config="trusted_proxies = 127.0.0.1\n",
                     domain_extra="public_url = https://%s\n" % LOGIN)
    auth = w.start()
    block = readme_block("location / {")
    ng = None
    try:
        ng = Nginx(os.path.join(tmp, "ng-login"),
                   lambda port: tls_server(LOGIN, crt, key, port, proxied(block, auth)))
        site = Via(LOGIN, ng.port, ca)
        for path in ("/", "/sign-in", "/pk", "/rp.js", "/.well-known/browserid",
                     "/account", "/share"):
            r = site.get(path)
            C.eq("login host: GET %s is served" % path, r.status, 200, r.body[:200])
        r = site.get("/.well-known/host-meta.json")
        C.eq("login host: host-meta.json", r.status, 200, r.body[:200])
        links = [ln.get("href") or ln.get("template") for ln in r.json().get("links", [])]
        C.check("login host: host-meta links are on the login host",
                links and all(x.startswith("https://%s/" % LOGIN) for x in links), links)
        r = site.get("/.well-known/webfinger?resource=acct:alice@" + DOMAIN)
        C.eq("login host: WebFinger", r.status, 200, r.body[:200])
        links += [ln["href"] for ln in r.json().get("links", []) if "href" in ln]
        for link in links:
            path = link[len("https://" + LOGIN):].replace("{uri}", "acct:alice@" + DOMAIN)
            r = site.get(path)
            C.eq("login host: published link %s answers" % link, r.status, 200, r.body[:200])
        r = site.get("/.well-known/browserid")
        C.eq("login host: its support document is the domain's keys",
             sorted(r.json()), ["authentication", "keys", "provisioning", "public-key"])
        got = sign_in_and_certify(w, site, "https://" + LOGIN, "login host")
        if got:
            C.eq("login host: without delegation the certificate names the domain",
                 got[0]["iss"], DOMAIN)
    finally:
        if ng:
            ng.stop()
        C.eq("login host: clean exit", auth.stop(), 0)


def check_delegation(tmp, ca, crt, key):
    w = signin.World(extra_config="trusted_proxies = 127.0.0.1\n",
                     domain_extra="public_url = https://%s\nauthority = %s\n" % (LOGIN, LOGIN))
    auth = w.start()
    rc, doc, err = vephelp.kt("support-doc", "--delegate", LOGIN)
    C.require("delegation: vep-keytool support-doc --delegate", rc == 0, err)
    C.eq("delegation: the static file", json.loads(doc), {"authority": LOGIN})
    static = vephelp.write(os.path.join(tmp, "delegation.json"), doc, 0o644)
    rpdir = os.path.join(tmp, "rp")
    os.mkdir(rpdir)
    vephelp.write(os.path.join(rpdir, "index.html"), RP_PAGE % LOGIN, 0o644)
    block = readme_block("location / {")
    static_block = readme_block("location = /.well-known/browserid {").replace(
        "/etc/vep-authority/delegation.json", static)
    ng = None
    try:
        ng = Nginx(os.path.join(tmp, "ng-deleg"), lambda port: (
            tls_server(DOMAIN, crt, key, port, static_block + "location / { return 404; }") +
            tls_server(LOGIN, crt, key, port, proxied(block, auth)) +
            tls_server(RP, crt, key, port, "root %s;\ndefault_type text/html;" % rpdir)))
        site = Via(LOGIN, ng.port, ca)
        r = Via(DOMAIN, ng.port, ca).get("/.well-known/browserid?domain=" + DOMAIN)
        C.eq("delegation: the email domain serves the static file",
             (r.status, r.json()), (200, {"authority": LOGIN}))
        r = site.get("/.well-known/browserid?domain=" + DOMAIN)
        C.eq("delegation: the login host serves the keys",
             (r.status, sorted(r.json())),
             (200, ["authentication", "keys", "provisioning", "public-key"]))
        r = auth.get("/.well-known/browserid", {"Host": DOMAIN})
        C.eq("delegation: asked by the domain's own name the authority delegates too",
             (r.status, r.json()), (200, {"authority": LOGIN}))
        for path in ("/", "/sign-in", "/pk", "/rp.js", "/sign-in/authenticate"):
            C.eq("delegation: GET %s on the login host" % path, site.get(path).status, 200)
        got = sign_in_and_certify(w, site, "https://" + LOGIN, "delegation")
        if not got:
            return
        payload, backed, ukey, upub = got
        C.eq("delegation: the certificate's iss is the login host", payload["iss"], LOGIN)
        C.eq("delegation: for the domain's address", payload["principal"]["email"],
             "alice@" + DOMAIN)
        v = mozilla_verify(tmp, ng, backed)
        C.eq("delegation: Mozilla's verifier (HTTPS discovery) accepts", v,
             {"ok": True, "email": "alice@" + DOMAIN, "issuer": LOGIN})
        rc, out, err = keytool_verify(tmp, ng, backed)
        C.eq("delegation: vep-keytool verify-assertion --fetch accepts",
             (rc, out.strip()), (0, "alice@" + DOMAIN), err)
        # The same key, but iss = the domain itself: a verifier that
        # followed the delegation must refuse it.
        rc, cert, err = vephelp.kt("certify", "--dir", w.keys, "--email", "alice@" + DOMAIN,
                                   "--pubkey", ukey)
        C.require("delegation: offline certificate naming the domain", rc == 0, err)
        cf = vephelp.write(os.path.join(w.tmp, "own-iss.jws"), cert)
        rc, out, err = vephelp.kt("sign-assertion", "--key", ukey, "--audience", AUDIENCE,
                                  "--cert", cf)
        wrong = vephelp.write(os.path.join(w.tmp, "own-iss.backed"), out)
        v = mozilla_verify(tmp, ng, wrong)
        C.check("delegation: Mozilla's verifier refuses iss = the delegating domain",
                v.get("ok") is False and "issuer" in v.get("err", ""), v)
        rc, out, err = keytool_verify(tmp, ng, wrong)
        C.eq("delegation: so does vep-keytool", rc, 1, out + err)
        r = Via(DOMAIN, ng.port, ca).get("/.well-known/browserid",
                                         {"Origin": "https://" + RP})
        C.eq("delegation: the static file is readable cross-origin (rp.js)",
             r.header("Access-Control-Allow-Origin"), "*")
        b = browser_rp(tmp, ng, crt, "alice@" + DOMAIN, "wonderland")
        C.check("delegation: rp.js in Chromium, given only the address, gets an assertion",
                b.get("ok") is True, b.get("err"))
        if b.get("ok"):
            C.eq("delegation: rp.js followed the delegation to the login host's popup",
                 b["authority"], "https://" + LOGIN)
            af = vephelp.write(os.path.join(w.tmp, "browser.backed"), b["assertion"])
            v = mozilla_verify(tmp, ng, af)
            C.eq("delegation: Mozilla's verifier accepts rp.js's assertion", v,
                 {"ok": True, "email": "alice@" + DOMAIN, "issuer": LOGIN})
    finally:
        if ng:
            ng.stop()
        C.eq("delegation: clean exit", auth.stop(), 0)


def issued_iss(w, auth):
    """The iss of a certificate alice gets straight from the server."""
    cl = signin.Client(auth)
    if cl.login("alice@" + DOMAIN, "wonderland").status != 200:
        return "(sign-in failed)"
    _, upub = vephelp.user_key(w.tmp, name="u-%d.pem" % vephelp.now_ms())
    r = cl.post("/api/cert", {"pubkey": upub, "duration": 600})
    return vephelp.jws_payload(r.json()["cert"])["iss"] if r.status == 200 else r.status


def check_authority_alone(tmp):
    """authority without public_url, straight at the server: Host
    login.example.test is this domain, its links are on that host, and
    another name is still misdirected."""
    w = signin.World(domain_extra="authority = %s\n" % LOGIN)
    auth = w.start()
    try:
        r = auth.get("/.well-known/browserid", {"Host": LOGIN})
        C.eq("authority alone: the login host gets the keys",
             (r.status, sorted(r.json())),
             (200, ["authentication", "keys", "provisioning", "public-key"]))
        r = auth.get("/.well-known/browserid", {"Host": DOMAIN})
        C.eq("authority alone: the domain's own name gets the delegation",
             (r.status, r.json()), (200, {"authority": LOGIN}))
        r = auth.get("/.well-known/browserid?domain=" + DOMAIN, {"Host": LOGIN + ":8443"})
        C.eq("authority alone: ?domain= at the login host (with a port) gets the keys",
             (r.status, "public-key" in r.json()), (200, True))
        r = auth.get("/.well-known/host-meta.json", {"Host": LOGIN})
        hrefs = [ln.get("href") or ln.get("template") for ln in r.json().get("links", [])]
        C.check("authority alone: host-meta links are on the login host",
                r.status == 200 and all(h.startswith("http://%s/" % LOGIN) for h in hrefs),
                hrefs)
        C.eq("authority alone: another name is misdirected",
             auth.get("/.well-known/browserid", {"Host": "other.example.test"}).status, 421)
        C.eq("authority alone: a certificate names the login host",
             issued_iss(w, auth), LOGIN)
        # Reload without the key: the domain's own name gets its keys, and
        # certificates name the domain again.
        with open(w.config) as f:
            text = f.read()
        vephelp.write(w.config, text.replace("authority = %s\n" % LOGIN, ""))
        auth.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + RELOAD_WAIT_S
        doc = {}
        while "public-key" not in doc and time.monotonic() < deadline:
            time.sleep(0.1)
            doc = auth.get("/.well-known/browserid", {"Host": DOMAIN}).json()
        C.check("reload without authority: the domain's name gets the keys", "public-key" in doc,
                doc)
        C.eq("reload without authority: certificates name the domain", issued_iss(w, auth),
             DOMAIN)
    finally:
        C.eq("authority alone: clean exit", auth.stop(), 0)


def page_paths(body):
    """The same-origin paths a page loads (src=, href=)."""
    return [p for p in re.findall(r'(?:src|href)="(/[^"]*)"', body.decode())]


def script_api_paths(body):
    return re.findall(r"'(/api/[a-z]+)'", body.decode())


def check_forwarding(tmp, ca, crt, key):
    """No delegation, no login host: example.test's own web server forwards
    exactly README's list (its main site answers the rest)."""
    w = signin.World(extra_config="trusted_proxies = 127.0.0.1\n"
                     "shim_origin = https://shim.example\n",
                     domain_extra="public_url = https://%s\n" % DOMAIN)
    auth = w.start()
    paths = readme_forwarded_paths()
    block = readme_block("location ~ ^/(")
    ng = None
    try:
        C.check("forwarding: README lists about a dozen paths", 12 <= len(paths) <= 20, paths)
        ng = Nginx(os.path.join(tmp, "ng-fwd"), lambda port: tls_server(
            DOMAIN, crt, key, port,
            proxied(block, auth) + "location / { add_header X-Main-Site yes always; "
            "return 404 'the web site'; }"))
        site = Via(DOMAIN, ng.port, ca)
        for path in paths:
            q = "?resource=acct:alice@" + DOMAIN if path.endswith("webfinger") else ""
            r = site.get(path + q)
            C.check("forwarding: %s reaches the authority" % path,
                    r.header("X-Main-Site") is None and r.status in (200, 401, 405), r.status)
        for path in ("/sign-in", "/account", "/share", "/embed", "/rp.js", "/healthz",
                     "/api/other", "/vep.js.map", "/pk/x"):
            C.eq("forwarding: %s stays the web site's" % path,
                 site.get(path).header("X-Main-Site"), "yes")
        for page in ("/sign-in/authenticate", "/sign-in/provision"):
            r = site.get(page)
            C.eq("forwarding: %s" % page, r.status, 200)
            used = page_paths(r.body)
            C.check("forwarding: %s loads scripts" % page, any(p.endswith(".js") for p in used),
                    used)
            for p in used:
                C.check("forwarding: %s uses %s, which is forwarded" % (page, p), p in paths)
                if p.endswith(".js"):
                    for api in script_api_paths(site.get(p).body):
                        C.check("forwarding: %s calls %s, which is forwarded" % (p, api),
                                api in paths)
        got = sign_in_and_certify(w, site, "https://" + DOMAIN, "forwarding")
        if not got:
            return
        C.eq("forwarding: the certificate names the domain", got[0]["iss"], DOMAIN)
        v = mozilla_verify(tmp, ng, got[1])
        C.eq("forwarding: Mozilla's verifier (HTTPS discovery) accepts", v,
             {"ok": True, "email": "alice@" + DOMAIN, "issuer": DOMAIN})
        rc, out, err = keytool_verify(tmp, ng, got[1])
        C.eq("forwarding: vep-keytool verify-assertion --fetch accepts",
             (rc, out.strip()), (0, "alice@" + DOMAIN), err)
    finally:
        if ng:
            ng.stop()
        C.eq("forwarding: clean exit", auth.stop(), 0)


def main():
    need()
    tmp = vephelp.tempfile.mkdtemp(prefix="vep-loginhost-")
    os.chmod(tmp, 0o755)
    try:
        ca, crt, key = make_ca(tmp)
        C.group(check_login_host, tmp, ca, crt, key)
        C.group(check_delegation, tmp, ca, crt, key)
        C.group(check_authority_alone, tmp)
        C.group(check_forwarding, tmp, ca, crt, key)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return C.finish()


sys.exit(main())
