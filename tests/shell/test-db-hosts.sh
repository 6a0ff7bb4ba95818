#!/usr/bin/env bash
# Database hosts as they are in the field: hostile and partial inputs.
# Fixture trees under tests/fixtures/trees/hostile-* are captured trees with
# one file edited each (their README says which); every case here failed on
# the code before these checks existed. And an audit run without root on
# this live host: it cannot read other users' maps, so it must say so
# (AUDIT_INCOMPLETE) and exit 1 or more, never give an all-clear.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
HOSTILE=$SRC/tests/fixtures/hostile
WL=$B/tests/helpers/ng-shm-workload
echo 1..43
[ -x "$CTL" ] || { echo "not ok db-hosts: $CTL not built"; exit 1; }
tmp=$(mktemp -d)
pids=()
# An 11-character Oracle SID of this run's own: the granule files it names
# in /dev/shm are this run's, never those of an instance on the host.
sid=$(printf 'NGTEST%05d' $(($$ % 100000)))
cleanup() {
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        rm -f "/dev/shm/ora_${sid}_32768_"* 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
chmod 755 "$tmp"

# ---- without root ----
# As root, become nobody for the run; otherwise we already are not root.
if [ "$(id -u)" = 0 ]; then
        asuser() { setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all -- "$@"; }
else
        asuser() { "$@"; }
fi
cp "$CTL" "$tmp/numaguardctl" && chmod 755 "$tmp/numaguardctl"
asuser "$tmp/numaguardctl" audit --config /dev/null > "$tmp/nonroot.txt" 2>&1; rc=$?
if [ $rc -ge 1 ] && grep -q "AUDIT_INCOMPLETE" "$tmp/nonroot.txt" && ! grep -qi "no findings" "$tmp/nonroot.txt"; then
        echo "ok db-hosts-nonroot-incomplete (exit $rc)"
else
        echo "not ok db-hosts-nonroot-incomplete: exit $rc"; tail -5 "$tmp/nonroot.txt"
fi
asuser "$tmp/numaguardctl" audit --config /dev/null --json > "$tmp/nonroot.json" 2>/dev/null
if jq -e '[.findings[] | select(.code == "AUDIT_INCOMPLETE" and .severity == "warning"
                and (.message | test(", not root, without CAP_SYS_PTRACE$")) and (.advice | test("^run as root")))]
                | length == 1' "$tmp/nonroot.json" >/dev/null; then
        echo "ok db-hosts-nonroot-incomplete-json"
else
        echo "not ok db-hosts-nonroot-incomplete-json"; head -c 600 "$tmp/nonroot.json"
fi

# ---- hostile trees: each is guest4-v2 with one file edited (README.md) ----
# audit_incomplete TREE ERE [EXIT]: audit exits EXIT (default 1: a warning,
# nothing else there) with an AUDIT_INCOMPLETE finding whose message
# matches ERE.
audit_incomplete() {
        local t=$HOSTILE/$1 out rc want=${3:-1}
        out=$("$CTL" audit --root "$t" --json 2>&1); rc=$?
        if [ $rc = "$want" ] && jq -e --arg re "$2" '[.findings[] | select(.code == "AUDIT_INCOMPLETE" and .severity == "warning"
                        and (.message | test($re)))] | length == 1' <<<"$out" >/dev/null 2>&1; then
                echo "ok db-hosts-$1"
        else
                echo "not ok db-hosts-$1: exit $rc, want $want and AUDIT_INCOMPLETE /$2/"
                jq -c '.findings' <<<"$out" 2>/dev/null | head -c 600; echo
        fi
}
audit_incomplete memfree-max "/sys/devices/system/node/node1/meminfo: MemFree 18446744073709551615 kB is more than any machine holds"
audit_incomplete node-meminfo-missing "/sys/devices/system/node/node2/meminfo: missing: the memory is unknown"
audit_incomplete node-online-missing "/sys/devices/system/node/online: missing while node directories exist"
audit_incomplete numa-maps-foreign-node "/proc/179/numa_maps: N7=2048 at 7f3cd6cad000: node 7 is not in the topology: the placement of the segments of pid 179 \\(ng-shm-workload\\) is unknown$"
audit_incomplete numa-maps-overflow "/proc/179/numa_maps: N3=18446744073709551615 pages"
audit_incomplete hugepages-overflow "/node0/hugepages/hugepages-2048kB: nr_hugepages 18446744073709551615"

