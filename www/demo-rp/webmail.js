/*
 * webmail.js - the demo webmail: after its own login it provisions the
 * browser through the authority's hidden /embed page, which is the snippet
 * the README shows for real webmails. Like any webmail it loads nothing
 * from the authority but that frame. When the domain's PAM asks more than
 * the password (a one-time code), the frame says "vep:challenge" and the
 * webmail asks the user in its own form, answering "vep:answer".
 */
(() => {
  'use strict';
  const authority = document.querySelector('meta[name=vep-authority]').content;

  /* Frames the authority's /embed, hands it the credentials the user just
   * typed, and resolves with {email, expires}. ask(challenge) is called
   * for each further question and resolves with the user's answer. */
  function provisionBrowser(email, password, ask) {
    return new Promise((resolve, reject) => {
      const frame = document.createElement('iframe');
      frame.hidden = true;
      frame.title = 'identity';
      frame.src = authority + '/embed?origin=' + encodeURIComponent(location.origin);
      function onMessage(ev) {
        if (ev.origin !== authority || ev.source !== frame.contentWindow || !ev.data) return;
        if (ev.data.type === 'vep:ready') {
          frame.contentWindow.postMessage({ type: 'vep:provision', email, password }, authority);
          return;
        }
        if (ev.data.type === 'vep:challenge') {
          ask(ev.data).then((answer) => {
            frame.contentWindow.postMessage({ type: 'vep:answer', answer }, authority);
          });
          return;
        }
        window.removeEventListener('message', onMessage);
        frame.remove();
        if (ev.data.type === 'vep:provisioned') resolve(ev.data);
        else reject(Object.assign(new Error(ev.data.error || 'provisioning failed'), ev.data));
      }
      window.addEventListener('message', onMessage);
      document.body.appendChild(frame);
    });
  }

  document.addEventListener('DOMContentLoaded', () => {
    const $ = (id) => document.getElementById(id);
    const [form, go, error, email, password, status, login, inbox, code] =
      ['form', 'go', 'error', 'email', 'password', 'status', 'login', 'inbox', 'code'].map($);
    const first = [email, password].map((i) => i.closest('.field'));
    let answered = null;   /* resolves the question shown */

    /* PAM's question in this form: its notes and prompt as text. */
    function ask(c) {
      for (const f of first) f.hidden = true;
      $('code-notes').textContent = '';
      for (const m of c.messages || []) {
        $('code-notes').appendChild(Object.assign(document.createElement('p'),
          { className: 'note ' + (m.kind === 'error' ? 'error' : 'info'), textContent: m.text }));
      }
      $('code-label').textContent = String(c.prompt || '').trim() || 'Your answer';
      code.type = c.echo ? 'text' : 'password';
      code.value = '';
      $('code-step').hidden = false;
      go.textContent = 'Continue';
      go.disabled = false;
      code.focus();
      return new Promise((resolve) => { answered = resolve; });
    }

    function backToLogin() {
      answered = null;
      $('code-step').hidden = true;
      for (const f of first) f.hidden = false;
      go.textContent = 'Log in';
      password.value = '';
    }

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (answered) {
        if (!code.value) { error.textContent = 'Enter your answer.'; code.focus(); return; }
        const a = answered;
        answered = null;
        go.disabled = true;
        error.textContent = '';
        a(code.value);
        code.value = '';
        return;
      }
      go.disabled = true;
      error.textContent = '';
      // A real webmail checks the password itself first; the demo lets
      // the authority do it.
      let id;
      try {
        id = await provisionBrowser(email.value, password.value, ask);
      } catch (e) {
        backToLogin();
        error.textContent = e.status === 401 && !e.reason ? 'Wrong email address or password.'
          : 'Could not set up this browser: ' + e.message.replace(/\.$/, '') + '.';
        go.disabled = false;
        password.focus();
        return;
      }
      backToLogin();
      status.textContent = 'This browser can now sign in to websites as ' + id.email +
        ' (certificate valid until ' + new Date(id.expires).toLocaleTimeString() + ').';
      login.hidden = true;
      inbox.hidden = false;
      go.disabled = false;
    });
  });
})();
