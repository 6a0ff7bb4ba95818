#!/usr/bin/env bash
# Corrections that last, with systemd as PID 1 (topology `systemd`):
#
# - a unit (e2e-ora.service, a 16 MiB SysV workload) declared with its CPUs
#   on CPUSET_CPU_NODE and AllowedMemoryNodes=CPUSET_MEM_NODE: first the
#   problem, a direct write of cpuset.mems that `systemctl daemon-reload`
#   undoes; then `numaguardctl cpuset apply` through the unit (the audit
#   names the owner from the manager; --dry-run names the property;
#   SetUnitProperties over the manager's bus), and the corrected memory node
#   stays through `systemctl daemon-reload` and a restart of the unit, with
#   the workload's memory on it;
# - a hugepage pool recorded with `hugepages reserve --persist`: what boot
#   does with numaguard's tmpfiles.d file (systemd-tmpfiles --create, as
#   systemd-tmpfiles-setup.service runs it) brings a pool that was lost back,
#   and the audit flags the pool while it differs (HUGEPAGE_NOT_PERSISTENT);
# - the audit under numaguard.service's capability bounding set reads the
#   unit's root workload in full, and without CAP_SYS_PTRACE raises
#   AUDIT_INCOMPLETE naming it.
#   The real reboot is case hugepages-reboot's (topology systemd-reboot).
#
# The cpusets before the fix, after it and after the owner re-applied its
# configuration go to $BUILD/e2e/unit-owner-record.txt.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 7
need_ctl
[ "$(cat /proc/1/comm)" = systemd ] || abort "PID 1 is $(cat /proc/1/comm), not systemd (numa-vm --systemd)"
RECORD=$REC_DIR/unit-owner-record.txt
mkdir -p "$REC_DIR" && : > "$RECORD"
until_ok() { local t=$(($1 * 4)); shift; while ((t-- > 0)); do "$@" && return 0; sleep 0.25; done; return 1; }
cn=$CPUSET_CPU_NODE mn=$CPUSET_MEM_NODE
cpus=$(node_cpus "$cn")
unit=e2e-ora.service cg=/sys/fs/cgroup/system.slice/e2e-ora.service
ready=/run/e2e-ora.ready
mems() { cat "$cg/cpuset.mems" 2>/dev/null; }
say() { log "$*"; echo "$*" >> "$RECORD"; }
at_exit "systemctl stop $unit; rm -rf /etc/systemd/system/$unit /etc/systemd/system.control/$unit.d; systemctl daemon-reload"
cat > /etc/systemd/system/$unit <<EOF
[Unit]
Description=numaguard e2e: an Oracle-like instance with a remote binding

[Service]
ExecStartPre=/bin/rm -f $ready
ExecStart=$WL sysv -s 16 -p 1 -r $ready
AllowedCPUs=$cpus
AllowedMemoryNodes=$mn
EOF
start_unit() {      # start_unit: (re)start the unit and wait for the workload's report
    systemctl "$1" $unit || return 1
    until_ok 120 test -s $ready || return 1
    local line; line=$(cat $ready)
    [[ $line =~ \ shmid=(-?[0-9]+) ]] && WL_SHMID=${BASH_REMATCH[1]}
    [[ $line =~ \ bytes=([0-9]+) ]] && WL_BYTES=${BASH_REMATCH[1]}
    [[ $line =~ ^pid=([0-9]+) ]] && WL_PID=${BASH_REMATCH[1]}
    log "unit workload: $line"
}
systemctl daemon-reload
start_unit start || { journalctl -u $unit --no-pager | tail -5 | logf; abort "$unit did not start"; }
expect "the unit's cpuset.mems is '$(mems)', expected $mn" test "$(mems)" = "$mn"
seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)" && expect_on_node "$mn" "$WL_BYTES"
say "unit $unit: cpuset before the fix: cpus=$(cat "$cg/cpuset.cpus") mems=$(mems)"

# the problem: a direct write holds only until the manager re-applies the unit
echo "$cn" > "$cg/cpuset.mems" || fail "direct write of cpuset.mems"
audit_conf "$T/ng.conf" "$(printf '[instance ora]\ncgroup = /system.slice/%s\npolicy = local\n' "$unit")"
audit_load -c "$T/ng.conf"
expect_finding CPUSET_NOT_PERSISTENT ora warning
systemctl daemon-reload
until_ok 10 test "$(mems)" = "$mn"
say "unit $unit: a direct write of $cn to cpuset.mems, then systemctl daemon-reload: mems=$(mems)"
expect "daemon-reload left the direct write ($(mems)): the manager did not re-apply the unit" test "$(mems)" = "$mn"
result direct-write-reverts

