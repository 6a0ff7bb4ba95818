#!/usr/bin/env bash
# suite: alongside
# numaguardctl rehearse --root on the trees captured by the pg-rehearse
# guest case (tests/fixtures/rehearse/README.md): each tree's answer against
# what a person concludes from its files (EXPECTED); then copies of one tree
# with PostgreSQL's configuration changed as a DBA would (huge_pages off, a
# line the server would refuse, the file unreadable) and what the rehearsal
# and the audit say of them.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
FIX=$SRC/tests/fixtures/rehearse
rows=$(grep -c '^[a-z]' "$FIX/EXPECTED")
echo "1..$((rows + 5))"
[ -x "$CTL" ] || { echo "not ok rehearse-trees: $CTL not built"; exit 1; }
command -v jq > /dev/null || { echo "not ok rehearse-trees: jq missing"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_PREFIX=rehearse-trees; . "$SRC/tests/shell/lib.sh"
fields() {      # fields TREE: the PostgreSQL rehearsal as the EXPECTED columns
        "$CTL" rehearse --root "$1" --json 2> "$tmp/err" | jq -r '[.rehearsals[] | select(.instance | startswith("postgresql:"))][0] |
            "\(.outcome)|\(.pages)|\(.nodes)|\(.from_nodes)|\(.cyclops)|\(.available_pages)|\(.free_on_nodes_pages)"'
}
while IFS='|' read -r tree want; do
        [[ $tree == "#"* || -z $tree ]] && continue
        got=$(fields "$FIX/$tree")
        check_expr "$tree" '[ "$got" = "$want" ]' "rehearse --root: '$got', expected '$want' ($(head -c 300 "$tmp/err"))"
done < "$FIX/EXPECTED"

# a copy whose next start is set to huge_pages = off: as asked, no finding
t=$tmp/t
cp -a "$FIX/none-short-on" "$t"
conf=$(ls -d "$t"/proc/*/cwd | head -1)
sed -i "s/^huge_pages = 'on'/huge_pages = 'off'/" "$conf/postgresql.auto.conf"
check_expr off '[ "$(fields "$t" | cut -d"|" -f1)" = 4k-by-setting ]' "huge_pages = off: $(fields "$t")"

# the original answers no-start: exit 2 and a critical HUGEPAGE_NEXT_START
"$CTL" rehearse --root "$FIX/none-short-on" > "$tmp/out" 2>&1; rc=$?
check_expr no-start-exit '[ $rc = 2 ] && grep -q "it refuses to start" "$tmp/out" && grep -q "fix: *reserve 3 more 2M pages" "$tmp/out"' \
        "exit $rc: $(cat "$tmp/out")"
"$CTL" audit --root "$FIX/none-short-on" --json 2> /dev/null > "$tmp/audit.json"
check_expr finding '[ "$(jq -r "[.findings[] | select(.code == \"HUGEPAGE_NEXT_START\") | .severity] | join(\",\")" "$tmp/audit.json")" = critical ]' \
        "audit findings: $(jq -c '[.findings[] | .code]' "$tmp/audit.json")"

# a line the server would refuse: unknown, naming the file and line (exit 3)
cp -a "$FIX/none-short-on" "$t.bad"
conf=$(ls -d "$t.bad"/proc/*/cwd | head -1)
printf "huge pages = on\n" >> "$conf/postgresql.auto.conf"
"$CTL" rehearse --root "$t.bad" > "$tmp/bad" 2>&1; rc=$?
check_expr bad-line '[ $rc = 3 ] && grep -q "postgresql.auto.conf:[0-9]*: Invalid argument" "$tmp/bad"' "exit $rc: $(cat "$tmp/bad")"

# the file gone: unknown too, never a guess
rm "$conf/postgresql.conf"
"$CTL" rehearse --root "$t.bad" > "$tmp/gone" 2>&1; rc=$?
check_expr missing '[ $rc = 3 ] && grep -q "postgresql.conf: No such file" "$tmp/gone"' "exit $rc: $(cat "$tmp/gone")"
[ "$fails" = 0 ]
