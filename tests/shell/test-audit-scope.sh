#!/usr/bin/env bash
# What `audit --instance NAME` considers, and the processes unreadable_ok
# acknowledges (numaguardctl(1), --instance and PERMISSIONS;
# numaguard.conf(5)).
#
# On copies of the committed tree guest4-v2, with instance IL configured
# (the 16 MiB SysV workload under --interleave=all, pids 183 and 187,
# hugepages = off: none of its own findings is above info). What each copy
# alters, as a captured tree records a refusal of the live host:
#   - numaguard/unreadable lists /proc/1/maps (process 1, busybox, is no
#     process of IL): the audit of the host says AUDIT_INCOMPLETE, the
#     audit of IL does not and exits 0;
#   - numaguard/unreadable lists /proc/187/maps too (IL's child): IL's
#     own AUDIT_INCOMPLETE, which its audit counts (exit 1);
#   - /proc/179/numa_maps (unclaimed:shmid-0's attacher) holds no line that
#     parses: that instance's AUDIT_INCOMPLETE, not IL's; the same in
#     /proc/183/numa_maps (IL's): IL's;
#   - unreadable_ok = init: process 1 acknowledged (text line, JSON,
#     no AUDIT_INCOMPLETE; exit 0 where the rest is info), IL's child
#     never;
#   - unreadable_ok = busybox: refused (a name is anyone's to choose).
# Live, as root: a workload run as uid 65534 ("ngscopedb", instance SC)
# audited as uid 65534, which reads its own processes and none of root's:
# the audit of SC has no AUDIT_INCOMPLETE and exits with its own findings'
# status; and numaguardd without capabilities (it then reads no process
# holding capabilities, process 1 among them) with unreadable_ok = init:
# status and metrics count process 1 as acknowledged.
# BUILD: build directory (default build).
set -u
echo 1..12
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
CTL=$B/numaguardctl D=$B/numaguardd WL=$B/tests/helpers/ng-shm-workload
TAP_PREFIX=audit-scope; . tests/shell/lib.sh
command -v jq > /dev/null || skip_all "jq not installed"
[ -x "$CTL" ] || { echo "not ok audit-scope: $CTL not built"; exit 1; }
T=$(mktemp -d /tmp/ng-scope.XXXXXX)
chmod 755 "$T"
pids=() dpid=""
cleanup() {
        [ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        rm -rf "$T"
}
trap cleanup EXIT

# tree NAME: a fresh copy of guest4-v2 as $T/NAME
tree() { rm -rf "${T:?}/$1"; cp -a tests/fixtures/trees/guest4-v2 "$T/$1"; }
conf() { printf '[global]\nmin_segment_size = 1M\n%s\n[instance IL]\nmatch_cmdline = *wl-sysv-il.ready*\nhugepages = off\npolicy = interleave\n' "$1" > "$T/$2"; }
conf "" il.conf
conf "unreadable_ok = init" ack.conf
incomplete() {  # JSON [INSTANCE]: the AUDIT_INCOMPLETE findings (of INSTANCE), compact
        jq -c --arg i "${2-}" '[.findings[] | select(.code == "AUDIT_INCOMPLETE" and ($i == "" or .instance == $i))
                | {instance, message}]' "$1"
}

# ---- another process refused: the host's finding, not IL's
tree other
echo /proc/1/maps > "$T/other/numaguard/unreadable"
"$CTL" audit --root "$T/other" -c "$T/il.conf" --json > "$T/other-host.json" 2> "$T/err"; rc_host=$?
"$CTL" audit --root "$T/other" -c "$T/il.conf" --instance IL --json > "$T/other-il.json" 2>> "$T/err"; rc_il=$?
"$CTL" audit --root "$T/other" -c "$T/il.conf" --instance IL > "$T/other-il.txt" 2>> "$T/err"; rc_txt=$?
# the audit of the host counts pid 1, the audit of IL does not
if [ "$rc_host" -ge 1 ] && jq -e '[.findings[] | select(.code == "AUDIT_INCOMPLETE" and .instance == ""
                and (.message | test("pid 1 \\(busybox\\)")))] | length == 1' "$T/other-host.json" > /dev/null &&
   [ "$rc_il" = 0 ] && [ "$rc_txt" = 0 ] && [ "$(incomplete "$T/other-il.json")" = "[]" ] &&
   jq -e '.summary.exit_status == 0 and (.instances | map(.name)) == ["IL"]' "$T/other-il.json" > /dev/null &&
   ! grep -q AUDIT_INCOMPLETE "$T/other-il.txt"; then
        pass "instance-ignores-other (host exit $rc_host, IL exit 0)"
