#!/usr/bin/env bash
# numaguardd under a service manager's watchdog (WATCHDOG_USEC, NOTIFY_SOCKET
# on a datagram socket this test reads): READY=1, then WATCHDOG=1 several
# times per period while it polls; none without WATCHDOG_USEC.
set -u
echo 1..3
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
D=$B/numaguardd
TREE=tests/fixtures/trees/guest4-v2
[ -x "$D" ] || { echo "not ok watchdog: $D not built"; exit 1; }
command -v python3 > /dev/null || { echo "skip watchdog: python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_PREFIX=watchdog; . tests/shell/lib.sh
printf '[global]\ninterval = 200ms\nmetrics_file =\nsocket = %s/sock\n' "$tmp" > "$tmp/ng.conf"

# listen WATCHDOG_USEC_OR_EMPTY OUT: runs the daemon for 2 s with
# NOTIFY_SOCKET on a socket read by python, the messages into OUT.
listen() {
        python3 - "$tmp/notify" "$2" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); s.settimeout(0.2)
out, end = open(sys.argv[2], "w"), time.time() + 4
while time.time() < end:
    try:
        out.write(s.recv(4096).decode(errors="replace").replace("\n", " ") + "\n"); out.flush()
    except socket.timeout:
        pass
PY
        local py=$!
        for _ in $(seq 50); do [ -S "$tmp/notify" ] && break; sleep 0.05; done
        env ${1:+WATCHDOG_USEC=$1} NOTIFY_SOCKET="$tmp/notify" "$D" --foreground --root "$TREE" \
                --config "$tmp/ng.conf" --alert-log "$tmp/alerts" 2>> "$tmp/stderr" &
        local d=$!
        sleep 2
        kill "$d"; wait "$d"
        wait "$py"
        rm -f "$tmp/notify"
}
listen 1000000 "$tmp/with"
check_expr ready 'grep -q "READY=1" "$tmp/with"' "no READY=1: $(head -3 "$tmp/with")"
n=$(grep -c "^WATCHDOG=1" "$tmp/with")
check_expr pings '[ "$n" -ge 3 ]' "$n WATCHDOG=1 in 2 s with WATCHDOG_USEC=1s (want a few per period): $(tail -3 "$tmp/stderr")"
listen "" "$tmp/without"
check_expr none-without '[ "$(grep -c "^WATCHDOG=1" "$tmp/without")" = 0 ] && grep -q "READY=1" "$tmp/without"' \
        "without WATCHDOG_USEC: $(tr '\n' ' ' < "$tmp/without" | head -c 300)"
[ $fails = 0 ]
