/*
 * demo/rp.h - the demo's relying party: a second origin (another port) that
 * a newcomer can sign in to with the demo account, so the whole journey can
 * be clicked through with nothing else installed:
 *   GET  /         a website with "Sign in with your email" (rp.js)
 *   GET  /webmail  a pretend webmail that provisions the browser after its
 *                  own login through the authority's hidden /embed page
 *   POST /verify   {"assertion"} -> {"email","issuer","audience"} or 401:
 *                  what a relying party's server does, with libvep, against
 *                  the demo domain's keys; the audience is this site's own
 *                  origin as configured (demo_rp_origin), never the Host
 *                  header of the request.
 *
 * Owns those pages' wiring. Must never run without --demo.
 */
#ifndef AUTHORITY_DEMO_RP_H
#define AUTHORITY_DEMO_RP_H

#include <stddef.h>

struct authority;

/* Listens on listen ("ADDR:PORT") and prints "demo relying party on
 * http://ADDR:PORT" on stdout. Returns 0 or VEP_ERR_* with err set. */
int demo_rp_start(struct authority *a, const char *listen, char *err, size_t errlen);

/* This site's origin: "http://" and the address it listens on (derived
 * from the configured listen, see demo/demo.h), a wildcard address read as
 * loopback. The audience it verifies assertions for, and the origin its
 * webmail frames /embed from. Only after demo_rp_start succeeded. */
void demo_rp_origin(const struct authority *a, char *out, size_t outlen);

/* Stops it. NULL-safe on a demo that did not start one. */
void demo_rp_stop(struct authority *a);

#endif
