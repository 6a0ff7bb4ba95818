#!/usr/bin/env bash
# numaguardctl's command line: exit statuses and messages (table-driven),
# and the shape of `topology --json` (schema 1, nodes[] with id/cpus/
# distances) on a committed fixture tree and on the live host.
#
# Exit status contract (numaguardctl(1), docs/ARCHITECTURE.md "Contracts"): 0 success,
# 2 a correction refused (a node not online, an instance not running: the
# reason names what is missing), 3 bad usage or could not read the host.
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
# An instance configured but not running, with and without a cgroup.
printf '[instance GHOST]\nmatch_comm = ora_pmon_GHOST\npolicy = bind\nnodes = 1\n' > "$tmp/ghost.conf"
printf '[instance GHOST]\ncgroup = /ghost\npolicy = bind\nnodes = 1\n' > "$tmp/ghost-cg.conf"
: > "$tmp/defaults.conf"
# nodes = beyond the 4-node tree's
printf '[instance WIDE]\nmatch_comm = wide\nnodes = 0-7\n' > "$tmp/wide.conf"
TAP_PREFIX=cli; . "$SRC/tests/shell/lib.sh"

# The committed tree the --root cases read; without it they fail, loudly.
tree=$TREES/guest4-v2

# NAME % ARGS (word-split) % EXIT % STDOUT ERE % STDERR ERE
# An empty regex means "must be empty"; "." means "anything non-empty";
# "*" means "not checked".
cases=(
        "help%--help%0%^Usage: numaguardctl \[OPTIONS\] COMMAND%"
        "help-short%-h%0%^Usage: numaguardctl \[OPTIONS\] COMMAND%"
        "help-command%help%0%^Usage: numaguardctl \[OPTIONS\] COMMAND%"
        "help-with-command%topology --help%0%^Usage: numaguardctl topology \[%"
        "help-word-with-subcommands%help hugepages%0%^Usage: numaguardctl hugepages apply%"
        "help-unknown%help frobnicate%3%%^numaguardctl: help: no command 'frobnicate' \(see 'numaguardctl --help'\)$"
        "version%--version%0%^numaguardctl [0-9]+\.[0-9]+\.[0-9]+$%"
        "no-command%%3%%^numaguardctl: no command given \(see 'numaguardctl --help'\)$"
        "unknown-command%frobnicate%3%%^numaguardctl: unknown command 'frobnicate' \(see 'numaguardctl --help'\)$"
        "unknown-option%--frobnicate topology%3%%^numaguardctl: topology: unrecognized option '--frobnicate' \(see 'numaguardctl help topology'\)$"
        "unknown-short-option%-Z topology%3%%^numaguardctl: topology: invalid option -- 'Z' \(see 'numaguardctl help topology'\)$"
        "unknown-option-no-command%--frobnicate%3%%^numaguardctl: unrecognized option '--frobnicate' \(see 'numaguardctl --help'\)$"
        "missing-option-argument%topology --root%3%%^numaguardctl: topology: option '--root' requires an argument"
        "extra-argument%topology extra%3%%^numaguardctl: topology: unexpected argument 'extra'"
        "two-commands%topology segments%3%%unexpected argument 'segments'"
        "missing-instance%rebalance%3%%^numaguardctl: rebalance: missing INSTANCE \(see 'numaguardctl help rebalance'\)$"
        "missing-instance-cpuset%cpuset apply --dry-run%3%%^numaguardctl: cpuset apply: missing INSTANCE"
        "reserve-without-pages%hugepages reserve --size 2M%3%%^numaguardctl: hugepages reserve: --pages P is required"
        "reserve-bad-pages%hugepages reserve --size 2M --pages -1%3%%^numaguardctl: hugepages reserve: --pages: invalid value '-1'"
        "reserve-bad-node%hugepages reserve --size 2M --pages 1 --node x%3%%^numaguardctl: hugepages reserve: --node: invalid value 'x'"
        "version-with-command%topology --version%3%%^numaguardctl: topology: --version"
        "root-nonexistent-topology%topology --root $tmp/nonexistent%3%%^numaguardctl: .*(No such file or directory|$tmp/nonexistent)"
        "root-nonexistent-segments%segments --root $tmp/nonexistent%3%%^numaguardctl: .*(No such file or directory|$tmp/nonexistent)"
        "root-nonexistent-json%topology --json --root $tmp/nonexistent%3%%^numaguardctl: "
        "root-nonexistent-snapshot%snapshot -o $tmp/x.tar.gz --root $tmp/nonexistent%3%%^numaguardctl: "
        "root-empty-dir%topology --root $tmp/empty%3%%^numaguardctl: --root $tmp/empty: no proc/ or sys/ under it"
        "root-empty-dir-audit%audit --root $tmp/empty%3%%no proc/ or sys/"
        "hugepages-without-subcommand%hugepages%3%%^numaguardctl: hugepages: which one: plan, reserve or apply\? \(see 'numaguardctl help hugepages'\)$"
        "hugepages-unknown%hugepages frob%3%%^numaguardctl: hugepages: no subcommand 'frob' \(plan, reserve or apply\)"
        "config-missing%audit --config $tmp/nonexistent.conf%3%%configuration $tmp/nonexistent.conf is not usable"
        "root-is-a-file%topology --root /etc/hostname%3%%^numaguardctl: .*(Not a directory|/etc/hostname)"
        "snapshot-output-unwritable%snapshot -o $tmp/no/such/dir/x.tar.gz --root ${tree:-/}%3%%^numaguardctl: writing $tmp/no/such/dir/x.tar.gz: No such file or directory$"
)
cases+=(
        "root-tree-topology%topology --root $tree%0%^4 nodes online \(0-3\)%"
        "root-tree-trailing-slash%topology --root $tree/%0%^4 nodes online \(0-3\)%"
        "root-tree-short-option%-r $tree -j topology%0%\"schema\": ?1,%"
        "root-tree-segments%segments --root $tree%0%^sysv SYSV%"
        "reserve-node-not-online%hugepages reserve --size 2M --pages 8 --node 7 --dry-run --root $tree -c $tmp/defaults.conf%2%%^hugepages 2M node 7: refused: --node 7: no such node online \(online: 0-3\)$"
        "rebalance-unknown-instance%rebalance NOPE --dry-run --root $tree -c $tmp/defaults.conf%3%%^numaguardctl: no instance 'NOPE'"
        "rebalance-instance-not-found%rebalance GHOST --dry-run --root $tree -c $tmp/ghost.conf%2%*%^rebalance GHOST: refused: instance GHOST was not found: no process matches it"
        "cpuset-instance-not-found%cpuset apply GHOST --dry-run --root $tree -c $tmp/ghost.conf%2%%^cpuset GHOST: refused: instance GHOST was not found: no process matches it"
        "cpuset-missing-cgroup%cpuset apply GHOST --dry-run --root $tree -c $tmp/ghost-cg.conf%2%%^cpuset GHOST: refused: cgroup /ghost of instance GHOST was not found"
        # the info: AUTONUMA_ON, which bears on shmid-1's 4 KiB pages
        "audit-instance%audit --root $tree -c $tmp/ng.conf --instance unclaimed:shmid-1 --instance unclaimed:shmid-2%1%^numaguard audit of .*: 4 nodes, 2 instances, 2 segments; 0 critical, 3 warnings, 1 info$%"
        "audit-instance-only-its-findings%audit --root $tree -c $tmp/ng.conf --instance unclaimed:shmid-1%1%^warning  HUGEPAGE_SHORTFALL \[unclaimed:shmid-1\]%"
        "audit-instance-configured-down%audit --root $tree -c $tmp/ghost.conf --instance GHOST%1%^warning  INSTANCE_NOT_FOUND \[GHOST\]%"
        "audit-nodes-beyond-tree%audit --root $tree -c $tmp/wide.conf%1%*%^numaguardctl: $tmp/wide.conf:3: warning: \[instance WIDE\] nodes 4-7 do not exist on this host \(its nodes: 0-3\)$"
        "audit-instance-unknown%audit --root $tree -c $tmp/ng.conf --instance NOPE%3%%^numaguardctl: audit: no instance 'NOPE'; known instances: unclaimed:shmid-0 "
        "json-takes-no-value%audit --json=yes%3%%^numaguardctl: audit: --json takes no value \('--json=yes'\) \(see 'numaguardctl help audit'\)$"
        "flag-takes-no-value-no-command%--dry-run=1 hugepages apply%3%%^numaguardctl: hugepages apply: --dry-run takes no value"
        "probe-size-suffix%probe --size 64M --nodes 99%3%%^numaguardctl: probe: no node with memory among the selected nodes"
        "probe-size-bare-mib%probe --size 64 --nodes 99%3%%^numaguardctl: probe: no node with memory among the selected nodes"
        "probe-size-not-whole-mib%probe --size 1.5G%3%%^numaguardctl: probe: --size: '1.5G' is not a buffer size of whole MiB from 1M to 1T"
)

