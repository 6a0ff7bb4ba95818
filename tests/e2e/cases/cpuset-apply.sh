#!/usr/bin/env bash
# numaguardctl cpuset apply: a cpuset (v2, or v1 as the topology mounts it)
# with CPUs on one node and memory on another, a 16 MiB SysV workload inside,
# configured as an instance with policy local. --dry-run shows the widening
# and narrowing writes and changes nothing; apply sets cpuset.mems to the
# CPUs' node and the memory follows (v2: the kernel migrates on the write;
# v1: with cpuset.memory_migrate=1, set here first); a second apply is a
# no-op.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan $([ "$CGROUP" = v1 ] && echo 5 || echo 4)   # v1 adds memory-migrate-0
need_ctl
cn=$CPUSET_CPU_NODE mn=$CPUSET_MEM_NODE
cpus=$(node_cpus "$cn")
case $CGROUP in
v2) base=/sys/fs/cgroup
    [ -f $base/cgroup.controllers ] || abort "no cgroup2 at $base"
    echo "+cpuset +memory" > $base/cgroup.subtree_control || abort "cannot enable cpuset"
    procs=cgroup.procs ;;
v1) base=/sys/fs/cgroup/cpuset
    [ -f $base/cpuset.mems ] || abort "no cgroup v1 cpuset at $base"
    procs=tasks ;;
*)  skip_case "topology has no cgroup" ;;
esac
cg=$base/e2e-cs
mkdir "$cg" || abort "mkdir $cg"
at_exit "rmdir $cg"
echo "$cpus" > "$cg/cpuset.cpus" && echo "$mn" > "$cg/cpuset.mems" || abort "cpuset $cg"
[ "$CGROUP" = v1 ] && { echo 1 > "$cg/cpuset.memory_migrate" || abort "cpuset.memory_migrate"; }
log "cgroup $CGROUP $cg: cpus=$(cat "$cg/cpuset.cpus") (node $cn) mems=$(cat "$cg/cpuset.mems")"
wl_start sh -c 'echo $$ > "$0" && exec "$@"' "$cg/$procs" -- sysv -s 16 -p 1 || abort "workload"
seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)" || abort "segment not found"
expect_on_node "$mn" "$WL_BYTES"
((FAILS == 0)) || abort "set-up: the workload is not on node $mn before the correction"

audit_conf "$T/ng.conf" "$(printf '[instance cs]\ncgroup = /e2e-cs\npolicy = local\n')"
export NUMAGUARD_ACTION_LOG=$T/actions.log
union=$( ((cn < mn)) && echo "$cn" "$mn" || echo "$mn" "$cn")
union=${union/ /,}
((mn - cn == 1 || cn - mn == 1)) && union=${union/,/-}

# --dry-run: the writes it would do, in order, and nothing changed
"$CTL" -c "$T/ng.conf" cpuset apply cs --dry-run > "$T/dry.out" 2>&1; rc=$?
logf "$T/dry.out"
expect "dry run exited $rc" test "$rc" = 0
lines=()                 # (no process substitution: the guest has no /dev/fd)
while IFS= read -r l; do [[ $l == "would write "* ]] && lines+=("$l"); done < "$T/dry.out"
expect "dry run: first write is not '$union' to cpuset.mems: ${lines[0]-}" \
    test "${lines[0]-}" = "would write $union to $cg/cpuset.mems (now: $mn)"
expect "dry run: second write is not '$cn' to cpuset.mems: ${lines[1]-}" \
    test "${lines[1]-}" = "would write $cn to $cg/cpuset.mems (now: $mn)"
expect "dry run: ${#lines[@]} writes, expected 2" test "${#lines[@]}" = 2
expect "dry run changed cpuset.mems to $(cat "$cg/cpuset.mems")" test "$(cat "$cg/cpuset.mems")" = "$mn"
expect "a dry run was logged" test ! -s "$T/actions.log"
result dry-run

