/*
 * common.js - shared by the browser tests: the real vep-authority --demo on
 * a free port of 127.0.0.1 (with its demo relying party), Debian's chromium through
 * playwright-core, screenshots at the two widths, and the interop tests'
 * access to Mozilla's verifier.
 */
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnPrivateTmp } = require('../private-tmp.js');

const HERE = __dirname;
const CHROMIUM = process.env.VEP_CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(path.join(HERE, 'node_modules', 'playwright-core', 'package.json')) ||
    !fs.existsSync(CHROMIUM)) {
  console.log('playwright-core or chromium missing (run tests/browser/setup.sh): skipping');
  process.exit(77);
}
const { chromium } = require('playwright-core');
const interop = require('../interop/common.js');

const AUTHORITY = process.env.VEP_AUTHORITY;
const ARTIFACTS = process.env.VEP_ARTIFACTS || path.join(os.tmpdir(), 'vep-screenshots');
const START_TIMEOUT_MS = 30000;
const WIDTHS = [375, 1280];

/* A port P with P + 1 free too, on 127.0.0.1 (the demo website listens on
 * the port after the authority's). */
function freePortPair() {
  const net = require('net');
  const listen = (port) => new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(null));
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
  const close = (s) => new Promise((resolve) => (s ? s.close(() => resolve()) : resolve()));
  return (async () => {
    for (;;) {
      const a = await listen(0);
      const p = a.address().port;
      const b = p < 65535 ? await listen(p + 1) : null;
      await close(a);
      await close(b);
      if (b) return p;
    }
  })();
}

/* Starts vep-authority --demo on a port P it picks, its demo website on
 * P + 1 and, as scripts/demo does, that website's origin as the explicit
 * embed_origins, followed by opts.embedMore (extraArgs come after, so a
 * test's own --set wins). Resolves {proc, origin, rpOrigin, port, state,
 * stderr()}; tries again when another process took a port meanwhile. */
async function startDemo(extraArgs, opts) {
  const more = (opts && opts.embedMore) || [];
  for (let attempt = 1; ; attempt++) {
    const port = await freePortPair();
    try {
      return await startDemoOn(port, ['--set', 'embed_origins=' +
        [`http://127.0.0.1:${port + 1}`].concat(more).join(' ')].concat(extraArgs || []));
    } catch (e) {
      if (attempt >= 5 || !/cannot listen/.test(e.message)) throw e;
    }
  }
}

function startDemoOn(port, args) {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'vep-browser.'));
  return new Promise((resolve, reject) => {
    const proc = spawnPrivateTmp([AUTHORITY, '--demo', '--state', path.join(state, 's'),
      '--listen', `127.0.0.1:${port}`].concat(args), [state], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = ''; let err = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error('no address: ' + err)); },
      START_TIMEOUT_MS);
    proc.stdout.on('data', (d) => {
      out += d;
      const a = /listening on (http:\/\/[0-9.]+:(\d+))/.exec(out);
      const b = /demo relying party on (http:\/\/[0-9.:]+)/.exec(out);
      if (a && b) {
        clearTimeout(timer);
        resolve({ proc, origin: a[1], port: Number(a[2]), rpOrigin: b[1],
          state: path.join(state, 's'), stderr: () => err });
      }
    });
    proc.stderr.on('data', (d) => { err += d; });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`exited ${code}: ${err}`)); });
  });
}

/* Stops it; resolves the exit code (and reports sanitizer output). */
function stopDemo(d) {
  return new Promise((resolve) => {
    d.proc.removeAllListeners('exit');
    d.proc.on('exit', (code) => resolve({ code,
      sanitizer: /AddressSanitizer|LeakSanitizer|runtime error:/.test(d.stderr()) }));
    d.proc.kill('SIGTERM');
  });
}

/* Chromium headless; extraArgs (optional) are more command-line flags. */
function launch(extraArgs) {
  return chromium.launch({ executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage'].concat(extraArgs || []) });
}

/* Watches a page for script errors and CSP violations. */
function watch(page, log) {
  page.on('pageerror', (e) => log.push('pageerror: ' + e.message));
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/.test(m.text())) log.push('csp: ' + m.text());
  });
  return page;
}

/* Saves the page at 375 and 1280 px wide (full page), then restores 1280. */
/* Clicks a button whose handler closes the page at once (window.close()
 * inside the click): Playwright's click would still be waiting on the page
 * when it goes ("Target page, context or browser has been closed"). The
 * click is dispatched from a task of the page's own, so the evaluation has
 * returned before the page closes; then waits for the close. */
