#!/usr/bin/env bash
# A 32 MiB SysV segment (4 KiB pages) touched under numactl --membind=N must
# read back 100 % on node N, with the right size, page size and nattch.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 2
need_ctl
n=$MEMBIND_NODE
wl_start numactl --membind="$n" -- sysv -s 32 -p 2 || abort "workload"
numa_maps_diag "$WL_PID" SYSV
seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)" || abort "segment not found"
expect_field bytes "$WL_BYTES"
expect_field page_kib 4
expect_field nattch 3
expect_rep_in $WL_PIDS_SP
before=$FAILS
expect_on_node "$n" "$WL_BYTES"
# the assertion itself must have teeth: once the segment passed as being on
# node n, it must not also pass as being on any other node
((FAILS == before)) && for o in "${NODE_IDS[@]}"; do
    [ "$o" = "$n" ] && continue
    (FAILS=0; expect_on_node "$o" > /dev/null; exit $FAILS) &&
        fail "self-check: expect_on_node also accepted node $o for placement $SEG_nodes"
done
result
roundtrip "$E2E_TOPO-sysv-membind$n" "32 MiB SysV, 4 KiB pages, 3 attached, touched under numactl --membind=$n"
