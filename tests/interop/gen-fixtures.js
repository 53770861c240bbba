/*
 * gen-fixtures.js - makes fresh interop fixtures with Mozilla's own signer
 * (browserid-crypto): a domain key for example.test, RS256 and DS128 user
 * keys, certificates and backed assertions, valid and broken ones. Times are
 * relative to now, so every run is new. RSA keys come from node's crypto
 * (jsbn's keygen takes seconds) and are loaded into browserid-crypto with
 * their CRT parameters; all signing is done by browserid-crypto.
 *
 * Exports generate() -> {doc, domainPem (the domain's private key), now,
 * cert(user, email, iss, iat, exp) (signs with the domain key), fixtures:
 * [{name, backed, cert, audience, valid, certValid, at, ours}]}: valid is Mozilla's verdict,
 * certValid vep-keytool verify-cert's, ours (when present) verify-assertion's
 * where it legitimately differs from Mozilla's, at (ms, when present) the
 * time to verify at. Run directly, writes them to DIR.
 */
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const c = require('./common.js');

const DOMAIN = 'example.test';
const AUD = 'https://rp.example';
/* docs/PROTOCOL.md's audience table: rp is the relying party's audience,
 * aud the assertion's; moz whether Mozilla's verifier matches them, ours
 * libvep's verdict where it differs (it refuses what Mozilla's URL parser
 * repairs, and reads a port as a number). */
const AUDIENCE_CASES = [
  { rp: 'https://rp.example', aud: 'https://rp.example', moz: true },
  { rp: 'https://rp.example:443', aud: 'https://rp.example', moz: true },
  { rp: 'https://rp.example', aud: 'https://rp.example:443', moz: true },
  { rp: 'https://rp.example', aud: 'http://rp.example', moz: false },
  { rp: 'https://rp.example', aud: 'https://rp.example:8443', moz: false },
  { rp: 'https://rp.example/', aud: 'https://rp.example', moz: true },
  { rp: 'https://rp.example', aud: 'https://rp.example/a/b?q=1#f', moz: true },
  { rp: 'https://rp.example/path', aud: 'https://rp.example', moz: false },
  { rp: 'https://rp.example?x=1', aud: 'https://rp.example', moz: false },
  { rp: 'https://rp.example#f', aud: 'https://rp.example', moz: true, ours: false },
  { rp: 'rp.example', aud: 'http://rp.example', moz: true },
  { rp: 'rp.example', aud: 'https://rp.example', moz: false },
  { rp: 'rp.example/path', aud: 'http://rp.example', moz: false },
  { rp: 'rp.example:8080', aud: 'http://rp.example:8080', moz: true },
  { rp: 'rp.example:8080', aud: 'https://rp.example:8080', moz: false },
  { rp: 'rp.example:443', aud: 'https://rp.example', moz: false },
  { rp: 'http://rp.example', aud: 'rp.example', moz: false },
  { rp: 'HTTPS://RP.Example', aud: 'https://rp.example', moz: true },
  { rp: 'https://rp.example', aud: 'HTTPS://RP.EXAMPLE:443', moz: true },
  { rp: 'https://[2001:DB8::1]', aud: 'https://[2001:db8::1]:443', moz: true },
  { rp: '[::1]:8080', aud: 'http://[::1]:8080', moz: true },
  { rp: 'https://[::1]', aud: 'https://[0:0::1]', moz: false },
  { rp: 'https://rp.example', aud: 'https://rp.example.evil', moz: false },
  { rp: 'https://rp.example:0443', aud: 'https://rp.example', moz: false, ours: true },
  { rp: 'https://user@rp.example', aud: 'https://rp.example', moz: true, ours: false },
  { rp: 'app://rp.example', aud: 'app://rp.example', moz: true, ours: false },
];

/* Bound on the search for a signature with a leading zero byte (tries). */
const SHORT_SIG_MAX_TRIES = 20000;
const MIN = 60 * 1000;

/* An RSA key made by vep-keytool genkey (node 20's generateKeyPairSync can
 * deadlock in the garbage collector's KeyGenJob destructor, seen here), loaded
 * into node's crypto and into browserid-crypto with its CRT parameters. */
