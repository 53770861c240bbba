/* sign-in.js - the /sign-in page: sign in, provision this browser, go on. */
(function () {
  'use strict';

  /* Only a page of this origin: never an open redirect (ui.js). */
  function next() {
    var r = new URLSearchParams(location.search).get('return');
    return window.vepUI.sameOrigin(r, '/account');
  }

  document.addEventListener('DOMContentLoaded', function () {
    var form = document.getElementById('signin');
    var email = document.getElementById('email');
    var given = new URLSearchParams(location.search).get('email');
    if (given) {
      email.value = given;
      document.getElementById('password').focus();
    }
    window.vep.session().then(function (s) {
      if (s && !given) location.replace(next());
    }, function () { /* shown when the user submits */ });
    window.vepUI.bindSignIn(form, function () {
      return window.vep.provision().then(function () { location.assign(next()); });
    });
  });
})();
