/*
 * test_rotation.js - a key rotation seen by a verifier that reads only the
 * support document's public-key (PyBrowserID, behind django-browserid,
 * does). In real Chromium against the real vep-authority --demo: sign in
 * (the browser holds a certificate), rotate the domain key with vep-keytool
 * and SIGHUP, ask vep.js for an assertion: its certificate must be signed
 * by the new current key, which such a verifier accepts, while it refuses
 * the certificate held before the rotation (so without vep.js's renewal
 * this test fails). Also: no renewal while the key is still current (nor
 * when a next key is only published), the browser's cached copy of the
 * support document does not hide the rotation, a rotation after the
 * session ended makes getAssertion ask for a sign-in (401) instead of
 * asserting with a rotated-out certificate (and a /share popup left at
 * its confirm step goes back to signing in, saying the session ended,
 * not "wrong password"), and with the authority
 * unreachable vep.js still asserts with the certificate it holds.
 */
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const path = require('path');
const c = require('./common.js');

const ALICE = 'alice@example.test';
const DOMAIN = 'example.test';
const AUDIENCE = 'http://rp.example';

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let body = '';
      res.on('data', (x) => { body += x; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    }).on('error', reject);
  });
}

const b64 = (s) => Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
const b64json = (s) => JSON.parse(b64(s).toString());
const decimalB64url = (d) => {
  let hex = BigInt(d).toString(16);
  if (hex.length % 2) hex = '0' + hex;
  return Buffer.from(hex, 'hex').toString('base64url');
};

/* Does the compact JWS verify under an RS key in BrowserID JSON? */
function jwsVerifies(jws, key) {
  if (!key || key.algorithm !== 'RS') return false;
  const pub = crypto.createPublicKey({ format: 'jwk',
    key: { kty: 'RSA', n: decimalB64url(key.n), e: decimalB64url(key.e) } });
  const [h, p, s] = jws.split('.');
  // Left-pad a signature shorter than the modulus (docs/PROTOCOL.md).
  const raw = b64(s);
  const size = pub.asymmetricKeyDetails.modulusLength / 8;
  const sig = Buffer.concat([Buffer.alloc(Math.max(0, size - raw.length)), raw]);
  return crypto.verify('sha256', Buffer.from(h + '.' + p), pub, sig);
}

/* The verifier of this test: it fetches the support document and takes
 * only public-key from it, as PyBrowserID does; the rest (issuer, times,
 * audience, the assertion under the certificate's key) as every verifier.
 * Resolves null (accepted) or why it refuses. */
async function publicKeyOnlyVerify(origin, backed, audience) {
  const doc = JSON.parse((await get(`${origin}/.well-known/browserid?domain=${DOMAIN}`)).body);
  const [cert, assertion] = backed.split('~');
  const cp = b64json(cert.split('.')[1]);
  const ap = b64json(assertion.split('.')[1]);
  const now = Date.now();
  if (!jwsVerifies(cert, doc['public-key'])) return 'bad signature in chain';
  if (cp.iss !== DOMAIN || cp.principal.email.split('@')[1] !== DOMAIN) return 'issuer';
  if (!(cp.iat <= now && now < cp.exp)) return 'certificate expired';
  if (!jwsVerifies(assertion, cp['public-key'])) return 'bad assertion signature';
  if (ap.aud !== audience || !(now < ap.exp)) return 'audience or expiry';
  return null;
}

/* vep-keytool verify-assertion against a copy of the served document
 * without its keys list (what a public-key-only verifier knows) or with
 * it. Resolves the keytool's exit code and message. */
async function keytoolVerify(d, backed, withKeys) {
  const doc = JSON.parse((await get(`${d.origin}/.well-known/browserid?domain=${DOMAIN}`)).body);
  if (!withKeys) delete doc.keys;
  const docFile = path.join(d.state, 'doc.json');
  const aFile = path.join(d.state, 'assertion');
  fs.writeFileSync(docFile, JSON.stringify(doc));
  fs.writeFileSync(aFile, backed);
  const r = c.interop.keytool(['verify-assertion', '--audience', AUDIENCE,
    '--support-doc', `${DOMAIN}=${docFile}`, aFile]);
  return { code: r.code, why: r.stderr.trim() };
}

/* vep-keytool on the demo's key directory, then SIGHUP; resolves once the
 * served document has changed (and a moment for every loop to have it). */
async function keyStep(t, d, cmd) {
  const before = (await get(`${d.origin}/.well-known/browserid`)).body;
  const r = c.interop.keytool([cmd, '--dir', path.join(d.state, 'keys', DOMAIN)]);
  t.check(r.code === 0, `vep-keytool ${cmd}: exit 0 (${r.stderr.trim()})`);
  d.proc.kill('SIGHUP');
  for (let i = 0; i < 50; i++) {
    const now = JSON.parse((await get(`${d.origin}/.well-known/browserid`)).body);
    if (JSON.stringify(now) !== JSON.stringify(JSON.parse(before))) {
      await new Promise((r2) => setTimeout(r2, 300));
      return now;
    }
    await new Promise((r2) => setTimeout(r2, 100));
  }
  t.check(false, `the served document changed after ${cmd} and SIGHUP`);
  return JSON.parse(before);
}

async function signIn(page, d) {
  await page.goto(d.origin + '/sign-in');
  await page.fill('#email', ALICE);
  await page.fill('#password', 'wonderland');
  await page.click('button[type=submit]');
  await page.waitForURL('**/account', { timeout: 30000 });
  await page.waitForSelector('#signed-in:not([hidden])', { timeout: 30000 });
  return page.evaluate(() => window.vep.identity());
}

