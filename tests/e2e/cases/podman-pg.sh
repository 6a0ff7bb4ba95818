#!/usr/bin/env bash
# Databases in containers: rootful Podman 4.3 from Debian, no registry and
# no image build: the containers' root is the guest's own (--rootfs on a
# bind mount of /, without the mounts above it: the host's PostgreSQL 15
# files as they are). In one boot:
#  - PostgreSQL 15 in a container with its own IPC namespace and /dev/shm
#    (shared_memory_type=sysv, DSM files posix), CPUs on one node and
#    memory on another: its SysV segment found in the container's IPC
#    namespace, its DSM files in the container's /dev/shm, the instance
#    named by its container;
#  - beside it the host's own PostgreSQL, whose SysV segment is given the
#    same shmid (kernel.shm_next_id): two segments, each with its own size
#    and attachers;
#  - two containers and the host each with a /dev/shm file of the same
#    name, on three different nodes: three segments;
#  - the container's cpuset corrected through its owner: Podman 4.3 saves
#    no update, so written live and CPUSET_NOT_PERSISTENT;
#  - the snapshot replays it all.
# The audit text of both PostgreSQL instances is printed (run-e2e -v).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 6
. "$E2E_DIR/pg.sh"
need_ctl
command -v podman >/dev/null || skip_case "podman not installed on the host (apt-get install podman)"
pg_prepare
# No systemd in the guest, no network, storage in the guest's tmpfs overlay.
PODMAN=(podman --cgroup-manager cgroupfs --events-backend file --storage-driver vfs)
CTR_RUN=(run --network none --pid host --ipc private --ulimit host)
NAME=ng-e2e-pg SAME=/dev/shm/ng-e2e-same
CPU_NODE=$PODMAN_CPU_NODE MEM_NODE=$PODMAN_MEM_NODE
D=/tmp/e2e-podman R=/tmp/e2e-podman-root
rm -rf "$D"; mkdir -p "$D" "$R"
at_exit "rm -rf $D; echo -1 > /proc/sys/kernel/shm_next_id"
at_exit "umount $R"
# under load a removal takes longer than a minute; a container left running
# is audited by every case after this one (its segment an unclaimed instance)
# podman_cleanup: remove the containers; what podman said goes to
# $REC_DIR/podman-pg.cleanup.log, and a postmaster that outlives its
# container's removal is killed there (named in the log) rather than left
# for the next cases to audit
CPG_PID=""
podman_cleanup() {
    local log=$REC_DIR/podman-pg.cleanup.log rc
    mkdir -p "${log%/*}"
    # podman 4.3's rm -f of the three at once once exited 0 leaving the
    # PostgreSQL container up (5.10 guest): kill it first, then remove
    { date; timeout 60 "${PODMAN[@]}" kill "$NAME"; echo "podman kill: exit status $?"
      timeout 180 "${PODMAN[@]}" rm -f -t 0 --ignore "$NAME" ng-e2e-a ng-e2e-b; rc=$?; echo "podman rm: exit status $rc"
      "${PODMAN[@]}" ps -a --format '{{.Names}} {{.Status}}'
      if [ -n "$CPG_PID" ] && kill -0 "$CPG_PID" 2>/dev/null; then
          echo "the container's postmaster $CPG_PID outlived podman rm: $(tr '\0' ' ' < "/proc/$CPG_PID/cmdline")"
          kill -KILL "$CPG_PID"
      fi; } > "$log" 2>&1
}
at_exit podman_cleanup
# (pivot_root cannot make / itself the new root)
mount --bind / "$R" || abort "cannot bind / on $R"
ROOTFS=(--rootfs "$R")
# progress in the guest's console log as it happens (the case's own output
# comes back when it ends)
mark() { log "$* (${SECONDS} s)"; echo "podman-pg: $* (${SECONDS} s)" > /dev/kmsg 2>/dev/null; }
mark "initdb ready"
# The container's cluster: a copy of the boot's initdb (pg.sh).
cp -a "$PGDATA" "$D/pg" && rm -f "$D/pg/postmaster.pid" && chown -R postgres: "$D" || abort "cannot copy $PGDATA"

