#!/usr/bin/env bash
# A real PostgreSQL 15 in a rootful Podman container (Podman 4.3 from
# Debian; its image imported from a tarball of the host's own PostgreSQL
# files: no registry), with its own IPC namespace and its own /dev/shm:
# its SysV segment (shared_memory_type=sysv) is found in the container's IPC
# namespace with its attachers, its DSM file (dynamic_shared_memory_type
# posix) in the container's /dev/shm, sampled over its own pages through
# /proc/PID/root; the instance names the container (runtime podman, its
# name and id); the snapshot replays it.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 3
need_ctl
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
command -v podman >/dev/null || skip_case "podman not installed on the host (apt-get install podman)"
[ -x "$PGBIN/postgres" ] || skip_case "PostgreSQL 15 not installed on the host ($PGBIN)"
id postgres >/dev/null 2>&1 || skip_case "no postgres user on the host"
# No systemd in the guest, no network, storage in the guest's tmpfs overlay.
PODMAN=(podman --cgroup-manager cgroupfs --events-backend file --storage-driver vfs)
NAME=ng-e2e-pg
D=/tmp/e2e-podman
rm -rf "$D"; mkdir -p "$D/rootfs" "$D/data"
at_exit "${PODMAN[*]} rm -f -t 5 $NAME >/dev/null 2>&1"

# The image: PostgreSQL's files, the libraries it loads, the shell initdb
# runs its bootstrap through, time zones, passwd and group.
log "building the image from the host's PostgreSQL files"
files=("${PGBIN%/bin}" /usr/share/postgresql/15 /usr/share/zoneinfo /bin/sh /etc/passwd /etc/group)
ldd "$PGBIN/postgres" "$PGBIN/initdb" /bin/sh > "$D/ldd" 2>&1
while read -r lib; do files+=("$lib"); done <<< "$(sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p' "$D/ldd" | sort -u)"
# (not the JIT: LLVM is large and unused here)
tar -C / -chf "$D/rootfs.tar" --ignore-failed-read --exclude='llvmjit*' --exclude=bitcode "${files[@]#/}" \
        2>"$D/tar.err" || { logf "$D/tar.err"; abort "tar"; }
"${PODMAN[@]}" import "$D/rootfs.tar" localhost/ng-e2e-pg:15 > "$D/import.log" 2>&1 ||
        { logf "$D/import.log"; abort "podman import"; }
chown -R postgres: "$D/data"
"${PODMAN[@]}" run --rm --network none --user postgres -v "$D:$D" localhost/ng-e2e-pg:15 \
        "$PGBIN/initdb" -D "$D/data/pg" -A trust -U postgres --no-sync --no-locale -E UTF8 > "$D/initdb.log" 2>&1 ||
        { logf "$D/initdb.log"; abort "initdb in the container"; }
# --pid host: postmaster.pid names the postmaster as numaguard sees it.
if ! "${PODMAN[@]}" run -d --name "$NAME" --network none --pid host --ipc private --shm-size 128m \
        --user postgres -v "$D:$D" localhost/ng-e2e-pg:15 "$PGBIN/postgres" -D "$D/data/pg" \
        -c shared_memory_type=sysv -c dynamic_shared_memory_type=posix -c shared_buffers=32MB \
        -c max_connections=20 -c max_worker_processes=0 -c autovacuum=off -c listen_addresses='' -c unix_socket_directories="$D/data" \
        > "$D/run.log" 2>&1; then
    logf "$D/run.log"; abort "podman run"
fi
for _ in $(seq 120); do [ -s "$D/data/pg/postmaster.pid" ] && [ -S "$D/data/.s.PGSQL.5432" ] && break; sleep 0.5; done
[ -s "$D/data/pg/postmaster.pid" ] || { "${PODMAN[@]}" logs "$NAME" 2>&1 | logf; abort "postmaster did not start"; }
mapfile -t pm < "$D/data/pg/postmaster.pid"
PG_PID=${pm[0]}
read -r _ PG_SHMID <<<"${pm[6]-}"
CTR_ID=$("${PODMAN[@]}" inspect -f '{{.Id}}' "$NAME")
CTR_IPC=$(stat -L -c %i "/proc/$PG_PID/ns/ipc") CTR_MNT=$(stat -L -c %i "/proc/$PG_PID/ns/mnt")
HOST_IPC=$(stat -L -c %i /proc/self/ns/ipc)
log "postmaster $PG_PID, shmid $PG_SHMID, container $CTR_ID, ipc $CTR_IPC (host $HOST_IPC), mnt $CTR_MNT"
head -3 "/proc/$PG_PID/cgroup" | logf
[ "$CTR_IPC" != "$HOST_IPC" ] || fail "the container shares the host's IPC namespace"

ctl_json "$T/seg.json" segments
sysv=$(jq -c "[.segments[] | select(.kind == \"sysv\" and .shmid == $PG_SHMID and .ipc_ns == $CTR_IPC)]" "$T/seg.json")
dsm=$(jq -c "[.segments[] | select(.kind == \"file\" and (.name | startswith(\"/dev/shm/PostgreSQL.\"))
        and .mnt_ns == $CTR_MNT)]" "$T/seg.json")
log "container SysV: $sysv"
log "container DSM: $dsm"
expect "one SysV segment $PG_SHMID in IPC namespace $CTR_IPC" test "$(jq length <<<"$sysv")" = 1
expect "the postmaster attaches it" test "$(jq ".[0].pids | index($PG_PID) != null" <<<"$sysv")" = true
expect "attached by the postmaster and its children" test "$(jq '.[0].nattch >= 2' <<<"$sysv")" = true
expect "a DSM file in the container's /dev/shm" test "$(jq length <<<"$dsm")" -ge 1
expect "the DSM file is mapped by the postmaster" test "$(jq "[.[] | .pids | index($PG_PID) != null] | any" <<<"$dsm")" = true
expect "the DSM file is sampled over its own pages (through /proc/PID/root)" \
        test "$(jq '[.[] | .placement_source == "segment"] | all' <<<"$dsm")" = true
result segments

audit_conf "$T/ng.conf"
audit_load --config "$T/ng.conf" || abort "audit"
inst=$(jq -c ".instances[] | select(.main_pid == $PG_PID) | {name, container}" "$T/audit.json")
log "instance: $inst"
expect "the instance names its container" test "$(jq -r '.name' <<<"$inst")" = "postgresql:$D/data/pg@$NAME"
expect "runtime podman" test "$(jq -r '.container.runtime' <<<"$inst")" = podman
expect "the container's name" test "$(jq -r '.container.name' <<<"$inst")" = "$NAME"
expect "the container's id" test "$(jq -r '.container.id' <<<"$inst")" = "$CTR_ID"
result container
roundtrip "$E2E_TOPO-podman-pg15" "PostgreSQL 15 in a Podman container with its own IPC namespace and /dev/shm"