function rsaKeypair(bits) {
  const dir = c.tmpdir();
  const file = path.join(dir, 'key.pem');
  const r = c.keytool(['genkey', '--alg', bits === 1024 ? 'RS128' : 'RS256', '--out', file]);
  if (r.code !== 0) throw new Error('vep-keytool genkey failed: ' + r.stderr);
  const privateKey = crypto.createPrivateKey(fs.readFileSync(file));
  fs.rmSync(dir, { recursive: true, force: true });
  const jwk = privateKey.export({ format: 'jwk' });
  const sk = c.jwcrypto.loadSecretKeyFromObject({ algorithm: 'RS', kty: 'RSA', n: jwk.n, e: jwk.e, d: jwk.d });
  const BI = sk.rsa.n.constructor;
  const big = (b64) => new BI(Buffer.from(b64, 'base64url').toString('hex'), 16);
  Object.assign(sk.rsa, { p: big(jwk.p), q: big(jwk.q), dmp1: big(jwk.dp), dmq1: big(jwk.dq), coeff: big(jwk.qi) });
  const pk = c.jwcrypto.loadPublicKeyFromObject({ algorithm: 'RS', n: sk.rsa.n.toString(10), e: sk.rsa.e.toString(10) });
  return { publicKey: pk, secretKey: sk, nodeKey: privateKey };
}

function b64(s) { return Buffer.from(s).toString('base64url'); }

function sigLen(jws) { return Buffer.from(jws.split('.')[2], 'base64url').length; }

/* Finds an exp for which the RS256 assertion signature starts with a zero
 * byte (node's crypto predicts it quickly: PKCS#1 v1.5 is deterministic),
 * then has browserid-crypto sign it, which drops that byte. */
async function shortSigAssertion(user, exp0) {
  const header = b64(JSON.stringify({ alg: 'RS256' }));
  for (let i = 0; i < SHORT_SIG_MAX_TRIES; i++) {
    const exp = exp0 + i;
    const input = header + '.' + b64(JSON.stringify({ exp, aud: AUD }));
    const sig = crypto.sign('sha256', Buffer.from(input), user.nodeKey);
    if (sig[0] === 0) {
      const a = await c.signAssertion(user.secretKey, AUD, exp);
      if (sigLen(a) < 256) return a;
      throw new Error('browserid-crypto kept the leading zero byte');
    }
  }
  throw new Error('no short signature found');
}

