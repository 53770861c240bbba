#!/usr/bin/env python3
"""A website that signs users in with their email address (Verified Email
Protocol), verifying on its server through the identity authority's
POST /verify. Python standard library only.

    python3 server.py --authority https://login.example.com \\
        --origin https://shop.example --listen 127.0.0.1:8000

Serves the sign-in page (../site/) and POST /sign-in {"assertion"}, which
answers 200 {"email"} or an error {"error"}. Run it behind your TLS proxy;
--origin is the origin users see, the audience every assertion must name.
"""
import argparse
import hashlib
import html
import json
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SITE = Path(__file__).resolve().parent.parent / "site"
MAX_BODY = 10 * 1024            # an assertion is ~3 KiB; /verify takes 10 KiB
MAX_ANSWER = 64 * 1024
VERIFY_TIMEOUT_S = 5
SEEN_MAX = 10000                # accepted assertions remembered at once
MAX_AHEAD_MS = 10 * 60 * 1000   # browsers make assertions valid for 2 min


class Refused(Exception):
    """A sign-in that must not go through; str() says why, for the user."""


class Trouble(Exception):
    """Not the user's fault: the verifier is down, the record full."""


class NoRedirect(urllib.request.HTTPRedirectHandler):
    # A redirect would turn the POST into a GET elsewhere: an error instead.
    def redirect_request(self, *args):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def verify(authority, origin, assertion):
    """Asks the authority; returns its answer when the assertion is good
    for this site, else raises Refused (or Trouble)."""
    body = urllib.parse.urlencode({"assertion": assertion, "audience": origin})
    req = urllib.request.Request(authority + "/verify", data=body.encode(),
                                 headers={"Content-Type":
                                          "application/x-www-form-urlencoded"})
    try:
        with OPENER.open(req, timeout=VERIFY_TIMEOUT_S) as res:
            status, data = res.status, res.read(MAX_ANSWER + 1)
        answer = json.loads(data) if len(data) <= MAX_ANSWER else None
    except urllib.error.HTTPError as e:   # 3xx, 4xx, 5xx
        status, answer = e.code, None
    except (OSError, ValueError):          # unreachable, timeout, not JSON
        raise Trouble("no usable answer from the verifier") from None
    if status != 200:
        raise Trouble(f"the verifier answered HTTP {status}")
    if not isinstance(answer, dict):
        raise Trouble("the verifier's answer is not a JSON object")
    if answer.get("status") != "okay":
        raise Refused(str(answer.get("reason") or "not a valid sign-in"))
    # Checked here too: whatever the verifier does, the assertion must be
    # for this site, never one made for another that was posted to us.
    if answer.get("audience") != origin:
        raise Refused("made for another website")
    if not isinstance(answer.get("email"), str) or \
            not isinstance(answer.get("expires"), int):
        raise Trouble("the verifier's answer is incomplete")
    return answer


def replay_key(assertion):
    """What the user's signature covers (the assertion's header and
    payload), not the whole text: that can be re-sent with another
    certificate of the same key, or its signature written with a leading
    zero byte, and still verify."""
    signed = assertion.rsplit("~", 1)[-1].rsplit(".", 1)[0]
    return hashlib.sha256(signed.encode()).hexdigest()


class SeenAssertions:
    """Assertions accepted and not yet expired, in memory (one process: with
    several, keep this in a shared store, e.g. a database's unique key)."""

    def __init__(self, limit):
        self._expires = {}
        self._limit = limit
        self._lock = threading.Lock()

    def admit(self, key, expires_ms):
        """Records key until expires_ms; Refused if it is there already."""
        now = int(time.time() * 1000)
        if expires_ms > now + MAX_AHEAD_MS:
            # It would occupy the record too long; a sane browser never
            # makes one (is the computer's clock right?).
            raise Refused("valid too far ahead")
        with self._lock:
            if len(self._expires) >= self._limit:
                self._expires = {k: e for k, e in self._expires.items() if e > now}
            if self._expires.get(key, 0) > now:
                raise Refused("already used: a replay")
            if len(self._expires) >= self._limit:
                raise Trouble("too many sign-ins at once")
            self._expires[key] = expires_ms


class Handler(BaseHTTPRequestHandler):
    authority = origin = None     # set in main()
    seen = SeenAssertions(SEEN_MAX)
    timeout = 30                  # seconds a client may take to send its request

    def do_GET(self):
        if self.path == "/":
            page = (SITE / "index.html").read_text()
            self.send(200, "text/html; charset=utf-8",
                      page.replace("{{AUTHORITY}}", html.escape(self.authority)))
        elif self.path == "/sign-in.js":
            self.send(200, "text/javascript", (SITE / "sign-in.js").read_text())
        else:
            self.reply(404, {"error": "not found"})

    def do_POST(self):
        if self.path != "/sign-in":
            return self.reply(404, {"error": "not found"})
        # JSON only: a cross-site form cannot send it, so no other site
        # can sign a visitor in to the account of its choosing here.
        if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
            return self.reply(415, {"error": "send JSON"})
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            return self.reply(411, {"error": "Content-Length needed"})
        if not 0 <= length <= MAX_BODY:
            return self.reply(413, {"error": "too large"})
        try:
            assertion = json.loads(self.rfile.read(length))["assertion"]
            if not isinstance(assertion, str) or not assertion:
                raise ValueError
        except (ValueError, KeyError, TypeError):
            return self.reply(400, {"error": "expected {\"assertion\": \"...\"}"})
        try:
            answer = verify(self.authority, self.origin, assertion)
            self.seen.admit(replay_key(assertion), answer["expires"])
        except Refused as e:
            return self.reply(401, {"error": str(e)})
        except Trouble as e:
            print(f"sign-in failed: {e}", file=sys.stderr)
            return self.reply(503, {"error": "cannot sign in now, try again later"})
        # Signed in: start your session for answer["email"] here.
        self.reply(200, {"email": answer["email"]})

    def reply(self, status, obj):
        self.send(status, "application/json", json.dumps(obj))

    def send(self, status, ctype, text):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", "default-src 'none'; script-src 'self' "
                         f"{self.authority}; connect-src 'self'; frame-ancestors 'none'")
        self.end_headers()
        self.wfile.write(data)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--authority", required=True, help="e.g. https://login.example.com")
    p.add_argument("--listen", default="127.0.0.1:8000", help="ADDR:PORT (port 0: any)")
    p.add_argument("--origin", help="this site's origin (default: http://ADDR:PORT)")
    a = p.parse_args()
    host, port = a.listen.rsplit(":", 1)
    srv = ThreadingHTTPServer((host, int(port)), Handler)
    Handler.authority = a.authority.rstrip("/")
    # Fixed here, never taken from a request (Host, Origin): the audience is
    # what stops another site's assertions from working on this one.
    Handler.origin = a.origin or f"http://{host}:{srv.server_address[1]}"
    print(f"listening on {Handler.origin}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
