#!/usr/bin/env python3
"""test_second_factor - sign-in when the PAM stack asks more than the
password, against the real binary and real modules: pam_matrix for the
password (pam_wrapper), Debian's pam_oath for a TOTP code (codes computed
with oathtool at test time), and tests/pam/pam_vep_test.so where a stack
must ask five questions, show messages or say a password expired.

- password then code: 202 with the question, then 200 and a session;
- a wrong code ends like a wrong password (401, the same body, the same
  failure delay); an unknown account and a wrong password through the same
  `required` stack are asked for the code too, then end the same way;
- a continuation serves once (replay: 401 restart), an unknown or expired
  one is refused (401 restart; the conversation's worker is gone);
- a used code does not serve again (pam_oath records it);
- the throttle counts each conversation: after 5 wrong codes the password
  step answers 429;
- more than 4 questions: the sign-in fails; PAM's messages arrive with the
  question, capped and cleaned; an expired password is a 403 with its own
  words (only after the right password);
- a loop lets half its share of PAM workers wait for answers; beyond, a
  question is not asked (503);
- with two event loops the step reaches the loop holding its
  conversation whatever connection carries it (server/mailbox.h);
- with `requisite` before pam_oath a wrong password is refused without the
  question (the README's warning, shown), unless second_factor_prompt is
  set: then every refusal before a question is asked one all the same, in
  the same words.
"""
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import signin  # noqa: E402
import vephelp  # noqa: E402

C = vephelp.Checker("second_factor")
FAIL_BODY = {"error": "wrong address or password"}
OATH = signin.OATH_MODULE
totp = signin.totp


def test_module():
    build = os.path.dirname(os.path.dirname(os.environ["VEP_AUTHORITY"]))
    return os.path.join(build, "tests", "pam", "pam_vep_test.so")


EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "docs", "examples", "pam.d", "vep-authority-oath")


def example_oath_line():
    """The pam_oath line of the installed example stack, as written there
    (the module by its full path, the users file a placeholder)."""
    with open(EXAMPLE) as f:
        for line in f:
            if line.split()[:3] == ["auth", "required", "pam_oath.so"]:
                return re.sub(r"usersfile=\S+", "usersfile=@USERS@",
                              line.replace("pam_oath.so", OATH, 1))
    raise RuntimeError("no pam_oath line in " + EXAMPLE)


def oath_world(control="required", extra=""):
    """The example stack (docs/examples/pam.d/vep-authority-oath) with
    pam_matrix in pam_unix's place; alice, bob, carol and canary have TOTP
    lines, the others none."""
    w = signin.World(extra_config=extra, matrix_control=control, auth_last=example_oath_line())
    w.oath_users(("alice", "bob", "carol", "canary"))
    return w


def step(auth, cont, answer):
    return signin.Client(auth).post("/api/login/continue",
                                    {"continuation": cont, "answer": answer})


def timed(fn):
    t = time.monotonic()
    r = fn()
    return r, time.monotonic() - t


