/*
 * test_rp.js - what rp.js tells a website, in real Chromium against the real
 * vep-authority --demo: every error code and discovery reason from a real
 * failure (small node HTTP servers on 127.0.0.1 serve the broken support
 * documents, the slow one, a redirect, a fake authority answering for
 * another address; a closed port stands for an authority that is down;
 * Chromium's resolver fails a name for real), discovery through the
 * development option opts.hosts (with and without delegation), and the
 * /share page's answer when the user is signed in as another address than
 * the one asked, and README.md's example page run under its own CSP.
 */
'use strict';
const http = require('http');
const net = require('net');
const c = require('./common.js');

const ALICE = 'alice@example.test';
/* A name Chromium's resolver fails (its --host-resolver-rules). */
const NO_SUCH_HOST = 'nowhere.test';
/* Short bounds, so that the failures they catch take little time. */
const SHORT_MS = 600;
const STEP_MS = 30000;

/* An HTTP server on 127.0.0.1 answering with handler; resolves
 * {srv, origin}. */
function serve(handler) {
  const srv = http.createServer(handler);
  return new Promise((resolve) => srv.listen(0, '127.0.0.1',
    () => resolve({ srv, origin: `http://127.0.0.1:${srv.address().port}` })));
}

function stop(s) {
  s.srv.closeAllConnections();
  return new Promise((resolve) => s.srv.close(() => resolve()));
}

/* A support document answer: status, headers (CORS unless cors is false),
 * body. */
function doc(status, type, body, cors) {
  return (req, res) => {
    const h = type ? { 'Content-Type': type } : {};
    if (cors !== false) h['Access-Control-Allow-Origin'] = '*';
    res.writeHead(status, h);
    res.end(body);
  };
}

/* A port nothing listens on (taken, then given back). */
function closedPort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

function b64url(s) {
  return Buffer.from(s).toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/* A pretend authority whose /share page answers every request with an
 * assertion certified for ALICE, whoever was asked for: what rp.js must
 * refuse for another address. Its certificate is not signed; rp.js only
 * reads the address (the site's server verifies). */
function fakeAuthority() {
  const cert = [b64url('{"alg":"RS256"}'), b64url(JSON.stringify({ iss: 'example.test',
    principal: { email: ALICE } })), 'c2ln'].join('.');
  const assertion = cert + '~' + [b64url('{"alg":"RS256"}'), b64url('{"aud":"x","exp":1}'), 'c2ln'].join('.');
  const js = `addEventListener('message', (ev) => {
  if (!ev.data || ev.data.type !== 'vep:request') return;
  ev.source.postMessage({ type: 'vep:assertion', assertion: ${JSON.stringify(assertion)} }, ev.origin);
  window.close();
});
window.opener.postMessage({ type: 'vep:ready' }, '*');`;
  return serve((req, res) => {
    if (req.url === '/share.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript' });
      res.end(js);
    } else {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><meta charset="utf-8"><title>fake</title><script src="/share.js"></script>');
    }
  });
}

/* The website: "/" loads rp.js from the authority and its own page.js;
 * "/csp" is the same page under a CSP whose connect-src is 'self' only.
 * A click on #go calls vepRP.request(window.nextOpts) and leaves what
 * happened in window.result. */
function website(authority) {
  const page = `<!doctype html><meta charset="utf-8"><title>a website</title>
<button id="go">Sign in</button>
<script src="${authority}/rp.js"></script><script src="/page.js"></script>`;
  const js = `document.getElementById('go').addEventListener('click', () => {
  window.vepRP.request(window.nextOpts).then((assertion) => { window.result = { assertion }; },
    (e) => { window.result = { code: e.code, reason: e.reason, status: e.status, email: e.email,
      domain: e.domain, message: e.message }; });
});`;
  return serve((req, res) => {
    if (req.url === '/page.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript' });
      return res.end(js);
    }
    const h = { 'Content-Type': 'text/html; charset=utf-8' };
    if (req.url === '/csp') {
      h['Content-Security-Policy'] = `default-src 'none'; script-src 'self' ${authority}; connect-src 'self'`;
    }
    res.writeHead(200, h);
    return res.end(page);
  });
}

/* Clicks #go with opts; withPopup(popup), when given, acts in the popup
 * while rp.js waits. Resolves window.result plus popupLeftOpen: whether a
 * popup was still open once rp.js had answered. */
