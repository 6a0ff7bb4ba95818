#!/usr/bin/env bash
# Per-node 2 MiB hugepage pools written through sysfs must show up per node
# in numaguardctl topology --json (total, free, surplus), each its own count.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 1
need_ctl

declare -A want=()
for n in "${NODE_IDS[@]}"; do
    want[$n]=$((4 * (n + 1)))          # 4, 8, 12, ... pages: distinct per node
    set_hugepages "$n" "${want[$n]}" || abort "cannot size the pool of node $n"
done
ctl_json "$T/topo.json" topology || abort "no topology JSON"
topo_load "$T/topo.json" || abort "unreadable topology JSON"
for n in "${NODE_IDS[@]}"; do
    log "node $n: wrote ${want[$n]}, numaguard total/free/surplus: ${TOPO_HP2M[$n]-none}"
    [ "${TOPO_HP2M[$n]-}" = "${want[$n]} ${want[$n]} 0" ] ||
        fail "node $n: 2 MiB pool total/free/surplus '${TOPO_HP2M[$n]-}', expected '${want[$n]} ${want[$n]} 0'"
done
result
