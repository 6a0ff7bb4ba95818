#!/usr/bin/env bash
# The audit on this live host: real SysV segments (4 KiB and hugetlb) made
# here, placed by tier-1 sampling, with their page sizes; and a real
# PostgreSQL 15 found with no instance configured, its shared memory
# attributed to it. Needs root (move_pages of other processes, hugepages,
# starting PostgreSQL as postgres).
set -u
echo 1..5
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
CTL=$B/numaguardctl WL=$B/tests/helpers/ng-shm-workload
PGBIN=/usr/lib/postgresql/15/bin
T=$(mktemp -d /tmp/ng-live.XXXXXX)
pids=() old_hp=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null)
cleanup() {
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        [ -f "$T/pg/data/postmaster.pid" ] && runuser -u postgres -- "$PGBIN/pg_ctl" -D "$T/pg/data" -m immediate -w stop >/dev/null 2>&1
        [ -n "$old_hp" ] && echo "$old_hp" > /proc/sys/vm/nr_hugepages
        rm -rf "$T"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
        echo "skip audit-live: needs root"; exit 77
fi
[ -x "$WL" ] || { echo "not ok audit-live: $WL not built"; exit 1; }

# wl ARGS: start a workload, wait for its report line, set SHMID/PID
n_wl=0
wl() {
        n_wl=$((n_wl + 1))
        local f=$T/fifo$n_wl line
        mkfifo "$f"
        "$WL" "$@" > "$f" 2>"$T/wl.err" &
        pids+=($!)
        read -r -t 60 line < "$f" || return 1
        [[ $line =~ \ shmid=([0-9]+) ]] && SHMID=${BASH_REMATCH[1]}
        [[ $line =~ pid=([0-9]+) ]] && PID=${BASH_REMATCH[1]}
}

printf '[global]\nmin_segment_size = 4M\n' > "$T/ng.conf"
wl sysv -s 64 -p 3 || { echo "not ok audit-live-sysv: workload"; exit 1; }
small=$SHMID small_pid=$PID
huge=""
echo $(( ${old_hp:-0} + 8 )) > /proc/sys/vm/nr_hugepages 2>/dev/null
if wl sysv -H -s 16 -p 1; then huge=$SHMID; fi

"$CTL" audit --config "$T/ng.conf" --json > "$T/a.json"; rc=$?
check() {   # check NAME JQ-EXPR: the expression must be true on the audit JSON
        if jq -e "$2" "$T/a.json" >/dev/null 2>&1; then echo "ok $1"; else
                echo "not ok $1: $2"; jq -c '.instances[] | {name, segments: [.segments[] | {shmid, page_kib, method, resident_bytes, nodes}]}' "$T/a.json" | head -20; fi
}
[ $rc -le 2 ] && echo "ok audit-live-exit ($rc)" || echo "not ok audit-live-exit: $rc"
check audit-live-sysv-4k "[.instances[] | select(.name == \"unclaimed:shmid-$small\") | .segments[0]
        | .page_kib == 4 and .method == \"sampled\" and .resident_bytes == 67108864 and .nattch == 4
          and .representative_pid == $small_pid and (.nodes | map(.bytes) | add) == 67108864] == [true]"
check audit-live-cost ".cost.placement == \"sampled\" and .cost.numa_maps_read == 0 and .cost.pages_sampled >= 4096"
if [ -n "$huge" ]; then
        check audit-live-sysv-hugetlb "[.segments[] | select(.shmid == $huge) | .page_kib == 2048 and .huge and .resident_bytes == 16777216] == [true]"
else
        echo "skip audit-live-sysv-hugetlb: could not reserve 8 hugepages here"
fi

# PostgreSQL 15, found with no instance configured.
if [ ! -x "$PGBIN/postgres" ] || ! id postgres >/dev/null 2>&1; then
        echo "skip audit-live-postgresql: PostgreSQL 15 not installed (apt-get install postgresql-15)"; exit 0
fi
mkdir -p "$T/pg" && chown postgres: "$T/pg" && chmod 755 "$T"
if ! runuser -u postgres -- "$PGBIN/initdb" -D "$T/pg/data" -A trust -U postgres --no-sync >"$T/initdb.log" 2>&1 ||
   ! runuser -u postgres -- "$PGBIN/pg_ctl" -D "$T/pg/data" -l "$T/pg/log" -w -t 60 \
        -o "-c shared_buffers=64MB -c huge_pages=off -c listen_addresses='' -c unix_socket_directories=$T/pg" start >"$T/pgctl.log" 2>&1; then
        echo "not ok audit-live-postgresql: cannot start PostgreSQL"; cat "$T/initdb.log" "$T/pgctl.log" "$T/pg/log" 2>/dev/null | tail -5; exit 1
fi
pm=$(head -1 "$T/pg/data/postmaster.pid")
"$CTL" audit --config "$T/ng.conf" --json > "$T/a.json"
check audit-live-postgresql "[.instances[] | select(.type == \"postgresql\" and .main_pid == $pm)
        | (.pids | length) >= 3 and ([.segments[] | select(.kind == \"anon_shared\") | .bytes >= 67108864
          and .page_kib == 4 and .representative_pid == $pm] == [true])] == [true]"