def check_oath():
    w = oath_world(extra="workers = 2\npam_answer_timeout = 10\n"
                   "second_factor_prompt = One-time code:\n")
    auth = w.start()
    try:
        c = signin.Client(auth)
        r = c.post("/api/login", {"email": "alice@example.test", "password": "wonderland"})
        C.require("password step: 202", r.status == 202, (r.status, r.body))
        q = r.json()
        C.eq("the question in second_factor_prompt's words, hidden",
             (q.get("prompt"), q.get("echo")), ("One-time code:", False))
        C.eq("expires_in: pam_answer_timeout", q.get("expires_in"), 10)
        C.check("no session yet (no cookie)", r.header("Set-Cookie") is None, r.headers)
        C.check("continuation: loop index, a dot, 43 characters",
                re.fullmatch(r"[01]\.[A-Za-z0-9_-]{43}", q.get("continuation", "")), q)
        code = totp()
        r = step(auth, q["continuation"], code)
        C.eq("code step: 200", r.status, 200, r.body)
        if r.status == 200:
            c.signed_in(r)
            C.eq("signed in as alice", c.get("/api/session").json().get("email"),
                 "alice@example.test")
        r = step(auth, q["continuation"], code)
        C.eq("the continuation again: 401 restart", (r.status, r.json().get("reason")),
             (401, "restart"))
        r = signin.Client(auth).post("/api/login",
                                     {"email": "alice@example.test", "password": "wonderland"})
        if C.check("second sign-in: 202", r.status == 202, r.status):
            r2 = step(auth, r.json()["continuation"], code)
            C.eq("the same code again: refused (401, generic)", (r2.status, r2.json()),
                 (401, FAIL_BODY))

        # Failures alike: wrong code, wrong password, unknown account.
        outcomes = {}
        for label, email, pw in (("wrong code", "bob@example.test", signin.ACCOUNTS["bob"][0]),
                                 ("wrong password", "carol@example.test", "nope"),
                                 ("unknown account", "nosuch@example.test", "nope")):
            r = signin.Client(auth).post("/api/login", {"email": email, "password": pw})
            if not C.eq("%s: asked for the code too (202)" % label, r.status, 202, r.body):
                continue
            C.eq("%s: in the same words, with the same fields" % label,
                 (r.json()["prompt"], r.json()["echo"], r.json()["messages"],
                  r.json()["expires_in"], sorted(r.json())),
                 ("One-time code:", False, [], 10,
                  ["continuation", "echo", "expires_in", "messages", "prompt"]))
            r2, dt = timed(lambda: step(auth, r.json()["continuation"], "000000"))
            outcomes[label] = (r2.status, r2.json())
            C.check("%s: waited the failure delay (>= 0.95 s)" % label, dt >= 0.95, dt)
        C.eq("wrong code, wrong password, unknown account: one answer",
             set(map(repr, outcomes.values())), {repr((401, FAIL_BODY))})

        r = step(auth, "0." + "A" * 43, "123456")
        C.eq("an unknown continuation: 401 restart", (r.status, r.json()),
             (401, {"error": "This sign-in has timed out. Start again.", "reason": "restart"}))
        for bad in ("", "x", "9.abc", "-1.abc", "0" * 80):
            r = step(auth, bad, "1")
            C.eq("malformed continuation %r: 401 restart" % bad[:12], r.status, 401)
        r = signin.Client(auth).post("/api/login/continue", {"continuation": 1, "answer": "1"})
        C.eq("a continuation that is not a string: 400", r.status, 400)
        r = signin.Client(auth).post("/api/login/continue", {"continuation": "0.x"})
        C.eq("no answer: 400", r.status, 400)

        # Expiry: the answer timeout ends the conversation and its worker.
        r = signin.Client(auth).post("/api/login",
                                     {"email": "alice@example.test", "password": "wonderland"})
        if C.check("expiry: 202", r.status == 202, r.status):
            time.sleep(11.5)
            r2 = step(auth, r.json()["continuation"], totp())
            C.eq("after pam_answer_timeout: 401 restart", (r2.status, r2.json().get("reason")),
                 (401, "restart"))

        # Any connection may carry the step: with two loops, new
        # connections land on either (SO_REUSEPORT); all must work.
        ok = 0
        for i in range(6):
            r = signin.Client(auth).post("/api/login", {"email": "carol@example.test",
                                                        "password": signin.ACCOUNTS["carol"][0]})
            if r.status == 202 and step(auth, r.json()["continuation"],
                                        totp(30 * (i + 2))).status == 200:
                ok += 1
        C.eq("6 two-step sign-ins, each step on a new connection (either loop): 6 signed in",
             ok, 6)

        # The throttle counts each conversation: 5 wrong codes, then 429.
        codes = []
        for _ in range(5):
            r = signin.Client(auth).post("/api/login", {"email": "canary@example.test",
                                                        "password": signin.ACCOUNTS["canary"][0]})
            codes.append(r.status)
            if r.status == 202:
                codes.append(step(auth, r.json()["continuation"], "999999").status)
        r = signin.Client(auth).post("/api/login", {"email": "canary@example.test",
                                                    "password": signin.ACCOUNTS["canary"][0]})
        C.eq("throttle: 5 conversations each ended by a wrong code", codes, [202, 401] * 5)
        C.eq("throttle: then the password step answers 429", r.status, 429)
    finally:
        C.eq("oath: clean exit", auth.stop(), 0)