# Every command with the options it takes besides --help: its help must list
# exactly these, and every other option is a usage error naming the command.
commands=(
        "audit%--root --config --instance --exact --json --color --verbose"
        "topology%--root --json --color"
        "segments%--root --exact --json --color"
        "hugepages plan%--root --config --exact --json --color"
        "hugepages reserve%--root --config --dry-run --persist --json --size --pages --node --color"
        "hugepages apply%--root --config --exact --dry-run --persist --json --color"
        "cpuset apply%--root --config --dry-run --json --color"
        "rebalance%--root --config --exact --dry-run --json --color"
        "snapshot%--root --config --exact --output"
        "probe%--root --config --json --size --nodes --save --color"
        "status%--config --socket --json --color"
        "reload%--config --socket"
)
all_options="--root --config --instance --exact --json --output --dry-run --size --pages --node --nodes --save --socket --color --verbose"

# JSON of every reporting command, corrections included, on the committed
# tree (corrections on a copy): NAME % ARGS % EXIT % numaguardctl(1) section
# documenting its fields % jq assertion on values. Every key in the output
# must be named in that section.
cp -a "$tree" "$tmp/tree"
printf '[global]\nmin_segment_size = 1M\nnode_free_floor = 0\n' > "$tmp/ng.conf"
R="--root $tmp/tree -c $tmp/ng.conf"
jsons=(
        "audit%audit --json $R%2%audit \\-\\-json%.schema == 1 and (.instances | length) == 6 and .summary.exit_status == 2"
        "audit-instance%audit --json $R --instance unclaimed:shmid-3%2%audit \\-\\-json%(.instances | map(.name)) == [\"unclaimed:shmid-3\"] and (.segments | length) == 1 and ([.findings[] | select(.instance != \"\") | .instance] | unique) == [\"unclaimed:shmid-3\"] and ([.findings[] | select(.instance == \"\") | .code] == [\"AUTONUMA_ON\"]) and .summary.exit_status == 2"
        "topology%topology --json --root $tmp/tree%0%audit \\-\\-json%.schema == 1 and (.nodes | length) == 4"
        "segments%segments --json --root $tmp/tree%0%segments \\-\\-json%.schema == 1 and (.segments | map(select(.kind == \"sysv\")) | length) == 4"
        "hugepages-plan%hugepages plan --json $R%1%hugepages plan \\-\\-json%.schema == 1 and .page_kib == 2048 and .changes and (.instances | length) == 6 and ([.writes[].value] == [9, 5, 10]) and .sysctl_nr_hugepages == 32"
        "apply-dry-run%hugepages apply --dry-run --json $R%0%Corrections \\-\\-json%.action == \"hugepages\" and .target == \"2M plan\" and .outcome == \"dry-run\" and ([.writes[].asked] == [\"9\", \"5\", \"10\"])"
        "reserve-dry-run%hugepages reserve --size 2M --pages 8 --dry-run --json $R%0%Corrections \\-\\-json%.schema == 1 and .action == \"hugepages\" and .dry_run and .outcome == \"dry-run\" and .plan.page_size == \"2M\" and (.writes | length) == 1 and .writes[0].before == \"8\" and .writes[0].asked == \"4\" and .writes[0].read_back == null and (.writes[0].written | not) and .writes[0].path == \"$tmp/tree\" + .writes[0].host_path"
        "reserve-written%hugepages reserve --size 2M --pages 8 --json $R%0%Corrections \\-\\-json%.outcome == \"done\" and .writes[0].written and .writes[0].read_back == \"4\" and .writes[0].error == null and .exit_status == 0"
        "cpuset-apply%cpuset apply unclaimed:shmid-0 --dry-run --json $R%2%Corrections \\-\\-json%.action == \"cpuset\" and .outcome == \"refused\" and .plan.refused and .plan.cgroup == \"/\" and .exit_status == 2"
        "reserve-node-not-online%hugepages reserve --size 2M --pages 8 --node 7 --json $R%2%Corrections \\-\\-json%.action == \"hugepages\" and .target == \"2M node 7\" and .outcome == \"refused\" and (.summary | test(\"no such node online\")) and .exit_status == 2"
        "rebalance-not-found%rebalance GHOST --dry-run --json --root $tmp/tree -c $tmp/ghost.conf%2%Corrections \\-\\-json%.action == \"rebalance\" and .exit_status == 2 and .segments[0].outcome == \"refused\" and (.segments[0].summary | test(\"instance GHOST was not found\"))"
        "rebalance%rebalance unclaimed:shmid-0 --dry-run --json $R%0%Corrections \\-\\-json%.action == \"rebalance\" and (.segments | length) == 1 and .segments[0].plan.move_pages == 1536 and .segments[0].outcome == \"dry-run\""
)

