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
 * The authority's API is reached through vep.js (vep.session, vep.api).
 */
(() => {
  'use strict';
  const NOT_AUTHENTICATED = 'user is not authenticated as target user';

  function sameAddress(a, b) {
    const norm = (x) => String(x).trim().replace(/@[^@]*$/, (d) => d.toLowerCase());
    return norm(a) === norm(b);
  }

  /* The reason given to the user agent for a VepError. */
  const reason = (e) => (e.status === 401 ? NOT_AUTHENTICATED : e.message);

  /* Certifies the user agent's key (pubkey: its JSON text) for s.email. */
  async function certify(id, s, pubkey, certDuration) {
    const body = { pubkey, email: s.email };
    const d = Number(certDuration);
    if (d > 0) body.duration = Math.max(300, Math.floor(d));
    let res;
    try {
      res = await window.vep.api('POST', '/api/cert', body, s.csrf);
    } catch (e) {
      id.raiseProvisioningFailure(reason(e));
      return;
    }
    id.registerCertificate(res.cert);
  }

  document.addEventListener('DOMContentLoaded', () => {
    const id = navigator.id;
    if (!id || typeof id.beginProvisioning !== 'function') return; /* no user agent */
    id.beginProvisioning(async (email, certDuration) => {
      try {
        const s = await window.vep.session();
        if (!s || !sameAddress(s.email, email)) throw window.vep.VepError(NOT_AUTHENTICATED, 401);
        id.genKeyPair((pubkey) => certify(id, s, pubkey, certDuration));
      } catch (e) {
        id.raiseProvisioningFailure(reason(e));
      }
    });
  });
})();
