/*
 * test_examples.js - the README's server-side examples (examples/), each
 * run against the real vep-authority --demo: Python (rp-python/server.py)
 * and Node (rp-node/server.js) verifying through the authority's
 * POST /verify, and C (rp-c/verify.c, rp-verify, libvep directly) run per
 * request by a small web server of this test's, as a CGI would be. For
 * each: a sign-in in real Chromium on the example's own origin (its page
 * loads the authority's rp.js), accepted with the right address; the same
 * assertion posted again is refused by the example's own replay record; a
 * tampered one is refused. Then: an assertion made for one example is
 * refused by another, and the two /verify clients refuse a verifier that
 * answers other than 200 with JSON, or okay for another audience.
 */
'use strict';
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const c = require('./common.js');

const ALICE = 'alice@example.test';
const EXAMPLES = path.join(__dirname, '..', '..', 'examples');
const RP_VERIFY = process.env.VEP_RP_VERIFY;
const WAIT_MS = 30000;

/* Starts an example server; resolves {proc, origin} once it says where. */
function startServer(argv) {
  return new Promise((resolve, reject) => {
    const proc = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = ''; let err = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error('no address: ' + err)); },
      WAIT_MS);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ proc, origin: m[1], stderr: () => err }); }
    });
    proc.stderr.on('data', (d) => { err += d; });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${argv[1]} exited ${code}: ${err}`)); });
  });
}

function stopServer(s) {
  s.proc.removeAllListeners('exit');
  s.proc.kill('SIGTERM');
}

const python = (authority) => startServer(['python3', path.join(EXAMPLES, 'rp-python', 'server.py'),
  '--authority', authority, '--listen', '127.0.0.1:0']);
const node = (authority) => startServer([process.execPath, path.join(EXAMPLES, 'rp-node', 'server.js'),
  '--authority', authority, '--listen', '127.0.0.1:0']);

function listen(srv) {
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}

function readAll(stream) {
  return new Promise((resolve) => {
    let s = '';
    stream.on('data', (d) => { s += d; });
    stream.on('end', () => resolve(s));
  });
}

/* Runs rp-verify as a web server would for one request: the assertion on
 * standard input; resolves {code, out, err}. */
function runVerify(args, assertion) {
  const p = spawn(RP_VERIFY, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const out = readAll(p.stdout); const err = readAll(p.stderr);
  p.stdin.end(assertion);
  return new Promise((resolve) => p.on('close', async (code) =>
    resolve({ code, out: (await out).trim(), err: (await err).trim() })));
}

/* The web server in front of rp-verify: the example site's page, and
 * POST /sign-in run through the program (exit 0 signed in, 1 refused,
 * else 503). The support document is fetched once, as a cron job would. */
async function cgiSite(d, dir) {
  const doc = path.join(dir, 'browserid.json');
  const r = await post(d.origin + '/.well-known/browserid?domain=example.test', null, 'GET');
  fs.writeFileSync(doc, r.body);
  const page = fs.readFileSync(path.join(EXAMPLES, 'site', 'index.html'), 'utf8')
    .replace(/\{\{AUTHORITY\}\}/g, d.origin);
  const script = fs.readFileSync(path.join(EXAMPLES, 'site', 'sign-in.js'), 'utf8');
  const site = { runs: [] };
  const srv = http.createServer(async (req, res) => {
    const reply = (status, type, body) => { res.writeHead(status, { 'Content-Type': type }); res.end(body); };
    if (req.url === '/') return reply(200, 'text/html', page);
    if (req.url === '/sign-in.js') return reply(200, 'text/javascript', script);
    let assertion = '';
    try { assertion = JSON.parse(await readAll(req)).assertion; } catch (e) { /* refused below */ }
    const v = await runVerify(['--audience', site.origin, '--domain', 'example.test',
      '--support-doc', doc, '--seen', path.join(dir, 'seen')], String(assertion));
    site.runs.push(v);
    const [status, o] = v.code === 0 ? [200, { email: v.out }]
      : v.code === 1 ? [401, { error: v.err.replace(/^rp-verify: refused: /, '') }]
        : [503, { error: 'cannot sign in now' }];
    reply(status, 'application/json', JSON.stringify(o));
  });
  await listen(srv);
  site.origin = `http://127.0.0.1:${srv.address().port}`;
  site.srv = srv;
  return site;
}

