#!/usr/bin/env bash
# Hugetlb charged to a memory cgroup (Linux 6.6: the cgroup2 mount option
# memory_hugetlb_accounting) in the hugepage checks, on the real kernel.
# The case remounts /sys/fs/cgroup with the option (its own options back
# at exit); a process in cgroup /e2e-memcg makes a 16 MiB SHM_HUGETLB
# segment (8 reserved 2 MiB pages from node HUGE_NODE's pool of 8, the
# other nodes' pools empty) and touches its first 4 MiB (2 pages).
#   charged: the cgroup's memory.stat counts the 2 faulted pages as hugetlb
#     (4194304), what the option does (where memory.stat has no hugetlb
#     line, as on 6.12, memory.current holds them), and numa_maps has them
#     on the node;
#   finding: memory.max set 4 MiB above memory.current leaves the 6 pages
#     still to fault (12 MiB) no room beside the hugetlb it holds (and is
#     below 12 MiB itself, what 6.12's memory.stat without hugetlb gives):
#     HUGEPAGE_SIGBUS_RISK critical for the instance (exit 2), the only one
#     (the node's 6 free pages cover them), no nodes, its message naming
#     the option, the cgroup and 12 MiB;
#   snapshot: the round trip reproduces topology and segments;
#   tree: the snapshot holds the cgroup's memory.max, memory.current and
#     memory.stat, and audit --root on it raises the same finding;
#   stall: the kernel's verdict on what the finding says: the process
#     touches the rest and, its charge refused, neither finishes nor dies
#     within 15 s while memory.events' max grows (no SIGBUS: the fault is
#     retried, VM_FAULT_OOM); once memory.max is lifted it finishes and
#     lives, all 8 pages on the node, and the finding goes.
# A kernel whose /sys/kernel/cgroup/features lists no
# memory_hugetlb_accounting (before 6.6) is not applicable.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 5
need_ctl
# A SIGBUS must end the sanitizer build's workload as it ends a database
# (ASan would catch it and exit 1).
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_sigbus=0
[ "$CGROUP" = v2 ] || skip_case "the case's memory cgroup is cgroup v2's"
grep -qx memory_hugetlb_accounting /sys/kernel/cgroup/features 2>/dev/null ||
    not_applicable "/sys/kernel/cgroup/features lists no memory_hugetlb_accounting (Linux 6.6)"
hn=$HUGE_NODE     # (lib.sh's helpers use n)
base=/sys/fs/cgroup cg=/sys/fs/cgroup/e2e-memcg
opts=$(awk '$5 == "/sys/fs/cgroup" { for (i = 7; i < NF; i++) if ($i == "-" && $(i + 1) == "cgroup2") print $(i + 3) }' \
    /proc/self/mountinfo)
