#!/usr/bin/env bash
# numaguardd on this live host samples placement (tier 1, move_pages) on the
# first poll and then every sample_every polls; in between it reads counters
# only and carries each unchanged segment's placement over. A new segment is
# sampled on the poll that first sees it. Root: move_pages(2) of processes.
# The daemon, its workloads and the test run in a PID namespace of their
# own (with its own /proc): the first poll lists them, not every process
# of a busy host, and the test waits for conditions (up to 30 s), not for
# a host's listing.
set -u
[ "${NG_SAMPLING_WORLD:-}" = 1 ] || echo 1..4
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
D=$B/numaguardd WL=$B/tests/helpers/ng-shm-workload
[ "$(id -u)" = 0 ] || { echo "skip sampling: needs root"; exit 77; }
[ -x "$D" ] && [ -x "$WL" ] || { echo "not ok sampling: $D or $WL not built"; exit 1; }
command -v unshare > /dev/null || { echo "not ok sampling: unshare not installed"; exit 1; }
[ "${NG_SAMPLING_WORLD:-}" = 1 ] || NG_SAMPLING_WORLD=1 exec unshare --pid --fork --mount-proc bash "$0"
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT
TAP_PREFIX=sampling; . tests/shell/lib.sh

wl() {          # wl NAME: a 64 MiB SysV segment, shmid in $NAME
        mkfifo "$tmp/$1.fifo"
        "$WL" sysv -s 64 -p 1 > "$tmp/$1.fifo" 2>/dev/null &
        pids+=($!)
        local line
        read -r -t 60 line < "$tmp/$1.fifo" && [[ $line =~ \ shmid=([0-9]+) ]] && printf -v "$1" '%s' "${BASH_REMATCH[1]}"
}
metric() { awk -v m="$1" '$1 == m { print $2 }' "$tmp/ng.prom"; }
seg_metric() { grep -c "^numaguard_instance_resident_bytes{db_instance=\"unclaimed:shmid-$1\",node=\"0\"} [1-9]" "$tmp/ng.prom"; }

wl first || { echo "not ok sampling: workload"; exit 1; }
printf '[global]\ninterval = 200ms\nsample_every = 1000\nmin_segment_size = 4M\nmetrics_file = %s/ng.prom\nsocket = %s/sock\n' \
        "$tmp" "$tmp" > "$tmp/ng.conf"
"$D" --foreground --config "$tmp/ng.conf" --alert-log "$tmp/alerts" 2> "$tmp/stderr" &
dpid=$!
pids+=($dpid)
for _ in $(seq 300); do [ -s "$tmp/ng.prom" ] && [ "$(metric numaguard_poll_pages_sampled)" = 0 ] && break; sleep 0.1; done
check_expr carried "[ \"\$(metric numaguard_poll_pages_sampled)\" = 0 ]" "polls after the first still sampled: $(metric numaguard_poll_pages_sampled)"
check_expr placement-kept "[ \"\$(seg_metric $first)\" = 1 ]" "no resident bytes on node 0 for shmid $first between samplings"
wl second || { echo "not ok sampling: second workload"; exit 1; }
for _ in $(seq 300); do [ "$(seg_metric "$second")" = 1 ] && break; sleep 0.1; done
check_expr new-segment-sampled "[ \"\$(seg_metric $second)\" = 1 ]" "the new segment shmid $second got no placement"
check_expr alive "kill -0 $dpid" "numaguardd died: $(tail -3 "$tmp/stderr")"
[ $fails = 0 ]