async function attempt(page, opts, withPopup) {
  await page.evaluate((o) => { window.result = undefined; window.nextOpts = o; }, opts);
  let popup = null;
  const opened = page.waitForEvent('popup', { timeout: STEP_MS }).then((p) => { popup = p; return p; });
  opened.catch(() => {});
  await page.click('#go');
  if (withPopup) await withPopup(await opened);
  await page.waitForFunction(() => window.result !== undefined, null, { timeout: STEP_MS });
  const r = await page.evaluate(() => window.result);
  if (popup && !popup.isClosed()) {
    await popup.waitForEvent('close', { timeout: 3000 }).catch(() => {});
  }
  r.popupLeftOpen = !!popup && !popup.isClosed();
  return r;
}

function said(r) {
  return JSON.stringify(r);
}

async function signIn(ctx) {
  const page = await ctx.newPage();
  await page.goto(c.origin + '/sign-in');
  await page.fill('#email', ALICE);
  await page.fill('#password', 'wonderland');
  await page.click('button[type=submit]');
  await page.waitForURL('**/account', { timeout: STEP_MS });
  await page.waitForSelector('#signed-in:not([hidden])', { timeout: STEP_MS });
  await page.close();
}

/* The certified address of a backed assertion. */
function certEmail(assertion) {
  const p = assertion.split('~')[0].split('.')[1];
  return JSON.parse(Buffer.from(p.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString())
    .principal.email;
}

/* Each broken support document gives its own reason, and the popup opened
 * for it is closed again. */
async function discoveryFailures(t, page, servers) {
  const cases = [
    ['not found', servers.missing, 'http_status', (r) => r.status === 404],
    ['not readable cross-origin', servers.noCors, 'network'],
    ['served as text/html', servers.html, 'content_type'],
    ['not JSON', servers.badJson, 'bad_json'],
    ['a redirect (with CORS headers)', servers.redirect, 'redirect'],
    ['a redirect without CORS headers', servers.redirectNoCors, 'network'],
    ['disabled', servers.disabled, 'disabled'],
    ['delegating to itself', servers.loop, 'delegations'],
    ['without a key', servers.noKey, 'no_key'],
  ];
  for (const [what, s, reason, more] of cases) {
    const r = await attempt(page, { email: 'bob@broken.test', hosts: { 'broken.test': s.origin,
      'loop.test': servers.loop.origin } });
    t.check(r.code === 'discovery' && r.reason === reason && (!more || more(r)) && !r.popupLeftOpen,
      `support document ${what}: discovery/${reason}, popup closed (${said(r)})`);
  }
  const dns = await attempt(page, { email: 'bob@' + NO_SUCH_HOST });
  t.check(dns.code === 'discovery' && dns.reason === 'network' && dns.domain === NO_SUCH_HOST &&
    !dns.popupLeftOpen, `no such host: discovery/network (${said(dns)})`);
  const t0 = Date.now();
  const slow = await attempt(page, { email: 'bob@slow.test', hosts: { 'slow.test': servers.slow.origin },
    discoveryTimeout: SHORT_MS });
  const took = Date.now() - t0;
  t.check(slow.code === 'discovery' && slow.reason === 'timeout' && slow.domain === 'slow.test' &&
    !slow.popupLeftOpen && took < 5000, `slow support document: discovery/timeout in ${took} ms (${said(slow)})`);
  const bad = await attempt(page, { email: 'bob@slow.test', discoveryTimeout: 50 });
  t.check(bad.code === 'input' && /discoveryTimeout/.test(bad.message) && !bad.popupLeftOpen,
    `discoveryTimeout out of bounds: input (${said(bad)})`);
}

async function cspFailure(t, page, servers) {
  await page.goto(servers.site.origin + '/csp');
  const r = await attempt(page, { email: 'bob@broken.test', hosts: { 'broken.test': servers.noKey.origin } });
  t.check(r.code === 'discovery' && r.reason === 'csp' && !r.popupLeftOpen,
    `support document refused by the page's CSP: discovery/csp (${said(r)})`);
  await page.goto(servers.site.origin + '/');
}

/* The popup never reaches a /share page that answers: unreachable, popup
 * closed, without waiting for the user. */
async function unreachable(t, page, servers) {
  const port = await closedPort();
  for (const [what, authority] of [['down', `http://127.0.0.1:${port}`],
    ['not an authority', servers.missing.origin]]) {
    const t0 = Date.now();
    const r = await attempt(page, { email: ALICE, authority, readyTimeout: SHORT_MS * 2 });
    t.check(r.code === 'unreachable' && !r.popupLeftOpen && Date.now() - t0 < 8000,
      `authority ${what}: unreachable, popup closed by rp.js in ${Date.now() - t0} ms (${said(r)})`);
  }
}

async function closed(t, page, servers) {
  // During a slow discovery: at once, not when discovery gives up.
  const t0 = Date.now();
  const r = await attempt(page, { email: 'bob@slow.test', hosts: { 'slow.test': servers.slow.origin } },
    async (popup) => { await popup.close(); });
  t.check(r.code === 'closed' && Date.now() - t0 < 5000,
    `popup closed during discovery: closed in ${Date.now() - t0} ms (${said(r)})`);
  const r2 = await attempt(page, { email: ALICE, authority: c.origin }, async (popup) => {
    await popup.waitForSelector('#confirm-step:not([hidden])', { timeout: STEP_MS });
    await popup.close();
  });
  t.check(r2.code === 'closed', `popup closed at the confirmation: closed (${said(r2)})`);
}

/* Discovery through opts.hosts, the demo's own support document, and
 * through a delegation served by another server; then cancel. */
async function discovered(t, page, servers) {
  const share = async (popup) => {
    await popup.waitForSelector('#confirm-step:not([hidden])', { timeout: STEP_MS });
    await c.clickClosing(popup, '#share');
  };
  const direct = await attempt(page, { email: ALICE, hosts: { 'example.test': c.origin } }, share);
  t.check(typeof direct.assertion === 'string' && certEmail(direct.assertion) === ALICE,
    `opts.hosts: discovery at the demo, assertion for ${ALICE} (${said(direct).slice(0, 200)})`);
  const deleg = await attempt(page, { email: ALICE, hosts: { 'example.test': servers.delegate.origin,
    'login.test': c.origin } }, share);
  t.check(typeof deleg.assertion === 'string' && certEmail(deleg.assertion) === ALICE,
    `opts.hosts: delegation followed to the demo (${said(deleg).slice(0, 200)})`);
  const cancelled = await attempt(page, { email: ALICE, authority: c.origin }, async (popup) => {
    await popup.waitForSelector('#confirm-step:not([hidden])', { timeout: STEP_MS });
    await c.clickClosing(popup, '#cancel');
  });
  t.check(cancelled.code === 'cancelled', `cancel in the popup: cancelled (${said(cancelled)})`);
}

/* Signed in as alice, the website asks for bob: the popup says so and
 * offers to sign in as bob; signing in as alice again leads back there. */
async function otherAddress(t, page) {
  const BOB = 'bob@example.test';
  const log = [];
  const r = await attempt(page, { email: BOB, authority: c.origin }, async (popup) => {
    c.watch(popup, log);
    await popup.waitForSelector('#other-step:not([hidden])', { timeout: STEP_MS });
    t.check(await popup.textContent('#other-want') === BOB && await popup.textContent('#other-have') === ALICE,
      'signed in as another address: the popup names both');
    t.check(await c.fitsNarrow(popup), 'another address: fits 375 px');
    await c.shots(popup, 'share-other-address');
    await popup.click('#other-signin');
    await popup.waitForSelector('#signin-step:not([hidden])', { timeout: STEP_MS });
    t.check(await popup.inputValue('#email') === BOB, 'another address: sign-in offered for the address asked');
    await popup.fill('#email', ALICE);
    await popup.fill('#password', 'wonderland');
    await popup.click('#signin button[type=submit]');
    await popup.waitForSelector('#other-step:not([hidden])', { timeout: STEP_MS });
    t.check(true, 'another address: signing in as alice anyway leads back to the mismatch, not to sharing');
    await c.clickClosing(popup, '#other-cancel');
  });
  t.check(r.code === 'cancelled' && log.length === 0,
    `another address, cancelled: cancelled (${said(r)} ${log.join('; ')})`);
}

/* An authority that answers for another address than asked. */
async function wrongEmail(t, page, servers) {
  const fake = servers.fake.origin;
  const r = await attempt(page, { email: 'bob@example.test', authority: fake });
  t.check(r.code === 'wrong_email' && r.email === ALICE && !r.assertion,
    `assertion for another address: wrong_email naming it (${said(r)})`);
  const local = await attempt(page, { email: 'Alice@example.test', authority: fake });
  t.check(local.code === 'wrong_email', `local part compared exactly: wrong_email (${said(local)})`);
  const dom = await attempt(page, { email: 'alice@EXAMPLE.test', authority: fake });
  t.check(typeof dom.assertion === 'string', `domain compared case-insensitively: accepted (${said(dom)})`);
}

async function served(t) {
  const r = await new Promise((resolve, reject) => {
    http.get(c.origin + '/rp.d.ts', (res) => {
      let body = '';
      res.on('data', (x) => { body += x; });
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body }));
    }).on('error', reject);
  });
  t.check(r.status === 200 && /^text\/plain/.test(r.type) && /interface VepRP/.test(r.body),
    `rp.d.ts served as text (${r.status} ${r.type})`);
}

