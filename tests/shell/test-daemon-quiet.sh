#!/usr/bin/env bash
# Without process events (here a private network namespace, as the shipped
# unit's PrivateNetwork=yes gives numaguardd), a poll reads /proc/loadavg
# and skips the /proc listing when no process or thread started or ended
# since the poll before; a process started meanwhile is found by the next
# poll all the same. The pids numaguardd's own threads take (a reader that
# joins another IPC namespace each poll: here a process in one of its own)
# do not count. The test makes its own quiet world, whatever else the host
# runs: a fresh PID namespace (its own last pid, its own /proc) holding
# only the daemon, that process and the test, which while it waits starts
# no process of its own (shell builtins only). The host's thread count
# (/proc/loadavg's is the whole kernel's) still moves with other work:
# the test waits up to 30 s for three quiet polls. Root: unshare.
set -u
[ "${NG_QUIET_WORLD:-}" = 1 ] || echo 1..5
TAP_PREFIX=quiet; . "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
D=$B/numaguardd
[ -x "$D" ] || { echo "not ok quiet: $D not built"; exit 1; }
[ "$(id -u)" = 0 ] || skip_all "needs root (unshare --pid --net)"
command -v unshare > /dev/null || skip_all "unshare not installed"
if [ "${NG_QUIET_WORLD:-}" != 1 ]; then
        NG_QUIET_WORLD=1 exec unshare --pid --fork --mount-proc --net --ipc bash "$0"
fi
tmp=$(mktemp -d)
dpid="" spid="" ipid=""
cleanup() {
        [ -n "$spid" ] && kill "$spid" 2>/dev/null
        [ -n "$ipid" ] && kill "$ipid" 2>/dev/null
        [ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
exec {nap}<> <(:)
nap() { read -r -t "$1" -u "$nap" _ || true; }
# metric NAME: sets M to its value in the metrics file, read with
# builtins (a $(...) would start a process)
metric() {
        local k v
        M=""
        while read -r k v; do [ "$k" = "$1" ] && { M=$v; return; }; done < "$tmp/ng.prom"
}
# a process in an IPC namespace of its own: each poll reads its table
unshare --ipc sleep 120 &
ipid=$!

printf '[global]\ninterval = 100ms\nfull_scan_every = 100000\nmetrics_file = %s/ng.prom\nsocket = %s/sock\n' \
        "$tmp" "$tmp" > "$tmp/ng.conf"
"$D" --foreground --config "$tmp/ng.conf" --alert-log "$tmp/alerts" 2> "$tmp/stderr" &
dpid=$!
for _ in $(seq 50); do [ -s "$tmp/ng.prom" ] && break; nap 0.1; done
check_expr started '[ -s "$tmp/ng.prom" ]' "no metrics file: $(tail -3 "$tmp/stderr")"

# polls in a row with nothing started: at least one skips the listing
skipped=0 events=0 seen=0
for ((i = 0; i < 300; i++)); do
        nap 0.1
        metric numaguard_polls_total
        [ "${M:-0}" -gt "$seen" ] || continue
        seen=$M
        metric numaguard_poll_listing_skipped
        [ "$M" = 1 ] && skipped=$((skipped + 1))
        metric numaguard_poll_process_events
        [ "$M" = 1 ] && events=$((events + 1))
        [ "$skipped" -ge 3 ] && break
done
check_expr no-events '[ "$events" = 0 ]' "$events polls used process events in a private network namespace"
check_expr skipped '[ "$skipped" -ge 3 ]' "only $skipped quiet polls skipped the /proc listing (of $seen)"

# a process started now is held by a later poll, which listed /proc
metric numaguard_poll_processes_held
held0=$M
metric numaguard_polls_total
seen=$M found=0
sleep 60 &
spid=$!
for ((i = 0; i < 50; i++)); do
        nap 0.1
        metric numaguard_polls_total
        [ "${M:-0}" -gt "$seen" ] || continue
        seen=$M
        metric numaguard_poll_listing_skipped
        skip=$M
        metric numaguard_poll_processes_held
        if [ "$skip" = 0 ] && [ "$M" -gt "$held0" ]; then
                found=1
                break
        fi
done
check_expr found-new '[ "$found" = 1 ]' "no poll listed /proc and held more than $held0 processes after pid $spid started"
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
spid=""
# ... and once it is gone, a later poll drops it
gone=0
for ((i = 0; i < 50; i++)); do
        nap 0.1
        metric numaguard_polls_total
        [ "${M:-0}" -gt "$seen" ] || continue
        seen=$M
        metric numaguard_poll_processes_held
        [ "$M" -le "$held0" ] && { gone=1; break; }
done
check_expr dropped-gone '[ "$gone" = 1 ]' "the ended process is still held ($M > $held0)"
[ "$fails" = 0 ]
