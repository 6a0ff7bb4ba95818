#!/usr/bin/env bash
# The next start keeps it (topology `systemd`: systemd as PID 1): real
# PostgreSQL 15 in a service (e2e-pg.service, its CPUs on node 0, 4 KiB
# pages, shared_memory_type=mmap), an instance configured with policy =
# interleave. The kernel's per-node Shmem is the oracle:
#
# - before: a backend prewarms a table and its buffers land on node 0 (first
#   touch, the CPUs' node);
# - numaguardctl rebalance spreads them, installs interleave on the segment
#   and writes numaguard's drop-in (NUMAPolicy=interleave, NUMAMask=0-1),
#   which the manager reports after the reload;
# - without the drop-in the audit raises POLICY_NOT_PERSISTENT naming the
#   unit; the dry run shows the drop-in and writes nothing; with the
#   drop-in back the finding goes;
# - after `systemctl restart`, the new postmaster starts under
#   interleave:0-1 (its numa_maps) and the buffers a backend reads into the
#   new segment are split over both nodes from its first page.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 5
. "$E2E_DIR/pg.sh"
need_ctl
[ "$(cat /proc/1/comm)" = systemd ] || abort "PID 1 is $(cat /proc/1/comm), not systemd (numa-vm --systemd)"
((${#NODE_IDS[@]} == 2)) || abort "two nodes expected, found ${#NODE_IDS[@]}"
pg_prepare
until_ok() { local t=$(($1 * 4)); shift; while ((t-- > 0)); do "$@" && return 0; sleep 0.25; done; return 1; }
unit=e2e-pg.service
dropin=/etc/systemd/system/$unit.d/60-numaguard-numa-policy.conf
node_shmem() { awk '$3 == "Shmem:" { print $4 }' "/sys/devices/system/node/node$1/meminfo"; }
at_exit "systemctl stop $unit; rm -rf /etc/systemd/system/$unit /etc/systemd/system/$unit.d; systemctl daemon-reload"
cat > /etc/systemd/system/$unit <<EOF
[Unit]
Description=numaguard e2e: PostgreSQL 15 in a service
[Service]
User=postgres
CPUAffinity=$(node_cpus 0)
ExecStart=$PGBIN/postgres -D $PGDATA -c shared_buffers=48MB -c huge_pages=off -c shared_memory_type=mmap -c max_connections=20 -c autovacuum=off -c listen_addresses= -c unix_socket_directories=$PGROOT
KillSignal=SIGINT
EOF
systemctl daemon-reload
audit_conf "$T/ng.conf" "$(printf '[instance pg]\ncgroup = /system.slice/%s\npolicy = interleave\n' "$unit")"
start_pg() {
    systemctl start $unit || { journalctl -u $unit -n 30 | logf; abort "systemctl start $unit failed"; }
    until_ok 90 runuser -u postgres -- "$PGBIN/pg_isready" -q -h "$PGROOT" || abort "$unit not ready"
    PG_PID=$(systemctl show -p MainPID --value $unit)
}
# prewarm: read the table into the buffers; echoes each node's Shmem growth (kB)
prewarm() {
    local -A s0; local nd out
    for nd in "${NODE_IDS[@]}"; do s0[$nd]=$(node_shmem "$nd"); done
    out=$(pg_sql -c "create extension if not exists pg_prewarm" -c "select pg_prewarm('e2e_unit')" 2>&1) ||
        { logf <<<"$out"; abort "pg_prewarm failed"; }
    for nd in "${NODE_IDS[@]}"; do printf '%s ' $(( $(node_shmem "$nd") - s0[$nd] )); done
}
# split A B: node 0's share (percent) of what both nodes gained
split() { echo $(( $1 * 100 / ($1 + $2 > 0 ? $1 + $2 : 1) )); }

start_pg
# the table, written by a backend: its buffers and its files (PGDATA on tmpfs)
declare -A s0
for nd in "${NODE_IDS[@]}"; do s0[$nd]=$(node_shmem "$nd"); done
pg_sql -c "drop table if exists e2e_unit" \
       -c "create table e2e_unit as select g, repeat('x', 480) as pad from generate_series(1, 40000) g" > /dev/null ||
    abort "create table failed"
a=$(( $(node_shmem 0) - s0[0] )) b=$(( $(node_shmem 1) - s0[1] ))
log "kernel: first touch under CPUs of node 0: Shmem +$a kB on node 0, +$b kB on node 1"
expect "first touch put $(split "$a" "$b")% on node 0, expected 90% or more" test "$(split "$a" "$b")" -ge 90
result first-touch

"$CTL" -c "$T/ng.conf" rebalance pg > "$T/rb.out" 2>&1; rc=$?
logf "$T/rb.out"
expect "rebalance exited $rc" test "$rc" = 0
expect "no drop-in in the output" grep -q "its next start keeps it: wrote $dropin (NUMAPolicy=interleave NUMAMask=0-1)" "$T/rb.out"
expect "the drop-in: $(cat "$dropin" 2>&1 | tr '\n' ' ')" grep -qx "NUMAPolicy=interleave" "$dropin"
got=$(systemctl show -p NUMAPolicy -p NUMAMask --value $unit | tr '\n' ' ')
expect "the manager has '$got'" test "$got" = "interleave 0-1 "
result dropin

cp "$dropin" "$T/dropin" && rm -f "$dropin" && systemctl daemon-reload
audit_load -c "$T/ng.conf"
expect_finding POLICY_NOT_PERSISTENT pg warning
expect "the advice names the unit: $(jq -r '.findings[] | select(.code == "POLICY_NOT_PERSISTENT") | .advice' "$T/audit.json")" \
    jq -e '.findings[] | select(.code == "POLICY_NOT_PERSISTENT") | .advice | contains("e2e-pg.service")' "$T/audit.json"
"$CTL" -c "$T/ng.conf" rebalance pg --dry-run --json > "$T/dry.json" 2> "$T/dry.err"
expect "the dry run's next_start: $(jq -c '.next_start' "$T/dry.json" 2>&1 | head -c 300)" \
    jq -e '.next_start[0].plan.value == "NUMAPolicy=interleave NUMAMask=0-1" and .next_start[0].outcome == "dry-run"' "$T/dry.json"
expect "the dry run wrote $dropin" test ! -e "$dropin"
result finding

# the drop-in back (what the rebalance above wrote), as the manager loads it
cp "$T/dropin" "$dropin" && systemctl daemon-reload
audit_load -c "$T/ng.conf"
expect_no_finding POLICY_NOT_PERSISTENT pg
result finding-gone

systemctl restart $unit && start_pg
first=$(head -1 "/proc/$PG_PID/numa_maps" | cut -d' ' -f2)
expect "the new postmaster $PG_PID started under '$first'" test "$first" = "interleave:0-1"
read -r a b <<<"$(prewarm)"
log "kernel: after the restart: Shmem +$a kB on node 0, +$b kB on node 1"
s=$(split "$a" "$b")
expect "after the restart $s% landed on node 0, expected 40-60%" test "$s" -ge 40 -a "$s" -le 60
result next-start
