# tests/e2e/pg.sh -- PostgreSQL 15 helpers for the pg-* cases (sourced after
# lib.sh). The cluster lives in the guest's /tmp (tmpfs): initdb runs once
# per boot and is shared by the pg-* cases of that boot.
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PGROOT=/tmp/e2e-pg
PGDATA=$PGROOT/data

pg_prepare() {
    [ -x "$PGBIN/postgres" ] && [ -x "$PGBIN/initdb" ] ||
        skip_case "PostgreSQL 15 not installed on the host ($PGBIN; apt-get install postgresql-15)"
    id postgres >/dev/null 2>&1 || skip_case "no postgres user on the host"
    command -v runuser >/dev/null || skip_case "runuser not found"
    [ -f "$PGDATA/PG_VERSION" ] && return 0
    mkdir -p "$PGROOT" && chown postgres: "$PGROOT" || abort "cannot create $PGROOT"
    log "initdb --no-sync into $PGDATA (tmpfs)"
    if ! runuser -u postgres -- "$PGBIN/initdb" -D "$PGDATA" -A trust -U postgres --no-sync \
            > "$PGROOT/initdb.log" 2>&1; then
        logf "$PGROOT/initdb.log"; rm -rf "$PGDATA"; abort "initdb failed"
    fi
}

# pg_start NODE SHARED_MEMORY_TYPE: postmaster under numactl --membind=NODE
pg_start() {
    : > "$PGROOT/pg.log"; chown postgres: "$PGROOT/pg.log"
    at_exit pg_stop
    if ! runuser -u postgres -- numactl --membind="$1" "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGROOT/pg.log" -w -t 180 \
            -o "-c huge_pages=try -c shared_buffers=64MB -c shared_memory_type=$2 -c max_connections=20 \
                -c autovacuum=off -c listen_addresses='' -c unix_socket_directories=$PGROOT" \
            start > "$PGROOT/pg_ctl.log" 2>&1; then
        logf "$PGROOT/pg_ctl.log" "$PGROOT/pg.log"; abort "pg_ctl start failed"
    fi
    local pm
    mapfile -t pm < "$PGDATA/postmaster.pid"
    PG_PID=${pm[0]}
    # line 7 of postmaster.pid: "<shm key> <shmid>" of the SysV segment
    read -r _ PG_SHMID <<<"${pm[6]-}"
    log "postmaster pid $PG_PID, SysV shmid $PG_SHMID"
}

pg_stop() {
    [ -f "$PGDATA/postmaster.pid" ] || return 0
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w -t 60 stop > /dev/null 2>&1
}

pg_sql() { "$PGBIN/psql" -X -A -t -q -h "$PGROOT" -U postgres "$@"; }

# pg_work: put some data through shared_buffers (~6 MB)
# pg_work: put some data through shared_buffers (~6 MB) and read the
# settings back: sets PG_SHMEM_BYTES (shared_memory_size; PG 15 reports MB).
pg_work() {
    local out
    out=$(pg_sql -c "drop table if exists e2e" \
        -c "create table e2e as select g, repeat('x', 200) as pad from generate_series(1, 25000) g" \
        -c "select 'rows=' || count(*) from e2e" -c "select 'type=' || current_setting('shared_memory_type')" \
        -c "select 'huge_pages=' || current_setting('huge_pages')" \
        -c "select 'shared_memory_size=' || current_setting('shared_memory_size')" 2>&1) ||
        { logf <<<"$out"; fail "SQL work failed"; }
    log "postgres: $(echo $out)"
    PG_SHMEM_BYTES=""
    [[ $out =~ shared_memory_size=([0-9]+)MB ]] && PG_SHMEM_BYTES=$((BASH_REMATCH[1] * 1048576))
}

pg_diag() {
    local l
    while IFS= read -r l; do
        [[ $l =~ SYSV|anon_hugepage|dev/zero|/dev/shm ]] && log "kernel numa_maps of the postmaster: $l"
    done < "/proc/$PG_PID/numa_maps"
    while IFS= read -r l; do [[ $l == HugePages_[TFR]* ]] && log "$l"; done < /proc/meminfo
    logf /proc/sysvipc/shm
}
