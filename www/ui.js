/*
 * ui.js - what the authority's pages share: the one DOM helper ($), the
 * sign-in form's behaviour (busy state, errors next to the form) and
 * wording for errors and times. Needs vep.js (whose vep.api is the one
 * fetch helper). Exposes window.vepUI.
 */
(() => {
  'use strict';

  /* The element with this id. */
  const $ = (id) => document.getElementById(id);

  function waitText(seconds) {
    if (seconds >= 90) return Math.ceil(seconds / 60) + ' minutes';
    if (seconds > 1) return seconds + ' seconds';
    return 'a moment';
  }

  /* A sentence for a person, from a VepError. */
  function message(err) {
    switch (err && err.status) {
    case 0: return 'Cannot reach the sign-in service. Check your connection and try again.';
    // A 401 anywhere but the sign-in form's own request: the session
    // ended (signed out elsewhere, expired, or the server forgot it).
    case 401: return 'Your session has ended. Sign in again to continue.';
    case 429: return 'Too many failed attempts. Try again in ' + waitText(err.retryAfter) + '.';
    case 503: return 'The sign-in service is unavailable right now. Please try again in a moment.';
    default: return (err && err.message) ? err.message.charAt(0).toUpperCase() + err.message.slice(1) + '.'
      : 'Something went wrong.';
    }
  }

  const time = (ms) => new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

  function setBusy(button, busy, label) {
    if (!button.dataset.label) button.dataset.label = button.textContent;
    button.disabled = busy;
    button.setAttribute('aria-busy', busy ? 'true' : 'false');
    button.textContent = '';
    if (busy) {
      const s = document.createElement('span');
      s.className = 'spinner';
      s.setAttribute('aria-hidden', 'true');
      button.appendChild(s);
    }
    button.appendChild(document.createTextNode(busy ? label : button.dataset.label));
  }

  function showError(box, text, fields) {
    box.textContent = text || '';
    for (const f of fields || []) {
      if (text) f.setAttribute('aria-invalid', 'true');
      else f.removeAttribute('aria-invalid');
    }
  }

  /* Wires a sign-in form: #email, #password, a submit button and an
   * .alert.error box inside form. onSignedIn(session) runs after success
   * (and may return a promise, during which the form stays busy). */
  function bindSignIn(form, onSignedIn, busyLabel) {
    const email = form.querySelector('input[type=email]');
    const password = form.querySelector('input[type=password]');
    const button = form.querySelector('button[type=submit]');
    const box = form.querySelector('.alert.error');
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (!email.value || !password.value) {
        const missing = email.value ? password : email;
        showError(box, 'Enter your email address and password.', [missing]);
        missing.focus();
        return;
      }
      showError(box, '', [email, password]);
      setBusy(button, true, 'Checking…');
      let refused = false;   /* the sign-in request itself answered 401 */
      try {
        const s = await window.vep.signIn(email.value.trim(), password.value)
          .catch((err) => { refused = err.status === 401; throw err; });
        password.value = '';
        setBusy(button, true, busyLabel || 'Setting up this browser…');
        await onSignedIn(s);
      } catch (err) {
        setBusy(button, false);
        showError(box, refused ? 'Wrong email address or password.' : message(err),
          refused ? [email, password] : []);
        password.value = '';
        password.focus();
        return;
      }
      setBusy(button, false);
    });
  }

  /* Where a ?return= (or any other "go on to") parameter may send the
   * browser: an absolute URL on this page's own origin, else fallback.
   * The URL parser decides, as the navigation will: it strips tabs and
   * newlines and reads a backslash as "/" (so "/<TAB>/evil.example" is
   * "//evil.example", another host), which no pattern on the raw text
   * can follow. Only path and query are kept, joined to this origin, so
   * a path such as "//evil.example" stays a path here. */
  function sameOrigin(value, fallback) {
    if (typeof value !== 'string' || value === '') return fallback;
    let u;
    try { u = new URL(value, location.origin); } catch (e) { return fallback; }
    if (u.origin !== location.origin) return fallback;
    return location.origin + u.pathname + u.search;
  }

  document.addEventListener('DOMContentLoaded', () => {
    const d = $('domain');
    if (d) d.textContent = location.hostname;
  });

  window.vepUI = Object.freeze({
    $,
    message,
    time,
    setBusy,
    showError,
    bindSignIn,
    sameOrigin
  });
})();
