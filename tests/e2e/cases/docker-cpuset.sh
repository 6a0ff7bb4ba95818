#!/usr/bin/env bash
# A Docker container's cpuset corrected through Docker (docker.io 20.10
# from Debian): dockerd and its containerd started in the guest (no
# systemd, no network, vfs storage in a tmpfs at /var/lib/docker), an image
# imported from a tarball of the workload helper and the libraries it
# links (no registry), run with --cpuset-mems on one node, holding a
# /dev/shm file in the container's own /dev/shm (numaguard reads the
# namespaces and container of a process that maps a segment). numaguard
# sees Docker as the cpuset's owner; `cpuset apply` writes through
# Docker's API: the cgroup and the container's HostConfig both hold the new
# node, and so do the cgroup and the file's pages after `docker restart` (a
# live write alone would be undone), with no CPUSET_NOT_PERSISTENT.
# The audit text and the values before and after are printed (run-e2e -v).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 3
need_ctl
DOCKER=/usr/bin/docker DOCKERD=/usr/sbin/dockerd
[ -x "$DOCKERD" ] && [ -x "$DOCKER" ] || skip_case "docker.io not installed on the host (tests/install-deps)"
NAME=ng-e2e-docker IMAGE=ng-e2e-workload SHM=/dev/shm/ng-e2e-docker
CPU_NODE=$CPUSET_CPU_NODE MEM_NODE=$CPUSET_MEM_NODE
DATA=/var/lib/docker SOCK=/var/run/docker.sock
D=/tmp/e2e-docker
mark() { log "$* (${SECONDS} s)"; echo "docker-cpuset: $* (${SECONDS} s)" > /dev/kmsg 2>/dev/null; }

# numaguard reads the container's saved HostConfig under /var/lib/docker:
# dockerd's own data root, here a tmpfs removed at the end.
rm -rf "$D"; mkdir -p "$D/img" "$D/ready" "$DATA"
at_exit "rm -rf $D $SOCK; umount $DATA"
mount -t tmpfs -o mode=0711 tmpfs "$DATA" || abort "cannot mount a tmpfs on $DATA"
# containerd first, its socket polled, then dockerd on it: dockerd gives
# the containerd it would start itself 10 s, and under TCG on a busy host
# a Go binary can take longer than that just to start.
CTRD=/run/ng-e2e-containerd
mkdir -p "$CTRD"
printf 'version = 2\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n' > "$D/containerd.toml"
containerd --config "$D/containerd.toml" --root "$DATA/containerd" --state "$CTRD/state" \
        --address "$CTRD/containerd.sock" > "$D/containerd.log" 2>&1 &
CONTAINERD_PID=$!
at_exit "kill $CONTAINERD_PID; for _ in \$(seq 120); do kill -0 $CONTAINERD_PID || break; sleep 0.25; done; kill -9 $CONTAINERD_PID; rm -rf $CTRD"
# An image without a registry (built while containerd starts): the workload
# helper and what it links.
libs=()
ldd "$WL" > "$D/ldd" || abort "ldd $WL"
while read -r l; do [[ $l =~ (^|=\> )(/[^ ]+) ]] && libs+=("${BASH_REMATCH[2]}"); done < "$D/ldd"   # (no /dev/fd here)
cp "$WL" "$D/img/ng-shm-workload" && cp -L --parents "${libs[@]}" "$D/img/" || abort "cannot build the image tree"
tar -C "$D/img" -cf "$D/img.tar" . || abort "tar"
for _ in $(seq 240); do [ -S "$CTRD/containerd.sock" ] && break; kill -0 "$CONTAINERD_PID" 2>/dev/null || break; sleep 0.25; done
[ -S "$CTRD/containerd.sock" ] || { logf "$D/containerd.log"; abort "containerd did not start"; }
"$DOCKERD" --iptables=false --ip6tables=false --bridge=none --storage-driver=vfs --exec-opt native.cgroupdriver=cgroupfs \
        --containerd "$CTRD/containerd.sock" --shutdown-timeout 5 --data-root "$DATA" --host "unix://$SOCK" \
        --pidfile "$D/dockerd.pid" > "$D/dockerd.log" 2>&1 &
DOCKERD_PID=$!
# SIGTERM: dockerd stops its containers (the workload ends on SIGTERM),
# then exits
at_exit "kill $DOCKERD_PID; for _ in \$(seq 120); do kill -0 $DOCKERD_PID || break; sleep 0.25; done; kill -9 $DOCKERD_PID"
for _ in $(seq 240); do [ -S "$SOCK" ] && break; kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.25; done
# the socket is there before dockerd serves it: the client waits
if ! [ -S "$SOCK" ] || ! timeout 120 "$DOCKER" import "$D/img.tar" "$IMAGE" > "$D/import.out" 2>&1; then
    logf "$D/dockerd.log" "$D/import.out"; abort "dockerd did not start, or docker import failed"
fi
v=$(grep -m1 'Docker daemon' "$D/dockerd.log" | grep -o 'version=[^ ]*')
mark "dockerd up (${v:-version not logged}), image imported"

# start_wait: the workload reports (through a bind mount) once its file is touched
start_wait() {
    local _
    for _ in $(seq 480); do [ -s "$D/ready/r" ] && return 0; sleep 0.25; done
    "$DOCKER" logs "$NAME" 2>&1 | logf; fail "the container's workload did not report"; return 1
}
if ! timeout 120 "$DOCKER" run -d --name "$NAME" --network none --cpuset-cpus "$(node_cpus "$CPU_NODE")" \
        --cpuset-mems "$MEM_NODE" -v "$D/ready:/ready" "$IMAGE" /ng-shm-workload file "$SHM" -s 8 -p 0 \
        --ready /ready/r > "$D/run.out" 2>&1; then
    logf "$D/run.out" "$D/dockerd.log"; abort "docker run"
