/*
 * rp.d.ts - TypeScript declarations of rp.js (window.vepRP), served beside
 * it: https://AUTHORITY/rp.d.ts. README.md, "A website", says what each
 * error means.
 */

/** Why discovery of the address's authority failed (VepRPError.reason). */
export type VepDiscoveryReason =
  /** The support document answered another status than 200 (see .status). */
  | 'http_status'
  /** It is not served as application/json. */
  | 'content_type'
  /** It is not a JSON object, or delegates to something that is not a host name. */
  | 'bad_json'
  /** It redirects (readable as such only when the redirect carries CORS headers). */
  | 'redirect'
  /** No such host, no server, TLS refused, or an answer without CORS headers:
   * browsers do not let a page tell these apart. */
  | 'network'
  /** This page's Content-Security-Policy (connect-src) does not allow the fetch. */
  | 'csp'
  /** No support document within discoveryTimeout. */
  | 'timeout'
  /** The domain has disabled sign-in with email. */
  | 'disabled'
  /** More than 5 delegations. */
  | 'delegations'
  /** The document neither delegates nor publishes a public key. */
  | 'no_key'
  /** The authority's page reported an error. */
  | 'authority';

export type VepRPErrorCode =
  | 'input' | 'popup' | 'discovery' | 'unreachable' | 'closed' | 'cancelled' | 'wrong_email';

/** What vepRP.request rejects with. */
export interface VepRPError extends Error {
  code: VepRPErrorCode;
  /** code "discovery": the cause. */
  reason?: VepDiscoveryReason;
  /** code "discovery": the domain whose support document failed. */
  domain?: string;
  /** reason "http_status": the HTTP status. */
  status?: number;
  /** code "wrong_email": the address certified (null when unreadable). */
  email?: string | null;
  /** code "unreachable": the authority's origin. */
  authority?: string;
}

export interface VepRPRequestOptions {
  /** The address to sign in; the assertion is for exactly this address
   * (its domain compared case-insensitively). */
  email: string;
  /** The authority's origin, e.g. "https://login.example.com": no discovery. */
  authority?: string;
  /** Milliseconds for the whole discovery, 100 to 60000; default 10000. */
  discoveryTimeout?: number;
  /** Milliseconds for the popup to load the authority's page, 100 to 120000;
   * default 20000. */
  readyTimeout?: number;
  /** Development only: host names reached at other origins instead of
   * https://NAME, e.g. {"example.test": "http://127.0.0.1:8080"}. */
  hosts?: Record<string, string>;
}

export interface VepRP {
  /** Resolves with a backed assertion ("certificate~assertion") for the
   * page's origin; rejects with a VepRPError. Call it from a click. */
  request(opts: VepRPRequestOptions): Promise<string>;
}

declare global {
  interface Window {
    readonly vepRP: VepRP;
  }
  const vepRP: VepRP;
}
