#!/usr/bin/env python3
"""login_load.py HOST PORT N SECONDS - keeps N sign-ins running at once
(each through the bench's slow PAM module, about 1 s) for SECONDS, and
prints how many completed and how many got 200."""
import http.client
import json
import sys
import threading
import time

host, port, n, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
body = json.dumps({"email": "slow@example.test", "password": "slow-pw"})
done = [0, 0]
lock = threading.Lock()
end = time.time() + seconds


def worker():
    while time.time() < end:
        c = http.client.HTTPConnection(host, port, timeout=30)
        try:
            c.request("POST", "/api/login", body, {"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            with lock:
                done[0] += 1
                done[1] += r.status == 200
        except Exception:
            pass
        finally:
            c.close()


ts = [threading.Thread(target=worker) for _ in range(n)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("logins %d ok %d" % (done[0], done[1]))
