/*
 * test_verify_endpoint.js - the authority's POST /verify (Persona's verifier
 * contract) against Mozilla's verifier on the same inputs. The fixtures are
 * made by Mozilla's signer (gen-fixtures.js) with a domain key that the real
 * vep-authority --demo then serves for example.test; every fixture, and a
 * few more (a chain, another domain's key, a domain not served, a retired
 * key), goes to /verify as a form and as JSON, and to browserid-local-verify
 * with the support document the server publishes. Both must reach the same
 * verdict, and on success the same email and issuer; /verify's answer must
 * have Persona's shape.
 */
'use strict';
const fs = require('fs');
const path = require('path');
const c = require('./common.js');
const { generate, DOMAIN, AUD } = require('./gen-fixtures.js');

const MIN = 60 * 1000;

/* POSTs body (text) with content type ctype to /verify: {status, json}. */
const post = (port, body, ctype) =>
  c.request(port, 'POST', '/verify', body, { 'Content-Type': ctype });

const asForm = (o) => new URLSearchParams(o).toString();

/* The payload of a JWS (the assertion part of a backed assertion). */
const payload = (jws) => JSON.parse(Buffer.from(jws.split('.')[1], 'base64url').toString());

/* Checks /verify's answers (form and JSON) to one case against Mozilla's,
 * or against ours where libvep deliberately differs (gen-fixtures.js). */
async function compare(t, port, httpRequest, name, backed, audience, ours) {
  const moz = await c.mozVerify(backed, audience, { httpRequest });
  const want = ours === undefined ? moz.ok : ours;
  const form = await post(port, asForm({ assertion: backed, audience }),
    'application/x-www-form-urlencoded');
  const json = await post(port, JSON.stringify({ assertion: backed, audience }), 'application/json');
  for (const [how, r] of [['form', form], ['json', json]]) {
    const j = r.json || {};
    const why = ` (mozilla: ${moz.ok ? 'valid' : moz.err}; /verify: ${JSON.stringify(j)})`;
    t.check(r.status === 200 && (j.status === 'okay' || j.status === 'failure'),
      `${name} (${how}): 200 with status okay or failure` + why);
    t.check((j.status === 'okay') === want, `${name} (${how}): ` +
      (ours === undefined ? 'agrees with mozilla' : `${ours ? 'valid' : 'invalid'} (a documented difference)`) + why);
    if (want && moz.ok && j.status === 'okay') {
      const a = payload(backed.split('~').pop());
      t.check(j.email === moz.email && j.issuer === moz.issuer,
        `${name} (${how}): same email and issuer` + why);
      t.check(j.audience === a.aud && j.expires === a.exp && Number.isInteger(j.expires),
        `${name} (${how}): audience and expires (ms) are the assertion's` + why);
      t.check(Object.keys(j).sort().join() === 'audience,email,expires,issuer,status',
        `${name} (${how}): exactly Persona's fields` + why);
    } else if (j.status === 'failure') {
      t.check(typeof j.reason === 'string' && j.reason.length > 0 &&
        Object.keys(j).sort().join() === 'reason,status', `${name} (${how}): a reason` + why);
    }
  }
}

(async () => {
  const t = c.reporter();
  if (!c.AUTHORITY || !fs.existsSync(c.AUTHORITY)) {
    t.check(false, 'VEP_AUTHORITY names the vep-authority binary');
    t.done();
  }
  const dir = c.tmpdir();
  const g = await generate();
  const state = path.join(dir, 'state');
  const keydir = path.join(state, 'keys', DOMAIN);
  fs.mkdirSync(keydir, { recursive: true, mode: 0o700 });
  fs.chmodSync(state, 0o700);
  fs.writeFileSync(path.join(keydir, 'current.pem'), g.domainPem, { mode: 0o600 });
  const { proc, port } = await c.startDemo(state);
  try {
    const httpRequest = c.localHttpRequest(port);
    const served = JSON.parse(await new Promise((resolve, reject) => httpRequest(DOMAIN,
      '/.well-known/browserid', (e, s, h, b) => (e ? reject(e) : resolve(b)))));
    t.check(JSON.stringify(served['public-key']) === JSON.stringify(JSON.parse(g.doc)['public-key']),
      'the server publishes the fixtures\' domain key');
    // Fixtures pinned to a time (the clock skew's edges) need a verifier
    // that takes one: /verify uses its clock (interop_verdicts has them).
    for (const f of g.fixtures.filter((x) => x.at === undefined)) {
      await compare(t, port, httpRequest, f.name, f.backed, f.audience, f.ours);
    }

    // More than the fixtures: a chain, another domain's key, a domain this
    // authority does not serve, a retired key.
    const user = await c.keypair('DS', 128);
    const other = await c.keypair('DS', 128);
    const a = await c.signAssertion(user.secretKey, AUD, Date.now() + 2 * MIN);
    const good = await g.cert(user, 'carol@example.test');
    await compare(t, port, httpRequest, 'another valid one', c.jwcrypto.cert.bundle([good], a), AUD);
    await compare(t, port, httpRequest, 'a chain of two certificates',
      c.jwcrypto.cert.bundle([await g.cert(other, 'carol@example.test'),
        await c.signCert(other.secretKey, user.publicKey, 'carol@example.test', DOMAIN,
          Date.now() - 10000, Date.now() + 60 * MIN)], a), AUD);
    const foreign = await c.signCert(other.secretKey, user.publicKey, 'carol@example.test', DOMAIN,
      Date.now() - 10000, Date.now() + 60 * MIN);
    await compare(t, port, httpRequest, 'certificate signed by another key (a retired or foreign one)',
      c.jwcrypto.cert.bundle([foreign], a), AUD);
    const elsewhere = await c.signCert(other.secretKey, user.publicKey, 'carol@other.test', 'other.test',
      Date.now() - 10000, Date.now() + 60 * MIN);
    const r = await post(port, asForm({ assertion: c.jwcrypto.cert.bundle([elsewhere], a), audience: AUD }),
      'application/x-www-form-urlencoded');
    t.check(r.status === 200 && r.json && r.json.status === 'failure' &&
      r.json.reason === 'not a domain of this authority',
      `a domain not served: failure, saying so (${JSON.stringify(r.json)})`);
  } finally {
    proc.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
  t.done();
})().catch((e) => { console.error(e); process.exit(1); });
