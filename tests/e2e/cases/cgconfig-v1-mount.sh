#!/usr/bin/env bash
# A cgconfig owner on a kernel without a v1 cpuset controller (Debian 13's
# 6.12: CONFIG_CPUSETS_V1 off). /etc/cgconfig.conf declares the group of a
# cgroup v2 cpuset that holds a workload, and mounts a v1 cpuset hierarchy
# ("mount { cpuset = ...; }", as configurations written for cgroup v1 do).
# The oracle is libcgroup's own cgconfigparser: with the mount section it
# fails on this kernel and makes no group; without it (libcgroup 2 and
# later use the v2 hierarchy) it works. numaguard: with the mount section,
# cpuset apply is refused (exit 2, nothing written, the probe's answer
# quoted) and the audit raises CPUSET_NOT_PERSISTENT for the group; without
# it, the dry run goes through the group's file line. Not applicable where
# the kernel has a v1 cpuset controller.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 2
need_ctl
[ "$CGROUP" = v2 ] || skip_case "the group is a cgroup v2 one here (topology $CGROUP)"
command -v cgconfigparser > /dev/null || abort "cgconfigparser not installed (cgroup-tools, tests/install-deps)"
ctl_json "$T/topo.json" topology || abort "topology"
v1=$(jq -r '.kernel_features.cgroup_v1_cpuset | "\(.state)|\(.detail)"' "$T/topo.json")
log "kernel feature cgroup_v1_cpuset: $v1"
[ "${v1%%|*}" = absent ] || not_applicable "the kernel has a v1 cpuset controller (kernel feature cgroup_v1_cpuset ${v1%%|*}: ${v1#*|})"
cn=$CPUSET_CPU_NODE mn=$CPUSET_MEM_NODE
cpus=$(node_cpus "$cn")
base=/sys/fs/cgroup grp=e2e-cgv1 cg=/sys/fs/cgroup/e2e-cgv1 conf=/etc/cgconfig.conf
echo "+cpuset" > $base/cgroup.subtree_control || abort "cannot enable cpuset"
[ -e $conf ] && { cp $conf "$T/cgconfig.orig"; at_exit "cp $T/cgconfig.orig $conf"; } || at_exit "rm -f $conf"
group="group $grp {
	cpuset {
		cpuset.cpus = \"$cpus\";
		cpuset.mems = \"$mn\";
	}
}"
mnt=/run/e2e-cgv1/cpuset
mkdir -p $mnt && at_exit "rm -rf /run/e2e-cgv1"
printf 'mount {\n\tcpuset = %s;\n}\n%s\n' "$mnt" "$group" > $conf
# the oracle: libcgroup cannot load this file on this kernel
if cgconfigparser -l $conf > "$T/parser.out" 2>&1; then
    fail "cgconfigparser loaded a v1 cpuset mount on a kernel without v1 cpuset"
else
    log "cgconfigparser with the v1 mount: exit $?: $(head -c 300 "$T/parser.out")"
fi
[ -d "$cg" ] && fail "cgconfigparser made $cg from a file it could not load"
# the group as a person made it by hand, a workload inside
mkdir "$cg" || abort "mkdir $cg"
at_exit "rmdir $cg"
echo "$cpus" > "$cg/cpuset.cpus" && echo "$mn" > "$cg/cpuset.mems" || abort "cpuset $cg"
wl_start sh -c 'echo $$ > "$0" && exec "$@"' "$cg/cgroup.procs" -- sysv -s 16 -p 1 || abort "workload"
audit_conf "$T/ng.conf" "$(printf '[instance cgv]\ncgroup = /%s\npolicy = local\n' "$grp")"
cp $conf "$T/conf.before"
"$CTL" -c "$T/ng.conf" cpuset apply cgv > "$T/apply.out" 2>&1; rc=$?
logf "$T/apply.out"
expect "apply exited $rc, expected 2 (refused)" test "$rc" = 2
expect "the refusal does not say why" grep -q "cgconfig group $grp cannot work on this kernel: $conf mounts a v1 cpuset hierarchy" "$T/apply.out"
expect "the refusal does not quote the probe" grep -q "Unknown subsys name 'cpuset'" "$T/apply.out"
expect "a refused apply changed $conf" cmp -s "$T/conf.before" $conf
expect "a refused apply changed cpuset.mems to $(cat "$cg/cpuset.mems")" test "$(cat "$cg/cpuset.mems")" = "$mn"
audit_load --config "$T/ng.conf" || abort "audit"
expect_finding CPUSET_NOT_PERSISTENT cgv warning "$mn"
result v1-mount-refused

# without the mount section: libcgroup loads it on the v2 hierarchy, and
# the group is an owner numaguard writes through
printf '%s\n' "$group" > $conf
cgconfigparser -l $conf > "$T/parser2.out" 2>&1 || { fail "cgconfigparser without the v1 mount failed"; logf "$T/parser2.out"; }
"$CTL" -c "$T/ng.conf" cpuset apply cgv --dry-run > "$T/dry.out" 2>&1; rc=$?
logf "$T/dry.out"
expect "dry run exited $rc, expected 0" test "$rc" = 0
expect "dry run does not go through the group's file" grep -q "would change $conf:" "$T/dry.out"
result v2-group-works
