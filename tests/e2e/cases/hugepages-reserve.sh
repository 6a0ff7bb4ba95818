#!/usr/bin/env bash
# hugepages reserve on a real NUMA kernel: 64 pages on node 2 only (a dry
# run first changes nothing; then node 2 reads back 64, the other nodes keep
# their pools); a 1 GiB floor refuses any growth on a 512 MiB node
# (exit 2, with the numbers); and asking node 3 for nearly all its free
# memory (floor 0) is granted short -- the kernel keeps its min watermark
# free, raised for the purpose -- so compaction and the bounded retries run
# and the outcome is PARTIAL (exit 1) with asked and granted. apply carries
# out `hugepages plan` for an instance expecting 32 MiB on node 1 (17 pages
# there; then a no-op); apply --persist does it again from the old pool and
# records it for boot (tmpfiles.d). Pools, min_free_kbytes and the tmpfiles.d
# file are restored on exit.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 6
need_ctl
export NUMAGUARD_ACTION_LOG=$T/actions.jsonl
printf '[global]\nnode_free_floor = 0\n' > "$T/floor0.conf"
declare -A orig=()
for n in "${NODE_IDS[@]}"; do
    f=$(hp_file "$n"); read -r orig[$n] < "$f"
    at_exit "echo ${orig[$n]} > $f"
done

# ctl RC-WANTED ARGS...: numaguardctl ARGS > $T/out; its exit status checked.
ctl() {
    local want=$1; shift
    "$CTL" "$@" > "$T/out" 2>&1; RC=$?
    logf "$T/out"
    [ "$RC" = "$want" ] || fail "numaguardctl $* exited $RC, expected $want"
}
has() { grep -qF -- "$1" "$T/out" || fail "output lacks '$1'"; }
pools() {         # pools: TOPO_HP2M from `topology --json`
    ctl_json "$T/topo.json" topology && topo_load "$T/topo.json"
}

pools || abort "no topology"
declare -A before=()
for n in "${NODE_IDS[@]}"; do before[$n]=${TOPO_HP2M[$n]}; done
n2=${before[2]%% *}

actions_mark
ctl 0 hugepages reserve --size 2M --pages 64 --node 2 --dry-run --config "$T/floor0.conf"
expect_no_action "reserve --dry-run"
has "would write 64 to $(hp_file 2) (now: $n2)"
pools
[ "${TOPO_HP2M[2]}" = "${before[2]}" ] || fail "dry run changed node 2's pool: ${TOPO_HP2M[2]}"
result dry-run

ctl 0 hugepages reserve --size 2M --pages 64 --node 2 --config "$T/floor0.conf"
has "done: 2M pages: node 2 $n2 -> 64"
pools
for n in "${NODE_IDS[@]}"; do
    if [ "$n" = 2 ]; then
        [ "${TOPO_HP2M[2]}" = "64 64 0" ] || fail "node 2: total/free/surplus '${TOPO_HP2M[2]}', expected '64 64 0'"
    else
        [ "${TOPO_HP2M[$n]}" = "${before[$n]}" ] || fail "node $n changed: '${TOPO_HP2M[$n]}' (was '${before[$n]}')"
    fi
done
grep -q '"NUMAGUARD_OUTCOME":"done"' "$NUMAGUARD_ACTION_LOG" || fail "no NOTICE entry with outcome done"
result node2

# A 1 GiB floor is above what a 512 MiB node has free (the default, auto,
# fits the node: about 15 MiB here).
printf '[global]\nnode_free_floor = 1G\n' > "$T/floor1g.conf"
ctl 2 hugepages reserve --size 2M --pages 96 --node 1 --config "$T/floor1g.conf"
has "refused: 2M pages: would push a node below its free-memory floor: node 1:"
has "floor 1024 MiB"
pools
[ "${TOPO_HP2M[1]}" = "${before[1]}" ] || fail "refused, yet node 1 changed: '${TOPO_HP2M[1]}'"
result refused

