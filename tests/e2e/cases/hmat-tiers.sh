#!/usr/bin/env bash
# The kernel's memory tiers against the firmware's HMAT (topology hmat, run
# on every kernel the suite boots): numaguard's tier table is the kernel's
# own (/sys/devices/virtual/memory_tiering/memory_tierN/nodelist). The
# CPU-less node HMAT_FAR_NODE, which the HMAT gives three times the local
# latency, either sits in the tier of the CPUs' own memory (6.1 places every
# node without dax/kmem in the default tier) and TIERS_IGNORE_HMAT names
# it, or the kernel placed it in a slower tier from the HMAT (Debian 13's
# 6.12) and a segment on it used from HMAT_CPU_NODE's CPU raises SLOW_TIER,
# without dax/kmem; the other finding is not raised.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 2
need_ctl
d=/sys/devices/virtual/memory_tiering
[ -d "$d" ] || not_applicable "the kernel has no memory tiers (kernel feature memory_tiers: $d absent)"

# ---- the tier table: the kernel's, tier by tier
kernel=""
for f in "$d"/memory_tier*/nodelist; do
    t=${f%/nodelist}; t=${t##*memory_tier}
    kernel+="$t:$(cat "$f") "
done
kernel=$(tr ' ' '\n' <<<"$kernel" | grep . | sort -n | tr '\n' ' ')
ctl_json "$T/topo.json" topology || abort "topology"
ours=$(jq -r '.memory_tiers[] | "\(.id):\(.nodes)"' "$T/topo.json" | sort -n | tr '\n' ' ')
log "memory tiers: the kernel's $kernel; numaguard's $ours"
[ "$kernel" = "$ours" ] || fail "numaguard's tiers '$ours' are not the kernel's '$kernel'"
result tier-table

# ---- what the tiers make of the slow expander
tier_of() { jq -r --argjson n "$1" '.memory_tiers[] | select(.nodes as $l | [$l | split(",")[] |
    if test("-") then (split("-") | map(tonumber) | range(.[0]; .[1] + 1)) else tonumber end] | index($n)) | .id' "$T/topo.json"; }
far_tier=$(tier_of "$HMAT_FAR_NODE") cpu_tier=$(tier_of "$HMAT_CPU_NODE")
log "node $HMAT_FAR_NODE in tier ${far_tier:-none}, node $HMAT_CPU_NODE in tier ${cpu_tier:-none}"
[ -n "$far_tier" ] && [ -n "$cpu_tier" ] || abort "a node in no tier"
cpu=$(expand_cpulist "$(node_cpus "$HMAT_CPU_NODE")"); cpu=${cpu%% *}
audit_conf "$T/ng.conf"
wl_start numactl --physcpubind="$cpu" --membind="$HMAT_FAR_NODE" -- sysv -s 32 -p 1 || abort "workload"
inst=unclaimed:shmid-$WL_SHMID
audit_load --config "$T/ng.conf" || abort "audit"
if [ "$far_tier" = "$cpu_tier" ]; then
    hit=$(jq -r '.findings[] | select(.code == "TIERS_IGNORE_HMAT") | "\(.severity) \(.nodes | map(tostring) | join(","))"' \
          "$T/audit.json")
    log "TIERS_IGNORE_HMAT: ${hit:-none}"
    [[ $hit == "info "* ]] || fail "node $HMAT_FAR_NODE (3x local latency per the HMAT) shares tier $cpu_tier with the CPUs, and no TIERS_IGNORE_HMAT says so"
    [[ ",${hit#info }," == *",$HMAT_FAR_NODE,"* ]] || fail "TIERS_IGNORE_HMAT names nodes '${hit#info }', not $HMAT_FAR_NODE"
    expect_no_finding SLOW_TIER "$inst"
else
    ((far_tier > cpu_tier)) || fail "the kernel put node $HMAT_FAR_NODE in tier $far_tier, faster than the CPUs' $cpu_tier"
    expect_finding SLOW_TIER "$inst" warning "$HMAT_FAR_NODE"
    expect_no_finding TIERS_IGNORE_HMAT ""
fi
result tiers-against-hmat
