#!/usr/bin/env bash
# A configuration "file" that is not a regular file: a FIFO given at start
# is refused at once (exit 78, naming what it is) instead of hanging the
# start until someone writes it; swapped in before a reload (SIGHUP, then
# `numaguardctl reload`), it fails that reload without blocking the event
# loop: the daemon still answers status, which shows the reload error, and
# stops on SIGTERM. numaguardctl refuses one the same way. A configuration
# of 20,000 instances loads (tests/unit/test-config.c checks what it holds,
# bench/config-load.c how the load grows). Every wait is bounded, so the old hang fails rather than stalls.
# Drop-ins (FILE.d/*.conf, name order): --check-config lists the files it
# read, warns at the file and line of a nodes = the host (a one-node tree)
# lacks, fails with the drop-in's name and line on an error; numaguardctl
# audit sees an instance a drop-in adds.
# BUILD: build directory (default build).
set -u
echo 1..11
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
D=$B/numaguardd CTL=$B/numaguardctl
TREE=$SRC/tests/fixtures/trees/guest4-v2
[ -x "$D" ] && [ -x "$CTL" ] || { echo "not ok config-file: $D or $CTL not built"; exit 1; }
[ -d "$TREE/proc" ] || { echo "not ok config-file: committed fixture tree $TREE missing"; exit 1; }

tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
TAP_PREFIX=config-file; . "$SRC/tests/shell/lib.sh"
# within SECONDS PID: PID ended within SECONDS; its status in $rc ("running" if not).
within() {
        local t=$(( $1 * 10 ))
        while ((t-- > 0)); do kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$2" 2>/dev/null; then kill -KILL "$2" 2>/dev/null; wait "$2" 2>/dev/null; rc=running; return 1; fi
        wait "$2"; rc=$?
}
SOCK=$tmp/ctl.sock CONF=$tmp/ng.conf

mkfifo "$tmp/fifo.conf"
"$D" --foreground --root "$TREE" --config "$tmp/fifo.conf" --socket "$SOCK" --alert-log "$tmp/alerts" \
        2> "$tmp/start.err" &
within 5 $!
check_expr fifo-at-start '[ "$rc" = 78 ] && grep -q "$tmp/fifo.conf is a FIFO, not a regular file" "$tmp/start.err"' \
        "exit $rc: $(tail -2 "$tmp/start.err")"

timeout 10 "$CTL" audit --root "$TREE" --config "$tmp/fifo.conf" > /dev/null 2> "$tmp/ctl.err"; rc=$?
check_expr ctl-refuses-fifo '[ "$rc" = 3 ] && grep -q "$tmp/fifo.conf is a FIFO, not a regular file" "$tmp/ctl.err"' \
        "exit $rc: $(tail -2 "$tmp/ctl.err")"

printf '[global]\ninterval = 1s\nmetrics_file =\nsocket = %s\n' "$SOCK" > "$CONF"
"$D" --foreground --root "$TREE" --config "$CONF" --alert-log "$tmp/alerts" 2> "$tmp/daemon.err" &
pid=$!
for _ in $(seq 50); do "$CTL" status --socket "$SOCK" > /dev/null 2>&1; [ $? -le 2 ] && break; sleep 0.1; done
mv "$CONF" "$CONF.regular"
mkfifo "$CONF"
kill -HUP "$pid"
sleep 0.3
timeout 5 "$CTL" status --socket "$SOCK" > "$tmp/status" 2>&1; st=$?
check_expr status-after-sighup '[ "$st" -le 2 ] && grep -q "Last reload error: $CONF is a FIFO, not a regular file" "$tmp/status"' \
        "status exit $st: $(head -3 "$tmp/status")"
timeout 5 "$CTL" reload --socket "$SOCK" > "$tmp/reload" 2>&1; st=$?
check_expr reload-request-fails '[ "$st" = 3 ] && grep -q "is a FIFO, not a regular file" "$tmp/reload"' \
        "reload exit $st: $(head -3 "$tmp/reload")"
timeout 5 "$CTL" status --json --socket "$SOCK" > "$tmp/status.json" 2>&1; st=$?
check_expr status-json-after-reload '[ "$st" -le 2 ] && grep -qE "\"reload_failures\": ?2," "$tmp/status.json"' \
        "status exit $st: $(grep -E "reload" "$tmp/status.json" | head -3)"
kill -TERM "$pid"
within 5 "$pid"; pid=""
check_expr sigterm-stops '[ "$rc" = 0 ]' "exit $rc after SIGTERM: $(tail -2 "$tmp/daemon.err")"

# The socket path numaguardctl status takes from the file says it loaded.
awk -v sock="$tmp/none.sock" 'BEGIN { printf "[global]\nsocket = %s\n", sock
        for (i = 0; i < 20000; i++) printf "[instance db%d]\nmatch_comm = db%d\n", i, i }' > "$tmp/many.conf"
timeout 60 "$CTL" status --config "$tmp/many.conf" > /dev/null 2> "$tmp/many.err"; rc=$?
check_expr many-instances-load '[ "$rc" = 3 ] && grep -q "nothing listens on $tmp/none.sock" "$tmp/many.err"' \
        "exit $rc: $(tail -2 "$tmp/many.err")"
HOST1=$SRC/tests/fixtures/trees/host
mkdir "$tmp/dropin.conf.d"
printf '[global]\ninterval = 10s\n' > "$tmp/dropin.conf"
printf '# added by a configuration manager\n[instance fleetdb]\nmatch_comm = postgres\nnodes = 0-3\n' \
        > "$tmp/dropin.conf.d/50-fleetdb.conf"
"$D" --check-config --root "$HOST1" --config "$tmp/dropin.conf" > "$tmp/check.out" 2> "$tmp/check.err"; rc=$?
check_expr check-config-lists-files '[ "$rc" = 0 ] && grep -qx "$tmp/dropin.conf.d/50-fleetdb.conf" "$tmp/check.out" &&
        grep -q "configuration valid: 1 instance, 1 warning" "$tmp/check.out"' "exit $rc: $(cat "$tmp/check.out" "$tmp/check.err")"
check_expr check-config-nodes-warning \
        'grep -qx "$tmp/dropin.conf.d/50-fleetdb.conf:4: warning: \[instance fleetdb\] nodes 1-3 do not exist on this host (its nodes: 0)" "$tmp/check.err"' \
        "$(cat "$tmp/check.err")"
printf '[global]\ninterval = soon\n' > "$tmp/dropin.conf.d/60-broken.conf"
"$D" --check-config --root "$HOST1" --config "$tmp/dropin.conf" > "$tmp/check.out" 2> "$tmp/check.err"; rc=$?
check_expr check-config-error-names-dropin '[ "$rc" = 78 ] && grep -q "^$tmp/dropin.conf.d/60-broken.conf:2: invalid interval" "$tmp/check.err"' \
        "exit $rc: $(cat "$tmp/check.err")"
rm "$tmp/dropin.conf.d/60-broken.conf"
"$CTL" audit --root "$TREE" --config "$tmp/dropin.conf" --json > "$tmp/audit.json" 2> "$tmp/audit.err"; rc=$?
check_expr audit-reads-dropin '[ "$rc" -le 2 ] && grep -q "\"fleetdb\"" "$tmp/audit.json"' "exit $rc: $(head -3 "$tmp/audit.err")"
[ $fails = 0 ]
