#!/usr/bin/env bash
# policy = weighted-interleave on the firmware's HMAT (topology `hmat`):
# nodes 0, 2 and 4 at 20000, 8000 and 16000 MB/s from node 0's CPUs, so
# shares of 5, 2 and 4. A 64 MiB /dev/shm file, 44 MiB of it touched under
# --membind=0 by a process on node 0's CPUs. The kernel's per-node Shmem is
# the oracle.
#
# - Where the kernel has weighted interleave (6.9 and later: 6.12): the
#   audit says the host's weights (1 each) are not the bandwidth's
#   (INTERLEAVE_WEIGHTS, warning, naming 5, 2 and 4); rebalance lays the 44
#   MiB out 20/8/16 MiB (within 3 points of 5/11, 2/11, 4/11), installs
#   weighted interleave on the file and, with write_interleave_weights =
#   yes, sets the host's weights to 5, 2 and 4 (read back from sysfs); the
#   finding goes, and the 20 MiB the process touches afterwards land in the
#   same shares (the policy holds).
# - Where it has not (6.1, 5.10): the finding says the kernel lacks it
#   (info), and rebalance interleaves evenly over the three nodes, none of
#   them a slower tier there.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
wi=/sys/kernel/mm/mempolicy/weighted_interleave
if [ -d "$wi" ]; then plan 3; else plan 2; fi       # without it: the finding and the even spread
need_ctl
for n in 0 2 4; do [ -d "/sys/devices/system/node/node$n" ] || skip_case "node $n is not online"; done
f=/dev/shm/ng_e2e_wi
rm -f "$f"; at_exit "rm -f $f"
node_shmem() { awk '$3 == "Shmem:" { print $4 }' "/sys/devices/system/node/node$1/meminfo"; }
declare -A sh0=()
shmem_before() { local n; for n in 0 2 4; do sh0[$n]=$(node_shmem "$n"); done; }
# shares WHAT KIB W0 W2 W4: each node's Shmem growth (node 0: what it kept
# of KIB, when W0 is negative: -the share it keeps) within 3 points of KIB
shares() {
    local what=$1 kib=$2 n d want line="" i=0
    shift 2
    local -a w=("$@")
    local sum=$(( ${w[0]#-} + w[1] + w[2] ))
    for n in 0 2 4; do
        d=$(( $(node_shmem "$n") - sh0[$n] )); line+=" N$n:${d}kB"
        want=$(( kib * ${w[i]#-} / sum ))
        ((w[i] < 0)) && { want=$(( want - kib )); }
        (( (d - want) * 100 <= 3 * kib && (want - d) * 100 <= 3 * kib )) ||
            fail "$what: node $n's Shmem moved by $d kB, expected $want kB (within 3 points of $kib kB)"
        i=$((i + 1))
    done
    log "$what: the kernel's Shmem per node moved by$line"
}
audit_conf "$T/ng.conf" "node_free_floor = 16M"$'\n''[instance W]'$'\n''match_comm = ng-shm-workload'$'\n'"policy = weighted-interleave"$'\n''nodes = 0,2,4'$'\n'
wl_start numactl --membind=0 --cpunodebind=0 -- file "$f" -s 64 --touch 44 --touch-rest "$T/rest" || abort "workload"

if [ -d "$wi" ]; then
    declare -A w0=()
    for n in 0 2 4; do read -r w0[$n] < "$wi/node$n"; at_exit "echo ${w0[$n]} > $wi/node$n"; done
    for n in 0 2 4; do echo 1 > "$wi/node$n"; done
    audit_load -c "$T/ng.conf"
    expect_finding INTERLEAVE_WEIGHTS W warning
    expect "the finding names the weights: $(jq -r '.findings[] | select(.code == "INTERLEAVE_WEIGHTS") | .message' "$T/audit.json")" \
        jq -e '.findings[] | select(.code == "INTERLEAVE_WEIGHTS") | .message | contains("calls for: node0 5, node2 2, node4 4")' "$T/audit.json"
    result finding
    shmem_before
    cp "$T/ng.conf" "$T/write.conf" && sed -i '1a write_interleave_weights = yes' "$T/write.conf"
    "$CTL" -c "$T/write.conf" rebalance W > "$T/rb.out" 2>&1; rc=$?
    logf "$T/rb.out"
    expect "rebalance exited $rc" test "$rc" = 0
    expect "no weighted interleave installed" grep -q "installed policy weighted interleave:0,2,4 on $f" "$T/rb.out"
    shares "rebalance" $((44 * 1024)) -5 2 4
    got=$(cat "$wi/node0" "$wi/node2" "$wi/node4" | tr '\n' ' ')
    expect "the host's weights are '$got', expected 5 2 4" test "$got" = "5 2 4 "
    result rebalance
    audit_load -c "$T/ng.conf"
    expect_no_finding INTERLEAVE_WEIGHTS W
    shmem_before
    touch "$T/rest"
    for _ in $(seq 100); do [ -f "$T/rest.done" ] && break; sleep 0.2; done
    expect "the rest was not touched" test -f "$T/rest.done"
    shares "the pages touched after" $((20 * 1024)) 5 2 4
    result policy-holds
else
    audit_load -c "$T/ng.conf"
    expect_finding INTERLEAVE_WEIGHTS W info
    expect "the finding says the kernel lacks it: $(jq -r '.findings[] | select(.code == "INTERLEAVE_WEIGHTS") | .message' "$T/audit.json")" \
        jq -e '.findings[] | select(.code == "INTERLEAVE_WEIGHTS") | .message | contains("the kernel has no weighted interleave")' "$T/audit.json"
    result finding
    shmem_before
    "$CTL" -c "$T/ng.conf" rebalance W > "$T/rb.out" 2>&1; rc=$?
    logf "$T/rb.out"
    expect "rebalance exited $rc" test "$rc" = 0
    expect "no plain interleave installed" grep -q "installed policy interleave:0,2,4 on $f" "$T/rb.out"
    shares "rebalance" $((44 * 1024)) -1 1 1
    result rebalance
fi
