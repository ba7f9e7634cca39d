#!/bin/sh
# Installs the Debian packages objscope needs to build, test and benchmark.
# Idempotent: does nothing when everything is present. Needs root (or sudo)
# when something is missing.
set -e
PKGS="build-essential pkg-config libcapstone-dev libunwind-dev libcriterion-dev libelf-dev
libdw-dev libjson-c-dev zlib1g-dev libnuma-dev libpfm4-dev linux-perf hyperfine sqlite3 time"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "objscope: installing Debian packages:$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
