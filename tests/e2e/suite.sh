#!/usr/bin/env bash
# tests/e2e/suite.sh TOPOLOGY -- runs INSIDE the NUMA guest (one boot per
# topology; started by tests/e2e/run-e2e through tests/e2e/numa-vm). Runs the
# cases listed in tests/e2e/topologies/TOPOLOGY.conf one after the other,
# each under a timeout, and prints their "ok"/"not ok"/"skip" lines. The
# "# ..." diagnostics of a case are shown when it fails (always with
# NUMAGUARD_E2E_VERBOSE=1). Exit status: 0 if no case failed.
#
# Every case declares its plan first ("1..N", lib.sh's `plan N`): a case
# with no plan, or whose ok/not ok/skip lines do not add up to it, fails.
# A case skipped as a whole (skip_case) counts its N planned results as
# skipped. Under CI (CI set, not "false"/"0") every skip is a failure.
# A case whose kernel lacks what it is about says so (lib.sh's
# not_applicable: "n/a TOPO/CASE: WHY"); its planned results count as not
# applicable, never as passed or skipped.
# After each case: "# case TOPO/CASE: planned N, ok N, not ok N, skip N,
# n/a N"; at the end: "# suite TOPO: planned N, ran N, N passed, N failed,
# N skipped" and "# suite TOPO: N not applicable" (run-e2e adds these up).
set -u
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$E2E_DIR/../.." && pwd -P)
topo=${1:?usage: suite.sh TOPOLOGY}
conf=$E2E_DIR/topologies/$topo.conf
[ -f "$conf" ] || { echo "not ok $topo: no $conf"; exit 1; }
# shellcheck source=/dev/null
. "$conf"
# shellcheck source=tests/e2e/case-limit.sh
. "$E2E_DIR/case-limit.sh"
[ -z "${NUMAGUARD_E2E_CASES:-}" ] || read -ra CASES <<<"$NUMAGUARD_E2E_CASES"
export E2E_TOPO=$topo BUILD=${BUILD:-build} E2E_DIR ROOT
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
cd "$ROOT" || exit 1

ci_strict() { case ${CI:-} in "" | 0 | false | no) return 1 ;; esac; }
now() { echo "${EPOCHREALTIME/./}"; }        # microseconds, no fork
secs() { local d=$(( ($2 - $1) / 100000 )); echo "$((d / 10)).$((d % 10))"; }

# residue: what lives beyond a case, one word each: user-space processes
# ("pid:comm") and SysV segments ("shm:ID"); not this shell nor the
# subshells and commands that ask
ppid_of() { awk '$1 == "PPid:" { print $2 }' "/proc/$1/status" 2>/dev/null; }
residue() {
    local p c pp me=$BASHPID up
    up=$(ppid_of "$me")
    for p in /proc/[0-9]*; do
        [ -e "$p/exe" ] || continue                 # kernel threads have none
        pp=$(ppid_of "${p#/proc/}")
        case " $$ $me $up " in *" ${p#/proc/} "* | *" $pp "*) continue ;; esac
        [ -n "$pp" ] || continue
        read -r c < "$p/comm" 2>/dev/null && echo "${p#/proc/}:$c"
    done
    awk 'NR > 1 { print "shm:" $2 }' /proc/sysvipc/shm
}


echo "# guest: $(uname -r), $(nproc) CPUs, $(numactl --hardware | head -n1)"
echo "# topology $topo: $TOPO_DESC"
fails=0 t_planned=0 t_ran=0 t_ok=0 t_fail=0 t_skip=0 t_na=0
for c in "${CASES[@]}"; do
    f=$E2E_DIR/cases/$c.sh
    t0=$(now)
    residue | sort > /tmp/e2e-residue.before
    limit=$(case_limit "$f")
    if [ -f "$f" ]; then
        out=$(CASE=$c timeout -k 5 "$limit" bash "$f" 2>&1 < /dev/null); rc=$?
    else
        out="# no such case script: $f"; rc=1
    fi
    t1=$(now)
    residue | sort > /tmp/e2e-residue.after      # (no /dev/fd in the guest for <(...))
    left=$(comm -13 /tmp/e2e-residue.before /tmp/e2e-residue.after | tr '\n' ' ')
    [ -z "$left" ] || echo "# left behind by $topo/$c: $left"
    res="" plan="" nok=0 nfail=0 nskip=0 nna=0 whole=0 whole_na=0 ciskip=""
    while IFS= read -r l; do
        case $l in
            1..[0-9]*) [ -n "$plan" ] || plan=${l#1..} ;;
            "ok "*) res+=$l$'\n'; nok=$((nok + 1)) ;;
            "not ok "*) res+=$l$'\n'; nfail=$((nfail + 1)) ;;
            "skip "*)
                if ci_strict; then
                    l="not ok ${l#skip } (skipped, and under CI nothing may be)"
                    ciskip+=$l$'\n'; res+=$l$'\n'; nfail=$((nfail + 1))
                else
                    res+=$l$'\n'; nskip=$((nskip + 1))
                    [[ $l == "skip $topo/$c:"* ]] && whole=1
                fi ;;
            "n/a "*)
                res+=$l$'\n'; nna=$((nna + 1))
                [[ $l == "n/a $topo/$c:"* ]] && whole_na=1 ;;
        esac
    done <<<"$out"
    nres=$((nok + nfail + nskip + nna))
    extra=""
    if [ "$rc" != 0 ] && ((nfail == 0)); then
        if [ "$rc" = 124 ]; then extra="not ok $topo/$c: timed out after $limit s"
        else extra="not ok $topo/$c: exit status $rc"; fi
    elif [ -z "$plan" ]; then
        extra="not ok $topo/$c: no plan (a case calls \`plan N\` before its first result)"
    elif ((whole && nfail == 0)); then
        ((plan > nres)) && nskip=$((nskip + plan - nres))     # the whole case: N skipped
    elif ((whole_na && nfail == 0)); then
        ((plan > nres)) && nna=$((nna + plan - nres))         # the whole case: N not applicable
    elif ((nres != plan && (rc == 0 || nres > plan))); then
        extra="not ok $topo/$c: planned $plan results, printed $nres"
    fi
    [ -z "$extra" ] || nfail=$((nfail + 1))
    if ((nfail > 0)) || [ "${NUMAGUARD_E2E_VERBOSE:-0}" = 1 ]; then
        printf '%s\n' "$out"
        printf '%s' "$ciskip"
        [ -z "$extra" ] || echo "$extra"
    else
        printf '%s' "$res"
    fi
    ((nfail > 0)) && fails=$((fails + 1))
    echo "# case $topo/$c: planned ${plan:-?}, ok $nok, not ok $nfail, skip $nskip, n/a $nna"
    t_planned=$((t_planned + ${plan:-0})) t_ran=$((t_ran + nok + nfail)) t_ok=$((t_ok + nok))
    t_fail=$((t_fail + nfail)) t_skip=$((t_skip + nskip)) t_na=$((t_na + nna))
    echo "#   $topo/$c: $(secs "$t0" "$t1") s"
done
echo "# suite $topo: planned $t_planned, ran $t_ran, $t_ok passed, $t_fail failed, $t_skip skipped"
echo "# suite $topo: $t_na not applicable"
exit $((fails > 0))
