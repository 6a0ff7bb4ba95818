#!/usr/bin/env bash
# A slower memory tier on a real kernel (topology hmat, the last case): the
# legacy persistent-memory range of node HMAT_DAX_NODE (memmap=, numa-vm
# --pmem) made a devdax device (ndctl) and onlined as system RAM (daxctl:
# dax/kmem), which the 6.1 kernel puts in tier HMAT_DAX_TIER, below DRAM's.
# topology --json has the kernel's tiers (memory_tiering/*/nodelist) and the
# node's HMAT; a SysV segment bound to it and used from node HMAT_CPU_NODE's
# CPU is SLOW_TIER, priced from the HMAT; with demotion on, a 4 KiB segment
# on the CPU's node is SHMEM_DEMOTABLE, with demotion off it is not; the
# hugepage plan of an interleaved instance puts no pool on the slow node
# unless nodes= names it; the snapshot round trip carries the tier
# (captured as tests/fixtures/trees/guest-dax-tier).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 5
need_ctl
jqe() { jq -e "$@" > /dev/null; }
dn=$HMAT_DAX_NODE
command -v ndctl > /dev/null && command -v daxctl > /dev/null || abort "ndctl and daxctl are not installed (tests/install-deps)"
at_exit "echo false > /sys/kernel/mm/numa/demotion_enabled"

# ---- set-up: the pmem namespace as devdax, onlined as system RAM
t0=$EPOCHREALTIME
ndctl create-namespace -f -e namespace0.0 -m devdax > "$T/ns.json" 2>&1 || { logf "$T/ns.json"; abort "ndctl create-namespace"; }
dax=$(jq -r '.daxregion.devices[0].chardev' "$T/ns.json")
daxctl reconfigure-device --mode=system-ram "$dax" > "$T/dax.json" 2>&1 || { logf "$T/dax.json"; abort "daxctl reconfigure-device"; }
logf "$T/dax.json"
log "devdax and kmem: $(( (${EPOCHREALTIME/./} - ${t0/./}) / 1000 )) ms"
read -r kn < "/sys/devices/virtual/memory_tiering/memory_tier$HMAT_DAX_TIER/nodelist" ||
    abort "the kernel made no memory_tier$HMAT_DAX_TIER: $(ls /sys/devices/virtual/memory_tiering)"
[ "$kn" = "$dn" ] || abort "memory_tier$HMAT_DAX_TIER holds nodes '$kn', not $dn"

