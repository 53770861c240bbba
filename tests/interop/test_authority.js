/*
 * test_authority.js - the other direction: what we issue, Mozilla accepts.
 * Starts the real vep-authority (--demo, example.test, 127.0.0.1 port 0),
 * certifies user keys with `vep-keytool certify --dir <its key dir>`, signs
 * assertions with browserid-crypto and with `vep-keytool sign-assertion`,
 * and has browserid-local-verify do real discovery against the running
 * server (httpRequest keeps the domain name, connects to 127.0.0.1). It also
 * signs in with the demo account (real PAM under pam_wrapper) and has the
 * server itself certify browserid-crypto keys through POST /api/cert, and
 * has POST /verify answer what vep-keytool verify-assertion --json prints
 * (audiences, the clock skew). Then
 * rotates the key, reloads (SIGHUP) and checks the old certificate still
 * verifies through "keys".
 */
'use strict';
const fs = require('fs');
const path = require('path');
const c = require('./common.js');

const DOMAIN = 'example.test';
const AUD = 'https://rp.example';

/* One JSON request to the running authority: {status, headers, json}. */
function api(port, method, p, obj, headers) {
  return c.request(port, method, p, obj === undefined ? '' : JSON.stringify(obj),
    Object.assign({ 'Content-Type': 'application/json' }, headers || {}));
}

