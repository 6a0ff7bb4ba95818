#!/usr/bin/env bash
# A cgconfig group with a remote binding (CPUs of CPUSET_CPU_NODE, memory on
# CPUSET_MEM_NODE), made by libcgroup's own cgconfigparser (Debian's
# cgroup-tools) from /etc/cgconfig.conf, a 16 MiB SysV workload inside:
# the audit names the owner (cgconfig, the group); `cpuset apply --dry-run`
# shows the file line and changes nothing; the apply edits only that value
# in the file (comments kept) and moves the cpuset and the memory; then the
# owner re-applies its configuration (the group removed, cgconfigparser run
# again, as the cgconfig service does at boot) and the group comes back with
# the corrected values. The guest's / is a tmpfs overlay: /etc/cgconfig.conf
# is the guest's own.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 4
need_ctl
[ "$CGROUP" = v2 ] || skip_case "cgconfig on cgroup v2 only here (topology $CGROUP)"
command -v cgconfigparser > /dev/null || abort "cgconfigparser not installed (cgroup-tools, tests/install-deps)"
cn=$CPUSET_CPU_NODE mn=$CPUSET_MEM_NODE
cpus=$(node_cpus "$cn")
base=/sys/fs/cgroup grp=e2e-cgc cg=/sys/fs/cgroup/e2e-cgc conf=/etc/cgconfig.conf
echo "+cpuset +memory" > $base/cgroup.subtree_control || abort "cannot enable cpuset"
[ -e $conf ] && { cp $conf "$T/cgconfig.orig"; at_exit "cp $T/cgconfig.orig $conf"; } || at_exit "rm -f $conf"
# (cgconfigparser takes comments in the first column only)
cat > $conf <<EOF
# Oracle processor_group_name $grp: the CPUs of node $cn.
group $grp {
	cpuset {
# kept by the DBA team
		cpuset.cpus = "$cpus";
		cpuset.mems = "$mn";
	}
}
EOF
cp $conf "$T/cgconfig.before"
at_exit "rmdir $cg"
cgconfigparser -l $conf > "$T/parser.out" 2>&1 || { logf "$T/parser.out"; abort "cgconfigparser -l $conf failed"; }
before=$(cat "$cg/cpuset.mems" 2>/dev/null)
log "cpuset before the fix (made by cgconfigparser): cpus=$(cat "$cg/cpuset.cpus") mems=$before"
expect "cgconfigparser made cpuset.mems '$before', expected $mn" test "$before" = "$mn"
wl_start sh -c 'echo $$ > "$0" && exec "$@"' "$cg/cgroup.procs" -- sysv -s 16 -p 1 || abort "workload"
seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)" || abort "segment not found"
expect_on_node "$mn" "$WL_BYTES"
audit_conf "$T/ng.conf" "$(printf '[instance cgc]\ncgroup = /%s\npolicy = local\n' "$grp")"
"$CTL" -c "$T/ng.conf" audit --json > "$T/audit.json" 2> "$T/audit.err"
rc=$?; ((rc <= 2)) || { fail "audit --json exited $rc"; logf "$T/audit.err"; }     # 0-2: by findings
owner=$(jq -r '.instances[] | select(.name == "cgc") | "\(.cpuset_owner) \(.cpuset_owner_name)"' "$T/audit.json")
expect "cpuset_owner is '$owner', expected 'cgconfig $grp'" test "$owner" = "cgconfig $grp"
result owner

export NUMAGUARD_ACTION_LOG=$T/actions.jsonl
actions_mark
"$CTL" -c "$T/ng.conf" cpuset apply cgc --dry-run > "$T/dry.out" 2>&1; rc=$?
expect_no_action "cpuset apply --dry-run"
logf "$T/dry.out"
expect "dry run exited $rc" test "$rc" = 0
expect "dry run does not name line 6 of $conf" grep -qx "would change $conf:6" "$T/dry.out"
expect "dry run changed $conf" cmp -s "$T/cgconfig.before" $conf
expect "dry run changed cpuset.mems to $(cat "$cg/cpuset.mems")" test "$(cat "$cg/cpuset.mems")" = "$mn"
result dry-run

"$CTL" -c "$T/ng.conf" cpuset apply cgc > "$T/apply.out" 2>&1; rc=$?
logf "$T/apply.out"
expect "apply exited $rc" test "$rc" = 0
expect "apply is not done through the group" grep -q "^cpuset cgc: done: wrote cgconfig group $grp in $conf" "$T/apply.out"
diff "$T/cgconfig.before" $conf > "$T/diff"
printf '6c6\n< \t\tcpuset.mems = "%s";\n---\n> \t\tcpuset.mems = "%s";\n' "$mn" "$cn" > "$T/diff.want"
expect "the file changed otherwise than the one value: $(cat "$T/diff")" cmp -s "$T/diff" "$T/diff.want"
after=$(cat "$cg/cpuset.mems")
log "cpuset after the fix: cpus=$(cat "$cg/cpuset.cpus") mems=$after"
expect "cpuset.mems is $after, expected $cn" test "$after" = "$cn"
if seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)"; then
    expect_on_node "$cn" "$WL_BYTES"
fi
result apply

# the owner re-applies its configuration: the group gone and made again
kill -TERM $WL_PIDS_SP 2>/dev/null
for p in "${WL_PIDS[@]}"; do wait "$p" 2>/dev/null; done
WL_PIDS=()
rmdir "$cg" || abort "rmdir $cg (tasks left: $(cat "$cg/cgroup.procs" | tr '\n' ' '))"
cgconfigparser -l $conf > "$T/parser2.out" 2>&1 || { logf "$T/parser2.out"; abort "cgconfigparser again failed"; }
again=$(cat "$cg/cpuset.mems" 2>/dev/null)
log "cpuset after cgconfigparser re-created the group: cpus=$(cat "$cg/cpuset.cpus") mems=$again"
expect "cgconfigparser re-created cpuset.mems '$again', expected the corrected $cn" test "$again" = "$cn"
expect "cgconfigparser re-created cpuset.cpus '$(cat "$cg/cpuset.cpus")', expected $cpus" test "$(cat "$cg/cpuset.cpus")" = "$cpus"
result owner-reapplies
