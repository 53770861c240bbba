/*
 * www.h - the files of www/, embedded in the binary at build time by
 * www/embed.py, so the authority serves its pages with nothing installed
 * beside it and a page can never be older or newer than the code that
 * answers its requests.
 */
#ifndef VEP_WWW_H
#define VEP_WWW_H

#include <stddef.h>

struct www_file {
	const char *path;            /* URL path: "/sign-in", "/vep.js", "/demo-rp/..." */
	const char *ctype;           /* Content-Type */
	const unsigned char *data;   /* the bytes, NUL-terminated for convenience */
	size_t len;                  /* without that NUL */
	const char *etag;            /* strong ETag, quoted */
};

extern const struct www_file www_files[];
extern const size_t www_files_count;

#endif
