/*
 * verify_https.js - Mozilla's verifier (browserid-local-verify) on one
 * backed assertion with its own discovery over HTTPS: no httpRequest hook,
 * so it fetches https://DOMAIN/.well-known/browserid?domain=DOMAIN itself
 * and follows "authority" delegation. Run under hostmap.js with
 * NODE_EXTRA_CA_CERTS naming the test's CA.
 *
 * usage: node --require ./hostmap.js verify_https.js ASSERTION-FILE AUDIENCE
 * prints {"ok":true,"email","issuer"} or {"ok":false,"err"}; exit 0 either
 * way (77 when node_modules is missing, 2 on usage errors).
 */
'use strict';
const fs = require('fs');
const path = require('path');

if (!fs.existsSync(path.join(__dirname, 'node_modules', 'browserid-crypto', 'libs',
  'minimal.js'))) {
  console.log('node_modules missing (run tests/interop/setup.sh): skipping');
  process.exit(77);
}
if (process.argv.length !== 4) {
  console.error('usage: verify_https.js ASSERTION-FILE AUDIENCE');
  process.exit(2);
}
const Verifier = require('browserid-local-verify');

const assertion = fs.readFileSync(process.argv[2], 'utf8').trim();
Verifier.verify({ assertion, audience: process.argv[3], httpTimeout: 60 }, (err, r) => {
  console.log(JSON.stringify(err ? { ok: false, err: String(err) }
    : { ok: true, email: r.email, issuer: r.issuer }));
});