audit_incomplete memfree-garbage "/sys/devices/system/node/node1/meminfo: no MemFree line that parses: free memory is unknown"
audit_incomplete hugepages-free-garbage "/node1/hugepages/hugepages-2048kB/free_hugepages: \"-1\" is not a count of pages"
audit_incomplete hugepages-nr-garbage "/node1/hugepages/hugepages-2048kB/nr_hugepages: \"garbage\" is not a count of pages"
audit_incomplete sysvipc-garbage-line "/proc/sysvipc/shm: 1 row without a key, shmid and mode"
# A segment of unknown size is audited whatever min_segment_size (it may be
# large): shmid 3, bound to node 3 with its CPU on node 0, is critical (2).
audit_incomplete sysvipc-negative-size "/proc/sysvipc/shm: shmid 3: a number of its row is not one the kernel prints" 2
audit_incomplete sysvipc-size-max "/proc/sysvipc/shm: shmid 3: size 18446744073709551615 bytes is more than any machine holds" 2
audit_incomplete sysvipc-segment-gone "/proc/sysvipc/shm: no row for shmid 3, which pid 204 maps" 2
audit_incomplete numa-maps-garbage "/proc/204/numa_maps: no line parses: the placement of the segments of pid 204"
audit_incomplete distance-garbage "/node0/distance: a value is not a number"

# What depends on an unknown is unknown, and nothing critical is lost.
printf '[instance O]\ncgroup = /oracle\n' > "$tmp/oc.conf"
# no NODE_PRESSURE "0 KiB free" on a MemFree that does not parse; topology says unknown
out=$("$CTL" audit --root "$HOSTILE/memfree-garbage" 2>&1)
top=$("$CTL" topology --root "$HOSTILE/memfree-garbage" 2>&1)
if ! grep -q NODE_PRESSURE <<<"$out" && grep -qE '^ +1  1 +503 MiB +unknown ' <<<"$top"; then
        echo "ok db-hosts-memfree-garbage-unknown"
else echo "not ok db-hosts-memfree-garbage-unknown: $(grep -A1 NODE_PRESSURE <<<"$out")"; fi
# a size nobody could read is null, never 0 (segment and instance)
for t in sysvipc-negative-size sysvipc-size-max sysvipc-segment-gone; do
        out=$("$CTL" audit --root "$HOSTILE/$t" --config "$tmp/oc.conf" --json 2>&1); rc=$?
        if [ $rc = 2 ] && jq -e '[.instances[] | select(.name == "O") | .shared_bytes == null
                and ([.segments[] | select(.shmid == 3) | .bytes == null] == [true])] == [true]' <<<"$out" >/dev/null; then
                echo "ok db-hosts-$t-size-null"
        else echo "not ok db-hosts-$t-size-null: exit $rc"; jq -c '[.instances[] | .shared_bytes, [.segments[] | .bytes]]' <<<"$out" 2>/dev/null; fi
done
# an impossible distance is unknown, never "distance -1"
out=$("$CTL" audit --root "$HOSTILE/distance-garbage" --config "$tmp/oc.conf" 2>&1); rc=$?
if [ $rc = 2 ] && ! grep -q "distance -1" <<<"$out" && grep -q "(distance unknown)" <<<"$out"; then
        echo "ok db-hosts-distance-garbage-unknown"
