#!/usr/bin/env bash
# An Oracle-shaped instance with a SID of 10 characters, named as Oracle
# names its processes: the kernel keeps comm "ora_pmon_FINPRO" (15
# characters), argv[0] holds "ora_pmon_FINPROD0123" (what ps -ef shows).
# Its SGA is a 16 MiB SysV segment in 2 MiB hugepages (ora_pmon; Oracle's
# use_large_pages, SHM_HUGETLB from a pool of 8 pages on node N) plus an AMM
# SGA of 8 granule files of 4 MiB in /dev/shm (each mapped by an
# ora_<name>_FINPROD0123 process), all touched under --membind=N by
# processes free to run on every node. Discovery must name the instance oracle:FINPROD0123 (not the cut
# SID), hold every process, show the granules as one "Oracle AMM SGA" line,
# and raise CYCLOPS about node N. A hugetlb segment cannot be asked of
# itself (a read of a hole would take a page from the pool): the SGA is
# placed from the page tables of its pmon, which touched every page, or
# from the pools' per-node counters (placement_source attacher or pool);
# the granules are asked of themselves. Both resident figures within 2 % of
# the kernel's (/proc/sysvipc/shm rss; the granules' allocated blocks), and
# the hugetlb SGA's 16 MiB all on node N.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 2
need_ctl
n=$FILE_NODE sid=FINPROD0123 gran=8
audit_conf "$T/ng.conf"
mkdir -p "$T/bin"
at_exit "rm -f /dev/shm/ora_${sid}_*"
jqe() { jq -e "$@" > /dev/null; }
# oracle_wl NAME ARGS...: the workload started under an Oracle-like name.
oracle_wl() {
    local name=$1; shift
    ln -sf "$WL" "$T/bin/$name"
    WL="$T/bin/$name" wl_start numactl --membind="$n" -- "$@"
}
set_hugepages "$n" 8 || abort "a pool of 8 pages on node $n"
oracle_wl "ora_pmon_$sid" sysv --huge -s 16 -p 0 || abort "pmon workload"
pmon=$WL_PID
for i in $(seq 1 $gran); do
    oracle_wl "ora_dbw$((i - 1))_$sid" file "/dev/shm/ora_${sid}_65536_$i" -s 4 -p 0 || abort "granule workload $i"
done
log "pmon comm: $(cat "/proc/$pmon/comm"), argv[0]: $(tr '\0' ' ' < "/proc/$pmon/cmdline")"
audit_load --config "$T/ng.conf" || abort "audit"
"$CTL" audit --config "$T/ng.conf" > "$T/audit.txt" 2>&1
sed -n "/^instance oracle:$sid /,/^\$/p" "$T/audit.txt" > "$T/inst.txt"
logf "$T/inst.txt"
expect "comm is the 15-character cut" test "$(cat "/proc/$pmon/comm")" = "ora_pmon_FINPRO"
expect "instance oracle:$sid with main pid $pmon and $((gran + 1)) processes" \
    jqe --arg n "oracle:$sid" --argjson p "$pmon" '[.instances[] | select(.name == $n)
        | .type == "oracle" and .main_pid == $p and (.pids | length) == '$((gran + 1))'] == [true]' "$T/audit.json"
expect "no instance named after the cut SID" \
    jqe '[.instances[] | select(.name | startswith("oracle:FINPRO") and (. != "oracle:FINPROD0123"))] == []' "$T/audit.json"
expect "SysV SGA of 16 MiB and AMM SGA of $gran x 4 MiB, all on node $n" \
    jqe --arg n "oracle:$sid" --argjson node "$n" '[.instances[] | select(.name == $n)
        | ([.segments[] | select(.kind == "sysv") | .bytes] == [16777216])
          and .amm_sga.count == '$gran' and .amm_sga.bytes == '$((gran * 4194304))'
          and (.amm_sga.nodes | map(select(.bytes > 0) | .id)) == [$node]] == [true]' "$T/audit.json"
expect_finding CYCLOPS "oracle:$sid" warning "$n"
shmid=$(jq -r --arg n "oracle:$sid" '[.instances[] | select(.name == $n) | .segments[] | select(.kind == "sysv") | .shmid][0] // empty' "$T/audit.json")
rss=$(awk -v id="$shmid" '$2 == id { print $15 }' /proc/sysvipc/shm)
blocks=0
for f in /dev/shm/ora_${sid}_*; do blocks=$((blocks + $(stat -c %b "$f") * 512)); done
read -r sres ssrc spage snode ares <<< "$(jq -r --arg n "oracle:$sid" --argjson node "$n" '.instances[] | select(.name == $n)
    | ([.segments[] | select(.kind == "sysv")][0]
       | "\(.resident_bytes) \(.placement_source) \(.page_kib) \([.nodes[]? | select(.id == $node) | .bytes] | add // 0)")
      + " \(.amm_sga.resident_bytes)"' "$T/audit.json")"
log "SysV SGA shmid $shmid: numaguard $sres resident ($ssrc, ${spage} KiB pages, $snode bytes on node $n), the kernel's rss $rss; AMM granules: numaguard $ares, their blocks $blocks"
expect "hugetlb SGA placed from its pmon's page tables or the pool (placement_source $ssrc, $spage KiB pages), resident $sres within 2 % of rss $rss, all on node $n" \
    eval '[[ $ssrc == @(attacher|pool) ]] && [ "$spage" = 2048 ] && within2 "$sres" "${rss:-0}" && [ "$snode" = "$sres" ]'
expect "AMM granules resident $ares within 2 % of their blocks $blocks" within2 "$ares" "$blocks"
result discovery
expect "one 'Oracle AMM SGA: $gran files' line" grep -q "^  Oracle AMM SGA: $gran files in /dev/shm, 32 MiB, 32 MiB resident" "$T/inst.txt"
expect "no line per granule without --verbose" test "$(grep -c "/dev/shm/ora_${sid}_" "$T/inst.txt")" = 0
expect "instance block under 20 lines ($(wc -l < "$T/inst.txt"))" test "$(wc -l < "$T/inst.txt")" -lt 20
expect "--verbose lists every granule" test "$("$CTL" audit --config "$T/ng.conf" --verbose | grep -c "^  file /dev/shm/ora_${sid}_")" = $gran
result amm-text
