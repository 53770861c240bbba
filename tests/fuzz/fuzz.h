/*
 * fuzz.h - the glue every fuzz harness shares.
 *
 * A harness defines one `int fuzz_main(const uint8_t *data, size_t len)`
 * that feeds data to one parser and checks the invariants that must hold on
 * whatever the parser accepts (round trips, canonical forms), aborting via
 * FUZZ_CHECK when one is violated. Built with -Dfuzzing=true (clang),
 * VEP_FUZZ_LIBFUZZER is defined and this header supplies libFuzzer's entry
 * point; otherwise the harness is linked with replay.c, which runs the saved
 * corpus in every normal test run.
 *
 * A harness must never keep state between inputs (libFuzzer runs millions
 * in one process) and must release everything it allocates, so LeakSanitizer
 * finds leaks in the parsers, not in the harness.
 */
#ifndef VEP_FUZZ_H
#define VEP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int fuzz_main(const uint8_t *data, size_t len);

/* Aborts (so libFuzzer and the replay driver both report a crash) when an
 * invariant does not hold. */
#define FUZZ_CHECK(c) do { \
	if (!(c)) { \
		fprintf(stderr, "invariant violated: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
		abort(); \
	} \
} while (0)

#ifdef VEP_FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)fuzz_main(data, size);
	return 0;
}
#endif

#endif
