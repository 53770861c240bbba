/*
 * demo_rp.h - the demo's relying party: a second origin (another port) that
 * a newcomer can sign in to with the demo account, so the whole journey can
 * be clicked through with nothing else installed:
 *   GET  /         a website with "Sign in with your email" (rp.js)
 *   GET  /webmail  a pretend webmail that provisions the browser after its
 *                  own login through the authority's hidden /embed page
 *   POST /verify   {"assertion"} -> {"email","issuer","audience"} or 401:
 *                  what a relying party's server does, with libvep, against
 *                  the demo domain's keys; the audience is this site's own
 *                  origin (http:// and the Host it was reached by).
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

/* Stops it. NULL-safe on a demo that did not start one. */
void demo_rp_stop(struct authority *a);

#endif
