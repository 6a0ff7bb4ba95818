#!/usr/bin/env bash
# suite: alongside
# numaguardctl rehearse --root on the trees captured by the pg-rehearse
# guest case and those tests/fixtures/derive-rehearse-trees derives from
# them (Oracle and MariaDB beside the PostgreSQL; tests/fixtures/rehearse/
# README.md): each tree's answer against what a person concludes from its
# files (EXPECTED); a snapshot of a derived tree rehearsed again; then
# copies of one tree with PostgreSQL's configuration changed as a DBA
# would (a line the server would refuse, the file unreadable) and what
# the rehearsal and the audit say of them.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
FIX=$SRC/tests/fixtures/rehearse
rows=$(grep -c '^[a-z]' "$FIX/EXPECTED")
echo "1..$((rows + 9))"
[ -x "$CTL" ] || { echo "not ok rehearse-trees: $CTL not built"; exit 1; }
command -v jq > /dev/null || { echo "not ok rehearse-trees: jq missing"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_PREFIX=rehearse-trees; . "$SRC/tests/shell/lib.sh"
fields() {      # fields TREE [ENGINE]: the rehearsal of ENGINE's instance (postgresql) as the EXPECTED columns
        "$CTL" rehearse --root "$1" --json 2> "$tmp/err" | jq -r --arg e "${2:-postgresql}:" '[.rehearsals[] |
            select(.instance | startswith($e))][0] | "\(.outcome)|\(.pages)|\(.nodes)|\(.from_nodes)|\(.cyclops)|" +
            "\(.available_pages)|\(.free_on_nodes_pages)|\(.partial_pages)"'
}
engine() {      # engine TREE: the engine of the instance a tree of EXPECTED is about
        case $1 in oracle-*) echo oracle ;; mariadb-*) echo mysql ;; *) echo postgresql ;; esac
}
derived=$tmp/derived
bash "$SRC/tests/fixtures/derive-rehearse-trees" "$derived" > "$tmp/derive.log" 2>&1 ||
        echo "# derive-rehearse-trees failed: $(head -c 300 "$tmp/derive.log")"
while IFS='|' read -r tree want; do
        [[ $tree == "#"* || -z $tree ]] && continue
        dir=$FIX/$tree
        [ -d "$dir" ] || dir=$derived/$tree
        got=$(fields "$dir" "$(engine "$tree")")
        check_expr "$tree" '[ "$got" = "$want" ]' "rehearse --root: '$got', expected '$want' ($(head -c 300 "$tmp/err"))"
done < "$FIX/EXPECTED"

# Oracle TRUE short of pages: exit 1, the part in hugepages said, a warning
"$CTL" rehearse --root "$derived/oracle-partial" oracle:ORCL > "$tmp/out" 2>&1; rc=$?
check_expr oracle-partial-exit '[ $rc = 1 ] && grep -q "partly in 4 KiB pages (16 of 34 hugepages)" "$tmp/out" &&
        grep -q "use_large_pages = TRUE (/u01/app/oracle/product/19c/dbhome_1/dbs/spfileORCL.ora:24)" "$tmp/out"' \
        "exit $rc: $(cat "$tmp/out")"
"$CTL" audit --root "$derived/oracle-partial" --json 2> /dev/null > "$tmp/audit.json"
check_expr oracle-partial-finding '[ "$(jq -r "[.findings[] | select(.code == \"HUGEPAGE_NEXT_START\" and
        .instance == \"oracle:ORCL\") | .severity] | join(\",\")" "$tmp/audit.json")" = warning ]' \
        "audit findings: $(jq -c '[.findings[] | [.code, .instance]]' "$tmp/audit.json")"
# the spfile in ASM: exit 3, said why
"$CTL" rehearse --root "$derived/oracle-asm" oracle:ORCL > "$tmp/out" 2>&1; rc=$?
check_expr oracle-asm-why '[ $rc = 3 ] && grep -q "its parameter file is in Oracle ASM (+DATA/ORCL/PARAMETERFILE/spfile.270.1101020304" "$tmp/out"' \
        "exit $rc: $(cat "$tmp/out")"
# a snapshot of a derived tree keeps what the rehearsal read (pmon's
# environment, the spfile, mariadbd's option files) and answers the same
for t in oracle-partial mariadb-bound; do
        "$CTL" snapshot --root "$derived/$t" -o "$tmp/$t.tar.gz" > /dev/null 2>&1
        mkdir -p "$tmp/$t.replay" && tar -xzf "$tmp/$t.tar.gz" -C "$tmp/$t.replay" 2> /dev/null
        want=$(fields "$derived/$t" "$(engine "$t")")
        got=$(fields "$tmp/$t.replay" "$(engine "$t")")
        check_expr "$t-snapshot" '[ -n "$want" ] && [ "$got" = "$want" ]' "from the snapshot: '$got', from the tree: '$want'"
done

t=$tmp/t

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
