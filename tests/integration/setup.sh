#!/bin/sh
# setup.sh - puts Prometheus's promtool (which checks a metrics scrape in
# test_metrics.py) in tests/integration/tools/ when it is missing: taken out
# of Debian's `prometheus` package with apt-get download and dpkg-deb, not
# installed, because installing the package would start a Prometheus
# service on the machine, and the tests never touch system services.
# A promtool already on PATH is used as it is.
# Exits 0 when promtool is ready; non-zero when it could not be had.
set -eu
cd "$(dirname "$0")"
if command -v promtool >/dev/null 2>&1 || [ -x tools/promtool ]; then
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# apt-get download as root warns that _apt cannot write here: let it.
chmod 0777 "$work"
(cd "$work" && { apt-get download prometheus >/dev/null 2>&1 ||
	{ apt-get update -qq >/dev/null && apt-get download prometheus >/dev/null; }; })
dpkg-deb -x "$work"/prometheus_*.deb "$work/root"
mkdir -p tools
cp "$work/root/usr/bin/promtool" tools/promtool.tmp
mv tools/promtool.tmp tools/promtool
tools/promtool --version >/dev/null 2>&1
