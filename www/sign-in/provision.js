/*
 * provision.js - the legacy BrowserID provisioning page (the support
 * document's "provisioning"). A user agent that still implements
 * navigator.id loads it in a hidden iframe with its shim
 * (provisioning_api.js), and the page follows the protocol:
 *   beginProvisioning(cb(email, certDurationSeconds))
 *   -> the authority session must be for that address, else
 *      raiseProvisioningFailure("user is not authenticated as target user")
 *   -> genKeyPair(cb(publicKeyJSONText)) -> POST /api/cert
 *   -> registerCertificate(cert), or raiseProvisioningFailure(reason)
 */
(function () {
  'use strict';
  var NOT_AUTHENTICATED = 'user is not authenticated as target user';

  function json(method, path, body, csrf) {
    var h = { 'Content-Type': 'application/json' };
    if (csrf) h['X-CSRF-Token'] = csrf;
    return fetch(path, { method: method, credentials: 'same-origin', cache: 'no-store',
      headers: h, body: body ? JSON.stringify(body) : undefined })
      .then(function (res) {
        return res.json().catch(function () { return {}; }).then(function (j) {
          if (!res.ok) { var e = new Error(j.error || 'HTTP ' + res.status); e.status = res.status; throw e; }
          return j;
        });
      });
  }

  function sameAddress(a, b) {
    var norm = function (x) {
      return String(x).trim().replace(/@[^@]*$/, function (d) { return d.toLowerCase(); });
    };
    return norm(a) === norm(b);
  }

  document.addEventListener('DOMContentLoaded', function () {
    var id = navigator.id;
    if (!id || typeof id.beginProvisioning !== 'function') return; /* no user agent */
    id.beginProvisioning(function (email, certDuration) {
      json('GET', '/api/session').then(function (s) {
        if (!sameAddress(s.email, email)) throw Object.assign(new Error(NOT_AUTHENTICATED), { status: 401 });
        id.genKeyPair(function (pubkey) {
          var body = { pubkey: pubkey, email: s.email };
          var d = Number(certDuration);
          if (d > 0) body.duration = Math.max(300, Math.floor(d));
          json('POST', '/api/cert', body, s.csrf).then(function (res) {
            id.registerCertificate(res.cert);
          }, function (e) {
            id.raiseProvisioningFailure(e.status === 401 ? NOT_AUTHENTICATED : e.message);
          });
        });
      }).catch(function (e) {
        id.raiseProvisioningFailure(e.status === 401 ? NOT_AUTHENTICATED : e.message);
      });
    });
  });
})();
