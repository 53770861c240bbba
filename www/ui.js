/*
 * ui.js - what the authority's pages share: the one DOM helper ($), the
 * sign-in form's behaviour (busy state, errors next to the form, the code
 * step when the domain's PAM asks more than the password) and wording for
 * errors and times. Needs vep.js (whose vep.api is the one
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

  /* A sign-in request's error as a sentence. A wrong code reads exactly
   * as a wrong password (the server answers both the same: no oracle). */
  function signInMessage(err) {
    if (err.status === 401 && err.reason === 'restart') return err.message;
    if (err.status === 401) return 'Wrong email address or password.';
    if (err.status === 403 && err.reason === 'password_expired') return err.message;
    return message(err);
  }

  /* Sets a button's resting label (setBusy puts it back). */
  function setLabel(button, text) {
    button.dataset.label = text;
    if (button.getAttribute('aria-busy') !== 'true') button.textContent = text;
  }

  /* The code step, made once per form and put after the password field:
   * "signing in as", PAM's notes, the question as the answer's label, a
   * hint with the time left, and a way back to the password. */
  function makeCodeStep(form, passwordField) {
    const base = (form.id || 'signin') + '-answer';
    const el = (tag, cls, text) => {
      const e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text) e.textContent = text;
      return e;
    };
    const step = el('div', 'code-step');
    step.hidden = true;
    const who = el('p', 'signing-as muted');
    const whoText = el('span', '', 'Signing in as ');
    const whoEmail = el('strong');
    whoText.appendChild(whoEmail);
    const again = el('button', 'link', 'Start over');
    again.type = 'button';
    who.append(whoText, again);
    const notes = el('div', 'notes');
    notes.id = base + '-notes';
    const field = el('div', 'field');
    const label = el('label');
    label.htmlFor = base;
    const input = el('input');
    input.id = base;
    input.name = 'answer';
    input.autocomplete = 'one-time-code';
    input.setAttribute('autocapitalize', 'off');
    input.spellcheck = false;
    input.required = true;
    const hint = el('p', 'hint muted');
    hint.id = base + '-hint';
    field.append(label, input, hint);
    step.append(who, notes, field);
    passwordField.after(step);
    return { step, whoEmail, again, notes, label, input, hint };
  }

  /* Wires a sign-in form: #email, #password, a submit button and an
   * .alert.error box inside form. onSignedIn(session) runs after success
   * (and may return a promise, during which the form stays busy).
   *
   * When the domain's PAM asks more than the password (a one-time code),
   * the email and password fields give way to a code step in the same
   * form: PAM's question as the label of a fresh input (type password
   * unless PAM lets the answer be seen), PAM's notes above it, the button
   * saying "Continue"; each further question replaces it. A wrong answer
   * reads "Wrong email address or password." and goes back to the
   * password, as does a sign-in that timed out (with the server's text).
   * Returns {reset()}: back to the email and password (the address kept). */
  function bindSignIn(form, onSignedIn, busyLabel) {
    const email = form.querySelector('input[type=email]');
    const password = form.querySelector('input[type=password]');
    const button = form.querySelector('button[type=submit]');
    const box = form.querySelector('.alert.error');
    const firstFields = [email, password].map((i) => i.closest('.field') || i);
    const firstLabel = button.dataset.label || button.textContent;
    let code = null;         /* the code step's elements, once made */
    let pending = null;      /* the continuation of the question shown */

    const inCodeStep = () => code !== null && !code.step.hidden;

    /* Back to the email and password; text (optional) in the alert. */
    function reset(text, invalid) {
      pending = null;
      if (code) {
        code.step.hidden = true;
        code.input.value = '';
      }
      for (const f of firstFields) f.hidden = false;
      setLabel(button, firstLabel);
      password.value = '';
      showError(box, '', [email, password]);
      if (text) showError(box, text, invalid ? [email, password] : []);
    }

    function showChallenge(r, who) {
      const c = r.challenge;
      if (!code) {
        code = makeCodeStep(form, firstFields[1]);
        code.again.addEventListener('click', () => {
          reset();
          password.focus();
        });
      }
      pending = r.continuation;
      for (const f of firstFields) f.hidden = true;
      if (who !== undefined) code.whoEmail.textContent = who;
      code.notes.textContent = '';
      for (const m of c.messages) {
        code.notes.appendChild(Object.assign(document.createElement('p'),
          { className: 'note ' + (m.kind === 'error' ? 'error' : 'info'), textContent: m.text }));
      }
      code.label.textContent = c.prompt.trim() || 'Your answer';
      code.input.type = c.echo ? 'text' : 'password';
      code.input.value = '';
      code.input.removeAttribute('aria-invalid');
      code.hint.textContent = c.expiresIn ? 'Answer within ' + waitText(c.expiresIn) + '.' : '';
      code.input.setAttribute('aria-describedby',
        [c.messages.length ? code.notes.id : '', c.expiresIn ? code.hint.id : '']
          .filter(Boolean).join(' '));
      if (!code.input.getAttribute('aria-describedby')) code.input.removeAttribute('aria-describedby');
      code.step.hidden = false;
      showError(box, '');
      setLabel(button, 'Continue');
      code.input.focus();
    }

    /* Signed in: the page goes on (the code step, if any, stays on screen
     * while it does; reset() when the form is shown again). */
    async function signedIn(s) {
      pending = null;
      setBusy(button, true, busyLabel || 'Setting up this browser…');
      try {
        await onSignedIn(s);
      } catch (err) {
        setBusy(button, false);
        reset(message(err));
        password.focus();
        return;
      }
      setBusy(button, false);
    }

    async function answer() {
      if (!code.input.value) {
        showError(box, 'Enter your answer to continue.', [code.input]);
        code.input.focus();
        return;
      }
      showError(box, '', [code.input]);
      setBusy(button, true, 'Checking…');
      let r;
      try {
        r = await window.vep.signInContinue(pending, code.input.value);
      } catch (err) {
        setBusy(button, false);
        if (err.status === 401 || err.status === 403) {
          // A wrong answer, a timed-out sign-in, an expired password:
          // back to the start, the address kept.
          reset(signInMessage(err), err.status === 401 && err.reason !== 'restart');
          password.focus();
          return;
        }
        // Unreachable, throttled, unavailable: the question may still be
        // answered (if not, the server says to start again).
        code.input.value = '';
        showError(box, signInMessage(err));
        code.input.focus();
        return;
      }
      code.input.value = '';
      setBusy(button, false);
      if (r.challenge) showChallenge(r);
      else await signedIn(r);
    }

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (button.disabled) return;
      if (inCodeStep()) {
        if (pending) await answer();
        else { reset(); password.focus(); }  /* signed in already: start again */
        return;
      }
      if (!email.value || !password.value) {
        const missing = email.value ? password : email;
        showError(box, 'Enter your email address and password.', [missing]);
        missing.focus();
        return;
      }
      showError(box, '', [email, password]);
      setBusy(button, true, 'Checking…');
      let r;
      try {
        r = await window.vep.signIn(email.value.trim(), password.value);
      } catch (err) {
        setBusy(button, false);
        showError(box, signInMessage(err), err.status === 401 ? [email, password] : []);
        password.value = '';
        password.focus();
        return;
      }
      password.value = '';
      if (r.challenge) {
        setBusy(button, false);
        showChallenge(r, email.value.trim());
        return;
      }
      await signedIn(r);
    });
    // Back from another page (the back/forward cache keeps this one as it
    // was): a question answered already cannot be answered again.
    window.addEventListener('pageshow', (ev) => {
      if (ev.persisted && inCodeStep()) reset();
    });
    return { reset };
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