else
        fail instance-ignores-other "host: exit $rc_host, $(incomplete "$T/other-host.json" | head -c 300); IL: exit $rc_il (text $rc_txt), $(incomplete "$T/other-il.json" | head -c 300)"
        sed 's/^/# /' "$T/err" | head -5
fi

# ---- IL's own child refused too: IL's finding, which its audit counts
tree own
printf '/proc/1/maps\n/proc/187/maps\n' > "$T/own/numaguard/unreadable"
"$CTL" audit --root "$T/own" -c "$T/il.conf" --instance IL --json > "$T/own-il.json" 2> "$T/err"; rc=$?
if [ "$rc" = 1 ] && jq -e '[.findings[] | select(.code == "AUDIT_INCOMPLETE")] as $f | ($f | length) == 1
                and $f[0].instance == "IL" and ($f[0].message | test("1 process of the instance, .*pid 187 "))
                and ($f[0].message | test("busybox") | not)
                and ([.instances[] | select(.name == "IL") | .shared_bytes] == [null])' "$T/own-il.json" > /dev/null; then
        pass "instance-counts-own (exit 1)"
else
        fail instance-counts-own "audit --instance IL: exit $rc, $(incomplete "$T/own-il.json")"
fi

# ---- a file of a process that cannot be used: its instance's finding
tree numa
echo "garbage" > "$T/numa/proc/179/numa_maps"
"$CTL" audit --root "$T/numa" -c "$T/il.conf" --json > "$T/numa-host.json" 2> "$T/err"
"$CTL" audit --root "$T/numa" -c "$T/il.conf" --instance IL --json > "$T/numa-il.json" 2>> "$T/err"; rc=$?
if [ "$rc" = 0 ] && [ "$(incomplete "$T/numa-il.json")" = "[]" ] &&
   jq -e '[.findings[] | select(.code == "AUDIT_INCOMPLETE" and .instance == "unclaimed:shmid-0"
                and (.message | test("/proc/179/numa_maps")))] | length == 1' "$T/numa-host.json" > /dev/null; then
        pass "other-instance-file (unclaimed:shmid-0's, IL exits 0)"
else
        fail other-instance-file "IL: exit $rc, $(incomplete "$T/numa-il.json"); host: $(incomplete "$T/numa-host.json")"
fi
echo "garbage" > "$T/numa/proc/183/numa_maps"
"$CTL" audit --root "$T/numa" -c "$T/il.conf" --instance IL --json > "$T/numa-il2.json" 2> "$T/err"; rc=$?
if [ "$rc" = 1 ] && jq -e '[.findings[] | select(.code == "AUDIT_INCOMPLETE") | .instance] == ["IL"]
                and ([.findings[] | select(.code == "AUDIT_INCOMPLETE") | .message | test("/proc/183/numa_maps")] == [true])' \
                "$T/numa-il2.json" > /dev/null; then
        pass "own-file (exit 1)"
else
        fail own-file "IL: exit $rc, $(incomplete "$T/numa-il2.json")"
fi

