/*
 * rp.js - sign-in with an email address for any website, as window.vepRP.
 *
 *   <script src="https://id.example.com/rp.js"></script>
 *   vepRP.request({email: "alice@example.com"}).then((assertion) => {
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
(() => {
  'use strict';
  /* Delegations followed before giving up: VEP_MAX_DELEGATIONS of
   * libvep/support.h, Mozilla's verifier's maxDelegations. */
  const MAX_DELEGATIONS = 5;
  /* How long a closed popup's last message may still be on its way: the
   * popup posts its answer (or its cancel) and then closes itself, and
   * the browser may run our closed-window check before it delivers the
   * message posted just before. */
  const CLOSED_GRACE_MS = 1000;

  function err(code, message) {
    const e = new Error(message);
    e.code = code;
    return e;
  }

  function originOf(url) {
    const u = new URL(url);
    return u.protocol + '//' + u.host;
  }

  /* The authority's origin for domain, following delegation (hops: how
   * many were followed to get here). */
  async function discover(domain, hops) {
    let doc;
    try {
      const res = await fetch('https://' + domain + '/.well-known/browserid', {
        credentials: 'omit', redirect: 'error', cache: 'no-cache'
      });
      if (!res.ok) throw err('discovery', domain + ' does not support sign-in with email');
      doc = await res.json();
    } catch (e) {
      throw e.code ? e : err('discovery', 'cannot find the identity service of ' + domain);
    }
    if (doc.disabled) throw err('discovery', domain + ' has disabled sign-in with email');
    if (typeof doc.authority === 'string') {
      if (hops >= MAX_DELEGATIONS) throw err('discovery', 'too many delegations');
      return discover(doc.authority.toLowerCase(), hops + 1);
    }
    if (!doc['public-key']) throw err('discovery', domain + ' publishes no key');
    return 'https://' + domain;
  }

  /* Resolves with the assertion the authority's popup w (already at
   * authority + "/share") answers for email. */
  function answerOf(w, authority, email) {
    return new Promise((resolve, reject) => {
      let timer = null;
      let settled = false;
      function done(fn, v) {
        if (settled) return;
        settled = true;
        window.removeEventListener('message', onMessage);
        clearInterval(timer);
        fn(v);
      }
      function onMessage(ev) {
        if (ev.source !== w || ev.origin !== authority || !ev.data) return;
        const m = ev.data;
        if (m.type === 'vep:ready') {
          w.postMessage({ type: 'vep:request', email }, authority);
        } else if (m.type === 'vep:assertion' && typeof m.assertion === 'string') {
          done(resolve, m.assertion);
        } else if (m.type === 'vep:cancel') {
          done(reject, err('cancelled', 'sign-in was cancelled'));
        } else if (m.type === 'vep:error') {
          done(reject, err('discovery', String(m.error || 'sign-in failed')));
        }
      }
      window.addEventListener('message', onMessage);
      timer = setInterval(() => {
        if (!w.closed) return;
        clearInterval(timer);
        setTimeout(() => done(reject, err('closed', 'the sign-in window was closed')),
          CLOSED_GRACE_MS);
      }, 300);
      w.location.href = authority + '/share';
    });
  }

  /* Everything before the first await runs inside the caller's click. */
  async function request(opts) {
    opts = opts || {};
    const email = typeof opts.email === 'string' ? opts.email.trim() : '';
    const at = email.lastIndexOf('@');
    if (at < 1 || at === email.length - 1) throw err('input', 'an email address is required');
    // Open the window now, inside the click, and point it at the
    // authority once known: browsers block popups opened later.
    const w = window.open('about:blank', 'vep_share', 'popup,width=480,height=680');
    if (!w) throw err('popup', 'the browser blocked the sign-in window');
    let authority;
    try {
      authority = opts.authority ? originOf(opts.authority)
        : await discover(email.slice(at + 1).toLowerCase(), 0);
    } catch (e) {
      w.close();
      throw e;
    }
    return answerOf(w, authority, email);
  }

  window.vepRP = Object.freeze({ request });
})();
