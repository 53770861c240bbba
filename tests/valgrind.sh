#!/bin/sh
# valgrind.sh - runs every integration test with the server under Valgrind
# memcheck (a campaign, not part of the normal test run: it takes a while).
# A memcheck error or a definitely-lost block makes the server exit 99 and
# its stderr report it, which fails the test. Usage: tests/valgrind.sh
# [TEST...] (default: all of tests/integration/test_*.py).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build-valgrind"
[ -f "$build/build.ninja" ] || meson setup "$build" --buildtype=debugoptimized >/dev/null || exit 2
ninja -C "$build" >/dev/null || exit 2
export VEP_AUTHORITY="$build/authority/vep-authority" VEP_KEYTOOL="$build/keytool/vep-keytool"
export VEP_WRAPPER="valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite --num-callers=30"
export VEP_TIME_SCALE=10 PYTHONDONTWRITEBYTECODE=1
tests=${*:-$(cd "$top/tests/integration" && ls test_*.py | sed 's/^test_//; s/\.py$//')}
status=0
for t in $tests; do
	start=$(date +%s)
	if python3 "$top/tests/integration/test_$t.py" > "$build/valgrind-$t.log" 2>&1; then
		echo "ok   $t ($(($(date +%s) - start)) s)"
	else
		echo "FAIL $t ($(($(date +%s) - start)) s): see $build/valgrind-$t.log"
		status=1
	fi
done
exit $status