fi
start_wait || abort "docker run"
CTR_ID=$(tail -1 "$D/run.out")
# inspect: "pid CpusetMems" as Docker has them
inspect() { "$DOCKER" inspect -f '{{.State.Pid}} {{.HostConfig.CpusetMems}}' "$NAME" 2>&1; }
# cgroup_mems PID: the kernel's cpuset.mems of PID's cgroup, and the cgroup
cgroup_mems() {
    local cg m
    read -r cg < "/proc/$1/cgroup" || return 1
    if [ "$CGROUP" = v2 ]; then cg=/sys/fs/cgroup${cg#0::}; else
        cg=$(grep -m1 ':cpuset:' "/proc/$1/cgroup"); cg=/sys/fs/cgroup/cpuset${cg##*:}; fi
    read -r m < "$cg/cpuset.mems" && echo "$m $cg"
}
read -r PID0 SAVED0 <<< "$(inspect)"
read -r MEMS0 CG <<< "$(cgroup_mems "$PID0")"
mark "container $CTR_ID started: pid $PID0, cgroup $CG, cpuset.mems $MEMS0, HostConfig.CpusetMems \"$SAVED0\""
[ "$MEMS0" = "$MEM_NODE" ] || abort "the container's cpuset.mems is '$MEMS0', not $MEM_NODE (--cpuset-mems)"

# Docker as the owner of the container's cpuset.
CONF=$T/dk.conf
audit_conf "$CONF" "$(printf '[instance dk]\ncontainer = %s\npolicy = bind\nnodes = %s\nenforce = cpuset\n' "$NAME" "$CPU_NODE")"
"$CTL" audit --config "$CONF" --color never > "$T/audit.txt" 2>&1
log "numaguardctl audit (text):"; logf "$T/audit.txt"
# owner: OWN="runtime|id|name|cpuset_owner|cpuset_owner_name|main_pid|nodes" of instance dk
owner() {
    OWN=""
    audit_load --config "$CONF" || return
    OWN=$(jq -r '.instances[] | select(.name == "dk")
        | "\(.container.runtime)|\(.container.id)|\(.container.name)|\(.cpuset_owner)|\(.cpuset_owner_name)|\(.main_pid)|\([.nodes[] | select(.bytes > 0) | .id] | join(","))"' \
        "$T/audit.json" 2>&1)
}
owner; own=$OWN
log "instance dk: $own"
expect "the instance is in Docker container $NAME ($CTR_ID)" test "$(cut -d'|' -f1-3 <<< "$own")" = "docker|$CTR_ID|$NAME"
expect "its cpuset's owner is Docker's container $NAME" test "$(cut -d'|' -f4,5 <<< "$own")" = "docker|$NAME"
expect "its main process is the container's workload $PID0, its file on node $MEM_NODE" \
        test "$(cut -d'|' -f6,7 <<< "$own")" = "$PID0|$MEM_NODE"
grep -q "cpuset owner: docker" "$T/audit.txt" || fail "the audit text names no docker cpuset owner"
result owner

# Corrected through Docker's API.
"$CTL" -c "$CONF" cpuset apply dk > "$T/apply.out" 2>&1; rc=$?
log "numaguardctl cpuset apply dk (exit $rc):"; logf "$T/apply.out"
read -r PID1 SAVED1 <<< "$(inspect)"
read -r MEMS1 _ <<< "$(cgroup_mems "$PID1")"
mark "corrected: cpuset.mems $MEMS1, HostConfig.CpusetMems \"$SAVED1\""
expect "cpuset apply exited $rc" test "$rc" = 0
expect "the correction went through Docker" grep -q "docker container $NAME updated and saved" "$T/apply.out"
expect "the kernel's cpuset.mems is $MEMS1, expected $CPU_NODE" test "$MEMS1" = "$CPU_NODE"
expect "Docker saved HostConfig.CpusetMems \"$SAVED1\", expected $CPU_NODE" test "$SAVED1" = "$CPU_NODE"
result apply

# After a restart Docker puts back what it saved.
rm -f "$D/ready/r"
timeout 120 "$DOCKER" restart -t 0 "$NAME" > "$D/restart.out" 2>&1 || { logf "$D/restart.out"; fail "docker restart"; }
start_wait
read -r PID2 SAVED2 <<< "$(inspect)"
read -r MEMS2 _ <<< "$(cgroup_mems "$PID2")"
mark "restarted: pid $PID2, cpuset.mems $MEMS2, HostConfig.CpusetMems \"$SAVED2\""
expect "the container runs a new process ($PID2, was $PID0)" test -n "$PID2" -a "$PID2" != 0 -a "$PID2" != "$PID0"
expect "after the restart the kernel's cpuset.mems is $MEMS2, expected $CPU_NODE" test "$MEMS2" = "$CPU_NODE"
owner; own=$OWN
log "instance dk after the restart: $own"
expect "after the restart the audit finds the new workload $PID2, Docker its owner, its file on node $CPU_NODE" \
        test "$(cut -d'|' -f4,6,7 <<< "$own")" = "docker|$PID2|$CPU_NODE"
expect_no_finding CPUSET_NOT_PERSISTENT dk
result restart
