#!/usr/bin/env bash
# PostgreSQL's buffers outlive the backend that read them. Real PostgreSQL
# 15, shared_memory_type=mmap on 4 KiB pages (no hugepage pool), postmaster
# under --membind=N: a backend prewarms a 30 MB table into shared_buffers
# with pg_prewarm and exits. The postmaster maps a few MiB of what the
# backend filled; numaguard must count every resident page of the segment:
# within 2 % of the kernel's own count (the allocated blocks of the shared
# mapping, stat(2) of the postmaster's map_files link), all on node N, and
# the instance's resident bytes too, and numaguardd's
# numaguard_instance_resident_bytes, which no longer follows the sessions.
# Then numaguardctl rebalance spreads every resident page of the buffers
# over the four nodes, though the backend that read them is gone, while
# pgbench reads through them: the kernel's per-node Shmem is the oracle
# (node N gives up three quarters of what the segment holds, each other
# node gains a quarter, within 5 points of the segment), pgbench ends with
# no failed transaction and the table reads the same. The segment then
# has the instance's policy (interleave over the four nodes: its CPUs span
# them) as its own, which the kernel's numa_maps shows, and the buffers a
# new backend of the postmaster (bound to node N like every process of it)
# fills afterwards are spread too: each other node's Shmem grows by a
# quarter of what the segment grew by (the kernel's count of its blocks).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 5
. "$E2E_DIR/pg.sh"
need_ctl
pg_prepare
n=$PG_MMAP_NODE
# node_shmem NODE: the node's Shmem (kB), before the postmaster and after
node_shmem() { awk '$3 == "Shmem:" { print $4 }' "/sys/devices/system/node/node$1/meminfo"; }
declare -A shmem0
for nd in "${NODE_IDS[@]}"; do shmem0[$nd]=$(node_shmem "$nd"); done
pgdata0=$(du -sk "$PGDATA" | cut -f1)
pg_start "$n" mmap
out=$(pg_sql -c "drop table if exists e2e_left" \
        -c "create table e2e_left as select g, repeat('x', 480) as pad from generate_series(1, 60000) g" \
        -c "create extension if not exists pg_prewarm" \
        -c "select 'prewarmed=' || pg_prewarm('e2e_left')" \
        -c "select 'table=' || pg_relation_size('e2e_left')" 2>&1) || { logf <<<"$out"; abort "SQL failed"; }
log "postgres: $(echo $out)"
[[ $out =~ table=([0-9]+) ]] && table=${BASH_REMATCH[1]} || abort "no table size"
# the backend has exited: only the postmaster and its background processes remain
for _ in $(seq 50); do
    [ -z "$(pgrep -f 'postgres: postgres postgres' || true)" ] && break
    sleep 0.2
done
range=$(awk '/dev\/zero/ { print $1; exit }' "/proc/$PG_PID/maps")
[ -n "$range" ] || abort "the postmaster maps no /dev/zero (shared_memory_type=mmap on 4 KiB pages expected)"
kernel=$(( $(stat -L -c %b "/proc/$PG_PID/map_files/$range") * 512 ))
log "kernel: the shared mapping $range holds $kernel bytes; the postmaster maps RssShmem $(awk '/RssShmem/ { print $2, $3 }' "/proc/$PG_PID/status")"
for nd in "${NODE_IDS[@]}"; do log "kernel: node $nd $(grep -h 'Shmem:' "/sys/devices/system/node/node$nd/meminfo" | awk '{ print $3, $4, $5 }')"; done
((kernel >= table)) || fail "the kernel counts $kernel bytes in the segment, less than the $table-byte table"

