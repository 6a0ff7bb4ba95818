#!/usr/bin/env bash
# Where numaguardd puts its control socket, against users other than root:
# a socket directory such a user can change (world-writable without the
# sticky bit, or owned by that user) is refused at start, naming the
# directory; a root-owned sticky directory is fine, and the socket there
# goes to status_group with mode 0660. The race the refusal closes: user
# nobody swaps a symbolic link to a root-only file in where the socket was
# bound, again and again while numaguardd starts 60 times in nobody's
# directory; the file's owner, group and mode must never change. Something
# at the socket path that is not a socket is named for what it is and left
# alone; a live socket is kept. Every directory above the socket's is held
# to the same rule, reached without following a link: a directory of
# nobody's on the way (nobody's link under it to a root-only directory with
# a stale socket: that socket stays, none is made), a symbolic link on the
# way, a group-writable directory, nobody's directory in a sticky one, and
# a relative --socket below nobody's working directory are refused; a chain
# of root's directories below a sticky one is accepted, its last directory
# made. Root: setpriv to nobody.
set -u
echo 1..12
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
D=$B/numaguardd CTL=$B/numaguardctl
TREE=tests/fixtures/trees/guest4-v2
[ -x "$D" ] && [ -x "$CTL" ] || { echo "not ok socket-dir: $D or $CTL not built"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "skip socket-dir: needs root (chown, setpriv to nobody)"; exit 77; }
command -v setpriv > /dev/null && command -v python3 > /dev/null && getent group nogroup > /dev/null &&
        getent passwd nobody > /dev/null ||
        { echo "skip socket-dir: needs setpriv, python3, user nobody and group nogroup"; exit 77; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
nobody=$(id -u nobody)
gid=$(getent group nogroup | cut -d: -f3)
tmp=$(mktemp -d)
chmod 755 "$tmp"
dpid="" apid=""
cleanup() {
        [ -n "$apid" ] && kill "$apid" 2>/dev/null && wait "$apid" 2>/dev/null
        [ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
TAP_PREFIX=socket-dir; . tests/shell/lib.sh

# The test directory's own ancestors must pass what is tested here.
p=$tmp
while [ "$p" != / ]; do
        p=$(dirname "$p")
        read -r u m < <(stat -c '%u %a' "$p")
        m=$((8#$m))
        if [ -L "$p" ] || [ "$u" != 0 ] || { [ $((m & 8#022)) != 0 ] && [ $((m & 8#1000)) = 0 ]; }; then
                skip_all "the test directory $tmp is below $p (uid $u, mode $(stat -c %a "$p")), which numaguardd refuses; set TMPDIR to a directory only root changes"
        fi
done

# start DIR: numaguardd with its socket DIR/ctl.sock in the background ($dpid).
start() {
        printf '[global]\ninterval = 1s\nmetrics_file =\nsocket = %s/ctl.sock\nstatus_group = nogroup\n' "$1" \
                > "$tmp/ng.conf"
        "$D" --foreground --root "$TREE" --config "$tmp/ng.conf" --alert-log "$tmp/alerts" 2> "$tmp/stderr" &
        dpid=$!
}
# refused DIR: numaguardd exits within 5 s, non-zero ($rc), having said why.
refused() {
        start "$1"
        for _ in $(seq 50); do kill -0 "$dpid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$dpid" 2>/dev/null; then kill "$dpid"; wait "$dpid"; dpid=""; rc=running; return; fi
        wait "$dpid"; rc=$?; dpid=""
}

mkdir -m 0777 "$tmp/open"
chmod 0777 "$tmp/open"
refused "$tmp/open"
check_expr refuse-world-writable '[ "$rc" = 1 ] && grep -q "directory $tmp/open (mode 0777) is writable by others" "$tmp/stderr" &&
        [ ! -e "$tmp/open/ctl.sock" ]' "exit $rc: $(tail -2 "$tmp/stderr")"

mkdir "$tmp/users"
chown "$nobody" "$tmp/users"
refused "$tmp/users"
check_expr refuse-foreign-owner '[ "$rc" = 1 ] && grep -q "directory $tmp/users is owned by uid $nobody, not root" "$tmp/stderr"' \
        "exit $rc: $(tail -2 "$tmp/stderr")"

mkdir "$tmp/sticky"
chmod 1777 "$tmp/sticky"
start "$tmp/sticky"
for _ in $(seq 50); do "$CTL" status --socket "$tmp/sticky/ctl.sock" > /dev/null 2>&1; [ $? -le 2 ] && break; sleep 0.1; done
"$CTL" status --socket "$tmp/sticky/ctl.sock" > /dev/null 2>&1; st=$?
check_expr sticky-root-dir '[ "$st" -le 2 ] && [ "$(stat -c "%u:%g %a %F" "$tmp/sticky/ctl.sock")" = "0:$gid 660 socket" ]' \
        "status exit $st; socket $(stat -c "%u:%g %a %F" "$tmp/sticky/ctl.sock" 2>&1); $(tail -2 "$tmp/stderr")"
first=$dpid
refused "$tmp/sticky"
"$CTL" status --socket "$tmp/sticky/ctl.sock" > /dev/null 2>&1; st=$?
check_expr live-socket-kept '[ "$rc" = 1 ] && grep -q "$tmp/sticky/ctl.sock is in use by a running numaguardd" "$tmp/stderr" &&
        [ "$st" -le 2 ]' "exit $rc, status then exit $st: $(tail -2 "$tmp/stderr")"
kill "$first"; wait "$first"

printf 'keep\n' > "$tmp/sticky/ctl.sock"
chmod 0640 "$tmp/sticky/ctl.sock"
refused "$tmp/sticky"
check_expr stale-regular-file '[ "$rc" = 1 ] && grep -q "$tmp/sticky/ctl.sock is a regular file, not a socket" "$tmp/stderr" &&
        [ "$(cat "$tmp/sticky/ctl.sock")" = keep ] && ! grep -q "in use by a running" "$tmp/stderr"' \
        "exit $rc: $(tail -2 "$tmp/stderr")"

# Directories above the socket's. nobody owns np and links np/sock to a
# directory only root reads, where an earlier run left its socket.
mkdir -m 0700 "$tmp/rootonly"
"$PY" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/rootonly/ctl.sock"
stale=$(stat -c '%i %u:%g %a %F' "$tmp/rootonly/ctl.sock")
mkdir "$tmp/np"
chown "$nobody" "$tmp/np"
setpriv --reuid="$nobody" --regid="$gid" --clear-groups ln -s "$tmp/rootonly" "$tmp/np/sock"
refused "$tmp/np/sock"
check_expr refuse-ancestor-foreign-owner '[ "$rc" = 1 ] &&
        grep -q "directory $tmp/np is owned by uid $nobody, not root: that user could put a link on the way to the socket directory $tmp/np/sock" "$tmp/stderr" &&
        [ "$(stat -c "%i %u:%g %a %F" "$tmp/rootonly/ctl.sock")" = "$stale" ]' \
        "exit $rc, stale socket $stale now $(stat -c '%i %u:%g %a %F' "$tmp/rootonly/ctl.sock" 2>&1): $(tail -2 "$tmp/stderr")"

mkdir -p "$tmp/real/sock"
ln -s real "$tmp/via"
refused "$tmp/via/sock"
check_expr refuse-ancestor-link '[ "$rc" = 1 ] && grep -q "$tmp/via is a symbolic link (to real)" "$tmp/stderr" &&
        [ ! -e "$tmp/real/sock/ctl.sock" ]' "exit $rc: $(tail -2 "$tmp/stderr")"

mkdir -p "$tmp/gw/sock"
chgrp nogroup "$tmp/gw"
chmod 0775 "$tmp/gw"
refused "$tmp/gw/sock"
check_expr refuse-ancestor-group-writable '[ "$rc" = 1 ] &&
        grep -q "directory $tmp/gw (mode 0775) is writable by its group without the sticky bit: a user could put a link on the way" "$tmp/stderr" &&
        [ ! -e "$tmp/gw/sock/ctl.sock" ]' "exit $rc: $(tail -2 "$tmp/stderr")"

mkdir -p "$tmp/sticky/np/sock"
chown "$nobody" "$tmp/sticky/np"
refused "$tmp/sticky/np/sock"
check_expr refuse-foreign-below-sticky '[ "$rc" = 1 ] &&
        grep -q "directory $tmp/sticky/np is owned by uid $nobody, not root" "$tmp/stderr" &&
        [ ! -e "$tmp/sticky/np/sock/ctl.sock" ]' "exit $rc: $(tail -2 "$tmp/stderr")"

# --socket relative to a working directory of nobody's: rel is not made.
printf '[global]\nmetrics_file =\n' > "$tmp/rel.conf"
Dabs=$(realpath "$D") Tabs=$(realpath "$TREE")
(cd "$tmp/np" && exec timeout 5 "$Dabs" --foreground --root "$Tabs" --config "$tmp/rel.conf" \
        --alert-log "$tmp/alerts" --socket rel/ctl.sock) 2> "$tmp/stderr"; rc=$?
check_expr relative-socket-checked '[ "$rc" = 1 ] && grep -q "directory $tmp/np is owned by uid $nobody, not root" "$tmp/stderr" &&
        [ ! -e "$tmp/np/rel" ]' "exit $rc: $(tail -2 "$tmp/stderr")"

mkdir -p "$tmp/sticky/deep/er"
start "$tmp/sticky/deep/er/new"
for _ in $(seq 50); do "$CTL" status --socket "$tmp/sticky/deep/er/new/ctl.sock" > /dev/null 2>&1; [ $? -le 2 ] && break; sleep 0.1; done
"$CTL" status --socket "$tmp/sticky/deep/er/new/ctl.sock" > /dev/null 2>&1; st=$?
check_expr root-chain-accepted '[ "$st" -le 2 ] && [ "$(stat -c "%u %a" "$tmp/sticky/deep/er/new")" = "0 755" ] &&
        [ "$(stat -c "%u:%g %a %F" "$tmp/sticky/deep/er/new/ctl.sock")" = "0:$gid 660 socket" ]' \
        "status exit $st; $(stat -c "%u:%g %a %F" "$tmp/sticky/deep/er/new/ctl.sock" 2>&1); $(tail -2 "$tmp/stderr")"
kill "$dpid"; wait "$dpid"; dpid=""

# The race: nobody's directory, nobody's loop.
printf 'root only\n' > "$tmp/secret"
chmod 0600 "$tmp/secret"
before=$(stat -c '%u:%g %a' "$tmp/secret")
mkdir "$tmp/hostile"
chown "$nobody" "$tmp/hostile"
setpriv --reuid="$nobody" --regid="$gid" --clear-groups "$PY" - "$tmp/hostile/ctl.sock" "$tmp/secret" \
        > "$tmp/swapper.out" 2>&1 <<'PY' &
import os, stat, sys, time
sock, target = sys.argv[1], sys.argv[2]
link, swaps, end = sock + ".lnk", 0, time.time() + 120
while time.time() < end and not os.path.exists(sock + ".stop"):
    try:
        st = os.lstat(sock)
    except FileNotFoundError:
        continue
    if not stat.S_ISSOCK(st.st_mode):
        continue
    try:
        os.symlink(target, link)
    except FileExistsError:
        pass
    os.rename(link, sock)           # root's chown/chmod by path now follow it
    swaps += 1
    time.sleep(0.005)
    try:
        os.unlink(sock)             # out of the way of the next start
    except FileNotFoundError:
        pass
print("swaps", swaps)
PY
apid=$!
sleep 0.3
changed=""
for i in $(seq 60); do
        start "$tmp/hostile"
        for _ in $(seq 200); do
                kill -0 "$dpid" 2>/dev/null || break
                [ -e "$tmp/hostile/ctl.sock" ] && break
                sleep 0.005
        done
        sleep 0.02
        kill "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; dpid=""
        now=$(stat -c '%u:%g %a' "$tmp/secret")
        [ "$now" = "$before" ] || { changed="start $i: $tmp/secret went from $before to $now"; break; }
done
: > "$tmp/hostile/ctl.sock.stop" 2>/dev/null || touch "$tmp/hostile/ctl.sock.stop"
wait "$apid"; apid=""
check_expr race-target-untouched '[ -z "$changed" ] && [ "$(stat -c "%u:%g %a" "$tmp/secret")" = "$before" ]' \
        "$changed (swapper: $(cat "$tmp/swapper.out"))"
[ $fails = 0 ]
