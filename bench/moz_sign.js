/*
 * moz_sign.js SECONDS PROCESSES - Mozilla's JavaScript signer as the
 * peer: browserid-crypto (tests/interop/node_modules) signing RS256
 * identity certificates in node, the engine of Mozilla's certifier
 * service, on PROCESSES processes. Prints "signs_per_s N".
 */
'use strict';
const path = require('path');
const { fork } = require('child_process');
const mods = path.join(__dirname, '..', 'tests', 'interop', 'node_modules');
const seconds = Number(process.argv[2] || 5);
const procs = Number(process.argv[3] || 1);

if (process.env.MOZ_SIGN_CHILD) {
  const jwcrypto = require(path.join(mods, 'browserid-crypto'));
  require(path.join(mods, 'browserid-crypto', 'lib', 'algs', 'rs'));
  jwcrypto.generateKeypair({ algorithm: 'RS', keysize: 256 }, (err, domain) => {
    if (err) throw err;
    jwcrypto.generateKeypair({ algorithm: 'RS', keysize: 256 }, (err2, user) => {
      if (err2) throw err2;
      const end = Date.now() + seconds * 1000;
      let n = 0;
      const one = () => {
        if (Date.now() >= end) { process.send(n); return; }
        const now = Date.now();
        jwcrypto.cert.sign({ publicKey: user.publicKey, principal: { email: 'alice@example.test' } },
          { issuer: 'example.test', issuedAt: new Date(now), expiresAt: new Date(now + 3600000) },
          null, domain.secretKey, (e) => {
            if (e) throw e;
            n++;
            setImmediate(one);
          });
      };
      one();
    });
  });
} else {
  let total = 0; let left = procs;
  const start = Date.now();
  for (let i = 0; i < procs; i++) {
    const c = fork(__filename, [String(seconds), '1'], { env: Object.assign({}, process.env, { MOZ_SIGN_CHILD: '1' }) });
    c.on('message', (n) => { total += n; });
    c.on('exit', () => {
      if (--left === 0) console.log(`signs_per_s ${(total / seconds).toFixed(1)}`);
    });
  }
}