async function generate() {
  const now = Date.now();
  const domain = rsaKeypair(2048);
  const rsUser = rsaKeypair(2048);
  const dsUser = await c.keypair('DS', 128);
  const doc = JSON.stringify({
    'public-key': JSON.parse(domain.publicKey.serialize()),
    authentication: '/sign-in/authenticate',
    provisioning: '/sign-in/provision',
  });
  const cert = (user, email, iss, iat, exp) => c.signCert(domain.secretKey, user.publicKey, email, iss || DOMAIN,
    iat || now - 10000, exp || now + 60 * MIN);
  const fixtures = [];
  const add = (name, certText, assertion, valid, certValid, audience, more) => fixtures.push({
    name, cert: certText, backed: c.jwcrypto.cert.bundle([certText], assertion), audience: audience || AUD, valid, certValid,
    ...more,
  });

  const rsCert = await cert(rsUser, 'alice@example.test');
  add('rs256 valid', rsCert, await c.signAssertion(rsUser.secretKey, AUD, now + 2 * MIN), true, true);
  const dsCert = await cert(dsUser, 'bob@example.test');
  add('ds128 valid', dsCert, await c.signAssertion(dsUser.secretKey, AUD, now + 2 * MIN), true, true);
  add('rs256 short signature', rsCert, await shortSigAssertion(rsUser, now + 2 * MIN), true, true);
  add('audience with explicit default port', dsCert,
    await c.signAssertion(dsUser.secretKey, AUD, now + 2 * MIN), true, true, AUD + ':443');
  add('wrong audience', dsCert, await c.signAssertion(dsUser.secretKey, 'https://evil.example', now + 2 * MIN), false, true);
  add('expired assertion', dsCert, await c.signAssertion(dsUser.secretKey, AUD, now - MIN), false, true);
  const oldCert = await cert(dsUser, 'bob@example.test', null, now - 3 * 60 * MIN, now - 2 * 60 * MIN);
  add('expired certificate', oldCert, await c.signAssertion(dsUser.secretKey, AUD, now + 2 * MIN), false, false);
  const futureCert = await cert(dsUser, 'bob@example.test', null, now + 10 * MIN, now + 60 * MIN);
  add('certificate issued in the future', futureCert, await c.signAssertion(dsUser.secretKey, AUD, now + 2 * MIN), false, false);
  const evilCert = await cert(dsUser, 'bob@example.test', 'evil.example');
  add('wrong issuer', evilCert, await c.signAssertion(dsUser.secretKey, AUD, now + 2 * MIN), false, false);
  const [h, pl, s] = dsCert.split('.');
  const body = JSON.parse(Buffer.from(pl, 'base64url').toString());
  body.principal.email = 'mallory@example.test';
  const tampered = [h, b64(JSON.stringify(body)), s].join('.');
  add('tampered certificate', tampered, await c.signAssertion(dsUser.secretKey, AUD, now + 2 * MIN), false, false);
  const other = await c.keypair('DS', 128);
  add('assertion by another key', dsCert, await c.signAssertion(other.secretKey, AUD, now + 2 * MIN), false, true);
  // The audience table of docs/PROTOCOL.md (Audience), row for row: an
  // assertion made for aud, verified by a relying party that says rp.
  // moz is Mozilla's verdict; ours, where given, libvep's where it differs.
  const byAud = new Map(); // one signature per aud: DSA in JS is slow
  for (const a of AUDIENCE_CASES) {
    if (!byAud.has(a.aud)) byAud.set(a.aud, await c.signAssertion(dsUser.secretKey, a.aud, now + 2 * MIN));
    add(`audience: rp ${a.rp}, aud ${a.aud}`, dsCert, byAud.get(a.aud),
      a.moz, true, a.rp, a.ours === undefined ? {} : { ours: a.ours });
  }
  // The clock skew (docs/PROTOCOL.md, Clock skew), verified as of `at`:
  // Mozilla's verifier allows none and refuses the first and third, which
  // libvep accepts (ours); just beyond the skew both refuse.
  const SKEW = 30000;
  const at = now;
  add('assertion exp 1 ms inside the clock skew', dsCert,
    await c.signAssertion(dsUser.secretKey, AUD, at - SKEW + 1), false, true, null, { at, ours: true });
  add('assertion exp exactly the clock skew ago', dsCert,
    await c.signAssertion(dsUser.secretKey, AUD, at - SKEW), false, true, null, { at });
  const skewCert = await cert(dsUser, 'bob@example.test', null, at + SKEW, at + 60 * MIN);
  add('certificate iat exactly the clock skew ahead', skewCert,
    await c.signAssertion(dsUser.secretKey, AUD, at + 2 * MIN), false, true, null, { at, ours: true });
  const pastSkewCert = await cert(dsUser, 'bob@example.test', null, at + SKEW + 1, at + 60 * MIN);
  add('certificate iat 1 ms beyond the clock skew', pastSkewCert,
    await c.signAssertion(dsUser.secretKey, AUD, at + 2 * MIN), false, false, null, { at });
  /* The domain's private key as PEM, for a server that must verify with it
   * (test_verify_endpoint.js). */
  const domainPem = domain.nodeKey.export({ type: 'pkcs8', format: 'pem' });
  return { doc, fixtures, domainPem, now, cert };
}

module.exports = { generate, DOMAIN, AUD };

if (require.main === module) {
  const dir = process.argv[2] || c.tmpdir();
  generate().then((g) => {
    fs.writeFileSync(path.join(dir, 'doc.json'), g.doc);
    fs.writeFileSync(path.join(dir, 'fixtures.json'), JSON.stringify(g.fixtures, null, 1));
    console.log(dir);
  }, (e) => { console.error(e); process.exit(1); });
}
