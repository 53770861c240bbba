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
 * Resolves only with an assertion whose certificate is for the address
 * asked (domain compared case-insensitively). Rejects with an Error whose
 * .code is "input", "popup", "discovery" (with .reason, .domain and for
 * "http_status" .status), "unreachable", "closed", "cancelled" or
 * "wrong_email" (with .email, the address certified); README.md, "A
 * website", has the table, and rp.d.ts the types.
 *
 * Options (all but email optional):
 *   email             the address to sign in
 *   authority         the authority's origin: no discovery
 *   discoveryTimeout  ms for the whole discovery, 100..60000 (10000)
 *   readyTimeout      ms for the popup to load the authority's page,
 *                     100..120000 (20000)
 *   hosts             development only: {"example.test":
 *                     "http://127.0.0.1:8080"} reaches those names at
 *                     those origins instead of https://NAME, for the
 *                     support document and the popup alike
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
  /* A support document is a small static file: ten seconds without one is
   * a broken server, and the user is looking at an empty popup meanwhile.
   * The bounds keep a typo from meaning "never" or "forever". */
  const DISCOVERY_TIMEOUT = { name: 'discoveryTimeout', def: 10000, min: 100, max: 60000 };
  /* The popup's /share page and its three scripts, on a slow network; an
   * authority that does not answer (wrong origin, server down) shows the
   * browser's error page, which never says "vep:ready". */
  const READY_TIMEOUT = { name: 'readyTimeout', def: 20000, min: 100, max: 120000 };
  /* The browser reports a CSP violation by an event queued apart from
   * fetch's rejection, so it may come a little after it. */
  const CSP_REPORT_MS = 50;
  /* How often to look whether the user closed the popup (no event says so). */
  const CLOSED_POLL_MS = 300;
  const HOST = /^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::[0-9]{1,5})?$/i;

  function err(code, message, fields) {
    const e = new Error(message);
    e.code = code;
    return Object.assign(e, fields);
  }

  function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  /* Same address: local parts exactly, domains case-insensitively (what
   * the authority certifies: the domain lowercase, the local part as the
   * account has it). */
  function sameAddress(a, b) {
    const i = a.lastIndexOf('@');
    const j = b.lastIndexOf('@');
    return a.slice(0, i) === b.slice(0, j) && a.slice(i).toLowerCase() === b.slice(j).toLowerCase();
  }

  /* The address a backed assertion's certificate is for, or null. Not a
   * verification (the site's server does that): it catches a popup that
   * answered for someone else before the page acts on it. */
  function certifiedEmail(assertion) {
    try {
      const b64 = assertion.split('~')[0].split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
      const email = JSON.parse(new TextDecoder().decode(bytes)).principal.email;
      return typeof email === 'string' ? email : null;
    } catch (e) {
      return null;
    }
  }

  /* opts[b.name] in milliseconds, b.def when absent. */
  function bounded(opts, b) {
    const v = opts[b.name];
    if (v === undefined) return b.def;
    if (typeof v !== 'number' || !(v >= b.min && v <= b.max)) {
      throw err('input', `${b.name} must be a number of milliseconds from ${b.min} to ${b.max}`);
    }
    return v;
  }

  /* The origin of url, an http or https URL given as the option what. */
  function originOption(url, what) {
    let u = null;
    try {
      u = new URL(url);
    } catch (e) { /* said below */ }
    if (!u || !/^https?:$/.test(u.protocol)) throw err('input', what + ' must be an http or https URL');
    return u.protocol + '//' + u.host;
  }

  /* The origins opts.hosts names, by lowercase name; {} when absent. */
  function hostsOf(opts) {
    const out = {};
    for (const [name, url] of Object.entries(opts.hosts || {})) {
      out[name.toLowerCase()] = originOption(url, `hosts["${name}"]`);
    }
    return out;
  }

  /* Calls stop with the reporting function's error when the browser
   * reports that the page's CSP blocked url; returns the unsubscriber. */
  function watchCsp(url, onBlocked) {
    const origin = new URL(url).origin;
    const on = (ev) => {
      const b = ev.blockedURI;
      if (b === url || b === origin || b === origin + '/') onBlocked();
    };
    document.addEventListener('securitypolicyviolation', on);
    return () => document.removeEventListener('securitypolicyviolation', on);
  }

  /* fetch of a support document, its failures told apart as far as the
   * browser lets a page tell them (see README.md, "A website"). */
  async function fetchJson(url, domain, run) {
    const fail = (reason, message, more) => err('discovery', message,
      Object.assign({ reason, domain }, more));
    let blocked = false;
    const unwatch = watchCsp(url, () => { blocked = true; });
    let res;
    try {
      res = await fetch(url, { credentials: 'omit', redirect: 'manual', cache: 'no-cache',
        signal: run.signal });
    } catch (e) {
      if (!run.stopped) await sleep(CSP_REPORT_MS);
      if (run.stopped) throw run.stopped;
      if (blocked) throw fail('csp', `this page's Content-Security-Policy does not allow ${url}`);
      throw fail('network', `cannot fetch ${url}: no such host, no server, or an answer this ` +
        'page may not read (CORS)');
    } finally {
      unwatch();
    }
    /* A redirect is readable as such only when it carries CORS headers;
     * otherwise the browser reports it as a network failure. */
    if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) {
      throw fail('redirect', `${url} redirects; support documents are never followed through redirects`);
    }
    if (res.status !== 200) {
      throw fail('http_status', `${url} answered HTTP ${res.status}`, { status: res.status });
    }
    const type = (res.headers.get('Content-Type') || '').split(';')[0].trim().toLowerCase();
    if (type !== 'application/json') {
      throw fail('content_type', `${url} is ${type || 'untyped'}, not application/json`);
    }
    let doc;
    try {
      doc = JSON.parse(await res.text());
    } catch (e) {
      if (run.stopped) throw run.stopped;
      throw fail('bad_json', `${url} is not JSON`);
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
      throw fail('bad_json', `${url} is not a JSON object`);
    }
    return doc;
  }

  /* The authority's origin for domain, following delegation (hops: how
   * many were followed to get here). */
  async function discover(domain, run, hops) {
    run.domain = domain;
    const base = run.hosts[domain] || 'https://' + domain;
    const doc = await fetchJson(base + '/.well-known/browserid', domain, run);
    const fail = (reason, message) => err('discovery', message, { reason, domain });
    if (doc.disabled) throw fail('disabled', domain + ' has disabled sign-in with email');
    if (doc.authority !== undefined) {
      if (typeof doc.authority !== 'string' || !HOST.test(doc.authority)) {
        throw fail('bad_json', domain + ' delegates to something that is not a host name');
      }
      if (hops >= MAX_DELEGATIONS) throw fail('delegations', 'too many delegations');
      return discover(doc.authority.toLowerCase(), run, hops + 1);
    }
    if (!doc['public-key']) throw fail('no_key', domain + ' publishes no key');
    return base;
  }

  /* discover() within ms, given up at once when the user closes the
   * popup w meanwhile (the fetch is aborted either way). */
  async function discoverWithin(domain, hosts, ms, w) {
    const ac = new AbortController();
    const run = { signal: ac.signal, hosts, domain, stopped: null };
    let stop;
    const stopped = new Promise((resolve, reject) => {
      stop = (e) => {
        if (run.stopped) return;
        run.stopped = e;
        ac.abort();
        reject(e);
      };
    });
    const timer = setTimeout(() => stop(err('discovery',
      `no support document from ${run.domain} within ${ms} ms`,
      { reason: 'timeout', domain: run.domain })), ms);
    const poll = setInterval(() => {
      if (w.closed) stop(err('closed', 'the sign-in window was closed'));
    }, CLOSED_POLL_MS);
    try {
      return await Promise.race([discover(domain, run, 0), stopped]);
    } finally {
      clearTimeout(timer);
      clearInterval(poll);
    }
  }

  /* Resolves with the assertion the authority's popup w (already at
   * authority + "/share") answers for email. */
  function answerOf(w, authority, email, readyMs) {
    return new Promise((resolve, reject) => {
      let poll = null;
      let readyTimer = null;
      let settled = false;
      function done(fn, v) {
        if (settled) return;
        settled = true;
        window.removeEventListener('message', onMessage);
        clearInterval(poll);
        clearTimeout(readyTimer);
        fn(v);
      }
      function onAssertion(assertion) {
        const got = certifiedEmail(assertion);
        if (got !== null && sameAddress(got, email)) return done(resolve, assertion);
        return done(reject, err('wrong_email',
          `the authority answered for ${got || 'an unreadable address'}, not ${email}`, { email: got }));
      }
      function onMessage(ev) {
        if (ev.source !== w || ev.origin !== authority || !ev.data) return;
        const m = ev.data;
        if (m.type === 'vep:ready') {
          clearTimeout(readyTimer);
          w.postMessage({ type: 'vep:request', email }, authority);
        } else if (m.type === 'vep:assertion' && typeof m.assertion === 'string') {
          onAssertion(m.assertion);
        } else if (m.type === 'vep:cancel') {
          done(reject, err('cancelled', 'sign-in was cancelled'));
        } else if (m.type === 'vep:error') {
          done(reject, err('discovery', String(m.error || 'sign-in failed'), { reason: 'authority' }));
        }
      }
      window.addEventListener('message', onMessage);
      poll = setInterval(() => {
        if (!w.closed) return;
        clearInterval(poll);
        setTimeout(() => done(reject, err('closed', 'the sign-in window was closed')),
          CLOSED_GRACE_MS);
      }, CLOSED_POLL_MS);
      // Whatever the popup shows instead of /share (the browser's error
      // page, another site's 404) never answers: close it, say so.
      readyTimer = setTimeout(() => {
        w.close();
        done(reject, err('unreachable', `${authority}/share did not load within ${readyMs} ms`,
          { authority }));
      }, readyMs);
      w.location.href = authority + '/share';
    });
  }

  /* Everything before the first await runs inside the caller's click. */
  async function request(opts) {
    opts = opts || {};
    const email = typeof opts.email === 'string' ? opts.email.trim() : '';
    const at = email.lastIndexOf('@');
    if (at < 1 || at === email.length - 1) throw err('input', 'an email address is required');
    const discoveryMs = bounded(opts, DISCOVERY_TIMEOUT);
    const readyMs = bounded(opts, READY_TIMEOUT);
    const hosts = hostsOf(opts);
    const given = opts.authority ? originOption(opts.authority, 'authority') : null;
    // Open the window now, inside the click, and point it at the
    // authority once known: browsers block popups opened later.
    const w = window.open('about:blank', 'vep_share', 'popup,width=480,height=680');
    if (!w) throw err('popup', 'the browser blocked the sign-in window');
    let authority;
    try {
      authority = given || await discoverWithin(email.slice(at + 1).toLowerCase(), hosts, discoveryMs, w);
    } catch (e) {
      w.close();
      throw e;
    }
    return answerOf(w, authority, email, readyMs);
  }

  window.vepRP = Object.freeze({ request });
})();
