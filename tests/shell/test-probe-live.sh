#!/usr/bin/env bash
# `numaguardctl probe` on the live host (any user: mbind and move_pages on
# its own buffers need no privilege):
#   1. the matrix has one row per node with online CPUs and one column per
#      node (1 x 1 on a one-node host), every cell measured, every buffer's
#      placement checked (pages_verified), and a plausible local latency
#      (20 ns to 1 us: a DRAM load, not a cache hit, not a page fault);
#   2. a buffer beyond a node's free memory is refused (exit 3, the floor
#      named), bad --size and --nodes are usage errors;
#   3. --save --root TREE writes TREE/var/lib/numaguard/latency.json with
#      what it printed; topology --root TREE reads it back, and a broken
#      file is named, not taken for an empty matrix;
#   4. --save where it cannot write fails before measuring (nothing on
#      stdout); runs that disagree are not saved (exit 1, each cell named).
#      NUMAGUARD_PROBE_MAX_SPREAD sets how far runs may lie apart: 1000 for
#      1-3 (a busy build host must not fail them), 1 to make any two runs
#      disagree.
# BUILD: build directory (default build).
set -u
echo 1..14
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
[ -x "$CTL" ] || { echo "not ok probe-live: $CTL not built"; exit 1; }
command -v jq > /dev/null || { echo "skip probe-live: jq not installed"; exit 77; }
[ -d /sys/devices/system/node/node0 ] || { echo "skip probe-live: no NUMA sysfs on this kernel"; exit 77; }

export NUMAGUARD_PROBE_MAX_SPREAD=1000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_PREFIX=probe-live; . "$SRC/tests/shell/lib.sh"
jqe() { jq -e "$@" > /dev/null; }

# ---- 1. shape and plausibility (a small buffer: this runs in every make check)
if ! "$CTL" probe --size 32 --json > "$tmp/p.json" 2> "$tmp/p.err"; then
        fail run "exit $?: $(cat "$tmp/p.err")"
        exit 1
fi
nodes=$(jq -c '[.nodes[].id]' < <("$CTL" topology --json))
cpu_nodes=$(jq -c '[.nodes[] | select(.memory_only | not) | .id]' < <("$CTL" topology --json))
check shape "$(jq -c '{nodes, cpu_nodes}' "$tmp/p.json") against topology $nodes / $cpu_nodes" \
        jqe --argjson n "$nodes" --argjson c "$cpu_nodes" '.schema == 1 and .nodes == $n and .cpu_nodes == $c
            and (.latency_ns | length) == ($c | length) and ([.latency_ns[], .bandwidth_mbps[] | length] | unique) == [$n | length]' \
        "$tmp/p.json"
check every-pair "$(jq -c '{latency_ns, bandwidth_mbps}' "$tmp/p.json")" \
        jqe '[.latency_ns[][], .bandwidth_mbps[][] | type == "number" and . > 0] | all' "$tmp/p.json"
check placement-verified "pages_verified $(jq -c .pages_verified "$tmp/p.json")" \
        jqe '.pages_verified | all(. > 0)' "$tmp/p.json"
local_ns=$(jq '.cpu_nodes[0] as $c | .latency_ns[0][.nodes | index($c)]' "$tmp/p.json")
check local-latency "local latency $local_ns ns" \
        jqe -n --argjson v "$local_ns" '$v >= 20 and $v <= 1000'
check text "$(head -3 "$tmp/p.err")" eval '"$CTL" probe --size 8 | grep -q "^latency in ns, beside the SLIT distance"'

# ---- 2. refusals
"$CTL" probe --size 1048576 > /dev/null 2> "$tmp/big.err"; rc=$?
check refuse-floor "exit $rc: $(cat "$tmp/big.err")" eval '[ $rc = 3 ] && grep -q "below its floor" "$tmp/big.err"'
"$CTL" probe --size 0 > /dev/null 2> "$tmp/e1"; r1=$?
"$CTL" probe --size 12x > /dev/null 2>> "$tmp/e1"; r2=$?
"$CTL" probe --nodes x-y > /dev/null 2>> "$tmp/e1"; r3=$?
check usage "exits $r1 $r2 $r3: $(cat "$tmp/e1")" eval '[ "$r1$r2$r3" = 333 ] && [ "$(grep -c "probe: --" "$tmp/e1")" = 3 ]'

