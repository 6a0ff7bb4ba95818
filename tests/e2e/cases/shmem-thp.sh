#!/usr/bin/env bash
# The page sizes numaguard says the kernel may fold 4 KiB shmem into
# (segments --json shmem_thp), against what the kernel then does by its own
# counters, each 8 MiB segment touched whole under --membind=ANON_NODE with
# the case's settings (the kernel's back at exit):
#   sysv: shmem_enabled always: 2048:always, and the node's ShmemHugePages
#     grows (at least one 2 MiB page: a guest node may lack free blocks for
#     all four); topology --json's shmem_huge_kib of the node is the
#     kernel's, read before and after it;
#   file: /dev/shm as the guest mounts it (no huge=: never) under the same
#     shmem_enabled always: none, and ShmemHugePages does not grow with it;
#   never: shmem_enabled never: a SysV segment, none, no growth;
#   anon, on a kernel with per-size settings (6.11: hugepages-64kB/
#     shmem_enabled): shmem_enabled never, 64kB always, 2048kB inherit:
#     anonymous shared memory gets 64:always (per_size applied), its
#     hugepages-64kB/stats/shmem_alloc grows and ShmemHugePages does not;
#     a SysV segment beside it gets none (per_size not_used) and leaves
#     shmem_alloc as it was: the per-size settings are not for SysV;
#   anon, on a kernel without them: shmem_enabled always: 2048:always
#     (per_size absent), and ShmemHugePages grows.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 4
need_ctl
thp=/sys/kernel/mm/transparent_hugepage
[ -f "$thp/shmem_enabled" ] || not_applicable "no $thp/shmem_enabled (a kernel without transparent hugepages)"
per_size=0
[ -f "$thp/hugepages-64kB/shmem_enabled" ] && [ -f "$thp/hugepages-2048kB/shmem_enabled" ] && per_size=1
n=$ANON_NODE
f=/dev/shm/ng_e2e_thp
grep -q ' /dev/shm .*huge=' /proc/self/mountinfo && skip_case "/dev/shm is mounted with huge= here (the case wants never)"
choice() { sed -n 's/.*\[\([a-z_]*\)\].*/\1/p' "$1"; }
keep() { local v; v=$(choice "$1") && [ -n "$v" ] && at_exit "echo $v > $1"; }
keep "$thp/shmem_enabled"
((per_size)) && { keep "$thp/hugepages-64kB/shmem_enabled"; keep "$thp/hugepages-2048kB/shmem_enabled"; }
set_choice() { echo "$2" > "$1" && [ "$(choice "$1")" = "$2" ] || abort "cannot set $1 to $2"; }
huge_kib() { awk '$3 == "ShmemHugePages:" { print $4 }' "/sys/devices/system/node/node$n/meminfo"; }
alloc64() { cat "$thp/hugepages-64kB/stats/shmem_alloc" 2>/dev/null || echo -; }
# thp_of FILTER: numaguard's sizes for the one segment FILTER selects,
# "2048:always,64:advised", "none", or its state / a count of segments
thp_of() {
    ctl_json "$T/seg.json" segments || { echo error; return; }
    jq -r --argjson pk "$1" '[.segments[] | select(any(.pids[]; . == $pk))] | if length != 1 then "\(length) segments"
        else .[0].shmem_thp | if .state != "known" then .state
            else [.sizes[] | "\(.page_kib):\(.when)"] | join(",") | if . == "" then "none" else . end end end' "$T/seg.json"
}
per_size_of() { jq -r --argjson pk "$1" '.segments[] | select(any(.pids[]; . == $pk)) | .shmem_thp.per_size' "$T/seg.json"; }
stop_wl() { kill -TERM "$WL_PID" 2>/dev/null; wait "$WL_PID" 2>/dev/null; }

# sysv, shmem_enabled always
set_choice "$thp/shmem_enabled" always
((per_size)) && set_choice "$thp/hugepages-2048kB/shmem_enabled" inherit
h0=$(huge_kib)
wl_start numactl --membind="$n" -- sysv -s 8 -p 0 || abort "workload"
got=$(thp_of "$WL_PID"); h1=$(huge_kib)
ctl_json "$T/topo.json" topology
t=$(jq -r ".nodes[] | select(.id == $n) | .shmem_huge_kib" "$T/topo.json"); h2=$(huge_kib)
log "sysv under always: numaguard '$got'; node $n ShmemHugePages $h0 -> $h1 kB ($h2 after topology, which said $t)"
expect "numaguard says '$got', expected 2048:always" test "$got" = 2048:always
expect "node $n's ShmemHugePages did not grow ($h0 -> $h1 kB): the kernel folded none of it" test "$h1" -gt "$h0"
expect "topology's shmem_huge_kib of node $n is '$t', the kernel's $h1 then $h2" \
    test "$t" = "$h1" -o "$t" = "$h2"
