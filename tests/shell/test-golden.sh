#!/usr/bin/env bash
# suite: alongside
# Golden outputs of the committed snapshot trees (tests/fixtures/trees/*/).
#
# Every tree was captured with `numaguardctl snapshot` on a real (guest)
# kernel; its numaguard/ directory holds what numaguardctl printed there from
# the very reads stored in the tree. `numaguardctl --root TREE` must print
# the same, byte for byte (docs/ARCHITECTURE.md, "Contracts", snapshot
# capture).
#
#   ok golden-<tree>-<output>      e.g. ok golden-guest4-v2-segments.json
#
# Outputs: topology.txt, topology.json, segments.txt, segments.json,
# audit.txt and audit.json (a missing one fails); audit runs
# with the tree's numaguard/numaguard.conf when there is one.
# BUILD: build directory (default build).
# GOLDEN_UPDATE=1 (make golden-update) writes each differing output over the
# captured one and prints the diff for review; never under CI.
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
TREES=$SRC/tests/fixtures/trees

if [ "${GOLDEN_UPDATE:-0}" = 1 ] && [ -n "${CI:-}" ] && [ "${CI:-}" != false ] && [ "${CI:-}" != 0 ]; then
        echo "1..1"
        echo "not ok golden: GOLDEN_UPDATE=1 under CI would pass by rewriting what it checks"
        exit 1
fi
if [ ! -x "$CTL" ]; then
        echo "not ok golden: $CTL not built"
        exit 1
fi
shopt -s nullglob
trees=("$TREES"/*/)
if [ ${#trees[@]} = 0 ]; then
        echo "1..1"
        echo "not ok golden: no committed trees in $TREES"
        exit 1
fi

# the plan: per tree, topology and segments (txt, json) and audit (txt, json)
echo "1..$((${#trees[@]} * 6))"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# norm OUTPUT: topology and segments are compared byte for byte. An audit
# differs by design in two places: the first text line names the --root
# directory, and the JSON "cost" object measures each run; both are masked.
# The captures hold the UTF-8 bars; piped (not a terminal), numaguardctl
# prints each cell as one ASCII character (numaguardctl(1), TERMINALS):
# full '#', half or more '+', less '-'.
ascii_bars() {
        LC_ALL=C sed -e 's/\xe2\x96\x88/#/g' -e 's/\xe2\x96\x89/+/g' -e 's/\xe2\x96\x8a/+/g' -e 's/\xe2\x96\x8b/+/g' \
                -e 's/\xe2\x96\x8c/+/g' -e 's/\xe2\x96\x8d/-/g' -e 's/\xe2\x96\x8e/-/g' -e 's/\xe2\x96\x8f/-/g'
}
norm() {
        case $1 in
        audit.json) jq 'del(.cost)' ;;
        audit.txt) sed -E '1s/^numaguard audit of .*: ([0-9]+ nodes?, )/numaguard audit: \1/' | ascii_bars ;;
        *.txt) ascii_bars ;;
        *) cat ;;
        esac
}

# check TREE NAME OUTPUT ARGS...: run numaguardctl ARGS --root TREE and
# compare stdout with TREE/numaguard/OUTPUT.
check() {
        local tree=$1 name=$2 out=$3; shift 3
        local id=golden-$name-$out
        local want=$tree/numaguard/$out
        "$CTL" "$@" --root "$tree" > "$tmp/out" 2> "$tmp/err"
        local rc=$?
        # audit exits 0/1/2 by findings (monitoring-plugin convention); only 3
        # (could not audit) is a failure there. Elsewhere anything but 0 is.
        local bad=0
        case $1 in
        audit) [ $rc -le 2 ] || bad=1 ;;
        *) [ $rc = 0 ] || bad=1 ;;
        esac
        if [ $bad = 1 ]; then
                echo "not ok $id: numaguardctl $* --root exited $rc"
                sed 's/^/#   /' "$tmp/err"
                fails=$((fails + 1))
        else
                norm "$out" < "$want" > "$tmp/want.n"
                norm "$out" < "$tmp/out" > "$tmp/out.n"
                if cmp -s "$tmp/want.n" "$tmp/out.n"; then
                        echo "ok $id"
                elif [ "${GOLDEN_UPDATE:-0}" = 1 ]; then
                        # make golden-update: take the new output, show the change
                        echo "# updated $want (- captured, + now):"
                        diff -u "$tmp/want.n" "$tmp/out.n" | sed 's/^/#   /'
                        cp "$tmp/out" "$want"
                        echo "ok $id (updated)"
                else
                        echo "not ok $id: --root output differs from $want (- captured, + now)"
                        diff -u "$tmp/want.n" "$tmp/out.n" | head -n 60 | sed 's/^/#   /'
                        fails=$((fails + 1))
                fi
        fi
}

for tree in "${trees[@]}"; do
        tree=${tree%/}
        name=${tree##*/}
        for cmd in topology segments audit; do
                for fmt in txt json; do
                        out=$cmd.$fmt
                        if [ ! -f "$tree/numaguard/$out" ]; then
                                echo "not ok golden-$name-$out: numaguard/$out missing"; fails=$((fails + 1))
                                continue
                        fi
                        args=("$cmd")
                        [ "$fmt" = json ] && args+=(--json)
                        # audit: the configuration the snapshot was taken with
                        [ "$cmd" = audit ] && [ -f "$tree/numaguard/numaguard.conf" ] &&
                                args+=(--config "$tree/numaguard/numaguard.conf")
                        check "$tree" "$name" "$out" "${args[@]}"
                done
        done
done
[ $fails = 0 ]
