/*
 * A test user agent's provisioning shim (what login.persona.org served):
 * navigator.id for the IdP's provisioning page, talking to the test's
 * dialog page (the frame's parent) with postMessage.
 */
(function () {
  'use strict';
  var pending = null;
  var key = null;
  function toParent(m) { window.parent.postMessage(m, '*'); }
  function decimal(b64) {
    var bin = atob(b64.replace(/-/g, '+').replace(/_/g, '/'));
    var hex = '';
    for (var i = 0; i < bin.length; i++) hex += ('0' + bin.charCodeAt(i).toString(16)).slice(-2);
    return BigInt('0x' + hex).toString(10);
  }
  window.addEventListener('message', function (ev) {
    if (ev.source === window.parent && ev.data && ev.data.type === 'begin' && pending) {
      var cb = pending; pending = null;
      cb(ev.data.email, ev.data.duration);
    }
  });
  navigator.id = {
    beginProvisioning: function (cb) { pending = cb; toParent({ type: 'ready' }); },
    genKeyPair: function (cb) {
      crypto.subtle.generateKey({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048,
        publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign'])
        .then(function (pair) { return crypto.subtle.exportKey('jwk', pair.publicKey); })
        .then(function (jwk) {
          key = JSON.stringify({ algorithm: 'RS', n: decimal(jwk.n), e: decimal(jwk.e) });
          cb(key);
        });
    },
    registerCertificate: function (cert) { toParent({ type: 'cert', cert: cert, pubkey: key }); },
    raiseProvisioningFailure: function (reason) { toParent({ type: 'failure', reason: reason }); }
  };
})();
