#!/usr/bin/env bash
# The audit refused a process's maps on this live host, and says which
# process and why (AUDIT_INCOMPLETE, numaguardctl(1)). A root "ngrefdb" (the
# workload under that name) maps a 16 MiB SysV segment and is configured as
# instance REF:
#   - audited as uid 65534: the finding names its pid and name and the
#     reason (not root), and the instance's sizes are unknown (JSON null,
#     text "unknown"), not 0;
#   - audited as root with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH dropped
#     (setpriv; CAP_SYS_ADMIN and CAP_PERFMON too, which Linux 6.18 also
#     takes for reading maps): the reason is the missing CAP_SYS_PTRACE,
#     and the advice is not "run as root";
#   - audited as root with every capability: the instance's sizes are
#     known, its segment's the kernel's (/proc/sysvipc/shm), and no advice
#     says "run as root".
# Needs root; under CI not being able to run is a failure.
# BUILD: build directory (default build).
set -u
echo 1..6
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
CTL=$B/numaguardctl WL=$B/tests/helpers/ng-shm-workload
TAP_PREFIX=audit-refused; . tests/shell/lib.sh
[ "$(id -u)" = 0 ] || skip_all "needs root (a root process that another user audits, setpriv)"
command -v setpriv > /dev/null || skip_all "setpriv (util-linux) not installed"
command -v jq > /dev/null || skip_all "jq not installed"
[ -x "$WL" ] && [ -x "$CTL" ] || { echo "not ok audit-refused: not built"; exit 1; }
T=$(mktemp -d /tmp/ng-refused.XXXXXX)
chmod 755 "$T"
pids=()
cleanup() {
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        rm -rf "$T"
}
trap cleanup EXIT

ln -s "$(cd "${WL%/*}" && pwd -P)/${WL##*/}" "$T/ngrefdb"
mkfifo "$T/wl.fifo"
"$T/ngrefdb" sysv -s 16 -p 1 > "$T/wl.fifo" 2> "$T/wl.err" &
pids+=($!)
read -r -t 60 line < "$T/wl.fifo" || { echo "not ok audit-refused: workload: $(cat "$T/wl.err")"; exit 1; }
WPID=${line#pid=}; WPID=${WPID%% *}
SHMID=${line#*shmid=}; SHMID=${SHMID%% *}
# the kernel's size of the segment: the oracle
KBYTES=$(awk -v id="$SHMID" '$2 == id { print $4 }' /proc/sysvipc/shm)
printf '[global]\nmin_segment_size = 4M\n[instance REF]\nmatch_comm = ngrefdb\n' > "$T/ng.conf"
chmod 644 "$T/ng.conf"
cp "$CTL" "$T/numaguardctl" && chmod 755 "$T/numaguardctl"
# the AUDIT_INCOMPLETE finding that names WPID, from a JSON audit
named() { jq -c --arg p "$WPID" '[.findings[] | select(.code == "AUDIT_INCOMPLETE"
                and (.message | test("pids? (.*, )?" + $p + " \\(ngrefdb\\)")))] | .[0] // empty' "$1"; }

# ---- as uid 65534: not root ----
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- "$@"; }
start=$SECONDS
asnobody "$T/numaguardctl" audit --config "$T/ng.conf" --json > "$T/nobody.json" 2> "$T/nobody.err"
asnobody "$T/numaguardctl" audit --config "$T/ng.conf" > "$T/nobody.txt" 2>&1
f=$(named "$T/nobody.json")
if [ -n "$f" ] && jq -e '(.message | test("numaguard runs as uid 65534, not root, without CAP_SYS_PTRACE"))
                         and (.advice | test("^run as root"))' <<<"$f" > /dev/null; then
        pass "nonroot-names-pid ($WPID)"
else
        fail nonroot-names-pid "no AUDIT_INCOMPLETE naming $WPID (ngrefdb) with the reason 'not root'"
        jq -c '[.findings[] | select(.code == "AUDIT_INCOMPLETE")]' "$T/nobody.json" 2>&1 | head -c 1500 | sed 's/^/# /'
