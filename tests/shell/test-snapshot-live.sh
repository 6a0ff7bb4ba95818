#!/usr/bin/env bash
# `numaguardctl snapshot` on the live host, end to end (root only):
#   1. start a SysV workload (build/tests/helpers/ng-shm-workload),
#   2. snapshot, unpack,
#   3. `--root TREE` must print numaguard/{topology,segments}.{txt,json}
#      byte for byte (docs/ARCHITECTURE.md, "Contracts", snapshot capture),
#   4. the tree must hold the workload's segment, placed exactly,
#   5. the live `topology --json` must equal the tree's on the stable fields
#      (ids, cpus, distances, memory totals, hugepage page sizes; not free
#      memory, nor pool sizes and free pages, which other programs on the host
#      may change between the two runs);
#   6. the tarball is mode 0600; a process that is no database, with a secret
#      in its arguments, keeps only its program name in the tree, a process
#      named as PostgreSQL keeps its whole command line (numaguardctl(1),
#      snapshot);
#   7. a 1 GiB /dev/shm file nobody wrote is in the tree at its size, sparse,
#      and costs the tarball nothing (libarchive's pax sparse entries, which
#      GNU tar restores);
#   8. a /dev/shm file written by a process that is gone (nobody maps it) is
#      placed in the tree as the live host places it, asked of the file
#      itself: all of its allocated bytes (stat's count), placement_source
#      "segment" (the snapshot keeps the file's answer, --root replays it).
# BUILD: build directory (default build).
set -u
echo 1..17
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
WL=$B/tests/helpers/ng-shm-workload

if [ "$(id -u)" != 0 ]; then
        echo "skip snapshot-live: needs root (every process's numa_maps, SysV segments of other users)"
        exit 77
fi
for t in "$CTL" "$WL"; do
        [ -x "$t" ] || { echo "not ok snapshot-live: $t not built (make check-unit builds it)"; exit 1; }
done
command -v jq > /dev/null || { echo "skip snapshot-live: jq not installed"; exit 77; }
command -v tar > /dev/null || { echo "skip snapshot-live: tar not installed"; exit 77; }
PY=$(python3 -c 'import sys; print(sys.executable)' 2> /dev/null)
[ -x "$PY" ] || { echo "skip snapshot-live: python3 not installed"; exit 77; }

tmp=$(mktemp -d)
wl_pid="" sleepers=() sparse=/dev/shm/ng-snapshot-sparse-$$ unmapped=/dev/shm/ng-snapshot-unmapped-$$
cleanup() {
        touch "$tmp/stop"
        for p in "${sleepers[@]}"; do kill "$p" 2> /dev/null; done
        if [ -n "$wl_pid" ]; then
                # the workload removes its segment on a clean stop
                local i=0
                while kill -0 "$wl_pid" 2> /dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
                kill "$wl_pid" 2> /dev/null
                wait "$wl_pid" 2> /dev/null
        fi
        rm -f "$sparse" "$unmapped"
        rm -rf "$tmp"
}
trap cleanup EXIT
TAP_PREFIX=snapshot-live; . "$SRC/tests/shell/lib.sh"

"$WL" sysv -s 8 -p 1 -r "$tmp/ready" -S "$tmp/stop" > "$tmp/wl.out" 2> "$tmp/wl.err" &
wl_pid=$!
i=0
while [ ! -e "$tmp/ready" ]; do
        if ! kill -0 "$wl_pid" 2> /dev/null || [ $i -ge 300 ]; then
                fail workload "ng-shm-workload did not get ready: $(head -c 300 "$tmp/wl.err")"
                exit 1
        fi
        sleep 0.1; i=$((i + 1))
done
shmid=$(sed -n 's/.* shmid=\([0-9]*\) .*/\1/p' "$tmp/ready")
child=$(sed -n 's/.*children=\([0-9]*\).*/\1/p' "$tmp/ready")
[ -n "$shmid" ] || { fail workload "no shmid in '$(cat "$tmp/ready")'"; exit 1; }

# 6. a tool with a secret in its arguments, and a "postgres" (comm and
# argv[0]: the kernel names a process after the file it runs)
secret=ng-secret-$$-$RANDOM
mkdir "$tmp/bin"
ln -s "$PY" "$tmp/bin/ng-secret-tool"
ln -s "$PY" "$tmp/bin/postgres"
"$tmp/bin/ng-secret-tool" -c 'import time; time.sleep(300)' --token="$secret" &
secret_pid=$!
"$tmp/bin/postgres" -c 'import time; time.sleep(300)' -D "$tmp/pgdata-$secret" &
pg_pid=$!
sleepers=("$secret_pid" "$pg_pid")
sleep 0.3

