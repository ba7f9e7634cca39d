#!/bin/sh
# Installs the Debian packages objscope needs to build, test and benchmark.
# Idempotent: does nothing when everything is present. Needs root (or sudo)
# when something is missing.
set -e
PKGS="build-essential pkg-config libcapstone-dev libunwind-dev libcriterion-dev libelf-dev
libdw-dev libjson-c-dev zlib1g-dev libnuma-dev libpfm4-dev linux-perf hyperfine sqlite3 time"
# Report formats: pprof (protobuf-c, checked with `go tool pprof`), HTML
# (assets embedded with xxd, npm libraries, tested in headless chromium).
PKGS="$PKGS protobuf-c-compiler libprotobuf-c-dev golang-go chromium xxd"
# The JSON report's schema (docs/report.schema.json) is checked against real
# reports by tests/schema/validate_report.py.
PKGS="$PKGS python3 python3-jsonschema"
# Java launch mode: its end-to-end tests compile and run Java fixtures.
PKGS="$PKGS openjdk-17-jdk-headless"
# HotSpot Zero (`java -zero`, interpreter only): runtimes/hotspot, tests/e2e/zero.c.
PKGS="$PKGS openjdk-17-jre-zero"
# Real Java workloads (tests/workloads/, tests/e2e/workloads.c,
# bench/overhead_java.sh): the JDK's sources for javac, and H2.
PKGS="$PKGS openjdk-17-source libh2-java"
# valgrind: lackey traces for the exact reuse-distance engine (docs/REUSE.md)
PKGS="$PKGS valgrind"
# `make fuzz` (libFuzzer: clang + its runtime) and `make asan` (gcc's libasan/libubsan).
PKGS="$PKGS clang clang-14 libclang-rt-14-dev libasan8 libubsan1"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
# node and npm: any install will do (Debian's nodejs + npm, or a vendor's
# nodejs that ships npm and conflicts with Debian's npm package).
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
[ -z "$missing" ] && exit 0
echo "objscope: installing Debian packages:$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