(async () => {
  const t = c.reporter();
  if (!c.AUTHORITY || !fs.existsSync(c.AUTHORITY)) {
    t.check(false, 'VEP_AUTHORITY names the vep-authority binary');
    t.done();
  }
  const dir = c.tmpdir();
  const state = path.join(dir, 'state');
  const { proc, port } = await c.startDemo(state);
  try {
    const keydir = path.join(state, 'keys', DOMAIN);
    const httpRequest = c.localHttpRequest(port);
    const write = (name, text) => { const p = path.join(dir, name); fs.writeFileSync(p, text, { mode: 0o600 }); return p; };

    for (const [alg, size] of [['RS', 256], ['DS', 128]]) {
      const user = await c.keypair(alg, size);
      const pub = write(`pub-${alg}.json`, user.publicKey.serialize());
      const cert = c.keytool(['certify', '--dir', keydir, '--email', 'alice@example.test', '--pubkey', pub]);
      t.check(cert.code === 0, `${alg}: certify with the authority's key dir (${cert.stderr.trim()})`);
      const a = await c.signAssertion(user.secretKey, AUD, Date.now() + 120000);
      const backed = c.jwcrypto.cert.bundle([cert.stdout.trim()], a);
      const moz = await c.mozVerify(backed, AUD, { httpRequest });
      t.check(moz.ok && moz.email === 'alice@example.test' && moz.issuer === DOMAIN,
        `${alg}: mozilla accepts, discovering ${DOMAIN} on the running authority (${moz.err || moz.email})`);
      const f = write(`backed-${alg}`, backed);
      const kt = c.keytool(['verify-assertion', '--audience', AUD, '--fetch',
        `http://127.0.0.1:${port}/.well-known/browserid?domain=${DOMAIN}`, f]);
      t.check(kt.code === 0 && kt.stdout.trim() === 'alice@example.test',
        `${alg}: vep-keytool verify-assertion --fetch agrees (${kt.stderr.trim()})`);
      const bad = await c.mozVerify(backed, 'https://other.example', { httpRequest });
      t.check(!bad.ok, `${alg}: mozilla refuses another audience`);
    }

    // Everything from vep-keytool: user key, certificate, assertion.
    const ukey = path.join(dir, 'user-ds.pem');
    c.keytool(['genkey', '--alg', 'DS128', '--out', ukey]);
    const certFile = write('kt-cert', c.keytool(['certify', '--dir', keydir, '--email', 'bob@example.test',
      '--pubkey', ukey]).stdout);
    const b = c.keytool(['sign-assertion', '--key', ukey, '--audience', AUD, '--cert', certFile]);
    t.check(b.code === 0, 'vep-keytool sign-assertion');
    let moz = await c.mozVerify(b.stdout.trim(), AUD, { httpRequest });
    t.check(moz.ok && moz.email === 'bob@example.test', `mozilla accepts a vep-keytool backed assertion (${moz.err || ''})`);

    // POST /verify and vep-keytool verify-assertion --json give the same
    // object, both libvep's verdict: audiences of docs/PROTOCOL.md's table
    // and assertion exps on either side of the clock skew (30 s).
    const doc = `http://127.0.0.1:${port}/.well-known/browserid?domain=${DOMAIN}`;
    const signed = (at, duration) => c.keytool(['sign-assertion', '--key', ukey, '--audience', AUD,
      '--cert', certFile, '--at', String(at), '--duration', String(duration)]).stdout.trim();
    const now = Date.now();
    const cases = [
      [b.stdout.trim(), AUD, 'okay', ''], [b.stdout.trim(), 'https://rp.example:443/', 'okay', ''],
      [b.stdout.trim(), 'rp.example', 'failure', ''],
      [b.stdout.trim(), 'https://rp.example/login', 'failure', ''],
      [b.stdout.trim(), 'http://rp.example', 'failure', ''],
      [signed(now - 85000, 80), AUD, 'okay', ', exp 5 s ago'],
      [signed(now - 120000, 80), AUD, 'failure', ', exp 40 s ago'],
    ];
    for (const [assertion, audience, status, what] of cases) {
      const v = await api(port, 'POST', '/verify', { assertion, audience });
      const kj = c.keytool(['verify-assertion', '--json', '--audience', audience, '--fetch', doc,
        write('verify-case', assertion)]);
      let o = null;
      try { o = JSON.parse(kj.stdout); } catch (e) { /* reported below */ }
      t.check(v.status === 200 && v.json && v.json.status === status
        && JSON.stringify(v.json) === JSON.stringify(o),
      `POST /verify for ${audience}${what}: ${status}, as verify-assertion --json (${JSON.stringify(v.json)} vs ${kj.stdout.trim()})`);
    }

    // Issued by the running authority after a PAM sign-in.
    const login = await api(port, 'POST', '/api/login',
      { email: 'alice@example.test', password: 'wonderland' });
    t.check(login.status === 200, `sign in with the demo account (${login.status})`);
    const cookie = String((login.headers['set-cookie'] || [''])[0]).split(';')[0];
    const auth = { Cookie: cookie, 'X-CSRF-Token': login.json ? login.json.csrf : '' };
    for (const [alg, size] of [['RS', 256], ['DS', 128]]) {
      const user = await c.keypair(alg, size);
      // As a user agent's genKeyPair hands it over: the key as JSON text.
      const res = await api(port, 'POST', '/api/cert',
        { pubkey: user.publicKey.serialize(), duration: 3600 }, auth);
      t.check(res.status === 200 && res.json && res.json.cert, `${alg}: POST /api/cert (${res.status})`);
      const a = await c.signAssertion(user.secretKey, AUD, Date.now() + 120000);
      const backed = c.jwcrypto.cert.bundle([res.json ? res.json.cert : ''], a);
      const m = await c.mozVerify(backed, AUD, { httpRequest });
      t.check(m.ok && m.email === 'alice@example.test' && m.issuer === DOMAIN,
        `${alg}: mozilla accepts the certificate /api/cert issued (${m.err || m.email})`);
    }

    // Rotation: the old certificate keeps verifying through "keys".
    const rot = c.keytool(['rotate', '--dir', keydir]);
    t.check(rot.code === 0, 'rotate the demo key dir');
    proc.kill('SIGHUP');
    await new Promise((r) => setTimeout(r, 500));
    const docRes = await new Promise((resolve) => httpRequest(DOMAIN, `/.well-known/browserid?domain=${DOMAIN}`,
      (e, st, h, body) => resolve(body)));
    let keys = [];
    try { keys = JSON.parse(docRes).keys || []; } catch (e) { /* checked below */ }
    t.check(keys.length === 2, 'after rotate + SIGHUP the authority publishes two keys');
    moz = await c.mozVerify(b.stdout.trim(), AUD, { httpRequest });
    t.check(moz.ok, `mozilla still accepts a certificate signed before the rotation (${moz.err || ''})`);
  } finally {
    proc.kill('SIGTERM');
  }
  fs.rmSync(dir, { recursive: true, force: true });
  t.done();
})().catch((e) => { console.error(e); process.exit(1); });
