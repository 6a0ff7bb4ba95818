#!/usr/bin/env bash
# numaguardd in the foreground on a copy of a fixture tree that the test
# changes between polls: one alert raised, then cleared once; the metrics
# file parsed and checked; SIGHUP with a valid and a broken config; status
# over the socket, and refused for a uid outside status_group; a malformed, a
# huge and a slow request; SIGTERM exits 0 (under BUILD=build-san that also
# means LeakSanitizer found no leak) and leaves a metrics file that says it
# stopped on purpose; journald fields where journald runs.
# BUILD: build directory (default build).
set -u
echo 1..41
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
D=$B/numaguardd CTL=$B/numaguardctl
TREE=$SRC/tests/fixtures/trees/guest4-v2
[ -x "$D" ] && [ -x "$CTL" ] || { echo "not ok daemon: $D or $CTL not built"; exit 1; }
[ -d "$TREE/proc" ] || { echo "not ok daemon: committed fixture tree $TREE missing"; exit 1; }
command -v jq > /dev/null || { echo "skip daemon: jq not installed"; exit 77; }

tmp=$(mktemp -d)
chmod 755 "$tmp"        # the socket must be reachable for the uid tests
pid=""
cleanup() { [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
TAP_PREFIX=daemon; . "$SRC/tests/shell/lib.sh"
jqe() { jq -e "$@" > /dev/null; }

cp -a "$TREE" "$tmp/root"
SOCK=$tmp/ctl.sock PROM=$tmp/numaguard.prom ALERTS=$tmp/alerts.jsonl CONF=$tmp/numaguard.conf
write_conf() {
        cat > "$CONF" <<CONF
[global]
interval = $1
min_segment_size = 1M
socket = $SOCK
metrics_file = $PROM
status_group = nogroup
CONF
}
write_conf 200ms

# The cyclops the test plays with: SysV shmid 0, which the capture's workload
# made and touched whole under numactl --membind=3 (tests/fixtures/trees/
# README.md); its pid and size come from the workload's own report line in
# the tree's capture log, not from numaguard.
INST=unclaimed:shmid-0 CNODE=3
line=$(grep -m1 '^# sysv-bind3: pid=' "$TREE/numaguard/capture.log")
[[ $line =~ \ pid=([0-9]+)\ kind=sysv\ shmid=0\ .*\ bytes=([0-9]+) ]] ||
        { echo "not ok daemon-fixture: no sysv-bind3 report line in $TREE/numaguard/capture.log"; exit 1; }
CPID=${BASH_REMATCH[1]} CBYTES=${BASH_REMATCH[2]}

# until TIMEOUT_S CMD...: polls CMD every 0.1 s.
until_ok() {
        local t=$(( $1 * 10 )); shift
        while ((t-- > 0)); do "$@" && return 0; sleep 0.1; done
        return 1
}
count() { grep -c "$1" "$ALERTS" 2>/dev/null || true; }
CYC='"NUMAGUARD_CODE":"CYCLOPS","NUMAGUARD_INSTANCE":"'$INST'"'
alerts_for() { grep "\"NUMAGUARD_EVENT\":\"$1\"" "$ALERTS" | grep -c "$CYC"; }
polls() { "$CTL" status --json --socket "$SOCK" 2>/dev/null | jq -r .daemon.polls; }
wait_polls() { local target=$(( $(polls) + $1 )); until_ok 10 eval '[ "$(polls)" -ge "$target" ]'; }

"$D" --foreground --root "$tmp/root" --config "$CONF" --alert-log "$ALERTS" 2> "$tmp/stderr" &
pid=$!
if ! until_ok 10 test -S "$SOCK" -a -s "$PROM"; then
        fail start "no socket or metrics file after 10 s"; cat "$tmp/stderr"; exit 1
fi
pass start
wait_polls 3

# ---- alert raised once, with the journal's fields
check alert-raised-once "CYCLOPS raised $(alerts_for raised) times" test "$(alerts_for raised)" = 1
line=$(grep '"NUMAGUARD_EVENT":"raised"' "$ALERTS" | grep "$CYC")
check alert-fields "fields of: $line" jqe '.MESSAGE_ID == "e87985b89b7c4cf1ab08905f0454e2fd" and
        .PRIORITY == "4" and .NUMAGUARD_NODES == "'$CNODE'" and .NUMAGUARD_SEVERITY == "warning" and
        .NUMAGUARD_VALUE == "1" and (.MESSAGE | startswith("CYCLOPS raised")) and
        (.NUMAGUARD_RAISED_USEC | tonumber > 0)' <<<"$line"
check alert-no-duplicates "some key raised twice" \
        test "$(grep '"raised"' "$ALERTS" | jq -r '[.NUMAGUARD_CODE,.NUMAGUARD_INSTANCE,.NUMAGUARD_NODES]|join("/")' | sort | uniq -d)" = ""

# ---- metrics file: syntax, values, no temporary files left
bad=$(grep -vE '^(# (HELP|TYPE) numaguard_[a-z_]+ .+|numaguard_[a-z_]+(\{[a-z_]+="([^"\\]|\\.)*"(,[a-z_]+="([^"\\]|\\.)*")*\})? [0-9]+(\.[0-9]+)?)$' "$PROM")
check metrics-syntax "bad lines: $bad" test -z "$bad"
m() { grep -qxF "$1" "$PROM" || { echo "# missing: $1"; return 1; }; }
check metrics-values "values differ from the tree" eval '
        m "numaguard_up 1" &&
        grep -qE "^numaguard_build_info\{version=\"[0-9]+\.[0-9]+\.[0-9]+\"\} 1$" "$PROM" &&
        m "numaguard_nodes 4" &&
        m "numaguard_node_hugepages{node=\"1\",page_size_bytes=\"2097152\"} 8" &&
        m "numaguard_node_hugepages_free{node=\"1\",page_size_bytes=\"2097152\"} 4" &&
        m "numaguard_instance_resident_bytes{db_instance=\"$INST\",node=\"$CNODE\"} $CBYTES" &&
        m "numaguard_findings_active{code=\"CYCLOPS\",severity=\"warning\",db_instance=\"$INST\"} 1" &&
        m "numaguard_findings_by_code{code=\"REMOTE_MEMORY\"} 1" &&
        grep -qE "^numaguard_polls_total [1-9][0-9]*$" "$PROM" &&
        grep -qE "^numaguard_poll_files_read [1-9][0-9]*$" "$PROM" &&
        grep -qE "^numaguard_poll_duration_seconds 0\.[0-9]{6}$" "$PROM"'
check metrics-atomic "temporary files left: $(ls "$tmp"/numaguard.prom.* 2>/dev/null)" \
        eval '! ls "$tmp"/numaguard.prom.?????? > /dev/null 2>&1'

# ---- status over the socket (piped: ASCII bars)
out=$("$CTL" status --socket "$SOCK"); rc=$?
check status-exit "exit $rc, expected 2 (a critical REMOTE_MEMORY is active)" test "$rc" = 2
check status-text "text: $out" eval 'grep -q "^Last poll: .* ms wall" <<<"$out" &&
        grep -q "^Topology: 4 node(s)" <<<"$out" &&
        grep -qE "^  $INST \(unclaimed, pid $CPID\)" <<<"$out" &&
        grep -qE "^    N$CNODE +#{20} 100%" <<<"$out" &&
        grep -qE "^  warning +CYCLOPS $INST nodes $CNODE since [0-9-]+ [0-9:]+ " <<<"$out"'
"$CTL" status --json --socket "$SOCK" > "$tmp/status.json"
check status-json "$(head -c 300 "$tmp/status.json")" jqe '.schema == 1 and (.findings | length > 0) and
        (.instances | length) == 6 and .daemon.polls >= 3 and .daemon.interval_usec == 200000 and
        .daemon.last_poll.files_read > 0 and .daemon.alert_sink == "file" and
        ([.daemon.alerts[] | select(.code == "CYCLOPS" and .instance == "'$INST'" and
          .nodes == ['$CNODE'] and .raised_usec > 0)] | length) == 1' "$tmp/status.json"
# The same schema as `audit --json`: the same top-level keys plus "daemon".
"$CTL" audit --json --root "$tmp/root" --config "$CONF" > "$tmp/audit.json"
check status-json-schema "keys differ" test \
        "$(jq -c '[keys[] | select(. != "daemon")]' "$tmp/status.json")" = "$(jq -c keys "$tmp/audit.json")"

# ---- the segment is spread out: CYCLOPS clears once, after the damping polls
# Spread the segment's pages over the four nodes in the representative's numa_maps.
nm=$tmp/root/proc/$CPID/numa_maps
awk -v n="$CNODE" '/SYSV/ && $0 ~ " N" n "=" {
        for (i = 1; i <= NF; i++) if ($i ~ "^N" n "=") { c = substr($i, length(n) + 3); q = int(c / 4)
                $i = sprintf("N0=%d N1=%d N2=%d N3=%d", q, q, q, c - 3 * q) } } { print }' "$nm" > "$nm.new"
mv "$nm.new" "$nm"
until_ok 10 eval '[ "$(alerts_for cleared)" = 1 ]'
wait_polls 3
check alert-cleared-once "cleared $(alerts_for cleared) times, raised $(alerts_for raised)" \
        test "$(alerts_for cleared)" = 1 -a "$(alerts_for raised)" = 1
line=$(grep '"NUMAGUARD_EVENT":"cleared"' "$ALERTS" | grep "$CYC")
check alert-cleared-fields "$line" jqe '.MESSAGE_ID == "4491951522f942d38dd118ae985ee4f0" and
        .PRIORITY == "5" and (.NUMAGUARD_CLEARED_USEC | tonumber) >= (.NUMAGUARD_RAISED_USEC | tonumber)' \
        <<<"$line"
check alert-cleared-status "still listed" eval '"$CTL" status --json --socket "$SOCK" |
        jq -e "[.daemon.alerts[] | select(.instance == \"$INST\" and .code == \"CYCLOPS\")] | length == 0" > /dev/null'
check metrics-follow "metrics did not follow the tree" \
        m "numaguard_instance_resident_bytes{db_instance=\"$INST\",node=\"0\"} $(( CBYTES / 4096 / 4 * 4096 ))"

# ---- SIGHUP: a valid config is swapped in, a broken one keeps the old
write_conf 300ms
kill -HUP "$pid"
check reload-valid "interval not 300ms after SIGHUP" until_ok 5 eval \
        '"$CTL" status --json --socket "$SOCK" | jq -e ".daemon.interval_usec == 300000 and .daemon.reloads == 1" > /dev/null'
printf 'interval = soon\n' >> "$CONF"
errs_before=$(grep -c 'Reload failed' "$tmp/stderr")
kill -HUP "$pid"
until_ok 5 eval '[ "$(grep -c "Reload failed" "$tmp/stderr")" -gt "$errs_before" ]'
sleep 0.5
check reload-broken-one-error "$(grep 'Reload failed' "$tmp/stderr")" eval \
        'test "$(grep -c "Reload failed" "$tmp/stderr")" = 1 &&
         grep -q "Reload failed, keeping the running configuration: $CONF:7: " "$tmp/stderr"'
check reload-broken-keeps-old "config changed or daemon died" eval \
        '"$CTL" status --json --socket "$SOCK" | jq -e ".daemon.interval_usec == 300000 and .daemon.reload_failures == 1 and (.daemon.last_reload_error | test(\":7: \"))" > /dev/null'
err=$("$CTL" reload --socket "$SOCK" 2>&1); rc=$?
check reload-ctl-broken "exit $rc: $err" eval 'test $rc = 3 && grep -q "$CONF:7:" <<<"$err"'
write_conf 200ms
err=$("$CTL" reload --socket "$SOCK" 2>&1); rc=$?
check reload-ctl-valid "exit $rc: $err" eval 'test $rc = 0 && grep -q "^reloaded $CONF" <<<"$err"'

# ---- SO_PEERCRED: status_group members read, nobody else; only root writes
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && getent group nogroup > /dev/null; then
        gid=$(getent group nogroup | cut -d: -f3)
        check socket-mode "$(stat -c '%a %G' "$SOCK")" test "$(stat -c '%a %g' "$SOCK")" = "660 $gid"
        out=$(setpriv --reuid=4242 --regid=4242 --groups="$gid" "$CTL" status --socket "$SOCK" 2>&1); rc=$?
        check status-group-member "exit $rc: $out" eval '[ $rc != 3 ] && grep -q "^Last poll" <<<"$out"'
        out=$(setpriv --reuid=4242 --regid=4242 --clear-groups "$CTL" status --socket "$SOCK" 2>&1); rc=$?
        check status-refused-outsider "exit $rc: $out" eval '[ $rc = 3 ] && grep -q "permission denied on $SOCK: only root and members of status_group \"nogroup\" may ask" <<<"$out"'
        out=$(setpriv --reuid=4242 --regid=4242 --groups="$gid" "$CTL" reload --socket "$SOCK" 2>&1); rc=$?
        check reload-refused-member "exit $rc: $out" eval '[ $rc = 3 ] && grep -q "permission denied: only root" <<<"$out"'
else
        for n in socket-mode status-group-member status-refused-outsider reload-refused-member; do
                echo "skip daemon-$n: needs root, setpriv and group nogroup"
        done
fi

# ---- malformed, huge and slow requests: an error, never a stall
if command -v python3 > /dev/null; then
        python3 - "$SOCK" "$CTL" > "$tmp/py.out" 2>&1 <<'PY'
import socket, subprocess, sys, time
path, ctl = sys.argv[1], sys.argv[2]
def ask(data, wait=10):
    s = socket.socket(socket.AF_UNIX); s.settimeout(wait); s.connect(path)
    if data: s.sendall(data)
    out = b""
    try:
        while True:
            x = s.recv(65536)
            if not x: break
            out += x
    except ConnectionResetError:
        pass
    return out
print("huge", ask(b"x" * 100000)[:40])
print("malformed", ask(b"status\x00\xff please\n")[:40])
print("binary", ask(b"\n")[:40])
slow = [socket.socket(socket.AF_UNIX) for _ in range(40)]
for s in slow: s.connect(path)
t = time.time()
r = subprocess.run([ctl, "status", "--json", "--socket", path], capture_output=True)
print("while-slow", r.returncode, "%.1f" % (time.time() - t))
print("evicted", slow[0].recv(100))
slow[-1].settimeout(10); t = time.time()
print("slow", slow[-1].recv(100), "%.1f" % (time.time() - t))
PY
        out=$(cat "$tmp/py.out")
        check request-huge "$out" grep -q "^huge b'error request too large" "$tmp/py.out"
        check request-malformed "$out" grep -q "^malformed b'error malformed request" "$tmp/py.out"
        check request-empty "$out" grep -q "^binary b'error unknown request" "$tmp/py.out"
        # 40 idle connections: the oldest are dropped, the loop still answers.
        check request-not-stalled "$out" grep -qE "^while-slow [0-2] [0-1]\.[0-9]$" "$tmp/py.out"
        check request-evicted "$out" grep -q "^evicted b'error busy" "$tmp/py.out"
        check request-slow-timeout "$out" grep -qE "^slow b'error timeout\\\\n' [1-3]\.[0-9]$" "$tmp/py.out"
else
        for n in huge malformed empty not-stalled evicted slow-timeout; do
                echo "skip daemon-request-$n: python3 not installed"
        done
fi
check alive "numaguardd died" kill -0 "$pid"

# ---- a second daemon on the same socket refuses to start
"$D" --root "$tmp/root" --config "$CONF" --alert-log "$tmp/a2" 2> "$tmp/stderr2"; rc=$?
check second-instance "exit $rc: $(cat "$tmp/stderr2")" eval '[ $rc = 1 ] && grep -q "in use" "$tmp/stderr2"'

# ---- SIGTERM: exit 0 (with ASan: no leak), socket removed
kill -TERM "$pid"
wait "$pid"; rc=$?
pid=""
check sigterm "exit $rc; stderr: $(tail -5 "$tmp/stderr")" test "$rc" = 0
check socket-removed "socket left behind" test ! -e "$SOCK"
# stopped on purpose: up 0, when, the last poll; no series of that poll
check metrics-stopped "$(head -c 600 "$PROM")" eval 'm "numaguard_up 0" &&
        grep -qE "^numaguard_stopped_timestamp_seconds [0-9]+\.[0-9]{6}$" "$PROM" &&
        grep -qE "^numaguard_last_poll_timestamp_seconds [0-9]+\.[0-9]{6}$" "$PROM" &&
        ! grep -qE "^numaguard_(findings_active|nodes|polls_total)" "$PROM" &&
        ! ls "$tmp"/numaguard.prom.?????? > /dev/null 2>&1'
out=$("$CTL" status --socket "$SOCK" 2>&1); rc=$?
check status-not-running "exit $rc: $out" eval '[ $rc = 3 ] && grep -q "numaguardd is not running" <<<"$out"'

# ---- --once; config errors exit 78 (the unit does not restart on it)
rm -f "$ALERTS"
"$D" --once --root "$tmp/root" --config "$CONF" --alert-log "$ALERTS" 2> /dev/null; rc=$?
check once "exit $rc, $(count raised) alerts; $(grep -E "^numaguard_(up|nodes) " "$PROM" | tr '\n' ' ')" \
        eval '[ $rc = 0 ] && [ "$(count raised)" -gt 0 ] && [ ! -e "$SOCK" ] &&
              m "numaguard_up 0" && m "numaguard_nodes 4"'
printf '[global]\ninterval = never\n' > "$tmp/bad.conf"
"$D" --once --root "$tmp/root" --config "$tmp/bad.conf" 2> "$tmp/stderr3"; rc=$?
check config-error-exit "exit $rc: $(cat "$tmp/stderr3")" eval '[ $rc = 78 ] && grep -q "bad.conf:2:" "$tmp/stderr3"'
"$D" --once --root "$tmp/root" --config "$tmp/missing.conf" 2> /dev/null; rc=$?
check config-missing-exit "exit $rc" test "$rc" = 78
"$D" --frobnicate 2> /dev/null; rc=$?
check usage-exit "exit $rc" test "$rc" = 2

# ---- journald: the fields as journalctl shows them
if [ -S /run/systemd/journal/socket ] && command -v journalctl > /dev/null && [ "$(id -u)" = 0 ]; then
        "$D" --once --root "$tmp/root" --config "$CONF" 2> /dev/null & jpid=$!
        wait "$jpid"
        sleep 1
        journalctl -o json _PID="$jpid" MESSAGE_ID=e87985b89b7c4cf1ab08905f0454e2fd > "$tmp/journal.json" 2> /dev/null
        check journald-fields "$(head -c 300 "$tmp/journal.json")" jqe -s 'length >= 1 and
                (map(select(.NUMAGUARD_INSTANCE == "'$INST'")) | .[0] |
                 .NUMAGUARD_CODE == "CYCLOPS" and .NUMAGUARD_NODES == "'$CNODE'" and .PRIORITY == "4" and
                 .NUMAGUARD_SEVERITY == "warning")' "$tmp/journal.json"
elif [ "$(id -u)" = 0 ] && command -v unshare > /dev/null && command -v python3 > /dev/null; then
        # No journald: a stand-in on journald's socket path in a private mount
        # namespace decodes the native protocol (sd_journal_sendv datagrams).
        cat > "$tmp/fakejournald.py" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/run/systemd/journal/socket")
open(sys.argv[1] + ".ready", "w").close()
s.settimeout(10)
with open(sys.argv[1], "w") as out:
    try:
        while True:
            d, e = s.recv(1 << 20), {}
            while d:
                line, _, rest = d.partition(b"\n")
                if b"=" in line:
                    k, _, v = line.partition(b"=")
                    e[k.decode()] = v.decode()
                    d = rest
                else:   # binary field: KEY\n<le64 size><value>\n
                    n = int.from_bytes(rest[:8], "little")
                    e[line.decode()] = rest[8:8 + n].decode()
                    d = rest[9 + n:]
            out.write(json.dumps(e) + "\n"); out.flush()
    except socket.timeout:
        pass
PY
        unshare -m sh -c '
                mount -t tmpfs none /run && mkdir -p /run/systemd/journal || exit 1
                python3 "$1/fakejournald.py" "$1/journal.jsonl" & j=$!
                while [ ! -e "$1/journal.jsonl.ready" ]; do sleep 0.1; done
                "$2" --once --root "$1/root" --config "$1/numaguard.conf" 2> "$1/stderr4"
                echo "rc=$?" >> "$1/stderr4"
                kill $j' sh "$tmp" "$D"
        line=$(grep "\"NUMAGUARD_INSTANCE\": \"$INST\"" "$tmp/journal.jsonl" 2> /dev/null | grep '"CYCLOPS"' | head -1)
        check journald-fields "$(cat "$tmp/stderr4"): $line" jqe '.MESSAGE_ID == "e87985b89b7c4cf1ab08905f0454e2fd" and
                .NUMAGUARD_CODE == "CYCLOPS" and .NUMAGUARD_NODES == "'$CNODE'" and .PRIORITY == "4" and
                .NUMAGUARD_SEVERITY == "warning" and .NUMAGUARD_EVENT == "raised" and
                .SYSLOG_IDENTIFIER == "numaguardd"' <<<"$line"
else
        echo "skip daemon-journald-fields: no journald, and no root/unshare/python3 for a stand-in (fields checked through the file sink above)"
fi

exit $((fails > 0))
