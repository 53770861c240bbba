/*
 * signrate.c - the physical limit of certificate issuance: how many RS256
 * certificates per second this machine signs with one domain key on N
 * threads, through the same libvep call the authority uses (vep_cert_sign:
 * payload, base64url and an RSA-2048 PKCS#1 v1.5 signature).
 *
 *   signrate KEY.pem THREADS SECONDS [own|prepared]  -> prints "signs_per_s N"
 *
 * Without a mode, all threads share one key (vep_cert_sign on it). With
 * "own", every thread loads its own copy of the key: OpenSSL 3.0 gives an
 * RSA key one blinding factor for the thread that used it first and a
 * shared, locked one to all others, so the difference is what sharing
 * costs. With "prepared", every thread signs through a vep_key_signer of
 * its own (key.h: its own copy of the key and a signing context set up
 * once, as the key process's loops do), via vep_cert_sign_with, so the
 * difference from "own" is what the per-signature set-up costs.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cert.h"
#include "clock.h"
#include "err.h"
#include "jws.h"
#include "key.h"
#include "util.h"

struct job {
	const char *path;                /* load a key of its own when set */
	int prepared;                    /* sign through a vep_key_signer of its own */
	const vep_key *domain;
	const vep_key *user;
	double seconds;
	atomic_long *count;
};

/* jws.h's vep_signer sign function over a vep_key_signer (ctx). */
static int
prepared_sign(void *ctx, const vep_key *pub, const uint8_t *msg, size_t len,
    uint8_t **sig, size_t *siglen)
{
	(void)pub;
	return vep_key_signer_sign(ctx, msg, len, sig, siglen);
}

static void *
run(void *arg)
{
	struct job *j = arg;
	vep_key *own = NULL;
	vep_key_signer *ks = NULL;
	const vep_key *domain = j->domain;
	struct vep_signer s;
	double end;
	long n = 0;
	int rc;

	if (j->path != NULL) {
		if (vep_key_load_private(j->path, &own) != 0) {
			fprintf(stderr, "signrate: cannot load %s\n", j->path);
			exit(1);
		}
		domain = own;
	}
	if (j->prepared && vep_key_signer_new(domain, &ks) != 0) {
		fprintf(stderr, "signrate: cannot prepare a signer\n");
		exit(1);
	}
	/* The shared key only names the algorithm; ks signs. */
	s.pub = domain;
	s.sign = prepared_sign;
	s.ctx = ks;
	end = bench_now_s() + j->seconds;
	while (bench_now_s() < end) {
		struct vep_cert_params p = { "example.test", "alice@example.test", j->user, 0, 0,
					     NULL };
		char *cert = NULL;
		p.iat_ms = vep_now_ms();
		p.exp_ms = p.iat_ms + 3600 * 1000;
		rc = ks != NULL ? vep_cert_sign_with(&s, &p, &cert) :
		    vep_cert_sign(domain, &p, &cert);
		if (rc != 0) {
			fprintf(stderr, "signrate: signing failed\n");
			exit(1);
		}
		free(cert);
		n++;
	}
	atomic_fetch_add(j->count, n);
	vep_key_signer_free(ks);
	vep_key_free(own);
	return NULL;
}

int
main(int argc, char **argv)
{
	vep_key *domain = NULL, *user = NULL;
	atomic_long count = 0;
	pthread_t t[256];
	struct job j;
	double start;
	int i, n;

	if ((argc != 4 && (argc != 5 || (strcmp(argv[4], "own") != 0 &&
	    strcmp(argv[4], "prepared") != 0))) ||
	    (n = atoi(argv[2])) < 1 || n > 256) {
		fprintf(stderr, "usage: signrate KEY.pem THREADS SECONDS [own|prepared]\n");
		return 2;
	}
	if (vep_key_load_private(argv[1], &domain) != 0 || vep_key_generate_rsa(2048, &user) != 0) {
		fprintf(stderr, "signrate: cannot load %s\n", argv[1]);
		return 2;
	}
	j.path = argc == 5 && strcmp(argv[4], "own") == 0 ? argv[1] : NULL;
	j.prepared = argc == 5 && strcmp(argv[4], "prepared") == 0;
	j.domain = domain;
	j.user = user;
	j.seconds = atof(argv[3]);
	j.count = &count;
	start = bench_now_s();
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, run, &j);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("signs_per_s %.1f\n", (double)atomic_load(&count) / (bench_now_s() - start));
	vep_key_free(domain);
	vep_key_free(user);
	return 0;
}
