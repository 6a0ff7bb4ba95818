#!/usr/bin/env bash
# Oracle AMM style: a 32 MiB file in /dev/shm mapped MAP_SHARED, touched
# under --membind=N, must read back as a "file" segment 100 % on node N.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 2
need_ctl
n=$FILE_NODE
f=/dev/shm/ora_e2e_granule_1
rm -f "$f"; at_exit "rm -f $f"
wl_start numactl --membind="$n" -- file "$f" -s 32 -p 2 || abort "workload"
numa_maps_diag "$WL_PID" "$f"
seg_select "(.kind == \"file\" and (.name | endswith(\"ora_e2e_granule_1\")))" || abort "segment not found"
expect_field bytes "$WL_BYTES"
expect_field page_kib 4
expect_on_node "$n" "$WL_BYTES"
result
roundtrip "$E2E_TOPO-devshm-file$n" "32 MiB file $f mapped shared by 3 processes, touched under --membind=$n"
