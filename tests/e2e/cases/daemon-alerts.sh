#!/usr/bin/env bash
# numaguardd on the live guest: a cyclops SysV segment (touched under
# --membind=N) appears while the daemon polls, then is removed. Exactly one
# CYCLOPS alert is raised for it, about node N, and exactly one cleared;
# status over the socket lists it while it is active; the metrics file
# follows; SIGTERM exits 0.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 1
need_ctl
D=$B/numaguardd
[ -x "$D" ] || abort "$D not built (make)"
n=$MEMBIND_NODE
ALERTS=$T/alerts.jsonl SOCK=$T/ctl.sock PROM=$T/ng.prom
audit_conf "$T/ng.conf" "interval = 500ms
socket = $SOCK
metrics_file = $PROM
"
# until SECONDS CMD...: CMD every 0.2 s (TCG is slow: generous timeouts).
until_ok() { local t=$(($1 * 5)); shift; while ((t-- > 0)); do "$@" && return 0; sleep 0.2; done; return 1; }
events() { grep "\"NUMAGUARD_EVENT\":\"$1\"" "$ALERTS" 2>/dev/null |
           grep -c "\"NUMAGUARD_CODE\":\"CYCLOPS\",\"NUMAGUARD_INSTANCE\":\"$inst\"" ; }
polls() { "$CTL" status --json --socket "$SOCK" 2>/dev/null | jq -r '.daemon.polls // 0'; }

"$D" --foreground --config "$T/ng.conf" --alert-log "$ALERTS" 2> "$T/daemon.err" &
DPID=$!
at_exit "kill -KILL $DPID"
until_ok 60 test -S "$SOCK" || { logf "$T/daemon.err"; abort "numaguardd did not create $SOCK"; }

wl_start numactl --membind="$n" -- sysv -s 32 -p 2 || abort "workload"
inst=unclaimed:shmid-$WL_SHMID
until_ok 60 eval '[ "$(events raised)" -ge 1 ]' || fail "no CYCLOPS alert raised for $inst within 60 s"
line=$(grep '"NUMAGUARD_EVENT":"raised"' "$ALERTS" | grep "\"NUMAGUARD_INSTANCE\":\"$inst\"" | grep CYCLOPS | head -1)
log "raised: $line"
jq -e --arg n "$n" '.NUMAGUARD_NODES == $n and .NUMAGUARD_SEVERITY == "warning" and
        .MESSAGE_ID == "e87985b89b7c4cf1ab08905f0454e2fd"' <<<"$line" > /dev/null ||
        fail "raised alert not about node $n: $line"
"$CTL" status --json --socket "$SOCK" > "$T/status.json"; rc=$?
((rc >= 1 && rc <= 2)) || fail "status exited $rc with an active warning"
jq -e --arg i "$inst" --argjson n "$n" '[.daemon.alerts[] | select(.code == "CYCLOPS" and .instance == $i and
        .nodes == [$n])] | length == 1' "$T/status.json" > /dev/null ||
        fail "status does not list the CYCLOPS alert of $inst"
grep -q "^numaguard_findings_active{code=\"CYCLOPS\",severity=\"warning\",db_instance=\"$inst\"} 1$" "$PROM" ||
        fail "metrics file has no CYCLOPS for $inst"
seg_bytes=$(grep "^numaguard_instance_resident_bytes{db_instance=\"$inst\",node=\"$n\"} " "$PROM" | cut -d' ' -f2)
[ "${seg_bytes:-0}" -ge $((WL_BYTES * 9 / 10)) ] || fail "metrics: $inst has ${seg_bytes:-no} bytes on node $n"

# Remove the segment: the workload deletes it on SIGTERM.
kill -TERM "$WL_PID"; wait "$WL_PID" 2>/dev/null
until_ok 60 eval '[ "$(events cleared)" -ge 1 ]' || fail "CYCLOPS of $inst not cleared within 60 s"
# A few more polls: nothing else happens to this key.
target=$(( $(polls) + 3 ))
until_ok 30 eval '[ "$(polls)" -ge "$target" ]' || fail "numaguardd stopped polling"
expect "raised $(events raised) times, expected once" test "$(events raised)" = 1
expect "cleared $(events cleared) times, expected once" test "$(events cleared)" = 1
grep -q "db_instance=\"$inst\"" "$PROM" && fail "metrics still list $inst after it went away"

kill -TERM "$DPID"; wait "$DPID"; rc=$?
expect "numaguardd exited $rc on SIGTERM" test "$rc" = 0
((FAILS)) && { logf "$T/daemon.err"; logf "$ALERTS"; }
result
