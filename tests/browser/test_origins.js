/*
 * test_origins.js - where the authority's pages let other origins in, in
 * real Chromium against the real vep-authority --demo:
 *   - /sign-in?return= never leaves the authority's origin, whatever the
 *     URL parser does with tabs, CR, LF, backslashes and percent-encoding
 *     (signed in already, and after signing in with the form); a path of
 *     this origin, query included, still works;
 *   - /embed works for a webmail origin in embed_origins, and from any
 *     other origin the browser refuses to frame it (Content-Security-Policy)
 *     and the page itself neither answers nor takes a password;
 *   - without shim_origin the legacy authentication page is a plain
 *     sign-in page.
 */
'use strict';
const http = require('http');
const c = require('./common.js');

const ALICE = 'alice@example.test';
const WAIT_MS = 6000;

/* A pretend webmail on its own origin: /frame frames the authority's
 * /embed (?auth=, ?origin= else its own), answers "vep:ready" with the
 * credentials of ?email= and ?pw=, and with ?blind=1 posts them as soon as
 * the frame loads, without waiting to be asked. window.got lists what the
 * frame sent. */
const WEBMAIL = `<!doctype html><html><head><meta charset="utf-8"><title>webmail</title></head>
<body><p>another webmail</p><script>
window.got = [];
const q = new URLSearchParams(location.search);
const auth = q.get('auth');
const f = document.createElement('iframe');
f.src = auth + '/embed?origin=' + encodeURIComponent(q.get('origin') || location.origin);
const creds = { type: 'vep:provision', email: q.get('email'), password: q.get('pw') };
addEventListener('message', (ev) => {
  if (ev.source !== f.contentWindow) return;
  window.got.push({ origin: ev.origin, data: ev.data });
  if (ev.data && ev.data.type === 'vep:ready') f.contentWindow.postMessage(creds, auth);
});
if (q.get('blind')) f.onload = () => f.contentWindow.postMessage(creds, auth);
document.body.appendChild(f);
</script></body></html>`;

function serveWebmail() {
  const srv = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(WEBMAIL);
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let body = '';
      res.on('data', (x) => { body += x; });
      res.on('end', () => resolve({ status: res.statusCode, h: res.headers, body }));
    }).on('error', reject);
  });
}

/* Opens /sign-in?return=<query text as given> in a new tab of ctx (so
 * that no navigation a previous case started can cut in) and resolves the
 * URL the page went on to (or where it stayed). */
async function landing(ctx, log, d, query) {
  const page = c.watch(await ctx.newPage(), log);
  try {
    /* The page may go on before it has loaded: wait for the response only. */
    await page.goto(`${d.origin}/sign-in?return=${query}`, { waitUntil: 'commit' });
    await page.waitForURL((u) => u.pathname !== '/sign-in', { timeout: 15000, waitUntil: 'commit' });
  } catch (e) { /* stayed, or went somewhere unreachable: reported below */ }
  const u = page.url();
  // Let /account finish (it renews this browser's certificate) before the
  // tab goes; closing never waits for long.
  if (u.startsWith(d.origin + '/account')) {
    await page.waitForSelector('#signed-in:not([hidden]), #signed-out:not([hidden])',
      { timeout: 15000 }).catch(() => {});
  }
  await Promise.race([page.close({ runBeforeUnload: true }).catch(() => {}),
    new Promise((resolve) => setTimeout(resolve, 5000))]);
  return u;
}

async function signInForm(page) {
  await page.fill('#email', ALICE);
  await page.fill('#password', 'wonderland');
  await page.click('button[type=submit]');
}

