"""Native HTTPS (tls_cert, tls_key) against the real server: TLS 1.2 and
1.3 with forward-secret ciphers only, older versions refused, no plain HTTP
on the TLS port, HSTS on every response, https links in host-meta, the
handshake under the header deadline, the key file's mode and the pair's
match checked by --check, and the certificate replaced on SIGHUP for new
connections (a broken one leaves the old in use)."""

import hashlib
import http.client
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vephelp  # noqa: E402

C = vephelp.Checker("tls")
tmp = tempfile.mkdtemp(prefix="vep-tls-")
keydir = vephelp.demo_keydir(tmp)


def make_cert(name):
    key, crt = os.path.join(tmp, name + ".key"), os.path.join(tmp, name + ".crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", crt, "-days", "2", "-subj", "/CN=example.test",
                    "-addext", "subjectAltName=DNS:example.test,IP:127.0.0.1"],
                   check=True, capture_output=True)
    os.chmod(key, 0o600)
    return crt, key


def conf(crt, key, name="a"):
    return vephelp.write_config(tmp, keydir, name, "header_timeout = 2\ntls_cert = %s\n"
                                "tls_key = %s\n" % (crt, key))


def context(cafile, version=None):
    ctx = ssl.create_default_context(cafile=cafile)
    if version is not None:
        ctx.minimum_version = ctx.maximum_version = version
    return ctx


def get(a, path, ctx):
    conn = http.client.HTTPSConnection(a.host, a.port, context=ctx, timeout=10)
    try:
        conn.request("GET", path, headers={"Host": "example.test"})
        r = conn.getresponse()
        body = r.read()
        return r, body, conn.sock.getpeercert(binary_form=True) if conn.sock else None, \
            conn.sock.version() if conn.sock else None
    finally:
        conn.close()


def s_client(a, *args):
    p = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % a.port] + list(args),
                       input=b"", capture_output=True, timeout=20)
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")


crt1, key1 = make_cert("one")
crt2, key2 = make_cert("two")

# --check: the key's mode and the pair.
os.chmod(key1, 0o644)
rc, out, err = vephelp.run(["--config", conf(crt1, key1, "perm"), "--check"],
                           {"PAM_WRAPPER": "1", "PAM_WRAPPER_SERVICE_DIR": "/etc/pam.d"})
C.eq("TLS key readable by others: exit 2", rc, 2)
C.check("... says how to fix it", "chmod 600" in err, err)
C.check("... naming the file and line of tls_key", "perm.conf:4: key 'tls_key': TLS key" in err,
        err)
os.chmod(key1, 0o600)
rc, out, err = vephelp.run(["--config", conf(crt1, key2, "mix"), "--check"])
C.eq("TLS key of another certificate: exit 2", rc, 2)
C.check("... says they do not match", "match" in err, err)
C.check("... naming the file and line of tls_key", "mix.conf:4: key 'tls_key'" in err, err)
only = vephelp.write_config(tmp, keydir, "only", "tls_cert = %s\n" % crt1)
rc, out, err = vephelp.run(["--config", only, "--check"])
C.eq("tls_cert without tls_key: exit 2", rc, 2)
# TLS_PEM_MAX: a certificate file over 1 MiB is refused, not read whole.
huge = os.path.join(tmp, "huge.crt")
with open(huge, "wb") as f:
    f.write(open(crt1, "rb").read() + b"#" * (1024 * 1024))
rc, out, err = vephelp.run(["--config", conf(huge, key1, "huge"), "--check"])
C.eq("TLS certificate over 1 MiB: exit 2", rc, 2)
C.check("... says so", "larger than 1 MiB" in err, err)
rc, out, err = vephelp.run(["--config", conf(os.path.join(tmp, "none.crt"), key1, "none"),
                            "--check"])
C.eq("TLS certificate missing: exit 2", rc, 2)
C.check("... names it", "none.crt': cannot read it" in err, err)
C.check("... and the file and line of tls_cert", "none.conf:3: key 'tls_cert'" in err, err)

a = vephelp.serve(conf(crt1, key1), tmp)
C.eq("listening line says https", a.scheme, "https")
for name, version in [("TLS 1.3", ssl.TLSVersion.TLSv1_3), ("TLS 1.2", ssl.TLSVersion.TLSv1_2)]:
    r, body, cert, ver = get(a, "/.well-known/browserid", context(crt1, version))
    C.eq(name + ": 200", r.status, 200)
    C.eq(name + ": negotiated", ver, {"TLS 1.3": "TLSv1.3", "TLS 1.2": "TLSv1.2"}[name])
    C.eq(name + ": HSTS, a year, without includeSubDomains by default",
         r.getheader("Strict-Transport-Security"), "max-age=31536000")
