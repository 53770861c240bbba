/*
 * rp_discover.js - rp.js in real Chromium finding an address's authority by
 * itself: a relying party page at https://RP loads rp.js and calls
 * vepRP.request({email}) with no authority given, so rp.js fetches
 * https://DOMAIN/.well-known/browserid (following "authority" delegation),
 * opens that authority's /share popup, where the user signs in and shares.
 * Driven by tests/integration/test_loginhost.py, which runs nginx with TLS
 * in front of the authority and of the relying party's page.
 *
 * usage: node rp_discover.js RP_ORIGIN EMAIL PASSWORD HOSTMAP SPKI
 *   HOSTMAP: "name=ADDR:PORT,..." (Chromium's --host-resolver-rules, so the
 *   names keep their https://name:443 origins); SPKI: base64 SHA-256 of the
 *   test server certificate's public key, the one certificate Chromium is
 *   told to accept (--ignore-certificate-errors-spki-list).
 * Prints {"ok":true,"assertion","authority"} or {"ok":false,"err"}; exit 0
 * either way, 77 when playwright-core or chromium is missing.
 */
'use strict';
const fs = require('fs');
const path = require('path');

const CHROMIUM = process.env.VEP_CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(path.join(__dirname, 'node_modules', 'playwright-core', 'package.json')) ||
    !fs.existsSync(CHROMIUM)) {
  console.log('playwright-core or chromium missing (run tests/browser/setup.sh): skipping');
  process.exit(77);
}
const { chromium } = require('playwright-core');

/* Each step's bound: generous, the machine is shared. */
const STEP_MS = 60000;

async function main() {
  const [rpOrigin, email, password, hostmap, spki] = process.argv.slice(2);
  const rules = hostmap.split(',').map((e) => {
    const [name, to] = e.split('=');
    return `MAP ${name}:443 ${to}`;
  }).join(', ');
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', `--host-resolver-rules=${rules}`,
      `--ignore-certificate-errors-spki-list=${spki}`] });
  const log = [];
  try {
    const ctx = await browser.newContext();
    const rp = await ctx.newPage();
    rp.on('pageerror', (e) => log.push('pageerror: ' + e.message));
    await rp.goto(rpOrigin + '/', { timeout: STEP_MS });
    await rp.fill('#email', email);
    const [popup] = await Promise.all([rp.waitForEvent('popup', { timeout: STEP_MS }),
      rp.click('#go')]);
    await popup.waitForSelector('#signin-step:not([hidden])', { timeout: STEP_MS });
    const authority = new URL(popup.url()).origin;
    await popup.fill('#password', password);
    await popup.click('#signin button[type=submit]');
    await popup.waitForSelector('#confirm-step:not([hidden])', { timeout: STEP_MS });
    await popup.click('#share');
    await rp.waitForFunction(() => window.result !== undefined, null, { timeout: STEP_MS });
    const result = await rp.evaluate(() => window.result);
    console.log(JSON.stringify(result.assertion ? { ok: true, assertion: result.assertion,
      authority } : { ok: false, err: result.error + ' ' + log.join('; ') }));
  } catch (e) {
    console.log(JSON.stringify({ ok: false, err: String(e) + ' ' + log.join('; ') }));
  } finally {
    await browser.close();
  }
}

main();
