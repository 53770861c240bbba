/* account.js - the /account page: who you are, this browser's certificate,
 * sign out. */
(function () {
  'use strict';
  var $ = function (id) { return document.getElementById(id); };

  function show(id) {
    ['loading', 'signed-in', 'signed-out'].forEach(function (x) { $(x).hidden = x !== id; });
  }

  function render(s, ident) {
    $('email').textContent = s.email;
    $('session').textContent = 'ends ' + window.vepUI.time(s.expires) + ' if unused';
    $('cert').textContent = ident
      ? 'certified until ' + window.vepUI.time(ident.expires) + ' (renewed automatically)'
      : 'no certificate yet';
    show('signed-in');
  }

  function refresh() {
    return window.vep.session().then(function (s) {
      if (!s) { show('signed-out'); return null; }
      // Make sure this browser holds a valid certificate (renews if due).
      return window.vep.provision().then(function (ident) { render(s, ident); },
        function (err) {
          render(s, null);
          $('error').textContent = window.vepUI.message(err);
        });
    }, function (err) {
      show('signed-out');
      $('signed-out-text').textContent = window.vepUI.message(err);
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    $('signout').addEventListener('click', function () {
      var b = $('signout');
      window.vepUI.setBusy(b, true, 'Signing out…');
      window.vep.signOut().then(function () {
        window.vepUI.setBusy(b, false);
        $('signed-out-text').textContent = 'You have signed out. This browser no longer holds a key for your address.';
        show('signed-out');
      }, function (err) {
        window.vepUI.setBusy(b, false);
        $('error').textContent = window.vepUI.message(err);
      });
    });
    refresh();
  });
})();
