#!/usr/bin/env node
/*
 * server.js - a website that signs users in with their email address
 * (Verified Email Protocol), verifying on its server through the identity
 * authority's POST /verify. Node 20 or later, no npm packages.
 *
 *   node server.js --authority https://login.example.com \
 *       --origin https://shop.example --listen 127.0.0.1:8000
 *
 * Serves the sign-in page (../site/) and POST /sign-in {"assertion"}, which
 * answers 200 {"email"} or an error {"error"}. Run it behind your TLS
 * proxy; --origin is the origin users see, the audience every assertion
 * must name.
 */
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const path = require('path');
const { parseArgs } = require('util');

const SITE = path.join(__dirname, '..', 'site');
const MAX_BODY = 10 * 1024;           // an assertion is ~3 KiB; /verify takes 10 KiB
const MAX_ANSWER = 64 * 1024;
const VERIFY_TIMEOUT_MS = 5000;
const SEEN_MAX = 10000;               // accepted assertions remembered at once
const MAX_AHEAD_MS = 10 * 60 * 1000;  // browsers make assertions valid for 2 min

/* A sign-in that must not go through (the message is for the user), or
 * one that failed through no fault of the user's (status 503). */
class Refused extends Error {}
class Trouble extends Error {}

/* Asks the authority; resolves its answer when the assertion is good for
 * this site, else rejects with Refused (or Trouble). */
async function verify(authority, origin, assertion) {
  let res;
  let answer;
  try {
    res = await fetch(authority + '/verify', {
      method: 'POST',
      body: new URLSearchParams({ assertion, audience: origin }),
      redirect: 'error',   // a redirect would send the POST elsewhere
      signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
    });
    const text = await res.text();
    if (text.length > MAX_ANSWER) throw new Error('too long');
    answer = JSON.parse(text);
  } catch (e) {
    throw new Trouble(res && res.status !== 200 ? `the verifier answered HTTP ${res.status}`
      : 'no usable answer from the verifier');
  }
  if (res.status !== 200) throw new Trouble(`the verifier answered HTTP ${res.status}`);
  if (answer === null || typeof answer !== 'object') throw new Trouble('the verifier\'s answer is not an object');
  if (answer.status !== 'okay') throw new Refused(String(answer.reason || 'not a valid sign-in'));
  // Checked here too: whatever the verifier does, the assertion must be
  // for this site, never one made for another that was posted to us.
  if (answer.audience !== origin) throw new Refused('made for another website');
  if (typeof answer.email !== 'string' || !Number.isInteger(answer.expires)) {
    throw new Trouble('the verifier\'s answer is incomplete');
  }
  return answer;
}

/* What the user's signature covers (the assertion's header and payload),
 * not the whole text: that can be re-sent with another certificate of the
 * same key, or its signature written with a leading zero byte, and still
 * verify. */
function replayKey(assertion) {
  const jws = assertion.slice(assertion.lastIndexOf('~') + 1);
  return crypto.createHash('sha256').update(jws.slice(0, jws.lastIndexOf('.'))).digest('hex');
}

/* Assertions accepted and not yet expired, in memory (one process: with
 * several, keep this in a shared store, e.g. a database's unique key). */
class SeenAssertions {
  constructor(limit) { this.expires = new Map(); this.limit = limit; }

  /* Records key until expiresMs; throws Refused if it is there already. */
  admit(key, expiresMs) {
    const now = Date.now();
    // One valid longer would occupy the record too long; a sane browser
    // never makes one (is the computer's clock right?).
    if (expiresMs > now + MAX_AHEAD_MS) throw new Refused('valid too far ahead');
    if (this.expires.size >= this.limit) {
      for (const [k, e] of this.expires) if (e <= now) this.expires.delete(k);
    }
    if ((this.expires.get(key) || 0) > now) throw new Refused('already used: a replay');
    if (this.expires.size >= this.limit) throw new Trouble('too many sign-ins at once');
    this.expires.set(key, expiresMs);
  }
}

/* Resolves the request's body (at most MAX_BODY bytes) as text. */
function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) { reject(new Error('too large')); req.destroy(); } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString()));
    req.on('error', reject);
  });
}

function send(res, status, type, text, csp) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Security-Policy': csp });
  res.end(text);
}

async function signIn(cfg, seen, req, res) {
  const reply = (status, obj) => send(res, status, 'application/json', JSON.stringify(obj), cfg.csp);
  // JSON only: a cross-site form cannot send it, so no other site can
  // sign a visitor in to the account of its choosing here.
  if ((req.headers['content-type'] || '').split(';')[0] !== 'application/json') {
    return reply(415, { error: 'send JSON' });
  }
  if (Number(req.headers['content-length']) > MAX_BODY) return reply(413, { error: 'too large' });
  let assertion;
  try {
    assertion = JSON.parse(await readBody(req)).assertion;
  } catch (e) {
    return reply(e.message === 'too large' ? 413 : 400, { error: 'expected {"assertion": "..."}' });
  }
  if (typeof assertion !== 'string' || assertion === '') {
    return reply(400, { error: 'expected {"assertion": "..."}' });
  }
  try {
    const answer = await verify(cfg.authority, cfg.origin, assertion);
    seen.admit(replayKey(assertion), answer.expires);
    // Signed in: start your session for answer.email here.
    return reply(200, { email: answer.email });
  } catch (e) {
    if (e instanceof Refused) return reply(401, { error: e.message });
    console.error('sign-in failed: ' + e.message);
    return reply(503, { error: 'cannot sign in now, try again later' });
  }
}

function main() {
  const { values: a } = parseArgs({ options: {
    authority: { type: 'string' },                        // https://login.example.com
    listen: { type: 'string', default: '127.0.0.1:8000' }, // ADDR:PORT (port 0: any)
    origin: { type: 'string' },                           // default http://ADDR:PORT
  } });
  if (!a.authority) {
    console.error('usage: server.js --authority URL [--listen ADDR:PORT] [--origin URL]');
    process.exit(2);
  }
  const [host, port] = [a.listen.slice(0, a.listen.lastIndexOf(':')),
    Number(a.listen.slice(a.listen.lastIndexOf(':') + 1))];
  const authority = a.authority.replace(/\/+$/, '');
  const cfg = { authority, csp: `default-src 'none'; script-src 'self' ${authority}; ` +
    'connect-src \'self\'; frame-ancestors \'none\'' };
  const seen = new SeenAssertions(SEEN_MAX);
  const page = fs.readFileSync(path.join(SITE, 'index.html'), 'utf8')
    .replace(/\{\{AUTHORITY\}\}/g, authority.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`));
  const script = fs.readFileSync(path.join(SITE, 'sign-in.js'), 'utf8');
  const srv = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/') return send(res, 200, 'text/html; charset=utf-8', page, cfg.csp);
    if (req.method === 'GET' && req.url === '/sign-in.js') return send(res, 200, 'text/javascript', script, cfg.csp);
    if (req.method === 'POST' && req.url === '/sign-in') return signIn(cfg, seen, req, res);
    return send(res, 404, 'application/json', '{"error":"not found"}', cfg.csp);
  });
  srv.requestTimeout = 30000;   // a client gets this long to send its request
  srv.listen(port, host, () => {
    // Fixed here, never taken from a request (Host, Origin): the audience
    // is what stops another site's assertions from working on this one.
    cfg.origin = a.origin || `http://${host}:${srv.address().port}`;
    console.log('listening on ' + cfg.origin);
  });
}

main();
