#!/bin/sh
# attach_pair.sh - a prefix for bench/pair.sh that measures `objscope attach`:
# runs COMMAND, attaches to it after DELAY seconds for DUR seconds, and waits
# for it; the whole command's CPU (/usr/bin/time around this script) is the
# program's plus objscope's.
# Usage: PAIR_B="sh bench/attach_pair.sh [-w DELAY] [-d DUR] [-o OUT] [-a OPT] --" \
#          sh bench/pair.sh --rounds 10 -- COMMAND...
# (COMMAND must run for longer than DELAY + DUR; defaults: 1 s, 10 s; -a adds an
# option to the attach, e.g. -a --replicas; repeatable)
set -eu
DELAY=1
DUR=10
OUT=attach.data
OPTS=
OBJSCOPE=${OBJSCOPE:-build/objscope}
while [ $# -gt 0 ]; do
	case "$1" in
	-w) DELAY=$2; shift 2 ;;
	-d) DUR=$2; shift 2 ;;
	-o) OUT=$2; shift 2 ;;
	-a) OPTS="$OPTS $2"; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: attach_pair.sh [-w DELAY] [-d DUR] [-o OUT] [-a OPT] -- COMMAND..." >&2; exit 2 ;;
	esac
done
"$@" &
pid=$!
sleep "$DELAY"
# bench/pair.sh puts /usr/bin/time (and env, nice, ...) before the program:
# attach to the program, down the chain of wrappers that have one child
# each (attaching to the wrapper would measure nothing)
target=$pid
while :; do
	case "$(cat "/proc/$target/comm" 2>/dev/null)" in
	time | env | nice | taskset | timeout) ;;
	*) break ;;
	esac
	kids=$(cat "/proc/$target/task/$target/children" 2>/dev/null || true)
	# shellcheck disable=SC2086 # kids: pids, split on purpose
	set -- $kids
	[ $# -eq 1 ] || break
	target=$1
done
echo "attach_pair.sh: attaching to pid $target ($(cat "/proc/$target/comm" 2>/dev/null))" >&2
failed=0
# shellcheck disable=SC2086 # OPTS: options, split on purpose
"$OBJSCOPE" attach -q $OPTS -d "$DUR" -o "$OUT" "$target" || {
	echo "attach_pair.sh: attach failed" >&2
	failed=1
}
status=0
wait "$pid" || status=$?
# a failed attach fails the run: bench/pair.sh then says its ratios mean nothing
[ "$failed" -eq 0 ] || exit 1
exit "$status"