/* The example page of README.md ("A website"), its script and its CSP,
 * with the demo as the authority: {page, js, csp}. */
function readmeExample(authority) {
  const text = require('fs').readFileSync(require('path').join(__dirname, '..', '..', 'README.md'), 'utf8');
  const block = (from, to) => {
    const a = text.indexOf(from);
    const b = text.indexOf(to, a);
    return text.slice(a + from.length, b).split('\n').filter((l) => /^ {4}|^$/.test(l))
      .map((l) => l.slice(4)).join('\n').trim().replace(/https:\/\/login\.example\.com/g, authority);
  };
  const csp = /served with\s+`Content-Security-Policy: ([^`]+)`/.exec(text);
  return { page: block("connect-src 'self' https:`:", 'with `/sign-in.js`:'),
    js: block('with `/sign-in.js`:', 'Your server'),
    csp: csp && csp[1].replace(/\s+/g, ' ').replace(/https:\/\/login\.example\.com/g, authority) };
}

/* README.md's example page, served under its CSP: it loads, and an
 * address whose domain has no host gets the page's own message. */
async function example(t, ctx) {
  const ex = readmeExample(c.origin);
  t.check(ex.csp && /<form id="signin">/.test(ex.page) && /vepRP\.request/.test(ex.js),
    `README example found (${ex.csp})`);
  const s = await serve((req, res) => {
    const js = req.url === '/sign-in.js';
    res.writeHead(200, { 'Content-Type': js ? 'text/javascript' : 'text/html; charset=utf-8',
      'Content-Security-Policy': ex.csp });
    res.end(js ? ex.js : ex.page);
  });
  const log = [];
  const page = c.watch(await ctx.newPage(), log);
  try {
    await page.goto(s.origin + '/');
    await page.fill('#email', 'bob@' + NO_SUCH_HOST);
    await page.click('button');
    await page.waitForFunction(() => document.getElementById('error').textContent !== '', null,
      { timeout: STEP_MS });
    const text = await page.textContent('#error');
    t.check(text === `Cannot find the sign-in service of ${NO_SUCH_HOST} (network).` && log.length === 0,
      `README example: runs under its CSP, reports discovery (${text} ${log.join('; ')})`);
  } finally {
    await page.close();
    await stop(s);
  }
}

