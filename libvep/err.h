/*
 * err.h - the one error vocabulary of libvep and everything built on it.
 *
 * Every fallible function returns 0 (VEP_OK) or one negative VEP_ERR_* code.
 * Foreign conventions (OpenSSL's 1/0, jansson's NULL, errno) are converted at
 * the wrapper edge and never leak past it. vep_strerror() gives a short,
 * stable English reason suitable for a 400 body or a CLI message: it never
 * contains input data, so it is safe to show to anyone.
 */
#ifndef VEP_ERR_H
#define VEP_ERR_H

enum {
	VEP_OK = 0,
	VEP_ERR_NOMEM = -1,      /* allocation failed */
	VEP_ERR_INVALID = -2,    /* malformed input (syntax, encoding, shape) */
	VEP_ERR_TOOBIG = -3,     /* input over a documented size limit */
	VEP_ERR_ALG = -4,        /* unknown or unsupported algorithm */
	VEP_ERR_KEYSIZE = -5,    /* key of a size the protocol does not allow */
	VEP_ERR_KEY = -6,        /* key values out of range, inconsistent or unsafe */
	VEP_ERR_BADSIG = -7,     /* signature does not verify */
	VEP_ERR_EXPIRED = -8,    /* exp at least the clock skew before now */
	VEP_ERR_NOTYET = -9,     /* iat more than the clock skew after now */
	VEP_ERR_AUDIENCE = -10,  /* audience does not match */
	VEP_ERR_ISSUER = -11,    /* issuer not allowed for this email */
	VEP_ERR_EMAIL = -12,     /* email syntax not acceptable */
	VEP_ERR_CHAIN = -13,     /* not exactly one certificate in a backed assertion */
	VEP_ERR_DISABLED = -14,  /* support document says disabled */
	VEP_ERR_IO = -15,        /* file or network I/O failed */
	VEP_ERR_PERM = -16,      /* private key file readable by group or others */
	VEP_ERR_EXISTS = -17,    /* refusing to overwrite an existing file */
	VEP_ERR_CRYPTO = -18,    /* the crypto library failed internally */
	VEP_ERR_NOKEY = -19,     /* no key / private key required but absent */
	VEP_ERR_ARG = -20,       /* caller passed a bad argument (programming error) */
	VEP_ERR_TIME = -21,      /* times missing, out of range or inconsistent */
	VEP_ERR_DELEGATION = -22, /* delegation loop or too deep */
};

/* Returns a static string for an error code (never NULL). */
const char *vep_strerror(int err);

#endif