# 7. contents never read, never written: a hole of 1 GiB
truncate -s 1G "$sparse"
# 8. written, then nobody maps it
head -c $((4 << 20)) /dev/urandom > "$unmapped"
unmapped_alloc=$(($(stat -c '%b * %B' "$unmapped")))

# the live topology just before the capture (step 5 also reads it after)
"$CTL" topology --json > "$tmp/live.before.json" 2> /dev/null
if TMPDIR=$tmp "$CTL" snapshot -o "$tmp/snap.tar.gz" > "$tmp/snap.out" 2> "$tmp/snap.err"; then
        pass snapshot
else
        fail snapshot "numaguardctl snapshot exited $?: $(head -c 300 "$tmp/snap.err")"
        exit 1
fi
mkdir "$tmp/tree"
if ! tar -xzf "$tmp/snap.tar.gz" -C "$tmp/tree"; then
        fail unpack "tar -xzf failed"
        exit 1
fi
got=$(stat -c %s "$tmp/tree$sparse" 2> /dev/null) used=$(du -k "$tmp/tree$sparse" 2> /dev/null | cut -f1)
if [ "$got" = 1073741824 ] && [ "${used:-0}" -lt 1024 ]; then pass sparse-shm-file
else fail sparse-shm-file "$sparse in the tree: size '${got:-missing}', ${used:-?} KiB on disk"; fi
tb=$(stat -c %s "$tmp/snap.tar.gz")
if [ "$tb" -lt $((8 << 20)) ]; then pass sparse-tarball-small
else fail sparse-tarball-small "tarball of $tb bytes: the 1 GiB hole was stored"; fi
missing=""
for f in snapshot.txt topology.txt topology.json segments.txt segments.json; do
        [ -s "$tmp/tree/numaguard/$f" ] || missing+=" $f"
done
if [ -z "$missing" ]; then pass contents; else fail contents "missing or empty in the tarball's numaguard/:$missing"; fi
# The staging directory is gone.
if compgen -G "$tmp/numaguard-snapshot.*" > /dev/null; then
        fail staging-removed "staging directory left behind: $(echo "$tmp"/numaguard-snapshot.*)"
else
        pass staging-removed
fi

# 3. byte for byte; the snapshot holds the UTF-8 bars, numaguardctl piped
# prints them in ASCII (numaguardctl(1), TERMINALS)
ascii_bars() {
        LC_ALL=C sed -e 's/\xe2\x96\x88/#/g' -e 's/\xe2\x96\x89/+/g' -e 's/\xe2\x96\x8a/+/g' -e 's/\xe2\x96\x8b/+/g' \
                -e 's/\xe2\x96\x8c/+/g' -e 's/\xe2\x96\x8d/-/g' -e 's/\xe2\x96\x8e/-/g' -e 's/\xe2\x96\x8f/-/g'
}
for cmd in topology segments; do
        for fmt in txt json; do
                args=("$cmd" --root "$tmp/tree")
                [ $fmt = json ] && args+=(--json)
                if ! "$CTL" "${args[@]}" > "$tmp/out" 2> "$tmp/err"; then
                        fail "roundtrip-$cmd.$fmt" "numaguardctl ${args[*]} exited $?: $(head -c 300 "$tmp/err")"
                elif cmp -s <(ascii_bars < "$tmp/tree/numaguard/$cmd.$fmt") "$tmp/out"; then
                        pass "roundtrip-$cmd.$fmt"
                else
                        fail "roundtrip-$cmd.$fmt" "--root output differs from the snapshot's numaguard/$cmd.$fmt"
                        diff -u <(ascii_bars < "$tmp/tree/numaguard/$cmd.$fmt") "$tmp/out" | head -n 40 | sed 's/^/#   /'
                fi
        done
done

# ... and audit, when the snapshot carries it, with the configuration it
# was taken with (exit 0/1/2 by findings; 3 = could not audit). Two parts
# differ by design: the first text line names the --root directory, and the
# JSON "cost" object measures each run.
norm_audit() {
        if [ "$1" = json ]; then jq 'del(.cost)'
        else sed -E '1s/^numaguard audit of .*: ([0-9]+ nodes?, )/numaguard audit: \1/' | ascii_bars; fi
}
for fmt in txt json; do
        [ -f "$tmp/tree/numaguard/audit.$fmt" ] || continue
        args=(audit --root "$tmp/tree")
        [ $fmt = json ] && args+=(--json)
        [ -f "$tmp/tree/numaguard/numaguard.conf" ] && args+=(--config "$tmp/tree/numaguard/numaguard.conf")
        "$CTL" "${args[@]}" > "$tmp/out" 2> "$tmp/err"
        rc=$?
        if [ $rc -gt 2 ]; then
                fail "roundtrip-audit.$fmt" "numaguardctl ${args[*]} exited $rc: $(head -c 300 "$tmp/err")"
        elif cmp -s <(norm_audit $fmt < "$tmp/tree/numaguard/audit.$fmt") <(norm_audit $fmt < "$tmp/out"); then
                pass "roundtrip-audit.$fmt"
        else
                fail "roundtrip-audit.$fmt" "--root output differs from the snapshot's numaguard/audit.$fmt"
                diff -u <(norm_audit $fmt < "$tmp/tree/numaguard/audit.$fmt") <(norm_audit $fmt < "$tmp/out") |
                        head -n 40 | sed 's/^/#   /'
        fi