# ---- topology: the kernel's tiers, the node's HMAT
ctl_json "$T/topo.json" topology || abort "topology"
"$CTL" topology > "$T/topo.txt" 2>&1 || fail "topology (text) exited $?"
logf "$T/topo.txt"
want=""
for f in /sys/devices/virtual/memory_tiering/memory_tier*/nodelist; do
    id=${f%/nodelist}; id=${id##*memory_tier}; read -r l < "$f"
    want+="$id:$l "
done
want=$(printf '%s\n' $want | sort -n | tr '\n' ' ')
got=$(jq -r '.memory_tiers[] | "\(.id):\(.nodes)"' "$T/topo.json" | tr '\n' ' ')
[ "$got" = "$want" ] || fail "memory tiers: numaguard '$got', the kernel '$want'"
expect "node $dn is not in tier $HMAT_DAX_TIER in topology --json" \
    jqe --argjson dn "$dn" --argjson t "$HMAT_DAX_TIER" '.nodes[] | select(.id == $dn) | .memory_tier == $t' "$T/topo.json"
IFS=: read -r _ init ns mbps <<< "$HMAT_DAX_EXPECT"
got=$(jq -c --argjson t "$dn" '.nodes[] | select(.id == $t) | .hmat | (.access1 // .access0)
    | {initiators, read_latency_ns, read_bandwidth_mbps}' "$T/topo.json" 2>&1)
[ "$got" = "{\"initiators\":\"$init\",\"read_latency_ns\":$ns,\"read_bandwidth_mbps\":$mbps}" ] ||
    fail "node $dn HMAT: numaguard $got, QEMU was given $init $ns ns $mbps MB/s"
grep -q "tier $HMAT_DAX_TIER" "$T/topo.txt" || fail "the text does not name tier $HMAT_DAX_TIER"
result tiers

# ---- SLOW_TIER: a segment on the slow node, used from node HMAT_CPU_NODE
IFS=: read -r _ _ local_ns _ <<< "${HMAT_EXPECT[$HMAT_CPU_NODE]}"
cpu=$(expand_cpulist "$(node_cpus "$HMAT_CPU_NODE")"); cpu=${cpu%% *}
audit_conf "$T/ng.conf"
wl_start numactl --physcpubind="$cpu" --membind="$dn" -- sysv -s 32 -p 1 || abort "workload"
slow=unclaimed:shmid-$WL_SHMID
audit_load --config "$T/ng.conf" || abort "audit"
expect_finding SLOW_TIER "$slow" warning "$dn"
msg=$(jq -r --arg i "$slow" '.findings[] | select(.code == "SLOW_TIER" and .instance == $i) | .message' "$T/audit.json")
log "SLOW_TIER: $msg"
pct=$(( ns * 100 / local_ns - 100 ))
[[ $msg == *"sits on node $dn in memory tier $HMAT_DAX_TIER, slower than tier 4 of the instance's CPU nodes $HMAT_CPU_NODE"* ]] ||
    fail "SLOW_TIER does not name node $dn, tier $HMAT_DAX_TIER against tier 4"
[[ $msg == *"+$pct % average memory latency against local ($ns vs $local_ns ns, from the firmware's HMAT)"* ]] ||
    fail "SLOW_TIER does not carry the HMAT's price (+$pct %, $ns vs $local_ns ns)"
"$CTL" audit --config "$T/ng.conf" > "$T/audit.txt" 2>&1
logf "$T/audit.txt"
result slow-tier
roundtrip guest-dax-tier "dax/kmem: a SysV segment on node $dn, persistent memory onlined as system RAM in memory tier $HMAT_DAX_TIER, used from node $HMAT_CPU_NODE's CPU"
kill -TERM "$WL_PID"; wait "$WL_PID" 2>/dev/null

# ---- SHMEM_DEMOTABLE: 4 KiB shared memory on the CPU's node, demotion on/off
wl_start numactl --physcpubind="$cpu" --membind="$HMAT_CPU_NODE" -- sysv -s 32 -p 1 || abort "workload"
near=unclaimed:shmid-$WL_SHMID
echo true > /sys/kernel/mm/numa/demotion_enabled
audit_load --config "$T/ng.conf" || abort "audit"
expect_finding SHMEM_DEMOTABLE "$near" warning "$dn"
echo false > /sys/kernel/mm/numa/demotion_enabled
audit_load --config "$T/ng.conf" || abort "audit"
expect_no_finding SHMEM_DEMOTABLE "$near"
result demotion

# ---- the hugepage plan: no pool on the slow node unless nodes= names it
plan_nodes() {          # plan_nodes CONF: the instance's nodes and node n's need
    "$CTL" hugepages plan --json --config "$1" > "$T/plan.json" 2> "$T/plan.err"
    local rc=$?    # 1: the plan changes something
    ((rc <= 1)) || { fail "hugepages plan exited $rc"; logf "$T/plan.err"; return 1; }
    jq -r --argjson dn "$dn" '"\([.instances[] | select(.instance == "DB") | .nodes[]] | join(",")) \(.nodes[] | select(.id == $dn) | .need)"' "$T/plan.json"
}
printf '[global]\nmin_segment_size = 4M\n[instance DB]\nmatch_comm = ng-shm-*\npolicy = interleave\nexpected_size = 64M\n' > "$T/db.conf"
got=$(plan_nodes "$T/db.conf")
log "plan, interleaved over what it may use: nodes and node $dn's need: $got"
[[ $got == *" 0" && ",${got% *}," != *",$dn,"* && -n ${got% *} ]] || fail "the plan puts pages on the slow node $dn: $got"
printf 'nodes = %s,%s\n' "$HMAT_CPU_NODE" "$dn" >> "$T/db.conf"
got=$(plan_nodes "$T/db.conf")
log "plan with nodes = $HMAT_CPU_NODE,$dn: $got"
[[ ${got% *} == "$HMAT_CPU_NODE,$dn" && ${got##* } -gt 0 ]] || fail "told to, the plan does not put pages on node $dn: $got"
result plan