# ---- 3. --save under --root, read back
# a minimal tree: the node files topology reads
n=$tmp/tree/sys/devices/system/node
mkdir -p "$tmp/tree/proc" "$n/node0"
for f in online possible has_cpu has_memory has_normal_memory; do
        cat /sys/devices/system/node/$f > "$n/$f" 2> /dev/null
done
for f in cpulist distance meminfo; do cat /sys/devices/system/node/node0/$f > "$n/node0/$f"; done
if "$CTL" probe --size 8 --save --root "$tmp/tree" --json > "$tmp/saved.json" 2> "$tmp/save.err"; then
        f=$tmp/tree/var/lib/numaguard/latency.json
        check save-root "$(cat "$tmp/save.err")" cmp -s "$tmp/saved.json" "$f"
        "$CTL" topology --root "$tmp/tree" --json > "$tmp/topo.json" 2> "$tmp/topo.err"
        check topology-root "$(cat "$tmp/topo.err")" jqe --slurpfile m "$f" '.latency == $m[0]' "$tmp/topo.json"
        check topology-root-text "no matrix in topology --root" \
                eval '"$CTL" topology --root "$tmp/tree" | grep -q "^measured by numaguardctl probe at "'
        echo '{"schema": 1, "nodes": [0], "cpu_nodes": [0], "latency_ns": [[-3]]}' > "$f"
        "$CTL" topology --root "$tmp/tree" --json > "$tmp/bad.json" 2> "$tmp/bad.err"; rc=$?
        check broken-file-named "exit $rc: $(jq -c .latency_error "$tmp/bad.json" 2> /dev/null)" \
                jqe '(.latency | not) and (.latency_error | test("latency.json: \"latency_ns\"\\[0\\]\\[0\\]"))' "$tmp/bad.json"
else
        fail save-root "exit $?: $(cat "$tmp/save.err")"
fi
# ---- 4. --save checked first; disagreeing runs not saved
mkdir -p "$tmp/ro/var" && : > "$tmp/ro/var/lib"
"$CTL" probe --size 8 --save --root "$tmp/ro" > "$tmp/ro.out" 2> "$tmp/ro.err"; rc=$?
check save-checked-first "exit $rc: $(cat "$tmp/ro.err"; head -2 "$tmp/ro.out")" eval '[ $rc = 3 ] && [ ! -s "$tmp/ro.out" ] &&
        grep -qx "numaguardctl: probe: cannot save to $tmp/ro/var/lib/numaguard/latency.json: Not a directory; nothing measured" "$tmp/ro.err"'
mkdir "$tmp/busy"
NUMAGUARD_PROBE_MAX_SPREAD=1 "$CTL" probe --size 8 --save --root "$tmp/busy" > "$tmp/busy.out" 2> "$tmp/busy.err"; rc=$?
check disagreeing-not-saved "exit $rc: $(cat "$tmp/busy.err")" eval '[ $rc = 1 ] && [ ! -e "$tmp/busy/var/lib/numaguard/latency.json" ] &&
        grep -q "^numaguardctl: probe: not saved to $tmp/busy/var/lib/numaguard/latency.json: the runs of [0-9]* cells\? disagree" "$tmp/busy.err"'
check disagreeing-cells-named "$(cat "$tmp/busy.err")" eval 'grep -qE "^numaguardctl: probe: CPU node [0-9]+ -> memory node [0-9]+: its runs disagree: .*[0-9.]+x apart" "$tmp/busy.err" &&
        grep -q "^latency in ns" "$tmp/busy.out"'
[ $fails = 0 ]
