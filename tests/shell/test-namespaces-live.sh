#!/usr/bin/env bash
# A database in its own IPC and mount namespace on this live host
# (docs/ARCHITECTURE.md, "Namespaces"): a process under unshare --ipc
# --mount with a tmpfs of its own on /dev/shm holds a file of the same name
# as one of the host's, and a SysV segment whose shmid equals a host
# segment's (kernel.shm_next_id of its namespace). Each is its own segment,
# with its own attachers and size, sampled over its own pages; a snapshot
# taken meanwhile replays the same. Needs root (unshare, setns).
set -u
echo 1..8
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
CTL=$B/numaguardctl WL=$PWD/$B/tests/helpers/ng-shm-workload
T=$(mktemp -d /tmp/ng-ns.XXXXXX)
NAME=ng-ns-$$
pids=()
cleanup() {
        touch "$T/stop"
        # the container's workloads are no children of ours: end them by
        # pid, and keep the stop file until they are gone
        local p
        for p in "${pids[@]}" ${CPID:-} ${CFPID:-}; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        for _ in $(seq 50); do
                kill -0 ${CPID:-} ${CFPID:-} 2>/dev/null || break
                sleep 0.1
        done
        rm -rf "$T" "/dev/shm/$NAME"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
        echo "skip namespaces-live: needs root"; exit 77
fi
if ! unshare --ipc --mount true 2>/dev/null; then
        echo "skip namespaces-live: unshare --ipc --mount refused here"; exit 77
fi
[ -x "$WL" ] || { echo "not ok namespaces-live: $WL not built"; exit 1; }

ready() {   # ready FILE...: wait for the workloads' report lines
        for _ in $(seq 300); do
                local all=1
                for f in "$@"; do [ -s "$f" ] || all=0; done
                [ $all = 1 ] && return 0
                sleep 0.1
        done
        return 1
}
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$1"; }
pidof_line() { sed -n 's/^pid=\([0-9]*\).*/\1/p' "$1"; }

"$WL" file "/dev/shm/$NAME" -s 8 -p 1 -r "$T/host-file" -S "$T/stop" >/dev/null 2>"$T/wl.err" &
pids+=($!)
"$WL" sysv -s 4 -p 1 -r "$T/host-sysv" -S "$T/stop" >/dev/null 2>>"$T/wl.err" &
pids+=($!)
ready "$T/host-file" "$T/host-sysv" || { echo "not ok namespaces-live: host workloads"; cat "$T/wl.err"; exit 1; }
SHMID=$(field "$T/host-sysv" shmid)

unshare --ipc --mount --propagation private sh -c '
        mount -t tmpfs tmpfs /dev/shm || exit 1
        echo "$1" > /proc/sys/kernel/shm_next_id || exit 1
        "$2" file "/dev/shm/$3" -s 16 -p 1 -r "$4/ctr-file" -S "$4/stop" >/dev/null 2>>"$4/wl.err" &
        "$2" sysv -s 6 -p 2 -r "$4/ctr-sysv" -S "$4/stop" >/dev/null 2>>"$4/wl.err" &
        wait' sh "$SHMID" "$WL" "$NAME" "$T" &
pids+=($!)
ready "$T/ctr-file" "$T/ctr-sysv" || { echo "not ok namespaces-live: container workloads"; cat "$T/wl.err"; exit 1; }
CPID=$(pidof_line "$T/ctr-sysv") CFPID=$(pidof_line "$T/ctr-file")
HPID=$(pidof_line "$T/host-sysv") HFPID=$(pidof_line "$T/host-file")
HOST_IPC=$(stat -L -c %i /proc/self/ns/ipc) HOST_MNT=$(stat -L -c %i /proc/self/ns/mnt)
CTR_IPC=$(stat -L -c %i "/proc/$CPID/ns/ipc") CTR_MNT=$(stat -L -c %i "/proc/$CFPID/ns/mnt")
if [ "$(field "$T/ctr-sysv" shmid)" != "$SHMID" ] || [ "$CTR_IPC" = "$HOST_IPC" ]; then
        echo "not ok namespaces-live: the container's shmid is $(field "$T/ctr-sysv" shmid), not $SHMID"; exit 1
fi

printf '[global]\nmin_segment_size = 1M\n' > "$T/ng.conf"
"$CTL" segments --json > "$T/s.json" || echo "# segments exited $?"
"$CTL" audit --config "$T/ng.conf" --json > "$T/a.json"
check() {   # check NAME FILE JQ-EXPR
        if jq -e "$3" "$2" >/dev/null 2>&1; then echo "ok $1"; else
                echo "not ok $1: $3"
                jq -c "[.segments[] | select(.shmid == $SHMID or (.name | endswith(\"$NAME\")))
                        | {name, shmid, ipc_ns, mnt_ns, bytes, nattch, pids, placement_source}]" "$2"
        fi
}
sysv() { echo "[.segments[] | select(.kind == \"sysv\" and .shmid == $SHMID and .ipc_ns == $1)]"; }
file() { echo "[.segments[] | select(.kind == \"file\" and .name == \"/dev/shm/$NAME\" and .mnt_ns == $1)]"; }

