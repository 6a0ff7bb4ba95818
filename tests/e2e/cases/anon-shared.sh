#!/usr/bin/env bash
# MAP_SHARED|MAP_ANONYMOUS memory (PostgreSQL's kind) inherited by children,
# touched under --membind=N: an anon_shared segment 100 % on node N.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 2
need_ctl
n=$ANON_NODE
wl_start numactl --membind="$n" -- anon -s 32 -p 2 || abort "workload"
numa_maps_diag "$WL_PID" 'dev/zero'
seg_select "(.kind == \"anon_shared\" and (.representative_pid | IN($WL_PID,$WL_CHILDREN)))" ||
    abort "segment not found"
expect_field bytes "$WL_BYTES"
expect_field page_kib 4
expect_on_node "$n" "$WL_BYTES"
result
roundtrip "$E2E_TOPO-anon-shared$n" "32 MiB MAP_SHARED|MAP_ANONYMOUS, 3 processes, --membind=$n"
