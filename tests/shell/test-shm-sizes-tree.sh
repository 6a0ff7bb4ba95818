#!/usr/bin/env bash
# suite: alongside
# numaguardctl --root on tests/fixtures/shm-sizes/tree, a snapshot of a
# /dev/shm holding a file fragmented past the extents numaguard follows, a
# 2^63-1 byte sparse file and a fallocated one (its README.md): each
# segment's size, resident bytes, nodes and placement coverage against what
# a person concludes from the tree's own records (EXPECTED), and the audit:
# each file an ORPHAN_SEGMENT (nobody maps it), nothing incomplete.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
FIX=$SRC/tests/fixtures/shm-sizes
TREE=$FIX/tree
rows=$(grep -c '^/' "$FIX/EXPECTED")
echo "1..$((rows * 2 + 3))"
[ -x "$CTL" ] || { echo "not ok shm-sizes-tree: $CTL not built"; exit 1; }
command -v jq > /dev/null || { echo "not ok shm-sizes-tree: jq missing"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_PREFIX=shm-sizes-tree; . "$SRC/tests/shell/lib.sh"
"$CTL" segments --root "$TREE" --json > "$tmp/seg.json" 2> "$tmp/seg.err"; rc=$?
check_expr segments-rc '[ $rc = 0 ]' "segments --root exited $rc: $(head -c 300 "$tmp/seg.err")"
while IFS='|' read -r name bytes resident nodes cov; do
        [[ $name == /* ]] || continue
        # resident, nodes and coverage through jq; the size as printed (jq
        # reads numbers as doubles: 2^63-1 would not survive it)
        got=$(jq -r --arg n "$name" '.segments[] | select(.kind == "file" and .name == $n) |
                "\(.resident_bytes)|\([.nodes[] | "\(.id):\(.bytes)"] | join(","))|\(.placement_coverage * 10000 | round / 10000)"' \
                "$tmp/seg.json" 2>&1)
        want="$resident|$nodes|$(awk -v c="$cov" 'BEGIN { printf "%g", c }')"
        got=${got%|*}"|"$(awk -v c="${got##*|}" 'BEGIN { printf "%g", c }')
        check_expr "${name##*/}" '[ "$got" = "$want" ]' "resident|nodes|coverage: '$got', expected '$want'"
        size=$(sed -n "/\"name\":\"${name//\//\\/}\"/,/\"bytes\":/s/^ *\"bytes\":\([0-9]*\),*$/\1/p" "$tmp/seg.json")
        check_expr "${name##*/}-bytes" '[ "$size" = "$bytes" ]' "bytes: '$size', expected $bytes"
done < "$FIX/EXPECTED"
"$CTL" audit --root "$TREE" --json > "$tmp/audit.json" 2> "$tmp/audit.err"
codes=$(jq -r '[.findings[] | .code + " " + (.segment // "")] | sort | join(";")' "$tmp/audit.json" 2>&1)
want=$(grep '^/' "$FIX/EXPECTED" | cut -d'|' -f1 | sort | sed 's/^/ORPHAN_SEGMENT /' | paste -sd';')
check_expr audit-orphans '[ "$codes" = "$want" ]' "findings '$codes', expected '$want'"
check_expr audit-complete '! grep -q AUDIT_INCOMPLETE "$tmp/audit.json"' \
        "an AUDIT_INCOMPLETE: $(jq -c '[.findings[] | select(.code == "AUDIT_INCOMPLETE")]' "$tmp/audit.json")"
[ "$fails" = 0 ]