else echo "not ok db-hosts-distance-garbage-unknown: exit $rc: $(grep -m1 distance <<<"$out")"; fi
# A pool nobody could read is refused (2), not "no 2M pool" (3).
for t in hugepages-free-garbage hugepages-nr-garbage; do
        out=$("$CTL" hugepages reserve --size 2M --pages 20 --node 1 --dry-run --root "$HOSTILE/$t" 2>&1); rc=$?
        if [ $rc = 2 ] && grep -q "node 1: its 2M pool is unknown" <<<"$out"; then echo "ok db-hosts-$t-reserve-refused"
        else echo "not ok db-hosts-$t-reserve-refused: exit $rc: $out"; fi
done
# No correction on what is not understood (#25 point 6): refused (2), with why.
out=$("$CTL" hugepages apply --dry-run --root "$HOSTILE/sysvipc-size-max" --config "$tmp/oc.conf" 2>&1); rc=$?
if [ $rc = 2 ] && grep -q "the shared memory of O has a segment of unknown size" <<<"$out" && ! grep -q PiB <<<"$out"; then
        echo "ok db-hosts-sysvipc-size-max-apply-refused"
else echo "not ok db-hosts-sysvipc-size-max-apply-refused: exit $rc: $out"; fi
printf '[instance W]\nmatch_cmdline = *wl-sysv-bind3*\npolicy = interleave\n' > "$tmp/wf.conf"
out=$("$CTL" rebalance W --dry-run --root "$HOSTILE/numa-maps-foreign-node" --config "$tmp/wf.conf" 2>&1); rc=$?
if [ $rc = 2 ] && grep -q "its placement is unknown: the nodes of its 8 MiB resident were not read" <<<"$out" &&
        ! grep -q "would move" <<<"$out"; then
        echo "ok db-hosts-numa-maps-foreign-node-rebalance-refused"
else echo "not ok db-hosts-numa-maps-foreign-node-rebalance-refused: exit $rc: $(tail -1 <<<"$out")"; fi

# No correction is planned on supply nobody could read: refused (2), with why.
out=$("$CTL" hugepages reserve --size 2M --pages 200 --node 1 --dry-run --root "$HOSTILE/memfree-max" 2>&1); rc=$?
if [ $rc = 2 ] && grep -q "node 1: .*free memory is unknown" <<<"$out" && ! grep -q "would write" <<<"$out"; then
        echo "ok db-hosts-memfree-max-reserve-refused"
else
        echo "not ok db-hosts-memfree-max-reserve-refused: exit $rc: $out"
fi
# Unknown is shown as unknown (text) and null (JSON), never 0.
out=$("$CTL" topology --root "$HOSTILE/node-meminfo-missing" 2>&1)
if grep -qE '^ +2  2 +unknown +unknown ' <<<"$out"; then echo "ok db-hosts-node-meminfo-missing-text"
else echo "not ok db-hosts-node-meminfo-missing-text: $(head -6 <<<"$out")"; fi
if "$CTL" topology --json --root "$HOSTILE/node-meminfo-missing" |
        jq -e '[.nodes[] | select(.id == 2) | .mem_total_kib == null and .mem_free_kib == null] == [true]
               and ([.nodes[] | select(.id != 2) | .mem_total_kib > 0] | all)' >/dev/null; then
        echo "ok db-hosts-node-meminfo-missing-json"
else
        echo "not ok db-hosts-node-meminfo-missing-json"
fi
# A tree without node/online is still its 4 nodes.
out=$("$CTL" topology --root "$HOSTILE/node-online-missing" 2>&1)
if grep -q "^4 nodes online (0-3)" <<<"$out"; then echo "ok db-hosts-node-online-missing-nodes"
else echo "not ok db-hosts-node-online-missing-nodes: $(head -1 <<<"$out")"; fi
# An impossible page count is no placement, not 16383 PiB.
out=$("$CTL" segments --root "$HOSTILE/numa-maps-overflow" 2>&1)
if ! grep -q "PiB" <<<"$out" && grep -q "SYSV00000000" <<<"$out"; then echo "ok db-hosts-numa-maps-overflow-segments"
else echo "not ok db-hosts-numa-maps-overflow-segments: $(grep -m2 PiB <<<"$out")"; fi

