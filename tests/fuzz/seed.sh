#!/bin/sh
# seed.sh - regenerates the seed corpus under tests/fuzz/corpus/.
#
# Signed seeds (certificates, assertions, backed assertions, support
# documents, key JSON) come from fuzz_seedgen (seedgen.c), which uses
# libvep's own signers with fresh keys, plus Mozilla's vectors from
# tests/vectors/; near-valid variants break one rule each. Existing
# files found by fuzzing campaigns (hash names) are left alone.
#
# Usage: tests/fuzz/seed.sh [BUILD_DIR]   (default: build-seed, created)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/build-seed}
[ -d "$build" ] || meson setup "$build" "$top" >/dev/null
ninja -C "$build" tests/fuzz/fuzz_seedgen >/dev/null
"$build/tests/fuzz/fuzz_seedgen" "$here/corpus" "$top/tests/vectors/browserid-crypto-vectors.json"
for d in "$here"/corpus/*/; do
	printf '%s: %s files\n' "$(basename "$d")" "$(ls "$d" | wc -l)"
done
