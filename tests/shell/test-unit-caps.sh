#!/usr/bin/env bash
# The programs with exactly the unit's capabilities see what root sees. The
# capability set is read from systemd/numaguard.service.in
# (CapabilityBoundingSet=) and applied with setpriv (bounding set, nothing
# inheritable, no_new_privs), as systemd applies it to root's ExecStart=.
# On this live host: a 4 KiB SysV segment of another user (nobody) with an
# idle hugepage pool, and a hugetlb SysV segment; numaguardctl audit and
# numaguardd --once under the unit's set must report the same page sizes and
# the same findings as under full root. Needs root (hugepages, other users'
# processes); under CI not being able to run is a failure.
set -u
echo 1..6
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
CTL=$B/numaguardctl D=$B/numaguardd WL=$B/tests/helpers/ng-shm-workload
UNIT=systemd/numaguard.service.in
T=$(mktemp -d /tmp/ng-caps.XXXXXX)
pids=() old_hp=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null)
cleanup() {
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        [ -n "$old_hp" ] && echo "$old_hp" > /proc/sys/vm/nr_hugepages
        rm -rf "$T"
}
trap cleanup EXIT
TAP_PREFIX=unit-caps; . tests/shell/lib.sh
[ "$(id -u)" = 0 ] || skip_all "needs root"
command -v setpriv > /dev/null || skip_all "setpriv (util-linux) not installed"
command -v jq > /dev/null || skip_all "jq not installed"
[ -x "$WL" ] && [ -x "$D" ] || { echo "not ok unit-caps: $WL or $D not built"; exit 1; }

caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")
[ -n "$caps" ] || { echo "not ok unit-caps: no CapabilityBoundingSet= in $UNIT"; exit 1; }
bset=-all
for c in $caps; do bset+=",+$(tr 'A-Z' 'a-z' <<<"${c#CAP_}")"; done
as_unit() { setpriv --bounding-set "$bset" --inh-caps -all --no-new-privs -- "$@"; }
if ! got=$(as_unit grep '^CapEff' /proc/self/status); then
        echo "not ok unit-caps-setpriv: setpriv --bounding-set $bset failed"; exit 1
fi
pass "setpriv ($caps: ${got##*$'\t'})"

# wl ARGS: start a workload, wait for its report line, set SHMID
n_wl=0
wl() {
        n_wl=$((n_wl + 1))
        local f=$T/fifo$n_wl line
        mkfifo "$f"
        "$@" > "$f" 2>"$T/wl.err" &
        pids+=($!)
        read -r -t 60 line < "$f" || return 1
        [[ $line =~ \ shmid=([0-9]+) ]] && SHMID=${BASH_REMATCH[1]}
}
chmod 755 "$T"
wl setpriv --reuid=nobody --regid=nogroup --clear-groups "$WL" sysv -s 32 -p 1 ||
        { echo "not ok unit-caps: workload as nobody: $(cat "$T/wl.err")"; exit 1; }
small=$SHMID
# a pool with free pages, part of it used by a hugetlb segment
echo $(( ${old_hp:-0} + 8 )) > /proc/sys/vm/nr_hugepages 2>/dev/null
huge=""
wl "$WL" sysv -H -s 8 -p 1 && huge=$SHMID
printf '[global]\nmin_segment_size = 4M\n' > "$T/ng.conf"

# ---- numaguardctl audit: page sizes and findings
"$CTL" audit --config "$T/ng.conf" --json > "$T/root.json"
as_unit "$CTL" audit --config "$T/ng.conf" --json > "$T/unit.json"
seg() { jq -c "[.. | objects | select(.shmid? == $2) | {shmid, page_kib}] | unique" "$1"; }
# only this test's segments: other jobs on the host come and go between runs
mine() { echo "[\"unclaimed:shmid-$small\"${huge:+, \"unclaimed:shmid-$huge\"}]"; }
findings() { jq -c --argjson mine "$(mine)" '[.findings[] | select(.instance as $i | $mine | index($i))
                     | {code, severity, instance}] | sort' "$1"; }
r=$(seg "$T/root.json" "$small") u=$(seg "$T/unit.json" "$small")
[ "$r" = '[{"shmid":'"$small"',"page_kib":4}]' ] && [ "$u" = "$r" ] && pass "audit-page-size-4k" ||
        fail audit-page-size-4k "root $r, unit $u"
if [ -n "$huge" ]; then
        r=$(seg "$T/root.json" "$huge") u=$(seg "$T/unit.json" "$huge")
        [ "$r" = '[{"shmid":'"$huge"',"page_kib":2048}]' ] && [ "$u" = "$r" ] && pass "audit-page-size-2m" ||
                fail audit-page-size-2m "root $r, unit $u"
else
        echo "skip unit-caps-audit-page-size-2m: could not reserve 8 hugepages here"
fi
r=$(findings "$T/root.json") u=$(findings "$T/unit.json")
if grep -q '"HUGEPAGE_FALLBACK"' <<<"$r" && [ "$u" = "$r" ]; then pass audit-findings
else fail audit-findings "root $r, unit $u"; fi

# ---- numaguardd --once: the alerts it raises
for who in root unit; do
        run=(); [ $who = unit ] && run=(as_unit)
        printf '[global]\nmin_segment_size = 4M\nmetrics_file = %s/%s.prom\n' "$T" "$who" > "$T/d-$who.conf"
        "${run[@]}" "$D" --once --foreground --config "$T/d-$who.conf" --alert-log "$T/$who.alerts" \
                > "$T/d-$who.log" 2>&1 || fail "daemon-$who" "exit $?: $(tail -3 "$T/d-$who.log")"
done
alerts() { jq -sc --argjson mine "$(mine)" '[.[] | select((.instance // .NUMAGUARD_INSTANCE // "") as $i | $mine | index($i))
                    | {code: (.code // .NUMAGUARD_CODE), instance: (.instance // .NUMAGUARD_INSTANCE)}] | sort' "$1"; }
r=$(alerts "$T/root.alerts") u=$(alerts "$T/unit.alerts")
if grep -q HUGEPAGE_FALLBACK <<<"$r" && [ "$u" = "$r" ]; then pass daemon-alerts
else fail daemon-alerts "root $r, unit $u"; fi

# ---- a metrics_file the unit cannot write is a configuration error that
# says how to allow it (a read-only bind mount, as ProtectSystem=strict makes)
ro=$T/ro
mkdir "$ro"
printf '[global]\nmetrics_file = %s/numaguard.prom\n' "$ro" > "$T/ro.conf"
out=$(unshare --mount --propagation private sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" &&
        exec "$2" --once --foreground --config "$3" --alert-log /dev/null' sh "$ro" "$D" "$T/ro.conf" 2>&1)
rc=$?
if [ $rc = 78 ] && grep -qF "ReadWritePaths=$ro" <<<"$out" && grep -qF "$T/ro.conf" <<<"$out"; then
        pass metrics-file-read-only
else
        fail metrics-file-read-only "exit $rc (want 78 and the ReadWritePaths= to add): $out"
fi
exit $((fails > 0))
