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
(function () {
  'use strict';
  var $ = function (id) { return document.getElementById(id); };
  var requester = null;   /* {source, origin, email} */

  function step(id) {
    ['waiting', 'signin-step', 'confirm-step', 'error-step'].forEach(function (x) {
      $(x).hidden = x !== id;
    });
    var h = $(id).querySelector('h1');
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
  function start() {
    return window.vep.session().then(function (s) {
      var want = requester.email;
      /* Domains compare case-insensitively; local parts exactly. */
      var norm = want.trim().replace(/@[^@]*$/, function (d) { return d.toLowerCase(); });
      if (s && (!want || s.email === norm)) {
        return window.vep.provision().then(function () { confirmStep(s.email); });
      }
      $('email').value = want || '';
      step('signin-step');
      (want ? $('password') : $('email')).focus();
      return null;
    });
  }

  function onRequest(ev) {
    if (requester || !ev.data || ev.data.type !== 'vep:request' || ev.source !== window.opener) return;
    if (!/^https?:\/\//.test(ev.origin)) return;  /* "null" and other opaque origins */
    requester = { source: ev.source, origin: ev.origin,
      email: typeof ev.data.email === 'string' ? ev.data.email : '' };
    document.querySelectorAll('[data-origin]').forEach(function (el) {
      el.textContent = ev.origin;
    });
    start().catch(function (err) { fail(window.vepUI.message(err)); });
  }

  document.addEventListener('DOMContentLoaded', function () {
    if (!window.opener) {
      fail('This page is opened by a website that wants you to sign in. Go back to that website and try again.');
      return;
    }
    window.addEventListener('message', onRequest);
    window.vepUI.bindSignIn($('signin'), function (s) {
      return window.vep.provision().then(function () { confirmStep(s.email); });
    });
    $('share').addEventListener('click', function () {
      var b = $('share');
      window.vepUI.setBusy(b, true, 'Signing…');
      window.vep.getAssertion(requester.origin).then(function (assertion) {
        reply({ type: 'vep:assertion', assertion: assertion });
        window.close();
      }, function (err) {
        window.vepUI.setBusy(b, false);
        $('confirm-error').textContent = window.vepUI.message(err);
      });
    });
    $('cancel').addEventListener('click', function () {
      reply({ type: 'vep:cancel' });
      window.close();
    });
    window.opener.postMessage({ type: 'vep:ready' }, '*');
  });
})();
