#!/usr/bin/env bash
# suite: alongside
# A host whose nodes show a fraction of the memory /proc/meminfo counts (a
# virtual machine, a balloon driver) is said to be one, in topology, its
# JSON and the audit, and every ratio names its base (numaguardctl(1),
# topology).
#
# On a copy of the committed tree host (one node whose MemTotal equals
# /proc/meminfo's, 24684084 kB), altered: proc/meminfo's MemTotal made
# three times the node's (74052252 kB; nothing else changed, so every other
# field stays below it). The unaltered copy is said to agree. With
# pagetable_share = 0.01 the host's 1 GiB of page tables (1.4 % of the
# altered total) raise PAGETABLE_BLOAT, whose message names
# /proc/meminfo's MemTotal as its base.
# On the live host the same line appears exactly when the node files and
# /proc/meminfo, added up here with awk, are more than 2 % apart.
# BUILD: build directory (default build).
set -u
echo 1..5
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
CTL=$B/numaguardctl
TAP_PREFIX=memory-totals; . tests/shell/lib.sh
command -v jq > /dev/null || skip_all "jq not installed"
[ -x "$CTL" ] || { echo "not ok memory-totals: $CTL not built"; exit 1; }
T=$(mktemp -d /tmp/ng-memtotal.XXXXXX)
trap 'rm -rf "$T"' EXIT

cp -a tests/fixtures/trees/host "$T/same"
cp -a tests/fixtures/trees/host "$T/third"
node_kib=$(awk '$3 == "MemTotal:" { print $4 }' "$T/third/sys/devices/system/node/node0/meminfo")
host_kib=$(awk '$1 == "MemTotal:" { print $2 }' "$T/third/proc/meminfo")
[ "$node_kib" = 24684084 ] && [ "$host_kib" = 24684084 ] ||
        { echo "not ok memory-totals: the tree changed (node $node_kib kB, host $host_kib kB)"; exit 1; }
sed -i "s/^MemTotal: .*/MemTotal:       $((node_kib * 3)) kB/" "$T/third/proc/meminfo"
printf '[global]\npagetable_share = 0.01\n' > "$T/ng.conf"

"$CTL" topology --root "$T/third" > "$T/third.txt" 2> "$T/err"
"$CTL" topology --root "$T/third" --json > "$T/third.json" 2>> "$T/err"
"$CTL" topology --root "$T/same" > "$T/same.txt" 2>> "$T/err"
"$CTL" topology --root "$T/same" --json > "$T/same.json" 2>> "$T/err"
"$CTL" audit --root "$T/third" -c "$T/ng.conf" > "$T/audit.txt" 2>> "$T/err"
"$CTL" audit --root "$T/third" -c "$T/ng.conf" --json > "$T/audit.json" 2>> "$T/err"

line="memory: the nodes' MemTotal add up to 23 GiB, 33% of /proc/meminfo's MemTotal of 70 GiB: "
if grep -qF "$line" "$T/third.txt" && ! grep -q "^memory: " "$T/same.txt" && [ ! -s "$T/err" ]; then
        pass "topology-text"
else
        fail topology-text "no line \"$line...\" (or one on the unaltered tree, or errors): $(grep -i memtotal "$T/third.txt" "$T/same.txt") $(head -c 300 "$T/err")"
fi
if jq -e --argjson n "$node_kib" '.nodes_mem_total_kib == $n and .mem_total_kib == 3 * $n and .mem_totals_differ' \
        "$T/third.json" > /dev/null &&
   jq -e --argjson n "$node_kib" '.nodes_mem_total_kib == $n and .mem_total_kib == $n and .mem_totals_differ == false' \
        "$T/same.json" > /dev/null; then
        pass "topology-json"
else
        fail topology-json "$(jq -c '{mem_total_kib, nodes_mem_total_kib, mem_totals_differ}' "$T/third.json" "$T/same.json" 2>&1 | tr '\n' ' ')"
fi
if grep -qF "$line" "$T/audit.txt" && jq -e '.topology.mem_totals_differ' "$T/audit.json" > /dev/null; then
        pass "audit-says-so"
else
        fail audit-says-so "the audit does not say the totals differ"; head -5 "$T/audit.txt" | sed 's/^/# /'
fi
# the host-wide ratio: of /proc/meminfo's MemTotal, named with its size
if jq -e '[.findings[] | select(.code == "PAGETABLE_BLOAT" and .instance == "")
          | .message | test("1% of the host.s 70 GiB \\(its MemTotal;")] == [true]' "$T/audit.json" > /dev/null &&
   grep -q "(/proc/meminfo's PageTables)" "$T/audit.txt"; then
        pass "host-ratio-names-base"
else
        fail host-ratio-names-base "$(jq -c '[.findings[] | select(.code == "PAGETABLE_BLOAT") | .message]' "$T/audit.json")"
fi

# the live host: the line when the node files and /proc/meminfo disagree
nodes=$(cat /sys/devices/system/node/node*/meminfo 2>/dev/null | awk '$3 == "MemTotal:" { s += $4; n++ } END { if (n) print s }')
host=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
if [ -z "$nodes" ] || [ -z "$host" ]; then
        echo "skip memory-totals-live: no node meminfo here"
else
        apart=$(awk -v a="$nodes" -v b="$host" 'BEGIN { hi = a > b ? a : b; d = a > b ? a - b : b - a; print (d * 100 > hi * 2) ? 1 : 0 }')
        "$CTL" topology > "$T/live.txt" 2>&1
        said=$(grep -c "^memory: the nodes' MemTotal add up to" "$T/live.txt")
        check_expr live "[ $said = $apart ]" "nodes $nodes kB, /proc/meminfo $host kB: apart $apart, said $said"
fi
exit $((fails > 0))
