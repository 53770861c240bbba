/*
 * test_legacy.js - the legacy BrowserID IdP pages driven by a test user
 * agent: its shim (tests/browser/shim/, served from its own origin, named
 * with --set shim_origin) implements navigator.id as login.persona.org's
 * did. Provisioning refuses a browser not signed in (or signed in as
 * someone else) with the protocol's reason; the authentication page signs
 * in and completes; provisioning then registers a certificate for the
 * shim's key, which verifies against the served support document. Only the
 * shim's origin may frame the provisioning page.
 */
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const c = require('./common.js');

const ALICE = 'alice@example.test';

function serveShim() {
  const dir = path.join(__dirname, 'shim');
  const types = { '.js': 'text/javascript', '.html': 'text/html' };
  const srv = http.createServer((req, res) => {
    const name = path.basename(new URL(req.url, 'http://x').pathname);
    const f = path.join(dir, name);
    if (!fs.existsSync(f)) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'Content-Type': types[path.extname(f)] || 'text/plain' });
    res.end(fs.readFileSync(f));
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}

async function provision(ctx, shim, d, email, duration) {
  const page = await ctx.newPage();
  await page.goto(`${shim}/dialog.html?idp=${encodeURIComponent(d.origin + '/sign-in/provision')}` +
    `#email=${encodeURIComponent(email)}&duration=${duration}`);
  await page.waitForFunction(() => window.result !== null, null, { timeout: 30000 });
  const r = await page.evaluate(() => window.result);
  await page.close();
  return r;
}

function b64json(s) {
  return JSON.parse(Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString());
}

(async () => {
  const t = c.interop.reporter();
  const srv = await serveShim();
  const shim = `http://127.0.0.1:${srv.address().port}`;
  const d = await c.startDemo(['--set', `shim_origin=${shim}`]);
  const browser = await c.launch();
  try {
    const h = await new Promise((resolve, reject) => {
      http.get(d.origin + '/sign-in/provision', (res) => {
        let body = '';
        res.on('data', (x) => { body += x; });
        res.on('end', () => resolve({ status: res.statusCode, csp: res.headers['content-security-policy'], body }));
      }).on('error', reject);
    });
    t.check(h.status === 200 && h.csp.endsWith(`frame-ancestors ${shim}`) &&
      h.csp.includes(`script-src 'self' ${shim};`) &&
      h.body.includes(`<script src="${shim}/provisioning_api.js" defer></script>`),
    `with shim_origin set, the provisioning page loads it and only it may frame the page (${h.csp})`);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    let r = await provision(ctx, shim, d, ALICE, 3600);
    t.check(r.type === 'failure' && r.reason === 'user is not authenticated as target user',
      `provisioning without a session fails with the protocol's reason (${JSON.stringify(r)})`);

    const log = [];
    const page = c.watch(await ctx.newPage(), log);
    await page.goto(`${d.origin}/sign-in/authenticate?email=${encodeURIComponent(ALICE)}`);
    t.check(await page.inputValue('#email') === ALICE, 'authentication: beginAuthentication fills the address');
    await c.shots(page, 'legacy-authenticate');
    await page.click('#cancel');
    t.check(await page.evaluate(() => window.__auth) === 'failure: user canceled',
      'authentication: Cancel raises the failure');
    await page.fill('#password', 'wonderland');
    await page.click('button[type=submit]');
    await page.waitForFunction(() => window.__auth === 'complete', null, { timeout: 30000 });
    t.check(true, 'authentication: completeAuthentication after signing in');
    t.check(log.length === 0, `authentication: no script errors or CSP violations (${log.join('; ')})`);

    r = await provision(ctx, shim, d, ALICE, 3600);
    t.check(r.type === 'cert', `provisioning registers a certificate (${r.reason || ''})`);
    if (r.type === 'cert') {
      const p = b64json(r.cert.split('.')[1]);
      t.check(p.principal.email === ALICE && JSON.stringify(p['public-key']) === r.pubkey,
        'the certificate is for the shim\'s key and the address asked for');
      t.check(Math.abs((p.exp - p.iat) - 3610 * 1000) < 3000, 'the user agent\'s certDuration is honoured');
      const f = path.join(d.state, 'legacy-cert');
      fs.writeFileSync(f, r.cert);
      const kt = c.interop.keytool(['verify-cert', '--fetch', d.origin, f]);
      t.check(kt.code === 0 && kt.stdout.trim() === ALICE, `the certificate verifies (${kt.stderr.trim()})`);
    }
    r = await provision(ctx, shim, d, 'bob@example.test', 3600);
    t.check(r.type === 'failure' && r.reason === 'user is not authenticated as target user',
      'provisioning for another address than the session\'s fails');

    // Only the shim's origin may frame the provisioning page.
    const other = await ctx.newPage();
    await other.goto(`${d.rpOrigin}/`);
    const blocked = await other.evaluate((src) => new Promise((resolve) => {
      const f = document.createElement('iframe');
      f.src = src;
      f.onload = () => {
        let loaded;
        try { loaded = f.contentDocument !== null; } catch (e) { loaded = 'cross-origin document'; }
        resolve(loaded);
      };
      document.body.appendChild(f);
    }), d.origin + '/sign-in/provision').catch((e) => 'error ' + e.message);
    const frames = other.frames().map((f) => f.url());
    t.check(frames.some((u) => u.startsWith('chrome-error://')) &&
      !frames.some((u) => u.startsWith(d.origin)),
      `another origin cannot frame the provisioning page (${JSON.stringify(frames)}, ${blocked})`);
  } finally {
    await browser.close();
    srv.close();
    const st = await c.stopDemo(d);
    t.check(st.code === 0 && !st.sanitizer, `server: clean exit (${st.code})`);
  }
  t.done();
})().catch((e) => { console.error(e); process.exit(1); });
