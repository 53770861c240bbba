"""Client addresses behind a reverse proxy (trusted_proxies).

Without trusted_proxies, X-Forwarded-For is ignored: the log and the
per-address throttle see the peer. With trusted_proxies = 127.0.0.1 the
address the proxy appended is the client's: it is logged, and the
per-address throttle counts it and no other (a second client behind the
same proxy still signs in), whatever a client wrote to the left of it. A
SIGHUP that removes trusted_proxies makes the header ignored again."""

import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("proxy")


def login(auth, email, password, xff):
    return signin.Client(auth).login(email, password, {"X-Forwarded-For": xff})


def logged_from(auth, account, addr):
    return re.search(r"sign-in auth-failed: account %s from %s$" % (re.escape(account),
                     re.escape(addr)), auth.stderr(), re.M) is not None


def main():
    w = signin.World("throttle_addr_max = 2\nthrottle_account_max = 50\n")
    auth = w.start()
    try:
        C.eq("no trusted proxy: wrong password 401",
             login(auth, "alice@example.test", "x", "198.51.100.7").status, 401)
        C.check("... logged from the peer, the header ignored",
                logged_from(auth, "alice@example.test", "127.0.0.1"), auth.stderr()[-300:])
    finally:
        auth.stop()

    conf = open(w.config).read()
    with open(w.config, "w") as f:
        f.write("trusted_proxies = 127.0.0.1 10.0.0.0/8\n" + conf)
    auth = w.start()
    try:
        C.eq("behind a trusted proxy: wrong password 401",
             login(auth, "alice@example.test", "x", "198.51.100.7").status, 401)
        C.check("... logged from the address the proxy gave",
                logged_from(auth, "alice@example.test", "198.51.100.7"), auth.stderr()[-300:])
        C.eq("a client's own entry to the left does not count",
             login(auth, "bob@example.test", "x", "6.6.6.6, 198.51.100.7").status, 401)
        C.check("... logged from the proxy's entry",
                logged_from(auth, "bob@example.test", "198.51.100.7"))
        C.eq("third failure from 198.51.100.7: throttled (429)",
             login(auth, "carol@example.test", "x", "198.51.100.7").status, 429)
        C.eq("another client behind the same proxy still signs in",
             login(auth, "alice@example.test", "wonderland", "198.51.100.8").status, 200)
        C.eq("a trusted inner hop is skipped",
             login(auth, "alice@example.test", "x", "198.51.100.7, 10.1.1.1").status, 429)
        with open(w.config, "w") as f:
            f.write(conf)
        auth.send_signal(signal.SIGHUP)
        time.sleep(0.6)
        C.check("SIGHUP without trusted_proxies: reloaded", "configuration and keys loaded"
                in auth.stderr())
        C.eq("... the header is ignored again (the peer is not throttled)",
             login(auth, "alice@example.test", "x", "198.51.100.7").status, 401)
        C.check("... and the peer is logged",
                len(re.findall(r"auth-failed: account alice@example.test from 127\.0\.0\.1$",
                               auth.stderr(), re.M)) == 1)
    finally:
        C.eq("server: clean exit", auth.stop(), 0)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