# apply: cpuset.mems becomes the CPUs' node, the segment follows
"$CTL" -c "$T/ng.conf" cpuset apply cs > "$T/apply.out" 2>&1; rc=$?
logf "$T/apply.out"
expect "apply exited $rc" test "$rc" = 0
expect "apply outcome is not done" grep -q "^cpuset cs: done: " "$T/apply.out"
expect "cpuset.mems is $(cat "$cg/cpuset.mems"), expected $cn" test "$(cat "$cg/cpuset.mems")" = "$cn"
expect "cpuset.cpus changed to $(cat "$cg/cpuset.cpus")" test "$(cat "$cg/cpuset.cpus")" = "$cpus"
# cgroup v2 moves the pages on the write since Linux 5.15; before, they
# stay where they are, and the summary says so
moved=$cn
if [ "$CGROUP" = v2 ] && kernel_at_least 5 15; then
    expect "summary does not say the kernel migrates" grep -q "kernel migrates the tasks' memory" "$T/apply.out"
elif [ "$CGROUP" = v2 ]; then
    expect "summary does not say that this kernel moves no page" \
        grep -q "cgroup v2 before Linux 5.15 moves no page on a cpuset.mems write: pages already allocated stay" "$T/apply.out"
    moved=$mn
else
    expect "summary does not report memory_migrate=1" grep -q "memory_migrate=1" "$T/apply.out"
fi
expect "no NOTICE entry with the cpuset MESSAGE_ID" \
    grep -q '"MESSAGE_ID":"1db6e8201fed4d01a1af1cbfb367160e".*"NUMAGUARD_TARGET":"cs","NUMAGUARD_OUTCOME":"done"' "$T/actions.log"
numa_maps_diag "$WL_PID" SYSV
if seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)"; then
    expect_on_node "$moved" "$WL_BYTES"
fi
result apply

# once more: nothing to do
"$CTL" -c "$T/ng.conf" cpuset apply cs > "$T/again.out" 2>&1; rc=$?
expect "second apply exited $rc" test "$rc" = 0
expect "second apply is not a no-op: $(tail -1 "$T/again.out")" grep -q "^cpuset cs: noop: " "$T/again.out"
expect "second apply wrote" test -z "$(grep '^wrote' "$T/again.out")"
result noop

# a node that is not there: refused (exit 2), nothing written
audit_conf "$T/bad.conf" "$(printf '[instance cs]\ncgroup = /e2e-cs\npolicy = bind\nnodes = 63\n')"
"$CTL" -c "$T/bad.conf" cpuset apply cs > "$T/bad.out" 2>&1; rc=$?
logf "$T/bad.out"
expect "refused apply exited $rc, expected 2" test "$rc" = 2
expect "no refusal naming node 63" grep -q "^cpuset cs: refused: node(s) 63 have no memory" "$T/bad.out"
expect "cpuset.mems changed by a refused apply" test "$(cat "$cg/cpuset.mems")" = "$cn"
result refused

# v1 with cpuset.memory_migrate=0: the mems change, the pages stay
if [ "$CGROUP" = v1 ]; then
    echo 0 > "$cg/cpuset.memory_migrate" || abort "cpuset.memory_migrate=0"
    audit_conf "$T/il.conf" "$(printf '[instance cs]\ncgroup = /e2e-cs\npolicy = interleave\nnodes = %s\n' "$mn")"
    "$CTL" -c "$T/il.conf" cpuset apply cs > "$T/il.out" 2>&1; rc=$?
    logf "$T/il.out"
    expect "apply exited $rc" test "$rc" = 0
    expect "summary does not say pages stay" grep -q "memory_migrate=0: pages already allocated stay" "$T/il.out"
    expect "cpuset.mems is $(cat "$cg/cpuset.mems"), expected $mn" test "$(cat "$cg/cpuset.mems")" = "$mn"
    if seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)"; then
        expect_on_node "$cn" "$WL_BYTES"
    fi
    result memory-migrate-0
fi