# ---- one exit-status contract for every correction, dry run or not ----
# 0 done / would do, 1 partial, 2 refused, 3 failed: a dry run exits as the
# real run would, up to the write itself (numaguardctl(1), EXIT STATUS).
# On guest4-v2: shmid 0 (8 MiB, all on node 3) by the bind3 workload, cgroup
# v2 /oracle (cpus 0, mems 3); nodes of 458-503 MiB, so the auto floor is
# about 14 MiB and 1G refuses everything.
G4=$SRC/tests/fixtures/trees/guest4-v2
printf '[instance W]\nmatch_cmdline = *wl-sysv-bind3*\npolicy = interleave\n' > "$tmp/w.conf"
printf '[global]\nnode_free_floor = 1G\n[instance W]\nmatch_cmdline = *wl-sysv-bind3*\npolicy = interleave\n' > "$tmp/w1g.conf"
printf '[instance O]\ncgroup = /oracle\npolicy = bind\nnodes = 0\n' > "$tmp/o.conf"
printf '[instance O]\ncgroup = /oracle\npolicy = bind\nnodes = 0-4\n' > "$tmp/o4.conf"
# NAME % EXIT % ARGS (word-split)
exits=(
        "rebalance-would-move%0%rebalance W --dry-run --root $G4 --config $tmp/w.conf"
        "rebalance-refused-floor%2%rebalance W --dry-run --root $G4 --config $tmp/w1g.conf"
        "reserve-would-write%0%hugepages reserve --size 2M --pages 4 --node 1 --dry-run --root $G4"
        "reserve-refused-supply%2%hugepages reserve --size 2M --pages 100000 --node 1 --dry-run --root $G4"
        "apply-nothing-to-do%0%hugepages apply --dry-run --root $G4 --config $tmp/w.conf"
        "cpuset-would-write%0%cpuset apply O --dry-run --root $G4 --config $tmp/o.conf"
        "cpuset-refused-node%2%cpuset apply O --dry-run --root $G4 --config $tmp/o4.conf"
)
for e in "${exits[@]}"; do
        IFS=% read -r name want args <<<"$e"
        # shellcheck disable=SC2086
        out=$("$CTL" $args 2>&1); rc=$?
        if [ $rc = "$want" ]; then echo "ok db-hosts-exit-$name"
        else echo "not ok db-hosts-exit-$name: exit $rc, want $want: $(tail -1 <<<"$out")"; fi
done

# ---- an Oracle-shaped instance with an 11-character SID on this host ----
# Processes named as Oracle names them (the comm the kernel keeps is the
# 15-character cut "ora_pmon_NGTEST"; argv[0] holds the whole name): a SysV
# SGA attached by ora_pmon_$sid, and an AMM SGA of 24 granule files of
# 4 MiB in /dev/shm, each mapped by an ora_<name>_$sid process.
# Needs root for nothing but a clean /proc view; runs as any user.
n_gran=24
mkdir -p "$tmp/bin"
# start NAME ARGS...: the workload under an Oracle-like name; waits for its report.
start() {
        local name=$1 f=$tmp/ready.$RANDOM$RANDOM; shift
        ln -sf "$WL" "$tmp/bin/$name"
        "$tmp/bin/$name" "$@" -r "$f" -S "$tmp/stop" > /dev/null 2>&1 &
        pids+=($!)
        for _ in $(seq 1 600); do [ -s "$f" ] && return 0; sleep 0.1; done
        return 1
}
ok_wl=1
start "ora_pmon_$sid" sysv -s 16 -p 1 || ok_wl=0
for i in $(seq 1 $n_gran); do
        start "ora_d$(printf %03d "$i")_$sid" file "/dev/shm/ora_${sid}_32768_$i" -s 4 -p 0 || { ok_wl=0; break; }
