#!/usr/bin/env bash
# REMOTE_MEMORY through configured instances matched by cgroup: a cpuset with
# CPUs on one node and memory on another is critical; a cpuset with CPUs and
# memory on the same node (a deliberate local binding) raises nothing. A
# configured instance that is down raises INSTANCE_NOT_FOUND; the same audit
# run as nobody, who may not read root's workloads (the kernel refuses
# their numa_maps), raises AUDIT_INCOMPLETE naming uid 0.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 4
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
audit_conf "$T/ng.conf" "$(printf '[instance remote]\ncgroup = /e2e-remote\n[instance local]\ncgroup = /e2e-local\n[instance down]\nmatch_comm = e2e-no-such-db\n')"
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
expect_finding INSTANCE_NOT_FOUND down warning
grep -q '^down|' <<< "$AUDIT_INSTANCES" || fail "instance down is not listed: $AUDIT_INSTANCES"
result instance-not-found

# as nobody: the kernel refuses the workload's numa_maps, the audit says so
pub=$(mktemp -d) && chmod 755 "$pub" && at_exit "rm -rf $pub" && cp "$T/ng.conf" "$pub/" && chmod 644 "$pub/ng.conf"
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
"${nobody[@]}" cat "/proc/$WL_PID/numa_maps" > /dev/null 2>&1 && fail "set-up: nobody can read /proc/$WL_PID/numa_maps"
AUDIT_AS=("${nobody[@]}")
audit_load --config "$pub/ng.conf"
AUDIT_AS=()
expect_finding AUDIT_INCOMPLETE "" warning
jq -e '[.findings[] | select(.code == "AUDIT_INCOMPLETE") | .message | test("of uid 0\\b.*permission denied.*: numaguard runs as uid 65534, not root")] | any' "$T/audit.json" > /dev/null ||
    fail "no AUDIT_INCOMPLETE naming uid 0: $(jq -c '[.findings[] | select(.code == "AUDIT_INCOMPLETE")]' "$T/audit.json")"
result incomplete-non-root
