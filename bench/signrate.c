/*
 * signrate.c - the physical limit of certificate issuance: how many RS256
 * certificates per second this machine signs with one domain key on N
 * threads, through the same libvep call the authority uses (vep_cert_sign:
 * payload, base64url and an RSA-2048 PKCS#1 v1.5 signature).
 *
 *   signrate KEY.pem THREADS SECONDS [own]  -> prints "signs_per_s N"
 *
 * With "own", every thread loads its own copy of the key (as the server's
 * threads share one): OpenSSL 3.0 gives an RSA key one blinding factor for
 * the thread that used it first and a shared, locked one to all others,
 * so the difference is what sharing costs.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cert.h"
#include "err.h"
#include "key.h"
#include "util.h"

struct job {
	const char *path;                /* load a key of its own when set */
	const vep_key *domain;
	const vep_key *user;
	double seconds;
	atomic_long *count;
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *
run(void *arg)
{
	struct job *j = arg;
	vep_key *own = NULL;
	const vep_key *domain = j->domain;
	double end;
	long n = 0;

	if (j->path != NULL) {
		if (vep_key_load_private(j->path, &own) != 0) {
			fprintf(stderr, "signrate: cannot load %s\n", j->path);
			exit(1);
		}
		domain = own;
	}
	end = now_s() + j->seconds;
	while (now_s() < end) {
		struct vep_cert_params p = { "example.test", "alice@example.test", j->user, 0, 0,
					     NULL };
		char *cert = NULL;
		p.iat_ms = vep_now_ms();
		p.exp_ms = p.iat_ms + 3600 * 1000;
		if (vep_cert_sign(domain, &p, &cert) != 0) {
			fprintf(stderr, "signrate: signing failed\n");
			exit(1);
		}
		free(cert);
		n++;
	}
	atomic_fetch_add(j->count, n);
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

	if ((argc != 4 && (argc != 5 || strcmp(argv[4], "own") != 0)) ||
	    (n = atoi(argv[2])) < 1 || n > 256) {
		fprintf(stderr, "usage: signrate KEY.pem THREADS SECONDS [own]\n");
		return 2;
	}
	if (vep_key_load_private(argv[1], &domain) != 0 || vep_key_generate_rsa(2048, &user) != 0) {
		fprintf(stderr, "signrate: cannot load %s\n", argv[1]);
		return 2;
	}
	j.path = argc == 5 ? argv[1] : NULL;
	j.domain = domain;
	j.user = user;
	j.seconds = atof(argv[3]);
	j.count = &count;
	start = now_s();
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, run, &j);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("signs_per_s %.1f\n", (double)atomic_load(&count) / (now_s() - start));
	vep_key_free(domain);
	vep_key_free(user);
	return 0;
}