fi
if jq -e '[.instances[] | select(.name == "REF" and .shared_bytes == null and .resident_bytes == null)] | length == 1' \
        "$T/nobody.json" > /dev/null &&
   grep -A3 "^instance REF " "$T/nobody.txt" | grep -q "^  shared memory of unknown size, unknown resident" &&
   ! grep -A3 "^instance REF " "$T/nobody.txt" | grep -q "shared memory 0 KiB"; then
        pass nonroot-sizes-unknown
else
        fail nonroot-sizes-unknown "instance REF's sizes not unknown"
        jq -c '.instances[] | {name, shared_bytes, resident_bytes}' "$T/nobody.json" 2>&1 | sed 's/^/# /'
        grep -A3 "^instance REF" "$T/nobody.txt" | sed 's/^/# /'
fi

# ---- as root without CAP_SYS_PTRACE (nor CAP_SYS_ADMIN and CAP_PERFMON,
# which Linux 6.18 takes for it when reading maps) ----
setpriv --bounding-set=-sys_ptrace,-dac_read_search,-sys_admin,-perfmon --inh-caps=-all -- \
        "$T/numaguardctl" audit --config "$T/ng.conf" --json > "$T/noptrace.json" 2> "$T/noptrace.err"
f=$(named "$T/noptrace.json")
if [ -n "$f" ] && jq -e '(.message | test("numaguard runs as root without CAP_SYS_PTRACE in its effective set.*cap_sys_ptrace"))
                         and (.advice | test("CAP_SYS_PTRACE")) and (.advice | test("run as root") | not)' \
                         <<<"$f" > /dev/null; then
        pass "root-without-ptrace ($WPID)"
else
        fail root-without-ptrace "no AUDIT_INCOMPLETE naming $WPID (ngrefdb) with the reason 'without CAP_SYS_PTRACE'"
        jq -c '[.findings[] | select(.code == "AUDIT_INCOMPLETE")]' "$T/noptrace.json" 2>&1 | head -c 1500 | sed 's/^/# /'
fi

# ---- as root with every capability ----
"$T/numaguardctl" audit --config "$T/ng.conf" --json > "$T/root.json" 2> "$T/root.err"
# (its segment's size: under ASan the workload's shadow memory, a private
# mapping of terabytes, counts in the instance's shared_bytes too)
if [ -n "$KBYTES" ] && jq -e --argjson b "$KBYTES" --argjson id "$SHMID" '[.instances[] | select(.name == "REF"
                and .shared_bytes != null and .resident_bytes != null
                and ([.segments[] | select(.shmid == $id and .bytes == $b)] | length == 1))] | length == 1' \
                "$T/root.json" > /dev/null; then
        pass "root-sizes-known ($KBYTES bytes, /proc/sysvipc/shm)"
else
        fail root-sizes-known "instance REF's size is not the kernel's $KBYTES"
        jq -c '.instances[] | {name, shared_bytes, resident_bytes}' "$T/root.json" 2>&1 | sed 's/^/# /'
fi
if [ -z "$(named "$T/root.json")" ]; then
        pass root-reads-workload
else
        fail root-reads-workload "root with every capability still refused $WPID"
fi
if jq -e '[.findings[] | select(.code == "AUDIT_INCOMPLETE" and (.advice | test("run as root")))] | length == 0' \
        "$T/root.json" > /dev/null; then
        pass "root-not-told-root ($(jq '[.findings[] | select(.code == "AUDIT_INCOMPLETE")] | length' "$T/root.json") AUDIT_INCOMPLETE)"
else
        fail root-not-told-root "root was advised to run as root"
        jq -c '[.findings[] | select(.code == "AUDIT_INCOMPLETE")]' "$T/root.json" | head -c 1500 | sed 's/^/# /'
fi
echo "# audits: $((SECONDS - start)) s"
exit $((fails > 0))