"$CTL" -c "$T/ng.conf" audit --json > "$T/audit.json" 2> "$T/audit.err"
rc=$?; ((rc <= 2)) || { fail "audit --json exited $rc"; logf "$T/audit.err"; }     # 0-2: by findings
owner=$(jq -r '.instances[] | select(.name == "ora") | "\(.cpuset_owner) \(.cpuset_owner_name)"' "$T/audit.json")
expect "cpuset_owner is '$owner', expected 'systemd $unit'" test "$owner" = "systemd $unit"
"$CTL" -c "$T/ng.conf" audit > "$T/audit.txt" 2>&1
expect "the owner is not read from the manager: $(grep owner "$T/audit.txt")" \
    grep -q "cpuset owner: systemd unit $unit (AllowedCPUs=$cpus, AllowedMemoryNodes=$mn, from systemd)" "$T/audit.txt"
export NUMAGUARD_ACTION_LOG=$T/actions.jsonl
actions_mark
"$CTL" -c "$T/ng.conf" cpuset apply ora --dry-run > "$T/dry.out" 2>&1
expect_no_action "cpuset apply --dry-run"
logf "$T/dry.out"
expect "dry run does not name the property" \
    grep -qx "would set AllowedMemoryNodes=$cn on systemd unit $unit (runtime and persistent, as systemctl set-property; now: AllowedMemoryNodes=$mn)" "$T/dry.out"
expect "dry run changed cpuset.mems to $(mems)" test "$(mems)" = "$mn"
expect "dry run changed the unit: $(systemctl show -P AllowedMemoryNodes $unit)" test "$(systemctl show -P AllowedMemoryNodes $unit)" = "$mn"
result owner-and-dry-run

"$CTL" -c "$T/ng.conf" cpuset apply ora > "$T/apply.out" 2>&1; rc=$?
logf "$T/apply.out"
expect "apply exited $rc" test "$rc" = 0
expect "apply is not done through the unit" grep -q "^cpuset ora: done: systemd unit $unit set, persistently" "$T/apply.out"
expect "read back of the property missing" grep -q "read back: AllowedMemoryNodes=$cn)" "$T/apply.out"
expect "AllowedMemoryNodes is '$(systemctl show -P AllowedMemoryNodes $unit)', expected $cn" \
    test "$(systemctl show -P AllowedMemoryNodes $unit)" = "$cn"
expect "no persistent drop-in" grep -qx "AllowedMemoryNodes=$cn" /etc/systemd/system.control/$unit.d/50-AllowedMemoryNodes.conf
expect "cpuset.mems is '$(mems)' after the fix, expected $cn" test "$(mems)" = "$cn"
say "unit $unit: cpuset after the fix: cpus=$(cat "$cg/cpuset.cpus") mems=$(mems)"
seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)" && expect_on_node "$cn" "$WL_BYTES"
result apply

systemctl daemon-reload
sleep 1
say "unit $unit: after systemctl daemon-reload: mems=$(mems)"
expect "daemon-reload undid the fix: cpuset.mems '$(mems)'" test "$(mems)" = "$cn"
start_unit restart || abort "$unit did not restart"
say "unit $unit: after systemctl restart $unit: cpus=$(cat "$cg/cpuset.cpus") mems=$(mems)"
expect "the restart undid the fix: cpuset.mems '$(mems)'" test "$(mems)" = "$cn"
seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)" && expect_on_node "$cn" "$WL_BYTES"
audit_load -c "$T/ng.conf"
expect_no_finding CPUSET_NOT_PERSISTENT ora
result owner-reapplies

