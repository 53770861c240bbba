/*
 * fuzz_config.c - the configuration file parser (config_load), fed through
 * an in-memory file so an input costs no disk.
 *
 * Invariants: exactly one of success and a message; a message names the
 * file; an accepted configuration has at least one domain, each with a
 * lowercase name, an absolute key_dir, and no two domains with one name;
 * every accepted file is accepted again, to the same domains.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/config.h"
#include "fuzz.h"

static struct config *
load(int fd, char *err, size_t errlen)
{
	char path[64];
	struct config *cfg = NULL;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err[0] = '\0';
	if (config_load(path, &cfg, err, errlen) != 0) {
		FUZZ_CHECK(cfg == NULL);
		FUZZ_CHECK(strstr(err, path) != NULL || strstr(err, "out of memory") != NULL);
	}
	return cfg;
}

int
fuzz_main(const uint8_t *data, size_t len)
{
	struct config *cfg, *again;
	char err[1024];
	int fd;

	if ((fd = memfd_create("vep-fuzz-config", MFD_CLOEXEC)) < 0)
		return 0;
	if (len > 0 && write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return 0;
	}
	cfg = load(fd, err, sizeof(err));
	if (cfg != NULL) {
		FUZZ_CHECK(cfg->ndomains >= 1);
		for (size_t i = 0; i < cfg->ndomains; i++) {
			const char *n = cfg->domains[i].name;

			FUZZ_CHECK(cfg->domains[i].key_dir != NULL &&
			    cfg->domains[i].key_dir[0] == '/');
			for (const char *p = n; *p != '\0'; p++)
				FUZZ_CHECK(!(*p >= 'A' && *p <= 'Z'));
			for (size_t j = 0; j < i; j++)
				FUZZ_CHECK(strcmp(n, cfg->domains[j].name) != 0);
		}
		again = load(fd, err, sizeof(err));
		FUZZ_CHECK(again != NULL && again->ndomains == cfg->ndomains);
		config_free(again);
		config_free(cfg);
	}
	close(fd);
	return 0;
}
