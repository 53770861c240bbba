# scripts/lib.sh - shared by scripts/demo and scripts/test: installs what is
# missing (Debian packages, npm packages) and builds. Sourced, not run.

# Packages the authority needs to build and run (and the demo PAM stack;
# scdoc makes the man pages; libpq-dev: the PostgreSQL store's client
# library).
VEP_APT_BUILD="gcc libc6-dev meson ninja-build pkg-config python3 libssl-dev libevent-dev
  libsqlite3-dev libjansson-dev libpam0g-dev libpam-wrapper sqlite3 scdoc libpq-dev"
# Extra packages for the test suite (uncrustify: the style suite's style_c;
# openssl: tests make keys and certificates of kinds vep-keytool refuses;
# mandoc: the install test lints the man pages; postgresql-15: the
# PostgreSQL store's tests start a private server, tests/pgcluster.py;
# haproxy: the cluster test puts one in front of two instances;
# libpam-oath, oathtool: the browser test of a second factor, a TOTP code).
VEP_APT_TEST="openssl libnss-wrapper libpam-modules nodejs npm chromium fonts-dejavu-core
  uncrustify mandoc postgresql-15 haproxy libpam-oath oathtool"

vep_log() { printf '==> %s\n' "$*" >&2; }

# vep_apt_ensure PKG...: installs the packages that are not installed yet.
vep_apt_ensure() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	# A node installed outside Debian (e.g. nodesource) is fine: don't replace it.
	if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
		local keep=() m
		for m in "${missing[@]}"; do
			case "$m" in nodejs|npm) ;; *) keep+=("$m") ;; esac
		done
		missing=("${keep[@]}")
	fi
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing packages: ${missing[*]}" >&2
		echo "run as root, or: sudo apt-get install ${missing[*]}" >&2
		return 1
	fi
	vep_log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || return 1
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || return 1
}

# Where the scripts' own logs go: an ignored build directory (.gitignore's
# /build*/), never the source tree.
VEP_LOG_DIR=build-logs

# vep_build DIR [meson options...]: configures (once) and builds; the logs
# are $VEP_LOG_DIR/DIR.setup.log and DIR.ninja.log.
vep_build() {
	local dir=$1; shift
	local log="$VEP_LOG_DIR/$(basename "$dir")"
	mkdir -p "$VEP_LOG_DIR" || return 1
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >"$log.setup.log" 2>&1 || {
			cat "$log.setup.log" >&2; return 1; }
	fi
	ninja -C "$dir" >"$log.ninja.log" 2>&1 || { cat "$log.ninja.log" >&2; return 1; }
}