# ---- unreadable_ok = init: process 1 acknowledged, IL's child never
"$CTL" audit --root "$T/other" -c "$T/ack.conf" --json > "$T/ack.json" 2> "$T/err"; rc_json=$?
"$CTL" audit --root "$T/other" -c "$T/ack.conf" > "$T/ack.txt" 2>> "$T/err"
"$CTL" audit --root "$T/other" -c "$T/il.conf" > "$T/noack.txt" 2>> "$T/err"; rc_noack=$?
if [ "$(incomplete "$T/ack.json")" = "[]" ] &&
   jq -e '.acknowledged_unreadable == [{"pid": 1, "name": "busybox", "uid": 0, "by": "init"}]
          and .summary.acknowledged_unreadable == 1' "$T/ack.json" > /dev/null &&
   grep -qx "1 process acknowledged unreadable (unreadable_ok): pid 1 (busybox, uid 0, init)" "$T/ack.txt" &&
   ! grep -q "acknowledged" "$T/noack.txt" && [ ! -s "$T/err" ]; then
        pass "acknowledged-init (exit $rc_json, $rc_noack without the key)"
else
        fail acknowledged-init "with unreadable_ok = init: $(incomplete "$T/ack.json"), $(jq -c '.acknowledged_unreadable' "$T/ack.json" 2>&1)"
        grep -i "acknowledged\|unreadable_ok" "$T/ack.txt" "$T/err" | sed 's/^/# /'
fi
# exit status: that of the other findings, not pid 1's; with the default
# min_segment_size no segment of the tree but IL's is audited, and the
# host's other findings are info (AUTONUMA_ON)
printf '[global]\nunreadable_ok = init\n[instance IL]\nmatch_cmdline = *wl-sysv-il.ready*\nhugepages = off\n' > "$T/ack64.conf"
"$CTL" audit --root "$T/other" -c "$T/ack64.conf" --json > "$T/ack64.json" 2> "$T/err"; rc=$?
if [ "$rc" = 0 ] && jq -e '.summary.acknowledged_unreadable == 1 and .summary.exit_status == 0
                and ([.findings[] | select(.severity != "info")] | length) == 0' "$T/ack64.json" > /dev/null; then
        pass "acknowledged-exit (exit 0)"
else
        fail acknowledged-exit "exit $rc: $(jq -c '[.findings[] | [.code, .severity, .instance]]' "$T/ack64.json" 2>&1)"
fi
"$CTL" audit --root "$T/own" -c "$T/ack.conf" --json > "$T/ack-own.json" 2> "$T/err"
if jq -e '(.acknowledged_unreadable | map(.pid)) == [1]
          and ([.findings[] | select(.code == "AUDIT_INCOMPLETE") | .instance] == ["IL"])' "$T/ack-own.json" > /dev/null; then
        pass "instance-never-acknowledged"
else
        fail instance-never-acknowledged "$(jq -c '.acknowledged_unreadable' "$T/ack-own.json" 2>&1), $(incomplete "$T/ack-own.json")"
fi
conf "unreadable_ok = busybox" comm.conf
"$CTL" audit --root "$T/other" -c "$T/comm.conf" > /dev/null 2> "$T/err"; rc=$?
if [ "$rc" = 3 ] && grep -q 'comm.conf:3: .*invalid unreadable_ok "busybox": .*neither init nor a cgroup path' "$T/err"; then
        pass "name-refused (exit 3)"
else
        fail name-refused "unreadable_ok = busybox: exit $rc, $(head -c 300 "$T/err")"
fi

