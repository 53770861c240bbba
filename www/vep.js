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
 *   vep.signIn(email, pw)    -> {email, csrf, expires}: signed in, or
 *                               {challenge: {prompt, echo, messages,
 *                               expiresIn}, continuation}: the domain's PAM
 *                               stack asks one more question (a one-time
 *                               code...): answer it with signInContinue
 *   vep.signInContinue(continuation, answer)
 *                            -> the same two: signed in, or the next
 *                               question (with a new continuation)
 *   vep.provision([opts])    -> {email, cert, expires}  (renews itself)
 *   vep.identity()           -> {email, cert, expires} or null (stored)
 *   vep.getAssertion(aud)    -> "cert~assertion" for audience aud (renews
 *                               first a certificate that is expiring or
 *                               signed by a domain key since rotated out)
 *   vep.signOut()            -> forgets key and certificate, ends the session
 *   vep.api(method, path[, body[, csrf]])
 *                            -> the JSON answer of one of the authority's
 *                               /api/ calls: the one fetch helper of the
 *                               pages (VepError on failure)
 *
 * A challenge's prompt is PAM's question ("One-time password (OATH) for
 * `alice': "), to show as the answer's label; echo false means a secret (a
 * password-type input), true a visible answer; messages are PAM's notes,
 * [{kind: "info"|"error", text}], plain text (never HTML); expiresIn is the
 * seconds left to answer. The continuation is opaque and single-use: it
 * never leaves the authority's origin.
 *
 * Errors are VepError {message, status, retryAfter, reason}: status 0 means
 * the server could not be reached; reason is the server's, or "": a wrong
 * code is a 401 like a wrong password (no reason); 401 "restart": the
 * continuation is unknown, expired or used, sign in from the password
 * again; 403 "password_expired": the password was right but has expired
 * (the message says what to do).
 */
(() => {
  'use strict';

  const DB_NAME = 'vep-authority';
  const STORE = 'identity';
  const RECORD = 'current';
  /* Assertions are valid this long (ms). */
  const ASSERTION_MS = 2 * 60 * 1000;
  /* Certificates are renewed this long before they expire (ms)... */
  const RENEW_BEFORE_MS = 5 * 60 * 1000;
  /* ...and never used with less than this left (ms): verifiers and user
   * agents drop them. */
  const MIN_LEFT_MS = 2 * 60 * 1000;

  /* A factory, not a class: pages call it without `new`. */
  function VepError(message, status, retryAfter, reason) {
    const e = new Error(message);
    e.name = 'VepError';
    e.status = status || 0;
    e.retryAfter = retryAfter || 0;
    e.reason = reason || '';
    return e;
  }

  /* --- encodings ------------------------------------------------------ */

  function b64url(bytes) {
    let s = '';
    for (const b of bytes) s += String.fromCharCode(b);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  const b64urlText = (text) => b64url(new TextEncoder().encode(text));

  function b64urlBytes(s) {
    const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  }

  /* Decimal text (BrowserID form) -> big-endian bytes, no leading zeros. */
  function decimalToBytes(dec) {
    let hex = BigInt(dec).toString(16);
    if (hex.length % 2) hex = '0' + hex;
    return Uint8Array.from(hex.match(/../g), (h) => parseInt(h, 16));
  }

  /* JWK's base64url big-endian integer -> decimal text (BrowserID form). */
  function b64urlToDecimal(s) {
    const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
    let hex = '';
    for (let i = 0; i < bin.length; i++) hex += bin.charCodeAt(i).toString(16).padStart(2, '0');
    return BigInt('0x' + (hex || '0')).toString(10);
  }

  /* --- storage -------------------------------------------------------- */

  /* IndexedDB speaks in events; these two turn them into promises. */
  function openDb() {
    return new Promise((resolve, reject) => {
      const rq = indexedDB.open(DB_NAME, 1);
      rq.onupgradeneeded = () => { rq.result.createObjectStore(STORE); };
      rq.onsuccess = () => { resolve(rq.result); };
      rq.onerror = () => { reject(VepError('browser storage unavailable')); };
    });
  }

  async function withStore(mode, fn) {
    const db = await openDb();
    return new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const rq = fn(tx.objectStore(STORE));
      tx.oncomplete = () => { db.close(); resolve(rq.result); };
      tx.onerror = tx.onabort = () => {
        db.close();
        reject(VepError('browser storage failed'));
      };
    });
  }

  const load = () => withStore('readonly', (s) => s.get(RECORD));
  const save = (id) => withStore('readwrite', (s) => s.put(id, RECORD));
  const forget = () => withStore('readwrite', (s) => s.delete(RECORD));

  /* --- the authority's API -------------------------------------------- */

  /* One request: resolves {status, json} for a 2xx answer. */
  async function request(method, path, body, csrf) {
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (csrf) headers['X-CSRF-Token'] = csrf;
    let res;
    try {
      res = await fetch(path, {
        method,
        credentials: 'same-origin',
        cache: 'no-store',
        headers,
        body: body === undefined ? undefined : JSON.stringify(body)
      });
    } catch (e) {
      throw VepError('cannot reach the server', 0);
    }
    const json = await res.json().catch(() => ({}));
    if (res.ok) return { status: res.status, json };
    throw VepError(json.error || `HTTP ${res.status}`, res.status,
      Number(res.headers.get('Retry-After')) || json.retry_after || 0,
      typeof json.reason === 'string' ? json.reason : '');
  }

  const api = async (method, path, body, csrf) => (await request(method, path, body, csrf)).json;

  async function session() {
    try {
      return await api('GET', '/api/session');
    } catch (e) {
      if (e.status === 401) return null;
      throw e;
    }
  }

  /* A sign-in step's answer: the session (200), or the next question
   * (202), its fields checked so that pages can use them as they are. */
  function signInAnswer(r) {
    if (r.status !== 202) return r.json;
    const j = r.json;
    if (typeof j.continuation !== 'string' || j.continuation === '') {
      throw VepError('unexpected answer from the server', 202);
    }
    const messages = Array.isArray(j.messages) ? j.messages
      .filter((m) => m && typeof m.text === 'string')
      .map((m) => ({ kind: m.kind === 'error' ? 'error' : 'info', text: m.text })) : [];
    return {
      challenge: {
        prompt: typeof j.prompt === 'string' ? j.prompt : '',
        echo: j.echo === true,
        messages,
        expiresIn: Number(j.expires_in) > 0 ? Number(j.expires_in) : 0
      },
      continuation: j.continuation
    };
  }

  const signIn = async (email, password) =>
    signInAnswer(await request('POST', '/api/login', { email, password }));

  const signInContinue = async (continuation, answer) =>
    signInAnswer(await request('POST', '/api/login/continue',
      { continuation: String(continuation), answer: String(answer) }));

  /* --- keys and certificates ------------------------------------------ */

  async function makeKeys() {
    const pair = await crypto.subtle.generateKey({
      name: 'RSASSA-PKCS1-v1_5',
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: 'SHA-256'
    }, false, ['sign']);
    // Public keys stay exportable whatever the flag says.
    const jwk = await crypto.subtle.exportKey('jwk', pair.publicKey);
    return {
      privateKey: pair.privateKey,
      pubkey: { algorithm: 'RS', n: b64urlToDecimal(jwk.n), e: b64urlToDecimal(jwk.e) }
    };
  }

  let renewTimer = null;

  function scheduleRenewal(id) {
    if (renewTimer) clearTimeout(renewTimer);
    const wait = Math.max(id.expires - Date.now() - RENEW_BEFORE_MS, 10000);
    // setTimeout holds at most 2^31-1 ms.
    renewTimer = setTimeout(() => {
      renewTimer = null;
      provision().catch(() => { /* session over: nothing to renew */ });
    }, Math.min(wait, 0x7fffffff));
  }

  const publicView = (id) => ({ email: id.email, cert: id.cert, expires: id.expires });

  /* Gets (or renews) a certificate for this browser's key; makes the key
   * on first use. opts.duration: seconds asked for (the server caps it). */
  async function provision(opts) {
    const { force, duration } = opts || {};
    const s = await session();
    if (!s) throw VepError('not signed in', 401);
    const stored = await load();
    const id = stored && stored.email === s.email ? stored
      : { email: s.email, ...await makeKeys() };
    if (id.cert && id.expires - Date.now() > RENEW_BEFORE_MS && !force) {
      scheduleRenewal(id);
      return publicView(id);
    }
    const body = { pubkey: id.pubkey, email: s.email };
    if (duration) body.duration = duration;
    const res = await api('POST', '/api/cert', body, s.csrf);
    id.cert = res.cert;
    id.issued = res.iat;
    id.expires = res.exp;
    await save(id);
    scheduleRenewal(id);
    return publicView(id);
  }

  /* --- the domain's current key ------------------------------------- */

  /* The current domain key (the support document's public-key: all that
   * verifiers such as PyBrowserID read), or null when the document cannot
   * be had. Same origin, asked for the email's domain as verifiers ask.
   * 'no-cache' revalidates with the document's ETag: usually a bodiless
   * 304, and never a copy the browser kept from before a rotation (it may
   * keep one for max_age, 5 minutes by default). */
  async function currentKey(email) {
    const domain = email.slice(email.lastIndexOf('@') + 1);
    try {
      const res = await fetch('/.well-known/browserid?domain=' + encodeURIComponent(domain),
        { cache: 'no-cache', credentials: 'omit' });
      if (!res.ok) return null;
      const doc = await res.json();
      return (doc && doc['public-key']) || null;
    } catch (e) {
      return null;
    }
  }

  /* Does key (BrowserID JSON) verify cert's signature? true, false, or
   * null when this browser cannot tell (a DSA key, a malformed one).
   * Certificates do not name their signer (the deployed header is exactly
   * {"alg":"RS256"}, no kid), and /api/cert does not say which key signed:
   * checking the signature is the very test a verifier reading only
   * public-key makes, so it cannot disagree with one, and it costs one
   * RSA public operation (e = 65537, well under a millisecond). */
  async function verifiesUnder(cert, key) {
    if (!key || key.algorithm !== 'RS') return null;
    try {
      const n = decimalToBytes(key.n);
      const k = await crypto.subtle.importKey('jwk',
        { kty: 'RSA', n: b64url(n), e: b64url(decimalToBytes(key.e)), ext: true },
        { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['verify']);
      const parts = cert.split('.');
      const raw = b64urlBytes(parts[2]);
      // Signers may drop leading zero bytes (docs/PROTOCOL.md); WebCrypto
      // wants the modulus's length.
      const sig = new Uint8Array(Math.max(n.length, raw.length));
      sig.set(raw, sig.length - raw.length);
      return await crypto.subtle.verify('RSASSA-PKCS1-v1_5', k, sig,
        new TextEncoder().encode(parts[0] + '.' + parts[1]));
    } catch (e) {
      return null;
    }
  }

  /* true when id's certificate was signed by a key that is no longer the
   * domain's current one (a rotation since it was issued): verifiers that
   * read only public-key refuse it although it has not expired. */
  async function signedByOldKey(id) {
    const key = await currentKey(id.email);
    return key !== null && await verifiesUnder(id.cert, key) === false;
  }

  /* Renews a certificate whose signing key was rotated out. Only the end
   * of the session is reported (the caller signs in again); otherwise the
   * held certificate still verifies wherever the support document's keys
   * are read, so it is used as before. */
  async function renewAfterRotation() {
    try {
      await provision({ force: true });
    } catch (e) {
      if (e.status === 401) throw e;
    }
  }

  async function identity() {
    const id = await load();
    return id && id.cert ? publicView(id) : null;
  }

  /* A backed assertion for audience (an origin: scheme://host[:port]). */
  async function getAssertion(audience) {
    if (typeof audience !== 'string' || !/^https?:\/\/[^/?#]+$/.test(audience)) {
      throw VepError('audience must be an origin such as https://example.org');
    }
    let id = await load();
    if (!id || !id.cert) throw VepError('this browser has no certificate', 401);
    if (id.expires - Date.now() < MIN_LEFT_MS) {
      // Expired or about to: renew quietly while the session lasts.
      await provision({ force: true });
      id = await load();
    } else if (await signedByOldKey(id)) {
      await renewAfterRotation();
      id = await load();
    }
    const header = b64urlText(JSON.stringify({ alg: 'RS256' }));
    const payload = b64urlText(JSON.stringify({ exp: Date.now() + ASSERTION_MS, aud: audience }));
    const input = header + '.' + payload;
    const sig = await crypto.subtle.sign('RSASSA-PKCS1-v1_5', id.privateKey,
      new TextEncoder().encode(input));
    return id.cert + '~' + input + '.' + b64url(new Uint8Array(sig));
  }

  async function signOut() {
    if (renewTimer) clearTimeout(renewTimer);
    renewTimer = null;
    await forget();
    const s = await session();
    if (s) await api('POST', '/api/logout', {}, s.csrf);
    return null;
  }

  window.vep = Object.freeze({
    session,
    signIn,
    signInContinue,
    provision,
    identity,
    getAssertion,
    signOut,
    api,
    VepError
  });
})();
