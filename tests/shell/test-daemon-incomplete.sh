#!/usr/bin/env bash
# numaguardd that cannot read every database process: run as root with no
# capabilities at all (setpriv: empty bounding set), it cannot read the
# maps of a process of another user (ptrace access mode, as without
# CAP_SYS_PTRACE). On this live host a "mariadbd" (the workload under that
# name, with a SysV segment) runs as nobody: the daemon's status text and
# JSON and its metrics file must say AUDIT_INCOMPLETE (the discovered
# MariaDB instance's own: its processes are the ones refused) with the
# count, the uid and the reason (root without CAP_SYS_PTRACE), poll after
# poll (its picture keeps processes it does not re-read),
# and never an all-clear. With the capabilities back, uid 65534 is no longer
# named. Needs root; under CI not being able to run is a failure.
# BUILD: build directory (default build).
set -u
echo 1..6
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
CTL=$B/numaguardctl D=$B/numaguardd WL=$B/tests/helpers/ng-shm-workload
TAP_PREFIX=daemon-incomplete; . tests/shell/lib.sh
[ "$(id -u)" = 0 ] || skip_all "needs root (a process of another user, setpriv)"
command -v setpriv > /dev/null || skip_all "setpriv (util-linux) not installed"
command -v jq > /dev/null || skip_all "jq not installed"
[ -x "$WL" ] && [ -x "$D" ] && [ -x "$CTL" ] || { echo "not ok daemon-incomplete: not built"; exit 1; }
T=$(mktemp -d /tmp/ng-incomplete.XXXXXX)
chmod 755 "$T"
pids=() dpid=""
cleanup() {
        [ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        rm -rf "$T"
}
trap cleanup EXIT
until_ok() {
        local t=$(( $1 * 10 )); shift
        while ((t-- > 0)); do "$@" && return 0; sleep 0.1; done
        return 1
}

# the database: a "mariadbd" of uid 65534 with a 16 MiB SysV segment and one child
ln -s "$(cd "${WL%/*}" && pwd -P)/${WL##*/}" "$T/mariadbd"
mkfifo "$T/wl.fifo"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$T/mariadbd" sysv -s 16 -p 1 > "$T/wl.fifo" 2> "$T/wl.err" &
pids+=($!)
read -r -t 60 line < "$T/wl.fifo" || { echo "not ok daemon-incomplete: workload as nobody: $(cat "$T/wl.err")"; exit 1; }
WPID=${line#pid=}; WPID=${WPID%% *}

SOCK=$T/ctl.sock PROM=$T/numaguard.prom
printf '[global]\ninterval = 300ms\nmin_segment_size = 4M\nsocket = %s\nmetrics_file = %s\n' "$SOCK" "$PROM" > "$T/ng.conf"
polls() { "$CTL" status --json --socket "$SOCK" 2>/dev/null | jq -r '.daemon.polls // 0'; }
wait_polls() { local target=$(( $(polls) + $1 )); until_ok 60 eval '[ "$(polls)" -ge "$target" ]'; }
# start_daemon [SETPRIV ARGS...]
start_daemon() {
        rm -f "$SOCK" "$PROM"
        "$@" "$D" --foreground --config "$T/ng.conf" 2> "$T/stderr" &
        dpid=$!
        until_ok 60 test -S "$SOCK" -a -s "$PROM" || { echo "not ok daemon-incomplete: no socket"; cat "$T/stderr"; exit 1; }
        wait_polls 2
}
stop_daemon() { kill -TERM "$dpid"; wait "$dpid"; dpid=""; }
# the processes of uid 65534 whose maps the daemon could not read, from
# the finding's message and from the metrics file
msg_count() { sed -n 's/.*could not read the memory maps of \([0-9]*\) process.*/\1/p' <<<"$1" | head -1; }
prom_count() { sed -n 's/^numaguard_audit_unreadable_processes{uid="65534"} //p' "$PROM"; }

# ---- no capabilities: uid 0 without CAP_SYS_PTRACE reads no other user's maps
start_daemon setpriv --bounding-set=-all --inh-caps=-all --
"$CTL" status --socket "$SOCK" > "$T/status.txt" 2>&1
# the finding that names the workload (another process of uid 65534 on the
# host is the host's finding, not the instance's)
names_wl() { grep -E "^  warning +AUDIT_INCOMPLETE .*of uid ([0-9]+, )*65534.* pids? ([0-9]+ \([^)]*\), )*$WPID " "$1"; }
line=$(names_wl "$T/status.txt")
n=$(msg_count "$line")
if [ -n "$line" ] && [ "${n:-0}" -ge 2 ] && [[ $line == *"of uid "*65534* ]] && ! grep -q "^Active alerts: 0" "$T/status.txt"; then
        pass "status-text ($n processes)"
else
        fail status-text "no AUDIT_INCOMPLETE alert naming 2 or more processes of uid 65534"; sed 's/^/# /' "$T/status.txt"
fi
"$CTL" status --json --socket "$SOCK" > "$T/status.json" 2>&1
if jq -e --arg p "$WPID" '[.findings[]? // .alerts[]? | select(.code == "AUDIT_INCOMPLETE" and .severity == "warning"
           and (.message | test("of uid ([0-9]+, )*65534"))
           and (.message | test("pids? ([0-9]+ \\([^)]*\\), )*" + $p + " "))
           and (.message | test("numaguard runs as root without CAP_SYS_PTRACE in its effective set")))] | length == 1' \
           "$T/status.json" > /dev/null; then
        pass "status-json (the reason: root without CAP_SYS_PTRACE)"