# ---- live
if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null || [ ! -x "$WL" ] || [ ! -x "$D" ]; then
        [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && { echo "not ok audit-scope: $WL or $D not built"; exit 1; }
        for c in live-instance-ignores-root status-acknowledged metrics-acknowledged status-json-acknowledged; do
                echo "skip audit-scope-$c: needs root and setpriv"
        done
        exit $((fails > 0))
fi
ln -s "$(cd "${WL%/*}" && pwd -P)/${WL##*/}" "$T/ngscopedb"
mkfifo "$T/wl.fifo"
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$T/ngscopedb" sysv -s 16 -p 1 > "$T/wl.fifo" 2> "$T/wl.err" &
pids+=($!)
read -r -t 60 line < "$T/wl.fifo" || { echo "not ok audit-scope: workload: $(cat "$T/wl.err")"; exit 1; }
printf '[global]\nmin_segment_size = 4M\n[instance SC]\nmatch_comm = ngscopedb\nhugepages = off\n' > "$T/sc.conf"
chmod 644 "$T/sc.conf"
cp "$CTL" "$T/numaguardctl" && chmod 755 "$T/numaguardctl"
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- "$@"; }
asnobody "$T/numaguardctl" audit --config "$T/sc.conf" --json > "$T/live-host.json" 2> "$T/err"; rc_host=$?
asnobody "$T/numaguardctl" audit --config "$T/sc.conf" --instance SC --json > "$T/live-sc.json" 2>> "$T/err"; rc_sc=$?
# the audit of the host counts root's processes; the audit of SC does not,
# and exits with the status of what it shows
want=$(jq '[.findings[] | {info: 0, warning: 1, critical: 2}[.severity]] | max // 0' "$T/live-sc.json")
if [ "$rc_host" -ge 1 ] && jq -e '[.findings[] | select(.code == "AUDIT_INCOMPLETE" and .instance == ""
                and (.message | test("of uid 0[ ,]")))] | length >= 1' "$T/live-host.json" > /dev/null &&
   [ "$(incomplete "$T/live-sc.json")" = "[]" ] && [ "$rc_sc" = "${want:-x}" ] &&
   jq -e '(.instances | map(.name)) == ["SC"] and (.instances[0].shared_bytes | . != null and . >= 16777216)' \
        "$T/live-sc.json" > /dev/null; then
        pass "live-instance-ignores-root (host exit $rc_host, SC exit $rc_sc)"
else
        fail live-instance-ignores-root "as uid 65534: host exit $rc_host, SC exit $rc_sc (its findings say ${want:-?}): $(incomplete "$T/live-sc.json" | head -c 600)"
fi

# numaguardd without capabilities reads no process holding some (process
# 1 among them); unreadable_ok = init acknowledges process 1
SOCK=$T/ctl.sock PROM=$T/numaguard.prom
printf '[global]\ninterval = 300ms\nmin_segment_size = 4M\nsocket = %s\nmetrics_file = %s\nunreadable_ok = init\n' \
        "$SOCK" "$PROM" > "$T/d.conf"
setpriv --bounding-set=-all --inh-caps=-all -- "$D" --foreground --config "$T/d.conf" 2> "$T/d.err" &
dpid=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && [ -s "$PROM" ] && break; sleep 0.1; done
"$CTL" status --socket "$SOCK" > "$T/status.txt" 2>&1
"$CTL" status --socket "$SOCK" --json > "$T/status.json" 2>&1
pid1=$(sed -n 's/^Name:[[:space:]]*//p' /proc/1/status)
if grep -Eq "^[0-9]+ process(es)? acknowledged unreadable \(unreadable_ok\): pid 1 \(.*, uid 0, init\)" "$T/status.txt"; then
        pass "status-acknowledged (pid 1, $pid1)"
else
        fail status-acknowledged "status names no acknowledged pid 1"; sed 's/^/# /' "$T/status.txt" | head -20
fi
if grep -Eq '^numaguard_audit_acknowledged_unreadable_processes [1-9][0-9]*$' "$PROM"; then
        pass "metrics-acknowledged ($(sed -n 's/^numaguard_audit_acknowledged_unreadable_processes //p' "$PROM"))"
else
        fail metrics-acknowledged "$(grep unreadable "$PROM" | head -5 | tr '\n' ' ')"
fi
if jq -e '[.acknowledged_unreadable[] | select(.pid == 1 and .by == "init")] | length == 1' "$T/status.json" > /dev/null &&
   ! jq -e '[.findings[] | select(.code == "AUDIT_INCOMPLETE") | .message | test("pids? 1 \\(")] | any' "$T/status.json" > /dev/null; then
        pass status-json-acknowledged
else
        fail status-json-acknowledged "$(jq -c '.acknowledged_unreadable' "$T/status.json" 2>&1 | head -c 300)"
fi
kill -TERM "$dpid"; wait "$dpid" 2>/dev/null; dpid=""
exit $((fails > 0))
