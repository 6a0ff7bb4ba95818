#!/usr/bin/env bash
# CYCLOPS: a SysV segment touched under --membind=N by processes free to run
# on every node is raised, about node N; the same segment touched under
# --interleave=all is not.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 2
need_ctl
n=$HUGE_NODE
audit_conf "$T/ng.conf"
wl_start numactl --membind="$n" -- sysv -s 32 -p 2 || abort "workload"
bound=unclaimed:shmid-$WL_SHMID
wl_start numactl --interleave=all -- sysv -s 32 -p 2 || abort "workload"
spread=unclaimed:shmid-$WL_SHMID
audit_load --config "$T/ng.conf" || abort "audit"
expect_finding CYCLOPS "$bound" warning "$n"
expect "audit exit status $AUDIT_RC, expected at least 1" test "$AUDIT_RC" -ge 1
result membind
expect_no_finding CYCLOPS "$spread"
expect_no_finding REMOTE_MEMORY "$spread"
result interleave