# the plan: the JSON table, the table, 3 per command (help, --help, strict options),
# help-lists-* (one per command), the tree's topology JSON (shape and
# values), the live topology and segments JSON
echo "1..$((${#jsons[@]} + ${#cases[@]} + 4 * ${#commands[@]} + 2 + 2 + 1 + 3))"

man_fields() {  # SECTION: the bold words of that .SS section of numaguardctl(1), and schema
        echo schema
        # through the environment: gawk (not mawk) turns the "\-" of a -v
        # value into "-", and the title would match nothing
        t="$1" awk '/^\.SS /{ on = (index($0, ENVIRON["t"]) > 0); next } /^\.SH /{ on = 0 } on && /^\.(B|BR|RB) /' \
                "$SRC/man/numaguardctl.1" | sed -E 's/^\.[A-Z]+ //' | grep -oE '[a-z_][a-z0-9_]*'
}
grep -q '^\.B schema$' "$SRC/man/numaguardctl.1" || echo "not ok cli-json-schema-documented: numaguardctl(1) does not name schema"
for j in "${jsons[@]}"; do
        IFS='%' read -r name args want_rc section test <<<"$j"
        # shellcheck disable=SC2086
        "$CTL" $args > "$tmp/j.json" 2> "$tmp/err" < /dev/null; rc=$?
        why=""
        [ "$rc" = "$want_rc" ] || why="exit $rc, expected $want_rc: $(head -c 200 "$tmp/err")"
        if ! command -v jq > /dev/null; then echo "skip cli-json-$name: jq not installed"; continue; fi
        if ! jq -e . "$tmp/j.json" > /dev/null 2>&1; then
                fail "json-$name" "not JSON: $(head -c 200 "$tmp/j.json")"; continue
        fi
        undocumented=$(comm -23 <(jq -r '[paths | .[] | strings] | unique[]' "$tmp/j.json") \
                <(man_fields "$section" | sort -u) | tr '\n' ' ')
        [ -z "$undocumented" ] || why="${why:+$why; }fields not in numaguardctl(1) '$section': $undocumented"
        jq -e "$test" "$tmp/j.json" > /dev/null || why="${why:+$why; }false: $test"
        if [ -z "$why" ]; then pass "json-$name"; else fail "json-$name" "$why"; fi
