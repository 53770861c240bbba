#!/bin/sh
# campaign.sh - runs each libFuzzer harness for N seconds, then merges the
# inputs that add coverage into the saved corpus (tests/fuzz/corpus/<h>/),
# which every normal test run replays.
#
# Build first (clang):
#   CC=clang meson setup build-fuzz -Dfuzzing=true \
#       -Db_sanitize=address,undefined -Db_lundef=false
#   ninja -C build-fuzz
# Usage: tests/fuzz/campaign.sh [BUILD_DIR] [SECONDS] [HARNESS...]
#   defaults: build-fuzz, 60, all harnesses.
# Crashes are written to BUILD_DIR/fuzz-artifacts/; the script exits 1 if
# any harness found one. Review merged files before committing them.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/build-fuzz}
secs=${2:-60}
[ $# -gt 2 ] && shift 2 || set --
harnesses=${*:-"jws key_json cert backed support email api_body cookie ipc config proxy"}
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
status=0
for h in $harnesses; do
	bin="$build/tests/fuzz/fuzz_$h"
	saved="$here/corpus/$h"
	work=$(mktemp -d)
	echo "== $h: ${secs}s"
	# New inputs go to $work; the saved corpus is read as seeds only.
	if ! "$bin" -max_total_time="$secs" -print_final_stats=1 \
	    -artifact_prefix="$artifacts/$h-" "$work" "$saved" 2>"$work.log"; then
		echo "   CRASH: see $work.log and $artifacts/"
		status=1
	fi
	grep -E "stat::(number_of_executed_units|average_exec_per_sec|new_units_added)" "$work.log" | sed 's/^/   /'
	# Keep only inputs that add coverage to what is saved already.
	"$bin" -merge=1 "$saved" "$work" 2>/dev/null >/dev/null
	echo "   saved corpus now $(ls "$saved" | wc -l) files"
	rm -rf "$work"
	[ $status -ne 0 ] || rm -f "$work.log"
done
exit $status
