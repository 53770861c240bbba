/*
 * authenticate.js - the legacy BrowserID authentication page (the support
 * document's "authentication"): beginAuthentication(cb(email)) prefills the
 * address; a successful sign-in ends with completeAuthentication(), Cancel
 * with raiseAuthenticationFailure("user canceled"). Without a user agent
 * it is a plain sign-in page.
 */
(function () {
  'use strict';
  document.addEventListener('DOMContentLoaded', function () {
    var id = navigator.id;
    var email = document.getElementById('email');
    var legacy = id && typeof id.beginAuthentication === 'function';
    var given = new URLSearchParams(location.search).get('email');
    if (given) email.value = given;
    if (legacy) {
      id.beginAuthentication(function (e) {
        if (e) email.value = e;
        document.getElementById('password').focus();
      });
    }
    window.vepUI.bindSignIn(document.getElementById('signin'), function () {
      if (legacy) { id.completeAuthentication(); return null; }
      return window.vep.provision().then(function () { location.assign('/account'); });
    });
    document.getElementById('cancel').addEventListener('click', function () {
      if (legacy) id.raiseAuthenticationFailure('user canceled');
      else location.assign('/');
    });
  });
})();
