#!/usr/bin/env bash
# numaguardd, as the service the Debian package installs (its hardened unit,
# topology `systemd`, after case `service` installed it), in enforce mode
# for cpusets, corrects a unit-owned cgroup through the unit:
#
# - a unit e2e-db.service with its CPUs on CPUSET_CPU_NODE and
#   AllowedMemoryNodes=CPUSET_MEM_NODE runs a SysV workload (REMOTE_MEMORY);
# - the service, reloaded with `mode = enforce` and `enforce = cpuset` for
#   that cgroup, sets AllowedMemoryNodes= on the unit through the manager's
#   D-Bus API from inside its sandbox (ProtectSystem=strict,
#   RestrictAddressFamilies=AF_UNIX, a bounded capability set): one cpuset
#   correction in its journal (outcome done, the property among its writes),
#   the unit's property and drop-in, the cgroup, and the workload's memory
#   on the CPUs' node;
# - the fix survives `systemctl daemon-reload` and a restart of the unit
#   (the new workload's memory on that node too), with no second correction
#   and no CPUSET_NOT_PERSISTENT.
#
# The instance is "unitdb": case service's own cgroup instance is "db", and
# its corrections are in the same journal.
#
# The cpusets before, after the correction, after daemon-reload and after
# the restart go to $BUILD/e2e/daemon-owner-record.txt.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 3
need_ctl
[ "$(cat /proc/1/comm)" = systemd ] || abort "PID 1 is $(cat /proc/1/comm), not systemd (numa-vm --systemd)"
NGCTL=/usr/bin/numaguardctl CONF=/etc/numaguard/numaguard.conf
CPUSET_ID=1db6e8201fed4d01a1af1cbfb367160e
[ -x "$NGCTL" ] && systemctl is-active -q numaguard ||
    abort "the numaguard service is not installed and active (case service installs it)"
RECORD=$REC_DIR/daemon-owner-record.txt
mkdir -p "$REC_DIR" && : > "$RECORD"
until_ok() { local t=$(($1 * 4)); shift; while ((t-- > 0)); do "$@" && return 0; sleep 0.25; done; return 1; }
cn=$CPUSET_CPU_NODE mn=$CPUSET_MEM_NODE
cpus=$(node_cpus "$cn")
unit=e2e-db.service cg=/sys/fs/cgroup/system.slice/e2e-db.service
ready=/run/e2e-db.ready
mems() { cat "$cg/cpuset.mems" 2>/dev/null; }
prop() { systemctl show -P AllowedMemoryNodes $unit; }
say() { log "$*"; echo "$*" >> "$RECORD"; }
corrections() { journalctl -u numaguard -o json MESSAGE_ID=$CPUSET_ID NUMAGUARD_INSTANCE=unitdb 2>/dev/null | grep -c .; }
cp "$CONF" "$T/conf.orig"
at_exit "cp $T/conf.orig $CONF; systemctl reload numaguard"
at_exit "systemctl stop $unit; rm -rf /etc/systemd/system/$unit /etc/systemd/system.control/$unit.d; systemctl daemon-reload"
cat > /etc/systemd/system/$unit <<EOF
[Unit]
Description=numaguard e2e: a database unit with a remote binding

[Service]
ExecStartPre=/bin/rm -f $ready
ExecStart=$WL sysv -s 16 -p 1 -r $ready
AllowedCPUs=$cpus
AllowedMemoryNodes=$mn
EOF
start_unit() {      # start_unit start|restart: and wait for the workload's report
    systemctl "$1" $unit || return 1
    until_ok 120 test -s $ready || return 1
    local line; line=$(cat $ready)
    [[ $line =~ \ shmid=(-?[0-9]+) ]] && WL_SHMID=${BASH_REMATCH[1]}
    [[ $line =~ \ bytes=([0-9]+) ]] && WL_BYTES=${BASH_REMATCH[1]}
    log "unit workload: $line"
}
systemctl daemon-reload
start_unit start || { journalctl -u $unit --no-pager | tail -5 | logf; abort "$unit did not start"; }
expect "the unit's cpuset.mems is '$(mems)', expected $mn" test "$(mems)" = "$mn"
say "unit $unit: before the correction: cpus=$(cat "$cg/cpuset.cpus") mems=$(mems) AllowedMemoryNodes=$(prop)"
log "numaguard's sandbox: $(systemctl show -p ProtectSystem -p RestrictAddressFamilies -p CapabilityBoundingSet numaguard | tr '\n' ' ')"

# ---- the service corrects it through the unit
printf '[global]\ninterval = 2s\nmin_segment_size = 4M\nmode = enforce\ncooldown = 1h\n[instance unitdb]\ncgroup = /system.slice/%s\npolicy = local\nenforce = cpuset\n' \
    "$unit" > "$CONF"
systemctl reload numaguard > "$T/reload" 2>&1 || { logf "$T/reload"; fail "systemctl reload (enforce) failed"; }
until_ok 120 eval '[ "$(corrections)" -ge 1 ]' || {
    journalctl -u numaguard --no-pager | tail -20 | logf; abort "no cpuset correction of unitdb in the service's journal"; }
e=$(journalctl -u numaguard -o json MESSAGE_ID=$CPUSET_ID NUMAGUARD_INSTANCE=unitdb | tail -n 1)
log "correction: $(jq -r '.MESSAGE' <<<"$e")"
jq -e '.NUMAGUARD_OUTCOME == "done"' <<<"$e" > /dev/null || fail "correction entry: $e"
# a field sent more than once comes as an array
jq -e '[.NUMAGUARD_WRITE] | flatten | any(startswith("'"$unit"'") and contains("AllowedMemoryNodes='"$cn"'"))' <<<"$e" > /dev/null ||
    fail "the correction's writes do not name the unit's property: $(jq -c '.NUMAGUARD_WRITE' <<<"$e")"
until_ok 10 test "$(mems)" = "$cn"
expect "AllowedMemoryNodes is '$(prop)', expected $cn" test "$(prop)" = "$cn"
expect "no persistent drop-in" grep -qx "AllowedMemoryNodes=$cn" /etc/systemd/system.control/$unit.d/50-AllowedMemoryNodes.conf
expect "cpuset.mems is '$(mems)' after the correction, expected $cn" test "$(mems)" = "$cn"
seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)" && expect_on_node "$cn" "$WL_BYTES"
say "unit $unit: after numaguardd's correction: cpus=$(cat "$cg/cpuset.cpus") mems=$(mems) AllowedMemoryNodes=$(prop)"
result enforce-through-unit

systemctl daemon-reload
sleep 1
say "unit $unit: after systemctl daemon-reload: mems=$(mems)"
expect "daemon-reload undid the correction: cpuset.mems '$(mems)'" test "$(mems)" = "$cn"
result survives-daemon-reload

start_unit restart || abort "$unit did not restart"
say "unit $unit: after systemctl restart $unit: cpus=$(cat "$cg/cpuset.cpus") mems=$(mems)"
expect "the restart undid the correction: cpuset.mems '$(mems)'" test "$(mems)" = "$cn"
seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)" && expect_on_node "$cn" "$WL_BYTES"
audit_load -c "$CONF"
expect_no_finding CPUSET_NOT_PERSISTENT unitdb
expect_no_finding REMOTE_MEMORY unitdb
n=$(corrections)
expect "$n cpuset corrections of unitdb, expected 1 (nothing left to correct)" test "$n" = 1
result survives-restart
