#!/usr/bin/env bash
# suite: alongside
# Independent oracles for the committed snapshot trees: for each
# tests/fixtures/trees/TREE/, the findings and instance placements a person
# concludes from the tree's own files are written by hand in
# tests/fixtures/trees/TREE.expected (not what numaguardctl printed at
# capture: that is test-golden.sh). `numaguardctl audit --root TREE --json`
# with min_segment_size = 1M must produce exactly those, both ways, each
# as many times as expected (a finding given twice fails):
#
#   ok oracle-TREE-instances     every expected instance, with its main pid
#                                and per-node resident bytes; no other
#   ok oracle-TREE-findings      every expected finding (code, severity,
#                                instance, nodes, value); no other
#
# A tree without its .expected file fails.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
TREES=$SRC/tests/fixtures/trees
shopt -s nullglob
trees=("$TREES"/*/)
# two more results for the trees whose expectations name kernel features
# ("feature|NAME|STATE", against topology --json's kernel_features) and
# the codes a missing one keeps from being raised ("not_evaluated|CODE|
# FEATURE", against audit --json's summary.not_evaluated)
n_feat=0
for tree in "${trees[@]}"; do
        tree=${tree%/}
        grep -q '^feature|' "$TREES/${tree##*/}.expected" 2>/dev/null && n_feat=$((n_feat + 1))
done
echo "1..$((${#trees[@]} * 2 + n_feat * 2))"
[ -x "$CTL" ] || { echo "not ok oracle: $CTL not built"; exit 1; }
command -v jq > /dev/null || { echo "not ok oracle: jq not installed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '[global]\nmin_segment_size = 1M\n' > "$tmp/ng.conf"
fails=0

# take_one LINE FILE: drops the first LINE of FILE, only that one (a line
# the audit gave twice is left over: unexpected)
take_one() {
        awk -v l="$1" '!done && $0 == l { done = 1; next } 1' "$2" > "$2.tmp" && mv "$2.tmp" "$2"
}

# compare NAME KIND: expected lines of KIND against what the audit gave;
# a value "~X" matches within 0.0001.
compare() {
        local name=$1 kind=$2 l why=""
        local want=$tmp/want.$kind got=$tmp/got.$kind
        grep "^$kind|" "$exp" | sort > "$want"
        while IFS= read -r l; do
                if [[ $l == *"|~"* ]]; then
                        local pre=${l%|~*} v=${l##*|~} g
                        g=$(grep -F "$pre|" "$got" | head -1)
                        if [ -z "$g" ] || ! awk -v a="${g##*|}" -v b="$v" 'BEGIN { d = a - b; exit !(d < 0.0001 && d > -0.0001) }'; then
                                why+="missing $l (got: ${g:-nothing}); "
                        fi
                        take_one "$g" "$got"
                elif grep -qxF "$l" "$got"; then
                        take_one "$l" "$got"
                else
                        why+="missing $l; "
                fi
        done < "$want"
        [ -s "$got" ] && why+="unexpected: $(tr '\n' ';' < "$got")"
        if [ -z "$why" ]; then echo "ok oracle-$name-${kind}s"
        else echo "not ok oracle-$name-${kind}s: $why"; fails=$((fails + 1)); fi
}

for tree in "${trees[@]}"; do
        tree=${tree%/}
        name=${tree##*/}
        exp=$TREES/$name.expected
        if [ ! -f "$exp" ]; then
                echo "not ok oracle-$name-instances: no hand-written $exp"
                echo "not ok oracle-$name-findings: no hand-written $exp"
                fails=$((fails + 2)); continue
        fi
        "$CTL" audit --json --root "$tree" --config "$tmp/ng.conf" > "$tmp/a.json" 2> "$tmp/err"; rc=$?
        if [ $rc -gt 2 ]; then
                echo "not ok oracle-$name-instances: audit exited $rc: $(head -c 200 "$tmp/err")"
                echo "not ok oracle-$name-findings: audit exited $rc"
                fails=$((fails + 2)); continue
        fi
        jq -r '.instances[] | "instance|\(.name)|\(.main_pid)|\([.nodes[] | "\(.id):\(.bytes)"] | join(","))"' \
                "$tmp/a.json" > "$tmp/got.instance"
        jq -r '.findings[] | "finding|\(.code)|\(.severity)|\(.instance)|\(.nodes | map(tostring) | join(","))|\(.value)"' \
                "$tmp/a.json" > "$tmp/got.finding"
        compare "$name" instance
        compare "$name" finding
        if grep -q '^feature|' "$exp"; then
                "$CTL" topology --json --root "$tree" > "$tmp/t.json" 2> "$tmp/err" &&
                        jq -r '.kernel_features | to_entries[] | "feature|\(.key)|\(.value.state)"' "$tmp/t.json" \
                                > "$tmp/got.feature" || : > "$tmp/got.feature"
                compare "$name" feature
                jq -r '.summary.not_evaluated[] | "not_evaluated|\(.code)|\(.kernel_feature)"' "$tmp/a.json" \
                        > "$tmp/got.not_evaluated" 2>/dev/null || : > "$tmp/got.not_evaluated"
                compare "$name" not_evaluated
        fi
done
[ $fails = 0 ]