async function clickClosing(page, selector) {
  await page.waitForSelector(selector, { state: 'visible' });
  const closed = page.waitForEvent('close');
  await page.$eval(selector, (b) => { setTimeout(() => b.click(), 0); });
  await closed;
}

async function shots(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  for (const w of WIDTHS) {
    await page.setViewportSize({ width: w, height: w < 600 ? 740 : 800 });
    await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${w}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

/* 1 when nothing on the page is wider than the viewport at 375 px. */
async function fitsNarrow(page) {
  await page.setViewportSize({ width: 375, height: 740 });
  const ok = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  await page.setViewportSize({ width: 1280, height: 800 });
  return ok;
}

/* A second factor for the demo's account: rewrites the PAM service the
 * demo wrote in its state directory (libpam reads it at every sign-in) to
 *   auth requisite pam_matrix (the password, as before)
 *   auth optional  pam_echo   (a note, PAM_TEXT_INFO, after the password)
 *   auth required  pam_oath   (a TOTP code: HOTP/T30/6, window=20)
 *   account required pam_matrix
 * with Debian's libpam-oath and oathtool (VEP_APT_TEST). Returns {code(),
 * wrong(), note, stack(opts), testModule}: code() is the code of a time
 * step never used before (pam_oath refuses a step at or before the last one
 * used), wrong() a 6-digit code that no step of the window has;
 * stack({oath, more, account}) writes another variant: oath false leaves
 * pam_echo and pam_oath out, more are auth lines after them, account the
 * account line. testModule is tests/pam's pam_vep_test.so
 * (VEP_PAM_TEST_MODULE), or null. Exits 77 (skip, which scripts/test counts
 * as a failure) when pam_oath.so, pam_echo.so or oathtool is missing. */
const OATH_KEY = '3132333435363738393031323334353637383930';
function oathStack(d) {
  const { execFileSync } = require('child_process');
  const dir = path.join(d.state, 'pam');
  const service = fs.readdirSync(dir).find((f) => f !== 'passdb' && !f.startsWith('oath'));
  const text = fs.readFileSync(path.join(dir, service), 'utf8');
  const m = /^auth\s+required\s+(\S+\/pam_wrapper\/pam_matrix\.so)\s+(passdb=\S+)$/m.exec(text);
  if (!m) throw new Error('unexpected demo PAM stack: ' + text);
  const libdir = path.dirname(path.dirname(m[1]));
  const module = (name) => [path.join(libdir, 'security', name), path.join('/lib',
    path.basename(libdir), 'security', name)].find((f) => fs.existsSync(f));
  const oath = module('pam_oath.so');
  const echo = module('pam_echo.so');
  let hasTool = true;
  try { execFileSync('oathtool', ['--version'], { stdio: 'ignore' }); } catch (e) { hasTool = false; }
  if (!oath || !echo || !hasTool) {
    console.log('pam_oath, pam_echo or oathtool missing (apt-get install libpam-oath oathtool): skipping');
    process.exit(77);
  }
  const users = path.join(dir, 'oath-users');
  fs.writeFileSync(users, `HOTP/T30/6 alice - ${OATH_KEY}\n`, { mode: 0o600 });
  const note = 'Open your authenticator app: <b>not bold</b>';
  const matrix = `${m[1]} ${m[2]}`;
  function stack(opts) {
    const o = Object.assign({ oath: true, more: [], account: `account required ${matrix}` }, opts);
    const lines = [`auth requisite ${matrix}`].concat(o.oath ? [
      `auth optional ${echo} ${note}`,
      `auth required ${oath} usersfile=${users} window=20`] : [], o.more, [o.account, '']);
    fs.writeFileSync(path.join(dir, service), lines.join('\n'), { mode: 0o600 });
  }
  stack();
  const totp = (step, extra) => execFileSync('oathtool', ['--totp', '-d', '6',
    '-N', '@' + step * 30].concat(extra || [], [OATH_KEY]), { encoding: 'utf8' }).split('\n')
    .filter(Boolean);
  const now = () => Math.floor(Date.now() / 30000);
  let last = 0;
  const testModule = process.env.VEP_PAM_TEST_MODULE;
  return {
    note,
    stack,
    testModule: testModule && fs.existsSync(testModule) ? testModule : null,
    code() {
      last = Math.max(now(), last + 1);
      return totp(last)[0];
    },
    wrong() {
      const valid = new Set(totp(now() - 25, ['-w', '50']));
      for (let i = 0; ; i++) {
        const w = String(i * 111111 % 1000000).padStart(6, '0');
        if (!valid.has(w)) return w;
      }
    },
  };
}

module.exports = { startDemo, stopDemo, launch, watch, shots, fitsNarrow, interop, clickClosing,
  oathStack, ARTIFACTS };
