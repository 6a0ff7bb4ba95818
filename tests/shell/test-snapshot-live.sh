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
#   7. a 1 GiB /dev/shm file nobody wrote is in the tree as an empty file of
#      its name, its size a record of the snapshot's (numaguard/shm-files-*):
#      it costs the tarball nothing and --root gives its size back;
#   8. a /dev/shm file written by a process that is gone (nobody maps it) is
#      placed in the tree as the live host places it, asked of the file
#      itself: all of its allocated bytes (stat's count), placement_source
#      "segment" (the snapshot keeps the file's answer, --root replays it);
#   9. in a mount namespace of its own with its own tmpfs on /dev/shm (the
#      host's is untouched), files named with UTF-8, with bytes that are not
#      UTF-8, with a newline, a tab and a backslash, a 252-byte name, a
#      directory named so, sparse files of 2^63-1 bytes and of 17 TiB (more
#      than ext4 holds), a written file named with a newline: the snapshot
#      takes them all, the archive holds each name's bytes, its copies are
#      empty, `--root` on the unpacked tree lists every one with its size as
#      the live host did; what a snapshot could not take
#      (numaguard/incomplete) stays in a snapshot of that tree and is
#      AUDIT_INCOMPLETE there.
# BUILD: build directory (default build).
set -u
echo 1..23
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
# 8. written, then nobody maps it (sparse past its data to 80 MiB: a file
# under min_segment_size that nobody maps is counted, not listed)
head -c $((4 << 20)) /dev/urandom > "$unmapped"
truncate -s 80M "$unmapped"
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
got=$(stat -c %s "$tmp/tree$sparse" 2> /dev/null)
replayed=$("$CTL" segments --root "$tmp/tree" --json 2> /dev/null |
           jq --arg n "$sparse" '.segments[] | select(.kind == "file" and .name == $n) | .bytes')
if [ "$got" = 0 ] && [ "$replayed" = 1073741824 ]; then pass sparse-shm-file
else fail sparse-shm-file "$sparse: a copy of '${got:-missing}' bytes in the tree, replayed as '${replayed:-nothing}' (expected 0, 1073741824)"; fi
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

# 9. names and sizes any user may give a /dev/shm file
ns=$tmp/ns names_cases="names-archive-bytes names-tree-copies names-replay names-replay-sizes incomplete-kept"
fail_rest() { for c in $names_cases; do fail "$c" "$1"; done; exit 1; }
mkdir "$ns"
cat > "$ns/in-ns.sh" << 'EOS'
set -e
CTL=$1 T=$2
mount -t tmpfs -o size=16m,mode=1777 tmpfs /dev/shm
cd /dev/shm
# 65 MiB (sparse): a file under min_segment_size that nobody maps is
# counted, not listed
truncate -s 65M $'caf\xc3\xa9' $'bad\xff\xfe' $'new\nline' $'back\\slash\ttab' "$(printf 'l%.0s' {1..250})"$'\xc3\xa9'
mkdir $'dir\xe9'
truncate -s 65M $'dir\xe9/inner'
truncate -s 9223372036854775807 max
truncate -s 17T big
head -c 1048576 /dev/urandom > $'written\nfile'
truncate -s 65M $'written\nfile'
stat -L -c %i /proc/self/ns/mnt > "$T/mnt_ns"
"$CTL" segments --json > "$T/live.json"
rc=0; TMPDIR=$T "$CTL" snapshot -o "$T/snap.tar.gz" > "$T/snap.out" 2> "$T/snap.err" || rc=$?
echo $rc > "$T/snap.rc"
EOS
if ! command -v unshare > /dev/null; then
        fail names-snapshot "unshare (util-linux) missing: no mount namespace of its own"
        fail_rest "no snapshot"
fi
if ! unshare -m --propagation private bash "$ns/in-ns.sh" "$CTL" "$ns" > "$ns/ns.log" 2>&1; then
        fail names-snapshot "no mount namespace with its own /dev/shm here: $(tail -1 "$ns/ns.log")"
        fail_rest "no snapshot"
fi
rc=$(cat "$ns/snap.rc")
check_expr names-snapshot '[ "$rc" = 0 ]' "snapshot exited $rc: $(head -c 300 "$ns/snap.err")"
[ "$rc" = 0 ] || fail_rest "no snapshot"
# The names as bytes (/dev/shm/ left out) and the regular files' sizes.
cat > "$ns/names.py" << 'EOS'
import json, os, sys, tarfile
M = 65 << 20
WANT = {b'caf\xc3\xa9': M, b'bad\xff\xfe': M, b'new\nline': M, b'back\\slash\ttab': M, b'l' * 250 + b'\xc3\xa9': M,
        b'dir\xe9': None, b'dir\xe9/inner': M, b'max': 2**63 - 1, b'big': 17 << 40, b'written\nfile': M}
