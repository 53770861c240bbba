/*
 * rp.js - sign-in with an email address for any website, as window.vepRP.
 *
 *   <script src="https://id.example.com/rp.js"></script>
 *   vepRP.request({email: "alice@example.com"}).then(function (assertion) {
 *     // POST assertion to your server, which verifies it (audience: your
 *     // origin) with any BrowserID verifier.
 *   });
 *
 * Finds the email domain's authority from its support document
 * (https://DOMAIN/.well-known/browserid, following "authority"
 * delegation), or takes opts.authority ("https://id.example.com") when
 * given. Opens the authority's /share page in a first-party popup, which
 * signs the user in if needed, asks them to confirm, and answers with a
 * backed assertion whose audience is this page's origin as the browser
 * reports it. Call it from a click (popups need a user gesture).
 *
 * Rejects with an Error whose .code is "cancelled", "closed", "popup",
 * "discovery" or "input".
 */
(function () {
  'use strict';
  var MAX_DELEGATIONS = 6;

  function err(code, message) {
    var e = new Error(message);
    e.code = code;
    return e;
  }

  function originOf(url) {
    var u = new URL(url);
    return u.protocol + '//' + u.host;
  }

  /* The authority's origin for domain, following delegation. */
  function discover(domain, hops) {
    return fetch('https://' + domain + '/.well-known/browserid', {
      credentials: 'omit', redirect: 'error', cache: 'no-cache'
    }).then(function (res) {
      if (!res.ok) throw err('discovery', domain + ' does not support sign-in with email');
      return res.json();
    }).then(function (doc) {
      if (doc.disabled) throw err('discovery', domain + ' has disabled sign-in with email');
      if (typeof doc.authority === 'string') {
        if (hops >= MAX_DELEGATIONS) throw err('discovery', 'too many delegations');
        return discover(doc.authority.toLowerCase(), hops + 1);
      }
      if (!doc['public-key']) throw err('discovery', domain + ' publishes no key');
      return 'https://' + domain;
    }, function (e) {
      throw e.code ? e : err('discovery', 'cannot find the identity service of ' + domain);
    });
  }

  function request(opts) {
    opts = opts || {};
    var email = typeof opts.email === 'string' ? opts.email.trim() : '';
    var at = email.lastIndexOf('@');
    if (at < 1 || at === email.length - 1) {
      return Promise.reject(err('input', 'an email address is required'));
    }
    // Open the window now, inside the click, and point it at the
    // authority once known: browsers block popups opened later.
    var w = window.open('about:blank', 'vep_share', 'popup,width=480,height=680');
    if (!w) return Promise.reject(err('popup', 'the browser blocked the sign-in window'));
    var found = opts.authority ? Promise.resolve(originOf(opts.authority))
      : discover(email.slice(at + 1).toLowerCase(), 0);
    return found.then(function (authority) {
      return new Promise(function (resolve, reject) {
        var timer = null;
        function done(fn, v) {
          window.removeEventListener('message', onMessage);
          clearInterval(timer);
          fn(v);
        }
        function onMessage(ev) {
          if (ev.source !== w || ev.origin !== authority || !ev.data) return;
          var m = ev.data;
          if (m.type === 'vep:ready') {
            w.postMessage({ type: 'vep:request', email: email }, authority);
          } else if (m.type === 'vep:assertion' && typeof m.assertion === 'string') {
            done(resolve, m.assertion);
          } else if (m.type === 'vep:cancel') {
            done(reject, err('cancelled', 'sign-in was cancelled'));
          } else if (m.type === 'vep:error') {
            done(reject, err('discovery', String(m.error || 'sign-in failed')));
          }
        }
        window.addEventListener('message', onMessage);
        timer = setInterval(function () {
          if (w.closed) done(reject, err('closed', 'the sign-in window was closed'));
        }, 300);
        w.location.href = authority + '/share';
      });
    }, function (e) {
      w.close();
      throw e;
    });
  }

  window.vepRP = Object.freeze({ request: request });
})();