# --pid host: postmaster.pid names the postmaster as numaguard sees it.
mark "podman run $NAME"
if ! timeout 300 "${PODMAN[@]}" --log-level debug "${CTR_RUN[@]}" -d --name "$NAME" --shm-size 128m --user postgres -v "$D:$D" \
        --cpuset-cpus "$(node_cpus "$CPU_NODE")" --cpuset-mems "$MEM_NODE" "${ROOTFS[@]}" "$PGBIN/postgres" -D "$D/pg" \
        -c shared_memory_type=sysv -c dynamic_shared_memory_type=posix -c shared_buffers=32MB -c huge_pages=off \
        -c max_connections=20 -c max_worker_processes=0 -c autovacuum=off -c listen_addresses='' \
        -c unix_socket_directories="$D" > "$D/run.log" 2> "$D/run.err"; then
    tail -40 "$D/run.err" | logf; logf "$D/run.log"; abort "podman run"
fi
CTR_ID=$(tail -1 "$D/run.log")
for _ in $(seq 240); do [ -S "$D/.s.PGSQL.5432" ] && break; sleep 0.25; done
[ -s "$D/pg/postmaster.pid" ] || { "${PODMAN[@]}" logs "$NAME" 2>&1 | logf; abort "postmaster did not start"; }
mapfile -t pm < "$D/pg/postmaster.pid"
CPG_PID=${pm[0]}
read -r _ CPG_SHMID <<<"${pm[6]-}"
CTR_IPC=$(stat -L -c %i "/proc/$CPG_PID/ns/ipc") CTR_MNT=$(stat -L -c %i "/proc/$CPG_PID/ns/mnt")
HOST_IPC=$(stat -L -c %i /proc/self/ns/ipc) HOST_MNT=$(stat -L -c %i /proc/self/ns/mnt)
read -r CTR_CG < "/proc/$CPG_PID/cgroup"; CTR_CG=/sys/fs/cgroup${CTR_CG#0::}
mark "container started"
log "container $CTR_ID: postmaster $CPG_PID, shmid $CPG_SHMID, ipc $CTR_IPC (host $HOST_IPC), mnt $CTR_MNT, cgroup $CTR_CG"
[ "$CTR_IPC" != "$HOST_IPC" ] || fail "the container shares the host's IPC namespace"
[ "$CTR_MNT" != "$HOST_MNT" ] || fail "the container shares the host's mount namespace"

# The host's PostgreSQL, its SysV segment given the container's shmid.
echo "$CPG_SHMID" > /proc/sys/kernel/shm_next_id || fail "cannot write kernel.shm_next_id"
pg_start "$PG_SYSV_NODE" sysv
[ "$PG_SHMID" = "$CPG_SHMID" ] || fail "the host's shmid is $PG_SHMID, not the container's $CPG_SHMID"
kern_size() { local id size; while read -r _ id _ size _; do [ "$id" = "$2" ] && echo "$size"; done < "$1"; }
HOST_BYTES=$(kern_size /proc/sysvipc/shm "$PG_SHMID")
# the container's table, as a process in its IPC namespace reads it
nsenter -t "$CPG_PID" -i cat /proc/sysvipc/shm > "$T/ctr-shm" || fail "cannot read the container's /proc/sysvipc/shm"
CTR_BYTES=$(kern_size "$T/ctr-shm" "$CPG_SHMID")
mark "host PostgreSQL started"
log "kernel: host shmid $PG_SHMID $HOST_BYTES bytes, container shmid $CPG_SHMID $CTR_BYTES bytes"

# /dev/shm files of the same name: two containers (nodes A, B) and the host (node C).
wl_start "${PODMAN[@]}" "${CTR_RUN[@]}" --rm --name ng-e2e-a --cpuset-mems "$SAME_NODES_A" -v "$B:$B" "${ROOTFS[@]}" -- \
        file "$SAME" -s 8 || abort "container a"
A_PID=$WL_PID_REAL A_ALL=$WL_PID_REAL,$WL_CHILDREN
wl_start "${PODMAN[@]}" "${CTR_RUN[@]}" --rm --name ng-e2e-b --cpuset-mems "$SAME_NODES_B" -v "$B:$B" "${ROOTFS[@]}" -- \
        file "$SAME" -s 12 || abort "container b"
B_PID=$WL_PID_REAL B_ALL=$WL_PID_REAL,$WL_CHILDREN
wl_start numactl --membind="$SAME_NODES_HOST" -- file "$SAME" -s 16 || abort "host file"
H_PID=$WL_PID_REAL H_ALL=$WL_PID_REAL,$WL_CHILDREN
at_exit "rm -f $SAME"

mark "workloads started"
ctl_json "$T/seg.json" segments
# one jq call: "KEY=VALUE" lines, read below
jq -r --argjson cs "$CPG_SHMID" --argjson ci "$CTR_IPC" --argjson hi "$HOST_IPC" --argjson cm "$CTR_MNT" \
      --arg same "$SAME" '
    def seg($s): if $s == null then "none" else "\($s.bytes) \($s.nattch) \([$s.pids[]?] | join(",")) \([$s.nodes[]? | "\(.id):\(.bytes)"] | join(","))" end;
    [.segments[] | select(.kind == "sysv" and .shmid == $cs)] as $v
    | "sysv_count=\($v | length)",
      "sysv_ctr=\(seg([$v[] | select(.ipc_ns == $ci)][0]))",
      "sysv_host=\(seg([$v[] | select(.ipc_ns == $hi)][0]))",
      "dsm=\([.segments[] | select(.kind == "file" and (.name | startswith("/dev/shm/PostgreSQL.")) and .mnt_ns == $cm)
             | "\(.placement_source):\([.pids[]?] | join(","))"] | join(" "))",
      ([.segments[] | select(.kind == "file" and .name == $same)] as $f
       | "same_count=\($f | length)", ($f[] | "same=\(.mnt_ns) \(seg(.))"))' "$T/seg.json" > "$T/seg.kv" 2>&1 ||
    { logf "$T/seg.kv"; abort "segments JSON"; }
