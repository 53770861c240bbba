#!/bin/sh
# run.sh SCRIPT - the meson test command for one browser test: prepares
# node_modules (setup.sh, serialised with the interop tests' lock), then runs
# SCRIPT with node. The script exits 77 (skip) only when chromium or
# node_modules is missing, which scripts/test counts as a failure.
here=$(cd "$(dirname "$0")" && pwd)
if command -v flock >/dev/null 2>&1; then
	flock "${TMPDIR:-/tmp}/vep-interop-setup.lock" sh "$here/setup.sh" ||
	    echo "run.sh: setup.sh failed" >&2
else
	sh "$here/setup.sh" || echo "run.sh: setup.sh failed" >&2
fi
command -v node >/dev/null 2>&1 || { echo "node not found" >&2; exit 77; }
exec node "$here/$1"
