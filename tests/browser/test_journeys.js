/*
 * test_journeys.js - what a person does, in real Chromium against the real
 * vep-authority --demo: the pages' headers and layout, wrong password and
 * throttling shown next to the form, sign-in by keyboard, the key this
 * browser keeps, signing in to the demo relying party through the popup
 * (the assertion verified by the site's libvep verifier, by vep-keytool and
 * by Mozilla's browserid-local-verify), cancelling, closing the popup
 * window, the webmail embed, an expired certificate renewed without the
 * user noticing, and sign-out, after which provisioning fails cleanly.
 */
'use strict';
const http = require('http');
const c = require('./common.js');

const ALICE = 'alice@example.test';

function head(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => { res.resume(); resolve({ status: res.statusCode, h: res.headers }); })
      .on('error', reject);
  });
}

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, h: res.headers, body }));
    }).on('error', reject);
  });
}

function b64json(s) {
  return JSON.parse(Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString());
}

async function checkHeaders(t, d) {
  const expect = {
    '/sign-in': "frame-ancestors 'none'", '/account': "frame-ancestors 'none'",
    '/share': "frame-ancestors 'none'", '/sign-in/authenticate': "frame-ancestors 'none'",
    // Exactly the configured embed_origins (the demo website), nothing else.
    '/embed': `frame-ancestors ${d.rpOrigin}`,
  };
  for (const [p, anc] of Object.entries(expect)) {
    const r = await head(d.origin + p);
    const csp = r.h['content-security-policy'] || '';
    t.check(r.status === 200 && csp.endsWith(anc) && !csp.includes('unsafe-inline') &&
      csp.includes("default-src 'none'") && r.h['x-content-type-options'] === 'nosniff' &&
      r.h['referrer-policy'] === 'no-referrer', `headers of ${p} (${csp})`);
  }
  // No shim_origin by default: the legacy provisioning page is off and
  // says so; the authentication page loads no foreign script.
  const prov = await get(d.origin + '/sign-in/provision');
  t.check(prov.status === 404 && /shim_origin is not configured/.test(prov.body) &&
    !/persona\.org/.test(prov.body), `legacy provisioning off without shim_origin (${prov.body})`);
  const auth = await get(d.origin + '/sign-in/authenticate');
  t.check(auth.status === 200 && !/<script src="http/.test(auth.body) &&
    !/persona\.org/.test(auth.body + auth.h['content-security-policy']),
  'legacy authentication page loads no shim by default');
  for (const p of ['/vep.js', '/rp.js', '/style.css']) {
    const r = await head(d.origin + p);
    t.check(r.status === 200 && r.h.etag && r.h['x-content-type-options'] === 'nosniff', `asset ${p}`);
  }
  t.check((await head(d.origin + '/demo-rp/index')).status === 404,
    'the demo website\'s files are not served by the authority');
}

async function failedSignIns(t, page) {
  await page.goto(c.origin + '/sign-in');
  t.check(await page.evaluate(() => document.activeElement.id) === 'email', 'sign-in: email field focused');
  await c.shots(page, 'sign-in');
  t.check(await c.fitsNarrow(page), 'sign-in: fits 375 px');
  await page.click('button[type=submit]');
  t.check((await page.textContent('.alert.error')).includes('Enter your email address'),
    'sign-in: empty form explained next to it');
  await page.fill('#email', ALICE);
  await page.fill('#password', 'not the password');
  await page.click('button[type=submit]');
  const busy = await page.getAttribute('button[type=submit]', 'aria-busy');
  t.check(busy === 'true' && await page.isDisabled('button[type=submit]'),
    'sign-in: busy while PAM runs');
  await page.waitForFunction(() => document.querySelector('.alert.error').textContent !== '');
  t.check(await page.textContent('.alert.error') === 'Wrong email address or password.',
    'sign-in: wrong password shown next to the form');
  t.check(await page.getAttribute('#password', 'aria-invalid') === 'true', 'sign-in: fields marked invalid');
  await c.shots(page, 'sign-in-wrong-password');
  // An address without an account, until the throttle answers (5 per 15 min).
  let text = '';
  for (let i = 0; i < 6 && !text.includes('Too many'); i++) {
    await page.fill('#email', 'nobody@example.test');
    await page.fill('#password', 'guess' + i);
    await page.click('button[type=submit]');
    await page.waitForFunction(() => document.querySelector('button[type=submit]').disabled === false);
    text = await page.textContent('.alert.error');
  }
  t.check(/^Too many failed attempts\. Try again in \d+ minutes\.$/.test(text),
    `sign-in: throttling shown with the wait (${text})`);
  await c.shots(page, 'sign-in-throttled');
}

