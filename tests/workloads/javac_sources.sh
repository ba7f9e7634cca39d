#!/bin/sh
# javac_sources.sh - prepares the javac workload: N source files of the JDK's
# own java.util packages, unpacked from openjdk-17-source's lib/src.zip.
#
# Usage: tests/workloads/javac_sources.sh DIR [N]
#   DIR  an empty or new directory (temporary; nothing here is committed)
#   N    how many files (default 200): the first N of java.base/java/util/**
#        in sorted path order, so the set is the same on every run
# Creates DIR/src/java.base/java/util/... and DIR/files.txt (one path per
# line, for `javac @DIR/files.txt`). Compile them as part of java.base:
#   javac --patch-module java.base=DIR/src/java.base -d OUT @DIR/files.txt
# Only the listed files are in DIR/src, so javac compiles exactly them and
# takes everything else from the JDK's java.base.
# Environment: JDK_SRC_ZIP  the source archive (default: the JDK of `javac`).
# Exit status: 0 on success; 1 (with a message) when src.zip is missing.
set -eu

[ $# -ge 1 ] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
DIR=$1
N=${2:-200}

if [ -z "${JDK_SRC_ZIP:-}" ]; then
	javac_bin=$(readlink -f "$(command -v javac)" 2>/dev/null || true)
	JDK_SRC_ZIP=${javac_bin%/bin/javac}/lib/src.zip
fi
[ -r "$JDK_SRC_ZIP" ] || {
	echo "javac_sources.sh: $JDK_SRC_ZIP not found - install the Debian package openjdk-17-source" >&2
	exit 1
}

mkdir -p "$DIR/src"
unzip -Z1 "$JDK_SRC_ZIP" 'java.base/java/util/*' | grep '\.java$' | LC_ALL=C sort |
	head -n "$N" >"$DIR/list.txt"
# shellcheck disable=SC2046 # one argument per listed path
unzip -q -o "$JDK_SRC_ZIP" $(cat "$DIR/list.txt") -d "$DIR/src"
sed "s|^|$DIR/src/|" "$DIR/list.txt" >"$DIR/files.txt"
rm -f "$DIR/list.txt"