[ -n "$opts" ] || skip_case "no cgroup2 mount at /sys/fs/cgroup"
mount -o "remount,$opts,memory_hugetlb_accounting" /sys/fs/cgroup || abort "remount with memory_hugetlb_accounting"
at_exit "mount -o remount,$opts /sys/fs/cgroup"
grep -q ' - cgroup2 .*memory_hugetlb_accounting' /proc/self/mountinfo || abort "mountinfo does not show the option"
echo "+memory" > $base/cgroup.subtree_control || abort "cannot enable the memory controller"
mkdir "$cg" || abort "mkdir $cg"
at_exit "rmdir $cg"
for m in "${NODE_IDS[@]}"; do [ "$m" = "$hn" ] || set_hugepages "$m" 0 || abort "pools"; done
set_hugepages "$hn" 8 || abort "pools"
free_hp() { local f; read -r f < "/sys/devices/system/node/node$1/hugepages/hugepages-2048kB/free_hugepages"; echo "$f"; }
jqt() { jq -e "$@" > /dev/null; }
# wait_touch SECONDS: the workload finished touching the rest (0), or died
# or ran out of time (1)
wait_touch() {
    local t=$(($1 * 10))
    while ((t-- > 0)); do
        [ -f "$T/touch.done" ] && return 0
        kill -0 "$WL_PID" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

rm -f "$T/touch" "$T/touch.done"
wl_start sh -c 'echo $$ > "$0" && exec "$@"' "$cg/cgroup.procs" -- \
    sysv --huge -s 16 --touch 4 -p 0 --touch-rest "$T/touch" -v || abort "workload"
at_exit "ipcrm -m $WL_SHMID"
hugetlb=$(awk '$1 == "hugetlb" { print $2 }' "$cg/memory.stat")
log "cgroup: memory.current $(cat "$cg/memory.current"), memory.stat hugetlb '$hugetlb'; pages $(kernel_nodes "$WL_PID"); node $hn free $(free_hp "$hn")"
if grep -q '^hugetlb ' "$cg/memory.stat"; then
    expect "memory.stat's hugetlb is '$hugetlb', expected 4194304 (2 pages charged at their fault)" test "$hugetlb" = 4194304
else
    # 6.12 charges hugetlb but memory.stat lists no hugetlb line: the
    # charge shows in memory.current alone
    log "memory.stat has no hugetlb line on $(uname -r): the charge is read from memory.current"
    expect "memory.current $(cat "$cg/memory.current") holds not the 2 pages (4194304) charged at their fault" \
        test "$(cat "$cg/memory.current")" -ge 4194304
fi
expect "pages at '$(kernel_nodes "$WL_PID")', expected N$hn=2" test "$(kernel_nodes "$WL_PID")" = "N$hn=2"
result charged

cur=$(cat "$cg/memory.current")
echo $((cur + 4 * 1024 * 1024)) > "$cg/memory.max" || abort "memory.max"
log "memory.max $(cat "$cg/memory.max") (memory.current $cur)"
audit_conf "$T/ng.conf" "$(printf '[instance mc]\ncgroup = /e2e-memcg\n')"
audit_load -c "$T/ng.conf"
expect_finding HUGEPAGE_SIGBUS_RISK mc critical
jq -r '.findings[] | select(.code == "HUGEPAGE_SIGBUS_RISK") | .message' "$T/audit.json" | logf
expect "audit exited $AUDIT_RC, expected 2" test "$AUDIT_RC" = 2
expect "not exactly one HUGEPAGE_SIGBUS_RISK, about no node" \
    jqt '[.findings[] | select(.code == "HUGEPAGE_SIGBUS_RISK")] | length == 1 and (.[0].nodes | length) == 0' "$T/audit.json"
expect "the message does not name the option, the cgroup and 12 MiB still to fault" \
    jqt '.findings[] | select(.code == "HUGEPAGE_SIGBUS_RISK") | .message
         | test("^12 MiB of hugepages not yet faulted") and test("cgroup /e2e-memcg \\(memory_hugetlb_accounting\\)")
           and test("VM_FAULT_OOM, not SIGBUS")' "$T/audit.json"
result finding

roundtrip hugetlb-memcg "a 16 MiB SHM_HUGETLB segment, 2 of 8 pages faulted, charged to cgroup /e2e-memcg under memory.max"
tree=$T/rt/tree
for f in memory.max memory.current memory.stat; do
    expect "the snapshot holds no $f of the cgroup" test -f "$tree/sys/fs/cgroup/e2e-memcg/$f"
done
"$CTL" -c "$T/ng.conf" audit --json --root "$tree" > "$T/tree.json" 2> "$T/tree.err"; rc=$?
logf "$T/tree.err"
expect "audit --root on the snapshot exited $rc, expected 2" test "$rc" = 2
expect "audit --root on the snapshot: no HUGEPAGE_SIGBUS_RISK naming the option" \
    jqt '[.findings[] | select(.code == "HUGEPAGE_SIGBUS_RISK" and .instance == "mc"
          and (.message | contains("memory_hugetlb_accounting")))] | length == 1' "$T/tree.json"
result tree

# stall: touch the rest under the limit, then lift it
ev0=$(awk '$1 == "max" { print $2 }' "$cg/memory.events")
: > "$T/touch"
wait_touch 15; finished=$?
alive=0; kill -0 "$WL_PID" 2>/dev/null && alive=1
ev1=$(awk '$1 == "max" { print $2 }' "$cg/memory.events")
state=$(awk '{ print $3 }' "/proc/$WL_PID/stat" 2>/dev/null)
log "15 s under memory.max: alive=$alive finished=$((!finished)) state=$state memory.events max $ev0 -> $ev1, pages $(kernel_nodes "$WL_PID" 2>/dev/null)"
dmesg 2>/dev/null | grep -m 3 'VM_FAULT_OOM' | logf
echo max > "$cg/memory.max"
if [ "$alive" = 0 ]; then
    wait "$WL_PID" 2>/dev/null; rc=$?
    fail "the process died under memory.max (exit status $rc; 135 is SIGBUS): the refused charge was not retried"
else
    expect "the process finished touching under memory.max: no charge was refused" test "$finished" != 0
    expect "memory.events' max did not grow ($ev0 -> $ev1): no charge met the limit" test "$ev1" -gt "$ev0"
    wait_touch 30
    expect "the rest was not touched once memory.max was lifted" test -f "$T/touch.done"
    expect "pages at '$(kernel_nodes "$WL_PID")', expected N$hn=8" test "$(kernel_nodes "$WL_PID")" = "N$hn=8"
    audit_load -c "$T/ng.conf"
    expect_no_finding HUGEPAGE_SIGBUS_RISK mc
fi
result stall
