#!/usr/bin/env bash
# A configured instance is one cluster of processes (one PID and one IPC
# namespace), on a tree derived from a captured PostgreSQL 15
# (tests/fixtures/derive-podman-tree): the host's PostgreSQL (pids 242,
# 245, 246, 256, 257, cgroup /system.slice/postgresql@15-main.service) and a
# copy of it in a Podman container (pids 142, 145, 146, its own namespaces
# and cgroup, the same shmid in its IPC namespace). match_comm = postgres
# finds both: the instance takes the host's and INSTANCE_AMBIGUOUS names
# both clusters; cpuset apply and rebalance act on the host's alone; the
# container's is discovered beside it; span_namespaces = yes makes them one
# instance, autodiscover = no leaves the container's undiscovered, and no
# process is in two instances.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
echo "1..17"
[ -x "$CTL" ] || { echo "not ok ns-clusters: $CTL not built"; exit 1; }
command -v jq >/dev/null || { echo "not ok ns-clusters: jq not installed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_PREFIX=ns-clusters; . "$SRC/tests/shell/lib.sh"
T=$tmp/tree
"$SRC/tests/fixtures/derive-podman-tree" "$T" || { echo "not ok ns-clusters: derive-podman-tree"; exit 1; }
LIBPOD=/machine.slice/libpod-0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9.scope/container
conf() {        # conf NAME [GLOBAL-LINES] INSTANCE-LINES: $tmp/NAME.conf
        printf '[global]\nmin_segment_size = 1M\n%s\n[instance pg]\n%s\n' "$2" "$3" > "$tmp/$1.conf"
}
audit_json() {  # audit_json CONF: audit --json of the tree into $tmp/CONF.json
        "$CTL" audit --root "$T" --config "$tmp/$1.conf" --json > "$tmp/$1.json" 2> "$tmp/$1.err"
}
jqt() {         # jqt CONF FILTER: the filter over its audit is true
        jq -e "$2" "$tmp/$1.json" > /dev/null
}

conf host "" "match_comm = postgres
policy = bind
nodes = 0
enforce = cpuset,rebalance"
audit_json host
check host-only "instance pg is not the host's five processes: $(jq -c '.instances[] | select(.name == "pg") | {main_pid, pids, cgroup}' "$tmp/host.json")" \
        jqt host '.instances[] | select(.name == "pg") | .pids == [242, 245, 246, 256, 257] and .main_pid == 242 and
                  .cgroup == "/system.slice/postgresql@15-main.service" and .container == null'
check ambiguous "no INSTANCE_AMBIGUOUS warning naming both clusters: $(jq -c '[.findings[] | select(.instance == "pg")]' "$tmp/host.json")" \
        jqt host '[.findings[] | select(.code == "INSTANCE_AMBIGUOUS" and .instance == "pg" and .severity == "warning"
                   and (.message | contains("match_comm=postgres matches processes in 2 clusters"))
                   and (.message | contains("the one in numaguard'"'"'s own namespaces (the host'"'"'s): PID namespace 4026531836, IPC namespace 4026531839 (main pid 242, 5 processes)"))
                   and (.message | contains("not PID namespace 4026532602, IPC namespace 4026532601 (main pid 142, 3 processes, podman container ng-e2e-pg)")))]
                  | length == 1'
check ambiguous-text "the text audit does not show the finding" \
        grep -q "INSTANCE_AMBIGUOUS \[pg\]" <("$CTL" audit --root "$T" --config "$tmp/host.conf" --color never 2>&1)
check discovered "the container's PostgreSQL is not discovered beside it: $(jq -c '[.instances[] | {name, origin, pids}]' "$tmp/host.json")" \
        jqt host '[.instances[] | select(.origin == "discovered")] | length == 1 and
                  (.[0] | .name == "postgresql:/tmp/e2e-pgr/data@ng-e2e-pg" and .pids == [142, 145, 146]
                          and .container.name == "ng-e2e-pg")'
check disjoint "a process is in two instances: $(jq -c '[.instances[] | {name, pids}]' "$tmp/host.json")" \
        jqt host '[.instances[].pids[]] | length == (unique | length)'
# the segments: the host's shmid 5 is the instance's, the container's is not
check segments "instance pg holds a segment of the container's IPC namespace" \
        jqt host '[.instances[] | select(.name == "pg") | .segments[]? | select((.ipc_ns // 0) == 4026532601)] | length == 0'

