/*
 * embed.js - /embed, the hidden page a webmail frames to set up this
 * browser right after its own login:
 *
 *   <iframe src="https://id.example.com/embed?origin=https://mail.example.com" hidden></iframe>
 *   this   -> parent {type: "vep:ready"}
 *   parent -> this   {type: "vep:provision", email, password}
 *   this   -> parent {type: "vep:provisioned", email, expires}
 *                    or {type: "vep:error", error, status, reason}
 *
 * The password is optional: without it the page uses the authority session
 * the browser already has. When the domain's PAM asks more than the
 * password (a one-time code...), the page asks the parent instead of
 * answering at once, as many times as PAM asks:
 *
 *   this   -> parent {type: "vep:challenge", prompt, echo, messages, expiresIn}
 *   parent -> this   {type: "vep:answer", answer}
 *
 * prompt is PAM's question, echo false a secret (ask with a password
 * input), messages PAM's notes [{kind: "info"|"error", text}] (plain text:
 * never insert them as HTML), expiresIn the seconds left to answer. The
 * sign-in's continuation never leaves this page. A "vep:provision" while a
 * question waits starts over. vep:error's reason is the server's, or "":
 * a wrong answer is status 401 like a wrong password; "restart" (401): the
 * question timed out or no question waits, start again from vep:provision;
 * "password_expired" (403): error says what to do.
 *
 * Messages are only taken from, and answers only sent to, ?origin=, which
 * must be one of the webmails the authority is configured to trust
 * (embed_origins). The server writes that list into the page (meta
 * vep-embed-origins) and into the Content-Security-Policy's
 * frame-ancestors, so the page and the browser enforce the same list; no
 * origin is ever guessed from host names.
 */
(() => {
  'use strict';

  const meta = document.querySelector('meta[name=vep-embed-origins]');
  const allowed = meta ? meta.content.split(' ').filter(Boolean) : [];
  const parentOrigin = new URLSearchParams(location.search).get('origin') || '';
  if (window.parent === window) return;
  if (!allowed.includes(parentOrigin)) {
    /* For the webmail's developer; nothing is sent to the framing page. */
    console.error('vep /embed: ' + JSON.stringify(parentOrigin) +
      ' is not among the authority\'s embed_origins');
    return;
  }

  const answer = (msg) => { window.parent.postMessage(msg, parentOrigin); };
  const fail = (err) => {
    answer({ type: 'vep:error', error: err.message, status: err.status || 0,
      reason: err.reason || '' });
  };

  /* The continuation of the question the parent was asked, or null. */
  let pending = null;
  /* Counts "vep:provision"s: an answer for an older one is dropped. */
  let round = 0;

  /* A sign-in step's outcome: ask the parent the next question, or
   * provision and say so. */
  async function went(r, mine) {
    if (mine !== round) return;
    if (r && r.challenge) {
      pending = r.continuation;
      const c = r.challenge;
      answer({ type: 'vep:challenge', prompt: c.prompt, echo: c.echo, messages: c.messages,
        expiresIn: c.expiresIn });
      return;
    }
    const id = await window.vep.provision();
    if (mine === round) answer({ type: 'vep:provisioned', email: id.email, expires: id.expires });
  }

  async function onProvision(d) {
    const mine = ++round;
    pending = null;
    try {
      let r = null;
      if (typeof d.password === 'string' && d.password !== '') {
        r = await window.vep.signIn(String(d.email || ''), d.password);
      }
      await went(r, mine);
    } catch (err) {
      if (mine === round) fail(err);
    }
  }

  async function onAnswer(d) {
    const mine = round;
    const continuation = pending;
    pending = null;
    if (continuation === null) {
      fail(window.vep.VepError('no sign-in is waiting for an answer: start again', 401, 0,
        'restart'));
      return;
    }
    try {
      await went(await window.vep.signInContinue(continuation,
        typeof d.answer === 'string' ? d.answer : String(d.answer ?? '')), mine);
    } catch (err) {
      if (mine === round) fail(err);
    }
  }

  window.addEventListener('message', (ev) => {
    if (ev.origin !== parentOrigin || ev.source !== window.parent || !ev.data) return;
    if (ev.data.type === 'vep:provision') onProvision(ev.data);
    else if (ev.data.type === 'vep:answer') onAnswer(ev.data);
  });
  answer({ type: 'vep:ready' });
})();
