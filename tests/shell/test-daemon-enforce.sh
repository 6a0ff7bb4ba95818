#!/usr/bin/env bash
# numaguardd in enforce mode on a copy of the 4-node guest tree, whose
# /oracle cgroup has its CPUs on node 0 and its memory on node 3
# (REMOTE_MEMORY): the daemon rewrites cpuset.mems once, logs it with the
# cpuset MESSAGE_ID, and does not act again within the cooldown. A target
# that fails permanently is tried once and left unmanaged.
set -u
echo 1..7
TAP_PREFIX=enforce; . "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
D=$B/numaguardd CTL=$B/numaguardctl
TREE=tests/fixtures/trees/guest4-v2
[ -x "$D" ] && [ -x "$CTL" ] || { echo "not ok enforce: $D or $CTL not built"; exit 1; }
command -v jq > /dev/null || { echo "not ok enforce: jq not installed"; exit 1; }
[ -d "$TREE/sys" ] || { echo "not ok enforce: committed fixture tree $TREE missing"; exit 1; }
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

# until_ok SECONDS CMD...: CMD every 0.1 s until it succeeds
until_ok() { local t=$(($1 * 10)); shift; while ((t-- > 0)); do "$@" && return 0; sleep 0.1; done; return 1; }
polls() { "$CTL" status --json --socket "$tmp/sock" 2>/dev/null | jq -r '.daemon.polls // 0'; }
# run [PREPARE...]: the daemon on a fresh copy of the tree, after PREPARE has
# adjusted the copy or the config, until it reports 15 polls at 100 ms
# (the first poll acts; the 14 after it must not) on its own socket.
run() {
        rm -rf "$tmp/root" && cp -a "$TREE" "$tmp/root"
        printf '[global]\ninterval = 100ms\nmode = enforce\ncooldown = 1h\nmin_segment_size = 4M\nmetrics_file =\nsocket = %s/sock\n[instance ora]\ncgroup = /oracle\npolicy = local\nenforce = cpuset\n' "$tmp" > "$tmp/ng.conf"
        "${@}"
        : > "$tmp/alerts.json"
        "$D" --foreground --root "$tmp/root" --config "$tmp/ng.conf" --alert-log "$tmp/alerts.json" 2> "$tmp/stderr" &
        pid=$!
        until_ok 10 test -S "$tmp/sock" || echo "# numaguardd made no socket: $(tail -3 "$tmp/stderr")"
        until_ok 30 eval '[ "$(polls)" -ge 15 ]' || echo "# numaguardd reported $(polls) polls in 30 s"
        npolls=$(polls)
        kill -TERM "$pid"; wait "$pid"; rc=$?; pid=
        actions=$(grep -c '"NUMAGUARD_EVENT":"action"' "$tmp/alerts.json")
}

run true
mems=$(cat "$tmp/root/sys/fs/cgroup/oracle/cpuset.mems")
check exit "numaguardd exited $rc" test "$rc" = 0
check cpuset-written "cpuset.mems is '$mems', expected 0 (the node of the CPUs)" test "$mems" = 0
check once-per-cooldown "$actions action entries in $npolls polls, expected 1 in at least 15" \
        test "$actions" = 1 -a "$npolls" -ge 15
check message-id "no cpuset MESSAGE_ID" grep -q '"MESSAGE_ID":"1db6e8201fed4d01a1af1cbfb367160e".*"NUMAGUARD_OUTCOME":"done"' "$tmp/alerts.json"
# mode = audit: nothing written even with enforce= set
run sed -i 's/^mode = enforce/mode = audit/' "$tmp/ng.conf"
# ... by a daemon that ran, polled and saw the misplacement it leaves be
remote=$(grep -c '"NUMAGUARD_CODE":"REMOTE_MEMORY".*"NUMAGUARD_INSTANCE":"ora"' "$tmp/alerts.json")
check audit-mode-writes-nothing "cpuset.mems is $(cat "$tmp/root/sys/fs/cgroup/oracle/cpuset.mems"), $actions actions; exit $rc, $npolls polls, $remote REMOTE_MEMORY alerts for ora" \
        test "$(cat "$tmp/root/sys/fs/cgroup/oracle/cpuset.mems")" = 3 -a "$actions" = 0 -a "$rc" = 0 -a "$npolls" -ge 15 -a "$remote" -ge 1
# a permanent error (the file is a directory: EISDIR): one attempt with no
# cooldown at all, then unmanaged
break_target() {
        sed -i 's/^cooldown = 1h/cooldown = 0/' "$tmp/ng.conf"
        rm "$tmp/root/sys/fs/cgroup/oracle/cpuset.mems" && mkdir "$tmp/root/sys/fs/cgroup/oracle/cpuset.mems"
}
run break_target
check permanent-once "$actions attempts with cooldown 0, expected 1" test "$actions" = 1
check unmanaged-warning "no 'unmanaged' warning: $(tail -3 "$tmp/stderr")" grep -q "unmanaged" "$tmp/stderr"
[ $fails = 0 ]