rc, out = s_client(a, "-tls1_2", "-cipher", "AES128-GCM-SHA256")
C.check("TLS 1.2 without forward secrecy (RSA key exchange): refused", rc != 0, out[-300:])
rc, out = s_client(a, "-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA")
C.check("TLS 1.2 CBC suite: refused", rc != 0, out[-300:])
rc, out = s_client(a, "-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0")
C.check("TLS 1.1: refused", rc != 0 or "Cipher is (NONE)" in out, out[-300:])
r, body, _, _ = get(a, "/.well-known/host-meta", context(crt1))
C.check("host-meta links are https", b"https://example.test/" in body, body[:300])

# Plain HTTP on the TLS port is not served.
raw = a.raw(b"GET /.well-known/browserid HTTP/1.1\r\nHost: example.test\r\n\r\n", timeout=5)
C.check("plain HTTP on the TLS port: no HTTP answer", not raw.startswith(b"HTTP/1.1 200"),
        raw[:60])

# The handshake runs under the header deadline.
gone, t = vephelp.wait_closed(socket.create_connection((a.host, a.port), timeout=10), 10)
C.check("no ClientHello: closed at header_timeout (+1 s)", gone and t <= 3, "%.2f s" % t)

# SIGHUP: a broken certificate keeps the old one; a new one serves new
# connections.
_, _, der1, _ = get(a, "/pk", context(crt1))
with open(os.path.join(tmp, "broken.crt"), "w") as f:
    f.write("-----BEGIN CERTIFICATE-----\nnot one\n-----END CERTIFICATE-----\n")
os.replace(os.path.join(tmp, "broken.crt"), crt1 + ".tmp")
saved = open(crt1, "rb").read()
os.replace(crt1 + ".tmp", crt1)
a.send_signal(signal.SIGHUP)
time.sleep(0.6)
# Same name, same CA file as before: verify against the saved original.
with open(os.path.join(tmp, "one.saved.crt"), "wb") as f:
    f.write(saved)
r, _, der, _ = get(a, "/pk", context(os.path.join(tmp, "one.saved.crt")))
C.eq("SIGHUP with a broken certificate: still served", r.status, 200)
C.eq("... with the old certificate", hashlib.sha256(der).hexdigest(),
     hashlib.sha256(der1).hexdigest())
C.check("... and the log says why", "still serving the old configuration and keys" in a.stderr(), a.stderr()[-300:])
with open(crt1, "wb") as f:
    f.write(open(crt2, "rb").read())
os.replace(key2, key1 + ".new")
os.replace(key1 + ".new", key1)
a.send_signal(signal.SIGHUP)
time.sleep(0.6)
r, _, der, _ = get(a, "/pk", context(crt2))
C.eq("SIGHUP with a new certificate: served", r.status, 200)
C.check("... new connections get the new certificate",
        hashlib.sha256(der).hexdigest() != hashlib.sha256(der1).hexdigest())
# Dropping tls_cert/tls_key would make the sockets speak plain HTTP: a
# reload refuses it (a restart does it), and HTTPS goes on.
text = open(os.path.join(tmp, "a.conf")).read()
vephelp.write(os.path.join(tmp, "a.conf"), re.sub(r"^tls_(cert|key) = .*\n", "", text, flags=re.M))
mark = len(a.stderr())
a.send_signal(signal.SIGHUP)
time.sleep(0.6)
C.check("SIGHUP without tls_cert: refused, a restart needed",
        "switching between HTTP and HTTPS (tls_cert) needs a restart" in a.stderr()[mark:],
        a.stderr()[mark:][-300:])
r, _, der, _ = get(a, "/pk", context(crt2))
C.eq("... HTTPS still served", r.status, 200)
C.eq("clean exit", a.stop(), 0)

# HSTS as configured (hsts_max_age, hsts_include_subdomains), on normal
# answers and on the raw ones the edge sends for a refused request.
crt3, key3 = make_cert("three")
b = vephelp.serve(vephelp.write_config(tmp, keydir, "hsts", "tls_cert = %s\ntls_key = %s\n"
                                       "hsts_max_age = 600\nhsts_include_subdomains = yes\n"
                                       % (crt3, key3)), tmp)
r, _, _, _ = get(b, "/.well-known/browserid", context(crt3))
C.eq("hsts_max_age = 600 with hsts_include_subdomains = yes",
     r.getheader("Strict-Transport-Security"), "max-age=600; includeSubDomains")
with socket.create_connection((b.host, b.port), timeout=10) as raw_sock:
    with context(crt3).wrap_socket(raw_sock, server_hostname="example.test") as tls_sock:
        tls_sock.sendall(b"GET / HTTP/1.1\r\nHost: example.test\r\nX: a\r\n b\r\n\r\n")
        refused = b""
        while True:
            chunk = tls_sock.recv(4096)
            if not chunk:
                break
            refused += chunk
C.check("... also on a request the edge refuses (400)",
        refused.startswith(b"HTTP/1.1 400") and
        b"\r\nStrict-Transport-Security: max-age=600; includeSubDomains\r\n" in refused,
        refused[:400])
C.eq("clean exit", b.stop(), 0)
sys.exit(C.finish())
