/* A test user agent's authentication shim: navigator.id for the IdP's
 * authentication page; the outcome is left in window.__auth. */
(function () {
  'use strict';
  navigator.id = {
    beginAuthentication: function (cb) {
      cb(new URLSearchParams(location.search).get('email'));
    },
    completeAuthentication: function () { window.__auth = 'complete'; },
    raiseAuthenticationFailure: function (reason) { window.__auth = 'failure: ' + reason; }
  };
})();
