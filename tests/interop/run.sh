#!/bin/sh
# run.sh SCRIPT - the meson test command for one interop test: installs
# node_modules if missing (setup.sh, serialised with a lock because meson
# runs tests in parallel), then runs SCRIPT with node. The script itself
# exits 77 (skip) when node_modules is still missing.
here=$(cd "$(dirname "$0")" && pwd)
if command -v flock >/dev/null 2>&1; then
	flock "${TMPDIR:-/tmp}/vep-interop-setup.lock" sh "$here/setup.sh" ||
	    echo "run.sh: setup.sh failed" >&2
else
	sh "$here/setup.sh" || echo "run.sh: setup.sh failed" >&2
fi
command -v node >/dev/null 2>&1 || { echo "node not found" >&2; exit 77; }
exec node "$here/$1"