done
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

# The global --help lists every command on one line each.
"$CTL" --help > "$tmp/help" 2>&1
for c in "${commands[@]}"; do
        cmd=${c%%%*}
        if grep -qE "^  $cmd( [A-Z]+)? +[a-z]" "$tmp/help"; then pass "help-lists-${cmd// /-}"
        else fail "help-lists-${cmd// /-}" "--help does not list '$cmd'"; fi
done

# Per command: `help CMD` has the synopsis, exactly the command's options,
# every exit status 0..3 the command can return with a meaning, one example;
# `CMD --help` prints the same; each other option is refused with exit 3.
for c in "${commands[@]}"; do
        IFS='%' read -r cmd takes <<<"$c"
        id=${cmd// /-}
        # shellcheck disable=SC2086
        "$CTL" help $cmd > "$tmp/h" 2> "$tmp/herr"; rc=$?
        listed=$(grep -oE '^ +(-[a-z], )?--[a-z-]+' "$tmp/h" | sed 's/.*--/--/' | grep -vx -- --help | sort | tr '\n' ' ')
        want=$(tr ' ' '\n' <<<"$takes" | sort | tr '\n' ' ')
        why=""
        [ $rc = 0 ] || why="exit $rc"
        head -1 "$tmp/h" | grep -qE "^Usage: numaguardctl $cmd( |$)" || why="$why; first line: $(head -1 "$tmp/h")"
        [ "$listed" = "$want" ] || why="$why; options listed: '$listed', expected '$want'"
        grep -qE '^  -h, --help +[a-z]' "$tmp/h" || why="$why; --help not listed"
        sed -n '/^Exit status:$/,/^$/p' "$tmp/h" | grep -qE '^  3  [a-z]' || why="$why; no exit status 3 line"
        sed -n '/^Exit status:$/,/^$/p' "$tmp/h" | grep -qE '^  0  [a-z]' || why="$why; no exit status 0 line"
        [ "$(sed -n '/^Example:$/{n;p}' "$tmp/h" | grep -cE 'numaguard(ctl)?')" = 1 ] || why="$why; no example"
        [ ! -s "$tmp/herr" ] || why="$why; stderr: $(head -c 200 "$tmp/herr")"
        if [ -z "$why" ]; then pass "help-$id"; else fail "help-$id" "${why#; }"; fi
        # shellcheck disable=SC2086
        if "$CTL" $cmd --help 2>&1 | cmp -s - "$tmp/h"; then pass "dash-help-$id"
        else fail "dash-help-$id" "'$cmd --help' differs from 'help $cmd'"; fi
        why=""
        for opt in $all_options; do
                case " $takes " in *" $opt "*) continue ;; esac
                arg=""; case $opt in --root | --config | --instance | --output | --size | --pages | --node | --nodes | --socket | --color) arg=x ;; esac
                # shellcheck disable=SC2086
                "$CTL" $cmd $opt $arg > "$tmp/out" 2> "$tmp/err"; rc=$?
                [ $rc = 3 ] || why="$why; $opt: exit $rc"
                grep -qxF "numaguardctl: $cmd: $opt does not apply to this command (see 'numaguardctl help $cmd')" "$tmp/err" ||
                        why="$why; $opt: stderr $(head -c 200 "$tmp/err")"
                [ ! -s "$tmp/out" ] || why="$why; $opt: stdout not empty"
        done
        if [ -z "$why" ]; then pass "strict-options-$id"; else fail "strict-options-$id" "${why#; }"; fi
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
# snapshot writes its archive itself (libarchive): a failure is one line of
# its own, never tar's or gzip's; a device is never replaced by the archive.
one_line() {    # NAME FILE EXPECTED-LINE RC
        if [ "$4" = 3 ] && [ "$(wc -l < "$2")" = 1 ] && grep -qxF "$3" "$2"; then pass "$1"
        else fail "$1" "exit $4: $(head -c 400 "$2")"; fi
}
"$CTL" snapshot --root "$tree" -o - > /dev/full 2> "$tmp/err"; rc=$?
one_line snapshot-disk-full "$tmp/err" "numaguardctl: writing standard output: No space left on device" $rc
mkfifo "$tmp/fifo"
"$CTL" snapshot --root "$tree" -o "$tmp/fifo" 2> "$tmp/err"; rc=$?
[ -p "$tmp/fifo" ] || rc="$rc, the FIFO was replaced"
one_line snapshot-output-fifo "$tmp/err" "numaguardctl: writing $tmp/fifo: it exists and is not a regular file; not replaced" "$rc"
"$CTL" snapshot --root "$tree" -o "$tmp/tree" 2> "$tmp/err"; rc=$?
one_line snapshot-output-directory "$tmp/err" "numaguardctl: writing $tmp/tree: it exists and is not a regular file; not replaced" $rc

# A status refused by the socket's permissions names who may ask: here a
# root-only socket (0600) asked by nobody.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && command -v python3 > /dev/null; then
        mkdir -m 0755 "$tmp/sock" && chmod 0711 "$tmp"
        python3 -c 'import socket, sys, os, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o600); s.listen(1); time.sleep(30)' \
                "$tmp/sock/ctl.sock" & spid=$!
        for _ in $(seq 50); do [ -S "$tmp/sock/ctl.sock" ] && break; sleep 0.1; done
        out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" status --socket "$tmp/sock/ctl.sock" 2>&1); rc=$?
        kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
        if [ $rc = 3 ] && grep -qx "numaguardctl: permission denied on $tmp/sock/ctl.sock: only root may ask numaguardd; status_group in numaguard.conf(5) lets a group ask for status" <<<"$out"; then
                pass status-refused-names-status-group
        else
                fail status-refused-names-status-group "exit $rc: $out"
        fi
else
        echo "skip cli-status-refused-names-status-group: needs root, setpriv and python3"
fi
[ $fails = 0 ]
