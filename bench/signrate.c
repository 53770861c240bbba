/*
 * signrate.c - the physical limit of certificate issuance: how many RS256
 * certificates per second this machine signs with one domain key on N
 * threads, through the same libvep call the authority uses (vep_cert_sign:
 * payload, base64url and an RSA-2048 PKCS#1 v1.5 signature).
 *
 *   signrate KEY.pem THREADS SECONDS     -> prints "signs_per_s N"
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cert.h"
#include "err.h"
#include "key.h"
#include "util.h"

struct job {
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
	double end = now_s() + j->seconds;
	long n = 0;

	while (now_s() < end) {
		struct vep_cert_params p = { "example.test", "alice@example.test", j->user, 0, 0 };
		char *cert = NULL;
		p.iat_ms = vep_now_ms();
		p.exp_ms = p.iat_ms + 3600 * 1000;
		if (vep_cert_sign(j->domain, &p, &cert) != 0) {
			fprintf(stderr, "signrate: signing failed\n");
			exit(1);
		}
		free(cert);
		n++;
	}
	atomic_fetch_add(j->count, n);
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

	if (argc != 4 || (n = atoi(argv[2])) < 1 || n > 256) {
		fprintf(stderr, "usage: signrate KEY.pem THREADS SECONDS\n");
		return 2;
	}
	if (vep_key_load_private(argv[1], &domain) != 0 || vep_key_generate_rsa(2048, &user) != 0) {
		fprintf(stderr, "signrate: cannot load %s\n", argv[1]);
		return 2;
	}
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