stop_wl
result sysv

# file, same shmem_enabled, /dev/shm at never
rm -f "$f"; at_exit "rm -f $f"
h0=$(huge_kib)
wl_start numactl --membind="$n" -- file "$f" -s 8 -p 0 || abort "workload"
got=$(thp_of "$WL_PID"); h1=$(huge_kib)
log "file on /dev/shm (huge=never) under always: numaguard '$got'; ShmemHugePages $h0 -> $h1 kB"
expect "numaguard says '$got', expected none" test "$got" = none
expect "node $n's ShmemHugePages grew ($h0 -> $h1 kB) with a file its mount keeps in 4 KiB pages" test "$h1" = "$h0"
stop_wl
result file

# never
set_choice "$thp/shmem_enabled" never
h0=$(huge_kib)
wl_start numactl --membind="$n" -- sysv -s 8 -p 0 || abort "workload"
got=$(thp_of "$WL_PID"); h1=$(huge_kib)
log "sysv under never: numaguard '$got'; ShmemHugePages $h0 -> $h1 kB"
expect "numaguard says '$got', expected none" test "$got" = none
expect "node $n's ShmemHugePages grew ($h0 -> $h1 kB) under never" test "$h1" = "$h0"
stop_wl
result never

# anonymous shared memory: per-size settings where the kernel has them
if ((per_size)); then
    set_choice "$thp/hugepages-64kB/shmem_enabled" always
    h0=$(huge_kib); a0=$(alloc64)
    wl_start numactl --membind="$n" -- anon -s 8 -p 0 || abort "workload"
    anon_pid=$WL_PID
    got=$(thp_of "$anon_pid"); ps=$(per_size_of "$anon_pid"); h1=$(huge_kib); a1=$(alloc64)
    log "anon under never, 64kB always: numaguard '$got' (per_size $ps); 64kB shmem_alloc $a0 -> $a1; ShmemHugePages $h0 -> $h1 kB"
    expect "numaguard says '$got', expected 64:always" test "$got" = 64:always
    expect "per_size is '$ps', expected applied" test "$ps" = applied
    expect "ShmemHugePages grew ($h0 -> $h1 kB): a 2 MiB page under inherit from never" test "$h1" = "$h0"
    if [ "$a0" != - ]; then
        expect "hugepages-64kB/stats/shmem_alloc did not grow ($a0 -> $a1): the kernel folded none of it" test "$a1" -gt "$a0"
    else
        log "no hugepages-64kB/stats/shmem_alloc: the kernel's count of 64 KiB folios is not there"
    fi
    wl_start numactl --membind="$n" -- sysv -s 8 -p 0 || abort "workload"
    got=$(thp_of "$WL_PID"); ps=$(per_size_of "$WL_PID"); a2=$(alloc64)
    log "sysv beside it: numaguard '$got' (per_size $ps); 64kB shmem_alloc $a1 -> $a2"
    expect "numaguard says '$got' for SysV, expected none" test "$got" = none
    expect "per_size is '$ps' for SysV, expected not_used" test "$ps" = not_used
    expect "hugepages-64kB/stats/shmem_alloc grew with SysV ($a1 -> $a2)" test "$a2" = "$a1"
    stop_wl
    kill -TERM "$anon_pid" 2>/dev/null; wait "$anon_pid" 2>/dev/null
else
    set_choice "$thp/shmem_enabled" always
    h0=$(huge_kib)
    wl_start numactl --membind="$n" -- anon -s 8 -p 0 || abort "workload"
    got=$(thp_of "$WL_PID"); ps=$(per_size_of "$WL_PID"); h1=$(huge_kib)
    log "anon under always, no per-size settings: numaguard '$got' (per_size $ps); ShmemHugePages $h0 -> $h1 kB"
    expect "numaguard says '$got', expected 2048:always" test "$got" = 2048:always
    expect "per_size is '$ps', expected absent" test "$ps" = absent
    expect "node $n's ShmemHugePages did not grow ($h0 -> $h1 kB)" test "$h1" -gt "$h0"
    stop_wl
fi
result anon
