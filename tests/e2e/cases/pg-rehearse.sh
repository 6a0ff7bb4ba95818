#!/usr/bin/env bash
# case-limit: 1800 s (24 rows, each two PostgreSQL starts: 19 of them took
# 600 s in a guest beside a CPU-bound job and other builds on a 2-core host)
# numaguardctl rehearse against real starts of PostgreSQL 15: a differential
# matrix. Each row sets the per-node 2 MiB pools, the binding the server
# starts under and its settings; a first start (huge_pages = off, the row's
# shared_buffers) gives numaguard a running instance to rehearse; the row's
# settings are then written to postgresql.auto.conf (as ALTER SYSTEM does:
# not applied until a restart) and anything the row changes after the start
# is done (a cpuset narrowed, a node's pool drained by another process);
# `rehearse --json` predicts; the server is stopped and started again under
# the same binding, pg_prewarm reads a table larger than shared_buffers
# into every buffer, and the outcome is read from the server and the kernel:
#   no-start     pg_ctl fails, the log says "could not map anonymous shared
#                memory" or "huge pages not supported"
#   4k-*         started, no anon_hugepage mapping in the postmaster's maps
#   hugepages    started in hugepages, every buffer read, no signal 7; the
#                nodes whose free pages fell are within the predicted ones
#   sigbus       started in hugepages, then a first touch finds no page: a
#                backend "terminated by signal 7" (the postmaster itself:
#                exit status 135), or, where read(2) is the first to touch
#                a buffer, "could not read block N ... read only M of 8192
#                bytes" (the kernel's copy stops at the page it cannot get)
# The kernel reserves a segment only when the nodes the reserving task may
# use hold its pages (hugetlb_acct_memory: its cpuset and bind policy), so
# a start bound to nodes without them falls back or does not start; SIGBUS
# comes from pages reserved by another process confined to the same nodes
# and touched first (the compete rows: a SHM_HUGETLB workload reserves 16
# pages, touches one before the rehearsal and the rest once the server is
# up, then pg_prewarm runs), and from a hugetlb cgroup limit on faults
# (hugetlb.2MB.max, as a pod's hugepage limit) that does not bound the
# reservation; with hugetlb.2MB.rsvd.max too the reservation fails instead.
# Every disagreement fails its row. The table of prediction and outcome is
# printed for the closing note.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
. "$E2E_DIR/pg.sh"
# id|binding|pools n0/n1/n2/n3|huge_pages|shared_buffers MB|extra
ROWS=(
  "none-fit|none|12/12/12/12|try|32|"
  "none-short-on|none|4/4/4/4|on|32|"
  "none-short-try|none|4/4/4/4|try|32|"
  "none-one-node|none|0/0/0/16|on|16|"
  "none-1g-on|none|8/8/8/8|on|16|1g"
  "none-1g-try|none|8/8/8/8|try|16|1g"
  "none-sysv-on|none|12/12/12/12|on|16|sysv"
  "cg1-fit|cg:1|0/24/0/0|try|32|"
  "cg1-empty-try|cg:1|30/0/0/0|try|32|"
  "cg1-short-on|cg:1|20/10/0/0|on|32|"
  "bind2-fit|membind:2|0/0/24/0|try|32|"
  "bind2-empty-on|membind:2|30/0/0/0|on|32|"
  "bind2-short|membind:2|0/0/8/0|try|32|"
  "il-fit|interleave|6/6/6/6|try|32|"
  "il-one-node|interleave|0/0/30/0|on|32|"
  "pref3-fit|preferred:3|0/0/0/30|try|32|"
  "pref3-elsewhere|preferred:3|30/0/0/0|try|32|"
  "narrowed-empty|narrow:0|0/30/0/0|try|32|"
  "narrowed-fit|narrow:0|25/0/0/0|try|32|"
  "drained-short|drain:1:1:20|10/25/10/10|try|32|"
  "competed-sigbus|compete:1:16|20/25/0/0|try|32|"
  "restart-in-place|none|24/0/0/0|on|32|own"
  "cglimit-sigbus|cglimit:1:20|0/30/0/0|try|32|"
  "cgrsvd-short|cgrsvd:1:20|0/30/0/0|on|32|"
)
# Every row runs on 6.1; on the other kernels the suite boots (6.12 and
# 5.10, run-e2e --core / --core-subset: E2E_CORE set) the 15 rows of
# CORE_ROWS: each binding (none, a cgroup cpuset, membind, interleave,
# preferred, a cpuset narrowed, a node drained, a competitor, the hugetlb
# cgroup's limits) and each outcome (hugepages, 4 KiB by fallback and by
# setting, no start, SIGBUS), and every row that is replayed from a tree.
CORE_ROWS=" none-fit none-short-on none-short-try none-1g-on none-sysv-on cg1-empty-try bind2-fit il-one-node"
CORE_ROWS+=" pref3-elsewhere narrowed-empty drained-short competed-sigbus restart-in-place cglimit-sigbus cgrsvd-short "
if [ "${E2E_CORE:-0}" != 0 ]; then
    core=()
    for row in "${ROWS[@]}"; do [[ $CORE_ROWS == *" ${row%%|*} "* ]] && core+=("$row"); done
    ROWS=("${core[@]}")
