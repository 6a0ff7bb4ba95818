#!/usr/bin/env bash
# Real PostgreSQL 15, shared_memory_type=sysv, postmaster under --membind=N:
# one SysV segment of shared_memory_size (4 KiB pages: PG 15 uses no
# hugepages for SysV), attached by the postgres processes, all on node N;
# its resident bytes (buffers a backend filled, then exited) within 2 % of
# /proc/sysvipc/shm rss.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 3
. "$E2E_DIR/pg.sh"
need_ctl
pg_prepare
n=$PG_SYSV_NODE
pg_start "$n" sysv
pg_work
pg_diag
want=$PG_SHMEM_BYTES
[ -n "$PG_SHMID" ] || abort "no shmid in postmaster.pid"
kern_bytes=""
while read -r _ id _ size _; do [ "$id" = "$PG_SHMID" ] && kern_bytes=$size; done < /proc/sysvipc/shm
seg_select "(.kind == \"sysv\" and .shmid == $PG_SHMID)" || abort "segment not found"
b=$SEG_bytes
expect "segment is $b bytes, the kernel says $kern_bytes" test "$b" = "$kern_bytes"
expect "segment is $b bytes, shared_memory_size is $want" test -n "$want" -a "$b" -ge "$(( ${want:-0} - 1048576 ))" -a "$b" -le "${want:-0}"
expect_field page_kib 4
rep=$SEG_representative_pid
expect "representative_pid $rep is not a postgres process" test "$(cat /proc/"$rep"/comm 2>/dev/null)" = postgres
expect "nattch should be >= 2 (postmaster and its children)" test "${SEG_nattch:-0}" -ge 2
expect_on_node "$n"
# The table's buffers were filled by a backend that has exited (pg_work's
# psql session): the segment is asked of itself, its resident bytes within
# 2 % of the kernel's rss for the whole segment, not the postmaster's maps.
rss=$(awk -v id="$PG_SHMID" '$2 == id { print $15 }' /proc/sysvipc/shm)
log "segment $PG_SHMID: numaguard $SEG_resident_bytes resident ($SEG_placement_source), the kernel's rss ${rss:-?}, the postmaster's $(awk '/^RssShmem:/ { print $2 " kB" }' "/proc/$PG_PID/status") mapped"
expect_field placement_source segment
expect "resident $SEG_resident_bytes not within 2 % of the kernel's rss ${rss:-none}" within2 "$SEG_resident_bytes" "${rss:-0}"
result
# found with no instance configured, all of its shared memory on node n
audit_conf "$T/ng.conf"
audit_load --config "$T/ng.conf" || abort "audit"
inst=$(grep "^postgresql:[^|]*|postgresql|$PG_PID|" <<< "$AUDIT_INSTANCES")
[ -n "$inst" ] || fail "postmaster $PG_PID not discovered as a postgresql instance: $AUDIT_INSTANCES"
[[ ${inst##*|} =~ ^$n:[0-9]+$ ]] || fail "instance placement is '${inst##*|}', expected all on node $n"
# bound to node n while its CPUs span every node: a cyclops, about node n
expect_finding CYCLOPS "${inst%%|*}" warning "$n"
result discovered
roundtrip "$E2E_TOPO-pg15-sysv" "PostgreSQL 15 shared_memory_type=sysv shared_buffers=64MB, postmaster under --membind=$n"
