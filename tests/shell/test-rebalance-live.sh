#!/usr/bin/env bash
# numaguardctl rebalance on this live host with a real SysV segment. On a
# one-node host there is nothing to rebalance: the command must say so
# (noop, exit 0, one NOTICE entry), --dry-run must log and change nothing,
# and the segment's contents must be intact either way. Multi-node hosts are
# covered by tests/e2e/cases/rebalance.sh. Needs root (move_pages of other
# processes).
set -u
echo 1..10
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
CTL=$B/numaguardctl WL=$B/tests/helpers/ng-shm-workload CHK=$B/tests/helpers/ng-shm-check
T=$(mktemp -d /tmp/ng-rebal.XXXXXX)
pid=""
cleanup() {
        [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
        rm -rf "$T"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
        echo "skip rebalance-live: needs root"; exit 77
fi
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
if [ "$nodes" -gt 1 ]; then
        echo "skip rebalance-live: $nodes NUMA nodes here (the NUMA-guest e2e case covers them)"; exit 77
fi
for x in "$CTL" "$WL" "$CHK"; do [ -x "$x" ] || { echo "not ok rebalance-live: $x not built"; exit 1; }; done

printf '[global]\nmin_segment_size = 4M\n' > "$T/ng.conf"
mkfifo "$T/fifo"
"$WL" sysv -s 16 -p 2 > "$T/fifo" 2> "$T/wl.err" &
pid=$!
read -r -t 60 line < "$T/fifo" || { echo "not ok rebalance-live: workload did not start"; cat "$T/wl.err"; exit 1; }
[[ $line =~ \ shmid=([0-9]+) ]] && shmid=${BASH_REMATCH[1]}
inst=unclaimed:shmid-$shmid
rss() { awk -v id="$shmid" '$2 == id { print $15 }' /proc/sysvipc/shm; }
rss0=$(rss)

fails=0
check() {       # check NAME COND-CMD... (its output discarded)
        local name=$1; shift
        if "$@" > /dev/null 2>&1; then echo "ok $name"; else echo "not ok $name"; fails=$((fails + 1)); fi
}

# --dry-run: says what it would do, logs nothing, changes nothing
NUMAGUARD_ACTION_LOG=$T/actions "$CTL" rebalance --dry-run --config "$T/ng.conf" "$inst" > "$T/dry.out" 2>&1; rc=$?
check rebalance-live-dry-run-exit test "$rc" = 0
check rebalance-live-dry-run-says grep -q "^rebalance $inst: dry-run: nothing would move: .*one NUMA node" "$T/dry.out"
check rebalance-live-dry-run-logs-nothing test ! -s "$T/actions"
check rebalance-live-dry-run-rss test "$(rss)" = "$rss0"

# the real thing: noop, exit 0, logged once with the rebalance MESSAGE_ID
NUMAGUARD_ACTION_LOG=$T/actions "$CTL" rebalance --config "$T/ng.conf" "$inst" > "$T/run.out" 2>&1; rc=$?
check rebalance-live-noop-exit test "$rc" = 0
check rebalance-live-noop-says grep -q "^rebalance $inst: noop: shmid $shmid .*one NUMA node: nothing to rebalance" "$T/run.out"
check rebalance-live-noop-logged jq -e -s "length == 1 and .[0].NUMAGUARD_OUTCOME == \"noop\" and
        .[0].MESSAGE_ID == \"09817b20990749faa060d721c40eaf1a\" and .[0].NUMAGUARD_TARGET == \"$inst\"" "$T/actions"
check rebalance-live-rss-unchanged test "$(rss)" = "$rss0"
check rebalance-live-contents "$CHK" "$shmid" 4

# usage errors: exit 3
"$CTL" rebalance --config "$T/ng.conf" > /dev/null 2>&1; rc1=$?
"$CTL" rebalance --config "$T/ng.conf" no-such-instance > /dev/null 2>&1; rc2=$?
"$CTL" rebalance --root / --config "$T/ng.conf" "$inst" > /dev/null 2>&1; rc3=$?
check rebalance-live-usage test "$rc1/$rc2/$rc3" = 3/3/3
[ $fails = 0 ] || { cat "$T/dry.out" "$T/run.out"; exit 1; }
