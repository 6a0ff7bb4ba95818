#!/usr/bin/env bash
# A 32 MiB SysV segment touched under numactl --interleave=all must be
# spread evenly: each node 1/N of it (+-40 % of that share; 4 nodes: 25+-10 %).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 2
need_ctl
wl_start numactl --interleave=all -- sysv -s 32 -p 1 || abort "workload"
numa_maps_diag "$WL_PID" SYSV
seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)" || abort "segment not found"
expect_field bytes "$WL_BYTES"
expect_field resident_bytes "$WL_BYTES"
expect_interleaved "${NODE_IDS[@]}"
result
roundtrip "$E2E_TOPO-sysv-interleave" "32 MiB SysV, 4 KiB pages, touched under numactl --interleave=all"
