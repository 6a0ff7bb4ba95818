#!/usr/bin/env bash
# numaguardctl topology must equal numactl --hardware: node ids, CPUs per
# node, memory-only nodes, node sizes and the whole distance matrix; and the
# guest must have the topology the .conf asked for (so that a guest built
# wrongly cannot make a wrong numaguard pass).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 1
need_ctl

numactl --hardware > "$T/hw.txt" 2>&1 || abort "numactl --hardware failed"
logf "$T/hw.txt"
ctl_json "$T/topo.json" topology || abort "no topology JSON"
topo_load "$T/topo.json" || abort "unreadable topology JSON"
"$CTL" topology > "$T/topo.txt" 2>&1 || fail "numaguardctl topology (text) exited $?"
[ -s "$T/topo.txt" ] || fail "numaguardctl topology (text) printed nothing"

# parse numactl --hardware with built-ins
hw_ids=() ; declare -A hw_cpus=() hw_mb=() hw_dist=()
in_dist=0
while read -r a b c rest; do
    if ((in_dist)); then
        [[ $a == *: ]] && hw_dist[${a%:}]=$(echo $b $c $rest)
    elif [ "$a $c" = "node cpus:" ]; then hw_ids+=("$b"); hw_cpus[$b]=$(echo $rest)
    elif [ "$a $c" = "node size:" ]; then hw_mb[$b]=${rest%% *}
    elif [ "$a $b" = "node distances:" ]; then in_dist=1; read -r _   # header row
    fi
done < "$T/hw.txt"

[ "${TOPO_IDS[*]}" = "${hw_ids[*]}" ] || fail "node ids: numaguard '${TOPO_IDS[*]}', numactl '${hw_ids[*]}'"
((${#hw_ids[@]} == EXPECT_NODES)) || fail "guest has ${#hw_ids[@]} nodes, topology $E2E_TOPO asks for $EXPECT_NODES"
memonly=()
for id in "${hw_ids[@]}"; do
    ng=$(expand_cpulist "${TOPO_CPUS[$id]-}")
    [ "$ng" = "${hw_cpus[$id]}" ] || fail "node $id cpus: numaguard '$ng', numactl '${hw_cpus[$id]}'"
    if [ -z "${hw_cpus[$id]}" ]; then
        memonly+=("$id")
        [ "${TOPO_MEMONLY[$id]-}" = true ] || fail "node $id has no CPUs but memory_only is '${TOPO_MEMONLY[$id]-}'"
    else
        [ "${TOPO_MEMONLY[$id]-}" = false ] || fail "node $id has CPUs but memory_only is '${TOPO_MEMONLY[$id]-}'"
    fi
    d=$(( ${TOPO_TOTAL[$id]:-0} / 1024 - ${hw_mb[$id]:-0} )); ((d < 0)) && d=$((-d))
    ((d <= 1)) || fail "node $id size: numaguard ${TOPO_TOTAL[$id]:-?} KiB, numactl ${hw_mb[$id]:-?} MB"
    [ "${TOPO_DIST[$id]-}" = "${hw_dist[$id]-}" ] ||
        fail "distances from node $id: numaguard '${TOPO_DIST[$id]-}', numactl '${hw_dist[$id]-}'"
    for v in ${hw_dist[$id]-}; do
        [[ " ${EXPECT_DISTANCES[*]} " == *" $v "* ]] || fail "distance $v from node $id not in (${EXPECT_DISTANCES[*]})"
    done
done
[ "${memonly[*]}" = "$EXPECT_MEMONLY" ] ||
    fail "memory-only nodes: '${memonly[*]}', topology $E2E_TOPO asks for '$EXPECT_MEMONLY'"
for p in ${EXPECT_DIST_PAIRS[@]+"${EXPECT_DIST_PAIRS[@]}"}; do
    IFS=, read -r s d v <<<"$p"
    row=(${TOPO_DIST[$s]-})
    [ "${row[$d]-}" = "$v" ] || fail "distance $s -> $d: numaguard says '${row[$d]-}', the guest was built with $v"
done
result
