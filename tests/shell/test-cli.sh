#!/usr/bin/env bash
# numaguardctl's command line: exit statuses and messages (table-driven),
# and the shape of `topology --json` (schema 1, nodes[] with id/cpus/
# distances) on a committed fixture tree and on the live host.
#
# Exit status contract (numaguardctl(1), DESIGN.md section 3): 0 success,
# 3 bad usage or could not read the host.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
TREES=$SRC/tests/fixtures/trees
[ -x "$CTL" ] || { echo "not ok cli: $CTL not built"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/empty"
fails=0
pass() { echo "ok cli-$1"; }
fail() { echo "not ok cli-$1: $2"; fails=$((fails + 1)); }

# The committed tree the --root cases read; without it they fail, loudly.
tree=$TREES/guest4-v2

# NAME % ARGS (word-split) % EXIT % STDOUT ERE % STDERR ERE
# An empty regex means "must be empty"; "." means "anything non-empty";
# "*" means "not checked".
cases=(
        "help%--help%0%^Usage: numaguardctl%"
        "help-short%-h%0%^Usage: numaguardctl%"
        "help-with-command%topology --help%0%^Usage: numaguardctl%"
        "version%--version%0%^numaguardctl [0-9]+\.[0-9]+\.[0-9]+$%"
        "no-command%%3%%^Usage: numaguardctl"
        "unknown-command%frobnicate%3%%unknown command 'frobnicate'"
        "unknown-option%--frobnicate topology%3%%unrecognized option '--frobnicate'"
        "unknown-short-option%-Z topology%3%%invalid option -- 'Z'"
        "missing-option-argument%topology --root%3%%requires an argument"
        "extra-argument%topology extra%3%%unexpected argument 'extra'"
        "two-commands%topology segments%3%%unexpected argument 'segments'"
        "root-nonexistent-topology%topology --root $tmp/nonexistent%3%%^numaguardctl: .*(No such file or directory|$tmp/nonexistent)"
        "root-nonexistent-segments%segments --root $tmp/nonexistent%3%%^numaguardctl: .*(No such file or directory|$tmp/nonexistent)"
        "root-nonexistent-json%topology --json --root $tmp/nonexistent%3%%^numaguardctl: "
        "root-nonexistent-snapshot%snapshot -o $tmp/x.tar.gz --root $tmp/nonexistent%3%%^numaguardctl: "
        "root-empty-dir%topology --root $tmp/empty%3%%^numaguardctl: --root $tmp/empty: no proc/ or sys/ under it"
        "root-empty-dir-audit%audit --root $tmp/empty%3%%no proc/ or sys/"
        "hugepages-without-plan%hugepages%3%%usage: numaguardctl hugepages plan"
        "hugepages-unknown%hugepages frob%3%%usage: numaguardctl hugepages plan"
        "config-missing%audit --config $tmp/nonexistent.conf%3%%configuration $tmp/nonexistent.conf is not usable"
        "root-is-a-file%topology --root /etc/hostname%3%%^numaguardctl: .*(Not a directory|/etc/hostname)"
        "snapshot-output-unwritable%snapshot -o $tmp/no/such/dir/x.tar.gz --root ${tree:-/}%3%*%^numaguardctl: "
)
cases+=(
        "root-tree-topology%topology --root $tree%0%^4 nodes online \(0-3\)%"
        "root-tree-trailing-slash%topology --root $tree/%0%^4 nodes online \(0-3\)%"
        "root-tree-short-option%-r $tree -j topology%0%\"schema\": ?1,%"
        "root-tree-segments%segments --root $tree%0%^sysv SYSV%"
)

# the plan: the table, help-lists-* (3), the tree's topology JSON (shape
# and values), the live topology and segments JSON
echo "1..$((${#cases[@]} + 3 + 2 + 2))"
[ -d "$tree/sys" ] || echo "# committed fixture tree $tree is missing: its cases fail"

for c in "${cases[@]}"; do
        IFS='%' read -r name args want_rc want_out want_err <<<"$c"
        # shellcheck disable=SC2086
        "$CTL" $args > "$tmp/out" 2> "$tmp/err" < /dev/null
        rc=$?
        why=""
        [ "$rc" = "$want_rc" ] || why="exit $rc, expected $want_rc"
        for stream in out err; do
                if [ $stream = out ]; then re=$want_out; else re=$want_err; fi
                f=$tmp/$stream
                case $re in
                '*') ;;
                '') [ ! -s "$f" ] || why="${why:+$why; }unexpected std$stream: $(head -c 200 "$f")" ;;
                *) grep -qE -- "$re" "$f" || why="${why:+$why; }std$stream does not match /$re/: $(head -c 200 "$f")" ;;
                esac
        done
        if [ -z "$why" ]; then pass "$name"; else fail "$name" "numaguardctl $args: $why"; fi
