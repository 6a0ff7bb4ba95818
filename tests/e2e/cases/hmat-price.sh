#!/usr/bin/env bash
# The firmware's HMAT on a real kernel (topology hmat): what the kernel
# exports per memory node (nodeN/access1, else access0) is what QEMU was
# given (HMAT_EXPECT of the .conf), in topology --json; a segment on the
# CPU-less node HMAT_FAR_NODE used from HMAT_CPU_NODE's CPU is priced from
# the HMAT (price_source hmat, expected over local latency the table's
# ratio, in ns) and REMOTE_MEMORY says so; HIDDEN_HOP compares the SLIT
# with the HMAT (no probe saved); nodes HMAT_CPU_NODE and HMAT_SNC_NODE,
# whose CPUs share a socket, are named sub-NUMA clusters, and a segment on
# the sibling used from HMAT_CPU_NODE's CPU is a hop inside the socket; the
# snapshot round trip carries all of it.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 5
need_ctl
jqe() { jq -e "$@" > /dev/null; }
[[ -d /sys/devices/system/node/node0/access0 ]] || abort "the guest kernel exports no HMAT (node0/access0)"

# ---- topology: the kernel's figures are the table's
ctl_json "$T/topo.json" topology || abort "topology"
"$CTL" topology > "$T/topo.txt" 2>&1 || fail "topology (text) exited $?"
logf "$T/topo.txt"
for e in "${HMAT_EXPECT[@]}"; do
    IFS=: read -r tgt init ns mbps <<< "$e"
    got=$(jq -c --argjson t "$tgt" '.nodes[] | select(.id == $t) | .hmat | (.access1 // .access0)
        | {initiators, read_latency_ns, read_bandwidth_mbps}' "$T/topo.json" 2>&1)
    want="{\"initiators\":\"$init\",\"read_latency_ns\":$ns,\"read_bandwidth_mbps\":$mbps}"
    [ "$got" = "$want" ] || fail "node $tgt HMAT: numaguard $got, QEMU was given $want"
    k=$(cat /sys/devices/system/node/node$tgt/access1/initiators/read_latency 2>/dev/null ||
        cat /sys/devices/system/node/node$tgt/access0/initiators/read_latency)
    log "node $tgt: kernel read_latency $k, numaguard $got"
done
grep -q "^firmware HMAT, from each memory node's best initiators" "$T/topo.txt" || fail "no HMAT in the text output"
expect "no memory-side cache of node $HMAT_FAR_NODE in topology --json" \
    jqe --argjson t "$HMAT_FAR_NODE" '.nodes[] | select(.id == $t) | .hmat.memory_side_caches
        | length == 1 and .[0].level == 1 and .[0].size_bytes == 67108864 and .[0].indexing == 0' "$T/topo.json"
result hmat-topology

# ---- the price of a segment on the expander, used from node HMAT_CPU_NODE
far=${HMAT_EXPECT[$HMAT_FAR_NODE]} near=${HMAT_EXPECT[$HMAT_NEAR_NODE]} local=${HMAT_EXPECT[$HMAT_CPU_NODE]}
IFS=: read -r _ _ far_ns far_mbps <<< "$far"
IFS=: read -r _ _ near_ns _ <<< "$near"
IFS=: read -r _ _ local_ns local_mbps <<< "$local"
cpu=$(expand_cpulist "$(node_cpus "$HMAT_CPU_NODE")"); cpu=${cpu%% *}
audit_conf "$T/ng.conf"
wl_start numactl --physcpubind="$cpu" --membind="$HMAT_FAR_NODE" -- sysv -s 32 -p 1 || abort "workload"
inst=unclaimed:shmid-$WL_SHMID
audit_load --config "$T/ng.conf" || abort "audit"
got=$(jq -c --arg i "$inst" '.instances[] | select(.name == $i) | {price_source, expected_latency_ns,
    local_latency_ns, bandwidth_ceiling_mbps, interleaved_bandwidth_ceiling_mbps}' "$T/audit.json" 2>&1)
want="{\"price_source\":\"hmat\",\"expected_latency_ns\":$far_ns,\"local_latency_ns\":$local_ns,"
want+="\"bandwidth_ceiling_mbps\":$far_mbps,\"interleaved_bandwidth_ceiling_mbps\":$local_mbps}"
[ "$got" = "$want" ] || fail "price of $inst: $got, the HMAT table gives $want"
expect_finding REMOTE_MEMORY "$inst" warning "$HMAT_FAR_NODE"
pct=$(( (far_ns * 100 / local_ns) - 100 ))
msg=$(jq -r --arg i "$inst" '.findings[] | select(.code == "REMOTE_MEMORY" and .instance == $i) | .message' "$T/audit.json")
log "REMOTE_MEMORY: $msg"
[[ $msg == *"+$pct % average memory latency against local ($far_ns vs $local_ns ns, from the firmware's HMAT)"* ]] ||
    fail "REMOTE_MEMORY does not carry the HMAT's price (+$pct %, $far_ns vs $local_ns ns)"
result hmat-price

# ---- HIDDEN_HOP: nodes HMAT_NEAR_NODE and HMAT_FAR_NODE share a SLIT distance
msg=$(jq -r --argjson c "$HMAT_CPU_NODE" '.findings[] | select(.code == "HIDDEN_HOP"
    and (.nodes | index($c))) | .message' "$T/audit.json")
log "HIDDEN_HOP: $msg"
[[ $msg == *"nodes $HMAT_NEAR_NODE and $HMAT_FAR_NODE share SLIT distance"*"the firmware's HMAT gives $near_ns ns and $far_ns ns"* ]] ||
    fail "no HIDDEN_HOP from node $HMAT_CPU_NODE naming nodes $HMAT_NEAR_NODE ($near_ns ns) and $HMAT_FAR_NODE ($far_ns ns)"
result hidden-hop

# ---- sub-NUMA clusters: the sibling node of one socket
grep -q "^sub-NUMA clusters: socket 0: nodes $HMAT_CPU_NODE-$HMAT_SNC_NODE\$" "$T/topo.txt" ||
    fail "topology does not name nodes $HMAT_CPU_NODE-$HMAT_SNC_NODE sub-NUMA clusters of socket 0"
expect "package_id of nodes: $(jq -c '[.nodes[] | .package_id]' "$T/topo.json")" \
    jqe '[.nodes[] | .package_id] == [0, 0, null, null]' "$T/topo.json"
wl_start numactl --physcpubind="$cpu" --membind="$HMAT_SNC_NODE" -- sysv -s 32 -p 1 || abort "workload"
sib=unclaimed:shmid-$WL_SHMID
audit_load --config "$T/ng.conf" || abort "audit"
expect_finding REMOTE_MEMORY "$sib" warning "$HMAT_SNC_NODE"
msg=$(jq -r --arg i "$sib" '.findings[] | select(.code == "REMOTE_MEMORY" and .instance == $i) | .message' "$T/audit.json")
log "REMOTE_MEMORY: $msg"
[[ $msg == *"nodes $HMAT_CPU_NODE-$HMAT_SNC_NODE are sub-NUMA clusters of one socket (0): the hop stays inside it"* ]] ||
    fail "REMOTE_MEMORY on the sibling cluster does not say it stays inside the socket"
# The kernel exports node 1's figures from its own CPU only: the SLIT prices it.
[[ $msg == *"(distance 11 vs 10, from the SLIT)"* ]] || fail "the sibling's price is not the SLIT's 11 against 10"
result sub-numa

roundtrip hmat-expander "HMAT: a SysV segment on the CPU-less node $HMAT_FAR_NODE (3x local latency) used from node $HMAT_CPU_NODE's CPU"
