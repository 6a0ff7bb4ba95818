#!/usr/bin/env bash
# numaguardd in enforce mode on the live guest: a configured instance whose
# cgroup cpuset has its CPUs on one node and its memory on another
# (REMOTE_MEMORY) and enforce = cpuset: the daemon rewrites cpuset.mems to
# the node of the CPUs once, logs it with the cpuset MESSAGE_ID, the memory
# follows (cgroup v2 migrates on write; read from the workload's own
# numa_maps), and nothing more happens within the cooldown although the
# daemon keeps polling (counted on its status socket, no fixed sleep).
# Then the paths that do not correct, live: bound to a node that does not
# exist, the daemon refuses (one "refused" entry, cpuset.mems unchanged);
# with the cgroup's files read-only (a read-only bind mount: EROFS), one
# attempt fails permanently and the target is left unmanaged (a warning, no
# second attempt with no cooldown at all).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 3
need_ctl
D=$B/numaguardd
[ -x "$D" ] || abort "$D not built (make)"
[ "$CGROUP" = v2 ] || skip_case "needs cgroup v2 (memory migrates on a cpuset.mems write)"
cn=$CPUSET_CPU_NODE mn=$CPUSET_MEM_NODE
base=/sys/fs/cgroup cg=/sys/fs/cgroup/e2e-enforce
echo "+cpuset +memory" > $base/cgroup.subtree_control || abort "cannot enable cpuset"
mkdir "$cg" || abort "mkdir $cg"
at_exit "rmdir $cg"
echo "$(node_cpus "$cn")" > "$cg/cpuset.cpus" && echo "$mn" > "$cg/cpuset.mems" || abort "cpuset"
wl_start sh -c 'echo $$ > "$0" && exec "$@"' "$cg/cgroup.procs" -- sysv -s 16 -p 1 || abort "workload"
[ "$(kernel_nodes "$WL_PID")" = "N$mn=$((WL_BYTES / 4096))" ] ||
    abort "set-up: the workload's pages are at '$(kernel_nodes "$WL_PID")', not all on node $mn"
ALERTS=$T/alerts.jsonl SOCK=$T/ctl.sock
audit_conf "$T/ng.conf" "interval = 500ms
mode = enforce
cooldown = 1h
socket = $SOCK
metrics_file =
[instance db]
cgroup = /e2e-enforce
policy = local
enforce = cpuset
"
until_ok() { local t=$(($1 * 5)); shift; while ((t-- > 0)); do "$@" && return 0; sleep 0.2; done; return 1; }
actions() { grep -c '"NUMAGUARD_EVENT":"action"' "$ALERTS" 2>/dev/null; }
polls() { "$CTL" status --json --socket "$SOCK" 2>/dev/null | jq -r '.daemon.polls // 0'; }

"$D" --foreground --config "$T/ng.conf" --alert-log "$ALERTS" 2> "$T/daemon.err" &
DPID=$!
at_exit "kill -KILL $DPID"
until_ok 90 eval '[ "$(actions)" -ge 1 ]' || { logf "$T/daemon.err"; abort "no correction within 90 s"; }
target=$(( $(polls) + 4 ))
until_ok 60 eval '[ "$(polls)" -ge "$target" ]' || fail "numaguardd stopped polling"
expect "$(actions) corrections, expected exactly 1 within the cooldown" test "$(actions)" = 1
line=$(grep '"NUMAGUARD_EVENT":"action"' "$ALERTS" | head -1)
log "action: $line"
jq -e '.MESSAGE_ID == "1db6e8201fed4d01a1af1cbfb367160e" and .NUMAGUARD_OUTCOME == "done" and
       .NUMAGUARD_INSTANCE == "db"' <<<"$line" > /dev/null || fail "action entry: $line"
mems=$(cat "$cg/cpuset.mems")
expect "cpuset.mems is '$mems', expected $cn" test "$mems" = "$cn"
# where the kernel put the workload's pages: all of them on the CPUs' node
# (cgroup v2 moves them on the write since Linux 5.15; before, they stay,
# and the journal entry says so)
if kernel_at_least 5 15; then pn=$cn; else
    pn=$mn
    jq -e '.MESSAGE | contains("cgroup v2 before Linux 5.15 moves no page")' <<<"$line" > /dev/null ||
        fail "action entry does not say that this kernel moves no page: $line"
fi
place=$(kernel_nodes "$WL_PID")
expect "the workload's pages are at '$place', expected N$pn=$((WL_BYTES / 4096))" \
    test "$place" = "N$pn=$((WL_BYTES / 4096))"
kill -TERM "$DPID"; wait "$DPID"; rc=$?
expect "numaguardd exited $rc on SIGTERM" test "$rc" = 0
((FAILS)) && { logf "$T/daemon.err"; logf "$ALERTS"; }
result

# rerun CONF-EXTRA: the daemon again, on a fresh alert log, with the
# instance's policy lines replaced by CONF-EXTRA and no cooldown; waits for
# one action and 4 polls more
rerun() {
    audit_conf "$T/ng.conf" "interval = 500ms
mode = enforce
cooldown = 0
socket = $SOCK
metrics_file =
[instance db]
cgroup = /e2e-enforce
enforce = cpuset
$1
"
    : > "$ALERTS"
    "$D" --foreground --config "$T/ng.conf" --alert-log "$ALERTS" 2> "$T/daemon.err" &
    DPID=$!
    at_exit "kill -KILL $DPID"
    until_ok 90 eval '[ "$(actions)" -ge 1 ]' || { logf "$T/daemon.err"; fail "no action within 90 s"; }
    local target=$(( $(polls) + 4 ))
    until_ok 60 eval '[ "$(polls)" -ge "$target" ]' || fail "numaguardd stopped polling"
    kill -TERM "$DPID"; wait "$DPID"; rc=$?
    expect "numaguardd exited $rc on SIGTERM" test "$rc" = 0
    line=$(grep '"NUMAGUARD_EVENT":"action"' "$ALERTS" | head -1)
    log "action: $line"
}
rerun "policy = bind
nodes = 1000"
expect "$(actions) attempts, expected one per poll once refused with no cooldown" test "$(actions)" -ge 2
jq -e '.NUMAGUARD_OUTCOME == "refused" and .NUMAGUARD_INSTANCE == "db"' <<<"$line" > /dev/null || fail "action entry: $line"
expect "cpuset.mems is '$(cat "$cg/cpuset.mems")' after a refusal, expected $cn" test "$(cat "$cg/cpuset.mems")" = "$cn"
((FAILS)) && { logf "$T/daemon.err"; logf "$ALERTS"; }
result refused

# read-only cgroup files: the write fails with EROFS, a permanent error
echo "$mn" > "$cg/cpuset.mems" || abort "cpuset.mems = $mn"
mount --bind "$cg" "$cg" && mount -o remount,bind,ro "$cg" || abort "read-only bind mount of $cg"
at_exit "umount $cg"
rerun "policy = local"
expect "$(actions) attempts with no cooldown, expected 1 (then unmanaged)" test "$(actions)" = 1
jq -e '.NUMAGUARD_OUTCOME == "permanent-error" and .NUMAGUARD_INSTANCE == "db"' <<<"$line" > /dev/null || fail "action entry: $line"
expect "no 'unmanaged' warning" grep -q "unmanaged" "$T/daemon.err"
expect "cpuset.mems is '$(cat "$cg/cpuset.mems")', expected $mn (read-only)" test "$(cat "$cg/cpuset.mems")" = "$mn"
((FAILS)) && { logf "$T/daemon.err"; logf "$ALERTS"; }
result permanent-error