async function startServers() {
  const json = 'application/json';
  const delay = (req, res) => { setTimeout(() => doc(200, json, '{}')(req, res), 20000); };
  const s = {};
  const defs = {
    missing: doc(404, 'text/plain', 'not found'),
    noCors: doc(200, json, '{"disabled":true}', false),
    html: doc(200, 'text/html', '<html></html>'),
    badJson: doc(200, json, '{"public-key": '),
    redirect: (req, res) => {
      res.writeHead(302, { Location: '/elsewhere', 'Access-Control-Allow-Origin': '*' });
      res.end();
    },
    redirectNoCors: (req, res) => { res.writeHead(302, { Location: '/elsewhere' }); res.end(); },
    disabled: doc(200, json, '{"disabled":true}'),
    loop: doc(200, json, '{"authority":"loop.test"}'),
    noKey: doc(200, 'application/json; charset=utf-8', '{"authentication":"/x"}'),
    delegate: doc(200, json, '{"authority":"login.test"}'),
    slow: delay,
  };
  for (const [name, h] of Object.entries(defs)) s[name] = await serve(h);
  s.fake = await fakeAuthority();
  s.site = await website(c.origin);
  return s;
}

(async () => {
  const t = c.interop.reporter();
  const d = await c.startDemo();
  Object.assign(c, { origin: d.origin });
  const servers = await startServers();
  const browser = await c.launch([`--host-resolver-rules=MAP ${NO_SUCH_HOST} ~NOTFOUND`]);
  try {
    await served(t);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await signIn(ctx);
    const page = await ctx.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(servers.site.origin + '/');
    const none = await attempt(page, { email: 'nobody' });
    t.check(none.code === 'input' && !none.popupLeftOpen, `no address: input (${said(none)})`);
    await discoveryFailures(t, page, servers);
    await cspFailure(t, page, servers);
    await unreachable(t, page, servers);
    await closed(t, page, servers);
    await discovered(t, page, servers);
    await otherAddress(t, page);
    await wrongEmail(t, page, servers);
    await example(t, ctx);
    t.check(errors.length === 0, `the website: no script errors (${errors.join('; ')})`);
  } finally {
    await browser.close();
    for (const s of Object.values(servers)) await stop(s);
    const st = await c.stopDemo(d);
    t.check(st.code === 0 && !st.sanitizer, `server: clean exit (${st.code})`);
  }
  t.done();
})().catch((e) => { console.error(e); process.exit(1); });
