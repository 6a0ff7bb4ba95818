#!/usr/bin/env bash
# numaguardctl rebalance on real cyclops segments: a 4 KiB SysV segment and
# a 2 MiB hugetlb SysV segment, each touched under --membind=<first node> by
# processes free to run on every node, are spread evenly over all nodes
# (per `segments --json --exact`), with the attached processes still running
# and every byte unchanged (ng-shm-check, read-only attach). Refusals: the
# a 1 GiB free-memory floor on 512 MiB nodes, and node 3 without free
# 2 MiB pages: exit 2, nothing moved.
# Pages no living process maps, with the kernel's per-node Shmem (numastat
# -m's) as the oracle: a SysV segment whose filler detached (its attachers
# map none of its pages) and a /dev/shm file nobody maps are spread through
# numaguard's own mapping of them, the segment's own count unchanged; a
# SysV segment nobody maps at all is out of reach: refused with the count,
# never "noop".
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 8
need_ctl
CHK=$B/tests/helpers/ng-shm-check
[ -x "$CHK" ] || abort "$CHK not built (make $B/tests/helpers/ng-shm-check)"
((${#NODE_IDS[@]} >= 2)) || skip_case "needs at least 2 nodes"
src=${NODE_IDS[0]} last=${NODE_IDS[-1]}
audit_conf "$T/ng.conf" "node_free_floor = 32M"$'\n'
audit_conf "$T/floor.conf" "node_free_floor = 1G"$'\n'   # above what a 512 MiB node has free
export NUMAGUARD_ACTION_LOG=$T/actions NUMAGUARD_REBALANCE_RATE=256M

# seg_exact SHMID: SEG_method SEG_page_kib SEG_nattch SEG_nodes of the SysV
# segment from `audit --json --exact` (the representative's numa_maps;
# `segments` always samples).
seg_exact() {
    local sh rc
    "$CTL" audit --exact --json --config "$T/ng.conf" > "$T/exact.json" 2> "$T/exact.err"; rc=$?
    ((rc <= 2)) || { fail "numaguardctl audit --exact exited $rc"; logf "$T/exact.err"; return 1; }
    sh=$(jq -r --argjson id "$1" '[.instances[].segments[] | select(.kind == "sysv" and .shmid == $id)] as $m
        | "SEG_COUNT=\($m | length)",
          ($m[0] // {} | "SEG_method=\(.method // "" | @sh)", "SEG_page_kib=\(.page_kib // "" | tostring | @sh)",
            "SEG_nattch=\(.nattch // "" | tostring | @sh)",
            "SEG_nodes=\([.nodes[]? | "\(.id):\(.bytes)"] | join(" ") | @sh)")' "$T/exact.json" 2>&1) ||
        { fail "audit JSON unreadable: $sh"; return 1; }
    eval "$sh"
    [ "$SEG_COUNT" = 1 ] || { fail "$SEG_COUNT segments with shmid $1"; return 1; }
    [ "$SEG_method" = exact ] || fail "placement method '$SEG_method', expected exact"
    log "exact placement of shmid $1 ($SEG_method, $SEG_page_kib KiB pages): $SEG_nodes"
}

# rebal OUT [ARGS...]: numaguardctl rebalance ARGS > OUT; sets RC
rebal() {
    local out=$1; shift
    "$CTL" rebalance "$@" > "$out" 2>&1; RC=$?
    logf "$out"
}

alive() {   # alive PIDS...: every one still running
    local p
    for p; do kill -0 "$p" 2>/dev/null || { fail "attached process $p is gone"; return 1; }; done
}

contents() {  # contents SHMID PAGE_KIB WHEN
    local o
    o=$("$CHK" "$1" "$2" 2>&1) || fail "contents of shmid $1 $3: $o"
    log "contents of shmid $1 $3: $o"
}

# ---- 4 KiB pages
wl_start numactl --membind="$src" -- sysv -s 32 -p 2 || abort "workload"
shm=$WL_SHMID pids=$WL_PIDS_SP inst=unclaimed:shmid-$WL_SHMID
seg_exact "$shm" && expect_on_node "$src" "$WL_BYTES"
contents "$shm" 4 before

rebal "$T/floor.out" --config "$T/floor.conf" "$inst"
expect "refused by the 1 GiB floor: exit $RC, expected 2" test "$RC" = 2
expect "refusal names the floor" grep -q "refused: .*above its free-memory floor" "$T/floor.out"
rebal "$T/dry.out" --dry-run --config "$T/ng.conf" "$inst"
expect "dry run: exit $RC, expected 0" test "$RC" = 0
expect "dry run says what would move" grep -q "dry-run: would move 6144 of 8192 resident pages (24 MiB) of shmid $shm" "$T/dry.out"
seg_exact "$shm" && expect_on_node "$src" "$WL_BYTES"
result 4k-refused-and-dry-run

rebal "$T/run.out" --config "$T/ng.conf" "$inst"
expect "rebalance exit $RC, expected 0" test "$RC" = 0
expect "rebalance says it moved 6144 pages" grep -q "done: moved 6144 pages (24 MiB) of shmid $shm" "$T/run.out"
seg_exact "$shm" && expect_interleaved "${NODE_IDS[@]}"
for n in "${NODE_IDS[@]}"; do
    expect "node $n holds $(seg_node_bytes "$n") bytes, expected $((WL_BYTES / ${#NODE_IDS[@]}))" \
        test "$(seg_node_bytes "$n")" = $((WL_BYTES / ${#NODE_IDS[@]}))
done
expect_field nattch 3
alive $pids
contents "$shm" 4 after
numa_maps_diag "$WL_PID" SYSV
rebal "$T/again.out" --config "$T/ng.conf" "$inst"
expect "second run: exit $RC, expected 0 (noop)" grep -q "noop: .*already spread" "$T/again.out"
result 4k

# ---- 4 KiB pages no living process maps: per-node Shmem is the oracle
node_shmem() { awk '$3 == "Shmem:" { print $4 }' "/sys/devices/system/node/node$1/meminfo"; }
declare -A sh0=()
shmem_before() { local n; for n in "${NODE_IDS[@]}"; do sh0[$n]=$(node_shmem "$n"); done; }
# shmem_spread WHAT BYTES: the kernel's Shmem fell by 3/4 of BYTES on the
# source and rose by 1/4 on each other node (within 2 MiB: other tmpfs use)
shmem_spread() {
    local n d want k=${#NODE_IDS[@]} line=""
    for n in "${NODE_IDS[@]}"; do
        d=$(( $(node_shmem "$n") - sh0[$n] )); line+=" N$n:${d}kB"
        if [ "$n" = "$src" ]; then want=$(( -($2 / 1024) * (k - 1) / k )); else want=$(( ($2 / 1024) / k )); fi
        (( d - want <= 2048 && want - d <= 2048 )) || fail "$1: node $n's Shmem moved by $d kB, expected $want kB"
    done
    log "$1: the kernel's Shmem per node moved by$line"
}
wl_start numactl --membind="$src" -- sysv -s 32 -p 2 --detach || abort "detached workload"
dshm=$WL_SHMID dpids=${WL_CHILDREN//,/ } dinst=unclaimed:shmid-$WL_SHMID
rss0=$(awk -v id="$dshm" '$2 == id { print $15 "/" $7 "/" $6 }' /proc/sysvipc/shm)
shmem_before
rebal "$T/det.out" --config "$T/ng.conf" "$dinst"
expect "detached filler: exit $RC, expected 0" test "$RC" = 0
expect "detached filler: moved 6144 pages" grep -q "done: moved 6144 pages (24 MiB) of shmid $dshm" "$T/det.out"
expect "detached filler: through the segment's own file" grep -q "through the segment's own file" "$T/det.out"
shmem_spread "detached filler" $((32 << 20))
rss1=$(awk -v id="$dshm" '$2 == id { print $15 "/" $7 "/" $6 }' /proc/sysvipc/shm)
expect "detached filler: rss/nattch/lpid went from $rss0 to $rss1" test "$rss0" = "$rss1"
alive $dpids
contents "$dshm" 4 after
result 4k-detached-filler
kill "$WL_PID" 2>/dev/null; wait "$WL_PID" 2>/dev/null

# a file nobody maps belongs to the instance whose shm_owner owns it
f=/dev/shm/ng_e2e_rebal_file
rm -f "$f"; at_exit "rm -f $f"
numactl --membind="$src" dd if=/dev/urandom of="$f" bs=1M count=32 status=none && chown 65534 "$f" ||
    abort "the /dev/shm file"
audit_conf "$T/owner.conf" "node_free_floor = 32M"$'\n''[instance F]'$'\n''shm_owner = 65534'$'\n'
sum0=$(md5sum < "$f") blocks0=$(stat -c %b "$f")
shmem_before
rebal "$T/file.out" --config "$T/owner.conf" F
expect "unmapped file: exit $RC, expected 0" test "$RC" = 0
expect "unmapped file: moved 6144 pages" grep -q "done: moved 6144 pages (24 MiB) of $f" "$T/file.out"
shmem_spread "unmapped file" $((32 << 20))
expect "unmapped file: its blocks went from $blocks0 to $(stat -c %b "$f")" test "$(stat -c %b "$f")" = "$blocks0"
expect "unmapped file: its contents changed" test "$(md5sum < "$f")" = "$sum0"
rm -f "$f"
result file-nobody-maps

# a SysV segment nobody maps (its creator left it, --keep): shm_owner claims it
wl_start numactl --membind="$src" -- sysv -s 16 -p 0 --keep || abort "unattached workload"
kill "$WL_PID" 2>/dev/null; wait "$WL_PID" 2>/dev/null
at_exit "ipcrm -m $WL_SHMID"
log "shmid $WL_SHMID left behind: $(awk -v id="$WL_SHMID" '$2 == id { print "nattch " $7 ", rss " $15 }' /proc/sysvipc/shm)"
audit_conf "$T/root.conf" "node_free_floor = 32M"$'\n''[instance S]'$'\n''shm_owner = 0'$'\n'
# (root's other files, if any, are S's too: logged apart)
NUMAGUARD_ACTION_LOG=$T/actions-s rebal "$T/none.out" --config "$T/root.conf" S
expect "nobody attached: exit $RC, expected 2" test "$RC" = 2
expect "nobody attached: refused with the count and why" \
    grep -q "refused: shmid $WL_SHMID .*: 4096 resident pages out of reach: no process maps it" "$T/none.out"
ipcrm -m "$WL_SHMID"
result sysv-nobody-maps

# ---- 2 MiB hugetlb pages: 16 on the first node, room for 4 on each other
set_hugepages "$src" 20 || abort "cannot reserve 20 pages on node $src"
for n in "${NODE_IDS[@]:1}"; do set_hugepages "$n" 8 || abort "cannot reserve 8 pages on node $n"; done
wl_start numactl --membind="$src" -- sysv --huge -s 32 -p 2 || abort "hugetlb workload"
hshm=$WL_SHMID hpids=$WL_PIDS_SP hinst=unclaimed:shmid-$WL_SHMID
seg_exact "$hshm" && expect_field page_kib 2048 && expect_on_node "$src" "$WL_BYTES"
contents "$hshm" 2048 before

set_hugepages "$last" 0 || abort "cannot empty node $last's pool"
rebal "$T/hrefused.out" --config "$T/ng.conf" "$hinst"
expect "refused: exit $RC, expected 2" test "$RC" = 2
expect "refusal names node $last's hugepages" \
    grep -q "refused: .*node $last has 0 free 2048 kB hugepages, 4 needed" "$T/hrefused.out"
seg_exact "$hshm" && expect_on_node "$src" "$WL_BYTES"
result hugetlb-refused

set_hugepages "$last" 8 || abort "cannot refill node $last's pool"
rebal "$T/hrun.out" --config "$T/ng.conf" "$hinst"
expect "rebalance exit $RC, expected 0" test "$RC" = 0
expect "rebalance says it moved 12 pages" grep -q "done: moved 12 pages (24 MiB) of shmid $hshm" "$T/hrun.out"
seg_exact "$hshm" && expect_interleaved "${NODE_IDS[@]}"
for n in "${NODE_IDS[@]}"; do
    expect "node $n holds $(seg_node_bytes "$n") bytes, expected $((WL_BYTES / ${#NODE_IDS[@]}))" \
        test "$(seg_node_bytes "$n")" = $((WL_BYTES / ${#NODE_IDS[@]}))
done
expect_field nattch 3
alive $hpids
contents "$hshm" 2048 after
numa_maps_diag "$WL_PID" SYSV
# the pool pages moved with them: taken on each destination, freed on the source
ctl_json "$T/topo.json" topology && topo_load "$T/topo.json" && {
    expect "node $src: 2 MiB pool '${TOPO_HP2M[$src]-}', expected '20 16 0'" test "${TOPO_HP2M[$src]-}" = "20 16 0"
    for n in "${NODE_IDS[@]:1}"; do
        expect "node $n: 2 MiB pool '${TOPO_HP2M[$n]-}', expected '8 4 0'" test "${TOPO_HP2M[$n]-}" = "8 4 0"
    done
}
result hugetlb

# every non-dry run logged once at NOTICE with the rebalance MESSAGE_ID
quiet() { "$@" > /dev/null 2>&1; }
expect "action log: $(jq -s -c 'map(.NUMAGUARD_OUTCOME)' "$T/actions" 2>&1)" \
    quiet jq -e -s 'map(.NUMAGUARD_OUTCOME) == ["refused", "done", "noop", "done", "done", "refused", "done"]
              and all(.MESSAGE_ID == "09817b20990749faa060d721c40eaf1a")' "$T/actions"
result notice-log
