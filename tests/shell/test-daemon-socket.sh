#!/usr/bin/env bash
# The control socket under pressure from users other than root: a member of
# status_group reconnecting in a loop holds at most 8 connections and never
# pushes out root (30 of 30 root `status` calls answer) nor another user
# (whose connections end by their own deadline, "error timeout", not
# "error busy"); a request over 4096 bytes gets "error request too large"
# and a clean end of file, not a reset. Root: setpriv to other uids.
set -u
echo 1..5
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
D=$B/numaguardd CTL=$B/numaguardctl
TREE=tests/fixtures/trees/guest4-v2
[ -x "$D" ] && [ -x "$CTL" ] || { echo "not ok socket: $D or $CTL not built"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "skip socket: needs root (setpriv to other uids)"; exit 77; }
command -v setpriv > /dev/null && command -v python3 > /dev/null && getent group nogroup > /dev/null ||
        { echo "skip socket: needs setpriv, python3 and group nogroup"; exit 77; }
gid=$(getent group nogroup | cut -d: -f3)
# The other uids need a python3 they may run (not one under /root).
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
tmp=$(mktemp -d)
chmod 755 "$tmp"
dpid=""
cleanup() { [ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
TAP_PREFIX=socket; . tests/shell/lib.sh
SOCK=$tmp/ctl.sock

printf '[global]\ninterval = 1s\nmetrics_file =\nsocket = %s\nstatus_group = nogroup\n' "$SOCK" > "$tmp/ng.conf"
"$D" --foreground --root "$TREE" --config "$tmp/ng.conf" --alert-log "$tmp/alerts" 2> "$tmp/stderr" &
dpid=$!
for _ in $(seq 50); do "$CTL" status --socket "$SOCK" > /dev/null 2>&1; [ $? -le 2 ] && break; sleep 0.1; done

as_user() {     # as_user UID SCRIPT ARGS...: python3 as UID in status_group
        local uid=$1; shift
        setpriv --reuid="$uid" --regid="$uid" --groups="$gid" "$PY" - "$SOCK" "$@"
}

# uid 4343 holds 6 idle connections while uid 4242 floods.
as_user 4343 > "$tmp/other.out" 2>&1 <<'PY' &
import socket, sys
conns = []
for _ in range(6):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(8); conns.append(s)
for s in conns:
    try:
        print(s.recv(100))
    except Exception as e:
        print("exception", e)
PY
other=$!
sleep 0.3
as_user 4242 > "$tmp/flood.out" 2>&1 <<'PY' &
import socket, sys, time
held, busy, end = [], 0, time.time() + 1.5
while time.time() < end:
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.setblocking(False); held.append(s)
    held = held[-40:]
    for k in held:
        try:
            if k.recv(100).startswith(b"error busy"):
                busy += 1
        except BlockingIOError:
            pass
        except OSError:
            pass
    time.sleep(0.002)
print("busy", busy)
PY
flood=$!
ok=0
for _ in $(seq 30); do
        "$CTL" status --socket "$SOCK" > /dev/null 2>&1
        [ $? -le 2 ] && ok=$((ok + 1))
done
wait "$flood"
wait "$other"
check_expr root-not-locked-out '[ "$ok" = 30 ]' "$ok of 30 root status calls answered while uid 4242 flooded"
check_expr flooder-capped 'grep -qE "^busy [1-9]" "$tmp/flood.out"' "uid 4242 was never refused: $(cat "$tmp/flood.out")"
check_expr other-user-kept '[ "$(grep -c "error timeout" "$tmp/other.out")" = 6 ]' \
        "uid 4343's connections: $(tr '\n' ' ' < "$tmp/other.out")"

python3 - "$SOCK" > "$tmp/large.out" 2>&1 <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
s.sendall(b"x" * 200000)
out = b""
try:
    while True:
        x = s.recv(65536)
        if not x: break
        out += x
    print("answer", out)
except ConnectionResetError:
    print("reset", out)
PY
check_expr too-large-clean 'grep -qx "answer b.error request too large\\\\n." "$tmp/large.out"' "$(cat "$tmp/large.out")"
check_expr alive 'kill -0 $dpid' "numaguardd died: $(tail -3 "$tmp/stderr")"
[ $fails = 0 ]