def check(what, got, want):
    if got != want:
        print(f"{what}: {sorted(got)}; expected {sorted(want)}")
        sys.exit(1)
what, arg = sys.argv[1], sys.argv[2]
if what == 'archive':       # entries under ./dev/shm/, as bytes
    with tarfile.open(arg) as t:
        names = [os.fsencode(n).rstrip(b'/') for n in t.getnames()]
    check(what, {n[10:] for n in names if n.startswith(b'./dev/shm/')}, set(WANT))
elif what == 'tree':        # the unpacked tree: the names, every copy empty
    root = os.fsencode(arg) + b'/dev/shm/'
    got = {os.path.join(d, f)[len(root):] for d, ds, fs in os.walk(root) for f in ds + fs}
    check(what, got, set(WANT))
    check('copies with a size', {n for n in got if os.path.isfile(root + n) and os.path.getsize(root + n)}, set())
elif what == 'replay':      # a --root listing against the live one, and the sizes wanted
    mnt_ns = int(open(sys.argv[4]).read())
    def files(path):        # the namespace's own (others' are seen through their processes)
        segs = json.load(open(path))['segments']
        return {s['name']: s['bytes'] for s in segs if s['kind'] == 'file' and s['mnt_ns'] == mnt_ns}
    live, got = files(arg), files(sys.argv[3])
    # JSON strings are UTF-8: a byte that is not is U+FFFD
    want = {'/dev/shm/' + n.decode('utf-8', 'replace'): v for n, v in WANT.items() if v is not None}
    check('--root against the live host', sorted(got.items()), sorted(live.items()))
    check('--root', sorted(got.items()), sorted(want.items()))
else:                       # the entries named numaguard/incomplete, and what they hold
    with tarfile.open(arg) as t:
        print(*[t.extractfile(m).read() for m in t.getmembers() if m.name == './numaguard/incomplete'])
EOS
out=$("$PY" "$ns/names.py" archive "$ns/snap.tar.gz" 2>&1)
check_expr names-archive-bytes '[ -z "$out" ]' "the archive's /dev/shm entries: $out"
mkdir "$ns/tree"
tar -xzf "$ns/snap.tar.gz" -C "$ns/tree" 2> "$ns/tar.err"
out=$("$PY" "$ns/names.py" tree "$ns/tree" 2>&1) tb=$(stat -c %s "$ns/snap.tar.gz")
check_expr names-tree-copies '[ -z "$out" ] && [ "$tb" -lt $((8 << 20)) ]' "unpacked: $out; tarball of $tb bytes"
"$CTL" segments --root "$ns/tree" --json > "$ns/replay.json" 2> "$ns/replay.err"
check_expr names-replay 'cmp -s "$ns/replay.json" "$ns/tree/numaguard/segments.json"' \
        "segments --root --json differs from the snapshot's numaguard/segments.json: $(head -c 300 "$ns/replay.err")"
out=$("$PY" "$ns/names.py" replay "$ns/live.json" "$ns/replay.json" "$ns/mnt_ns" 2>&1)
check_expr names-replay-sizes '[ -z "$out" ]' "$out"
# What a tree lacks stays in a snapshot of it, once, and is said there.
line=$'/dev/shm/gone\\x0a1\tnot in this snapshot: staging it failed (a test)'
printf '%s\n' "$line" > "$ns/tree/numaguard/incomplete"
"$CTL" snapshot --root "$ns/tree" -o "$ns/again.tar.gz" > /dev/null 2> "$ns/again.err"
kept=$("$PY" "$ns/names.py" incomplete "$ns/again.tar.gz" 2>&1)
mkdir "$ns/again"
tar -xzf "$ns/again.tar.gz" -C "$ns/again" 2> /dev/null
said=$("$CTL" audit --root "$ns/again" --json 2> /dev/null |
       jq --arg m $'/dev/shm/gone\n1: not in this snapshot: staging it failed (a test)' \
          '[.findings[] | select(.code == "AUDIT_INCOMPLETE" and (.message | endswith($m)))] | length')
check_expr incomplete-kept '[ "$kept" = "$("$PY" -c "import sys; print(repr(sys.argv[1].encode() + b\"\\n\"))" "$line")" ] && [ "$said" = 1 ]' \
        "numaguard/incomplete in a snapshot of the tree: ${kept:-none} ($(head -c 200 "$ns/again.err")); AUDIT_INCOMPLETE findings naming the file: ${said:-none}"
[ $fails = 0 ]
