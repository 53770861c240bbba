#!/bin/sh
# setup.sh - installs playwright-core and typescript (pinned in
# package-lock.json; typescript checks www/rp.d.ts) into
# tests/browser/node_modules when missing, without downloading any browser:
# the tests drive Debian's chromium (/usr/bin/chromium). Also prepares
# tests/interop (Mozilla's verifier, used to check assertions made in the
# browser). Exits 0 when ready.
set -eu
cd "$(dirname "$0")"
sh ../interop/setup.sh
if [ -f node_modules/playwright-core/package.json ] &&
    [ -f node_modules/typescript/package.json ]; then
	exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "setup.sh: npm not found" >&2; exit 1; }
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund >&2
test -f node_modules/playwright-core/package.json
test -f node_modules/typescript/package.json
