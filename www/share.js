/*
 * share.js - the /share popup a website opens through rp.js.
 *
 * Protocol (window.postMessage between the website and this window):
 *   this  -> opener  {type: "vep:ready"}                 (to any origin: carries nothing)
 *   opener -> this   {type: "vep:request", email}
 *   this  -> opener  {type: "vep:assertion", assertion}  (to the requester's origin only)
 *                    {type: "vep:cancel"} / {type: "vep:error", error}
 * The assertion's audience is event.origin of the request: the browser
 * says who is asking, so a site can never obtain an assertion for another.
 * It is for the address asked, never another: signed in as someone else,
 * the page says so and offers to sign in as the address asked. Signing in
 * may take a code step after the password (ui.js's bindSignIn), which
 * stays inside this window: the website learns nothing of it.
 */
(() => {
  'use strict';
  const { $, message, setBusy, showError } = window.vepUI;
  let requester = null;   /* {source, origin, email} */
  let form = null;        /* ui.js's sign-in form: {reset()} */

  function step(id) {
    for (const x of ['waiting', 'signin-step', 'other-step', 'confirm-step', 'error-step']) {
      $(x).hidden = x !== id;
    }
    const h = $(id).querySelector('h1');
    if (h) { h.setAttribute('tabindex', '-1'); h.focus(); }
  }

  function fail(text) {
    $('error-text').textContent = text;
    step('error-step');
  }

  function reply(msg) {
    requester.source.postMessage(msg, requester.origin);
  }

  function confirmStep(email) {
    $('confirm-email').textContent = email;
    $('confirm-error').textContent = '';
    step('confirm-step');
  }

  /* Is email the address asked for (any, when none was asked)? Domains
   * compare case-insensitively, local parts exactly: rp.js refuses an
   * assertion for any other address. */
  function asked(email) {
    const want = requester.email.trim().replace(/@[^@]*$/, (d) => d.toLowerCase());
    return !want || email === want;
  }

  /* The sign-in step; notice (optional) says why in its alert. */
  function signInStep(notice) {
    const want = requester.email.trim();
    form.reset();   /* from a code step answered earlier, too */
    $('email').value = want;
    showError($('signin').querySelector('.alert.error'), notice || '');
    step('signin-step');
    (want ? $('password') : $('email')).focus();
  }

  /* Signed in as someone else than the website asked for: say so, and
   * offer to sign in as the address asked (or to cancel). */
  function otherStep(email) {
    $('other-want').textContent = requester.email.trim();
    $('other-have').textContent = email;
    step('other-step');
  }

  /* Signed in, as whom: on to confirming, or to the mismatch. */
  async function signedIn(s) {
    if (!asked(s.email)) {
      otherStep(s.email);
      return;
    }
    await window.vep.provision();
    confirmStep(s.email);
  }

  async function start() {
    const s = await window.vep.session();
    if (s) await signedIn(s);
    else signInStep();
  }

  function cancel() {
    reply({ type: 'vep:cancel' });
    window.close();
  }

  function onRequest(ev) {
    if (requester || !ev.data || ev.data.type !== 'vep:request' || ev.source !== window.opener) return;
    if (!/^https?:\/\//.test(ev.origin)) return;  /* "null" and other opaque origins */
    requester = { source: ev.source, origin: ev.origin,
      email: typeof ev.data.email === 'string' ? ev.data.email : '' };
    for (const el of document.querySelectorAll('[data-origin]')) el.textContent = ev.origin;
    start().catch((err) => { fail(message(err)); });
  }

  document.addEventListener('DOMContentLoaded', () => {
    if (!window.opener) {
      fail('This page is opened by a website that wants you to sign in. Go back to that website and try again.');
      return;
    }
    window.addEventListener('message', onRequest);
    form = window.vepUI.bindSignIn($('signin'), signedIn);
    const share = $('share');
    share.addEventListener('click', async () => {
      setBusy(share, true, 'Signing…');
      let assertion;
      try {
        assertion = await window.vep.getAssertion(requester.origin);
      } catch (err) {
        setBusy(share, false);
        // 401: the session ended while this page waited (vep.js had to
        // renew the certificate, after a key rotation or near its expiry,
        // and could not): back to signing in, saying so.
        if (err.status === 401) {
          signInStep(message(err));
          return;
        }
        $('confirm-error').textContent = message(err);
        return;
      }
      reply({ type: 'vep:assertion', assertion });
      window.close();
    });
    $('cancel').addEventListener('click', cancel);
    $('other-cancel').addEventListener('click', cancel);
    $('other-signin').addEventListener('click', () => signInStep());
    window.opener.postMessage({ type: 'vep:ready' }, '*');
  });
})();
