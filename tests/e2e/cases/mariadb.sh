#!/usr/bin/env bash
# A real MariaDB (Debian 12's mariadb-server, run as mysql on a throw-away
# datadir in the guest's /tmp): InnoDB's buffer pool is private anonymous
# memory of mariadbd, audited as the instance's segment. 128 MiB pool,
# filled by a 200000-row table (~50 MB of rows). Run twice:
#   bound:      under numactl --membind=N, its CPUs free on every node:
#               the pool all on N, CYCLOPS about N;
#   interleave: innodb_numa_interleave=1 (MariaDB's own NUMA support, an
#               mbind(MPOL_INTERLEAVE) over the pool): the pool on every
#               node, no CYCLOPS.
# Each asserts the instance's name (mysql:DATADIR), the pool (size,
# resident, per node) and the findings in JSON and in the text.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 3
need_ctl
MY=/tmp/e2e-my
DATA=$MY/data
# the node with the most free memory (MARIADB_NODE: a given one): what
# earlier cases wrote to the guest's tmpfs root stays on the nodes it was
# written on, and a bound server that fills its pool on a node left with
# less than the pool's size is killed by the OOM killer, not by numaguard
n=${MARIADB_NODE:-}
if [ -z "$n" ]; then
    sync; echo 3 > /proc/sys/vm/drop_caches
    most=-1
    for id in "${NODE_IDS[@]}"; do
        free=$(node_free_kib "$id")
        ((free > most)) && { most=$free; n=$id; }
    done
    log "bound to node $n: $most kB free, the most of any node"
fi
inst="mysql:$DATA"
for b in /usr/sbin/mariadbd /usr/bin/mariadb-install-db /usr/bin/mariadb; do
    [ -x "$b" ] || skip_case "$b not installed on the host (apt-get install mariadb-server)"
done
id mysql >/dev/null 2>&1 || skip_case "no mysql user on the host"
jqe() { jq -e "$@" > /dev/null; }
mysql_sql() { mariadb --socket="$MY/sock" -u root -N -B "$@"; }

my_prepare() {
    # the datadir is tmpfs: the guest's memory, given back for the next cases
    at_exit "rm -rf '$MY'"
    mkdir -p "$MY" && chown mysql: "$MY" || abort "cannot create $MY"
    # Small redo log, no doublewrite, no flush per commit: the datadir is
    # tmpfs in the guest's RAM, and TCG makes every page fault slow.
    cat > "$MY/my.cnf" <<EOF
[mariadbd]
socket=$MY/sock
pid-file=$MY/pid
skip-networking
innodb_buffer_pool_size=128M
innodb_log_file_size=4M
innodb_flush_log_at_trx_commit=0
innodb_doublewrite=0
performance_schema=OFF
EOF
    runuser -u mysql -- mariadb-install-db --defaults-file="$MY/my.cnf" --datadir="$DATA" \
        --auth-root-authentication-method=socket --skip-test-db > "$MY/install.log" 2>&1 ||
        { logf "$MY/install.log"; abort "mariadb-install-db failed"; }
}

# my_start [PREFIX...] -- [MARIADBD ARGS...]: mariadbd as mysql, --datadir on
# its command line (the instance is named after it); sets MY_PID.
my_start() {
    local pre=() i
    while [ "$1" != -- ]; do pre+=("$1"); shift; done; shift
    rm -f "$MY/sock" "$MY/pid"
    runuser -u mysql -- "${pre[@]}" /usr/sbin/mariadbd --defaults-file="$MY/my.cnf" --datadir="$DATA" "$@" \
        > "$MY/mariadbd.log" 2>&1 &
    at_exit my_stop
    for ((i = 0; i < 600; i++)); do [ -S "$MY/sock" ] && [ -s "$MY/pid" ] && break; sleep 0.2; done
    [ -S "$MY/sock" ] || { logf "$MY/mariadbd.log"; abort "mariadbd did not start"; }
    read -r MY_PID < "$MY/pid"
    log "mariadbd pid $MY_PID: ${pre[*]} $*"
}

my_stop() {
    local p
    [ -s "$MY/pid" ] || return 0
    read -r p < "$MY/pid"
    kill "$p" 2>/dev/null
    while kill -0 "$p" 2>/dev/null; do sleep 0.2; done
    rm -f "$MY/pid"
}