done

# Usage goes to stdout with --help (success) and to stderr on a usage error,
# and both list every command.
"$CTL" --help > "$tmp/help" 2>&1
for cmd in topology segments snapshot; do
        if grep -qE "^  $cmd " "$tmp/help"; then pass "help-lists-$cmd"
        else fail "help-lists-$cmd" "--help does not list '$cmd'"; fi
done

# topology --json: valid JSON, schema 1, nodes[] with id/cpus/distances, one
# distance per node, 10 on the diagonal.
json_shape() {  # json_shape NAME FILE
        local name=$1 f=$2 why
        if ! command -v jq > /dev/null; then echo "skip cli-$name: jq not installed"; return; fi
        why=$(jq -r '
                if .schema != 1 then "schema is \(.schema), expected 1"
                elif (.nodes | type) != "array" or (.nodes | length) == 0 then "no nodes[]"
                else (.nodes | length) as $n
                | [ .nodes | to_entries[] | .key as $i | .value
                    | if (.id | type) != "number" then "node \($i): id is not a number"
                      elif (.cpus | type) != "string" then "node \(.id): cpus is not a string"
                      elif (.distances | type) != "array" then "node \(.id): no distances[]"
                      elif (.distances | length) != $n then "node \(.id): \(.distances | length) distances for \($n) nodes"
                      elif .distances[$i] != 10 then "node \(.id): own distance \(.distances[$i]), expected 10"
                      else empty end ] | first // "OK"
                end' "$f" 2>&1)
        if [ "$why" = OK ]; then pass "$name"; else fail "$name" "$why"; fi
}

"$CTL" topology --json --root "$tree" > "$tmp/tree.json" 2>&1
json_shape topology-json-tree "$tmp/tree.json"
if command -v jq > /dev/null; then
        got=$(jq -c '[.nodes[] | {id, cpus, distances}]' "$tmp/tree.json" 2>&1)
        want='[{"id":0,"cpus":"0","distances":[10,21,21,21]},{"id":1,"cpus":"1","distances":[21,10,21,21]},{"id":2,"cpus":"2","distances":[21,21,10,21]},{"id":3,"cpus":"3","distances":[21,21,21,10]}]'
        if [ "$got" = "$want" ]; then pass topology-json-tree-values
        else fail topology-json-tree-values "got $got, expected $want"; fi
else
        echo "skip cli-topology-json-tree-values: jq not installed"
fi
if "$CTL" topology --json > "$tmp/live.json" 2> "$tmp/live.err"; then
        json_shape topology-json-live "$tmp/live.json"
else
        fail topology-json-live "numaguardctl topology --json exited $?: $(head -c 200 "$tmp/live.err")"
fi
if ! "$CTL" segments --json > "$tmp/seg.json" 2> "$tmp/seg.err"; then
        fail segments-json-live "numaguardctl segments --json exited $?: $(head -c 200 "$tmp/seg.err")"
elif ! command -v jq > /dev/null; then
        echo "skip cli-segments-json-live: jq not installed"
elif jq -e '.schema == 1 and (.segments | type) == "array"' "$tmp/seg.json" > /dev/null; then
        pass segments-json-live
else
        fail segments-json-live "segments --json has no schema 1 / segments[]"
fi
[ $fails = 0 ]
