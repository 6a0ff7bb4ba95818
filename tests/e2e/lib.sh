# tests/e2e/lib.sh -- sourced by every case script (tests/e2e/cases/*.sh).
# Runs INSIDE the NUMA guest, as root, in the project root.
#
# A case first declares its plan (`plan N`: N result lines to come), then
# prints diagnostics as "# ..." lines and its results as
#   ok TOPO/CASE[/SUB]        not ok TOPO/CASE[/SUB]        skip TOPO/CASE: why
# (result, skip_case and roundtrip print them). Every assertion goes
# through numaguardctl; /proc is read directly only for diagnostics and to
# check that the guest really set up what the case asked for.
#
# Cost: under TCG every exec costs 0.1-0.8 s (jq: ~0.6 s), so the helpers
# below use bash built-ins and read each JSON document with ONE jq call.
set -u

E2E_DIR=${E2E_DIR:-$(cd "${BASH_SOURCE[0]%/*}" && pwd -P)}
ROOT=${ROOT:-${E2E_DIR%/tests/e2e}}
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$ROOT/$BUILD ;; esac
# where the case's records go: $BUILD/e2e, another kernel's beside it (run-e2e)
REC_DIR=${E2E_OUT:-$BUILD/e2e}
case $REC_DIR in /*) ;; *) REC_DIR=$ROOT/$REC_DIR ;; esac
CTL=$B/numaguardctl
WL=$B/tests/helpers/ng-shm-workload
E2E_TOPO=${E2E_TOPO:?E2E_TOPO not set (run through tests/e2e/suite.sh)}
# shellcheck source=/dev/null
. "$E2E_DIR/topologies/$E2E_TOPO.conf"
CASE=${CASE:-${0##*/}}; CASE=${CASE%.sh}
ID=$E2E_TOPO/$CASE
T=/tmp/e2e.$CASE.$$
mkdir -p "$T"
FAILS=0
CLEANUPS=()
WL_PIDS=()
WL_N=0

