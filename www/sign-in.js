/* sign-in.js - the /sign-in page: sign in (with the code step of ui.js when
 * the domain's PAM asks more than the password), provision this browser,
 * go on. */
(() => {
  'use strict';
  const { $ } = window.vepUI;

  /* Only a page of this origin: never an open redirect (ui.js). */
  function next() {
    const r = new URLSearchParams(location.search).get('return');
    return window.vepUI.sameOrigin(r, '/account');
  }

  /* Signed in already, and not asked to sign in as a given address: go on. */
  async function goOnIfSignedIn(given) {
    try {
      if (await window.vep.session() && !given) location.replace(next());
    } catch (e) { /* shown when the user submits */ }
  }

  document.addEventListener('DOMContentLoaded', () => {
    const given = new URLSearchParams(location.search).get('email');
    if (given) {
      $('email').value = given;
      $('password').focus();
    }
    goOnIfSignedIn(given);
    window.vepUI.bindSignIn($('signin'), async () => {
      await window.vep.provision();
      location.assign(next());
    });
  });
})();
