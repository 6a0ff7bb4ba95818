#!/usr/bin/env bash
# What boot gives each hugepage pool when numaguard does not own the boot
# configuration, on copies of the captured guest-1g tree (2 nodes, 16 pages
# of 2 MiB live on each, tests/fixtures/trees/README.md) with boot
# configuration added as administrators write it (the files under
# tests/fixtures/boot/): the kernel command line's global form
# "hugepages=N" (split by the kernel over the nodes with memory) and
# "sysctl.vm.nr_hugepages=", vm.nr_hugepages in sysctl.d(5) files
# (/etc/sysctl.d masks the same name in /run and /usr/lib/sysctl.d, files
# apply in name order, /etc/sysctl.conf as 99-sysctl.conf), numaguard's
# tmpfiles.d lines applied after them. HUGEPAGE_NOT_PERSISTENT compares a
# split total as a sum; `hugepages plan` names the source per node.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
FIX=$SRC/tests/fixtures/boot
echo "1..13"
[ -x "$CTL" ] || { echo "not ok boot-pools: $CTL not built"; exit 1; }
command -v jq > /dev/null || { echo "not ok boot-pools: jq missing"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_PREFIX=boot-pools; . "$SRC/tests/shell/lib.sh"
printf '[global]\nnode_free_floor = 64M\nmin_segment_size = 1M\n' > "$tmp/conf"
t=$tmp/t
fresh() {       # fresh CMDLINE: a new copy of the tree booted with CMDLINE
        rm -rf "$t"
        cp -a "$SRC/tests/fixtures/trees/guest-1g" "$t"
        printf 'BOOT_IMAGE=/vmlinuz root=/dev/vda ro %s\n' "$1" > "$t/proc/cmdline"
}
nr() { echo "$2" > "$t/sys/devices/system/node/node$1/hugepages/hugepages-2048kB/nr_hugepages"; }
# [[nodes], live pages] of each HUGEPAGE_NOT_PERSISTENT
findings() { "$CTL" audit --json --root "$t" --config "$tmp/conf" 2>/dev/null | jq -c '[.findings[] | select(.code == "HUGEPAGE_NOT_PERSISTENT") | [.nodes, .value]]'; }
audit() { "$CTL" audit --root "$t" --config "$tmp/conf" 2>&1; }
plan() { "$CTL" hugepages plan --root "$t" --config "$tmp/conf" 2>&1; }

# --- kernel command line, global form: 32 pages split 16/16 by the kernel
fresh "hugepages=32 hugepagesz=1G hugepages=1:1"
check cmdline-total "findings: $(findings)" test "$(findings)" = "[]"
nr 1 24
check cmdline-total-grown "findings: $(findings)" test "$(findings)" = "[[[0,1],40]]"
check cmdline-total-message "$(audit | grep -A1 NOT_PERSISTENT)" grep -q \
        'nodes 0-1 have 40 hugepages of 2 MiB; the boot configuration (the kernel command line: hugepages=32, split by the kernel) gives them 32: a reboot changes the pool' \
        <(audit)
# moving pages between nodes keeps the sum: only the split is unknown
nr 0 8
check cmdline-total-moved "findings: $(findings)" test "$(findings)" = "[]"

# --- sysctl.d precedence
fresh "hugepagesz=1G hugepages=1:1"
cp -a "$FIX/sysctl/." "$t/"
# /etc/sysctl.d/50-database.conf (32) masks /usr/lib/sysctl.d/50-database.conf (64);
# /run/sysctl.d/40-tuned.conf (48) comes earlier by name; /etc/sysctl.conf
# (as 99-sysctl.conf) sets nothing of it
check sysctl-masked "findings: $(findings)" test "$(findings)" = "[]"
check sysctl-plan "$(plan | tail -3)" grep -qF \
        '  node 0: about 16 pages (/etc/sysctl.d/50-database.conf line 4: vm.nr_hugepages = 32, split by the kernel)' <(plan)
rm "$t/etc/sysctl.d/50-database.conf"
check sysctl-vendor "findings: $(findings)" eval '[ "$(findings)" = "[[[0,1],32]]" ] &&
        audit | grep -q "(/usr/lib/sysctl.d/50-database.conf line 2: vm.nr_hugepages = 64, split by the kernel) gives them 64"'
printf '# tuned for the database\nvm/nr_hugepages=30\n-vm.nr_hugepages = 32\n' >> "$t/etc/sysctl.conf"
check sysctl-conf-last "findings: $(findings)" test "$(findings)" = "[]"
"$CTL" hugepages plan --json --root "$t" --config "$tmp/conf" > "$tmp/out" 2>&1
check sysctl-plan-json "$(cat "$tmp/out")" test "$(jq -c '[.nodes[] | [.boot_pages, .boot_source, .boot_split]]' "$tmp/out")" = \
        '[[16,"sysctl",true],[16,"sysctl",true]]'

# --- sysctl on the kernel command line, then numaguard's file after sysctl.d
fresh "sysctl.vm.nr_hugepages=48"
check cmdline-sysctl "findings: $(findings)" eval '[ "$(findings)" = "[[[0,1],32]]" ] &&
        audit | grep -q "(the kernel command line: sysctl.vm.nr_hugepages=48, split by the kernel) gives them 48"'
mkdir -p "$t/etc/tmpfiles.d" "$t/etc/sysctl.d"
echo 'vm.nr_hugepages = 40' > "$t/etc/sysctl.d/80-db.conf"
echo 'w /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages - - - - 16' \
        > "$t/etc/tmpfiles.d/numaguard-hugepages.conf"
# 40 from sysctl.d (20/20), then node 1 set to 16: node 0 keeps about 20
check tmpfiles-after-sysctl "findings: $(findings)" test "$(findings)" = "[[[0],16]]"
check tmpfiles-after-sysctl-plan "$(plan | tail -3)" eval 'plan | grep -qF "  node 0: about 20 pages (/etc/sysctl.d/80-db.conf line 1: vm.nr_hugepages = 40, split by the kernel)" &&
        plan | grep -qF "  node 1: 16 pages (/etc/tmpfiles.d/numaguard-hugepages.conf line 1)"'
# what the pools are now, recorded: the per-node lines win for both nodes
"$CTL" hugepages reserve --size 2M --pages 16 --node 0 --persist --root "$t" --config "$tmp/conf" > "$tmp/out" 2>&1
check persisted "$(cat "$tmp/out"; findings)" test "$(findings)" = "[]"
exit $((fails > 0))
