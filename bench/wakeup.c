/*
 * wakeup.c - what one wake-up of a sleeping thread costs on this machine,
 * in CPU time: two threads pass one byte back and forth over a
 * SOCK_SEQPACKET socket pair (the kind of channel the network process and
 * the key process talk over), each sleeping in recv until the other
 * sends. Measured twice: the two threads pinned to two different cores,
 * then both on one core.
 *
 *   wakeup SECONDS  -> prints "cross_us X same_us Y"
 *
 * X and Y are the process's CPU time (user + system, both threads) per
 * wake-up: a round trip wakes each thread once. On bare metal both are a
 * few microseconds. On a VM, waking a thread whose virtual CPU has gone
 * idle takes an inter-processor interrupt, which the hypervisor delivers
 * (an exit on the sender's side, the target's halt ended on the other),
 * and the guest counts that time against the threads involved; on one
 * core no interrupt is needed. bench/run prints it as row W: a reading of
 * the machine, not a baseline.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"

struct peer {
	int sock;
	int cpu;
};

static double
cpu_us(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 +
	    (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

static int
pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Echoes every byte until the other end closes. */
static void *
echo(void *arg)
{
	struct peer *p = arg;
	char c;

	if (pin(p->cpu) != 0)
		return NULL;
	while (recv(p->sock, &c, 1, 0) == 1)
		if (send(p->sock, &c, 1, 0) != 1)
			break;
	return NULL;
}

/* CPU microseconds per wake-up with the echoing thread on cpu_b and this
 * one on cpu_a, over about seconds; -1 on failure. */
static double
measure(int cpu_a, int cpu_b, double seconds)
{
	struct peer p;
	pthread_t t;
	int sv[2];
	long trips = 0;
	double c0, t0, us = -1;
	char c = 0;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
		return -1;
	p.sock = sv[1];
	p.cpu = cpu_b;
	if (pin(cpu_a) != 0 || pthread_create(&t, NULL, echo, &p) != 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	/* One round trip first: the echoing thread is running and pinned. */
	if (send(sv[0], &c, 1, 0) == 1 && recv(sv[0], &c, 1, 0) == 1) {
		c0 = cpu_us();
		t0 = bench_now_s();
		while (bench_now_s() - t0 < seconds) {
			if (send(sv[0], &c, 1, 0) != 1 || recv(sv[0], &c, 1, 0) != 1)
				break;
			trips++;
		}
		if (trips > 0)
			us = (cpu_us() - c0) / (double)(2 * trips);
	}
	shutdown(sv[0], SHUT_RDWR);
	pthread_join(t, NULL);
	close(sv[0]);
	close(sv[1]);
	return us;
}

int
main(int argc, char **argv)
{
	double seconds, cross, same;

	if (argc != 2 || (seconds = atof(argv[1])) <= 0) {
		fprintf(stderr, "usage: wakeup SECONDS\n");
		return 2;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "wakeup: needs two cores\n");
		return 1;
	}
	cross = measure(0, 1, seconds);
	same = measure(0, 0, seconds);
	if (cross < 0 || same < 0) {
		fprintf(stderr, "wakeup: cannot pin threads or open a socket pair\n");
		return 1;
	}
	printf("cross_us %.1f same_us %.1f\n", cross, same);
	return 0;
}
