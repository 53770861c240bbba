/* sign-in.js - the page's side of signing in, the same for every example
 * server: rp.js (from the authority) asks the user and answers with an
 * assertion for this page's origin; this site's server verifies it. */
'use strict';
document.addEventListener('DOMContentLoaded', () => {
  const authority = document.querySelector('meta[name=vep-authority]').content;
  const form = document.getElementById('form');
  const result = document.getElementById('result');

  async function signIn(email) {
    // First thing in the click: browsers allow popups only there.
    const assertion = await window.vepRP.request({ email, authority });
    const res = await fetch('/sign-in', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ assertion }),
    });
    const answer = await res.json();
    if (!res.ok) throw new Error(answer.error);
    return answer.email;
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    result.textContent = '';
    signIn(document.getElementById('email').value).then(
      (email) => { result.textContent = 'Signed in as ' + email; },
      (e) => { result.textContent = 'Not signed in: ' + e.message; });
  });
});