# Nearly every free 2 MiB block of node 3: within a floor of 0, but the
# kernel never allocates below a zone's min watermark (min_free_kbytes,
# raised here). Whether it then falls short depends on what it can reclaim
# (page cache of earlier cases), so up to three asks with a higher watermark
# each: a full grant must read back as "done" with the pool at the ask; a
# short one must be "partial" with the compaction retries and the boot line.
read -r mfk < /proc/sys/vm/min_free_kbytes
at_exit "echo $mfk > /proc/sys/vm/min_free_kbytes"
short=0
for per_node_mib in 80 100 120; do
    want_mfk=$((${#NODE_IDS[@]} * per_node_mib * 1024))
    ((mfk >= want_mfk)) || echo "$want_mfk" > /proc/sys/vm/min_free_kbytes
    # drop the page cache now, so that the kernel has little left to
    # reclaim for the ask below (MemFree is read after this)
    sync; echo 3 > /proc/sys/vm/drop_caches
    pools
    n3=${TOPO_HP2M[3]%% *}
    free_kib=$(awk '/MemFree/ { print $4 }' "/sys/devices/system/node/node3/meminfo")
    ask=$((n3 + (free_kib - 16 * 1024) / 2048))     # 16 MiB of slack: MemFree moves
    log "node 3: MemFree $free_kib kB, pool $n3, min_free_kbytes $(</proc/sys/vm/min_free_kbytes): asking $ask"
    "$CTL" hugepages reserve --size 2M --pages "$ask" --node 3 --config "$T/floor0.conf" > "$T/out" 2>&1; RC=$?
    echo "$mfk" > /proc/sys/vm/min_free_kbytes
    logf "$T/out"
    if [ "$RC" = 0 ]; then
        has "done: 2M pages: node 3 $n3 -> $ask"
        pools
        [ "${TOPO_HP2M[3]%% *}" = "$ask" ] || fail "done, yet node 3 holds '${TOPO_HP2M[3]}', not $ask"
        echo "${before[3]%% *}" > /sys/devices/system/node/node3/hugepages/hugepages-2048kB/nr_hugepages
        continue
    fi
    [ "$RC" = 1 ] || { fail "numaguardctl exited $RC, expected 0 (all granted) or 1 (partial)"; break; }
    short=1
    if [[ $(<"$T/out") =~ asked\ $ask,\ granted\ ([0-9]+)\ on\ node\ 3\ after\ 5\ retries ]]; then
        granted=${BASH_REMATCH[1]}
        ((granted < ask)) || fail "granted $granted is not below the ask $ask"
        pools
        [ "${TOPO_HP2M[3]%% *}" = "$granted" ] || fail "node 3 holds '${TOPO_HP2M[3]}', numaguard said $granted"
    else
        fail "no 'asked $ask, granted N on node 3 after 5 retries' in the output"
    fi
    has "wrote 1 to /sys/devices/system/node/node3/compact"
    has "(no more free 2M blocks after compaction: reserve at boot with hugepagesz=2M hugepages="
    has ",3:$ask"
    grep -q '"NUMAGUARD_OUTCOME":"partial"' "$NUMAGUARD_ACTION_LOG" || fail "no NOTICE entry with outcome partial"
    break
done
if ((short == 0 && FAILS == 0)); then
    # (under CI a skip fails: suite.sh)
    echo "skip $ID/partial: the kernel granted all three asks in full (reclaimed enough); the partial path is unit-tested"
    FAILS=0
else
    result partial
fi

# apply: an instance that expects 32 MiB on node 1 -> `hugepages plan` wants
# 16 pages + 2 % margin (1 page) there; apply carries it out.
for n in "${NODE_IDS[@]}"; do echo "${orig[$n]}" > "$(hp_file "$n")"; done
printf '[global]\nnode_free_floor = 0\nmin_segment_size = 4M\n[instance HP]\nmatch_comm = ng-shm-workload\nexpected_size = 32M\nnodes = 1\n' > "$T/apply.conf"
wl_start sysv -s 8 -p 0 || abort "workload"
n1=${orig[1]}
actions_mark
ctl 0 hugepages apply --dry-run --config "$T/apply.conf"
has "would write 17 to $(hp_file 1) (now: $n1)"
expect_no_action "apply --dry-run"
ctl 0 hugepages apply --config "$T/apply.conf"
has "done: 2M pages: node 1 $n1 -> 17"
pools
[ "${TOPO_HP2M[1]%% *}" = 17 ] || fail "node 1 holds '${TOPO_HP2M[1]}', expected 17 pages"
ctl 0 hugepages apply --config "$T/apply.conf"
has "noop"
result apply

# apply --persist: the pool again from its old size, and recorded for boot
# in numaguard's tmpfiles.d file (restored as it was on exit)
tmpf=/etc/tmpfiles.d/numaguard-hugepages.conf
if [ -e $tmpf ]; then cp $tmpf "$T/tmpfiles.orig" && at_exit "cp $T/tmpfiles.orig $tmpf"; else at_exit "rm -f $tmpf"; fi
echo "$n1" > "$(hp_file 1)"
ctl 0 hugepages apply --persist --config "$T/apply.conf"
has "done: 2M pages: node 1 $n1 -> 17"
pools
[ "${TOPO_HP2M[1]%% *}" = 17 ] || fail "node 1 holds '${TOPO_HP2M[1]}', expected 17 pages"
grep -qx "w /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages - - - - 17" $tmpf ||
    { fail "no line for node 1's 17 pages in $tmpf"; logf $tmpf; }
log "$tmpf after apply --persist: $(grep -c '^w ' $tmpf 2>/dev/null) lines"
result apply-persist
