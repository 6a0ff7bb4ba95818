#!/usr/bin/env bash
# What any user can put in /dev/shm, in a private mount namespace with a
# tmpfs of its own on /dev/shm (the host's is untouched): links planted by
# an unprivileged user (to /, to /etc, to a file of the mount) are never
# followed nor reported, a hard link is the file once, a directory on the
# mount is walked. Then the same links in a copy of a captured tree under
# --root. Needs root and unshare(1) (util-linux); skips loudly otherwise.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
echo "1..6"
TAP_PREFIX=devshm-links; . "$SRC/tests/shell/lib.sh"
[ -x "$CTL" ] || { echo "not ok devshm-links: $CTL not built"; exit 1; }
[ "$(id -u)" = 0 ] || skip_all "needs root (a mount namespace with its own /dev/shm)"
command -v unshare > /dev/null && command -v setpriv > /dev/null || skip_all "unshare or setpriv (util-linux) missing"
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/in-ns.sh" <<EOS
set -e
mount -t tmpfs -o size=64m,mode=1777 tmpfs /dev/shm
# above the 64 MiB under which a file nobody maps is only counted: sparse
# past their data
dd if=/dev/zero of=/dev/shm/real bs=1M count=8 status=none
truncate -s 80M /dev/shm/real
mkdir /dev/shm/sub
dd if=/dev/zero of=/dev/shm/sub/f bs=1M count=4 status=none
truncate -s 70M /dev/shm/sub/f
# what an unprivileged user may do in /dev/shm
as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "\$@"; }
as_user ln -s / /dev/shm/x
as_user ln -s /etc /dev/shm/evil
as_user ln -s /dev/shm/real /dev/shm/real-sym
ln /dev/shm/real /dev/shm/real-hard
readlink /proc/self/ns/mnt | tr -dc 0-9 > "$tmp/mnt_ns"
rc=0; "$CTL" segments --json > "$tmp/segments.json" 2> "$tmp/segments.err" || rc=\$?; echo \$rc > "$tmp/segments.rc"
rc=0; "$CTL" audit > "$tmp/audit.txt" 2>&1 || rc=\$?; echo \$rc > "$tmp/audit.rc"
EOS
if ! unshare -m --propagation private bash "$tmp/in-ns.sh" > "$tmp/ns.log" 2>&1; then
        skip_all "cannot make a mount namespace with its own /dev/shm here: $(tail -1 "$tmp/ns.log")"
fi
# the namespace's own /dev/shm: the host's (seen through its other
# processes) holds whatever else runs here
files=$(jq -r --argjson ns "$(cat "$tmp/mnt_ns")" \
        '[.segments[] | select(.kind == "file" and .mnt_ns == $ns) | .name] | sort | join(" ")' "$tmp/segments.json" 2>/dev/null)
check_expr rc '[ "$(cat "$tmp/segments.rc")" = 0 ]' "segments exited $(cat "$tmp/segments.rc"): $(head -c 300 "$tmp/segments.err")"
check_expr files '[ "$files" = "/dev/shm/real /dev/shm/sub/f" ]' "file segments: '$files', expected '/dev/shm/real /dev/shm/sub/f'"
check_expr audit '[ "$(cat "$tmp/audit.rc")" -lt 3 ] && ! grep -qE "/dev/shm/(x|evil|real-sym)" "$tmp/audit.txt"' \
        "audit exited $(cat "$tmp/audit.rc") or names a link: $(grep -E "/dev/shm/(x|evil|real-sym)" "$tmp/audit.txt" | head -3)"

# a tree with the same links: --root reads none of them
t=$tmp/tree
cp -a "$SRC/tests/fixtures/trees/guest4-v2" "$t"
mkdir -p "$t/dev/shm"
ln -s / "$t/dev/shm/x"
ln -s /etc "$t/dev/shm/evil"
"$CTL" segments --root "$t" --json > "$tmp/tree.json" 2> "$tmp/tree.err"; rc=$?
check_expr tree-rc '[ $rc = 0 ]' "segments --root exited $rc: $(head -c 300 "$tmp/tree.err")"
check_expr tree-links '! jq -e "[.segments[] | select(.name | test(\"/dev/shm/(x|evil)\"))] | length > 0" "$tmp/tree.json" > /dev/null' \
        "a link's target listed: $(jq -c '[.segments[] | .name]' "$tmp/tree.json")"
n_before=$("$CTL" segments --root "$SRC/tests/fixtures/trees/guest4-v2" --json | jq '.segments | length')
check_expr tree-same '[ "$(jq ".segments | length" "$tmp/tree.json")" = "$n_before" ]' \
        "segments with the links: $(jq '.segments | length' "$tmp/tree.json"), without: $n_before"
[ "$fails" = 0 ]
