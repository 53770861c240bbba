/*
 * test_verdicts.js - Mozilla's signer made the fixtures; vep-keytool's
 * verify-assertion and verify-cert must reach the same verdict as Mozilla's
 * verifier (browserid-local-verify, fed the support document through its
 * httpRequest option) on every one (and, when valid, verify-assertion
 * --json the same email, audience, expires and issuer), and that verdict
 * must be the expected one; except where a fixture says libvep's verdict legitimately differs
 * (ours: within the clock skew, and a few audiences, docs/PROTOCOL.md),
 * which is then checked.
 */
'use strict';
const fs = require('fs');
const path = require('path');
const c = require('./common.js');
const { generate, DOMAIN } = require('./gen-fixtures.js');

(async () => {
  const t = c.reporter();
  const dir = c.tmpdir();
  const g = await generate();
  const docFile = path.join(dir, 'doc.json');
  fs.writeFileSync(docFile, g.doc);
  for (const [i, f] of g.fixtures.entries()) {
    const bf = path.join(dir, `b${i}`); const cf = path.join(dir, `c${i}`);
    fs.writeFileSync(bf, f.backed);
    fs.writeFileSync(cf, f.cert);
    const at = f.at !== undefined ? ['--at', String(f.at)] : [];
    const moz = await c.mozVerify(f.backed, f.audience,
      { docs: { [DOMAIN]: g.doc, 'evil.example': g.doc }, now: f.at });
    const kt = c.keytool(['verify-assertion', '--audience', f.audience, '--support-doc', docFile, ...at, bf]);
    const ktc = c.keytool(['verify-cert', '--support-doc', docFile, ...at, cf]);
    const why = ` (mozilla: ${moz.ok ? 'valid' : moz.err}; keytool: ${kt.code} ${kt.stderr.trim()})`;
    t.check(moz.ok === f.valid, `${f.name}: mozilla says ${f.valid ? 'valid' : 'invalid'}` + why);
    if (f.ours === undefined) {
      t.check((kt.code === 0) === moz.ok && (kt.code === 0 || kt.code === 1),
        `${f.name}: verify-assertion agrees with mozilla` + why);
      if (moz.ok) {
        t.check(kt.stdout.trim() === moz.email, `${f.name}: same email`);
        // --json: the fields of POST /verify's answer, as Mozilla's verifier gives them.
        const kj = c.keytool(['verify-assertion', '--json', '--audience', f.audience, '--support-doc', docFile, ...at, bf]);
        let o = null;
        try { o = JSON.parse(kj.stdout); } catch (e) { /* reported below */ }
        const want = { status: 'okay', email: moz.email, audience: moz.audience, expires: moz.expires, issuer: moz.issuer };
        t.check(kj.code === 0 && JSON.stringify(o) === JSON.stringify(want),
          `${f.name}: verify-assertion --json gives mozilla's fields (${kj.stdout.trim()} vs ${JSON.stringify(want)})`);
      }
    } else {
      // A documented difference (docs/PROTOCOL.md: the clock skew, the
      // audience table): ours is libvep's verdict.
      t.check(kt.code === (f.ours ? 0 : 1), `${f.name}: verify-assertion says ${f.ours ? 'valid' : 'invalid'}, `
        + `where mozilla says ${f.valid ? 'valid' : 'invalid'}` + why);
    }
    t.check(ktc.code === (f.certValid ? 0 : 1), `${f.name}: verify-cert says ${f.certValid ? 'valid' : 'invalid'} (${ktc.stderr.trim()})`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  t.done();
})().catch((e) => { console.error(e); process.exit(1); });
