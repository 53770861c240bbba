/*
 * vep.js - the authority's first-party library, as window.vep.
 *
 * Runs on the authority's own origin (its pages, the share popup, the
 * hidden page a webmail frames). The browser's key pair is made with
 * WebCrypto (RSASSA-PKCS1-v1_5, 2048 bits, SHA-256); the private key is
 * non-extractable and lives in this origin's IndexedDB with the
 * certificate the authority issued for it. Nothing secret ever leaves the
 * browser: the authority sees the public key only.
 *
 *   vep.session()            -> {email, csrf, expires} or null
 *   vep.signIn(email, pw)    -> {email, csrf, expires}  (VepError on failure)
 *   vep.provision([opts])    -> {email, cert, expires}  (renews itself)
 *   vep.identity()           -> {email, cert, expires} or null (stored)
 *   vep.getAssertion(aud)    -> "cert~assertion" for audience aud
 *   vep.signOut()            -> forgets key and certificate, ends the session
 *
 * Errors are VepError {message, status, retryAfter}: status 0 means the
 * server could not be reached.
 */
(function () {
  'use strict';

  var DB_NAME = 'vep-authority';
  var STORE = 'identity';
  var RECORD = 'current';
  /* Assertions are valid this long (ms). */
  var ASSERTION_MS = 2 * 60 * 1000;
  /* Certificates are renewed this long before they expire (ms)... */
  var RENEW_BEFORE_MS = 5 * 60 * 1000;
  /* ...and never used with less than this left (ms): verifiers and user
   * agents drop them. */
  var MIN_LEFT_MS = 2 * 60 * 1000;

  function VepError(message, status, retryAfter) {
    var e = new Error(message);
    e.name = 'VepError';
    e.status = status || 0;
    e.retryAfter = retryAfter || 0;
    return e;
  }

  /* --- encodings ------------------------------------------------------ */

  function b64url(bytes) {
    var s = '';
    for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  function b64urlText(text) {
    return b64url(new TextEncoder().encode(text));
  }

  /* JWK's base64url big-endian integer -> decimal text (BrowserID form). */
  function b64urlToDecimal(s) {
    var bin = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
    var hex = '';
    for (var i = 0; i < bin.length; i++) hex += ('0' + bin.charCodeAt(i).toString(16)).slice(-2);
    return BigInt('0x' + (hex || '0')).toString(10);
  }

  /* --- storage -------------------------------------------------------- */

  function openDb() {
    return new Promise(function (resolve, reject) {
      var rq = indexedDB.open(DB_NAME, 1);
      rq.onupgradeneeded = function () { rq.result.createObjectStore(STORE); };
      rq.onsuccess = function () { resolve(rq.result); };
      rq.onerror = function () { reject(VepError('browser storage unavailable')); };
    });
  }

  function withStore(mode, fn) {
    return openDb().then(function (db) {
      return new Promise(function (resolve, reject) {
        var tx = db.transaction(STORE, mode);
        var rq = fn(tx.objectStore(STORE));
        tx.oncomplete = function () { db.close(); resolve(rq.result); };
        tx.onerror = tx.onabort = function () {
          db.close();
          reject(VepError('browser storage failed'));
        };
      });
    });
  }

  function load() { return withStore('readonly', function (s) { return s.get(RECORD); }); }
  function save(id) { return withStore('readwrite', function (s) { return s.put(id, RECORD); }); }
  function forget() { return withStore('readwrite', function (s) { return s.delete(RECORD); }); }

  /* --- the authority's API -------------------------------------------- */

  function api(method, path, body, csrf) {
    var headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (csrf) headers['X-CSRF-Token'] = csrf;
    return fetch(path, {
      method: method,
      credentials: 'same-origin',
      cache: 'no-store',
      headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body)
    }).catch(function () {
      throw VepError('cannot reach the server', 0);
    }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (json) {
        if (res.ok) return json;
        throw VepError(json.error || ('HTTP ' + res.status), res.status,
          Number(res.headers.get('Retry-After')) || json.retry_after || 0);
      });
    });
  }

  function session() {
    return api('GET', '/api/session').catch(function (e) {
      if (e.status === 401) return null;
      throw e;
    });
  }

  function signIn(email, password) {
    return api('POST', '/api/login', { email: email, password: password });
  }

  /* --- keys and certificates ------------------------------------------ */

  function makeKeys() {
    return crypto.subtle.generateKey({
      name: 'RSASSA-PKCS1-v1_5',
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: 'SHA-256'
    }, false, ['sign']).then(function (pair) {
      // Public keys stay exportable whatever the flag says.
      return crypto.subtle.exportKey('jwk', pair.publicKey).then(function (jwk) {
        return {
          privateKey: pair.privateKey,
          pubkey: { algorithm: 'RS', n: b64urlToDecimal(jwk.n), e: b64urlToDecimal(jwk.e) }
        };
      });
    });
  }

  var renewTimer = null;

  function scheduleRenewal(id) {
    if (renewTimer) clearTimeout(renewTimer);
    var wait = Math.max(id.expires - Date.now() - RENEW_BEFORE_MS, 10000);
    // setTimeout holds at most 2^31-1 ms.
    renewTimer = setTimeout(function () {
      renewTimer = null;
      provision().catch(function () { /* session over: nothing to renew */ });
    }, Math.min(wait, 0x7fffffff));
  }

  function publicView(id) {
    return { email: id.email, cert: id.cert, expires: id.expires };
  }

  /* Gets (or renews) a certificate for this browser's key; makes the key
   * on first use. opts.duration: seconds asked for (the server caps it). */
  function provision(opts) {
    opts = opts || {};
    return session().then(function (s) {
      if (!s) throw VepError('not signed in', 401);
      return load().then(function (id) {
        var fresh = id && id.email === s.email ? Promise.resolve(id)
          : makeKeys().then(function (k) {
            return { email: s.email, privateKey: k.privateKey, pubkey: k.pubkey };
          });
        return fresh.then(function (idn) {
          if (idn.cert && idn.expires - Date.now() > RENEW_BEFORE_MS && !opts.force) {
            scheduleRenewal(idn);
            return publicView(idn);
          }
          var body = { pubkey: idn.pubkey, email: s.email };
          if (opts.duration) body.duration = opts.duration;
          return api('POST', '/api/cert', body, s.csrf).then(function (res) {
            idn.cert = res.cert;
            idn.issued = res.iat;
            idn.expires = res.exp;
            return save(idn).then(function () {
              scheduleRenewal(idn);
              return publicView(idn);
            });
          });
        });
      });
    });
  }

  function identity() {
    return load().then(function (id) { return id && id.cert ? publicView(id) : null; });
  }

  /* A backed assertion for audience (an origin: scheme://host[:port]). */
  function getAssertion(audience) {
    if (typeof audience !== 'string' || !/^https?:\/\/[^/?#]+$/.test(audience)) {
      return Promise.reject(VepError('audience must be an origin such as https://example.org'));
    }
    return load().then(function (id) {
      if (!id || !id.cert) throw VepError('this browser has no certificate', 401);
      if (id.expires - Date.now() < MIN_LEFT_MS) {
        // Expired or about to: renew quietly while the session lasts.
        return provision({ force: true }).then(load);
      }
      return id;
    }).then(function (id) {
      var header = b64urlText(JSON.stringify({ alg: 'RS256' }));
      var payload = b64urlText(JSON.stringify({ exp: Date.now() + ASSERTION_MS, aud: audience }));
      var input = header + '.' + payload;
      return crypto.subtle.sign('RSASSA-PKCS1-v1_5', id.privateKey, new TextEncoder().encode(input))
        .then(function (sig) {
          return id.cert + '~' + input + '.' + b64url(new Uint8Array(sig));
        });
    });
  }

  function signOut() {
    if (renewTimer) clearTimeout(renewTimer);
    renewTimer = null;
    return forget().then(session).then(function (s) {
      if (s) return api('POST', '/api/logout', {}, s.csrf);
      return null;
    }).then(function () { return null; });
  }

  window.vep = Object.freeze({
    session: session,
    signIn: signIn,
    provision: provision,
    identity: identity,
    getAssertion: getAssertion,
    signOut: signOut,
    VepError: VepError
  });
})();