def check_requisite():
    """The README's warning: with requisite and no second_factor_prompt,
    the question itself tells; with it, it does not."""
    w = oath_world(control="requisite")
    auth = w.start()
    try:
        r = signin.Client(auth).post("/api/login", {"email": "bob@example.test",
                                                    "password": "wrong"})
        C.eq("requisite: a wrong password is refused without the question (401)",
             r.status, 401)
        r = signin.Client(auth).post("/api/login", {"email": "bob@example.test",
                                                    "password": signin.ACCOUNTS["bob"][0]})
        C.eq("requisite: only the right one is asked (202)", r.status, 202)
        C.check("... in PAM's own words (which name the account)",
                "One-time password" in r.json().get("prompt", "") and
                "bob" in r.json().get("prompt", ""), r.body)
    finally:
        C.eq("requisite: clean exit", auth.stop(), 0)
    w = oath_world(control="requisite", extra="second_factor_prompt = Code:\n")
    auth = w.start()
    try:
        r = signin.Client(auth).post("/api/login", {"email": "bob@example.test",
                                                    "password": "wrong"})
        C.eq("requisite + second_factor_prompt: a wrong password is asked too (202)",
             (r.status, r.json().get("prompt")), (202, "Code:"))
        if r.status == 202:
            r2, dt = timed(lambda: step(auth, r.json()["continuation"], totp()))
            C.eq("... and refused after the right code (401, generic)", (r2.status, r2.json()),
                 (401, FAIL_BODY))
            C.check("... after the failure delay", dt >= 0.95, dt)
    finally:
        C.eq("requisite + prompt: clean exit", auth.stop(), 0)


def check_test_module():
    mod = test_module()
    ask = "auth required %s [ask=noecho:Code %d: :c%d]\n"
    five = "".join(ask % (mod, i, i) for i in range(1, 6))
    w = signin.World(auth_last=five)
    auth = w.start()
    try:
        r = signin.Client(auth).post("/api/login",
                                     {"email": "alice@example.test", "password": "wonderland"})
        seen = []
        for i in range(1, 7):
            if r.status != 202:
                break
            seen.append(r.json()["prompt"])
            r = step(auth, r.json()["continuation"], "c%d" % i)
        C.eq("five questions: the first four are asked", seen,
             ["Code %d: " % i for i in range(1, 5)])
        C.eq("... and the fifth ends the sign-in (401)", (r.status, r.json()), (401, FAIL_BODY))
    finally:
        C.eq("rounds: clean exit", auth.stop(), 0)

    for times, pad in ((3, 100), (10, 600)):
        w = signin.World(auth_last="auth required %s [ask=echo:Your PIN: :4242] "
                         "[info=Welcome back] [error=Token\x1b[1m \x7fslow] times=%d pad=%d\n"
                         % (mod, times, pad))
        auth = w.start()
        try:
            r = signin.Client(auth).post("/api/login", {"email": "alice@example.test",
                                                        "password": "wonderland"})
            if not C.check("messages (%d of %d bytes each): 202" % (2 * times, pad + 15),
                           r.status == 202, r.body):
                continue
            q = r.json()
            msgs = q["messages"]
            C.eq("an echo-on question: echo true", (q["prompt"], q["echo"]),
                 ("Your PIN: ", True))
            if times == 3:
                C.eq("messages: in the order PAM showed them", [m["kind"] for m in msgs],
                     ["info", "error"] * 3)
                C.check("messages: texts as shown, control characters made '?'",
                        msgs[0]["text"].startswith("Welcome back") and
                        msgs[1]["text"].startswith("Token?[1m ?slow"), msgs[:2])
            else:
                C.check("messages: capped (at most 8, 1024 bytes in all)",
                        1 <= len(msgs) <= 8 and
                        sum(len(m["text"].encode()) for m in msgs) <= 1024, len(msgs))
                C.check("messages: each at most 512 bytes",
                        all(len(m["text"].encode()) <= 512 for m in msgs),
                        [len(m["text"]) for m in msgs])
            C.check("messages: no control characters",
                    not any(re.search(r"[\x00-\x08\x0b-\x1f\x7f]", m["text"]) for m in msgs),
                    msgs)
            r2 = step(auth, q["continuation"], "4242")
            C.eq("the PIN: 200", r2.status, 200, r2.body)
        finally:
            C.eq("messages: clean exit", auth.stop(), 0)

    w = signin.World(extra_config="", auth_last="")
    path = os.path.join(w.pamdir, signin.SERVICE)
    with open(path) as f:
        stack = f.read()
    vephelp.write(path, stack + "account required %s expired_user=bob\n" % mod, 0o644)
    auth = w.start()
    try:
        r = signin.Client(auth).post("/api/login", {"email": "bob@example.test",
                                                    "password": signin.ACCOUNTS["bob"][0]})
        C.eq("expired password, the right one: 403 password_expired",
             (r.status, r.json().get("reason")), (403, "password_expired"))
        C.check("... in words that say what to do",
                "expired" in r.json().get("error", "") and
                "mail account" in r.json().get("error", ""), r.body)
        C.check("... and no session", r.header("Set-Cookie") is None, r.headers)
        r = signin.Client(auth).post("/api/login", {"email": "bob@example.test",
                                                    "password": "wrong"})
        C.eq("expired account, wrong password: the generic 401", (r.status, r.json()),
             (401, FAIL_BODY))
    finally:
        C.eq("expired: clean exit", auth.stop(), 0)


