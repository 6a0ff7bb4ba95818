#!/usr/bin/env bash
# numaguardctl cpuset apply on this live host: a real cpuset cgroup (v1
# /sys/fs/cgroup/cpuset, or v2 with the cpuset controller) holding a sleeping
# process, configured as an instance. --dry-run changes nothing; apply sets
# cpuset.mems to the nodes of its CPUs and reads it back; with one memory
# node there is nothing to move (noop), and a bind to a node that does not
# exist or an instance in the root cgroup is refused. Needs root.
set -u
echo 1..11
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
CTL=$B/numaguardctl
T=$(mktemp -d /tmp/ng-cpuset-live.XXXXXX)
CG="" cpuset_on="" pids=()
cleanup() {
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        [ -n "$CG" ] && [ -d "$CG" ] && rmdir "$CG"
        [ -n "$cpuset_on" ] && echo -cpuset > /sys/fs/cgroup/cgroup.subtree_control
        rm -rf "$T"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
        echo "skip cpuset-live: needs root"; exit 77
fi
[ -x "$CTL" ] || { echo "not ok cpuset-live: $CTL not built"; exit 1; }
if [ -f /sys/fs/cgroup/cpuset/cpuset.mems ]; then
        base=/sys/fs/cgroup/cpuset procs=tasks ver=1
elif grep -qw cpuset /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
        base=/sys/fs/cgroup procs=cgroup.procs ver=2
        # the controller turned on for the root's children while the test
        # runs, when it was not (cleanup turns it off again)
        if ! grep -qw cpuset /sys/fs/cgroup/cgroup.subtree_control; then
                echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control ||
                        { echo "not ok cpuset-live: cannot enable +cpuset in /sys/fs/cgroup"; exit 1; }
                cpuset_on=1
        fi
else
        echo "skip cpuset-live: no cpuset cgroup hierarchy (v1 cpuset or v2 with +cpuset) here"; exit 77
fi

name=ng-test-$$
CG=$base/$name
mkdir "$CG" || { echo "not ok cpuset-live: mkdir $CG"; exit 1; }
# CPUs of the first node with CPUs; memory on the last node with memory
# (the same node on a one-node host: then there is nothing to correct).
cpu_node=$(for n in /sys/devices/system/node/node[0-9]*; do [ -s "$n/cpulist" ] && [ -n "$(cat "$n/cpulist")" ] && { echo "${n##*node}"; break; }; done)
cpu_node=${cpu_node:-0}
cpus=$(cat /sys/devices/system/node/node$cpu_node/cpulist 2>/dev/null || cat "$base/cpuset.cpus")
mem_nodes=$(cat /sys/devices/system/node/has_memory 2>/dev/null || echo 0)
mem_node=${mem_nodes##*[,-]}
echo "$cpus" > "$CG/cpuset.cpus" && echo "$mem_node" > "$CG/cpuset.mems" ||
        { echo "not ok cpuset-live: cannot set up $CG"; exit 1; }
sh -c 'echo $$ > "$1" && exec sleep 300' sh "$CG/$procs" &
pids+=($!)
sleep 0.2
grep -q "$name" /proc/${pids[0]}/cgroup || { echo "not ok cpuset-live: sleep not in $CG"; exit 1; }
echo "# cgroup v$ver $CG: cpus=$(cat "$CG/cpuset.cpus") (node $cpu_node) mems=$(cat "$CG/cpuset.mems"), memory nodes $mem_nodes"

printf '[instance live]\ncgroup = /%s\npolicy = local\n' "$name" > "$T/local.conf"
export NUMAGUARD_ACTION_LOG=$T/actions.log
ok() { echo "ok cpuset-live-$1"; }
nok() { echo "not ok cpuset-live-$1: $2"; sed 's/^/#   /' "$T/out" 2>/dev/null | head -20; }

before=$(cat "$CG/cpuset.mems")
"$CTL" -c "$T/local.conf" cpuset apply live --dry-run > "$T/out" 2>&1; rc=$?
after=$(cat "$CG/cpuset.mems")
if [ "$mem_node" = "$cpu_node" ]; then want=noop; else want=dry-run; fi
if [ $rc = 0 ] && [ "$before" = "$after" ] && grep -q "^cpuset live: $want: " "$T/out" &&
   { [ $want = noop ] || grep -q "^would write $cpu_node to $CG/cpuset.mems" "$T/out"; }; then
        ok dry-run
else
        nok dry-run "exit $rc, cpuset.mems '$before' -> '$after', want outcome $want"
fi
# a dry run is never logged, whether it would write (dry-run) or not (noop)
[ -s "$T/actions.log" ] && nok dry-run-not-logged "a dry run was logged: $(cat "$T/actions.log")" || ok dry-run-not-logged
rm -f "$T/actions.log"

"$CTL" -c "$T/local.conf" cpuset apply live > "$T/out" 2>&1; rc=$?
got=$(cat "$CG/cpuset.mems")
if [ $want = noop ]; then want=noop; else want=done; fi
if [ $rc = 0 ] && [ "$got" = "$cpu_node" ] && grep -q "^cpuset live: $want: " "$T/out"; then
        ok apply
else
        nok apply "exit $rc, cpuset.mems now '$got' (want $cpu_node), want outcome $want"
fi
[ "$(cat "$CG/cpuset.cpus")" = "$cpus" ] && ok cpus-kept || nok cpus-kept "cpuset.cpus changed to $(cat "$CG/cpuset.cpus")"
if grep -q "\"MESSAGE_ID\":\"1db6e8201fed4d01a1af1cbfb367160e\".*\"NUMAGUARD_TARGET\":\"live\",\"NUMAGUARD_OUTCOME\":\"$want\"" \
        "$T/actions.log" 2>/dev/null; then
        ok notice-log
else
        nok notice-log "no NOTICE entry for the apply in $T/actions.log: $(cat "$T/actions.log" 2>/dev/null)"
fi
grep -q "^Mems_allowed_list:[[:space:]]*$cpu_node\$" /proc/${pids[0]}/status &&
        ok task-mems || nok task-mems "$(grep Mems_allowed_list /proc/${pids[0]}/status)"

# bind to a node that is not there: refused (exit 2), nothing written
printf '[instance live]\ncgroup = /%s\npolicy = bind\nnodes = 1000\n' "$name" > "$T/bind.conf"
"$CTL" -c "$T/bind.conf" cpuset apply live > "$T/out" 2>&1; rc=$?
if [ $rc = 2 ] && grep -q "^cpuset live: refused: node(s) 1000 have no memory" "$T/out" &&
   [ "$(cat "$CG/cpuset.mems")" = "$cpu_node" ] && ! grep -q '^wrote' "$T/out"; then
        ok refuse-bad-node
else
        nok refuse-bad-node "exit $rc"
fi

# an instance in the root cpuset cgroup: never rewritten
sleep 301 & pids+=($!)
echo $! > "$base/$procs"
printf '[instance rooted]\nmatch_cmdline = sleep 301\n' > "$T/root.conf"
root_mems=$(cat "$base/cpuset.mems" 2>/dev/null || cat "$base/cpuset.mems.effective")
"$CTL" -c "$T/root.conf" cpuset apply rooted > "$T/out" 2>&1; rc=$?
if [ $rc = 2 ] && grep -q "root cpuset is never rewritten" "$T/out"; then
        ok refuse-root
else
        nok refuse-root "exit $rc"
fi
if [ "$(cat "$base/cpuset.mems" 2>/dev/null || cat "$base/cpuset.mems.effective")" = "$root_mems" ]; then
        ok root-untouched
else
        nok root-untouched "root cpuset.mems changed"
fi

# Real kernel writes with widen-then-narrow even on a one-node host: a root
# made of the 4-node guest4-v2 sysfs (CPU i on node i) with this host's /proc
# and cpuset hierarchy (v1 or v2, whichever the host has) bind-mounted in
# (private mount namespace). bind to node 0 moves the CPUs from 1 to 0:
# writes 0-1 then 0, read back by the kernel, and the sleeping task follows.
if [ "$(nproc)" -ge 2 ] && command -v unshare >/dev/null; then
        R=$T/root
        mkdir -p "$R/proc" && cp -a tests/fixtures/trees/guest4-v2/sys "$R/" && rm -rf "$R/sys/fs/cgroup" &&
                mkdir -p "$R$base"
        echo 1 > "$CG/cpuset.cpus"
        printf '[instance live]\ncgroup = /%s\npolicy = bind\nnodes = 0\n' "$name" > "$T/bind0.conf"
        unshare -m sh -c 'mount --make-rprivate / && mount --bind /proc "$1/proc" && mount --bind "$2" "$1$2" &&
                "$3" --root "$1" -c "$4" cpuset apply live' sh "$R" "$base" "$CTL" "$T/bind0.conf" > "$T/out" 2>&1; rc=$?
        if [ $rc = 0 ] && grep -q "^wrote 0-1 to $R$CG/cpuset.cpus (was: 1, read back: 0-1)" "$T/out" &&
           grep -q "^wrote 0 to $R$CG/cpuset.cpus (was: 0-1, read back: 0)" "$T/out" &&
           [ "$(cat "$CG/cpuset.cpus")" = 0 ] && grep -q "^Cpus_allowed_list:[[:space:]]*0\$" /proc/${pids[0]}/status; then
                ok kernel-writes
        else
                nok kernel-writes "exit $rc, cpuset.cpus now $(cat "$CG/cpuset.cpus")"
        fi
else
        echo "skip cpuset-live-kernel-writes: needs 2 CPUs and unshare"
fi

"$CTL" -c "$T/local.conf" cpuset apply nosuch > "$T/out" 2>&1; rc=$?
if [ $rc = 3 ] && grep -q "known instances: live" "$T/out"; then ok unknown-instance; else nok unknown-instance "exit $rc"; fi
exit 0