logf "$T/seg.kv"
declare -A KV; SAMES=()
while IFS='=' read -r k v; do if [ "$k" = same ]; then SAMES+=("$v"); else KV[$k]=$v; fi; done < "$T/seg.kv"

# sysv_ctr / sysv_host: "bytes nattch pids nodes"
read -r cb cn cp _ <<< "${KV[sysv_ctr]}"
expect "the container's SysV segment $CPG_SHMID is found in IPC namespace $CTR_IPC" test "$cb" != none
expect "its size is the kernel's ($CTR_BYTES), not the host's" test "$cb" = "$CTR_BYTES"
expect "attached by the container's postmaster $CPG_PID and its children" test "${cn:-0}" -ge 2 -a "${cp/$CPG_PID/}" != "$cp"
expect "a DSM file in the container's /dev/shm, sampled over its own pages" test -n "${KV[dsm]}" -a "${KV[dsm]//segment:/}" != "${KV[dsm]}"
expect "a DSM file mapped by the container's postmaster" test "${KV[dsm]/$CPG_PID/}" != "${KV[dsm]}"
result segments

read -r hb hn hp _ <<< "${KV[sysv_host]}"
expect "two SysV segments with shmid $CPG_SHMID, one per IPC namespace" test "${KV[sysv_count]}" = 2
expect "the host's is its own size ($HOST_BYTES)" test "$hb" = "$HOST_BYTES" -a "$HOST_BYTES" != "$CTR_BYTES"
expect "attached by the host's postmaster $PG_PID only" test "${hp/$PG_PID/}" != "$hp" -a "${hp/$CPG_PID/}" = "$hp"
result same-shmid