seg_select "(.kind == \"anon_shared\" and (.pids | any(. == $PG_PID)))" || abort "no anon_shared segment of the postmaster"
expect_field placement_source segment
within2 "$SEG_resident_bytes" "$kernel" || fail "numaguard: $SEG_resident_bytes resident, the kernel $kernel"
expect_on_node "$n"
# The kernel's per-node figures beside numaguard's: each node's Shmem
# grew by the segment's pages there plus what the data directory's files
# grew by (PGDATA on tmpfs, written under the same binding).
pgdata_kib=$(( $(du -sk "$PGDATA" | cut -f1) - pgdata0 ))
for nd in "${NODE_IDS[@]}"; do
    d=$(( $(node_shmem "$nd") - ${shmem0[$nd]} ))
    log "node $nd: kernel Shmem +$d kB since before the postmaster$( ((nd == n)) && echo ", $pgdata_kib kB of it the data directory's growth: $((d - pgdata_kib)) kB"); numaguard $(( $(seg_node_bytes "$nd") / 1024 )) kB of the segment"
done
result segment

audit_conf "$T/ng.conf"
audit_load --config "$T/ng.conf" || abort "audit"
"$CTL" audit --config "$T/ng.conf" > "$T/audit.txt" 2>&1
sed -n '/^instance postgresql/,/^$/p' "$T/audit.txt" | logf
res=$(jq -r --argjson pid "$PG_PID" '.instances[] | select(.main_pid == $pid) | .resident_bytes' "$T/audit.json")
[ -n "$res" ] || abort "postmaster $PG_PID not an instance"
log "instance resident $res bytes, segment per the kernel $kernel"
(( res * 100 >= kernel * 98 )) || fail "the instance's resident $res bytes fall short of the kernel's $kernel"
inst=$(grep "^postgresql:[^|]*|postgresql|$PG_PID|" <<< "$AUDIT_INSTANCES")
[[ ${inst##*|} =~ ^$n:[0-9]+$ ]] || fail "instance placement is '${inst##*|}', expected all on node $n"
result instance

# numaguardd's metric sums the same pages: not what the sessions map
audit_conf "$T/ngd.conf" "metrics_file = $T/ng.prom
"
"$B/numaguardd" --once --config "$T/ngd.conf" --alert-log "$T/alerts.log" > "$T/d.out" 2>&1 ||
    { logf "$T/d.out"; abort "numaguardd --once failed"; }
m=$(awk -v i="postgresql:$PGDATA" '$1 ~ /^numaguard_instance_resident_bytes\{/ && index($1, "db_instance=\"" i "\"") { s += $2 } END { print s + 0 }' "$T/ng.prom")
log "numaguard_instance_resident_bytes summed over nodes: $m"
(( m * 100 >= kernel * 98 )) || fail "numaguard_instance_resident_bytes sums to $m, the kernel counts $kernel"
result metric

# ---- rebalance every resident page, with pgbench reading through it
pgb() { runuser -u postgres -- "$PGBIN/pgbench" -h "$PGROOT" -U postgres "$@"; }
pgb -i -s 1 -q postgres > "$T/pgb-init.log" 2>&1 || { logf "$T/pgb-init.log"; abort "pgbench -i"; }
pg_sql -c "select pg_prewarm('pgbench_accounts')" > /dev/null 2>&1 || abort "prewarm pgbench_accounts"
sum0=$(pg_sql -c "select sum(g) || ':' || md5(string_agg(pad, '' order by g)) from e2e_left" 2>&1)
seg_bytes() { echo $(( $(stat -L -c %b "/proc/$PG_PID/map_files/$range") * 512 )); }
r0=$(seg_bytes)
for nd in "${NODE_IDS[@]}"; do shmem0[$nd]=$(node_shmem "$nd"); done
inst=$(jq -r --argjson pid "$PG_PID" '.instances[] | select(.main_pid == $pid) | .name' "$T/audit.json")
audit_conf "$T/rb.conf" "node_free_floor = 16M"$'\n'
pgb -n -S -c 2 -T 20 postgres > "$T/pgb.log" 2>&1 &
pgb_pid=$!
sleep 3
"$CTL" rebalance --config "$T/rb.conf" "$inst" > "$T/rb.out" 2>&1; rc=$?
logf "$T/rb.out"
wait "$pgb_pid"; pgb_rc=$?
grep -E "number of (transactions actually processed|failed transactions)|tps" "$T/pgb.log" | logf
# A page a backend holds at that instant is busy (EBUSY) even after the
# retry; the rebalance says so, exits 1 (partial) and leaves it "for a later
# run". That later run, once pgbench is done, must finish the move.
if [ "$rc" = 1 ] && grep -q "pages busy (EBUSY), left for a later run" "$T/rb.out"; then
    log "rebalance: partial, pages busy under pgbench; the later run it names:"
    "$CTL" rebalance --config "$T/rb.conf" "$inst" > "$T/rb2.out" 2>&1; rc=$?
    logf "$T/rb2.out"
fi
expect "rebalance: exit $rc, expected 0" test "$rc" = 0
expect "rebalance: through the segment's own file" grep -q "through the segment's own file" "$T/rb.out"
expect "pgbench exited $pgb_rc" test "$pgb_rc" = 0
failed=$(awk -F': ' '/number of failed transactions/ { print $2 + 0 }' "$T/pgb.log")
expect "pgbench: '${failed:-no}' failed transactions" test "${failed:-x}" = 0
expect "the table reads differently after the rebalance" test "$(pg_sql -c "select sum(g) || ':' || md5(string_agg(pad, '' order by g)) from e2e_left" 2>&1)" = "$sum0"
r1=$(seg_bytes)
log "the segment holds $r0 bytes before, $r1 after (the kernel's count)"
k=${#NODE_IDS[@]}
for nd in "${NODE_IDS[@]}"; do
    d=$(( ($(node_shmem "$nd") - ${shmem0[$nd]}) * 1024 ))
    if ((nd == n)); then want=$(( -r0 * (k - 1) / k )); else want=$(( r0 / k )); fi
    log "node $nd: kernel Shmem moved by $((d / 1024)) kB, a spread moves $((want / 1024)) kB"
    (( (d - want) * 100 <= r0 * 5 && (want - d) * 100 <= r0 * 5 )) ||
        fail "node $nd's Shmem moved by $((d / 1024)) kB, not within 5 points of the segment of $((want / 1024)) kB"
done
result rebalance
expect "the rebalance installed the policy" grep -q "installed policy interleave:0-3 on it" "$T/rb.out"

# ---- the policy holds: new buffers, filled by a backend bound to node N
pol=$(awk -v r="${range%%-*}" '$1 == r { print $2 }' "/proc/$PG_PID/numa_maps")
log "the kernel's numa_maps of the postmaster's segment: policy $pol"
expect "numa_maps shows the segment's policy '$pol', expected interleave:0-3" test "$pol" = "interleave:0-3"
seg_select "(.kind == \"anon_shared\" and (.pids | any(. == $PG_PID)))" && expect_field policy "interleave:0-3"
b0=$(seg_bytes)
for nd in "${NODE_IDS[@]}"; do shmem0[$nd]=$(node_shmem "$nd"); done
pg_sql -c "create table e2e_new as select g, repeat('y', 480) as pad from generate_series(1, 20000) g" \
    > "$T/new.out" 2>&1 || { logf "$T/new.out"; fail "creating e2e_new"; }
grown=$(( $(seg_bytes) - b0 ))
log "the segment grew by $grown bytes (new buffers)"
((grown >= 4 << 20)) || fail "the segment grew by $grown bytes only: no new buffers to place"
for nd in "${NODE_IDS[@]}"; do
    d=$(( ($(node_shmem "$nd") - ${shmem0[$nd]}) * 1024 ))
    log "node $nd: kernel Shmem +$((d / 1024)) kB (a quarter of the new buffers: $((grown / k / 1024)) kB)"
    ((nd == n)) && continue     # and the table's file and WAL, written on node N
    (( (d - grown / k) * 100 <= grown * 5 && (grown / k - d) * 100 <= grown * 5 )) ||
        fail "node $nd gained $((d / 1024)) kB of the $((grown / 1024)) kB of new buffers, not a quarter"
done
result policy-holds

