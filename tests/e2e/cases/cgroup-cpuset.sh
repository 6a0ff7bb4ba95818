#!/usr/bin/env bash
# Remote binding through a cgroup cpuset (v2 or v1, as the topology mounts
# it): CPUs on one node, memory on another. A workload started inside must
# land on the memory node, whatever CPU it runs on.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 2
need_ctl
cn=$CPUSET_CPU_NODE mn=$CPUSET_MEM_NODE
cpus=$(node_cpus "$cn")
case $CGROUP in
v2) base=/sys/fs/cgroup
    [ -f $base/cgroup.controllers ] || abort "no cgroup2 at $base"
    echo "+cpuset +memory" > $base/cgroup.subtree_control || abort "cannot enable cpuset"
    cg=$base/e2e-db ;;
v1) base=/sys/fs/cgroup/cpuset
    [ -f $base/cpuset.mems ] || abort "no cgroup v1 cpuset at $base"
    cg=$base/e2e-db ;;
*)  abort "topology has no cgroup" ;;
esac
mkdir "$cg" || abort "mkdir $cg"
at_exit "rmdir $cg"
echo "$cpus" > "$cg/cpuset.cpus" || abort "cpuset.cpus"
echo "$mn" > "$cg/cpuset.mems" || abort "cpuset.mems"
log "cgroup $CGROUP $cg: cpus=$(cat "$cg/cpuset.cpus") (node $cn) mems=$(cat "$cg/cpuset.mems")"
wl_start sh -c 'echo $$ > "$0" && exec "$@"' "$cg/cgroup.procs" -- sysv -s 32 -p 2 || abort "workload"
mems=""
while read -r k v; do
    [[ $k == Cpus_allowed_list: || $k == Mems_allowed_list: ]] && log "workload $k $v"
    [ "$k" = Mems_allowed_list: ] && mems=$v
done < "/proc/$WL_PID/status"
logf "/proc/$WL_PID/cgroup"
# the set-up itself (not numaguard): the guest must really have bound it
[ "$mems" = "$mn" ] || abort "set-up: workload not confined to mems $mn (Mems_allowed_list $mems)"
numa_maps_diag "$WL_PID" SYSV
seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)" || abort "segment not found"
expect_field bytes "$WL_BYTES"
expect_on_node "$mn" "$WL_BYTES"
result
roundtrip "$E2E_TOPO-cgroup$CGROUP-remote" "32 MiB SysV touched inside cgroup $CGROUP cpuset cpus=$cpus (node $cn) mems=$mn"
