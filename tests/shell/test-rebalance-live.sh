#!/usr/bin/env bash
# numaguardctl rebalance on this live host with a real SysV segment. On a
# one-node host there is nothing to rebalance: the command must say so
# (noop, exit 0, one NOTICE entry). On a multi-node host the segment is
# touched under --membind=<first node with memory> and rebalance spreads it
# (done, exit 0, one NOTICE entry, pages moved off that node; the e2e case
# rebalance checks the exact spread). Either way --dry-run must log and
# change nothing, and the segment's contents must be intact. Needs root
# (move_pages of other processes).
set -u
echo 1..10
TAP_PREFIX=rebalance-live; . "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
CTL=$B/numaguardctl WL=$B/tests/helpers/ng-shm-workload CHK=$B/tests/helpers/ng-shm-check
[ "$(id -u)" = 0 ] || skip_all "needs root"
tmp=$(mktemp -d /tmp/ng-rebal.XXXXXX)
pid=""
cleanup() {
        [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT

mem_nodes=$(cat /sys/devices/system/node/has_memory 2>/dev/null || echo 0)
src=${mem_nodes%%[,-]*}
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
multi=0 wrap=()
if [ "$nodes" -gt 1 ] && [ "$mem_nodes" != "$src" ]; then
        command -v numactl > /dev/null || { echo "not ok rebalance-live: numactl not installed ($nodes nodes)"; exit 1; }
        multi=1 wrap=(numactl --membind="$src" --)
fi
for x in "$CTL" "$WL" "$CHK"; do [ -x "$x" ] || { echo "not ok rebalance-live: $x not built"; exit 1; }; done

printf '[global]\nmin_segment_size = 4M\n' > "$tmp/ng.conf"
mkfifo "$tmp/fifo"
"${wrap[@]}" "$WL" sysv -s 16 -p 2 > "$tmp/fifo" 2> "$tmp/wl.err" &
pid=$!
read -r -t 60 line < "$tmp/fifo" || { echo "not ok rebalance-live: workload did not start"; cat "$tmp/wl.err"; exit 1; }
[[ $line =~ \ shmid=([0-9]+) ]] && shmid=${BASH_REMATCH[1]}
inst=unclaimed:shmid-$shmid
rss() { awk -v id="$shmid" '$2 == id { print $15 }' /proc/sysvipc/shm; }
rss0=$(rss)

# pages of the segment on node N: the kernel's numa_maps of the workload
# (its one SysV mapping)
on_node() { awk -v n="N$1=" '/SYSV/ { for (i = 1; i <= NF; i++) if (index($i, n) == 1) print substr($i, length(n) + 1); exit }' \
        /proc/"$pid"/numa_maps; }
if [ $multi = 1 ]; then
        on_src0=$(on_node "$src")
        echo "# $nodes nodes (memory on $mem_nodes): shmid $shmid has ${on_src0:-no} pages on node $src"
        would="dry-run: would move [0-9]+ of [0-9]+ resident pages .* of shmid $shmid"
        did="done: moved [0-9]+ pages .* of shmid $shmid" outcome=done
else
        would="dry-run: nothing would move: .*one NUMA node"
        did="noop: shmid $shmid .*one NUMA node: nothing to rebalance" outcome=noop
fi

# --dry-run: says what it would do, logs nothing, changes nothing
NUMAGUARD_ACTION_LOG=$tmp/actions "$CTL" rebalance --dry-run --config "$tmp/ng.conf" "$inst" > "$tmp/dry.out" 2>&1; rc=$?
check_quiet dry-run-exit test "$rc" = 0
check_quiet dry-run-says grep -qE "^rebalance $inst: $would" "$tmp/dry.out"
check_quiet dry-run-logs-nothing test ! -s "$tmp/actions"
check_quiet dry-run-rss test "$(rss)" = "$rss0"

# the real thing: exit 0, logged once with the rebalance MESSAGE_ID
NUMAGUARD_ACTION_LOG=$tmp/actions "$CTL" rebalance --config "$tmp/ng.conf" "$inst" > "$tmp/run.out" 2>&1; rc=$?
check_quiet $outcome-exit test "$rc" = 0
check_quiet $outcome-says grep -qE "^rebalance $inst: $did" "$tmp/run.out"
check_quiet $outcome-logged jq -e -s "length == 1 and .[0].NUMAGUARD_OUTCOME == \"$outcome\" and
        .[0].MESSAGE_ID == \"09817b20990749faa060d721c40eaf1a\" and .[0].NUMAGUARD_TARGET == \"$inst\"" "$tmp/actions"
if [ $multi = 1 ]; then
        on_src=$(on_node "$src")
        check moved-off "node $src still holds ${on_src:-0} of ${on_src0:-0} pages" test "${on_src:-0}" -lt "${on_src0:-0}"
else
        check_quiet rss-unchanged test "$(rss)" = "$rss0"
fi
check_quiet contents "$CHK" "$shmid" 4

# usage errors: exit 3
"$CTL" rebalance --config "$tmp/ng.conf" > /dev/null 2>&1; rc1=$?
"$CTL" rebalance --config "$tmp/ng.conf" no-such-instance > /dev/null 2>&1; rc2=$?
"$CTL" rebalance --root / --config "$tmp/ng.conf" "$inst" > /dev/null 2>&1; rc3=$?
check_quiet usage test "$rc1/$rc2/$rc3" = 3/3/3
[ $fails = 0 ] || { cat "$tmp/dry.out" "$tmp/run.out"; exit 1; }
