#!/usr/bin/env bash
# tests/e2e/suite.sh TOPOLOGY -- runs INSIDE the NUMA guest (one boot per
# topology; started by tests/e2e/run-e2e through tests/e2e/numa-vm). Runs the
# cases listed in tests/e2e/topologies/TOPOLOGY.conf one after the other,
# each under a timeout, and prints their "ok"/"not ok"/"skip" lines. The
# "# ..." diagnostics of a case are shown when it fails (always with
# NUMAGUARD_E2E_VERBOSE=1). Exit status: 0 if no case failed.
set -u
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$E2E_DIR/../.." && pwd -P)
topo=${1:?usage: suite.sh TOPOLOGY}
conf=$E2E_DIR/topologies/$topo.conf
[ -f "$conf" ] || { echo "not ok $topo: no $conf"; exit 1; }
# shellcheck source=/dev/null
. "$conf"
export E2E_TOPO=$topo BUILD=${BUILD:-build} E2E_DIR ROOT
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
cd "$ROOT" || exit 1

now() { echo "${EPOCHREALTIME/./}"; }        # microseconds, no fork
secs() { local d=$(( ($2 - $1) / 100000 )); echo "$((d / 10)).$((d % 10))"; }

echo "# guest: $(uname -r), $(nproc) CPUs, $(numactl --hardware | head -n1)"
echo "# topology $topo: $TOPO_DESC"
fails=0
for c in "${CASES[@]}"; do
    f=$E2E_DIR/cases/$c.sh
    t0=$(now)
    if [ -f "$f" ]; then
        out=$(CASE=$c timeout -k 5 "${E2E_CASE_TIMEOUT:-300}" bash "$f" 2>&1 < /dev/null); rc=$?
    else
        out="# no such case script: $f"; rc=1
    fi
    t1=$(now)
    res="" nres=0 nfail=0
    while IFS= read -r l; do
        case $l in
            "ok "*|"skip "*) res+=$l$'\n'; nres=$((nres + 1)) ;;
            "not ok "*) res+=$l$'\n'; nres=$((nres + 1)); nfail=$((nfail + 1)) ;;
        esac
    done <<<"$out"
    extra=""
    if [ "$rc" != 0 ] && ((nfail == 0)); then
        if [ "$rc" = 124 ]; then extra="not ok $topo/$c: timed out after ${E2E_CASE_TIMEOUT:-300} s"
        else extra="not ok $topo/$c: exit status $rc"; fi
    elif ((nres == 0)); then
        extra="not ok $topo/$c: printed no result"
    fi
    [ -z "$extra" ] || nfail=$((nfail + 1))
    if ((nfail > 0)) || [ "${NUMAGUARD_E2E_VERBOSE:-0}" = 1 ]; then
        printf '%s\n' "$out"
        [ -z "$extra" ] || echo "$extra"
    else
        printf '%s' "$res"
    fi
    ((nfail > 0)) && fails=$((fails + 1))
    echo "#   $topo/$c: $(secs "$t0" "$t1") s"
done
exit $((fails > 0))