async function signIn(t, page) {
  await page.goto(c.origin + '/sign-in');
  await page.fill('#email', ALICE);
  await page.keyboard.press('Tab');
  t.check(await page.evaluate(() => document.activeElement.id) === 'password', 'keyboard: Tab reaches the password');
  await page.keyboard.type('wonderland');
  await page.keyboard.press('Enter');
  await page.waitForURL('**/account', { timeout: 30000 });
  await page.waitForSelector('#signed-in:not([hidden])', { timeout: 30000 });
  t.check(await page.textContent('#email') === ALICE, 'account: who you are');
  t.check((await page.textContent('#cert')).startsWith('certified until'), 'account: this browser\'s certificate');
  t.check(await c.fitsNarrow(page), 'account: fits 375 px');
  await c.shots(page, 'account');
  const key = await page.evaluate(() => new Promise((resolve) => {
    const rq = indexedDB.open('vep-authority');
    rq.onsuccess = () => {
      const g = rq.result.transaction('identity').objectStore('identity').get('current');
      g.onsuccess = () => {
        const v = g.result;
        resolve({ email: v.email, extractable: v.privateKey.extractable, alg: v.privateKey.algorithm.name,
          bits: v.privateKey.algorithm.modulusLength, hash: v.privateKey.algorithm.hash.name,
          cert: v.cert, expires: v.expires, pubkey: v.pubkey });
      };
    };
  }));
  t.check(key.email === ALICE && key.extractable === false && key.alg === 'RSASSA-PKCS1-v1_5' &&
    key.bits === 2048 && key.hash === 'SHA-256', 'provision: non-extractable RSA-2048/SHA-256 key in IndexedDB');
  const payload = b64json(key.cert.split('.')[1]);
  t.check(payload.principal.email === ALICE && payload['public-key'].algorithm === 'RS' &&
    /^\d+$/.test(payload['public-key'].n) && payload['public-key'].e === '65537' &&
    payload['public-key'].n === key.pubkey.n, 'provision: certificate of the browser\'s key (decimal n/e)');
  return key;
}

/* The demo website's journey; returns the assertion. opts.signInFirst:
 * the popup asks for the password. */
async function rpJourney(t, ctx, label, opts) {
  const log = [];
  const rp = c.watch(await ctx.newPage(), log);
  await rp.goto(c.rpOrigin + '/');
  if (opts.shots) await c.shots(rp, 'demo-rp');
  const [popup] = await Promise.all([rp.waitForEvent('popup'), rp.click('#go')]);
  c.watch(popup, log);
  if (opts.signInFirst) {
    await popup.waitForSelector('#signin-step:not([hidden])', { timeout: 30000 });
    t.check(await popup.inputValue('#email') === ALICE, `${label}: popup asks to sign in, address filled in`);
    if (opts.shots) await c.shots(popup, 'share-sign-in');
    await popup.fill('#password', 'wonderland');
    await popup.click('#signin button[type=submit]');
  }
  await popup.waitForSelector('#confirm-step:not([hidden])', { timeout: 30000 });
  t.check((await popup.textContent('#confirm-step .lead')).includes(c.rpOrigin),
    `${label}: the popup names the website asking (${c.rpOrigin})`);
  if (opts.shots) await c.shots(popup, 'share-confirm');
  if (opts.cancel) {
    await c.clickClosing(popup, '#cancel');
    await rp.waitForFunction(() => document.getElementById('error').textContent !== '');
    t.check(await rp.textContent('#error') === 'Sign-in was cancelled.', `${label}: cancel reported to the site`);
    await rp.close();
    return null;
  }
  if (opts.closeWindow) {
    // The user closes the popup window itself: no answer is ever posted, so
    // rp.js reports it closed once its grace for a late message is over.
    const t0 = Date.now();
    await popup.close();
    await rp.waitForFunction(() => document.getElementById('error').textContent !== '',
      null, { timeout: 10000 });
    t.check(await rp.textContent('#error') === 'The sign-in window was closed before you finished.',
      `${label}: the closed window reported to the site (${Date.now() - t0} ms)`);
    await rp.close();
    return null;
  }
  await popup.click('#share');
  await rp.waitForSelector('#signed-in:not([hidden])', { timeout: 30000 });
  t.check(await rp.textContent('#who') === ALICE, `${label}: the site's server verified the assertion (libvep)`);
  if (opts.shots) await c.shots(rp, 'demo-rp-signed-in');
  const assertion = await rp.evaluate(() => window.lastAssertion);
  t.check(log.length === 0, `${label}: no script errors or CSP violations (${log.join('; ')})`);
  await rp.close();
  return assertion;
}

