#!/usr/bin/env bash
# numaguardd's enforce mode writes a cpuset through its owner, as
# `numaguardctl cpuset apply` does, on trees derived from the captured
# 8-node tree (tests/fixtures/derive-owner-tree: CPU 0 on node 0, memory on
# node 6, declared by a cgconfig group or a systemd unit):
#   - remote binding, cgconfig group: the group's line in /etc/cgconfig.conf
#     changes to mems 0 (one line of the file) and the live cpuset follows;
#     the action entry carries the cpuset MESSAGE_ID, outcome done and three
#     writes (the file's line, then the live cpuset widened and narrowed);
#   - the live cpuset already right (mems 0, the memory on node 0) but the
#     group still declaring 6: CPUSET_NOT_PERSISTENT alone calls for the
#     correction, and the daemon writes the file's line only;
#   - remote binding, systemd unit (under --root there is no manager: the
#     drop-in systemctl set-property would write, then the cgroup).
set -u
echo 1..8
SRC=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$SRC" || exit 1
B=${BUILD:-build}
D=$B/numaguardd CTL=$B/numaguardctl
DERIVE=$SRC/tests/fixtures/derive-owner-tree
[ -x "$D" ] && [ -x "$CTL" ] || { echo "not ok enforce-owner: $D or $CTL not built"; exit 1; }
command -v jq > /dev/null || { echo "not ok enforce-owner: jq not installed"; exit 1; }
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
TAP_PREFIX=enforce-owner; . tests/shell/lib.sh
until_ok() { local t=$(($1 * 10)); shift; while ((t-- > 0)); do "$@" && return 0; sleep 0.1; done; return 1; }
polls() { "$CTL" status --json --socket "$tmp/sock" 2>/dev/null | jq -r '.daemon.polls // 0'; }
# run KIND [PREPARE...]: the daemon in enforce mode on a fresh derived tree
# (after PREPARE adjusted it) until 5 polls at 100 ms
run() {
        local kind=$1; shift
        "$DERIVE" "$kind" "$tmp/root" > /dev/null || { echo "# derive $kind failed"; return 1; }
        cp -a "$tmp/root" "$tmp/orig"
        { sed -e 's/^mode = audit/mode = enforce/' -e 's/^interval = .*/interval = 100ms/' \
              -e 's/^cooldown = .*/cooldown = 1h/' -e "s|^socket = .*|socket = $tmp/sock|" -e 's/^metrics_file = .*/metrics_file =/' \
              "$tmp/root/numaguard/numaguard.conf"; echo "enforce = cpuset"; } > "$tmp/ng.conf"
        "$@"
        rm -rf "$tmp/orig" && cp -a "$tmp/root" "$tmp/orig"
        : > "$tmp/alerts.json"
        "$D" --foreground --root "$tmp/root" --config "$tmp/ng.conf" --alert-log "$tmp/alerts.json" 2> "$tmp/stderr" &
        pid=$!
        until_ok 10 test -S "$tmp/sock" || echo "# numaguardd made no socket: $(tail -3 "$tmp/stderr")"
        until_ok 30 eval '[ "$(polls)" -ge 5 ]' || echo "# numaguardd reported $(polls) polls in 30 s"
        kill -TERM "$pid"; wait "$pid"; pid=
        actions=$(grep -c '"NUMAGUARD_EVENT":"action"' "$tmp/alerts.json")
}
cgc_diff() { diff "$tmp/orig/etc/cgconfig.conf" "$tmp/root/etc/cgconfig.conf"; }
mems() { cat "$tmp/root/sys/fs/cgroup/$1/cpuset.mems"; }
line15='15c15
< 		cpuset.mems = "6";
---
> 		cpuset.mems = "0";'

run cgconfig
check cgconfig-file "one action ($actions), the file's diff: $(cgc_diff)" \
        eval '[ "$actions" = 1 ] && [ "$(cgc_diff)" = "$line15" ]'
check cgconfig-live "cpuset.mems is $(mems oracle), expected 0" test "$(mems oracle)" = 0
check cgconfig-journal "action entry: $(grep '"action"' "$tmp/alerts.json")" \
        eval 'jq -e "select(.NUMAGUARD_EVENT == \"action\") | select(.MESSAGE_ID == \"1db6e8201fed4d01a1af1cbfb367160e\" and .NUMAGUARD_OUTCOME == \"done\" and .NUMAGUARD_ACTION == \"cpuset\")" "$tmp/alerts.json" > /dev/null &&
              grep -qF "\"NUMAGUARD_WRITES\":\"3\"" "$tmp/alerts.json"'

# the live cpuset right, its owner not: the memory is on node 0 and the
# cpuset allows only it (as the kernel shows it after a direct write of 0)
live_fixed() {
        local f
        for f in cpuset.mems cpuset.mems.effective; do echo 0 > "$tmp/root/sys/fs/cgroup/oracle/$f"; done
        sed -i 's/^Mems_allowed_list:.*/Mems_allowed_list:\t0/' "$tmp/root"/proc/{222,224}/status
        sed -i 's/N6=/N0=/g' "$tmp/root"/proc/{222,224}/numa_maps
        "$CTL" audit --root "$tmp/root" --config "$tmp/ng.conf" --json > "$tmp/audit.json" 2>/dev/null
}
run cgconfig live_fixed
codes=$(jq -c '[.findings[] | select(.instance == "oracle") | .code]' "$tmp/audit.json")
check not-persistent-alone "findings of oracle before: $codes" test "$codes" = '["CPUSET_NOT_PERSISTENT"]'
check not-persistent-file "one action ($actions), the file's diff: $(cgc_diff)" \
        eval '[ "$actions" = 1 ] && [ "$(cgc_diff)" = "$line15" ]'
check not-persistent-live "cpuset.mems is $(mems oracle), expected 0 untouched" \
        eval '[ "$(mems oracle)" = 0 ] && grep -qF "\"NUMAGUARD_WRITES\":\"1\"" "$tmp/alerts.json" &&
              grep -qF "\"NUMAGUARD_WRITE\":\"/etc/cgconfig.conf:15=" "$tmp/alerts.json"'

run unit
dropin=$tmp/root/etc/systemd/system.control/oracle-db.service.d/50-AllowedMemoryNodes.conf
check unit-dropin "one action ($actions); drop-in: $(cat "$dropin" 2>&1)" \
        eval '[ "$actions" = 1 ] && [ "$(tail -n 1 "$dropin")" = "AllowedMemoryNodes=0" ]'
check unit-live "cpuset.mems is $(mems system.slice/oracle-db.service), expected 0" \
        test "$(mems system.slice/oracle-db.service)" = 0
exit $((fails > 0))
