#!/usr/bin/env bash
# A tree given with --root is anyone's: nothing in it may lead numaguard
# outside it (docs/ARCHITECTURE.md, "Root prefix"). Copies of captured
# trees get links planted to a file outside (mode 0600, as /etc/shadow),
# absolute, relative with ".." past the root, and a linked directory:
#   numaguardctl snapshot --root   the tarball holds none of the file
#   numaguardctl audit --root      prints none of it
#   cpuset apply --root            writes no drop-in through a link, makes no
#                                  directory through one
#   hugepages reserve --persist --root  nor the tmpfiles.d file through a
#                                  linked directory
# and FIFOs and link loops where the kernel has files and directories
# (node/online, sysvipc/shm, proc/PID): the audit does not block, goes on,
# and says which file and why (AUDIT_INCOMPLETE).
# Runs as any user. BUILD: build directory (default build).
set -u
echo 1..12
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
DERIVE=$SRC/tests/fixtures/derive-owner-tree
TREES=$SRC/tests/fixtures/trees
[ -x "$CTL" ] || { echo "not ok root-links: $CTL not built"; exit 1; }
command -v jq > /dev/null || { echo "not ok root-links: jq not installed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_PREFIX=root-links; . "$SRC/tests/shell/lib.sh"

# Outside every tree: a root-only file whose bytes would pass for a
# command line (the comm of pid 179 is the 15-byte ng-shm-workload, so its
# name would take them), a file a write must not reach, an empty directory.
out=$tmp/outside
mkdir -p "$out/dir"
marker=NGSECRET$$
printf 'ng-shm-workload%s\0-D\0/%s\0' "$marker" "$marker" > "$out/secret"
chmod 600 "$out/secret"
printf 'UNTOUCHED\n' > "$out/target-dropin"
up=$(printf '../%.0s' $(seq 1 24))
escape_rel=$up${out#/}

t=$tmp/g4
cp -a "$TREES/guest4-v2" "$t"
ln -sf "$out/secret" "$t/proc/179/cmdline"
ln -sf "$escape_rel/secret" "$t/proc/181/cmdline"
rm -rf "$t/proc/183" && ln -s "$out" "$t/proc/183"
ln -s "$out/secret" "$t/dev/shm/leak"
conf=$t/numaguard/numaguard.conf

# --- reads
"$CTL" snapshot --root "$t" --config "$conf" -o "$tmp/snap.tgz" > "$tmp/snap.out" 2>&1
check snapshot "exit $?: $(head -c 300 "$tmp/snap.out")" test -s "$tmp/snap.tgz"
check snapshot-no-escape "the tarball holds the file outside the tree" \
        eval '! tar -xzOf "$tmp/snap.tgz" 2> /dev/null | grep -qa "$marker"'
for fmt in text json; do
        args=(audit --root "$t" --config "$conf")
        [ $fmt = json ] && args+=(--json)
        "$CTL" "${args[@]}" > "$tmp/audit.$fmt" 2>&1
        check "audit-$fmt-no-escape" "the audit printed the file outside the tree: $(grep -a "$marker" "$tmp/audit.$fmt" | head -c 300)" \
                eval '! grep -qa "$marker" "$tmp/audit.$fmt"'
done

# --- writes: the drop-in and its directory through links
"$DERIVE" unit "$tmp/unit" || { echo "not ok root-links: derive unit"; exit 1; }
d=$tmp/unit/etc/systemd/system.control/oracle-db.service.d
mkdir -p "$d"
ln -s "$out/target-dropin" "$d/50-AllowedMemoryNodes.conf"
"$CTL" cpuset apply oracle --root "$tmp/unit" --config "$tmp/unit/numaguard/numaguard.conf" > "$tmp/apply.out" 2>&1
check cpuset-dropin-link "the file outside now: $(head -c 200 "$out/target-dropin"); $(head -c 300 "$tmp/apply.out")" \
        test "$(cat "$out/target-dropin")" = UNTOUCHED
"$DERIVE" unit "$tmp/unit2" || { echo "not ok root-links: derive unit"; exit 1; }
mkdir -p "$tmp/unit2/etc/systemd"
ln -s "$escape_rel/dir" "$tmp/unit2/etc/systemd/system.control"
"$CTL" cpuset apply oracle --root "$tmp/unit2" --config "$tmp/unit2/numaguard/numaguard.conf" > "$tmp/apply2.out" 2>&1
check cpuset-dir-link "made outside the tree: $(find "$out/dir" -mindepth 1 | head -3); $(head -c 300 "$tmp/apply2.out")" \
        test -z "$(find "$out/dir" -mindepth 1)"

# --- writes: the boot pools' tmpfiles.d file through a linked directory
h=$tmp/1g
cp -a "$TREES/guest-1g" "$h"
mkdir -p "$h/etc" "$out/dir-persist"
ln -s "$escape_rel/dir-persist" "$h/etc/tmpfiles.d"
printf '[global]\nnode_free_floor = 64M\nmin_segment_size = 1M\n' > "$tmp/hp.conf"
"$CTL" hugepages reserve --size 2M --pages 24 --node 1 --persist --root "$h" --config "$tmp/hp.conf" > "$tmp/hp.out" 2>&1
check persist-dir-link "written outside the tree: $(find "$out/dir-persist" -mindepth 1 | head -3); $(head -c 300 "$tmp/hp.out")" \
        test -z "$(find "$out/dir-persist" -mindepth 1)"

# --- FIFOs and loops: named, never waited on
incomplete() {  # incomplete JSON MESSAGE: one AUDIT_INCOMPLETE says MESSAGE
        [ -s "$1" ] && jq -e --arg m "$2" '[.findings[] | select(.code == "AUDIT_INCOMPLETE" and .message == $m)] | length == 1' \
                "$1" > /dev/null
}
broken() {      # broken NAME REL KIND WANT: REL of a fresh copy made KIND; the audit names it
        local name=$1 rel=$2 kind=$3 want=$4 c=$tmp/$1
        cp -a "$TREES/guest4-v2" "$c"
        rm -rf "${c:?}/$rel"
        if [ "$kind" = fifo ]; then mkfifo "$c/$rel"; else ln -s "$(basename "$rel")" "$c/$rel"; fi
        timeout 20 "$CTL" audit --root "$c" --config "$c/numaguard/numaguard.conf" --json > "$tmp/$name.json" 2> "$tmp/$name.err"
        local rc=$?
        check "$name" "exit $rc, AUDIT_INCOMPLETE: $(jq -c '[.findings[] | select(.code == "AUDIT_INCOMPLETE") | .message]' "$tmp/$name.json" 2>&1 | head -c 300) $(head -c 200 "$tmp/$name.err")" \
                incomplete "$tmp/$name.json" "$c/$rel: $want; not read"
}
broken fifo-node-online sys/devices/system/node/online fifo "is a FIFO, not a regular file"
broken fifo-sysvipc-shm proc/sysvipc/shm fifo "is a FIFO, not a regular file"
broken loop-sysvipc-shm proc/sysvipc/shm loop "too many levels of symbolic links"
broken loop-pid proc/179 loop "too many levels of symbolic links"
broken fifo-pid proc/179 fifo "is a FIFO, not a directory"
[ $fails = 0 ]
