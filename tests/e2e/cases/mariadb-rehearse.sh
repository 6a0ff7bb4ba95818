#!/usr/bin/env bash
# numaguardctl rehearse against real starts of MariaDB under large_pages
# (Debian 12's mariadb-server, as mysql on a throw-away datadir in the
# guest's /tmp, as the mariadb case runs it). Two rows:
#   fit:   the node with the most free memory holds 40 pages of 2 MiB
#   short: it holds 16
# and large_pages = ON with a 64 MiB buffer pool (innodb_buffer_pool_size
# and innodb_buffer_pool_size_max: newer servers map the latter, 8 TiB
# unless set, whole), 32 pages. A first start with large_pages = OFF gives
# numaguard a running server to rehearse; the option file then says ON (as
# a DBA edits it: not applied until a restart); `rehearse --json` predicts;
# the server is stopped and started again, and the outcome is read from the
# kernel: HugetlbPages in its /proc/PID/status (more than 0: hugepages; 0:
# 4 KiB pages) and its maps (a private "/anon_hugepage (deleted)"); the
# error log's lines on large pages are printed (older servers warn "Couldn't
# allocate ... Large/HugeTLB memory", newer ones fall back silently).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 2
need_ctl
MY=/tmp/e2e-myr
DATA=$MY/data
for b in /usr/sbin/mariadbd /usr/bin/mariadb-install-db; do
    [ -x "$b" ] || skip_case "$b not installed on the host (apt-get install mariadb-server)"
done
id mysql >/dev/null 2>&1 || skip_case "no mysql user on the host"
sync; echo 3 > /proc/sys/vm/drop_caches
n=${NODE_IDS[0]} most=-1
for id in "${NODE_IDS[@]}"; do
    free=$(node_free_kib "$id")
    ((free > most)) && { most=$free; n=$id; }
done
log "pools on node $n: $most kB free, the most of any node"
for id in "${NODE_IDS[@]}"; do f=$(hp_file "$id"); read -r o < "$f"; at_exit "echo $o > $f"; echo 0 > "$f"; done

printf '[global]\n' > "$T/ng.conf"
at_exit "rm -rf '$MY'"
mkdir -p "$MY" && chown mysql: "$MY" || abort "cannot create $MY"
# my_cnf ON|OFF: the option file the next start reads
my_cnf() {
    cat > "$MY/my.cnf" <<EOF
[mariadbd]
socket=$MY/sock
pid-file=$MY/pid
skip-networking
innodb_log_file_size=4M
innodb_flush_log_at_trx_commit=0
innodb_doublewrite=0
performance_schema=OFF
large_pages=$1
innodb_buffer_pool_size=64M
innodb_buffer_pool_size_max=64M
EOF
}
my_cnf OFF
runuser -u mysql -- mariadb-install-db --defaults-file="$MY/my.cnf" --datadir="$DATA" \
    --auth-root-authentication-method=socket --skip-test-db > "$MY/install.log" 2>&1 ||
    { logf "$MY/install.log"; abort "mariadb-install-db failed"; }

my_start() {
    local i
    rm -f "$MY/sock" "$MY/pid"
    runuser -u mysql -- /usr/sbin/mariadbd --defaults-file="$MY/my.cnf" --datadir="$DATA" > "$MY/err.log" 2>&1 &
    for ((i = 0; i < 600; i++)); do [ -S "$MY/sock" ] && [ -s "$MY/pid" ] && break; sleep 0.2; done
    [ -s "$MY/pid" ] || { logf "$MY/err.log"; return 1; }
    read -r MY_PID < "$MY/pid"
}
my_stop() {
    local p
    [ -s "$MY/pid" ] || return 0
    read -r p < "$MY/pid"
    kill "$p" 2>/dev/null
    while kill -0 "$p" 2>/dev/null; do sleep 0.2; done
    rm -f "$MY/pid"
}
at_exit my_stop

row() {         # row NAME PAGES WANT
    local name=$1 pages=$2 want=$3 got hp outcome
    set_hugepages "$n" "$pages" || abort "a pool of $pages pages on node $n"
    my_cnf OFF
    my_start || abort "$name: mariadbd did not start"
    my_cnf ON
    # exit 1 for a fallback or a start from one node (cyclops): not a failure here
    "$CTL" rehearse --config "$T/ng.conf" "mysql:$DATA" --json > "$T/$name.json" 2> "$T/$name.err"
    (($? <= 2)) || { logf "$T/$name.err"; abort "$name: rehearse could not tell"; }
    got=$(jq -r '.rehearsals[0] | "\(.outcome) \(.pages) \(.setting_value)"' "$T/$name.json")
    jq -c '.rehearsals[0] | {outcome, pages, page_kib, size_from, available_pages, free_on_nodes_pages, why}' \
        "$T/$name.json" | logf
    my_stop
    my_start || abort "$name: mariadbd did not start again"
    hp=$(awk '$1 == "HugetlbPages:" { print $2 }' "/proc/$MY_PID/status")
    grep -i -E 'large|hugetlb' "$MY/err.log" | logf
    grep ' /anon_hugepage' "/proc/$MY_PID/maps" | logf
    if ((${hp:-0} > 0)); then outcome=hugepages; else outcome=4k-fallback; fi
    log "$name: predicted $got, started with HugetlbPages ${hp:-?} kB: $outcome"
    expect "$name: predicted ${got%% *}, the kernel shows $outcome" test "${got%% *}" = "$outcome"
    expect "$name: predicted $want" test "${got%% *}" = "$want"
    expect "$name: 32 pages of 2 MiB, large_pages ON" test "${got#* }" = "32 ON"
    my_stop
    echo 0 > "$(hp_file "$n")"
    result "$name"
}
row fit 40 hugepages
row short 16 4k-fallback
