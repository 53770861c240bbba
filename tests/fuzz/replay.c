/*
 * replay.c - runs a fuzz harness's fuzz_main over a saved corpus, so every
 * normal test run (gcc, ASan/UBSan) replays what fuzzing found.
 *
 * Usage: fuzz_<name> PATH...  where each PATH is a corpus directory (every
 * regular file in it, in name order; dot files skipped) or a single file.
 * Exits 1 when a path cannot be read or when no input was found at all: a
 * corpus that silently vanished must not pass as "no crashes". A violated
 * invariant aborts inside the harness.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Largest corpus file replayed (bytes): libFuzzer's default -max_len is far
 * below this; anything larger is a mistake in the corpus. */
#define REPLAY_MAX_BYTES (1024 * 1024)

/* Runs one file. Returns 0, or -1 when it cannot be read. */
static int
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t n = 0;
	int ret = -1;

	if (f == NULL)
		goto out;
	if ((buf = malloc(REPLAY_MAX_BYTES + 1)) == NULL)
		goto out;
	n = fread(buf, 1, REPLAY_MAX_BYTES + 1, f);
	if (ferror(f) || n > REPLAY_MAX_BYTES)
		goto out;
	/* Shrink to the exact size so ASan sees any read past the input. */
	uint8_t *exact = malloc(n ? n : 1);
	if (exact == NULL)
		goto out;
	memcpy(exact, buf, n);
	(void)fuzz_main(exact, n);
	free(exact);
	ret = 0;
out:
	if (ret != 0)
		fprintf(stderr, "replay: cannot read %s\n", path);
	free(buf);
	if (f != NULL)
		fclose(f);
	return ret;
}

static int
skip_dots(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

int
main(int argc, char **argv)
{
	long count = 0;
	int failed = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: no such path %s\n", argv[i]);
			failed = 1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			failed |= run_file(argv[i]) != 0;
			count++;
			continue;
		}
		struct dirent **names = NULL;
		int n = scandir(argv[i], &names, skip_dots, alphasort);
		if (n < 0) {
			fprintf(stderr, "replay: cannot list %s\n", argv[i]);
			failed = 1;
			continue;
		}
		for (int j = 0; j < n; j++) {
			char path[4096];
			int w = snprintf(path, sizeof path, "%s/%s", argv[i], names[j]->d_name);
			if (w < 0 || (size_t)w >= sizeof path) {
				fprintf(stderr, "replay: path too long in %s\n", argv[i]);
				failed = 1;
			} else if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				failed |= run_file(path) != 0;
				count++;
			}
			free(names[j]);
		}
		free(names);
	}
	printf("replayed %ld inputs\n", count);
	if (count == 0) {
		fprintf(stderr, "replay: no inputs found\n");
		return 1;
	}
	return failed;
}
