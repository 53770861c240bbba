"""Sign-in overload: offered three times the measured sign-in capacity,
the authority answers the excess at once with 503 or 429 and Retry-After
(never a timeout), keeps serving discovery, and is back to its normal
latency within 10 s after the load stops.

First, pam_workers' promise with a PAM stack that takes 0.3 s: 5 sign-ins
per worker started together all succeed (the ones beyond pam_workers wait
their turn); 2 more than that get 503 at once, before any queued one is done."""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("overload")
PAM_WORKERS = 2


def login_once(auth, user="alice"):
    t = time.monotonic()
    try:
        r = signin.Client(auth).login(user + "@example.test", signin.ACCOUNTS[user][0])
        st, ra = r.status, r.header("Retry-After")
    except OSError as e:
        st, ra = str(e), None
    return st, ra, time.monotonic() - t


def closed_loop(auth, conc, secs):
    """conc clients signing in back to back for secs: sign-ins per second."""
    done = []
    stop = time.monotonic() + secs

    def run():
        while time.monotonic() < stop:
            done.append(login_once(auth))
    vephelp.at_once([run] * conc)
    return sum(1 for st, _, _ in done if st == 200) / secs, done


def open_loop(auth, rate, secs):
    """Starts rate sign-ins per second for secs whatever the answers."""
    results = []
    lock = threading.Lock()
    threads = []

    def one():
        res = login_once(auth)
        with lock:
            results.append(res)
    start = time.monotonic()
    n = int(rate * secs)
    for i in range(n):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        t = threading.Thread(target=one)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    return results


# Accounts a burst takes turns over: at most 3 sign-ins each, under the
# limit on attempts in progress per account and address.
BURST_USERS = ("alice", "bob", "carol", "canary")


def burst(auth, n):
    """n sign-ins started together: (status, Retry-After, seconds) each."""
    return vephelp.at_once([(lambda i=i: login_once(auth, BURST_USERS[i % len(BURST_USERS)]))
                            for i in range(n)])


def queue_checks(w, auth):
    hook = os.path.join(w.pamdir, "auth-hook.sh")
    with open(hook) as f:
        normal = f.read()
    vephelp.write(hook, "#!/bin/sh\nsleep 0.3\nexit 0\n", 0o700)
    try:
        n = PAM_WORKERS * (1 + 4)
        res = burst(auth, n)
        C.eq("%d sign-ins at once on %d PAM workers: all wait their turn and succeed"
             % (n, PAM_WORKERS), [r[0] for r in res], [200] * n)
        C.check("... two at a time (the last after %.1f s)" % max(r[2] for r in res),
                max(r[2] for r in res) >= 0.3 * n / PAM_WORKERS - 0.1)
        res = burst(auth, n + 2)
        busy = [r for r in res if r[0] == 503]
        C.eq("%d at once: %d succeed, the other 2 get 503" % (n + 2, n),
             sorted(r[0] for r in res), [200] * n + [503] * 2)
        # "At once" is measured against the queue itself rather than a clock
        # (a loaded machine under AddressSanitizer took 0.63 s for the whole
        # exchange): a 503 must come back before the first queued sign-in
        # (the one after the first pam_workers) is done, which needs a second
        # 0.3 s PAM turn.
        served = sorted(r[2] for r in res if r[0] == 200)
        first_queued = served[PAM_WORKERS] if len(served) > PAM_WORKERS else 0
        C.check("... at once (before the first queued sign-in is done), saying when to retry",
                len(busy) == 2 and all(r[2] < first_queued and r[1] is not None for r in busy),
                "%r; first queued sign-in done after %.2f s" % (busy, first_queued))
    finally:
        vephelp.write(hook, normal, 0o700)


def get_ms(auth):
    t = time.monotonic()
    st = auth.get("/.well-known/browserid").status
    return st, (time.monotonic() - t) * 1000


def main():
    w = signin.World("workers = 1\npam_workers = %d\nthrottle_addr_max = 100000\n"
                     "throttle_account_max = 1000\n" % PAM_WORKERS)
    auth = w.start()
    try:
        queue_checks(w, auth)
        capacity, _ = closed_loop(auth, PAM_WORKERS, 3)
        C.check("measured sign-in capacity: %.1f/s" % capacity, capacity > 1)
        base_login = sorted(d for _, _, d in closed_loop(auth, 1, 2)[1])
        base_login = base_login[len(base_login) // 2]
        res = open_loop(auth, 3 * capacity, 4)
        ok = [r for r in res if r[0] == 200]
        shed = [r for r in res if r[0] in (503, 429)]
        other = [r for r in res if r[0] not in (200, 503, 429)]
        C.check("3x capacity (%d offered): some served (%d), excess shed (%d)"
                % (len(res), len(ok), len(shed)), ok and shed, "")
        C.eq("3x capacity: nothing but 200, 503 or 429 (no timeouts, no resets)",
             [r[0] for r in other][:5], [])
        C.check("every shed answer says when to retry",
                all(r[1] is not None and r[1].isdigit() for r in shed))
        slow = sorted(d for _, _, d in shed)
        C.check("shed answers are quick (p95 %.0f ms < 1000 ms)"
                % (slow[int(len(slow) * 0.95)] * 1000 if slow else 0),
                slow and slow[int(len(slow) * 0.95)] < 1.0)
        # Back to normal within 10 s.
        deadline = time.monotonic() + 10
        normal = False
        while time.monotonic() < deadline and not normal:
            st, d = login_once(auth)[0], login_once(auth)[2]
            gst, gms = get_ms(auth)
            normal = st == 200 and d < 3 * base_login + 0.05 and gst == 200 and gms < 50
            if not normal:
                time.sleep(0.5)
        C.check("latency back to normal within 10 s (sign-in median before: %.0f ms)"
                % (base_login * 1000), normal)
    finally:
        C.eq("server: clean exit", auth.stop(), 0)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