else
        fail status-json "no AUDIT_INCOMPLETE naming uid 65534 and the reason (root without CAP_SYS_PTRACE)"; head -c 2000 "$T/status.json" | sed 's/^/# /'
fi
p=$(prom_count)
if grep -Eq '^numaguard_findings_active\{code="AUDIT_INCOMPLETE",severity="warning",db_instance="mysql:[^"]*"\} 1$' "$PROM" &&
   [ "${p:-0}" -ge 2 ] && ! grep -q '^numaguard_findings_by_code{code="AUDIT_INCOMPLETE"} 0$' "$PROM"; then
        pass "metrics ($p processes of uid 65534)"
else
        fail metrics "AUDIT_INCOMPLETE or numaguard_audit_unreadable_processes{uid=\"65534\"} missing"
        grep -E "AUDIT_INCOMPLETE|unreadable" "$PROM" | sed 's/^/# /'
fi
# later polls read only what changed: the unread processes stay counted
wait_polls 5
"$CTL" status --socket "$SOCK" > "$T/status2.txt" 2>&1
n2=$(msg_count "$(names_wl "$T/status2.txt")")
p2=$(prom_count)
if [ "${n2:-0}" -ge 2 ] && [ "${p2:-0}" -ge 2 ] && grep -q '^numaguard_poll_full_scan 0$' "$PROM"; then
        pass "steady ($n2 processes in the status, $p2 of uid 65534 in the metrics, a poll without a full scan)"
else
        fail steady "status $n2, metrics $p2 after 5 more polls"; sed 's/^/# /' "$T/status2.txt"
        grep -E "AUDIT_INCOMPLETE|unreadable|full_scan" "$PROM" | sed 's/^/# /'
fi
stop_daemon

# ---- the capabilities back (as numaguardd's unit gives them): uid 65534 read
start_daemon
"$CTL" status --socket "$SOCK" > "$T/status3.txt" 2>&1
if ! grep -E 'AUDIT_INCOMPLETE.*of uid ([0-9]+, )*65534' "$T/status3.txt" > /dev/null && [ -z "$(prom_count)" ]; then
        pass with-capabilities
else
        fail with-capabilities "uid 65534 still unreadable with every capability"; sed 's/^/# /' "$T/status3.txt"
fi
"$CTL" status --json --socket "$SOCK" > "$T/status3.json"
if jq -e --argjson p "$WPID" '[.instances[]? | select(.main_pid == $p)] | length == 1' "$T/status3.json" > /dev/null; then
        pass "with-capabilities-instance (mariadbd $WPID an instance)"
else
        fail with-capabilities-instance "mariadbd $WPID not an instance"; head -c 1500 "$T/status3.json" | sed 's/^/# /'
fi
stop_daemon
exit $((fails > 0))
