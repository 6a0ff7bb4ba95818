#!/usr/bin/env bash
# REMOTE_MEMORY through configured instances matched by cgroup: a cpuset with
# CPUs on one node and memory on another is critical; a cpuset with CPUs and
# memory on the same node (a deliberate local binding) raises nothing.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 2
need_ctl
cn=$CPUSET_CPU_NODE mn=$CPUSET_MEM_NODE ln=$HUGE_NODE
case $CGROUP in
v2) base=/sys/fs/cgroup
    echo "+cpuset +memory" > $base/cgroup.subtree_control || abort "cannot enable cpuset"
    procs=cgroup.procs ;;
v1) base=/sys/fs/cgroup/cpuset; procs=tasks ;;
*)  skip_case "topology has no cgroup" ;;
esac
mk() {  # mk NAME CPUS MEMS
    mkdir "$base/$1" || abort "mkdir $base/$1"
    at_exit "rmdir $base/$1"
    echo "$2" > "$base/$1/cpuset.cpus" && echo "$3" > "$base/$1/cpuset.mems" || abort "cpuset $1"
}
mk e2e-remote "$(node_cpus "$cn")" "$mn"
mk e2e-local "$(node_cpus "$ln")" "$ln"
wl_start sh -c 'echo $$ > "$0" && exec "$@"' "$base/e2e-remote/$procs" -- sysv -s 16 -p 1 || abort "workload"
wl_start sh -c 'echo $$ > "$0" && exec "$@"' "$base/e2e-local/$procs" -- sysv -s 16 -p 1 || abort "workload"
audit_conf "$T/ng.conf" "$(printf '[instance remote]\ncgroup = /e2e-remote\n[instance local]\ncgroup = /e2e-local\n')"
audit_load --config "$T/ng.conf" || abort "audit"
expect_finding REMOTE_MEMORY remote critical "$mn"
expect "audit exit status $AUDIT_RC, expected 2" test "$AUDIT_RC" = 2
grep -q "^remote|configured|[1-9]" <<< "$AUDIT_INSTANCES" || fail "instance remote has no processes: $AUDIT_INSTANCES"
result remote
expect_no_finding REMOTE_MEMORY local
expect_no_finding CYCLOPS local
grep -q "^local|configured|[1-9][0-9]*|16777216|$ln:16777216\$" <<< "$AUDIT_INSTANCES" ||
    fail "instance local is not 16 MiB on node $ln: $(grep '^local|' <<< "$AUDIT_INSTANCES")"
result local