"$CTL" --root "$T" -c "$tmp/host.conf" cpuset apply pg --dry-run > "$tmp/cpuset.out" 2>&1; rc=$?
check cpuset-rc "cpuset apply --dry-run exited $rc: $(tail -2 "$tmp/cpuset.out")" test $rc = 0
check cpuset-host "cpuset apply --dry-run does not plan the host's cgroup: $(tail -1 "$tmp/cpuset.out")" \
        grep -q "sets cgroup v2 /system.slice/postgresql@15-main.service: cpuset.mems 0-3 -> 0" "$tmp/cpuset.out"
check cpuset-not-container "cpuset apply --dry-run plans the container's cgroup" \
        test "$(grep -c -e "$LIBPOD" -e libpod -e podman "$tmp/cpuset.out")" = 0
"$CTL" --root "$T" -c "$tmp/host.conf" rebalance pg --dry-run > "$tmp/rebalance.out" 2>&1; rc=$?
check rebalance-host "rebalance --dry-run (exit $rc) does not move the host's /dev/zero segment through pid 245" \
        grep -q "^/dev/zero (deleted): .*/proc/245/map_files/" "$tmp/rebalance.out"
check rebalance-not-container "rebalance --dry-run acts on the container's segments: $(grep -e 4026532601 -e /proc/14 "$tmp/rebalance.out")" \
        test "$(grep -c -e "IPC namespace 4026532601" -e "/proc/14[256]/" "$tmp/rebalance.out")" = 0

# span_namespaces = yes: one instance of both, as asked; nothing to say
conf span "" "match_comm = postgres
span_namespaces = yes"
audit_json span
check span "span_namespaces = yes is not one instance of the eight: $(jq -c '.instances[] | select(.name == "pg") | .pids' "$tmp/span.json")" \
        jqt span '(.instances[] | select(.name == "pg") | .pids == [142, 145, 146, 242, 245, 246, 256, 257]) and
                  ([.findings[] | select(.code == "INSTANCE_AMBIGUOUS")] | length == 0) and
                  ([.instances[] | select(.origin == "discovered")] | length == 0)'

# autodiscover = no: the configured instance alone, as asked
conf nodisc "autodiscover = no" "match_comm = postgres"
audit_json nodisc
check autodiscover-no "autodiscover = no still discovers: $(jq -c '[.instances[].name]' "$tmp/nodisc.json")" \
        jqt nodisc '[.instances[] | select(.origin == "discovered")] | length == 0'

# the container's by its name: its three processes; the host's is discovered
conf ctr "" "container = ng-e2e-pg"
audit_json ctr
check container "container = ng-e2e-pg is not the container's three: $(jq -c '.instances[] | select(.name == "pg") | {pids, cgroup}' "$tmp/ctr.json")" \
        jqt ctr '.instances[] | select(.name == "pg") | .pids == [142, 145, 146] and .cgroup == "'"$LIBPOD"'"'
check container-discovers-host "the host's PostgreSQL is not discovered beside it: $(jq -c '[.instances[] | {name, pids}]' "$tmp/ctr.json")" \
        jqt ctr '[.instances[] | select(.origin == "discovered")] | length == 1 and
                 (.[0] | .name == "postgresql:/tmp/e2e-pgr/data" and .pids == [242, 245, 246, 256, 257])'
check container-one-cluster "INSTANCE_AMBIGUOUS for a matcher of one cluster" \
        jqt ctr '[.findings[] | select(.code == "INSTANCE_AMBIGUOUS")] | length == 0'

# the largest when numaguard's own namespaces hold none of them: the
# container's IPC namespace as numaguard's own leaves the host's cluster
# (5 processes) in no namespace of numaguard's, the container's (3) in
# another PID namespace
cp -a "$T" "$tmp/t2" && printf 'ipc:[4026532601]' > "$tmp/t2/proc/self/ns/ipc"
"$CTL" audit --root "$tmp/t2" --config "$tmp/host.conf" --json > "$tmp/largest.json" 2>/dev/null
check largest "the instance is not the cluster with the most processes: $(jq -c '[.instances[] | {name, pids}], [.findings[] | select(.code == "INSTANCE_AMBIGUOUS") | .message]' "$tmp/largest.json")" \
        jqt largest '(.instances[] | select(.name == "pg") | .pids == [242, 245, 246, 256, 257]) and
                     ([.findings[] | select(.code == "INSTANCE_AMBIGUOUS" and (.message | contains("the one with the most processes: PID namespace 4026531836")))] | length == 1)'
[ "$fails" = 0 ]
