#!/bin/sh
# run.sh - run every benchmark: the scripts in bench/ (except this one and
# lib.sh, their shared helpers) and
# the programs built from bench/*.c into build/bench/ (without arguments).
# `make bench` calls it. Exit status: 0 when all passed, 1 otherwise.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
status=0

for script in bench/*.sh; do
	case $script in bench/run.sh|bench/lib.sh) continue ;; esac
	[ -f "$script" ] || continue
	echo "== $script"
	sh "$script" || { echo "run.sh: $script failed" >&2; status=1; }
done
for prog in build/bench/*; do
	if [ ! -f "$prog" ] || [ ! -x "$prog" ]; then continue; fi
	echo "== $prog"
	"$prog" || { echo "run.sh: $prog failed" >&2; status=1; }
done
exit "$status"
