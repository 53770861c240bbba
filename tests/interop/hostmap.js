/*
 * hostmap.js - a node preload (node --require) that does for TLS what
 * curl's --resolve does: connections to a mapped host name go to the
 * address and port it names, while the TLS server name (SNI) and the
 * certificate check keep the host name. Tests use it so that Mozilla's
 * verifier discovers https://example.test/... with its own HTTPS code, no
 * DNS and no privileged port.
 *
 * VEP_HOSTMAP="name=ADDR:PORT,name2=ADDR:PORT" (only names listed are
 * mapped; any other connection is refused, so nothing leaves the machine).
 */
'use strict';
const tls = require('tls');

const map = new Map();
for (const item of (process.env.VEP_HOSTMAP || '').split(',').filter(Boolean)) {
  const eq = item.indexOf('=');
  const colon = item.lastIndexOf(':');
  if (eq < 1 || colon < eq) throw new Error('VEP_HOSTMAP: bad entry ' + item);
  map.set(item.slice(0, eq).toLowerCase(),
    { host: item.slice(eq + 1, colon), port: Number(item.slice(colon + 1)) });
}

const connect = tls.connect;
tls.connect = function (...args) {
  const opts = args.find((a) => a !== null && typeof a === 'object' && !Array.isArray(a));
  const name = opts && (opts.servername || opts.host);
  const to = name && map.get(String(name).toLowerCase());
  if (!to) throw new Error('hostmap: no mapping for ' + name + ' (test hosts only)');
  const o = { ...opts, servername: String(name), host: to.host, port: to.port };
  return connect.call(this, o, ...args.filter((a) => typeof a === 'function'));
};