def check_waiting_cap():
    """A loop lets half its share of PAM workers wait for users; beyond,
    a question is not asked (503, Retry-After): the other half stays free
    for passwords."""
    mod = test_module()
    w = signin.World(extra_config="workers = 1\npam_workers = 4\n",
                     auth_last="auth required %s [ask=noecho:Code: :1234]\n" % mod)
    auth = w.start()
    try:
        firsts = [signin.Client(auth).post("/api/login", {"email": "alice@example.test",
                                                          "password": "wonderland"})
                  for _ in range(3)]
        C.eq("cap: two conversations wait (half of 4 workers), the third is not asked",
             [r.status for r in firsts], [202, 202, 503])
        C.check("... with Retry-After", firsts[2].header("Retry-After") is not None,
                firsts[2].headers)
        C.eq("cap: the third still had a worker (PAM ran; it stopped at the question)",
             len(w.attempts("alice")), 3)
        r = step(auth, firsts[0].json()["continuation"], "1234")
        C.eq("cap: a waiting one answered: signed in", r.status, 200)
        r = signin.Client(auth).post("/api/login", {"email": "alice@example.test",
                                                    "password": "wonderland"})
        C.eq("cap: a place is free again (202)", r.status, 202)
    finally:
        C.eq("cap: clean exit", auth.stop(), 0)


def check_config_limits():
    """The new keys' limits, refused by --check with the key's name."""
    w = signin.World()
    with open(w.config) as f:
        text = f.read()
    for value, why in (("pam_answer_timeout = 9", "from 10 to 600"),
                       ("pam_answer_timeout = 601", "from 10 to 600"),
                       ("second_factor_prompt = " + "x" * 201, "1 to 200 bytes"),
                       ("second_factor_prompt = Code\x07:", "control characters")):
        conf = vephelp.write(os.path.join(w.tmp, "limits.conf"), value + "\n" + text)
        rc, out, err = vephelp.run(["--config", conf, "--check"], env=w.env())
        C.check("refused: %s (%s)" % (value[:40].replace("\x07", "\\x07"), why),
                rc == 2 and why in err and value.split(" ")[0] in err, (rc, err))
    conf = vephelp.write(os.path.join(w.tmp, "limits.conf"),
                         "pam_answer_timeout = 600\nsecond_factor_prompt = " + "x" * 200 +
                         "\n" + text)
    rc, out, err = vephelp.run(["--config", conf, "--check"], env=w.env())
    C.eq("the largest values: accepted", (rc, out.strip()), (0, "configuration OK"), err)


def main():
    if signin.libdir() is None:
        vephelp.skip("libpam-wrapper is not installed")
    if not os.path.exists(OATH):
        C.check("pam_oath installed (Debian libpam-oath)", False)
        return C.finish()
    C.group(check_oath)
    C.group(check_requisite)
    C.group(check_test_module)
    C.group(check_waiting_cap)
    C.group(check_config_limits)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