/* POSTs {"assertion"} (or GETs); resolves {status, body, json}. */
function post(url, assertion, method) {
  return new Promise((resolve, reject) => {
    const body = assertion === null ? '' : JSON.stringify({ assertion });
    const req = http.request(url, { method: method || 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      let s = '';
      res.on('data', (x) => { s += x; });
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(s); } catch (e) { /* not JSON */ }
        resolve({ status: res.statusCode, body: s, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/* Signs in on the example's page in Chromium; resolves the assertion the
 * page posted and what the page then showed. */
async function browserSignIn(t, ctx, label, origin) {
  const log = [];
  const page = c.watch(await ctx.newPage(), log);
  await page.goto(origin + '/');
  await page.fill('#email', ALICE);
  const posted = page.waitForRequest((r) => r.url() === origin + '/sign-in' && r.method() === 'POST',
    { timeout: WAIT_MS });
  const [popup] = await Promise.all([page.waitForEvent('popup'), page.click('#go')]);
  c.watch(popup, log);
  await popup.waitForSelector('#signin-step:not([hidden]), #confirm-step:not([hidden])', { timeout: WAIT_MS });
  if (await popup.isVisible('#signin-step')) {
    await popup.fill('#password', 'wonderland');
    await popup.click('#signin button[type=submit]');
    await popup.waitForSelector('#confirm-step:not([hidden])', { timeout: WAIT_MS });
  }
  t.check((await popup.textContent('#confirm-step .lead')).includes(origin),
    `${label}: the authority's popup names the example's site (${origin})`);
  await popup.click('#share');
  const assertion = (await posted).postDataJSON().assertion;
  await page.waitForFunction(() => document.getElementById('result').textContent !== '', null,
    { timeout: WAIT_MS });
  const shown = await page.textContent('#result');
  await c.shots(page, `example-${label}`);
  t.check(log.length === 0, `${label}: no script errors or CSP violations (${log.join('; ')})`);
  await page.close();
  return { assertion, shown };
}

/* The assertion with one character of its signature changed. */
function tamper(a) {
  const i = a.length - 20;
  return a.slice(0, i) + (a[i] === 'A' ? 'B' : 'A') + a.slice(i + 1);
}

async function journey(t, ctx, label, origin) {
  const { assertion, shown } = await browserSignIn(t, ctx, label, origin);
  t.check(shown === `Signed in as ${ALICE}`, `${label}: accepted, the right address (${shown})`);
  const again = await post(origin + '/sign-in', assertion);
  t.check(again.status === 401 && /replay/.test(again.json && again.json.error),
    `${label}: the same assertion again refused as a replay (${again.status} ${again.body})`);
  const bad = await post(origin + '/sign-in', tamper(assertion));
  t.check(bad.status === 401 && !/replay/.test(bad.json && bad.json.error),
    `${label}: a tampered assertion refused (${bad.status} ${bad.body})`);
  return assertion;
}

/* The /verify clients take nothing but a 200 JSON "okay" for their own
 * origin: a pretend verifier answers each of the cases in turn. */
async function distrust(t, start, label) {
  let answer = null;
  const fake = await listen(http.createServer((req, res) => {
    req.resume();
    res.writeHead(answer.status, { 'Content-Type': 'application/json', Location: '/elsewhere' });
    res.end(answer.body);
  }));
  const ex = await start(`http://127.0.0.1:${fake.address().port}`);
  const okayFor = (aud) => JSON.stringify({ status: 'okay', email: ALICE, audience: aud,
    expires: Date.now() + 60000, issuer: 'example.test' });
  const cases = [
    ['"okay" with HTTP 500', 500, okayFor(ex.origin), 503],
    ['"okay" with a redirect', 307, okayFor(ex.origin), 503],
    ['200 that is not JSON', 200, '<html>okay</html>', 503],
    ['"okay" for another audience', 200, okayFor('http://other.example'), 401],
  ];
  for (const [what, status, body, want] of cases) {
    answer = { status, body };
    const r = await post(ex.origin + '/sign-in', 'a~b.c.d');
    t.check(r.status === want && r.json && typeof r.json.error === 'string' && !r.json.email,
      `${label}: a verifier's ${what} is no sign-in (${r.status} ${r.body})`);
  }
  stopServer(ex);
  fake.close();
}

(async () => {
  const t = c.interop.reporter();
  const t0 = Date.now();
  const d = await c.startDemo();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vep-examples.'));
  const browser = await c.launch();
  const servers = [];
  let cgi = null;
  try {
    const py = await python(d.origin); servers.push(py);
    const js = await node(d.origin); servers.push(js);
    cgi = await cgiSite(d, dir);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const a = await journey(t, ctx, 'python', py.origin);
    await journey(t, ctx, 'node', js.origin);
    await journey(t, ctx, 'c', cgi.origin);
    const seen = fs.readFileSync(path.join(dir, 'seen'), 'utf8').trim().split('\n');
    t.check(seen.length === 1 && /^\d+ [0-9a-f]{64}$/.test(seen[0]) &&
      (fs.statSync(path.join(dir, 'seen')).mode & 0o077) === 0,
    `c: the replay record holds the one accepted assertion, private (${seen.length} lines)`);
    t.check(cgi.runs.every((r) => !r.err.includes(a.slice(0, 40)) && !r.out.includes(a.slice(0, 40))),
      'c: rp-verify never prints the assertion');
    const cross = await post(js.origin + '/sign-in', a);
    t.check(cross.status === 401 && !/replay/.test(cross.json && cross.json.error),
      `an assertion made for the Python example is refused by the Node one (${cross.body})`);
    const crossC = await runVerify(['--audience', cgi.origin, '--domain', 'example.test',
      '--support-doc', path.join(dir, 'browserid.json'), '--seen', path.join(dir, 'seen')], a);
    t.check(crossC.code === 1 && /audience/.test(crossC.err), `... and by the C one (${crossC.err})`);
    const other = await runVerify(['--audience', py.origin, '--domain', 'example.com',
      '--support-doc', path.join(dir, 'browserid.json'), '--seen', path.join(dir, 'seen2')], a);
    t.check(other.code === 1 && /domain/.test(other.err),
      `c: an address of another domain than the site's is refused (${other.err})`);
    await distrust(t, python, 'python');
    await distrust(t, node, 'node');
    t.check(servers.every((s) => !s.stderr().includes(a.slice(0, 40))),
      'the example servers never log the assertion');
    await ctx.close();
  } finally {
    servers.forEach(stopServer);
    if (cgi) cgi.srv.close();
    await browser.close();
    const st = await c.stopDemo(d);
    t.check(st.code === 0 && !st.sanitizer, `server: clean exit (${st.code})`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  t.done();
})().catch((e) => { console.error(e); process.exit(1); });
