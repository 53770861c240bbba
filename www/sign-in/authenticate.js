/*
 * authenticate.js - the legacy BrowserID authentication page (the support
 * document's "authentication"): beginAuthentication(cb(email)) prefills the
 * address; a successful sign-in ends with completeAuthentication(), Cancel
 * with raiseAuthenticationFailure("user canceled"). Without a user agent
 * it is a plain sign-in page. When the domain's PAM asks more than the
 * password (a one-time code), ui.js's form shows the code step first.
 */
(() => {
  'use strict';
  const { $ } = window.vepUI;

  document.addEventListener('DOMContentLoaded', () => {
    const id = navigator.id;
    const email = $('email');
    const legacy = id && typeof id.beginAuthentication === 'function';
    const given = new URLSearchParams(location.search).get('email');
    if (given) email.value = given;
    if (legacy) {
      id.beginAuthentication((e) => {
        if (e) email.value = e;
        $('password').focus();
      });
    }
    window.vepUI.bindSignIn($('signin'), async () => {
      if (legacy) { id.completeAuthentication(); return; }
      await window.vep.provision();
      location.assign('/account');
    });
    $('cancel').addEventListener('click', () => {
      if (legacy) id.raiseAuthenticationFailure('user canceled');
      else location.assign('/');
    });
  });
})();
