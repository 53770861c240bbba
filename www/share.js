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
 */
(() => {
  'use strict';
  const { $, message, setBusy } = window.vepUI;
  let requester = null;   /* {source, origin, email} */

  function step(id) {
    for (const x of ['waiting', 'signin-step', 'confirm-step', 'error-step']) $(x).hidden = x !== id;
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
    step('confirm-step');
  }

  /* Signed in as the address asked for (or any, when none was asked)? */
  async function start() {
    const s = await window.vep.session();
    const want = requester.email;
    /* Domains compare case-insensitively; local parts exactly. */
    const norm = want.trim().replace(/@[^@]*$/, (d) => d.toLowerCase());
    if (s && (!want || s.email === norm)) {
      await window.vep.provision();
      confirmStep(s.email);
      return;
    }
    $('email').value = want || '';
    step('signin-step');
    (want ? $('password') : $('email')).focus();
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
    window.vepUI.bindSignIn($('signin'), async (s) => {
      await window.vep.provision();
      confirmStep(s.email);
    });
    const share = $('share');
    share.addEventListener('click', async () => {
      setBusy(share, true, 'Signing…');
      let assertion;
      try {
        assertion = await window.vep.getAssertion(requester.origin);
      } catch (err) {
        setBusy(share, false);
        $('confirm-error').textContent = message(err);
        return;
      }
      reply({ type: 'vep:assertion', assertion });
      window.close();
    });
    $('cancel').addEventListener('click', () => {
      reply({ type: 'vep:cancel' });
      window.close();
    });
    window.opener.postMessage({ type: 'vep:ready' }, '*');
  });
})();