# my_check RUN: the audit's view of the instance and its buffer pool, the
# private segment of mariadbd with the most resident bytes; sets POOL_*.
my_check() {
    local sh
    audit_load --config "$T/ng.conf" || abort "audit"
    "$CTL" audit --config "$T/ng.conf" > "$T/$1.txt" 2>&1
    sed -n "\\|^instance $inst |,/^\$/p" "$T/$1.txt" > "$T/$1-inst.txt"
    logf "$T/$1-inst.txt"
    sh=$(jq -r --arg n "$inst" --argjson p "$MY_PID" '[.instances[] | select(.name == $n)] as $i
        | ($i[0].segments // [] | map(select(.kind == "private" and .representative_pid == $p))
           | max_by(.resident_bytes)) as $s
        | "MY_INSTANCES=\($i | length) MY_TYPE=\($i[0].type // "" | @sh) MY_MAIN=\($i[0].main_pid // 0)",
          "POOL_BYTES=\($s.bytes // 0) POOL_RES=\($s.resident_bytes // 0) POOL_METHOD=\($s.method // "" | @sh)",
          "POOL_NODES=\([$s.nodes[]? | "\(.id):\(.bytes)"] | join(" ") | @sh)"' "$T/audit.json") ||
        abort "audit JSON unreadable"
    eval "$sh"
    log "$1: pool $POOL_BYTES bytes, $POOL_RES resident ($POOL_METHOD): $POOL_NODES"
    # the findings as the text gives them, and the instance's JSON without
    # its segments but the pool's
    sed -n '/^findings:/,$p; /^no findings/p' "$T/$1.txt" | logf
    jq -c --arg n "$inst" '.instances[] | select(.name == $n)
        | .segments |= (map(select(.kind == "private")) | max_by(.resident_bytes) | [.])' "$T/audit.json" | logf
    expect "one instance $inst (got $MY_INSTANCES)" test "$MY_INSTANCES" = 1
    expect "type mysql (got $MY_TYPE)" test "$MY_TYPE" = mysql
    expect "main pid $MY_PID (got $MY_MAIN)" test "$MY_MAIN" = "$MY_PID"
    # the pages of innodb_buffer_pool_size, one mapping with the block
    # descriptors before them (32 MiB more) unless the kernel keeps those
    # apart; the rows read or written are resident
    expect "pool of $POOL_BYTES bytes: the $POOL_SIZE configured, at most 64 MiB more" \
        test "$POOL_BYTES" -ge "$POOL_SIZE" -a "$POOL_BYTES" -le $((POOL_SIZE + (64 << 20)))
    expect "at least 48 MiB of the pool resident ($POOL_RES)" test "$POOL_RES" -ge $((48 << 20))
    expect "text: instance line" grep -q "^instance $inst (mysql, discovered, 1 process, main pid $MY_PID)" "$T/$1-inst.txt"
    expect "text: the pool as a private mapping of $((POOL_BYTES >> 20)) MiB, named by address and pid" \
        grep -q "^  private mapping \[anon\] at 0x[0-9a-f]* of pid $MY_PID: $((POOL_BYTES >> 20)) MiB, placement sampled from pid $MY_PID's page tables" "$T/$1-inst.txt"
    expect "text: the instance's private memory, the InnoDB buffer pool" \
        grep -q "^  private memory .* (the InnoDB buffer pool and the server.s other large private mappings), " "$T/$1-inst.txt"
    expect "text: no shared memory line (mariadbd maps none)" eval "! grep -q '^  shared memory' '$T/$1-inst.txt'"
}

# every key at its default (min_segment_size 64M): what a user gets
printf '[global]\n' > "$T/ng.conf"
my_prepare

# ---- bound to node n: the pool filled by the load, all on node n
my_start numactl --membind="$n" -- || abort "start"
out=$(mysql_sql -e "create database e2e; use e2e;
    create table t (id int primary key, pad char(255) not null) engine=innodb;
    insert into t select seq, repeat('x', 255) from seq_1_to_200000;
    select count(*) from t; select @@innodb_buffer_pool_size" 2>&1) || { logf <<<"$out"; abort "load failed"; }
read -r rows POOL_SIZE <<<"$(echo $out)"
log "rows $rows, innodb_buffer_pool_size $POOL_SIZE"
expect "200000 rows loaded" test "$rows" = 200000
numa_maps_diag "$MY_PID" "anon=[0-9]{4,}"
my_check bound
expect "pool all on node $n ($POOL_NODES)" test "$POOL_NODES" = "$n:$POOL_RES"
expect_finding CYCLOPS "$inst" warning "$n"
expect "text: CYCLOPS [$inst]" grep -q "^warning  CYCLOPS \[$inst\]" "$T/bound.txt"
result bound

# ---- its price's CPU share per node comes from its threads: the kernel's
# task/TID/stat of each (last CPU, utime + stime), read around the audit
declare -A CPU_NODE=()
for id in "${NODE_IDS[@]}"; do for c in $(expand_cpulist "$(node_cpus "$id")"); do CPU_NODE[$c]=$id; done; done
# thread_shares PID -> "node:share ..." by the threads' CPU time
thread_shares() {
    local st line f node total=0 out="" n
    local -A ticks=()
    for st in /proc/"$1"/task/*/stat; do
        read -r line < "$st" 2>/dev/null || continue
        read -ra f <<<"${line##*) }"
        node=${CPU_NODE[${f[36]}]:-}
        [ -n "$node" ] || continue
        ticks[$node]=$(( ${ticks[$node]:-0} + f[11] + f[12] ))
        total=$((total + f[11] + f[12]))
    done
    for n in "${NODE_IDS[@]}"; do
        ((${ticks[$n]:-0} > 0)) && out+="$n:$(awk -v a="${ticks[$n]}" -v b="$total" 'BEGIN { printf "%.4f", a / b }') "
    done
    echo "${out% }"
}
threads=(/proc/"$MY_PID"/task/*)
THREADS=${#threads[@]}
before=$(thread_shares "$MY_PID")
audit_load --config "$T/ng.conf" || abort "audit"
after=$(thread_shares "$MY_PID")
got=$(jq -r --arg n "$inst" '.instances[] | select(.name == $n)
    | [.cpu_share_by_node[] | "\(.node):\(.share * 10000 | round / 10000)"] | join(" ")' "$T/audit.json")
log "cpu_share_by_node $got; $THREADS threads by their CPU time: $before (before), $after (after)"
# within 5 points of what the threads' own stat said before or after
near() {
    awk -v g="$1" -v w="$2" 'BEGIN { n = split(g, a, " "); m = split(w, b, " "); if (n != m) exit 1
        for (i = 1; i <= n; i++) { split(a[i], x, ":"); split(b[i], y, ":")
            if (x[1] != y[1] || x[2] - y[2] > 0.05 || y[2] - x[2] > 0.05) exit 1 } }'
}
expect "mariadbd runs $THREADS threads" test "$THREADS" -gt 10
expect "cpu_share_by_node ($got) is its threads' ($before / $after)" eval 'near "$got" "$before" || near "$got" "$after"'
expect "its threads ran on more than one node ($got)" test "$(wc -w <<<"$got")" -gt 1
result threads
my_stop

# ---- innodb_numa_interleave=1: a scan brings the table back into the pool
my_start -- --innodb-numa-interleave=1 || abort "start"
out=$(mysql_sql -e "select count(*), sum(length(pad)) from e2e.t; select @@innodb_numa_interleave" 2>&1) ||
    { logf <<<"$out"; abort "scan failed"; }
log "scan: $(echo $out)"
numa_maps_diag "$MY_PID" "anon=[0-9]{4,}"
my_check interleave
ok_nodes=0
for e in $POOL_NODES; do (( ${e#*:} * 10 >= POOL_RES )) && ok_nodes=$((ok_nodes + 1)); done
expect "pool spread: each of the ${#NODE_IDS[@]} nodes holds 10 % or more ($POOL_NODES)" test "$ok_nodes" = "${#NODE_IDS[@]}"
expect_no_finding CYCLOPS "$inst"
expect "text: no CYCLOPS" eval '! grep -q "CYCLOPS \[$inst\]" "$T/interleave.txt"'
result interleave