# same: "mnt_ns bytes nattch pids nodes"; each its own size, attacher and node
expect "three files named $SAME, one per mount namespace" test "${KV[same_count]}" = 3
for w in "$A_PID:8:$SAME_NODES_A:$A_ALL" "$B_PID:12:$SAME_NODES_B:$B_ALL" "$H_PID:16:$SAME_NODES_HOST:$H_ALL"; do
    IFS=: read -r pid mib node all <<< "$w"
    all=$(tr , '\n' <<< "$all" | sort -n | paste -sd,)
    ns=$(stat -L -c %i "/proc/$pid/ns/mnt") hit=""
    for s in "${SAMES[@]}"; do
        read -r sns sb _ sp snodes <<< "$s"
        [ "$sns" = "$ns" ] && hit="$sb $sp $snodes"
    done
    read -r sb sp snodes <<< "$hit"
    expect "$SAME of mount namespace $ns: $((mib << 20)) bytes (got ${sb:-none})" test "${sb:-0}" = $((mib << 20))
    expect "$SAME of mount namespace $ns: attached by its workload $all alone (got ${sp:-none})" test "${sp:-}" = "$all"
    expect "$SAME of mount namespace $ns: all on node $node (got ${snodes:-none})" test "${snodes%%:*}" = "$node" -a "${snodes/,/}" = "$snodes"
done
result same-name

# The audit: both PostgreSQL instances, the container's named by it.
audit_conf "$T/ng.conf"
"$CTL" audit --config "$T/ng.conf" --color never > "$T/audit.txt" 2>&1
log "numaguardctl audit (text):"; logf "$T/audit.txt"
audit_load --config "$T/ng.conf" || abort "audit"
inst=$(jq -r --argjson p "$CPG_PID" '.instances[] | select(.main_pid == $p)
        | "\(.name)|\(.container.runtime)|\(.container.name)|\(.container.id)"' "$T/audit.json")
log "container instance: $inst"
expect "the instance names its container" test "${inst%%|*}" = "postgresql:$D/pg@$NAME"
expect "runtime podman, name $NAME, id $CTR_ID" test "${inst#*|}" = "podman|$NAME|$CTR_ID"
expect "the host's PostgreSQL is an instance in no container" \
        test "$(jq -r --argjson p "$PG_PID" '.instances[] | select(.main_pid == $p) | .container // "none"' "$T/audit.json")" = none
expect_finding REMOTE_MEMORY "${inst%%|*}"
result container

# Corrected through the owner: Podman 4.3 saves no update, so the cgroup is
# written live and the correction says it will not last.
audit_conf "$T/fix.conf" "$(printf '[instance pgc]\ncontainer = %s\npolicy = bind\nnodes = %s\nenforce = cpuset\n' "$NAME" "$CPU_NODE")"
"$CTL" -c "$T/fix.conf" cpuset apply pgc > "$T/apply.out" 2>&1; rc=$?
logf "$T/apply.out"
read -r mems < "$CTR_CG/cpuset.mems"
expect "cpuset apply exited $rc" test "$rc" = 0
expect "cpuset.mems of the container is $mems, expected $CPU_NODE" test "$mems" = "$CPU_NODE"
expect "the correction says Podman does not save it" grep -q "not saved with podman container $NAME" "$T/apply.out"
audit_load --config "$T/fix.conf" || abort "audit"
expect_finding CPUSET_NOT_PERSISTENT pgc warning
result podman-cpuset
mark "corrected"
roundtrip "$E2E_TOPO-podman-pg15" "PostgreSQL 15 in a Podman container (own IPC namespace and /dev/shm) beside the host's, same shmid; /dev/shm files of one name in two containers and the host"
