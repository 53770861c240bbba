/*
 * embed.js - /embed, the hidden page a webmail of the same site frames to
 * set up this browser right after its own login:
 *
 *   <iframe src="https://id.example.com/embed?origin=https://mail.example.com" hidden></iframe>
 *   frame.contentWindow.postMessage({type: "vep:provision", email, password},
 *                                   "https://id.example.com");
 *   // answer: {type: "vep:provisioned", email, expires} or {type: "vep:error", error, status}
 *
 * The password is optional: without it the page uses the authority session
 * the browser already has. Messages are only taken from, and answers only
 * sent to, ?origin=, which must be this host's own site (https:// on the
 * domain or a subdomain; any port of the host when it is reached by
 * address). The Content-Security-Policy lets only those origins frame it.
 */
(function () {
  'use strict';

  function sameSite(origin) {
    var u;
    try { u = new URL(origin); } catch (e) { return false; }
    if (u.origin !== origin) return false;
    var host = location.hostname;
    if (/^(\d+\.\d+\.\d+\.\d+|localhost|\[[0-9a-f:.]+\])$/i.test(host)) {
      return u.hostname === host;
    }
    // The registrable part is what follows the authority's first label
    // (id.example.com -> example.com); the domain itself counts too.
    var site = host.split('.').length > 2 ? host.slice(host.indexOf('.') + 1) : host;
    return u.protocol === 'https:' && (u.hostname === site || u.hostname.endsWith('.' + site));
  }

  var parentOrigin = new URLSearchParams(location.search).get('origin') || '';
  if (!sameSite(parentOrigin) || window.parent === window) return;

  function answer(msg) { window.parent.postMessage(msg, parentOrigin); }

  window.addEventListener('message', function (ev) {
    if (ev.origin !== parentOrigin || ev.source !== window.parent || !ev.data ||
        ev.data.type !== 'vep:provision') return;
    var d = ev.data;
    var signedIn = typeof d.password === 'string' && d.password !== ''
      ? window.vep.signIn(String(d.email || ''), d.password) : Promise.resolve();
    signedIn.then(function () { return window.vep.provision(); }).then(function (id) {
      answer({ type: 'vep:provisioned', email: id.email, expires: id.expires });
    }, function (err) {
      answer({ type: 'vep:error', error: err.message, status: err.status || 0 });
    });
  });
  answer({ type: 'vep:ready' });
})();