# ---- under the unit's capabilities (as systemd applies numaguard.service's
# CapabilityBoundingSet= to root's process, here in a transient unit): the
# unit's root workload, which holds every capability, is read in full; a
# drop-in that narrows the set by CAP_SYS_PTRACE makes the audit incomplete
# (the kernel's ptrace check then refuses its maps), and it says so.
ucaps=$(sed -n 's/^CapabilityBoundingSet=//p' "$ROOT/systemd/numaguard.service.in")
[[ " $ucaps " == *" CAP_SYS_PTRACE "* ]] || fail "numaguard.service's bounding set lacks CAP_SYS_PTRACE: '$ucaps'"
ctl_as() {      # ctl_as CAPS OUT: numaguardctl audit --json in a transient unit with CAPS
    systemd-run --quiet --wait --pipe --collect -p CapabilityBoundingSet="$1" -p NoNewPrivileges=yes \
        -p WorkingDirectory="$PWD" -- "$(readlink -f "$CTL")" -c "$T/ng.conf" audit --json > "$2" 2> "$2.err"
}
ctl_as "$ucaps" "$T/caps-unit.json"; rc=$?
expect "audit under the unit's set exited $rc ($(head -c 300 "$T/caps-unit.json.err"))" test "$rc" -le 2
expect "audit under the unit's set is incomplete: $(jq -c '[.findings[] | select(.code == "AUDIT_INCOMPLETE") | .message]' "$T/caps-unit.json" 2>&1 | head -c 400)" \
    jq -e '[.findings[] | select(.code == "AUDIT_INCOMPLETE")] == []' "$T/caps-unit.json"
expect "under the unit's set the instance ora does not hold pid $WL_PID with its segment $WL_SHMID placed" \
    jq -e --argjson p "$WL_PID" --argjson id "$WL_SHMID" '[.instances[] | select(.name == "ora")
        | (.pids | index($p)) != null and ([.segments[] | select(.shmid == $id) | .resident_bytes > 0] == [true])] == [true]' "$T/caps-unit.json"
narrow=$(tr ' ' '\n' <<<"$ucaps" | grep -vx CAP_SYS_PTRACE | tr '\n' ' ')
ctl_as "$narrow" "$T/caps-narrow.json"; rc=$?
log "the unit's set without CAP_SYS_PTRACE ($narrow): exit $rc, $(jq -c '[.findings[] | select(.code == "AUDIT_INCOMPLETE") | .message]' "$T/caps-narrow.json" 2>&1 | head -c 600)"
expect "audit without CAP_SYS_PTRACE exited $rc, an incomplete audit exits 1 or more" test "$rc" -ge 1 -a "$rc" -le 2
expect "no AUDIT_INCOMPLETE naming CAP_SYS_PTRACE without it" \
    jq -e '[.findings[] | select(.code == "AUDIT_INCOMPLETE" and .severity == "warning") | .message | test("without CAP_SYS_PTRACE")] | any' "$T/caps-narrow.json"
result unit-caps

# ---- a hugepage pool recorded for boot
hp=$(hp_file "$mn")
tmpf=/etc/tmpfiles.d/numaguard-hugepages.conf
at_exit "rm -f $tmpf; echo 0 > $hp"
printf '[global]\nnode_free_floor = 64M\n' > "$T/hp.conf"
"$CTL" -c "$T/hp.conf" hugepages reserve --size 2M --pages 8 --node "$mn" --persist > "$T/hp.out" 2>&1; rc=$?
logf "$T/hp.out"
expect "reserve --persist exited $rc" test "$rc" = 0
expect "pool is $(cat "$hp"), expected 8" test "$(cat "$hp")" = 8
expect "no line for node $mn in $tmpf" \
    grep -qx "w /sys/devices/system/node/node$mn/hugepages/hugepages-2048kB/nr_hugepages - - - - 8" $tmpf
result hugepages-persist
echo 0 > "$hp"
audit_load -c "$T/hp.conf"
expect_finding HUGEPAGE_NOT_PERSISTENT "" warning "$mn"
systemd-tmpfiles --create $tmpf > "$T/tmpfiles.out" 2>&1 || { logf "$T/tmpfiles.out"; fail "systemd-tmpfiles --create $tmpf"; }
say "hugepages node $mn: 8 reserved with --persist, pool set to 0, after systemd-tmpfiles --create: $(cat "$hp")"
expect "systemd-tmpfiles gave the pool $(cat "$hp"), expected 8" test "$(cat "$hp")" = 8
audit_load -c "$T/hp.conf"
expect_no_finding HUGEPAGE_NOT_PERSISTENT ""
result hugepages-boot