async function openRedirect(t, browser, d) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const log = [];
  const page = c.watch(await ctx.newPage(), log);
  const rp = new URL(d.rpOrigin).host;   /* another origin that answers */
  const onOrigin = (u) => { try { return new URL(u).origin === d.origin; } catch (e) { return false; } };

  // After signing in with the form: a hostile ?return= ends on /account.
  await page.goto(`${d.origin}/sign-in?return=/%09/${rp}/x`);
  await signInForm(page);
  await page.waitForURL((u) => u.pathname !== '/sign-in', { timeout: 30000 }).catch(() => {});
  t.check(page.url() === `${d.origin}/account`,
    `return= with a tab, after signing in: stays on the authority (${page.url()})`);

  // Signed in already: the page goes on at once.
  const hostile = [
    ['tab', `/%09/${rp}/x`],
    ['CR', `/%0D/${rp}/x`],
    ['LF', `/%0A/${rp}/x`],
    ['CR LF', `/%0d%0a/${rp}/x`],
    ['tab before a backslash', `/%09%5C${rp}/x`],
    ['leading tab', `%09//${rp}/x`],
    ['backslash', `/%5C${rp}/x`],
    ['literal backslash', `/\\${rp}/x`],
    ['two backslashes', `%5C%5C${rp}/x`],
    ['backslash, slash', `%5C/${rp}/x`],
    ['every byte percent-encoded', encodeURIComponent(`/\t/${rp}/x`).replace(/\//g, '%2F')],
    ['scheme-relative', `//${rp}/x`],
    ['absolute', encodeURIComponent(`${d.rpOrigin}/x`)],
    ['absolute with a tab in the scheme', encodeURIComponent(`ht\ttp://${rp}/x`)],
    ['javascript:', 'javascript:alert(1)'],
    ['tab, a host by name', '/%09/other.example/x'],
  ];
  for (const [what, q] of hostile) {
    const u = await landing(ctx, log, d, q);
    t.check(u === `${d.origin}/account`, `return= ${what}: stays on the authority, /account (${u})`);
  }
  // Resolved on this origin, even when the path looks like a host.
  for (const [what, q] of [['dot segment before //', `/.//${rp}/x`], ['double-encoded tab', `/%2509/${rp}/x`]]) {
    const u = await landing(ctx, log, d, q);
    t.check(onOrigin(u) && new URL(u).pathname.endsWith(`${rp}/x`),
      `return= ${what}: a path of the authority (${u})`);
  }
  // A page of this origin, query and all.
  let u = await landing(ctx, log, d, encodeURIComponent('/account?x=1'));
  t.check(u === `${d.origin}/account?x=1`, `return= /account?x=1: goes there (${u})`);
  await page.goto(`${d.origin}/sign-in?email=${encodeURIComponent(ALICE)}&return=` +
    encodeURIComponent('/account?x=1'));
  await signInForm(page);
  await page.waitForURL((x) => x.pathname !== '/sign-in', { timeout: 30000 }).catch(() => {});
  t.check(page.url() === `${d.origin}/account?x=1`,
    `return= /account?x=1 after signing in with the form: goes there (${page.url()})`);
  t.check(log.length === 0, `sign-in: no script errors or CSP violations (${log.join('; ')})`);
  await closeSoon(ctx);
}

/* Closes ctx, never waiting long (a tab busy renewing a certificate can
 * hold it up). */
function closeSoon(ctx) {
  return Promise.race([ctx.close().catch(() => {}),
    new Promise((resolve) => setTimeout(resolve, 10000))]);
}

/* Frames /embed from the pretend webmail at origin (query: its own
 * parameters) in a fresh browser, waits up to waitMs for an answer past
 * "vep:ready"; resolves {got, frames, session, msgs}. */
async function frameEmbed(browser, d, origin, query, waitMs) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  const msgs = [];
  page.on('console', (m) => msgs.push(m.text()));
  await page.goto(`${origin}/frame?auth=${encodeURIComponent(d.origin)}&email=` +
    `${encodeURIComponent(ALICE)}&pw=wonderland&${query || ''}`);
  try {
    await page.waitForFunction(() => window.got.some((m) => m.data.type !== 'vep:ready'), null,
      { timeout: waitMs || WAIT_MS });
  } catch (e) { /* nothing came: the caller decides */ }
  await page.waitForTimeout(query && query.includes('blind') ? WAIT_MS : 0);
  const got = await page.evaluate(() => window.got);
  const frames = page.frames().map((f) => f.url());
  const auth = await ctx.newPage();
  await auth.goto(d.origin + '/account');
  const session = await auth.evaluate(() => window.vep.session().then((s) => (s ? s.email : null)));
  await auth.waitForSelector('#signed-in:not([hidden]), #signed-out:not([hidden])',
    { timeout: 30000 }).catch(() => {});
  await closeSoon(ctx);
  return { got, frames, session, msgs };
}

