/* demo-rp.js - the demo relying party: get an assertion with rp.js, have
 * this site's server verify it. */
(function () {
  'use strict';
  var $ = function (id) { return document.getElementById(id); };
  var authority = document.querySelector('meta[name=vep-authority]').content;

  var messages = {
    cancelled: 'Sign-in was cancelled.',
    closed: 'The sign-in window was closed before you finished.',
    popup: 'Your browser blocked the sign-in window. Allow pop-ups for this site and try again.'
  };

  function verify(assertion) {
    return fetch('/verify', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ assertion: assertion })
    }).then(function (res) {
      return res.json().then(function (j) {
        if (!res.ok) throw new Error(j.error || 'verification failed');
        return j;
      });
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    var go = $('go');
    $('form').addEventListener('submit', function (ev) {
      ev.preventDefault();
      $('error').textContent = '';
      go.disabled = true;
      // The demo domain example.test is not in DNS: name its authority.
      window.vepRP.request({ email: $('email').value, authority: authority })
        .then(function (assertion) {
          window.lastAssertion = assertion;  /* for the browser tests */
          return verify(assertion);
        }).then(function (who) {
          $('who').textContent = who.email;
          $('issuer').textContent = who.issuer;
          $('audience').textContent = who.audience;
          $('signed-out').hidden = true;
          $('signed-in').hidden = false;
        }).catch(function (e) {
          $('error').textContent = messages[e.code] || e.message;
        }).then(function () { go.disabled = false; });
    });
    $('again').addEventListener('click', function () {
      $('signed-in').hidden = true;
      $('signed-out').hidden = false;
    });
  });
})();