const assertFor = (page) => page.evaluate((aud) => window.vep.getAssertion(aud), AUDIENCE);
const certOf = (backed) => backed.split('~')[0];

(async () => {
  const t = c.interop.reporter();
  const d = await c.startDemo([]);
  const browser = await c.launch();
  let stopped = false;
  try {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const log = [];
    const page = c.watch(await ctx.newPage(), log);
    const held = await signIn(page, d);
    t.check(held && held.email === ALICE, 'signed in: the browser holds a certificate');
    const doc0 = JSON.parse((await get(`${d.origin}/.well-known/browserid`)).body);

    // Before any rotation: no renewal, and the verifier accepts.
    const a0 = await assertFor(page);
    t.check(certOf(a0) === held.cert, 'key still current: the held certificate is used as is');
    let why = await publicKeyOnlyVerify(d.origin, a0, AUDIENCE);
    t.check(why === null, `before the rotation the public-key-only verifier accepts (${why})`);

    // 1. A next key published: public-key unchanged, still no renewal.
    const doc1 = await keyStep(t, d, 'prepare');
    t.check(JSON.stringify(doc1['public-key']) === JSON.stringify(doc0['public-key']) &&
      doc1.keys.length === 2, 'prepare: the next key is listed, public-key unchanged');
    t.check(certOf(await assertFor(page)) === held.cert,
      'next key only published: no renewal');

    // 2. Rotate. The browser has the pre-rotation document in its HTTP
    // cache (max_age 300 s): vep.js must not be fooled by it.
    const doc2 = await keyStep(t, d, 'rotate');
    t.check(JSON.stringify(doc2['public-key']) === JSON.stringify(doc1.keys[1]) &&
      JSON.stringify(doc2.keys[1]) === JSON.stringify(doc0['public-key']),
    'rotate: the next key is current, the old one previous');
    const a1 = await assertFor(page);
    const c1 = certOf(a1);
    t.check(c1 !== held.cert, 'after the rotation vep.js renewed the certificate before asserting');
    t.check(jwsVerifies(c1, doc2['public-key']) && !jwsVerifies(c1, doc0['public-key']),
      'the new certificate is signed by the new current key');
    why = await publicKeyOnlyVerify(d.origin, a1, AUDIENCE);
    t.check(why === null, `the public-key-only verifier accepts the assertion (${why})`);
    let kt = await keytoolVerify(d, a1, false);
    t.check(kt.code === 0, `vep-keytool with public-key only accepts it (${kt.why})`);

    // The negative: without the renewal, the certificate held from before.
    why = await publicKeyOnlyVerify(d.origin, a0, AUDIENCE);
    t.check(why === 'bad signature in chain',
      `the certificate of the previous key: the public-key-only verifier refuses (${why})`);
    kt = await keytoolVerify(d, a0, false);
    t.check(kt.code === 1, `... vep-keytool with public-key only refuses it too (${kt.why})`);
    kt = await keytoolVerify(d, a0, true);
    t.check(kt.code === 0, `... while a verifier reading keys accepts it (${kt.why})`);

    t.check(certOf(await assertFor(page)) === c1, 'renewed once: the next assertion keeps it');

    // Another rotation once the session has ended (the key and certificate
    // kept): renewal is impossible, so the caller is told to sign in again.
    // A website's /share popup left open at its confirm step meanwhile
    // goes back to signing in when its Share button is pressed.
    const rp = c.watch(await ctx.newPage(), log);
    await rp.goto(d.rpOrigin + '/');
    const [popup] = await Promise.all([rp.waitForEvent('popup'), rp.click('#go')]);
    c.watch(popup, log);
    await popup.waitForSelector('#confirm-step:not([hidden])', { timeout: 30000 });
    await page.evaluate(async () => {
      const s = await window.vep.session();
      await window.vep.api('POST', '/api/logout', {}, s.csrf);
    });
    await keyStep(t, d, 'prepare');
    await keyStep(t, d, 'rotate');
    const ended = await assertFor(page).then(() => 'an assertion', (e) => e.message);
    t.check(/not signed in/.test(ended),
      `session ended: rotated-out certificate not asserted, sign-in asked for (${ended})`);
    await popup.click('#share');
    // Either answer of the page: back to signing in, or an error shown at
    // the confirm step (before the fix: "Wrong email address or password.").
    await popup.waitForSelector('#signin-step:not([hidden]), #confirm-error:not(:empty)',
      { timeout: 30000 });
    const alert = await popup.isVisible('#signin-step')
      ? await popup.textContent('#signin .alert.error')
      : 'still at the confirm step: ' + await popup.textContent('#confirm-error');
    t.check(alert === 'Your session has ended. Sign in again to continue.' &&
      await popup.inputValue('#email') === ALICE,
    `/share at its confirm step when the session ended: back to signing in, saying why (${alert})`);
    await c.shots(popup, 'share-session-ended');

    // The authority unreachable: assert with what the browser holds.
    const st = await c.stopDemo(d);
    stopped = true;
    t.check(st.code === 0 && !st.sanitizer, `server: clean exit (${st.code})`);
    const off = await assertFor(page).catch((e) => 'error: ' + e.message);
    t.check(certOf(off) === c1 && off.split('~').length === 2,
      `support document unreachable: vep.js asserts with the certificate it holds (${off.slice(0, 40)})`);
    t.check(log.length === 0, `no script errors or CSP violations (${log.join('; ')})`);
  } finally {
    await browser.close();
    if (!stopped) await c.stopDemo(d);
  }
  t.done();
})().catch((e) => { console.error(e); process.exit(1); });
