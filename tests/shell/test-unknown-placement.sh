#!/usr/bin/env bash
# suite: alongside
# A kernel file that a segment's placement or size depends on, and that
# cannot be used, is unknown, never "no pages" (#36, item 6). Each case is
# a copy of the captured tree tests/fixtures/trees/guest4-v2 with exactly
# one file edited (pid 179 is wl-sysv-bind3: the 8 MiB SysV shmid 0, all
# of it on node 3, which its child pid 181 maps without touching a page):
#
#   numa-maps-node-negative  proc/179/numa_maps: the SysV line's N3=2048
#                            made N-1=2048 (a node no host has)
#   numa-maps-node-huge      the same made N2147483648=2048
#   numa-maps-link-zero      proc/179/numa_maps a link to /dev/zero
#   maps-link-urandom        proc/179/maps a link to /dev/urandom
#   maps-garbage             proc/179/maps replaced by its status file's
#                            text (a file, just not maps)
#   sysvipc-missing          proc/sysvipc/shm deleted
#   sysvipc-duplicate        proc/sysvipc/shm: shmid 0's row appended again
#   other-users              proc/179/status and proc/181/status: Uid 65534
#                            (shmid 0 is root's: its only attachers are of
#                            another user, whose maps lines and page tables
#                            never speak for it)
#
# For each, `audit --root --json` raises one AUDIT_INCOMPLETE naming the
# file and why (other-users: the segment and its attachers). Where the placement depended on the file, shmid 0's
# placement is unknown (placement_source none, no nodes, the kernel's
# 8 MiB resident still counted), its CYCLOPS is not raised from nothing,
# and `rebalance --dry-run` refuses (exit 2: "its placement is unknown")
# where it said "nothing would move" and exited 0. The tree unedited is
# the control: no AUDIT_INCOMPLETE, the CYCLOPS, a move planned (exit 0).
# Each check failed before numaguard said so. Runs as any user.
# BUILD: build directory (default build).
set -u
echo 1..15
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
TREE=$SRC/tests/fixtures/trees/guest4-v2
[ -x "$CTL" ] || { echo "not ok unknown-placement: $CTL not built"; exit 1; }
command -v jq > /dev/null || { echo "not ok unknown-placement: jq not installed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_PREFIX=unknown-placement; . "$SRC/tests/shell/lib.sh"

# The instance of shmid 0, by the command line of its workload.
printf '[global]\nmin_segment_size = 1M\n[instance W]\nmatch_cmdline = *wl-sysv-bind3*\npolicy = interleave\n' \
        > "$tmp/w.conf"

jqe() { jq -e "$@" > /dev/null 2>&1; }

# copy NAME: a fresh copy of the tree at $tmp/NAME
copy() { cp -a "$TREE" "$tmp/$1"; }

# audit NAME: the audit's JSON in $tmp/NAME.json
audit() { "$CTL" audit --root "$tmp/$1" --config "$tmp/w.conf" --json > "$tmp/$1.json" 2> "$tmp/$1.err"; }

# incomplete NAME MESSAGE: exactly one AUDIT_INCOMPLETE, and it says MESSAGE
incomplete() {
        jq -e --arg m "$2" '[.findings[] | select(.code == "AUDIT_INCOMPLETE")] | length == 1 and .[0].message == $m' \
                "$tmp/$1.json" > /dev/null 2>&1
}
incomplete_why() { jq -c '[.findings[] | select(.code == "AUDIT_INCOMPLETE") | .message]' "$tmp/$1.json" 2>&1 | head -c 400; }

# unknown NAME: W's shmid 0 has 8 MiB resident by the kernel's count and
# no node, and no CYCLOPS is made of that
unknown() {
        jq -e '[.instances[] | select(.name == "W") | .segments[] | select(.shmid == 0)] as $s
                | ($s | length == 1) and $s[0].placement_source == "none" and ($s[0].nodes | length == 0)
                and $s[0].resident_bytes == 8388608 and $s[0].resident_source == "counter"
                and ([.findings[] | select(.code == "CYCLOPS" and .instance == "W")] | length == 0)' \
                "$tmp/$1.json" > /dev/null 2>&1
}
placement() {
        jq -c '[.instances[] | select(.name == "W") | .segments[] | [.shmid, .placement_source, .nodes, .resident_bytes]],
               [.findings[] | select(.instance == "W") | .code]' "$tmp/$1.json" 2>&1 | tr '\n' ' ' | head -c 400
}

# refused NAME: rebalance W --dry-run exits 2 and says why; nothing "would move"
refused() {
        local out rc
        out=$("$CTL" rebalance W --dry-run --root "$tmp/$1" --config "$tmp/w.conf" 2>&1); rc=$?
        if [ $rc = 2 ] && grep -q "shmid 0 (key 0x00000000): its placement is unknown: the nodes of its 8 MiB resident were not read" \
                <<<"$out" && ! grep -q "would move" <<<"$out"; then
                pass "$1-rebalance-refused"
        else
                fail "$1-rebalance-refused" "exit $rc: $(head -c 300 <<<"$out")"
        fi
}

# --- the control, the tree as captured, or no case below means anything:
# no AUDIT_INCOMPLETE, W's CYCLOPS on node 3, a move planned
copy control
audit control
out=$("$CTL" rebalance W --dry-run --root "$tmp/control" --config "$tmp/w.conf" 2>&1); rc=$?
if ! jqe '([.findings[] | select(.code == "AUDIT_INCOMPLETE")] | length == 0)
          and ([.findings[] | select(.code == "CYCLOPS" and .instance == "W" and .nodes == [3])] | length == 1)' \
        "$tmp/control.json" || [ $rc != 0 ] || ! grep -q "would move pages" <<<"$out"; then
        echo "not ok unknown-placement-control: the unedited tree: $(incomplete_why control) $(placement control);" \
                "rebalance exit $rc: $(head -c 200 <<<"$out")"
        exit 1
fi

# --- numa_maps: a node no host has
for c in "node-negative N-1=2048" "node-huge N2147483648=2048"; do
        name=numa-maps-${c%% *} token=${c#* }
        copy "$name"
        sed -i "s/ N3=2048 kernelpagesize_kB=4\$/ $token kernelpagesize_kB=4/" "$tmp/$name/proc/179/numa_maps"
        grep -q "SYSV.* $token " "$tmp/$name/proc/179/numa_maps" || { fail "$name" "the edit did not apply"; continue; }
        audit "$name"
        check_expr "$name" 'incomplete "$name" "$tmp/$name/proc/179/numa_maps: line 7 is not one the kernel prints (1 such line): the placement of the segments of pid 179 (ng-shm-workload) is unknown" && unknown "$name"' \
                "AUDIT_INCOMPLETE: $(incomplete_why "$name"); $(placement "$name")"
        refused "$name"
done

# --- numa_maps and maps: links to devices the tree does not hold
for c in "numa-maps-link-zero numa_maps /dev/zero" "maps-link-urandom maps /dev/urandom"; do
        read -r name file to <<<"$c"
        copy "$name"
        ln -sf "$to" "$tmp/$name/proc/179/$file"
        audit "$name"
        check_expr "$name" 'incomplete "$name" "$tmp/$name/proc/179/$file: is a symbolic link to $to, which is not in the tree (a capture holds no links); not read" && unknown "$name"' \
                "AUDIT_INCOMPLETE: $(incomplete_why "$name"); $(placement "$name")"
        refused "$name"
done

# --- maps: a file, but not maps
name=maps-garbage
copy $name
cp "$tmp/$name/proc/179/status" "$tmp/$name/proc/179/maps"
audit $name
lines=$(grep -c '' "$tmp/$name/proc/179/maps")
check_expr $name 'incomplete $name "$tmp/$name/proc/179/maps: line 1 is not a mapping the kernel prints ($lines such lines): the segments pid 179 (ng-shm-workload) maps are unknown" && unknown $name' \
        "AUDIT_INCOMPLETE: $(incomplete_why $name); $(placement $name)"
refused $name

# --- sysvipc/shm missing: every SysV size is unknown, and said
name=sysvipc-missing
copy $name
rm "$tmp/$name/proc/sysvipc/shm"
audit $name
check_expr $name 'incomplete $name "$tmp/$name/proc/sysvipc/shm: missing, though pid 179 maps shmid 0: the size of every System V segment is unknown" && jqe "[.segments[] | select(.kind == \"sysv\") | .bytes] == [null, null, null, null]" "$tmp/$name.json"' \
        "AUDIT_INCOMPLETE: $(incomplete_why $name); sizes $(jq -c '[.segments[] | select(.kind == "sysv") | [.shmid, .bytes]]' "$tmp/$name.json" 2>&1)"

# --- sysvipc/shm: one shmid in two rows is one segment, unknown
name=sysvipc-duplicate
copy $name
sed -n 2p "$TREE/proc/sysvipc/shm" >> "$tmp/$name/proc/sysvipc/shm"
audit $name
check $name "AUDIT_INCOMPLETE: $(incomplete_why $name)" incomplete $name \
        "$tmp/$name/proc/sysvipc/shm: shmid 0 is listed in 2 rows, where the kernel lists a segment once: one segment, its size and attach count unknown"
"$CTL" segments --root "$tmp/$name" --json > "$tmp/$name.segments.json" 2>&1
check $name-one-segment "$(jq -c '[.segments[] | select(.kind == "sysv") | [.shmid, .bytes]]' "$tmp/$name.segments.json" 2>&1)" \
        jqe '[.segments[] | select(.kind == "sysv") | .shmid] == [0, 1, 2, 3]
               and ([.segments[] | select(.shmid == 0) | .bytes] == [null])' "$tmp/$name.segments.json"

# --- root's segment attached only by another user's processes: their
# numa_maps (N3=2048, the segment's own pages here) are not taken for it
name=other-users
copy $name
sed -i 's/^Uid:\t0\t0\t0\t0$/Uid:\t65534\t65534\t65534\t65534/' "$tmp/$name/proc/179/status" "$tmp/$name/proc/181/status"
if ! grep -q "^Uid:.65534" "$tmp/$name/proc/179/status" || ! grep -q "^Uid:.65534" "$tmp/$name/proc/181/status"; then
        fail $name "the edit did not apply"; fail $name-rebalance-refused "not run"
else
        audit $name
        check_expr $name 'incomplete $name "shmid 0 (key 0x00000000) is attached only by processes of other users than root (pids 179 and 181): neither their maps lines nor their page tables are taken for it, and its placement is unknown" && unknown $name && jqe "[.segments[] | select(.shmid == 0) | .untrusted_pids] == [[179, 181]]" "$tmp/$name.json"' \
                "AUDIT_INCOMPLETE: $(incomplete_why $name); $(placement $name)"
        out=$("$CTL" rebalance W --dry-run --root "$tmp/$name" --config "$tmp/w.conf" 2>&1); rc=$?
        check_expr $name-rebalance-refused '[ $rc = 2 ] && grep -q "shmid 0 (key 0x00000000): its placement is unknown: it is attached only by processes of other users than root (pids 179 and 181), whose page tables are not taken for it" <<<"$out" && ! grep -q "would move" <<<"$out"' \
                "exit $rc: $(head -c 300 <<<"$out")"
fi

[ "$fails" = 0 ]
