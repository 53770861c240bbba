/*
 * webmail.js - the demo webmail: after its own login it provisions the
 * browser through the authority's hidden /embed page, which is the snippet
 * the README shows for real webmails. Like any webmail it loads nothing
 * from the authority but that frame.
 */
(() => {
  'use strict';
  const authority = document.querySelector('meta[name=vep-authority]').content;

  /* Frames the authority's /embed, hands it the credentials the user just
   * typed, and resolves with {email, expires}. */
  function provisionBrowser(email, password) {
    return new Promise((resolve, reject) => {
      const frame = document.createElement('iframe');
      frame.hidden = true;
      frame.title = 'identity';
      frame.src = authority + '/embed?origin=' + encodeURIComponent(location.origin);
      function onMessage(ev) {
        if (ev.origin !== authority || ev.source !== frame.contentWindow) return;
        if (ev.data.type === 'vep:ready') {
          frame.contentWindow.postMessage({ type: 'vep:provision', email, password }, authority);
          return;
        }
        window.removeEventListener('message', onMessage);
        frame.remove();
        if (ev.data.type === 'vep:provisioned') resolve(ev.data);
        else reject(new Error(ev.data.error || 'provisioning failed'));
      }
      window.addEventListener('message', onMessage);
      document.body.appendChild(frame);
    });
  }

  document.addEventListener('DOMContentLoaded', () => {
    const [form, go, error, email, password, status, login, inbox] =
      ['form', 'go', 'error', 'email', 'password', 'status', 'login', 'inbox']
        .map((id) => document.getElementById(id));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      go.disabled = true;
      error.textContent = '';
      // A real webmail checks the password itself first; the demo lets
      // the authority do it.
      let id;
      try {
        id = await provisionBrowser(email.value, password.value);
      } catch (e) {
        error.textContent = 'Could not set up this browser: ' + e.message + '.';
        go.disabled = false;
        return;
      }
      status.textContent = 'This browser can now sign in to websites as ' + id.email +
        ' (certificate valid until ' + new Date(id.expires).toLocaleTimeString() + ').';
      login.hidden = true;
      inbox.hidden = false;
      go.disabled = false;
    });
  });
})();
