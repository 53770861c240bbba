/* demo-rp.js - the demo relying party: get an assertion with rp.js, have
 * this site's server verify it. The demo site stands for a website of its
 * own: from the authority it loads rp.js and nothing else (not ui.js). */
(() => {
  'use strict';
  const authority = document.querySelector('meta[name=vep-authority]').content;

  const messages = {
    cancelled: 'Sign-in was cancelled.',
    closed: 'The sign-in window was closed before you finished.',
    popup: 'Your browser blocked the sign-in window. Allow pop-ups for this site and try again.',
    unreachable: 'The sign-in service did not answer. Try again later.',
    wrong_email: 'You signed in with another address than the one you entered.'
  };

  async function verify(assertion) {
    const res = await fetch('/verify', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ assertion })
    });
    const j = await res.json();
    if (!res.ok) throw new Error(j.error || 'verification failed');
    return j;
  }

  document.addEventListener('DOMContentLoaded', () => {
    const [form, go, error, email, who, issuer, audience, signedOut, signedIn, again] =
      ['form', 'go', 'error', 'email', 'who', 'issuer', 'audience', 'signed-out', 'signed-in', 'again']
        .map((id) => document.getElementById(id));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      error.textContent = '';
      go.disabled = true;
      try {
        // The demo domain example.test is not in DNS: name its authority.
        const assertion = await window.vepRP.request({ email: email.value, authority });
        window.lastAssertion = assertion;  /* for the browser tests */
        const v = await verify(assertion);
        who.textContent = v.email;
        issuer.textContent = v.issuer;
        audience.textContent = v.audience;
        signedOut.hidden = true;
        signedIn.hidden = false;
      } catch (e) {
        error.textContent = messages[e.code] || e.message;
      }
      go.disabled = false;
    });
    again.addEventListener('click', () => {
      signedIn.hidden = true;
      signedOut.hidden = false;
    });
  });
})();