done
printf '[global]\nmin_segment_size = 1M\n' > "$tmp/amm.conf"
if [ $ok_wl = 1 ]; then
        "$CTL" audit --config "$tmp/amm.conf" > "$tmp/amm.txt" 2>&1
        "$CTL" audit --config "$tmp/amm.conf" --verbose > "$tmp/amm-v.txt" 2>&1
        "$CTL" audit --config "$tmp/amm.conf" --json > "$tmp/amm.json" 2>/dev/null
        sed -n "/^instance oracle:$sid /,/^\$/p" "$tmp/amm.txt" > "$tmp/amm-inst.txt"
fi
if [ $ok_wl = 1 ] && grep -q "^instance oracle:$sid (oracle, discovered, $((n_gran + 2)) processes" "$tmp/amm-inst.txt"; then
        echo "ok db-hosts-long-sid-instance"
else
        echo "not ok db-hosts-long-sid-instance: no instance oracle:$sid with $((n_gran + 2)) processes"
        grep "^instance" "$tmp/amm.txt" 2>/dev/null | head -5
fi
if [ $ok_wl = 1 ] && grep -q "^  Oracle AMM SGA: $n_gran files in /dev/shm, 96 MiB, 96 MiB resident" "$tmp/amm-inst.txt" &&
   [ "$(grep -c "/dev/shm/ora_${sid}_" "$tmp/amm-inst.txt")" = 0 ]; then
        echo "ok db-hosts-amm-one-segment"
else
        echo "not ok db-hosts-amm-one-segment"; cat "$tmp/amm-inst.txt" 2>/dev/null | head -20
fi
if [ $ok_wl = 1 ] && [ "$(wc -l < "$tmp/amm-inst.txt")" -lt 20 ] &&
   [ "$(grep -c "file /dev/shm/ora_${sid}_" "$tmp/amm-v.txt")" = $n_gran ]; then
        echo "ok db-hosts-amm-short-and-verbose ($(wc -l < "$tmp/amm-inst.txt") lines, --verbose lists $n_gran files)"
else
        echo "not ok db-hosts-amm-short-and-verbose: $(wc -l < "$tmp/amm-inst.txt" 2>/dev/null) lines"
fi
if [ $ok_wl = 1 ] && jq -e --arg n "oracle:$sid" '[.instances[] | select(.name == $n)
        | .amm_sga.count == '$n_gran' and .amm_sga.bytes == '$((n_gran * 4 * 1048576))'
          and (.amm_sga.names | length) == '$n_gran'
          and ([.segments[] | select(.kind == "sysv")] | length) == 1] == [true]' "$tmp/amm.json" > /dev/null; then
        echo "ok db-hosts-amm-json"
else
        echo "not ok db-hosts-amm-json"
fi
# A configured glob on the whole name matches; a typo raises INSTANCE_NOT_FOUND.
printf '[global]\nmin_segment_size = 1M\n[instance FIN]\nmatch_comm = ora_*_%s\n[instance TYPO]\nmatch_comm = ora_*_%sX\n' \
        "$sid" "$sid" > "$tmp/cfg.conf"
"$CTL" audit --config "$tmp/cfg.conf" --json > "$tmp/cfg.json" 2>/dev/null
if [ $ok_wl = 1 ] && jq -e '([.instances[] | select(.name == "FIN") | (.pids | length)] == ['$((n_gran + 2))'])
        and ([.findings[] | select(.code == "INSTANCE_NOT_FOUND") | .instance] == ["TYPO"])' "$tmp/cfg.json" > /dev/null; then
        echo "ok db-hosts-long-sid-configured"
else
        echo "not ok db-hosts-long-sid-configured"; jq -c '[.instances[] | {name, n: (.pids | length)}], [.findings[] | .code]' "$tmp/cfg.json" 2>/dev/null
fi
touch "$tmp/stop"
if [ -n "${KEEP_AMM:-}" ]; then cp "$tmp"/amm*.txt "$KEEP_AMM"/; fi
exit 0
