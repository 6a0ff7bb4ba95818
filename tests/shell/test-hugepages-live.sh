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

ok()  { echo "ok $1"; }
bad() { echo "not ok $1: $2"; sed 's/^/#   /' "$T/out" 2>/dev/null | head -20; }
# run NAME WANT-RC ARGS...: numaguardctl ARGS into $T/out, exit status checked
run() {
        local name=$1 want=$2; shift 2
        "$CTL" "$@" > "$T/out" 2>&1; RC=$?
        [ "$RC" = "$want" ] || { bad "$name" "exit $RC, expected $want (numaguardctl $*)"; return 1; }
}
has() { grep -qF -- "$2" "$T/out" || { bad "$1" "output lacks '$2'"; return 1; }; }

[ -x "$CTL" ] || { echo "not ok hugepages-live: $CTL not built"; exit 1; }
printf '[global]\nnode_free_floor = 0\n' > "$T/floor0.conf"

# ------------------------------------------------------ tree copy (--root)
cp -a tests/fixtures/trees/guest4-v2 "$T/tree"
NR2=$T/tree/sys/devices/system/node/node2/hugepages/hugepages-2048kB/nr_hugepages
run hugepages-root-dry-run 0 hugepages reserve --size 2M --pages 64 --node 2 --dry-run --root "$T/tree" -c "$T/floor0.conf" &&
        has hugepages-root-dry-run "would write 64 to /sys/devices/system/node/node2/hugepages/hugepages-2048kB/nr_hugepages (now: 2)" &&
        [ "$(cat "$NR2")" = 2 ] && ok hugepages-root-dry-run
run hugepages-root-refused 2 hugepages reserve --size 2M --pages 64 --node 2 --root "$T/tree" -c /dev/null &&
        has hugepages-root-refused "refused: 2M pages: would push a node below its free-memory floor: node 2: 62 more 2M pages need 124 MiB, MemFree is 478 MiB, floor 1024 MiB" &&
        [ "$(cat "$NR2")" = 2 ] && ok hugepages-root-refused
run hugepages-root-write 0 hugepages reserve --size 2048kB --pages 64 --node 2 --root "$T/tree" -c "$T/floor0.conf" &&
        has hugepages-root-write "done: 2M pages: node 2 2 -> 64" &&
        [ "$(cat "$NR2")" = 64 ] && ok hugepages-root-write
run hugepages-root-bad-size 3 hugepages reserve --size 4M --pages 8 --root "$T/tree" &&
        has hugepages-root-bad-size "this host has no 4M hugepages (sizes: 2M, 1G)" && ok hugepages-root-bad-size
run hugepages-root-bad-node 3 hugepages reserve --size 2M --pages 8 --node 9 --root "$T/tree" &&
        has hugepages-root-bad-node "no such node online (online: 0-3)" && ok hugepages-root-bad-node
run hugepages-root-no-pages 3 hugepages reserve --size 2M --root "$T/tree" && ok hugepages-root-no-pages
run hugepages-root-apply 0 hugepages apply --dry-run --root "$T/tree" -c "$T/floor0.conf" && ok hugepages-root-apply
[ ! -s "$NUMAGUARD_ACTION_LOG" ] && ok hugepages-root-not-logged || echo "not ok hugepages-root-not-logged: --root logged"

# ------------------------------------------------------------ live host
if [ "$(id -u)" != 0 ]; then echo "skip hugepages-live: needs root"; exit 0; fi
F2=$HP/hugepages-2048kB/nr_hugepages
if [ ! -w "$F2" ]; then echo "skip hugepages-live: no writable 2 MiB pool on node 0"; exit 0; fi
for f in "$HP"/hugepages-*/nr_hugepages; do orig[$f]=$(cat "$f"); done
before=${orig[$F2]}
want=$((before + 16))

run hugepages-live-dry-run 0 hugepages reserve --size 2M --pages $want --node 0 --dry-run -c "$T/floor0.conf" &&
        has hugepages-live-dry-run "would write $want to $F2 (now: $before)" &&
        { [ "$(cat "$F2")" = "$before" ] || bad hugepages-live-dry-run "the pool changed"; } &&
        ok hugepages-live-dry-run

run hugepages-live-reserve 0 hugepages reserve --size 2M --pages $want --node 0 -c "$T/floor0.conf" &&
        has hugepages-live-reserve "wrote $want to $F2 (was: $before, read back: $want)" &&
        has hugepages-live-reserve "done: 2M pages: node 0 $before -> $want" &&
        { [ "$(cat "$F2")" = "$want" ] || bad hugepages-live-reserve "pool reads $(cat "$F2")"; } &&
        ok hugepages-live-reserve
grep -q '"MESSAGE_ID":"02e90a77f6674a8fafd45cfe1377e279".*"NUMAGUARD_OUTCOME":"done"' "$NUMAGUARD_ACTION_LOG" &&
        ok hugepages-live-logged || { echo "not ok hugepages-live-logged"; sed 's/^/#   /' "$NUMAGUARD_ACTION_LOG"; }

# A floor as large as the node: any growth is refused, with the numbers.
total_kib=$(awk '/MemTotal/ { print $4 }' /sys/devices/system/node/node0/meminfo)
printf '[global]\nnode_free_floor = %sK\n' "$total_kib" > "$T/floorall.conf"
run hugepages-live-refused 2 hugepages reserve --size 2M --pages $((want + 16)) --node 0 -c "$T/floorall.conf" &&
        has hugepages-live-refused "refused: 2M pages: would push a node below its free-memory floor: node 0: 16 more 2M pages need 32 MiB, MemFree is" &&
        has hugepages-live-refused "floor $((total_kib / 1024)) MiB" &&
        { [ "$(cat "$F2")" = "$want" ] || bad hugepages-live-refused "the pool changed"; } &&
        ok hugepages-live-refused

# Back to where it was, through numaguardctl (shrinking needs no memory).
run hugepages-live-shrink 0 hugepages reserve --size 2M --pages $before --node 0 -c "$T/floorall.conf" &&
        { [ "$(cat "$F2")" = "$before" ] || bad hugepages-live-shrink "pool reads $(cat "$F2")"; } &&
        ok hugepages-live-shrink
exit 0
