#!/usr/bin/env bash
# A /dev/shm filled by an unprivileged user, in a private mount namespace
# with a tmpfs of its own on /dev/shm (the host's is untouched): 1,000
# small files nobody maps are counted, not listed, while a file above
# min_segment_size and a small file a process maps are listed; then
# 100,001 empty files: segments and audit still answer (audit with its
# usual status, never 3), and AUDIT_INCOMPLETE names the mount, its mount
# namespace and the uid that made the files. Needs root, unshare and
# setpriv (util-linux) and jq; skips loudly otherwise. Creating the files
# takes a few seconds. BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl WL=$B/tests/helpers/ng-shm-workload
echo "1..9"
TAP_PREFIX=devshm-flood; . "$SRC/tests/shell/lib.sh"
[ -x "$CTL" ] || { echo "not ok devshm-flood: $CTL not built"; exit 1; }
[ -x "$WL" ] || { echo "not ok devshm-flood: $WL not built"; exit 1; }
[ "$(id -u)" = 0 ] || skip_all "needs root (a mount namespace with its own /dev/shm)"
command -v unshare > /dev/null && command -v setpriv > /dev/null || skip_all "unshare or setpriv (util-linux) missing"
command -v jq > /dev/null || skip_all "jq missing"
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
printf '[global]\nmin_segment_size = 64M\n' > "$tmp/ng.conf"
cat > "$tmp/in-ns.sh" <<EOS
set -e
mount -t tmpfs -o size=64m,nr_inodes=300000,mode=1777 tmpfs /dev/shm
readlink /proc/self/ns/mnt | tr -dc 0-9 > "$tmp/mnt_ns"
# what an unprivileged user may do in /dev/shm: files by the thousand
as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "\$@"; }
as_user bash -c 'mkdir /dev/shm/small && cd /dev/shm/small && seq -f s%.0f 1 1000 | xargs touch'
truncate -s 100M /dev/shm/big
# a small file a process maps (1 MiB, two processes attached)
mkfifo "$tmp/wl"
"$WL" file /dev/shm/mapped -s 1 -p 1 -S "$tmp/wl.stop" > "$tmp/wl" 2> "$tmp/wl.err" &
read -r -t 60 line < "$tmp/wl"
rc=0; "$CTL" segments --json > "$tmp/small.json" 2> "$tmp/small.err" || rc=\$?; echo \$rc > "$tmp/small.rc"
rc=0; "$CTL" audit --config "$tmp/ng.conf" > "$tmp/small.txt" 2>&1 || rc=\$?; echo \$rc > "$tmp/small-audit.rc"
touch "$tmp/wl.stop"
wait
rm -rf /dev/shm/small /dev/shm/big
# 100,001 empty files: past the 100,000 entries a collection examines
as_user bash -c 'mkdir /dev/shm/flood && cd /dev/shm/flood && seq -f f%.0f 1 100001 | xargs touch'
rc=0; "$CTL" segments --json > "$tmp/flood-seg.json" 2> "$tmp/flood-seg.err" || rc=\$?; echo \$rc > "$tmp/flood-seg.rc"
rc=0; "$CTL" audit --config "$tmp/ng.conf" --json > "$tmp/flood.json" 2> "$tmp/flood.err" || rc=\$?
echo \$rc > "$tmp/flood.rc"
rm -rf /dev/shm/flood
EOS
if ! unshare -m --propagation private bash "$tmp/in-ns.sh" > "$tmp/ns.log" 2>&1; then
        skip_all "cannot make a mount namespace with its own /dev/shm and its files here: $(tail -1 "$tmp/ns.log")"
fi
ns=$(cat "$tmp/mnt_ns")

# the namespace's own /dev/shm: the host's (seen through its other
# processes) holds whatever else runs here
own() { jq --argjson ns "$ns" "$@" 2>/dev/null; }
check_expr small-rc '[ "$(cat "$tmp/small.rc")" = 0 ]' "segments exited $(cat "$tmp/small.rc"): $(head -c 300 "$tmp/small.err")"
files=$(own -r '[.segments[] | select(.kind == "file" and .mnt_ns == $ns) | .name] | sort | join(" ")' "$tmp/small.json")
check_expr small-listed '[ "$files" = "/dev/shm/big /dev/shm/mapped" ]' \
        "file segments: '$files', expected the file above min_segment_size and the one a process maps"
counted=$(own -c '[.unlisted_files[] | select(.mnt_ns == $ns) | {small_files, small_bytes, unexamined}]' "$tmp/small.json")
check_expr small-counted '[ "$counted" = "[{\"small_files\":1000,\"small_bytes\":0,\"unexamined\":0}]" ]' \
        "unlisted_files of the namespace's /dev/shm: $counted, expected 1000 small files of 0 bytes"
check_expr small-text '[ "$(cat "$tmp/small-audit.rc")" -lt 3 ] &&
        grep -q "^/dev/shm: 1000 files under 64 MiB that no process maps, 0 KiB (0 KiB in memory): counted, not listed$" "$tmp/small.txt"' \
        "audit exited $(cat "$tmp/small-audit.rc"), its counting line: $(grep "no process maps" "$tmp/small.txt" | head -2)"

check_expr flood-segments '[ "$(cat "$tmp/flood-seg.rc")" = 0 ]' \
        "segments exited $(cat "$tmp/flood-seg.rc") with 100,001 files: $(head -c 300 "$tmp/flood-seg.err")"
rc=$(cat "$tmp/flood.rc")
check_expr flood-audit-rc '[ "$rc" -lt 3 ] && [ "$(jq .summary.exit_status "$tmp/flood.json" 2>/dev/null)" = "$rc" ]' \
        "audit exited $rc with 100,001 files: $(head -c 300 "$tmp/flood.err")"
msg=$(jq -r '[.findings[] | select(.code == "AUDIT_INCOMPLETE" and (.message | startswith("/dev/shm: "))) | .message] | .[0] // ""' \
        "$tmp/flood.json" 2>/dev/null)
check_expr flood-incomplete '[[ $msg == *"/dev/shm: 2 entries (mount namespace $ns) not looked at"* ]]' \
        "no AUDIT_INCOMPLETE naming /dev/shm and mount namespace $ns with the 2 entries left (the directory and 100,001 files, 100,000 looked at): '$msg'"
check_expr flood-owner '[[ $msg == *"uid 65534 owns 99999 of the 99999 files examined there"* ]]' \
        "AUDIT_INCOMPLETE does not name uid 65534 as the owner of the files: '$msg'"
unl=$(own -c '[.unlisted_files[] | select(.mnt_ns == $ns) | {small_files, unexamined}]' "$tmp/flood.json")
check_expr flood-counted '[ "$unl" = "[{\"small_files\":99999,\"unexamined\":2}]" ]' \
        "unlisted_files of the flooded /dev/shm: $unl, expected 99,999 counted and 2 not looked at"
[ "$fails" = 0 ]