async function verifyEverywhere(t, assertion, label) {
  const parts = assertion.split('~');
  const a = b64json(parts[1].split('.')[1]);
  t.check(parts.length === 2 && a.aud === c.rpOrigin, `${label}: audience is the opener's real origin`);
  t.check(Math.abs(a.exp - Date.now() - 120000) < 30000, `${label}: assertion valid 2 minutes, in ms`);
  const moz = await c.interop.mozVerify(assertion, c.rpOrigin,
    { httpRequest: c.interop.localHttpRequest(c.port) });
  t.check(moz.ok && moz.email === ALICE, `${label}: Mozilla's browserid-local-verify accepts (${moz.err || moz.email})`);
  const fs = require('fs');
  const f = require('path').join(require('os').tmpdir(), `vep-assertion-${process.pid}`);
  fs.writeFileSync(f, assertion);
  const kt = c.interop.keytool(['verify-assertion', '--audience', c.rpOrigin, '--fetch',
    `${c.origin}/.well-known/browserid?domain=example.test`, f]);
  fs.unlinkSync(f);
  t.check(kt.code === 0 && kt.stdout.trim() === ALICE, `${label}: vep-keytool verify-assertion accepts (${kt.stderr.trim()})`);
  const other = await c.interop.mozVerify(assertion, 'http://evil.example',
    { httpRequest: c.interop.localHttpRequest(c.port) });
  t.check(!other.ok, `${label}: refused for another audience`);
}

async function webmail(t, browser) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const log = [];
  const page = c.watch(await ctx.newPage(), log);
  await page.goto(c.rpOrigin + '/webmail');
  await c.shots(page, 'webmail');
  await page.fill('#password', 'wonderland');
  await page.click('#go');
  await page.waitForSelector('#inbox:not([hidden])', { timeout: 30000 });
  t.check((await page.textContent('#status')).includes(ALICE), 'webmail: the hidden authority page provisioned the browser');
  await c.shots(page, 'webmail-inbox');
  t.check(log.length === 0, `webmail: no script errors or CSP violations (${log.join('; ')})`);
  const a = await rpJourney(t, ctx, 'after webmail', {});
  t.check(typeof a === 'string', 'after webmail: the site signs in without asking for a password');
  await ctx.close();
}

async function expiredRenewed(t, ctx, page) {
  const before = await page.evaluate(() => window.vep.identity());
  // Seven hours on: the 6 h certificate has expired in this browser's eyes.
  await ctx.clock.setFixedTime(Date.now() + 7 * 3600 * 1000);
  const assertion = await rpJourney(t, ctx, 'expired certificate', {});
  const cert = assertion.split('~')[0];
  t.check(cert !== before.cert, 'expired certificate: renewed without asking the user');
  const moz = await c.interop.mozVerify(assertion, c.rpOrigin,
    { httpRequest: c.interop.localHttpRequest(c.port) });
  t.check(moz.ok, `expired certificate: the renewed one verifies (${moz.err || ''})`);
}

async function signOut(t, ctx, page) {
  await page.goto(c.origin + '/account');
  await page.waitForSelector('#signed-in:not([hidden])', { timeout: 30000 });
  await page.click('#signout');
  await page.waitForSelector('#signed-out:not([hidden])', { timeout: 30000 });
  await c.shots(page, 'signed-out');
  const r = await page.evaluate(() => window.vep.provision().then(() => 'provisioned',
    (e) => e.name + ' ' + e.status + ' ' + e.message));
  t.check(r === 'VepError 401 not signed in', `sign-out: provisioning then fails cleanly (${r})`);
  const id = await page.evaluate(() => window.vep.identity());
  t.check(id === null, 'sign-out: the key and certificate are gone from this browser');
  const a = await page.evaluate(() => window.vep.getAssertion(location.origin).then(() => 'got one',
    (e) => e.status + ' ' + e.message));
  t.check(a.startsWith('401'), `sign-out: no assertion either (${a})`);
  const again = await rpJourney(t, ctx, 'after sign-out', { signInFirst: true, shots: true });
  t.check(typeof again === 'string', 'after sign-out: the popup signs in again and shares');
}

(async () => {
  const t = c.interop.reporter();
  const d = await c.startDemo();
  Object.assign(c, { origin: d.origin, rpOrigin: d.rpOrigin, port: d.port });
  const browser = await c.launch();
  try {
    await checkHeaders(t, d);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const log = [];
    const page = c.watch(await ctx.newPage(), log);
    await failedSignIns(t, page);
    await signIn(t, page);
    const assertion = await rpJourney(t, ctx, 'demo website', { shots: true });
    await verifyEverywhere(t, assertion, 'demo website');
    await rpJourney(t, ctx, 'cancel', { cancel: true });
    await rpJourney(t, ctx, 'window closed', { closeWindow: true });
    await webmail(t, browser);
    await expiredRenewed(t, ctx, page);
    await signOut(t, ctx, page);
    t.check(log.length === 0, `authority pages: no script errors or CSP violations (${log.join('; ')})`);
  } finally {
    await browser.close();
    const st = await c.stopDemo(d);
    t.check(st.code === 0 && !st.sanitizer, `server: clean exit (${st.code})`);
    console.log('screenshots in ' + c.ARTIFACTS);
  }
  t.done();
})().catch((e) => { console.error(e); process.exit(1); });
