#!/usr/bin/env bash
# Snapshot round trip of the bare topology (with distinct per-node hugepage
# pools, so that the fixture carries them): --root on the captured tree must
# reproduce the live topology and segments output.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 1
need_ctl
for n in "${NODE_IDS[@]}"; do set_hugepages "$n" $((2 * (n + 1))) || abort "pool of node $n"; done
roundtrip "$E2E_TOPO-idle" "no workload; 2 MiB pools of 2*(node+1) pages per node"
