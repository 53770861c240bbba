#!/bin/sh
# setup.sh - installs Mozilla's verifier (pinned in package-lock.json) into
# tests/interop/node_modules when it is missing, the way docs/PROTOCOL.md ("Installing")
# says: npm ci without scripts (browserid-crypto's postinstall crashes on
# node >= 14), then build the libs/ bundle the library loads.
# Exits 0 when node_modules is ready; non-zero when it could not install.
set -eu
cd "$(dirname "$0")"
if [ -f node_modules/browserid-crypto/libs/minimal.js ] &&
   [ -f node_modules/browserid-local-verify/package.json ]; then
	exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "setup.sh: npm not found" >&2; exit 1; }
npm ci --ignore-scripts --no-audit --no-fund >&2
node node_modules/browserid-crypto/scripts/package.js >&2
test -f node_modules/browserid-crypto/libs/minimal.js
