/*
 * api/pages.h - the pages and scripts of www/ (embedded, see www/www.h), with
 * the security headers each kind of page needs.
 *
 * Every page gets a Content-Security-Policy without inline script or
 * style, and framing only where the protocol needs it:
 *   - the sign-in, account and share pages, and the legacy authentication
 *     page: never framed;
 *   - /embed (the hidden page a webmail frames to provision after its own
 *     login): framed by exactly the configured embed_origins, and by
 *     nobody when there are none; the page is given the same list
 *     ("{{EMBED_ORIGINS}}") and talks to no other origin;
 *   - /sign-in/provision (legacy): framed by the configured shim_origin
 *     only, and it alone may load scripts from there; without a
 *     shim_origin it is not served (404 saying so).
 * The legacy pages load the shim through their "{{SHIM_SCRIPT}}"
 * placeholder, replaced when served by its script tag or, without a
 * shim_origin, by nothing (the authentication page is then a plain
 * sign-in page).
 *
 * Owns the page table. Must never serve a file outside www_files[] nor the
 * demo relying party's files (those live under /demo-rp/, served by
 * demo/rp.c on its own port).
 */
#ifndef AUTHORITY_API_PAGES_H
#define AUTHORITY_API_PAGES_H

#include <stddef.h>

struct req;
struct www_file;

/* The embedded file at exactly this path (including /demo-rp/ files), or
 * NULL. For demo/rp.c, which serves its own few. */
const struct www_file *static_file(const char *path);

/* Returns f's text with every "{{NAME}}" replaced by value (new text, *len
 * its length), or NULL when out of memory. */
char *static_fill(const struct www_file *f, const char *name, const char *value, size_t *len);

/* 1 when path names a file the authority serves. */
int static_exists(const char *path);

/* Answers GET/HEAD for r->path (which static_exists). Needs r->domain. */
void static_serve(struct req *r);

#endif
