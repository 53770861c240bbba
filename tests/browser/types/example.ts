/*
 * example.ts - a website's use of rp.js, type-checked against www/rp.d.ts
 * by test_rp_types.js. Each @ts-expect-error line is a mistake the
 * declarations must catch: tsc fails on one they let through.
 */
import type { VepRPError, VepRPRequestOptions } from '../../../www/rp';

const opts: VepRPRequestOptions = { email: 'alice@example.com', discoveryTimeout: 5000 };

/* What a site shows for each failure; the assertion on success. */
export async function signIn(): Promise<string> {
  try {
    return await vepRP.request(opts);
  } catch (e) {
    const err = e as VepRPError;
    if (err.code === 'discovery' && err.reason === 'http_status') return `HTTP ${err.status ?? 0}`;
    if (err.code === 'discovery' && err.reason === 'csp') return 'allow connect-src https:';
    if (err.code === 'wrong_email') return `signed in as ${err.email ?? 'someone else'}`;
    if (err.code === 'unreachable') return `${err.authority ?? ''} is down`;
    throw err;
  }
}

export function development(): Promise<string> {
  return window.vepRP.request({ email: 'alice@example.test', readyTimeout: 5000,
    hosts: { 'example.test': 'http://127.0.0.1:8080' } });
}

export async function mistakes(err: VepRPError): Promise<void> {
  // @ts-expect-error the address is required
  await vepRP.request({ authority: 'https://login.example.com' });
  // @ts-expect-error the resolve value is the assertion string
  const n: number = await vepRP.request(opts);
  // @ts-expect-error no such code
  if (err.code === 'timeout') return;
  // @ts-expect-error no such reason
  if (err.reason === 'not_found') return;
  // @ts-expect-error the API is read-only
  window.vepRP = { request: () => Promise.resolve('') };
  // @ts-expect-error timeouts are numbers of milliseconds
  await vepRP.request({ email: 'a@b.example', discoveryTimeout: '5s' });
  void n;
}
