#!/usr/bin/env bash
# Hugepage pools that last, on copies of the captured guest-1g tree (2
# nodes; booted with "hugepagesz=1G hugepages=1:1 hugepagesz=2M
# hugepages=0:16,1:16", tests/fixtures/trees/README.md; the capture did not
# read /proc/cmdline, so the copy gets that documented line):
# HUGEPAGE_NOT_PERSISTENT is raised exactly where a node's live pool differs
# from what the boot configuration gives; `hugepages reserve --persist
# --dry-run` shows the tmpfiles.d lines and writes nothing; --persist writes
# them (other lines kept) and prints the kernel command-line form;
# `hugepages plan` says what boot gives.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
echo "1..10"
[ -x "$CTL" ] || { echo "not ok hp-persist: $CTL not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_PREFIX=hp-persist; . "$SRC/tests/shell/lib.sh"
t=$tmp/t
cp -a "$SRC/tests/fixtures/trees/guest-1g" "$t"
printf 'BOOT_IMAGE=/vmlinuz root=/dev/vda ro hugepagesz=1G hugepages=1:1 hugepagesz=2M hugepages=0:16,1:16\n' > "$t/proc/cmdline"
printf '[global]\nnode_free_floor = 64M\nmin_segment_size = 1M\n' > "$tmp/conf"
nr() { echo "$t/sys/devices/system/node/node$1/hugepages/hugepages-$2kB/nr_hugepages"; }
findings() { "$CTL" audit --json --root "$t" --config "$tmp/conf" 2>/dev/null | jq -c '[.findings[] | select(.code == "HUGEPAGE_NOT_PERSISTENT") | [.nodes, .value]]'; }

check as-booted "findings: $(findings)" test "$(findings)" = "[]"
echo 24 > "$(nr 1 2048)"
check grown "findings: $(findings)" test "$(findings)" = "[[[1],24]]"
check message "$("$CTL" audit --root "$t" --config "$tmp/conf" | grep -A1 NOT_PERSISTENT)" \
        grep -q 'node 1 has 24 hugepages of 2 MiB; the boot configuration (the kernel command line) gives it 16: a reboot changes the pool' \
        <("$CTL" audit --root "$t" --config "$tmp/conf")

file=$t/etc/tmpfiles.d/numaguard-hugepages.conf
"$CTL" hugepages reserve --size 2M --pages 24 --node 1 --persist --dry-run --root "$t" --config "$tmp/conf" > "$tmp/out" 2>&1
check dry-run "$(cat "$tmp/out")" eval 'grep -qx "would add a line to $t/etc/tmpfiles.d/numaguard-hugepages.conf:4 (the tree'"'"'s /etc/tmpfiles.d/numaguard-hugepages.conf:4): w /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages - - - - 24" "$tmp/out" &&
        [ ! -e "$file" ]'
"$CTL" hugepages reserve --size 2M --pages 24 --node 1 --persist --root "$t" --config "$tmp/conf" > "$tmp/out" 2>&1
check persist "$(cat "$tmp/out"; cat "$file" 2>&1)" eval 'grep -qx "w /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages - - - - 24" "$file" &&
        grep -qx "w /sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages - - - - 16" "$file" &&
        grep -q "kernel command line form: hugepagesz=2M hugepages=0:16,1:24" "$tmp/out"'
check persisted "findings: $(findings)" test "$(findings)" = "[]"

# a 1 GiB pool: the file keeps the 2M lines, the command-line form is advised
"$CTL" hugepages reserve --size 1G --pages 1 --node 0 --persist --root "$t" --config "$tmp/conf" > "$tmp/out" 2>&1
check gigantic "$(cat "$tmp/out"; cat "$file")" eval 'grep -qx "w /sys/devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages - - - - 1" "$file" &&
        grep -qx "w /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages - - - - 24" "$file" &&
        grep -q "hugepagesz=1G hugepages=0:1,1:1, better for 1 GiB pages" "$tmp/out"'

# the pool shrinks behind numaguard's back: the file's line is named (free
# follows, as the kernel shows a pool shrunk to 8 unused pages)
echo 8 > "$(nr 1 2048)"
echo 8 > "${t}/sys/devices/system/node/node1/hugepages/hugepages-2048kB/free_hugepages"
check file-line "findings: $(findings)" eval '"$CTL" audit --root "$t" --config "$tmp/conf" | grep -q "node 1 has 8 hugepages of 2 MiB; the boot configuration (/etc/tmpfiles.d/numaguard-hugepages.conf line 4) gives it 24"'
"$CTL" hugepages plan --root "$t" --config "$tmp/conf" > "$tmp/out" 2>&1
check plan "$(cat "$tmp/out")" eval 'grep -qx "  node 1: 24 pages (/etc/tmpfiles.d/numaguard-hugepages.conf line 4), fewer than the target" "$tmp/out" && grep -qx "  node 0: 16 pages (/etc/tmpfiles.d/numaguard-hugepages.conf line 3), fewer than the target" "$tmp/out"'
"$CTL" hugepages plan --json --root "$t" --config "$tmp/conf" > "$tmp/out" 2>&1
check plan-json "$(cat "$tmp/out")" eval '[ "$(jq -c "[.nodes[].boot_pages]" "$tmp/out")" = "[16,24]" ]'
exit $((fails > 0))
