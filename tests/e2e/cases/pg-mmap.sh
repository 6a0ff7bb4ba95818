#!/usr/bin/env bash
# Real PostgreSQL 15 (Debian), shared_memory_type=mmap, huge_pages=try, a
# 2 MiB pool on node N only, postmaster under --membind=N: its main shared
# memory is an anon_shared segment of the postmaster, on hugepages, all on N.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 3
. "$E2E_DIR/pg.sh"
need_ctl
pg_prepare
n=$PG_MMAP_NODE
set_hugepages "$n" 64 || abort "cannot reserve 64 pages on node $n"
pg_start "$n" mmap
pg_work
pg_diag
want=$PG_SHMEM_BYTES
seg_select "(.kind == \"anon_shared\" and .representative_pid == $PG_PID)" ||
    abort "no anon_shared segment with representative_pid = postmaster $PG_PID"
b=$SEG_bytes
# the mapping is shared_memory_size rounded up to whole 2 MiB pages
expect "segment is $b bytes, shared_memory_size is $want" test -n "$want" -a "$b" -ge "${want:-0}" -a "$b" -le "$(( ${want:-0} + 2097152 ))"
expect_field page_kib 2048
expect_on_node "$n"
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
roundtrip "$E2E_TOPO-pg15-mmap" "PostgreSQL 15 shared_memory_type=mmap huge_pages=try shared_buffers=64MB, postmaster under --membind=$n, 64 x 2 MiB pool on node $n"
