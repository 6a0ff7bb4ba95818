#!/usr/bin/env bash
# A 32 MiB SHM_HUGETLB segment touched under --membind=N (pool on node N
# only) must read back on node N with page_kib 2048, and node N's pool must
# show the 16 pages in use.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 2
need_ctl
n=$HUGE_NODE
set_hugepages "$n" 24 || abort "cannot reserve 24 pages on node $n"
wl_start numactl --membind="$n" -- sysv --huge -s 32 -p 2 || abort "workload"
numa_maps_diag "$WL_PID" SYSV
seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)" || abort "segment not found"
expect_field bytes "$WL_BYTES"
expect_field page_kib 2048
expect_field nattch 3
expect_on_node "$n" "$WL_BYTES"
ctl_json "$T/topo.json" topology && topo_load "$T/topo.json" &&
    expect "node $n: 2 MiB pool total/free/surplus is '${TOPO_HP2M[$n]-}', expected '24 8 0'" \
        test "${TOPO_HP2M[$n]-}" = "24 8 0"
result
roundtrip "$E2E_TOPO-sysv-hugetlb$n" "32 MiB SysV SHM_HUGETLB (2 MiB pages), 3 attached, --membind=$n, pool of 24 pages on node $n"