log()  { printf '# %s\n' "$*"; }
logf() {                  # logf [FILE...]: indent files (or stdin) as diagnostics
    local l f                 # (the guest has no /dev/stdin symlink)
    if (($# == 0)); then while IFS= read -r l; do printf '#   %s\n' "$l"; done; return; fi
    for f; do while IFS= read -r l; do printf '#   %s\n' "$l"; done < "$f"; done
}
fail() { printf '# FAIL: %s\n' "$*"; FAILS=$((FAILS + 1)); }

# expect MESSAGE CMD...: run CMD, count a failure with MESSAGE if it fails.
expect() {
    local msg=$1; shift
    "$@" || fail "$msg"
}

# result [SUB]: the verdict line. Resets the failure count.
result() {
    local id=$ID${1:+/$1}
    if ((FAILS == 0)); then echo "ok $id"; else echo "not ok $id"; fi
    FAILS=0
}

# abort MESSAGE: a failure that makes the rest of the case pointless.
abort() { fail "$*"; result; exit 1; }

# plan N: how many result lines (ok / not ok / skip, result and roundtrip
# print one each) this case prints; called right after sourcing lib.sh,
# before anything can fail or skip. suite.sh fails a case that has no plan
# or does not keep it.
plan() { echo "1..$1"; }

# skip_case WHY: the whole case is skipped (its planned results count as
# skipped; under CI, suite.sh turns it into a failure with WHY).
skip_case() { echo "skip $ID: $*"; exit 0; }
# not_applicable WHY: this kernel lacks what the case is about; WHY names
# the probe that said so. Never a pass, never a skip: suite.sh counts its
# planned results as not applicable, under CI too.
not_applicable() { echo "n/a $ID: $*"; exit 0; }

at_exit() { CLEANUPS+=("$*"); }
run_cleanups() {
    local i p
    for p in "${WL_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${WL_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[i]}" >/dev/null 2>&1; done
    rm -rf "$T"
}
trap run_cleanups EXIT

need_ctl() {
    [ -x "$CTL" ] || abort "$CTL not built (make)"
    [ -x "$WL" ] || abort "$WL not built (make $B/tests/helpers/ng-shm-workload)"
}

# ctl_json OUT ARGS...: numaguardctl ARGS --json > OUT (exit status checked;
# the JSON itself is checked by whoever reads it).
ctl_json() {
    local out=$1; shift
    "$CTL" "$@" --json > "$out" 2> "$out.err" && return 0
    fail "numaguardctl $* --json exited $?"; logf "$out.err"; return 1
}

# --------------------------------------------------------------- topology
_ids=()
for _n in /sys/devices/system/node/node[0-9]*; do _ids[${_n##*node}]=1; done
NODE_IDS=("${!_ids[@]}")            # indexed array keys: numeric order
node_cpus() { local l; read -r l < "/sys/devices/system/node/node$1/cpulist"; echo "$l"; }
hp_file()   { echo "/sys/devices/system/node/node$1/hugepages/hugepages-${2:-2048}kB/nr_hugepages"; }
node_free_kib() {           # node_free_kib N: node N's MemFree in kB
    local k v; while read -r _ _ k v _; do [ "$k" = MemFree: ] && echo "$v"; done < "/sys/devices/system/node/node$1/meminfo"
}

# set_hugepages NODE COUNT [KIB]: size a node's pool; reset to 0 at exit.
set_hugepages() {
    local f=/sys/devices/system/node/node$1/hugepages/hugepages-${3:-2048}kB/nr_hugepages got
    echo "$2" > "$f" || { fail "cannot write $f"; return 1; }
    at_exit "echo 0 > $f"
    read -r got < "$f"
    [ "$got" = "$2" ] || { fail "node $1 pool: asked $2 pages, kernel granted $got"; return 1; }
}

# expand_cpulist "0-2,5" -> "0 1 2 5"
expand_cpulist() {
    local part i out=() parts
    IFS=, read -ra parts <<<"$1"
    for part in "${parts[@]}"; do
        [ -n "$part" ] || continue
        if [[ $part == *-* ]]; then
            for ((i = ${part%-*}; i <= ${part#*-}; i++)); do out+=("$i"); done
        else out+=("$part"); fi
    done
    echo "${out[*]}"
}

# topo_load FILE: read `topology --json` with one jq call into
#   TOPO_IDS=(ids)  TOPO_CPUS[id]  TOPO_MEMONLY[id]  TOPO_TOTAL[id] (KiB)
#   TOPO_DIST[id]="d0 d1 ..."  TOPO_HP2M[id]="total free surplus"
topo_load() {
    local sh
    TOPO_IDS=(); declare -gA TOPO_CPUS=() TOPO_MEMONLY=() TOPO_TOTAL=() TOPO_DIST=() TOPO_HP2M=()
    sh=$(jq -r 'if .schema != 1 then error("schema is not 1") else . end
        | "TOPO_IDS=(\([.nodes[].id] | map(tostring) | join(" ")))",
          (.nodes[] | (.id | tostring) as $i |
            "TOPO_CPUS[\($i)]=\(.cpus // "" | @sh)",
            "TOPO_MEMONLY[\($i)]=\(.memory_only | tostring)",
            "TOPO_TOTAL[\($i)]=\(.mem_total_kib // 0)",
            "TOPO_DIST[\($i)]=\(.distances // [] | map(tostring) | join(" ") | @sh)",
            "TOPO_HP2M[\($i)]=\([.hugepages[]? | select(.page_kib == 2048) | .total, .free, .surplus]
                                | map(tostring) | join(" ") | @sh)")' "$1" 2>&1) ||
        { fail "topology JSON unreadable: $sh"; head -c 2000 "$1" | logf; return 1; }
    eval "$sh"
}

# ------------------------------------------------------------- workloads
# wl_start [PREFIX... --] WORKLOAD-ARGS...: start ng-shm-workload in the
# background (behind PREFIX, e.g. numactl --membind=2 --) and wait for its
# report line, which it prints once every page is touched and every child
# attached. Sets WL_PID WL_SHMID WL_BYTES WL_KIND WL_CHILDREN WL_PIDS_SP.
wl_start() {
    local pre=() out line=""
    if [[ " $* " == *" -- "* ]]; then
        while [ "$1" != -- ]; do pre+=("$1"); shift; done; shift
    fi
    WL_N=$((WL_N + 1)); out=$T/wl$WL_N
    mkfifo "$out.fifo"
    log "start: ${pre[*]} ng-shm-workload $*"
    "${pre[@]}" "$WL" "$@" > "$out.fifo" 2> "$out.err" &
    WL_PID=$!; WL_PIDS+=("$WL_PID")
    IFS= read -r -t 120 line < "$out.fifo"     # TCG is slow: allow 2 minutes
    if [[ $line != pid=* ]]; then
        fail "workload did not report (got '$line')"; logf "$out.err"; return 1
    fi
    log "ready: $line"
    # the workload's own pid (WL_PID is PREFIX's: a container runtime's client)
    [[ $line =~ ^pid=([0-9]+) ]] && WL_PID_REAL=${BASH_REMATCH[1]}
    [[ $line =~ \ shmid=(-?[0-9]+) ]] && WL_SHMID=${BASH_REMATCH[1]}
    [[ $line =~ \ bytes=([0-9]+) ]] && WL_BYTES=${BASH_REMATCH[1]}
    [[ $line =~ \ kind=([a-z_]+) ]] && WL_KIND=${BASH_REMATCH[1]}
    [[ $line =~ \ page_kib=([0-9]+) ]] && WL_PAGE_KIB=${BASH_REMATCH[1]}
    [[ $line =~ \ children=([0-9,]*) ]] && WL_CHILDREN=${BASH_REMATCH[1]}
    WL_PIDS_SP="$WL_PID ${WL_CHILDREN//,/ }"
}

# numa_maps_diag PID REGEX: diagnostics only (what the kernel itself says)
numa_maps_diag() {
    local l
    while IFS= read -r l; do [[ $l =~ $2 ]] && printf '#   kernel numa_maps: %s\n' "$l"; done < "/proc/$1/numa_maps"
}

# kernel_nodes PID [REGEX]: the kernel's own placement of PID's mapping
# matching REGEX (default SYSV), "N0=pages N1=pages ..." from its numa_maps:
# an expectation that does not come from numaguard.
# kernel_at_least MAJOR MINOR: the guest's kernel release is MAJOR.MINOR or
# later (only for what no file shows: a semantic that changed in a release)
kernel_at_least() {
    local r ma mi
    r=$(uname -r); ma=${r%%.*}; r=${r#*.}; mi=${r%%[!0-9]*}
    ((ma > $1 || (ma == $1 && mi >= $2)))
}

kernel_nodes() {
    local l w out=""
    while IFS= read -r l; do
        [[ $l =~ ${2:-SYSV} ]] || continue
        for w in $l; do [[ $w == N[0-9]*=* ]] && out+="$w "; done
    done < "/proc/$1/numa_maps"
    echo "${out% }"
}

# ------------------------------------------------------- segment checks
# seg_select JQ-FILTER: run `numaguardctl segments --json`; the one segment
# matching FILTER (a jq boolean over a segment) is loaded into SEG_kind,
# SEG_name, SEG_shmid, SEG_bytes, SEG_page_kib, SEG_nattch, SEG_method,
# SEG_representative_pid, SEG_resident_bytes, SEG_resident_source,
# SEG_placement_source, SEG_pids ("p1 p2"),
# SEG_nodes ("id:bytes id:bytes"). SEG_ARGS: more arguments (--exact).
seg_select() {
    local sh
    ctl_json "$T/segments.json" segments ${SEG_ARGS-} || return 1
    sh=$(jq -r "if .schema != 1 then error(\"schema is not 1\") else . end
        | [.segments[] | select($1)] as \$m
        | \"SEG_COUNT=\(\$m | length)\",
          (\$m[0] // {} | \"SEG_kind=\(.kind // \"\" | @sh)\", \"SEG_name=\(.name // \"\" | @sh)\",
            (\"shmid\", \"bytes\", \"page_kib\", \"nattch\", \"representative_pid\", \"resident_bytes\", \"method\",
             \"resident_source\", \"placement_source\", \"policy\")
              as \$f | \"SEG_\(\$f)=\(.[\$f] // \"\" | tostring | @sh)\",
            \"SEG_pids=\([.pids[]? | tostring] | join(\" \") | @sh)\",
            \"SEG_nodes=\([.nodes[]? | \"\(.id):\(.bytes)\"] | join(\" \") | @sh)\",
            \"SEG_line=\(tojson | @sh)\")" "$T/segments.json" 2>&1) ||
        { fail "segments JSON unreadable: $sh"; head -c 2000 "$T/segments.json" | logf; return 1; }
    eval "$sh"
    if [ "$SEG_COUNT" != 1 ]; then
        fail "expected exactly 1 segment matching ($1), found $SEG_COUNT; all segments:"
        jq -c '.segments[] | del(.nodes) + {nodes: ([.nodes[]? | "N\(.id)=\(.bytes)"] | join(" "))}' \
            "$T/segments.json" | logf
        return 1
    fi
    log "numaguard: $SEG_line"
}

# within2 A B: A within 2 % of B, the kernel's own count (B > 0: a count
# of nothing never agrees)
within2() { (( $2 > 0 && ($1 > $2 ? $1 - $2 : $2 - $1) * 50 <= $2 )); }

# expect_field FIELD VALUE: SEG_FIELD must be VALUE
expect_field() {
    local v=SEG_$1
    [ "${!v-}" = "$2" ] || fail "$1 is '${!v-}', expected '$2'"
}

seg_node_bytes() {       # seg_node_bytes NODE -> bytes on NODE (0 if absent)
    local e sum=0
    for e in $SEG_nodes; do [ "${e%%:*}" = "$1" ] && sum=$((sum + ${e#*:})); done
    echo $sum
}
seg_total_bytes() { local e sum=0; for e in $SEG_nodes; do sum=$((sum + ${e#*:})); done; echo $sum; }

# expect_on_node NODE [BYTES]: every resident byte on NODE (and, when BYTES
# is given, exactly BYTES of them there).
expect_on_node() {
    local node=$1 want=${2:-} on total
    on=$(seg_node_bytes "$node"); total=$(seg_total_bytes)
    log "placement per numaguard: ${SEG_nodes:-none} (want all on node $node)"
    ((total > 0)) || { fail "no resident bytes reported on any node"; return 1; }
    ((on == total)) || fail "only $on of $total resident bytes on node $node"
    [ -z "$want" ] || ((on == want)) || fail "node $node holds $on bytes, expected $want"
}

# expect_interleaved NODES...: each node holds 1/N of the bytes +-40 % of
# that share (4 nodes: 25 % +-10 points).
expect_interleaved() {
    local n=$# total node on pct share tol
    total=$(seg_total_bytes)
    log "placement per numaguard: ${SEG_nodes:-none} (want 1/$n on each of $*)"
    ((total > 0)) || { fail "no resident bytes"; return 1; }
    share=$((10000 / n)); tol=$((share * 40 / 100))    # in 1/100 %
    for node in "$@"; do
        on=$(seg_node_bytes "$node"); pct=$((on * 10000 / total))
        ((pct >= share - tol && pct <= share + tol)) ||
            fail "node $node holds $((pct / 100)).$((pct % 100 / 10)) % (want $((share / 100)) % +-$((tol / 100)))"
    done
}

# expect_rep_in PIDS...: the representative pid must be one of PIDS
expect_rep_in() {
    [[ " $* " == *" $SEG_representative_pid "* ]] ||
        fail "representative_pid '$SEG_representative_pid' is not one of the attached processes ($*)"
}

# --------------------------------------------------- snapshot round trip
# Counters that legitimately move between two reads of a live host (free,
# used, page cache, shmem, page tables... every *_kib except the totals and
# page sizes) are compared with a tolerance, everything else exactly. Only
# the shared segment kinds the suite controls are compared: private
# mappings belong to processes that come and go (numaguardctl itself, jq).
# Live placement may be sampled (move_pages) while --root reads numa_maps
# ("exact"): see segs_agree.
JQ_DEFS='def vol: test("_kib$") and . != "mem_total_kib" and . != "page_kib";
def norm: walk(if type == "object" then with_entries(select((.key | vol | not) and
    (.key | IN("timestamp", "time", "generated_at", "collected_at", "duration_ms", "elapsed_ms", "root") | not)))
    else . end)
  | if type == "object" and has("segments") then .segments |= map(select(.kind | IN("sysv", "file", "anon_shared"))) else . end;
def shared: .segments | map(select(.kind | IN("sysv", "file", "anon_shared")));
def segkey: [.kind, .name, (.shmid // -1), (.pids // [] | min // -1)];
def pct: ([.nodes[]?.bytes] | add // 0) as $t
    | reduce (.nodes // [])[] as $x ({}; .[$x.id | tostring] = (if $t > 0 then $x.bytes * 100 / $t else 0 end));
def absv: if . < 0 then -. else . end;
# Two segments documents agree: same shared segments with the same fields;
# placement (where it came from, and through which process) equal when both
# used the same method, else (live "sampled" from the segment itself, opened
# by its path or through any attacher, vs "exact" from the numa_maps of the
# representative in the tree) per-node shares within 3 points and resident
# bytes within 2 %. The policy of a segment is asked of the live segment
# only (in a tree the numa_maps of a process show the policy of that
# process where the segment has none): the tree says null.
def segs_agree($x; $y):
    ($x | shared | sort_by(segkey)) as $X | ($y | shared | sort_by(segkey)) as $Y
    | ($X | map(del(.method, .resident_bytes, .nodes, .resident_source, .placement_source, .placement_coverage,
                    .representative_pid, .policy)))
      == ($Y | map(del(.method, .resident_bytes, .nodes, .resident_source, .placement_source, .placement_coverage,
                       .representative_pid, .policy)))
      and ([range($X | length) as $i | $X[$i] as $a | $Y[$i] as $b
            | if $a.method == $b.method then $a.nodes == $b.nodes and $a.resident_bytes == $b.resident_bytes
                and $a.placement_source == $b.placement_source and $a.resident_source == $b.resident_source
                and $a.representative_pid == $b.representative_pid
              elif $b.placement_source == "segment" and $a.placement_source != "segment"
                   and ([$a.nodes[]? as $n | ($n.bytes // 0) * 50
                         <= (([$b.nodes[]? | select(.id == $n.id) | .bytes] | add) // 0) * 51 + 204800] | all)
                # what the one attacher the tree holds maps is part of what the
                # live host counted, node by node (pages fallocated and never
                # touched, or touched only by processes gone, are in no page
                # table); nothing of it there: where it sits is unknown
                then ($a.resident_bytes // 0) * 50 <= ($b.resident_bytes // 0) * 51 + 4096
              else (($a | pct) as $p | ($b | pct) as $q
                    | [(($p + $q) | keys[]) as $k | (($p[$k] // 0) - ($q[$k] // 0)) | absv] | max // 0) <= 3
                   and (if $b.placement_source == "segment" and $a.placement_source != "segment"
                        # the tree holds the numa_maps of one attacher: of what the
                        # live host counted it can show less, never more
                        then ($a.resident_bytes // 0) * 50 <= ($b.resident_bytes // 0) * 51 + 4096
                        else ((($a.resident_bytes // 0) - ($b.resident_bytes // 0)) | absv) * 50 <= (($a.resident_bytes // 0) + 1)
                        end)
              end] | all);
# How far a memory counter of the tree ($r) lies outside what the live host
# read just before ($b) and just after ($a) the capture: a counter that moved
# during the capture is bracketed, not compared with one end of it.
def voldiff($b; $a; $r): [$a | paths(numbers) as $p | select(($p[-1] | type) == "string" and ($p[-1] | vol))
    | ($a | getpath($p)) as $x | ($b | getpath($p) // $x) as $y | ($r | getpath($p) // 0) as $z
    | ([$x, $y] | min) as $lo | ([$x, $y] | max) as $hi
    | [if $z < $lo then $lo - $z elif $z > $hi then $z - $hi else 0 end, ($p | map(tostring) | join("."))]]
    | (max_by(.[0]) // [0, "none"]) | "\(.[0]) \(.[1])";'

# roundtrip SCENARIO "what the scenario is": `numaguardctl snapshot`, unpack,
# `--root` on the tree must reproduce the live topology and segments (read
# just before or just after the capture). With NUMAGUARD_E2E_CAPTURE=1 the
# tree is saved, unpacked, as $NUMAGUARD_E2E_CAPTURE_DIR/SCENARIO/ (run-e2e
# sets it, never to tests/fixtures/trees/). Prints its own
# "ok ID/snapshot" line.
roundtrip() {
    local scn=$1 what=$2 d=$T/rt tree cmd verdict saved=$FAILS n=0 l
    FAILS=0
    tree=$d/tree; mkdir -p "$tree"
    for cmd in topology segments; do ctl_json "$d/$cmd.before.json" $cmd; done
    if ! "$CTL" snapshot -o "$d/snap.tar.gz" > "$d/snap.log" 2>&1; then
        fail "numaguardctl snapshot -o failed"; logf "$d/snap.log"; result snapshot; FAILS=$saved; return
    fi
    for cmd in topology segments; do ctl_json "$d/$cmd.after.json" $cmd; done
    if tar -xzvf "$d/snap.tar.gz" -C "$tree" > "$d/list" 2>&1; then
        while IFS= read -r l; do
            n=$((n + 1))
            [[ $l == /* || $l =~ (^|/)\.\.(/|$) ]] && { fail "snapshot member with an absolute or .. path: $l"; break; }
        done < "$d/list"
        log "snapshot: $n entries"
    else
        fail "snapshot is not a gzip tarball"; logf "$d/list"
    fi
    for cmd in topology segments; do ctl_json "$d/$cmd.root.json" $cmd --root "$tree"; done
    verdict=$(jq -n -r --slurpfile tb "$d/topology.before.json" --slurpfile ta "$d/topology.after.json" \
        --slurpfile tr "$d/topology.root.json" --slurpfile sb "$d/segments.before.json" \
        --slurpfile sa "$d/segments.after.json" --slurpfile sr "$d/segments.root.json" "$JQ_DEFS"'
        def same($r; $b; $a): ($r | norm) as $R | $R == ($a | norm) or $R == ($b | norm);
        "topology=\(if $tr[0].schema == 1 and same($tr[0]; $tb[0]; $ta[0]) then "same" else "differs" end)",
        "segments=\(if $sr[0].schema == 1 and (segs_agree($sr[0]; $sa[0]) or segs_agree($sr[0]; $sb[0]))
                    then "same" else "differs" end)",
        "methods=\([$sa[0] | shared[] | .method] | unique | join(","))/\([$sr[0] | shared[] | .method] | unique | join(","))",
        "voldiff=\(voldiff($tb[0]; $ta[0]; $tr[0]))",
        "shared_segments=\($sr[0].segments | map(select(.kind | IN("sysv", "file", "anon_shared"))) | length)"' 2>&1)
    log "round trip: $(echo $verdict)"
    for cmd in topology segments; do
        if [[ $verdict != *"$cmd=same"* ]]; then
            fail "$cmd --root on the snapshot differs from the live output (diff live snapshot):"
            jq -S "$JQ_DEFS norm" "$d/$cmd.after.json" > "$d/a.norm" 2>&1
            jq -S "$JQ_DEFS norm" "$d/$cmd.root.json" > "$d/r.norm" 2>&1
            diff "$d/a.norm" "$d/r.norm" | head -40 | logf
        fi
    done
    if [[ $verdict =~ voldiff=([0-9]+)\ ([^ ]+) ]]; then
        ((BASH_REMATCH[1] <= 32768)) || fail "a memory counter (${BASH_REMATCH[2]}) differs by ${BASH_REMATCH[1]} KiB" \
            "between the snapshot and what the live host read before and after it"
    else
        fail "could not compare the memory counters"
    fi
    if [ "${NUMAGUARD_E2E_CAPTURE:-0}" = 1 ] && ((FAILS == 0)); then
        local dst=${NUMAGUARD_E2E_CAPTURE_DIR:?run-e2e sets it}
        [[ $dst == /* ]] || dst=$ROOT/$dst
        dst=$dst/$scn
        rm -rf "$dst"; mkdir -p "$dst"
        tar -xzf "$d/snap.tar.gz" -C "$dst"
        {
            echo "scenario: $scn"
            echo "what: $what"
            echo "topology: $E2E_TOPO ($TOPO_DESC)"
            echo "kernel: $(uname -r)"
            echo "captured-by: tests/e2e/cases/$CASE.sh (numaguardctl snapshot in the NUMA guest)"
            echo "live numaguardctl segments --json (shared kinds) at capture time:"
            jq -c '.segments[]? | select(.kind | IN("sysv", "file", "anon_shared"))
                   | {kind, name, shmid, bytes, page_kib, nattch, representative_pid, nodes}' "$d/segments.after.json"
        } > "$dst/E2E-INFO"
        log "captured fixture tree ${dst#"$ROOT"/}"
    fi
    result snapshot
    FAILS=$saved
}

# ------------------------------------------------------- audit checks
# audit_load [ARGS...]: `numaguardctl audit --json ARGS`, run through the
# command array AUDIT_AS when set (e.g. setpriv as another user); (exit 0-2 accepted,
# kept in AUDIT_RC); loads AUDIT_FINDINGS ("CODE|severity|instance|nodes csv"
# per line) and AUDIT_INSTANCES ("name|type|main_pid|bytes|nodes" per line,
# nodes as "id:bytes,...") with one jq call.
audit_load() {
    local sh
    AUDIT_FINDINGS="" AUDIT_INSTANCES="" AUDIT_EXIT="" AUDIT_OK=0
    ${AUDIT_AS[@]+"${AUDIT_AS[@]}"} "$CTL" audit --json "$@" > "$T/audit.json" 2> "$T/audit.err"
    AUDIT_RC=$?
    if ((AUDIT_RC > 2)); then fail "numaguardctl audit $* exited $AUDIT_RC"; logf "$T/audit.err"; return 1; fi
    sh=$(jq -r 'if .schema != 1 then error("schema is not 1") else . end
        | "AUDIT_FINDINGS=\([.findings[] | "\(.code)|\(.severity)|\(.instance)|\(.nodes | map(tostring) | join(","))"] | join("\n") | @sh)",
          "AUDIT_INSTANCES=\([.instances[] | "\(.name)|\(.type)|\(.main_pid)|\(.shared_bytes)|\([.nodes[] | "\(.id):\(.bytes)"] | join(","))"] | join("\n") | @sh)",
          "AUDIT_EXIT=\(.summary.exit_status)"' "$T/audit.json" 2>&1) ||
        { fail "audit JSON unreadable: $sh"; return 1; }
    eval "$sh"
    [ "$AUDIT_EXIT" = "$AUDIT_RC" ] || fail "exit status $AUDIT_RC but summary.exit_status $AUDIT_EXIT"
    AUDIT_OK=1
    printf '%s\n' "$AUDIT_FINDINGS" | sed 's/^/finding: /' | logf
}

# expect_finding CODE INSTANCE [SEVERITY] [NODES]: a finding with that code
# for that instance (exact name), and severity / nodes (csv) when given.
expect_finding() {
    local l
    while IFS='|' read -r c s i n; do
        [ "$c" = "$1" ] && [ "$i" = "$2" ] || continue
        [ -n "${3-}" ] && [ "$s" != "$3" ] && { fail "$1 for $2 is $s, expected $3"; return; }
        [ -n "${4-}" ] && [ "$n" != "$4" ] && { fail "$1 for $2 is about nodes $n, expected $4"; return; }
        return
    done <<< "$AUDIT_FINDINGS"
    fail "no $1 finding for instance $2"
}

# expect_no_finding CODE INSTANCE: the last audit_load ran and found
# INSTANCE (a host finding: INSTANCE ""), and raised no CODE for it. A "not
# raised" never passes because discovery broke.
expect_no_finding() {
    [ "${AUDIT_OK:-0}" = 1 ] || { fail "no $1 for '$2': no audit loaded to say so"; return; }
    local name found=0
    while IFS='|' read -r name _; do [ "$name" = "$2" ] && found=1; done <<< "$AUDIT_INSTANCES"
    if [ -n "$2" ] && [ $found = 0 ]; then
        fail "no $1 for $2: the audit did not find instance $2 (instances: $(cut -d'|' -f1 <<< "$AUDIT_INSTANCES" | tr '\n' ' '))"
        return
    fi
    while IFS='|' read -r c s i n; do
        [ "$c" = "$1" ] && [ "$i" = "$2" ] && { fail "unexpected $1 ($s, nodes $n) for $2"; return; }
    done <<< "$AUDIT_FINDINGS"
    return 0
}

# actions_mark: remember how many entries the action log
# ($NUMAGUARD_ACTION_LOG) holds; expect_no_action WHAT: none was added since
# (a dry run logs nothing).
actions_mark() { ACTIONS_AT=$(cat "${NUMAGUARD_ACTION_LOG:?}" 2>/dev/null | wc -l); }
expect_no_action() {
    local now
    now=$(cat "${NUMAGUARD_ACTION_LOG:?}" 2>/dev/null | wc -l)
    [ "$now" = "${ACTIONS_AT:?actions_mark first}" ] ||
        { fail "$1 logged $((now - ACTIONS_AT)) action entries: $(tail -n +$((ACTIONS_AT + 1)) "$NUMAGUARD_ACTION_LOG")"; }
}

# audit_conf FILE [EXTRA]: a config with a small min_segment_size (guest
# segments are tens of MiB) plus EXTRA lines.
audit_conf() {
    printf '[global]\nmin_segment_size = %s\n%s' "${MIN_SEGMENT:-4M}" "${2-}" > "$1"
}
