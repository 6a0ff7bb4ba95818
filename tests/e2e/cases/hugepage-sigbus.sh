#!/usr/bin/env bash
# Never the cause of a crash: hugepage reservations in every correction
# gate, on the real kernel. A process in its own cpuset (its CPU on node 1,
# memory nodes 0-1) makes a 16 MiB SysV SHM_HUGETLB segment (8 reserved
# 2 MiB pages) and touches half of it: 4 pages from node 1's pool of 4, so
# node 1 has none free and node 0 keeps 4 (node 2 holds 4 more, which the
# process may not use). An instance policy binds it to node 1.
#   control: narrowing its cpuset.mems to 1 by hand, as cpuset apply did,
#     and touching the rest kills it with SIGBUS (signal 7): the kernel's own
#     verdict that the case is real;
#   then, on a fresh process in the same shape, every correction that would
#   do that is refused with exit 2 and the numbers, and nothing is written:
#   cpuset apply --dry-run (JSON), cpuset apply (its journal entry carries
#   NUMAGUARD_CHECK), numaguardd with enforce = cpuset (its entry and the
#   metric numaguard_corrections_refused_hugepage_check_total), hugepages
#   reserve shrinking node 0 (node 2's pool, which the process may not use,
#   shrinks);
#   the risk that exists: cpuset.mems narrowed by someone else raises
#   HUGEPAGE_SIGBUS_RISK (critical, node 1), and nothing is touched;
#   once node 1's pool is grown by 4 the same cpuset apply is done, and the
#   process touches every page and lives, all 8 pages on node 1 (the
#   kernel's numa_maps and the pools' counters).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 7
need_ctl
# The sanitizer build's workload would catch SIGBUS itself (ASan reports
# "BUS" and exits 1): let the kernel's signal end it, as it ends a database.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_sigbus=0
D=$B/numaguardd
[ -x "$D" ] || abort "$D not built (make)"
[ "$CGROUP" = v2 ] || skip_case "the case's cpuset is cgroup v2's"
((${#NODE_IDS[@]} >= 3)) || skip_case "needs 3 nodes with memory"
base=/sys/fs/cgroup cg=/sys/fs/cgroup/e2e-sigbus
echo "+cpuset" > $base/cgroup.subtree_control || abort "cannot enable cpuset"
mkdir "$cg" || abort "mkdir $cg"
at_exit "rmdir $cg"
free_hp() { local f; read -r f < "/sys/devices/system/node/node$1/hugepages/hugepages-2048kB/free_hugepages"; echo "$f"; }
nr_hp() { local f; read -r f < "$(hp_file "$1")"; echo "$f"; }
export NUMAGUARD_ACTION_LOG=$T/actions.jsonl
jqt() { jq -e "$@" > /dev/null; }

# shape: pools 4/4/4, cpuset cpus of node 1 and mems 0-1, a process that
# faulted 4 of its 8 reserved pages from node 1
shape() {
    set_hugepages 0 4 && set_hugepages 1 4 && set_hugepages 2 4 || return 1
    echo "$(node_cpus 1)" > "$cg/cpuset.cpus" && echo 0-1 > "$cg/cpuset.mems" || { fail "cpuset $cg"; return 1; }
    rm -f "$T/touch" "$T/touch.done"
    wl_start sh -c 'echo $$ > "$0" && exec "$@"' "$cg/cgroup.procs" -- \
        sysv --huge -s 16 --touch 8 -p 0 --touch-rest "$T/touch" -v || return 1
    at_exit "ipcrm -m $WL_SHMID 2>/dev/null"
    [ "$(kernel_nodes "$WL_PID")" = "N1=4" ] && [ "$(free_hp 1)" = 0 ] && [ "$(free_hp 0)" = 4 ] ||
        { fail "set-up: pages at '$(kernel_nodes "$WL_PID")', free node 0 $(free_hp 0), node 1 $(free_hp 1)"; return 1; }
}
# touch_rest: the process touches the rest of its segment; 0 when it lives
touch_rest() {
    local t=600
    : > "$T/touch"
    while ((t-- > 0)); do
        [ -f "$T/touch.done" ] && return 0
        kill -0 "$WL_PID" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# control: the kernel's verdict on the narrowing the gate refuses
shape || abort "set-up"
echo 1 > "$cg/cpuset.mems" || abort "narrowing by hand"
touch_rest; lived=$?
wait "$WL_PID" 2>/dev/null; rc=$?
log "control: touched the rest under cpuset.mems 1: lived=$((!lived)), exit status $rc"
expect "control: the process lived (rc $rc): the case does not reproduce SIGBUS on this kernel" test "$lived" != 0
expect "control: exit status $rc, expected 135 (SIGBUS)" test "$rc" = 135
ipcrm -m "$WL_SHMID" 2>/dev/null
result control

shape || abort "set-up"
audit_conf "$T/ng.conf" "$(printf '[instance hp]\ncgroup = /e2e-sigbus\npolicy = bind\nnodes = 1\n')"
audit_load -c "$T/ng.conf"
expect_no_finding HUGEPAGE_SIGBUS_RISK hp

# cpuset apply --dry-run: refused before any write, with the numbers
"$CTL" -c "$T/ng.conf" cpuset apply hp --dry-run --json > "$T/dry.json" 2> "$T/dry.err"; rc=$?
logf "$T/dry.err"
jq -r '.summary, (.hugepage_check // "")' "$T/dry.json" | logf
expect "dry run exited $rc, expected 2" test "$rc" = 2
expect "dry run JSON: not refused by the hugepage check" \
    jqt '.outcome == "refused" and .hugepage_check_refused == true and .exit_status == 2 and (.writes | length) == 0' "$T/dry.json"
expect "dry run: no numbers" jqt '.summary | test("4 reserved 2M hugepages not yet faulted with 0 free on node 1, 4 short") and test("4 of 8 reserved") and test("node 0 4")' "$T/dry.json"
expect "dry run changed cpuset.mems to $(cat "$cg/cpuset.mems")" test "$(cat "$cg/cpuset.mems")" = 0-1
result dry-run-refused

# cpuset apply: the same, logged
"$CTL" -c "$T/ng.conf" cpuset apply hp > "$T/apply.out" 2>&1; rc=$?
logf "$T/apply.out"
expect "apply exited $rc, expected 2" test "$rc" = 2
expect "apply: no refusal naming SIGBUS" grep -q "^cpuset hp: refused: cpuset.mems 1: .*SIGBUS" "$T/apply.out"
expect "cpuset.mems is $(cat "$cg/cpuset.mems") after a refused apply" test "$(cat "$cg/cpuset.mems")" = 0-1
entry=$(tail -1 "$NUMAGUARD_ACTION_LOG" 2>/dev/null)
expect "no refused entry with NUMAGUARD_CHECK: $entry" \
    jqt '.NUMAGUARD_OUTCOME == "refused" and (.NUMAGUARD_CHECK | test("SIGBUS"))' <<<"$entry"
result cpuset-refused

# numaguardd, enforce = cpuset: the same refusal, its entry and its metric
ALERTS=$T/alerts.jsonl SOCK=$T/ctl.sock PROM=$T/metrics.prom
audit_conf "$T/d.conf" "interval = 500ms
mode = enforce
cooldown = 1h
socket = $SOCK
metrics_file = $PROM
[instance hp]
cgroup = /e2e-sigbus
policy = bind
nodes = 1
enforce = cpuset
"
until_ok() { local t=$(($1 * 5)); shift; while ((t-- > 0)); do "$@" && return 0; sleep 0.2; done; return 1; }
"$D" --foreground --config "$T/d.conf" --alert-log "$ALERTS" 2> "$T/daemon.err" &
DPID=$!
at_exit "kill -KILL $DPID"
if until_ok 90 grep -qs '"NUMAGUARD_EVENT":"action"' "$ALERTS" &&
   until_ok 30 grep -qs '^numaguard_corrections_refused_hugepage_check_total{kind="cpuset"} 1$' "$PROM"; then
    line=$(grep '"NUMAGUARD_EVENT":"action"' "$ALERTS" | head -1)
    log "action: $line"
    jq -e '.NUMAGUARD_OUTCOME == "refused" and .NUMAGUARD_INSTANCE == "hp" and (.NUMAGUARD_CHECK | test("4 short"))' \
        <<<"$line" > /dev/null || fail "action entry: $line"
    grep -q '^numaguard_corrections_total{kind="cpuset",outcome="refused"} 1$' "$PROM" ||
        fail "metrics: no refused cpuset correction counted"
else
    fail "no refused correction counted within 2 minutes"
    logf "$T/daemon.err"; [ -f "$PROM" ] && grep corrections "$PROM" | logf
fi
kill -TERM "$DPID"; wait "$DPID"
expect "cpuset.mems is $(cat "$cg/cpuset.mems") after the daemon's refusal" test "$(cat "$cg/cpuset.mems")" = 0-1
kill -0 "$WL_PID" 2>/dev/null || fail "the workload died"
result enforce-refused

# hugepages reserve: shrinking node 0 takes the free pages the process
# needs (the kernel would allow it: node 2 keeps the global count whole);
# node 2's pool, out of its reach, may shrink
"$CTL" -c "$T/ng.conf" hugepages reserve --size 2M --node 0 --pages 0 > "$T/shrink.out" 2>&1; rc=$?
logf "$T/shrink.out"
expect "shrinking node 0 exited $rc, expected 2" test "$rc" = 2
expect "no refusal with the numbers" grep -q "refused: .*would take free pages a reservation needs: .*0 free on nodes 0-1, 4 short" "$T/shrink.out"
expect "node 0's pool is $(nr_hp 0) after a refused shrink" test "$(nr_hp 0)" = 4
"$CTL" -c "$T/ng.conf" hugepages reserve --size 2M --node 2 --pages 0 > "$T/shrink2.out" 2>&1; rc=$?
logf "$T/shrink2.out"
expect "shrinking node 2 exited $rc, expected 0" test "$rc" = 0
expect "node 2's pool is $(nr_hp 2), expected 0" test "$(nr_hp 2)" = 0
expect "no check line" grep -q "^check: hugepage reservations checked" "$T/shrink2.out"
result shrink-refused

# the risk that exists: narrowed by someone else, nothing touched
echo 1 > "$cg/cpuset.mems" || abort "narrowing by hand"
audit_load -c "$T/ng.conf"
expect_finding HUGEPAGE_SIGBUS_RISK hp critical 1
expect "audit exited $AUDIT_RC, expected 2" test "$AUDIT_RC" = 2
echo 0-1 > "$cg/cpuset.mems" || abort "widening back"
result risk-finding

# node 1's pool grown: the same apply is done, every page touched, alive
"$CTL" -c "$T/ng.conf" hugepages reserve --size 2M --node 1 --pages 8 > "$T/grow.out" 2>&1 ||
    { logf "$T/grow.out"; fail "growing node 1's pool"; }
"$CTL" -c "$T/ng.conf" cpuset apply hp > "$T/apply2.out" 2>&1; rc=$?
logf "$T/apply2.out"
expect "apply after the growth exited $rc, expected 0" test "$rc" = 0
expect "no check line" grep -q "^check: hugepage reservations checked: instance hp: 4 of 8 reserved" "$T/apply2.out"
expect "cpuset.mems is $(cat "$cg/cpuset.mems"), expected 1" test "$(cat "$cg/cpuset.mems")" = 1
touch_rest || fail "the process died touching the rest of its segment (SIGBUS?)"
place=$(kernel_nodes "$WL_PID")
expect "the segment's pages are at '$place', expected N1=8" test "$place" = "N1=8"
expect "node 1 has $(free_hp 1) free pages, expected 0" test "$(free_hp 1)" = 0
expect "node 0 has $(free_hp 0) free pages, expected 4" test "$(free_hp 0)" = 4
result grow-then-apply
