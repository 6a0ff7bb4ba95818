#!/usr/bin/env bash
# Where numaguardd's alerts go when journald is absent, in a mount namespace
# of its own (tmpfs over /run/systemd and /dev): with no /dev/log it says
# once that alerts reach neither syslog nor the journal, writes each alert
# to standard error instead of dropping it, and shows both sinks down in
# `status` (text and JSON: daemon.alert_sinks[], daemon.alerts_lost) and in
# the metrics (numaguard_alert_sink_up{sink="syslog"} 0); its start-up line
# says the same (alerts to standard error, not to syslog). With a logger
# listening on /dev/log, the alerts reach it, the sink is up and the
# start-up line names syslog, the journal down.
# Root: unshare -m, mount. BUILD: build directory (default build).
set -u
echo 1..10
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
D=$B/numaguardd CTL=$B/numaguardctl
TREE=$SRC/tests/fixtures/trees/guest4-v2
[ -x "$D" ] && [ -x "$CTL" ] || { echo "not ok alert-sinks: $D or $CTL not built"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "skip alert-sinks: needs root (unshare -m, mount)"; exit 77; }
command -v unshare > /dev/null && command -v jq > /dev/null && command -v python3 > /dev/null &&
        unshare -m --propagation private true 2>/dev/null ||
        { echo "skip alert-sinks: needs unshare -m (mount namespaces), jq and python3"; exit 77; }

tmp=$(mktemp -d)
pid="" lpid=""
cleanup() {
        [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
        [ -n "$lpid" ] && kill "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
TAP_PREFIX=alert-sinks; . "$SRC/tests/shell/lib.sh"
SOCK=$tmp/ctl.sock PROM=$tmp/ng.prom
printf '[global]\ninterval = 300ms\nmin_segment_size = 1M\nmetrics_file = %s\nsocket = %s\n' "$PROM" "$SOCK" \
        > "$tmp/ng.conf"

# run_hidden [LOGGER_SOCKET]: numaguardd ($pid) without the journal's socket
# and /dev/log, or with LOGGER_SOCKET bound over /dev/log.
run_hidden() {
        rm -f "$PROM" "$SOCK"
        unshare -m --propagation private bash -c '
                [ -d /run/systemd ] && mount -t tmpfs tmpfs /run/systemd
                mount -t tmpfs tmpfs /dev
                if [ -n "$1" ]; then touch /dev/log && mount --bind "$1" /dev/log; fi
                exec "$2" --foreground --root "$3" --config "$4"' sh "${1:-}" "$D" "$TREE" "$tmp/ng.conf" \
                2> "$tmp/stderr" &
        pid=$!
        for _ in $(seq 50); do [ -s "$PROM" ] && grep -q alerts_lost "$PROM" && break; sleep 0.1; done
        sleep 0.5       # a few polls: the first one's alerts are sent
}
# The running daemon's metrics are read from a copy: a clean stop replaces
# the file with one that only says so (numaguardd(8), METRICS).
stop() { cp "$PROM" "$tmp/running.prom"; kill "$pid"; wait "$pid"; pid=""; }

run_hidden
"$CTL" status --socket "$SOCK" > "$tmp/status" 2>&1
"$CTL" status --json --socket "$SOCK" > "$tmp/status.json" 2>&1
stop
check_expr said-once '[ "$(grep -c "Alerts cannot reach syslog (/dev/log: No such file or directory) nor the journal" "$tmp/stderr")" = 1 ]' \
        "$(grep -v "alert:" "$tmp/stderr" | head -5)"
check_expr started-says-stderr 'grep -q "Started: .*, alerts to standard error (syslog and journal down)" "$tmp/stderr" &&
        ! grep -q "alerts to syslog" "$tmp/stderr"' "$(grep -v "alert:" "$tmp/stderr" | head -5)"
check_expr alerts-on-stderr 'grep -qE "^numaguardd: alert: [A-Z_]+ raised" "$tmp/stderr"' "$(head -5 "$tmp/stderr")"
check_expr status-text 'grep -q "^Alerts to: syslog (primary) down (/dev/log: No such file or directory), [0-9]* failed; journal down" "$tmp/status"' \
        "$(head -3 "$tmp/status")"
check_expr status-json 'jq -e ".daemon.alert_sink == \"syslog\" and .daemon.alerts_lost > 0 and
        ([.daemon.alert_sinks[] | select(.sink == \"syslog\" and .primary and (.up | not) and
          .error == \"No such file or directory\" and .failures > 0)] | length) == 1" "$tmp/status.json" > /dev/null' \
        "$(jq -c .daemon.alert_sinks "$tmp/status.json" 2>&1 | head -c 300)"
check_expr metric-down 'grep -qx "numaguard_alert_sink_up{sink=\"syslog\"} 0" "$tmp/running.prom" && grep -qE "^numaguard_alerts_lost_total [1-9]" "$tmp/running.prom"' \
        "$(grep alert_sink "$tmp/running.prom" | head -5)"

# A logger on /dev/log: a datagram socket of the test's, bound over it.
python3 - "$tmp/log.sock" > "$tmp/syslog.out" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); s.settimeout(0.5)
end = time.time() + 30
while time.time() < end:
    try:
        print(s.recv(4096).decode(errors="replace"), flush=True)
    except socket.timeout:
        pass
PY
lpid=$!
for _ in $(seq 30); do [ -S "$tmp/log.sock" ] && break; sleep 0.1; done
run_hidden "$tmp/log.sock"
"$CTL" status --socket "$SOCK" > "$tmp/status" 2>&1
stop
check_expr logger-gets-alerts 'grep -qE "^<[0-9]+>[A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} numaguardd\[[0-9]+\]: [A-Z_]+ raised" "$tmp/syslog.out" &&
        ! grep -q "alert:" "$tmp/stderr" && ! grep -q "cannot reach" "$tmp/stderr"' \
        "syslog got: $(head -2 "$tmp/syslog.out"); stderr: $(head -3 "$tmp/stderr")"
check_expr started-says-syslog 'grep -q "Started: .*, alerts to syslog (journal down)" "$tmp/stderr"' "$(head -3 "$tmp/stderr")"
check_expr status-up 'grep -q "^Alerts to: syslog (primary) up; journal down" "$tmp/status"' "$(head -3 "$tmp/status")"
check_expr metric-up 'grep -qx "numaguard_alert_sink_up{sink=\"syslog\"} 1" "$tmp/running.prom" && grep -qx "numaguard_alerts_lost_total 0" "$tmp/running.prom"' \
        "$(grep alert "$tmp/running.prom" | grep -v "^#" | head -6)"
[ $fails = 0 ]
