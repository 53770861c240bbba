/*
 * email.h - email address syntax as BrowserID accepts it.
 *
 * ASCII only (verifiers reject others); local part of 1..64 printable
 * characters from RFC 5322's dot-atom (no leading, trailing or doubled dot,
 * no quotes, no spaces); domain of 1..253 characters, at least two labels of
 * 1..63 letters, digits or hyphens (no leading or trailing hyphen), total at
 * most 254. Normalisation lowercases the domain and keeps the local part.
 */
#ifndef VEP_EMAIL_H
#define VEP_EMAIL_H

#include <stddef.h>

#define VEP_EMAIL_MAX 254
#define VEP_EMAIL_LOCAL_MAX 64
#define VEP_DOMAIN_MAX 253

/* Validates len bytes of untrusted text and returns the normalised address
 * as new text (free()). Returns 0, VEP_ERR_EMAIL or VEP_ERR_NOMEM. */
int vep_email_normalize(const char *text, size_t len, char **out);

/* Splits a normalised address: *local and *domain are new strings. */
int vep_email_split(const char *email, char **local, char **domain);

/* 1 when s (NUL-terminated) is a valid domain name as above, else 0.
 * A host:port form is not a domain. */
int vep_domain_valid(const char *s);

/* Lowercases an ASCII domain in place. */
void vep_domain_lower(char *s);

/* 1 when s (NUL-terminated) names a host as issuers and delegation targets
 * appear in the wild: a domain as above, a single LDH label ("localhost") or
 * a dotted-quad IPv4 address, optionally followed by ":port" (1..65535).
 * Mozilla's own vectors use "127.0.0.1" and "localhost:10001"; whether such
 * a host is acceptable is the caller's policy. Else 0. */
int vep_host_valid(const char *s);

#endif