check ns-sysv-host "$T/s.json" "$(sysv "$HOST_IPC") | length == 1 and .[0].bytes == 4194304 and .[0].nattch == 2
        and (.[0].pids | index($HPID)) != null and (.[0].pids | index($CPID)) == null"
check ns-sysv-container "$T/s.json" "$(sysv "$CTR_IPC") | length == 1 and .[0].bytes == 6291456 and .[0].nattch == 3
        and (.[0].pids | index($CPID)) != null and (.[0].pids | index($HPID)) == null
        and .[0].placement_source == \"segment\" and .[0].resident_bytes == 6291456"
check ns-file-host "$T/s.json" "$(file "$HOST_MNT") | length == 1 and .[0].bytes == 8388608 and .[0].nattch == 2
        and (.[0].pids | index($HFPID)) != null"
check ns-file-container "$T/s.json" "$(file "$CTR_MNT") | length == 1 and .[0].bytes == 16777216 and .[0].nattch == 2
        and (.[0].pids | index($CFPID)) != null and (.[0].pids | index($HFPID)) == null
        and .[0].placement_source == \"segment\" and .[0].resident_bytes == 16777216"
check ns-audit-instances "$T/a.json" "[.instances[] | select(.name == \"unclaimed:ipc-$CTR_IPC:shmid-$SHMID\"
        or .name == \"unclaimed:shmid-$SHMID\" or .name == \"unclaimed:/dev/shm/$NAME\"
        or .name == \"unclaimed:mnt-$CTR_MNT:/dev/shm/$NAME\")] | length == 4"
check ns-audit-no-orphan "$T/a.json" "[.findings[] | select(.code == \"ORPHAN_SEGMENT\"
        and ((.segment | contains(\"$NAME\")) or (.segment | startswith(\"shmid $SHMID \"))))] | length == 0"

# The snapshot keeps the namespaces' files (their links, the container's
# SysV table, its /dev/shm through /proc/PID/root): the replay is the same.
if "$CTL" snapshot --output "$T/snap.tar.gz" >/dev/null 2>"$T/snap.err"; then
        mkdir "$T/tree" && tar -xzf "$T/snap.tar.gz" -C "$T/tree"
        "$CTL" --root "$T/tree" segments --json > "$T/tree.json"
        check ns-snapshot-replay "$T/tree.json" "($(sysv "$CTR_IPC") | length == 1 and .[0].bytes == 6291456 and .[0].nattch == 3)
                and ($(file "$CTR_MNT") | length == 1 and .[0].bytes == 16777216 and .[0].nattch == 2)
                and ($(file "$HOST_MNT") | length == 1 and .[0].nattch == 2)"
        if [ -f "$T/tree/numaguard/ipc/$CTR_IPC/sysvipc/shm" ]; then echo "ok ns-snapshot-ipc-table"; else
                echo "not ok ns-snapshot-ipc-table: numaguard/ipc/$CTR_IPC/sysvipc/shm missing"; fi
else
        echo "not ok ns-snapshot-replay: $(cat "$T/snap.err")"
        echo "not ok ns-snapshot-ipc-table: no snapshot"
fi