fi
# rows whose host is also captured (numaguardctl snapshot) and rehearsed
# again from the tree: --root must give the live answer; with
# NUMAGUARD_E2E_CAPTURE=1 the trees are kept (tests/fixtures/trees/rehearse-*)
REPLAY=" none-fit none-short-on cg1-empty-try competed-sigbus restart-in-place "
plan ${#ROWS[@]}
need_ctl
[ "$CGROUP" = v2 ] || skip_case "the rows' cpusets are cgroup v2's"
pg_prepare
R=/tmp/e2e-pgr D=$R/data
cg=/sys/fs/cgroup/e2e-pgr
echo "+cpuset +hugetlb" > /sys/fs/cgroup/cgroup.subtree_control || abort "cannot enable cpuset and hugetlb"
mkdir -p "$cg" && at_exit "rmdir $cg"
declare -A orig=()
for n in "${NODE_IDS[@]}"; do f=$(hp_file "$n"); read -r orig[$n] < "$f"; at_exit "echo ${orig[$n]} > $f"; done
# one cluster of our own, with a table larger than any row's shared_buffers
if [ ! -f "$D/PG_VERSION" ]; then
    rm -rf "$R"; mkdir -p "$R" && chown postgres: "$R" || abort "mkdir $R"
    cp -a "$PGDATA" "$D" 2>/dev/null && rm -f "$D/postmaster.pid" || abort "copy of the cluster"
fi
free_hp() { local f; read -r f < "/sys/devices/system/node/node$1/hugepages/hugepages-2048kB/free_hugepages"; echo "$f"; }
pools() {
    local IFS=/ i=0 n
    read -ra want <<<"$1"
    for n in "${NODE_IDS[@]}"; do echo "${want[$i]:-0}" > "$(hp_file "$n")"; i=$((i + 1)); done
}
# start BINDING: the postmaster under it, a child of this shell (so that
# its exit status, 135 for SIGBUS, is seen); 0 when it is ready, else 1
# with PGRC its exit status
start() {
    local pre=() b=$1 t=1200
    case $b in
    membind:*) pre=(numactl --membind="${b#*:}") ;;
    interleave) pre=(numactl --interleave=all) ;;
    preferred:*) pre=(numactl --preferred="${b#*:}") ;;
    esac
    local cgp=/sys/fs/cgroup/cgroup.procs
    [[ $b == cg:* || $b == cglimit:* || $b == cgrsvd:* || $b == narrow:* ]] && cgp=$cg/cgroup.procs
    sh -c 'echo $$ > "$0" && exec "$@"' "$cgp" runuser -u postgres -- ${pre[@]+"${pre[@]}"} "$PGBIN/postgres" -D "$D" \
        -c max_connections=20 -c autovacuum=off -c listen_addresses= -c unix_socket_directories="$R" \
        > "$R/pg.log" 2>&1 &
    PGPID=$! PGRC=""
    while ((t-- > 0)); do
        if ! kill -0 "$PGPID" 2>/dev/null; then wait "$PGPID"; PGRC=$?; PGPID=""; return 1; fi
        [ -f "$D/postmaster.pid" ] && [[ $(sed -n 8p "$D/postmaster.pid") == ready* ]] && return 0
        sleep 0.1
    done
    return 1
}
# stop: an immediate shutdown (pg_ctl -m immediate sends the postmaster
# SIGQUIT), waited for as its parent: no pg_ctl to start and poll under TCG
stop() {
    local pm=""
    [ -f "$D/postmaster.pid" ] && read -r pm < "$D/postmaster.pid"
    if [ -n "${PGPID:-}" ] && [ -n "$pm" ] && kill -QUIT "$pm" 2>/dev/null; then
        wait "$PGPID" 2>/dev/null
    elif [ -n "$pm" ]; then
        runuser -u postgres -- "$PGBIN/pg_ctl" -D "$D" -m immediate -w -t 60 stop > /dev/null 2>&1
        [ -n "${PGPID:-}" ] && wait "$PGPID" 2>/dev/null
    fi
    PGPID=""
    return 0
}
# in_list N LIST: node N is in the list "0-2,5"
in_list() {
    local x IFS=,
    for x in $2; do
        case $x in *-*) (($1 >= ${x%-*} && $1 <= ${x#*-})) && return 0 ;; *) [ "$x" = "$1" ] && return 0 ;; esac
    done
    return 1
}
at_exit stop
sql() { "$PGBIN/psql" -X -A -t -q -h "$R" -U postgres "$@"; }
# settings HUGE SB EXTRA: the row's settings, written as ALTER SYSTEM writes them
settings() {
    { echo "# Do not edit this file manually!"
      echo "huge_pages = '$1'"
      echo "shared_buffers = '${2}MB'"
      [ "$3" = sysv ] && echo "shared_memory_type = 'sysv'"
      [ "$3" = 1g ] && echo "huge_page_size = '1GB'"
    } > "$D/postgresql.auto.conf"
    chown postgres: "$D/postgresql.auto.conf"
}

# the table pg_prewarm reads: 18000 rows of 2 KiB, four to a page: 4500 pages, ~37 MB (any
# shared_buffers here is smaller: 32 MB at most, 4096 buffers)
settings off 16 ""
start none || { logf "$R/pg.log"; abort "first start (exit status $PGRC)"; }
sql -c "create extension if not exists pg_prewarm" \
    -c "create table if not exists big as select g, repeat('x', 2000) as pad from generate_series(1, 18000) g" \
    > "$T/init.out" 2>&1 || { logf "$T/init.out"; abort "creating the table"; }
stop

TABLE=()
for row in "${ROWS[@]}"; do
    IFS='|' read -r id binding pl huge sb extra <<<"$row"
    # the binding both starts run under (drain and compete: the node bound)
    case $binding in drain:*|compete:*) bstart=membind:$(cut -d: -f2 <<<"$binding") ;; *) bstart=$binding ;; esac
    log "=== $id: binding $binding, pools $pl, huge_pages $huge, shared_buffers ${sb}MB${extra:+, $extra}"
    pools 0/0/0/0
    echo 0-3 > "$cg/cpuset.mems"; echo 0-3 > "$cg/cpuset.cpus"
    echo max > "$cg/hugetlb.2MB.max"; echo max > "$cg/hugetlb.2MB.rsvd.max"
    case $binding in
    cg:*|cglimit:*|cgrsvd:*)
        cn=$(cut -d: -f2 <<<"$binding")
        echo "$cn" > "$cg/cpuset.mems"; echo "$(node_cpus "$cn")" > "$cg/cpuset.cpus" ;;
    esac
    # a pod's hugepage limit: faults (max) alone, or reservations too (rsvd.max)
    [[ $binding == cglimit:* || $binding == cgrsvd:* ]] && echo "$(( $(cut -d: -f3 <<<"$binding") << 20 ))" > "$cg/hugetlb.2MB.max"
    [[ $binding == cgrsvd:* ]] && echo "$(( $(cut -d: -f3 <<<"$binding") << 20 ))" > "$cg/hugetlb.2MB.rsvd.max"
    # the first start: in 4 KiB pages, or (own) in hugepages with the row's pools
    if [ "$extra" = own ]; then pools "$pl"; settings "$huge" "$sb" ""; else settings off "$sb" ""; fi
    if ! start "$bstart"; then logf "$R/pg.log"; fail "$id: the first start failed ($PGRC)"; result "$id"; continue; fi
    # restart-in-place: its buffers faulted, as a running server's are
    [ "$extra" = own ] && sql -c "select pg_prewarm('big')" > /dev/null 2>&1
    [ "$extra" = own ] || pools "$pl"
    settings "$huge" "$sb" "$extra"
    wl=""
    case $binding in
    narrow:*) echo "${binding#narrow:}" > "$cg/cpuset.mems" ;;
    drain:*) IFS=: read -r _ bnode wnode wpages <<<"$binding"
             wl_start numactl --membind="$wnode" -- sysv --huge -s $((wpages * 2)) -p 0 || fail "$id: the draining workload"
             wl=$WL_PID ;;
    compete:*) IFS=: read -r _ bnode wpages <<<"$binding"
             rm -f "$T/touch" "$T/touch.done"
             wl_start numactl --membind="$bnode" -- sysv --huge -s $((wpages * 2)) --touch 2 -p 0 --touch-rest "$T/touch" ||
                 fail "$id: the competing workload"
             wl=$WL_PID ;;
    esac
    "$CTL" rehearse --json > "$T/r.json" 2> "$T/r.err"; rrc=$?
    # one jq (0.6 s an exec under TCG): the prediction, then the why lines
    jq -r '([.rehearsals[] | select(.instance | startswith("postgresql:"))][0] |
            "\(.outcome)|\(.from_nodes)|\(.cyclops)|\(.pages)"), (.rehearsals[0].why // empty)' \
        "$T/r.json" > "$T/r.txt" 2>/dev/null
    pred="" why=()
    { IFS= read -r pred; mapfile -t why; } < "$T/r.txt"
    IFS='|' read -r p_out p_from p_cyc p_pages <<<"$pred"
    [ -n "$p_out" ] || { logf "$T/r.err"; p_out=none; }
    ((${#why[@]})) && printf '%s\n' "${why[@]}" | logf
    if [[ $REPLAY == *" $id "* ]]; then
        rt=$T/rt-$id; mkdir -p "$rt/tree"
        if "$CTL" snapshot --exact -o "$rt/snap.tar.gz" > "$rt/log" 2>&1 && tar -xzf "$rt/snap.tar.gz" -C "$rt/tree"; then
            "$CTL" rehearse --root "$rt/tree" --json > "$rt/r.json" 2>&1
            replay=$(jq -r '[.rehearsals[] | select(.instance | startswith("postgresql:"))][0] |
                            "\(.outcome)|\(.from_nodes)|\(.cyclops)|\(.pages)"' "$rt/r.json" 2>/dev/null)
            expect "$id: the snapshot replays '$replay', the live host said '$pred'" test "$replay" = "$pred"
            if [ "${NUMAGUARD_E2E_CAPTURE:-0}" = 1 ]; then
                dst=${NUMAGUARD_E2E_CAPTURE_DIR:?run-e2e sets it}; [[ $dst == /* ]] || dst=$ROOT/$dst
                dst=$dst/rehearse-$id; rm -rf "$dst"; mkdir -p "$dst"; tar -xzf "$rt/snap.tar.gz" -C "$dst"
                { echo "scenario: rehearse-$id"; echo "what: $row (id|binding|pools|huge_pages|shared_buffers MB|extra)"
                  echo "kernel: $(uname -r)"; echo "captured-by: tests/e2e/cases/$CASE.sh"
                  echo "live rehearse: $pred"; } > "$dst/E2E-INFO"
                log "captured fixture tree ${dst#"$ROOT"/}"
            fi
        else
            fail "$id: numaguardctl snapshot failed"; logf "$rt/log"
        fi
    fi
    before=() i=0
    for n in "${NODE_IDS[@]}"; do before[$i]=$(free_hp "$n"); i=$((i + 1)); done
    stop
    # the start the rehearsal was about, under the same binding
    if ! start "$bstart"; then
        # the postmaster's own first touch may be the one that dies
        if [ "$PGRC" = 135 ] || grep -q "terminated by signal 7" "$R/pg.log"; then o_out=sigbus
        elif grep -qE "could not map anonymous shared memory|huge pages not supported" "$R/pg.log"; then
            o_out=no-start
        else o_out=start-failed; logf "$R/pg.log"; fi
        o_from=""
    else
        pm=$(head -1 "$D/postmaster.pid")
        if grep -q anon_hugepage "/proc/$pm/maps"; then huge_now=1; else huge_now=0; fi
        # the other process confined to the same nodes touches what it reserved first
        if [[ $binding == compete:* ]]; then
            : > "$T/touch"
            for _ in $(seq 100); do [ -f "$T/touch.done" ] && break; sleep 0.1; done
            [ -f "$T/touch.done" ] || log "$id: the competing workload did not touch its pages"
        fi
        sql -c "select pg_prewarm('big')" > "$T/prewarm.out" 2>&1; prc=$?
        # a backend that died: give the postmaster the moment it takes to log it
        ((prc == 0)) || sleep 0.5
        # a first touch that finds no page: SIGBUS when the process touches
        # it, a short read when read(2) does (pg_prewarm reads blocks into
        # buffers not touched yet)
        if grep -qE "terminated by signal 7|could not read block .* read only [0-9]+ of 8192 bytes" "$R/pg.log"; then
            o_out=sigbus
        elif ((prc != 0)); then o_out=prewarm-failed; logf "$T/prewarm.out" "$R/pg.log"
        elif ((huge_now)); then o_out=hugepages
        elif [ "$huge" = off ] || [ "$extra" = sysv ]; then o_out=4k-by-setting
        else o_out=4k-fallback; fi
        o_from="" i=0
        for n in "${NODE_IDS[@]}"; do
            a=$(free_hp "$n"); ((a < before[i])) && o_from+="${o_from:+,}$n"; i=$((i + 1))
        done
    fi
    stop
    [ -n "$wl" ] && { kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null; }
    TABLE+=("$id|$p_out|$p_from|$p_cyc|$o_out|$o_from")
    log "$id: predicted $p_out (from nodes '$p_from', cyclops $p_cyc, $p_pages pages, exit $rrc); outcome $o_out (pages taken on nodes '$o_from')"
    expect "$id: predicted $p_out, the server shows $o_out" test "$p_out" = "$o_out"
    if [ "$o_out" = hugepages ] && [ "$p_out" = hugepages ]; then
        # every node whose pool fell is one the rehearsal named
        for n in ${o_from//,/ }; do
            expect "$id: pages taken on node $n, predicted from '$p_from'" in_list "$n" "$p_from"
        done
        [[ $p_cyc == true ]] && expect "$id: a cyclops start from one node, but pages were taken on '$o_from'" test "${o_from//[0-9]/}" = ""
    fi
    result "$id"
done
log "matrix (kernel $(uname -r)): id | predicted | from nodes | cyclops | outcome | pages taken on"
for t in "${TABLE[@]}"; do log "  $t"; done
# and in the build directory, for the record of a run that passed
{ echo "# kernel $(uname -r): id|predicted|from nodes|cyclops|outcome|pages taken on"
  printf '%s\n' "${TABLE[@]}"; } > "$REC_DIR/pg-rehearse-matrix-$(uname -r).txt" 2>/dev/null
