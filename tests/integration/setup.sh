#!/bin/sh
# setup.sh - puts the two server programs the integration tests run but the
# authority does not need in build-tools/ (at the top, ignored like every
# build directory) when the machine lacks
# them: Prometheus's promtool (test_metrics.py checks a scrape with it) and
# nginx (test_loginhost.py runs it in front of the authority). Each is taken
# out of its Debian package with apt-get download and dpkg-deb, not
# installed: installing `prometheus` or `nginx` would start a system
# service (nginx on port 80), and the tests never touch system services.
# A program already on PATH (or nginx in /usr/sbin) is used as it is.
# Exits 0 when both are ready; non-zero when one could not be had.
set -eu
cd "$(dirname "$0")/../.."
tools=build-tools

# fetch PACKAGE PATH-IN-PACKAGE NAME: $tools/NAME from the package.
fetch() {
	work=$(mktemp -d)
	# apt-get download as root warns that _apt cannot write here: let it.
	chmod 0777 "$work"
	if ! (cd "$work" && { apt-get download "$1" >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null && apt-get download "$1" >/dev/null; }; }); then
		rm -rf "$work"
		echo "setup.sh: cannot download the Debian package $1" >&2
		return 1
	fi
	dpkg-deb -x "$work"/"$1"_*.deb "$work/root"
	mkdir -p "$tools"
	cp "$work/root/$2" "$tools/$3.tmp"
	mv "$tools/$3.tmp" "$tools/$3"
	rm -rf "$work"
}

if ! command -v promtool >/dev/null 2>&1 && [ ! -x "$tools/promtool" ]; then
	fetch prometheus usr/bin/promtool promtool
fi
"$tools/promtool" --version >/dev/null 2>&1 || promtool --version >/dev/null 2>&1

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ] && [ ! -x "$tools/nginx" ]; then
	fetch nginx usr/sbin/nginx nginx
fi
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || "$tools/nginx" -v 2>/dev/null
