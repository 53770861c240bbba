/*
 * common.js - shared by the interop tests: loading Mozilla's libraries
 * (exit 77 when node_modules is missing, the only skip), promise wrappers
 * around browserid-crypto, running vep-keytool, and Mozilla's verifier with
 * a support document served through its httpRequest option, and starting
 * the real vep-authority --demo.
 */
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const http = require('http');
const { spawnSync } = require('child_process');
const { spawnPrivateTmp } = require('../private-tmp.js');

const HERE = __dirname;
if (!fs.existsSync(path.join(HERE, 'node_modules', 'browserid-crypto', 'libs', 'minimal.js'))) {
  console.log('node_modules missing (run tests/interop/setup.sh): skipping');
  process.exit(77);
}
const jwcrypto = require('browserid-crypto');
require('browserid-crypto/lib/algs/rs');
require('browserid-crypto/lib/algs/ds');
const Verifier = require('browserid-local-verify');

const KEYTOOL = process.env.VEP_KEYTOOL;
const AUTHORITY = process.env.VEP_AUTHORITY;
/* How long the server may take to print its address (ms). */
const START_TIMEOUT_MS = 15000;

function p(fn) {
  return new Promise((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v))));
}

const keypair = (algorithm, keysize) => p((cb) => jwcrypto.generateKeypair({ algorithm, keysize }, cb));
const signAssertion = (secretKey, audience, expiresAt) =>
  p((cb) => jwcrypto.assertion.sign({}, { audience, expiresAt: new Date(expiresAt) }, secretKey, cb));
const signCert = (secretKey, publicKey, email, issuer, issuedAt, expiresAt) =>
  p((cb) => jwcrypto.cert.sign({ publicKey, principal: { email } },
    { issuer, issuedAt: new Date(issuedAt), expiresAt: new Date(expiresAt) }, null, secretKey, cb));

function tmpdir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'vep-interop.'));
}

/* Runs vep-keytool; returns {code, stdout, stderr}. */
function keytool(args, input) {
  const r = spawnSync(KEYTOOL, args, { input, encoding: 'utf8', timeout: 60000 });
  return { code: r.status, stdout: r.stdout || '', stderr: r.stderr || '' };
}

/* Mozilla's verdict on a backed assertion: {ok, email, issuer, audience,
 * expires (ms), err}.
 * docs maps domain -> support document text; fetch(domain, path, cb)
 * overrides where documents come from. */
function mozVerify(assertion, audience, opts) {
  const args = { assertion, audience };
  if (opts.now) args.now = new Date(opts.now);
  args.httpRequest = opts.httpRequest || ((domain, p2, cb) => {
    const doc = opts.docs[domain];
    if (doc === undefined) return cb(null, 404, {}, 'not found');
    cb(null, 200, { 'content-type': 'application/json' }, doc);
  });
  return new Promise((resolve) => {
    Verifier.verify(args, (err, r) => resolve(err ? { ok: false, err: String(err) }
      : { ok: true, email: r.email, issuer: r.issuer, audience: r.audience, expires: new Date(r.expires).valueOf() }));
  });
}

/* An httpRequest for Mozilla's verifier that fetches from 127.0.0.1:port
 * while keeping the domain in the Host header. */
function localHttpRequest(port) {
  return (domain, reqPath, cb) => {
    const req = http.get({ host: '127.0.0.1', port, path: reqPath, headers: { host: domain } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => cb(null, res.statusCode, res.headers, body));
    });
    req.on('error', (e) => cb(e));
  };
}

/* Starts the real vep-authority --demo (example.test) with state directory
 * state on 127.0.0.1, port 0; resolves with {proc, port}. A key already in
 * state/keys/example.test is the one it serves. */
function startDemo(state) {
  return new Promise((resolve, reject) => {
    const proc = spawnPrivateTmp([AUTHORITY, '--demo', '--state', state, '--listen',
      '127.0.0.1:0'], [state], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = ''; let err = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error('no address printed: ' + err)); }, START_TIMEOUT_MS);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/([0-9.]+):(\d+)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ proc, port: Number(m[2]) }); }
    });
    proc.stderr.on('data', (d) => { err += d; });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`exited ${code}: ${err}`)); });
  });
}

/* A minimal reporter: "N passed, N failed", exit 0/1. */
function reporter() {
  let passed = 0; let failed = 0;
  return {
    check(cond, what) {
      if (cond) { passed++; console.log('ok   ' + what); } else { failed++; console.log('FAIL ' + what); }
    },
    done() {
      console.log(`${passed} passed, ${failed} failed`);
      process.exit(failed ? 1 : 0);
    },
  };
}

/* One request with body (text, '' for none) to the authority on
 * 127.0.0.1:port: {status, headers, json} (json null when the body is
 * not JSON). */
function request(port, method, reqPath, body, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: reqPath,
      headers: Object.assign({ 'Content-Length': Buffer.byteLength(body) }, headers || {}) },
    (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(text); } catch (e) { /* left null */ }
        resolve({ status: res.statusCode, headers: res.headers, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

module.exports = {
  jwcrypto, Verifier, KEYTOOL, keypair, signAssertion, signCert, tmpdir, keytool,
  mozVerify, localHttpRequest, reporter, AUTHORITY, startDemo, request,
};
