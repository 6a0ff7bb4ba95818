#!/usr/bin/env bash
# hugepages reserve: first against a copy of a fixture tree (--root: the
# bytes written, dry run, floor refusal, usage errors; no root needed), then
# on this live host (root): a dry run changes nothing, 16 more 2 MiB pages
# on node 0 are granted and read back, a floor at MemTotal is REFUSED with
# exit 2 and the numbers, and shrinking back restores the pool. The
# original pool sizes are restored on exit whatever happens.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
CTL=$B/numaguardctl
T=$(mktemp -d /tmp/ng-hp-live.XXXXXX)
HP=/sys/devices/system/node/node0/hugepages
declare -A orig=()
cleanup() {
        local f
        for f in "${!orig[@]}"; do echo "${orig[$f]}" > "$f" 2>/dev/null; done
        rm -rf "$T"
}
trap cleanup EXIT
export NUMAGUARD_ACTION_LOG=$T/actions.jsonl

# Each case is a list of steps; the first step that fails names the reason.
# verdict NAME prints exactly one "ok NAME" or "not ok NAME: why" line.
why=""
fail_step() { [ -n "$why" ] || why=$1; }
verdict() {
        if [ -z "$why" ]; then echo "ok $1"; else echo "not ok $1: $why"; sed 's/^/#   /' "$T/out" 2>/dev/null | head -20; fi
        why=""
}
# run WANT-RC ARGS...: numaguardctl ARGS into $T/out, exit status checked
run() {
        local want=$1; shift
        "$CTL" "$@" > "$T/out" 2>&1; RC=$?
        [ "$RC" = "$want" ] || fail_step "exit $RC, expected $want (numaguardctl $*)"
}
has() { grep -qF -- "$1" "$T/out" || fail_step "output lacks '$1'"; }
reads() { [ "$(cat "$1")" = "$2" ] || fail_step "$1 reads $(cat "$1"), expected $2"; }

echo 1..13
[ -x "$CTL" ] || { echo "not ok hugepages-live: $CTL not built"; exit 1; }
printf '[global]\nnode_free_floor = 0\n' > "$T/floor0.conf"
printf '[global]\nnode_free_floor = 1G\n' > "$T/floor1g.conf"

# ------------------------------------------------------ tree copy (--root)
cp -a tests/fixtures/trees/guest4-v2 "$T/tree"
NR2=$T/tree/sys/devices/system/node/node2/hugepages/hugepages-2048kB/nr_hugepages
run 0 hugepages reserve --size 2M --pages 64 --node 2 --dry-run --root "$T/tree" -c "$T/floor0.conf"
has "would write 64 to $T/tree/sys/devices/system/node/node2/hugepages/hugepages-2048kB/nr_hugepages (now: 2)"
reads "$NR2" 2
verdict hugepages-root-dry-run
run 2 hugepages reserve --size 2M --pages 64 --node 2 --root "$T/tree" -c "$T/floor1g.conf"
has "refused: 2M pages: would push a node below its free-memory floor: node 2: 62 more 2M pages need 124 MiB, MemFree is 478 MiB, floor 1024 MiB"
reads "$NR2" 2
verdict hugepages-root-refused
run 0 hugepages reserve --size 2048kB --pages 64 --node 2 --root "$T/tree" -c "$T/floor0.conf"
has "done: 2M pages: node 2 2 -> 64"
reads "$NR2" 64
verdict hugepages-root-write
run 3 hugepages reserve --size 4M --pages 8 --root "$T/tree"
has "this host has no 4M hugepages (sizes: 2M, 1G)"
verdict hugepages-root-bad-size
run 2 hugepages reserve --size 2M --pages 8 --node 9 --root "$T/tree"
has "refused: --node 9: no such node online (online: 0-3)"
verdict hugepages-root-bad-node
run 3 hugepages reserve --size 2M --root "$T/tree"
verdict hugepages-root-no-pages
run 0 hugepages apply --dry-run --root "$T/tree" -c "$T/floor0.conf"
verdict hugepages-root-apply
[ ! -s "$NUMAGUARD_ACTION_LOG" ] || fail_step "--root logged: $(cat "$NUMAGUARD_ACTION_LOG")"
verdict hugepages-root-not-logged

# ------------------------------------------------------------ live host
# (exit 77: the five live cases below are counted as skipped)
if [ "$(id -u)" != 0 ]; then echo "skip hugepages-live: needs root"; exit 77; fi
F2=$HP/hugepages-2048kB/nr_hugepages
if [ ! -w "$F2" ]; then echo "skip hugepages-live: no writable 2 MiB pool on node 0"; exit 77; fi
for f in "$HP"/hugepages-*/nr_hugepages; do orig[$f]=$(cat "$f"); done
before=${orig[$F2]}
want=$((before + 16))

run 0 hugepages reserve --size 2M --pages $want --node 0 --dry-run -c "$T/floor0.conf"
has "would write $want to $F2 (now: $before)"
reads "$F2" "$before"
[ ! -s "$NUMAGUARD_ACTION_LOG" ] || fail_step "the dry run logged: $(cat "$NUMAGUARD_ACTION_LOG")"
verdict hugepages-live-dry-run

run 0 hugepages reserve --size 2M --pages $want --node 0 -c "$T/floor0.conf"
has "wrote $want to $F2 (was: $before, read back: $want)"
has "done: 2M pages: node 0 $before -> $want"
reads "$F2" "$want"
verdict hugepages-live-reserve
grep -q '"MESSAGE_ID":"02e90a77f6674a8fafd45cfe1377e279".*"NUMAGUARD_OUTCOME":"done"' "$NUMAGUARD_ACTION_LOG" ||
        fail_step "no NOTICE entry with outcome done: $(cat "$NUMAGUARD_ACTION_LOG")"
verdict hugepages-live-logged

# A floor as large as the node: any growth is refused, with the numbers.
total_kib=$(awk '/MemTotal/ { print $4 }' /sys/devices/system/node/node0/meminfo)
printf '[global]\nnode_free_floor = %sK\n' "$total_kib" > "$T/floorall.conf"
run 2 hugepages reserve --size 2M --pages $((want + 16)) --node 0 -c "$T/floorall.conf"
has "refused: 2M pages: would push a node below its free-memory floor: node 0: 16 more 2M pages need 32 MiB, MemFree is"
has "floor $((total_kib / 1024)) MiB"
reads "$F2" "$want"
verdict hugepages-live-refused

# Back to where it was, through numaguardctl (shrinking needs no memory).
run 0 hugepages reserve --size 2M --pages $before --node 0 -c "$T/floorall.conf"
reads "$F2" "$before"
verdict hugepages-live-shrink