done

# 6. what the bundle holds of command lines, and who may read it
mode=$(stat -c %a "$tmp/snap.tar.gz")
if [ "$mode" = 600 ]; then pass tarball-mode; else fail tarball-mode "the tarball is mode $mode, not 600"; fi
if [ "$(od -An -c "$tmp/tree/proc/$secret_pid/cmdline" 2>&1 | tr -d ' ')" = 'ng-secret-tool\0' ] &&
   ! tar -xzOf "$tmp/snap.tar.gz" 2> /dev/null | grep -qa -- "--token=$secret"; then
        pass cmdline-redacted
else
        fail cmdline-redacted "pid $secret_pid's command line in the tree: '$(tr '\0' ' ' < "$tmp/tree/proc/$secret_pid/cmdline" 2>&1)'"
fi
if tr '\0' ' ' < "$tmp/tree/proc/$pg_pid/cmdline" 2> /dev/null | grep -qF -- "-D $tmp/pgdata-$secret"; then
        pass cmdline-database-kept
else
        fail cmdline-database-kept "pid $pg_pid's command line in the tree: '$(tr '\0' ' ' < "$tmp/tree/proc/$pg_pid/cmdline" 2>&1)'"
fi

# 4. the workload's segment, from the tree
seg=$(jq -c --argjson id "$shmid" '.segments[] | select(.kind == "sysv" and .shmid == $id)
        | {bytes, page_kib, nattch, method, resident_bytes, pids: (.pids | sort)}' "$tmp/tree/numaguard/segments.json" 2>&1)
# the two attachers as a set (pids wrap: the child's may be the smaller)
pair=$(printf '%s\n' "$wl_pid" "$child" | sort -n | paste -sd,)
want="{\"bytes\":8388608,\"page_kib\":4,\"nattch\":2,\"method\":\"exact\",\"resident_bytes\":8388608,\"pids\":[$pair]}"
if [ "$seg" = "$want" ]; then pass workload-segment
else fail workload-segment "shmid $shmid in the tree is '$seg', expected '$want'"; fi

# 8. the unmapped file, placed from the file's own answer
seg=$(jq -c --arg n "$unmapped" '.segments[] | select(.kind == "file" and .name == $n)
        | {nattch, placement_source, resident_bytes, placed: ([.nodes[]?.bytes] | add)}' "$tmp/tree/numaguard/segments.json" 2>&1)
want="{\"nattch\":0,\"placement_source\":\"segment\",\"resident_bytes\":$unmapped_alloc,\"placed\":$unmapped_alloc}"
if [ "$seg" = "$want" ]; then pass unmapped-file-placed
else fail unmapped-file-placed "$unmapped in the tree is '$seg', expected '$want'"; fi

# 5. live topology vs the tree's, on stable fields, read just before or
# after the capture (a memory balloon may change MemTotal in between)
stable='{schema, numa_sysfs, nodes_online, nodes_possible, cpus_online, mem_total_kib,
        nodes: [.nodes[] | {id, cpus, cpu_count, memory_only, has_memory, mem_total_kib,
                distances, distance_classes, hugepages: [.hugepages[] | .page_kib]}],
        hugepages: [.hugepages[] | .page_kib]}'
if "$CTL" topology --json > "$tmp/live.json" 2> "$tmp/live.err"; then
        a=$(jq -S "$stable" "$tmp/live.json" 2>&1)
        a0=$(jq -S "$stable" "$tmp/live.before.json" 2>&1)
        b=$(jq -S "$stable" "$tmp/tree/numaguard/topology.json" 2>&1)
        if [ -n "$b" ] && { [ "$a" = "$b" ] || [ "$a0" = "$b" ]; }; then
                pass live-topology-stable-fields
        else
                fail live-topology-stable-fields "live topology --json differs from the snapshot's on stable fields"
                diff -u <(echo "$b") <(echo "$a") | head -n 40 | sed 's/^/#   /'
        fi
else
        fail live-topology-stable-fields "numaguardctl topology --json exited $?"
fi
[ $fails = 0 ]