async function embed(t, browser, d, listed, unlisted) {
  const r = await get(d.origin + '/embed');
  const csp = r.h['content-security-policy'] || '';
  const anc = csp.split(';').map((x) => x.trim()).filter((x) => x.startsWith('frame-ancestors '));
  t.check(anc.length === 1 && anc[0] === `frame-ancestors ${d.rpOrigin} ${listed}`,
    `/embed: frame-ancestors is exactly embed_origins (${csp})`);
  t.check(r.body.includes(`<meta name="vep-embed-origins" content="${d.rpOrigin} ${listed}">`),
    '/embed: the page is told the same list');

  let x = await frameEmbed(browser, d, listed, '', 60000);
  t.check(x.got.length === 2 && x.got.every((m) => m.origin === d.origin) &&
    x.got[0].data.type === 'vep:ready' && x.got[1].data.type === 'vep:provisioned' &&
    x.got[1].data.email === ALICE, `a listed webmail origin: ready, then provisioned (${JSON.stringify(x.got)})`);
  t.check(x.session === ALICE, 'a listed webmail origin: the browser is signed in');

  x = await frameEmbed(browser, d, unlisted);
  t.check(x.got.length === 0, `an unlisted origin gets no answer (${JSON.stringify(x.got)})`);
  t.check(x.frames.some((u) => u.startsWith('chrome-error://')) &&
    !x.frames.some((u) => u.startsWith(d.origin)),
  `an unlisted origin cannot frame /embed: the browser refuses (${JSON.stringify(x.frames)})`);
  t.check(x.session === null, 'an unlisted origin: its password is never used');

  // Framed by a listed origin that names an unlisted one: the page itself
  // refuses, and ignores even a password posted without waiting to be asked.
  x = await frameEmbed(browser, d, listed, `origin=${encodeURIComponent(unlisted)}&blind=1`);
  t.check(x.got.length === 0 && x.frames.some((u) => u.startsWith(d.origin + '/embed')),
    `?origin= not in embed_origins: the framed page stays silent (${JSON.stringify(x.got)})`);
  t.check(x.session === null, '?origin= not in embed_origins: a password posted blindly is ignored');
  t.check(x.msgs.some((m) => m.includes('is not among the authority\'s embed_origins')),
    '?origin= not in embed_origins: the console says why');
}

async function noShim(t, browser, d) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const log = [];
  const page = c.watch(await ctx.newPage(), log);
  await page.goto(`${d.origin}/sign-in/authenticate?email=${encodeURIComponent(ALICE)}`);
  t.check(await page.inputValue('#email') === ALICE, 'no shim: the authentication page fills the address');
  await c.shots(page, 'legacy-authenticate-no-shim');
  await page.fill('#password', 'wonderland');
  await page.click('button[type=submit]');
  await page.waitForURL('**/account', { timeout: 30000 }).catch(() => {});
  t.check(page.url() === `${d.origin}/account`, `no shim: a plain sign-in page (${page.url()})`);
  t.check(log.length === 0, `no shim: no script errors or CSP violations (${log.join('; ')})`);
  await closeSoon(ctx);
}

(async () => {
  const t = c.interop.reporter();
  const a = await serveWebmail();
  const b = await serveWebmail();
  const listed = `http://127.0.0.1:${a.address().port}`;
  const unlisted = `http://127.0.0.1:${b.address().port}`;
  // embed_origins: the demo website and one more webmail; the other is
  // on no list.
  const d = await c.startDemo([], { embedMore: [listed] });
  const browser = await c.launch();
  try {
    await openRedirect(t, browser, d);
    await embed(t, browser, d, listed, unlisted);
    await noShim(t, browser, d);
  } finally {
    await browser.close();
    a.close();
    b.close();
    const st = await c.stopDemo(d);
    t.check(st.code === 0 && !st.sanitizer, `server: clean exit (${st.code})`);
  }
  t.done();
})().catch((e) => { console.error(e); process.exit(1); });
