#!/usr/bin/env bash
# numaguardctl probe: every (CPU node, memory node) pair measured on the
# guest's real NUMA kernel, each buffer's placement checked with move_pages
# (pages_verified), memory-only nodes as columns only; --nodes narrows it; a
# buffer that would push a node below its floor is refused. --save --root
# writes the tree's latency.json; topology and audit --root read it back
# (CYCLOPS and REMOTE_MEMORY priced from the measurement), and a snapshot of
# that tree carries it. The guest's absolute numbers are emulated: only
# their shape and sign are asserted, so runs that disagree under TCG are
# accepted (NUMAGUARD_PROBE_MAX_SPREAD; tests/shell/test-probe-live.sh
# checks the refusal).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
export NUMAGUARD_PROBE_MAX_SPREAD=1000
plan 3
need_ctl
jqe() { jq -e "$@" > /dev/null; }
mib=8
ctl_json "$T/topo.json" topology || abort "topology"
want_nodes=$(jq -c '[.nodes[].id]' "$T/topo.json")
want_cpu=$(jq -c '[.nodes[] | select(.memory_only | not) | .id]' "$T/topo.json")

# ---- live: shape, every pair, placement verified
start=$SECONDS
"$CTL" probe --size $mib --json > "$T/p.json" 2> "$T/p.err" || { logf "$T/p.err"; abort "probe exited $?"; }
log "probe of $want_nodes x $want_cpu took $((SECONDS - start)) s"
sh=$(jq -r --argjson n "$want_nodes" --argjson c "$want_cpu" '
    def cells(m): [m[][]];
    "schema=\(.schema)", "nodes=\(.nodes == $n)", "cpu_nodes=\(.cpu_nodes == $c)",
    "rows=\((.latency_ns | length) == ($c | length) and (.bandwidth_mbps | length) == ($c | length))",
    "cols=\([.latency_ns[], .bandwidth_mbps[] | length == ($n | length)] | all)",
    "measured=\([cells(.latency_ns)[], cells(.bandwidth_mbps)[] | type == "number" and . > 0] | all)",
    "verified=\(.pages_verified | length == ($n | length) and all(. > 0))",
    "at=\(.measured_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$"))"' "$T/p.json" 2>&1) ||
    { logf "$T/p.json"; abort "probe JSON unreadable: $sh"; }
log $sh
for k in schema=1 nodes=true cpu_nodes=true rows=true cols=true measured=true verified=true at=true; do
    [[ $'\n'$sh$'\n' == *$'\n'$k$'\n'* ]] || fail "probe JSON: want $k"
done
"$CTL" probe --size $mib > "$T/p.txt" 2>&1 || fail "probe (text) exited $?"
logf "$T/p.txt"
grep -q "^latency in ns, beside the SLIT distance" "$T/p.txt" || fail "no latency matrix in the text output"
result shape

# ---- --nodes: a subset; --size beyond a node's free memory: refused
first=$(jq -r '.cpu_nodes[0]' "$T/p.json"); last=$(jq -r '.nodes[-1]' "$T/p.json")
"$CTL" probe --size $mib --nodes "$first,$last" --json > "$T/sub.json" 2> "$T/sub.err" || fail "probe --nodes exited $?"
expect "--nodes $first,$last: $(jq -c '{nodes, cpu_nodes}' "$T/sub.json" 2>&1)" \
    jqe --argjson f "$first" --argjson l "$last" '.nodes == ([$f, $l] | unique) and .cpu_nodes[0] == $f' "$T/sub.json"
"$CTL" probe --size 65536 > "$T/big.out" 2> "$T/big.err"; rc=$?
expect "a 64 GiB buffer: exit $rc, expected 3" test "$rc" = 3
expect "refusal does not name the floor: $(cat "$T/big.err")" grep -q "below its floor" "$T/big.err"
result refuse

# ---- --save under --root, read back by topology and audit, carried by snapshot
audit_conf "$T/ng.conf"
wl_start numactl --membind="$HUGE_NODE" -- sysv -s 32 -p 2 || abort "workload"
cyclops=unclaimed:shmid-$WL_SHMID
far=$last
wl_start numactl --cpunodebind="$first" --membind="$far" -- sysv -s 32 -p 1 || abort "workload"
remote=unclaimed:shmid-$WL_SHMID
"$CTL" snapshot --config "$T/ng.conf" -o "$T/snap.tar.gz" > "$T/snap.log" 2>&1 || { logf "$T/snap.log"; abort "snapshot"; }
mkdir -p "$T/tree" && tar -xzf "$T/snap.tar.gz" -C "$T/tree" || abort "unpack"
"$CTL" probe --size $mib --save --root "$T/tree" --json > "$T/saved.json" 2> "$T/save.err" ||
    { logf "$T/save.err"; abort "probe --save --root exited $?"; }
file=$T/tree/var/lib/numaguard/latency.json
expect "--save wrote something else than it printed" cmp -s "$T/saved.json" "$file"
ctl_json "$T/topo-root.json" topology --root "$T/tree"
expect "topology --root does not show the saved matrix" \
    jqe --slurpfile m "$file" '.latency == $m[0]' "$T/topo-root.json"
"$CTL" audit --root "$T/tree" --config "$T/ng.conf" > "$T/audit.txt" 2>&1
logf "$T/audit.txt"
audit_load --root "$T/tree" --config "$T/ng.conf" || abort "audit --root"
expect_finding CYCLOPS "$cyclops" warning "$HUGE_NODE"
jq -r --arg c "$cyclops" --arg r "$remote" '.findings[] | select(.instance == $c or .instance == $r)
    | "\(.code) \(.instance): \(.message)"' "$T/audit.json" | logf
expect "CYCLOPS message without its measured bandwidth price" jqe --arg i "$cyclops" \
    '[.findings[] | select(.code == "CYCLOPS" and .instance == $i)
      | .message | test("bandwidth capped at [0-9.]+ of [0-9]+ nodes \\([0-9.]+ of [0-9.]+ GB/s read, measured\\)")] | any' \
    "$T/audit.json"
expect "REMOTE_MEMORY message without its measured latency price" jqe --arg i "$remote" \
    '[.findings[] | select(.code == "REMOTE_MEMORY" and .instance == $i)
      | .message | test("[+-][0-9]+ % average memory latency against local \\([0-9.]+ vs [0-9.]+ ns, measured\\)")] | any' \
    "$T/audit.json"
expect "instance price fields: $(jq -c --arg i "$remote" '.instances[] | select(.name == $i)
        | {price_source, remote_access_ratio, expected_latency_ns, cpu_share_by_node}' "$T/audit.json")" \
    jqe --arg i "$remote" --argjson f "$first" '.instances[] | select(.name == $i)
        | .price_source == "measured" and .remote_access_ratio > 0.99 and .expected_latency_ns > 0
          and .interleaved_bandwidth_ceiling_mbps > 0 and ([.cpu_share_by_node[].node] == [$f])' "$T/audit.json"
"$CTL" snapshot --root "$T/tree" --config "$T/ng.conf" -o "$T/snap2.tar.gz" > "$T/snap2.log" 2>&1 ||
    { logf "$T/snap2.log"; fail "snapshot --root"; }
mkdir -p "$T/tree2" && tar -xzf "$T/snap2.tar.gz" -C "$T/tree2" ||  fail "unpack the second snapshot"
expect "the snapshot of the tree lacks its latency.json" cmp -s "$file" "$T/tree2/var/lib/numaguard/latency.json"
result save-root
