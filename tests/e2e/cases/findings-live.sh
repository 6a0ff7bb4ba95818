#!/usr/bin/env bash
# Every host, memory and hugepage finding code raised on this live NUMA
# kernel, and not raised just on the other side of its boundary (as the
# finding rules draw it). Expectations come from what the case set up and from the
# kernel's own files (/proc/*/status VmPTE, node meminfo), never from
# another numaguard command:
#   autonuma       AUTONUMA_ON with kernel.numa_balancing=1; none with 0
#   numad          NUMAD_RUNNING for a process named numad (its pid); none
#                  for one named numadx
#   libnuma        LIBNUMA_MISSING for an instance configured as Oracle's are
#                  (match_comm = ora_*_E2E, a process named ora_pmon_E2E) with
#                  no unversioned libnuma.so; none once one is visible
#   orphan         ORPHAN_SEGMENT (warning) for an unattached SysV segment of
#                  exactly min_segment_size, none for one page less; (info)
#                  for a removed segment still attached, none before removal
#   cpuset-drift   CPUSET_DRIFT for an instance configured bind to node B in
#                  a cpuset with mems M != B; none once mems = B
#   shortfall      an instance expecting 32 MiB (16 pages) for node 1: 15
#                  free pages in all: HUGEPAGE_SHORTFALL (1 short); 16 free
#                  with 15 on node 1: HUGEPAGE_NODE_SHORTFALL only (node 1,
#                  1 short); 16 on node 1: neither
#   pressure       NODE_PRESSURE for a node filled with hugepages, with a
#                  floor 8 MiB above its MemFree; none with a floor 8 MiB
#                  below; never for the other nodes
#   pagetables     PAGETABLE_BLOAT for an instance of 64 processes that all
#                  map a 32 MiB segment in 4 KiB pages, with pagetable_share
#                  at their measured share (VmPTE sum / MemTotal, to the
#                  millionth); none at one millionth above
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 17
need_ctl
((${#NODE_IDS[@]} >= 4)) || abort "set-up: needs 4 nodes (has ${#NODE_IDS[@]})"
[ "$CGROUP" = v2 ] || abort "set-up: needs cgroup v2"

# fl CONF: `audit --json --config CONF` into FL ("CODE|severity|instance|
# segment|nodes|value" per finding), with one jq call.
# FL_INSTANCES: the names of the instances that audit found; FL_OK=1 once
# it ran.
fl() {
    FL="" FL_INSTANCES="" FL_OK=0
    "$CTL" audit --json --config "$1" > "$T/f.json" 2> "$T/f.err"; local rc=$?
    ((rc <= 2)) || { fail "numaguardctl audit exited $rc"; logf "$T/f.err"; FL=""; return 1; }
    FL=$(jq -r '.findings[] | "\(.code)|\(.severity)|\(.instance)|\(.segment)|\(.nodes | map(tostring) | join(","))|\(.value)"' \
        "$T/f.json" 2>&1) || { fail "audit JSON unreadable: $FL"; FL=""; return 1; }
    FL_INSTANCES=$(jq -r '.instances[].name' "$T/f.json") FL_OK=1
    printf '%s\n' "$FL" | logf
    log "instances: $(jq -r '[.instances[] | "\(.name)(\(.main_pid))"] | join(" ")' "$T/f.json")"
}
# match CODE [i=INSTANCE] [s=SEGMENT-PREFIX] [n=NODES] [v=VALUE] [sev=SEVERITY]:
# the number of findings in FL that match (every given field equal).
match() {
    local code=$1 c sv i s n v k cnt=0 ok; shift
    while IFS='|' read -r c sv i s n v; do
        [ "$c" = "$code" ] || continue
        ok=1
        for k; do
            case $k in
                i=*) [ "$i" = "${k#i=}" ] || ok=0 ;;
                s=*) [[ $s == "${k#s=}"* ]] || ok=0 ;;
                n=*) [ "$n" = "${k#n=}" ] || ok=0 ;;
                v=*) [ "$v" = "${k#v=}" ] || ok=0 ;;
                sev=*) [ "$sv" = "${k#sev=}" ] || ok=0 ;;
            esac
        done
        ((ok)) && cnt=$((cnt + 1))
    done <<< "$FL"
    echo $cnt
}
raised()     { [ "$(match "$@")" = 1 ] || fail "expected exactly one $* (have $(match "$@"))"; }
# not_raised: only from an audit that ran and found the instance named
# (i=NAME), so that broken discovery cannot pass it
not_raised() {
    local k
    [ "${FL_OK:-0}" = 1 ] || { fail "not raised $*: no audit ran to say so"; return; }
    for k in "${@:2}"; do
        [[ $k == i=?* ]] && ! grep -qxF "${k#i=}" <<< "$FL_INSTANCES" &&
            { fail "not raised $*: the audit did not find instance ${k#i=} (has: $(tr '\n' ' ' <<< "$FL_INSTANCES"))"; return; }
    done
    [ "$(match "$@")" = 0 ] || fail "unexpected $*"
}
# bg NAME ARGS...: run ARGS as a process whose comm is NAME
bg() {
    local name=$1; shift
    cp "$(command -v "$1")" "$T/$name" || abort "cp $1"
    shift
    "$T/$name" "$@" > /dev/null 2>&1 &
    BG_PID=$!; WL_PIDS+=("$BG_PID")
}
until_ok() { local t=$(($1 * 5)); shift; while ((t-- > 0)); do "$@" && return 0; sleep 0.2; done; return 1; }
audit_conf "$T/ng.conf"

# ------------------------------------------------ hugepage shortfall first
# (nothing else alive: every instance with 4 KiB segments draws on the pool)
declare -A orig=()
for n in "${NODE_IDS[@]}"; do
    f=$(hp_file "$n"); read -r orig[$n] < "$f"; at_exit "echo ${orig[$n]} > $f"
done
pools() {   # pools N0 N1 N2 N3: the 2 MiB pool of each node, read back
    local n i=0 want got
    for want; do
        n=${NODE_IDS[i]}; i=$((i + 1))
        echo "$want" > "$(hp_file "$n")"; read -r got < "$(hp_file "$n")"
        [ "$got" = "$want" ] || { fail "set-up: node $n pool: asked $want, got $got"; return 1; }
    done
}
cp "$WL" "$T/hpdb" || abort "cp $WL"
WL_SAVE=$WL WL=$T/hpdb
wl_start sysv -s 4 -p 0 || abort "workload"
WL=$WL_SAVE hpdb_pid=$WL_PID
audit_conf "$T/hp.conf" "$(printf '[instance hp]\nmatch_comm = hpdb\nexpected_size = 32M\nnodes = 1\n')"
pools 0 15 0 0 && fl "$T/hp.conf"
raised HUGEPAGE_SHORTFALL i=hp v=1
not_raised HUGEPAGE_NODE_SHORTFALL i=hp
result shortfall-global
pools 1 15 0 0 && fl "$T/hp.conf"
not_raised HUGEPAGE_SHORTFALL i=hp
raised HUGEPAGE_NODE_SHORTFALL i=hp n=1 v=1
result shortfall-node
pools 0 16 0 0 && fl "$T/hp.conf"
not_raised HUGEPAGE_SHORTFALL i=hp
not_raised HUGEPAGE_NODE_SHORTFALL i=hp
result shortfall-none
kill -TERM "$hpdb_pid"; wait "$hpdb_pid" 2> /dev/null
pools 0 0 0 0

# ------------------------------------------------ node pressure: fill node 2
pn=2
# squeeze: fill node pn with hugepages until under 40 MiB is free (FK). The
# kernel reclaims while it grants (and more after a case that used the
# node's page cache), so one write can leave more free than asked: up to six
# rounds, each taking what is still above 24 MiB. The pool stops growing
# while megabytes are still free when no free 2 MiB block is left (or a
# boosted watermark holds them back): what is left above 24 MiB is then
# taken in 4 KiB pages, a file written under --preferred on a tmpfs of the
# case's own (no swap in the guest: they stay; /dev/shm is not touched).
# Preferred, not membind: a write that finds the node fuller than its
# MemFree said spills to another node; under membind it met the OOM
# killer, which killed the case's own shell (the tmpfs pages it could not
# free stay).
FILL=$T/fill FILLS=0
mkdir -p "$FILL" && mount -t tmpfs -o size=1g e2e-fill "$FILL" || abort "set-up: tmpfs $FILL"
at_exit "umount $FILL"
squeeze() {
    local f0 have mib
    sync; echo 3 > /proc/sys/vm/drop_caches
    f0=$(node_free_kib $pn) FK=$f0
    for _ in 1 2 3 4 5 6; do
        ((FK < 40 * 1024)) && break
        read -r have < "$(hp_file $pn)"
        echo $(( have + (FK - 24 * 1024) / 2048 )) > "$(hp_file $pn)"
        FK=$(node_free_kib $pn)
    done
    for _ in 1 2 3; do
        ((FK < 40 * 1024)) && break
        mib=$(( (FK - 24 * 1024) / 1024 )) FILLS=$((FILLS + 1))
        numactl --preferred=$pn -- dd if=/dev/zero of="$FILL/$FILLS" bs=1M count=$mib status=none ||
            log "dd of $mib MiB under --preferred=$pn failed"
        FK=$(node_free_kib $pn)
        log "node $pn: $mib MiB of tmpfs pages written, MemFree now $FK kB"
    done
    log "node $pn: MemFree $f0 kB, after $(cat "$(hp_file $pn)") hugepages: $FK kB"
    ((FK < 40 * 1024)) || abort "set-up: node $pn still has $FK kB free"
}
# around FLOOR SIDE: audit with node_free_floor = FLOOR kB (an arithmetic
# expression of FK, the MemFree a squeeze left) until the node's MemFree,
# read before and after the audit, stayed on SIDE (below or above) of the
# floor all along. kswapd goes on reclaiming after a squeeze,
# so a node can gain megabytes during one audit: up to three tries, each
# squeezing again, and a failure naming the readings if none held still.
around() {
    local expr=$1 side=$2 floor try before after
    for try in 1 2 3; do
        squeeze
        floor=$((expr))
        audit_conf "$T/p.conf" "node_free_floor = ${floor}K"$'\n'
        before=$(node_free_kib $pn)
        fl "$T/p.conf" || return 1
        after=$(node_free_kib $pn)
        log "floor $floor kB; MemFree before the audit $before kB, after $after kB"
        if [ "$side" = below ]; then ((before < floor && after < floor)) && return 0
        else ((before >= floor && after >= floor)) && return 0; fi
        log "try $try: node $pn's MemFree crossed the floor during the audit; again"
    done
    fail "set-up: node $pn's MemFree would not stay $side a floor near it (last: $before, $after kB)"
    return 1
}
if around 'FK + 8192' below; then
    raised NODE_PRESSURE n=$pn
    for n in "${NODE_IDS[@]}"; do [ "$n" = $pn ] || not_raised NODE_PRESSURE n="$n"; done
fi
result pressure-raised
if around 'FK - 8192' above; then
    for n in "${NODE_IDS[@]}"; do not_raised NODE_PRESSURE n="$n"; done
fi
result pressure-not-raised
echo 0 > "$(hp_file $pn)"; rm -f "$FILL"/*

# ------------------------------------------------ host knobs and processes
read -r nb_orig < /proc/sys/kernel/numa_balancing || abort "no kernel.numa_balancing"
at_exit "echo $nb_orig > /proc/sys/kernel/numa_balancing"
bg numad sleep 600; numad_pid=$BG_PID
bg numadx sleep 600
bg ora_pmon_E2E sleep 600
# every unversioned libnuma.so Oracle looks for, moved away (the guest's
# root is a tmpfs overlay: the host is not touched)
LIBS=(/usr/lib64/libnuma.so /lib64/libnuma.so /usr/lib/x86_64-linux-gnu/libnuma.so
      /usr/lib/aarch64-linux-gnu/libnuma.so /usr/lib/libnuma.so)
mkdir -p "$T/away"; i=0
for l in "${LIBS[@]}"; do
    i=$((i + 1))
    if [ -e "$l" ] || [ -L "$l" ]; then mv "$l" "$T/away/$i" && at_exit "mv $T/away/$i $l"; fi
done
for l in "${LIBS[@]}"; do [ -e "$l" ] && abort "set-up: $l still there"; done
log "libnuma: $(ls -la /usr/lib/x86_64-linux-gnu/libnuma* 2>&1 | tr '\n' ' ')"
echo 1 > /proc/sys/kernel/numa_balancing
[ "$(cat /proc/sys/kernel/numa_balancing)" = 1 ] || abort "set-up: kernel.numa_balancing did not take 1"

# orphans: unattached, at min_segment_size (4 MiB) and one page below
id_of() { local l; read -r l; [[ $l =~ ([0-9]+)$ ]] && echo "${BASH_REMATCH[1]}"; }
big=$(ipcmk -M 4194304 | id_of) small=$(ipcmk -M 4190208 | id_of)
[ -n "$big" ] && [ -n "$small" ] || abort "set-up: ipcmk failed"
at_exit "ipcrm -m $big"; at_exit "ipcrm -m $small"
# and one that is attached: removed later
wl_start sysv -s 8 -p 1 || abort "workload"
att=$WL_SHMID
# cpuset drift: bind to node 1 configured, cgroup mems on node 3
cg=/sys/fs/cgroup/e2e-drift
echo "+cpuset +memory" > /sys/fs/cgroup/cgroup.subtree_control || abort "cannot enable cpuset"
mkdir "$cg" || abort "mkdir $cg"; at_exit "rmdir $cg"
echo "$(node_cpus 1)" > "$cg/cpuset.cpus" && echo 3 > "$cg/cpuset.mems" || abort "cpuset $cg"
sh -c 'echo $$ > "$0" && exec sleep 600' "$cg/cgroup.procs" & WL_PIDS+=($!)
until_ok 10 grep -q e2e-drift "/proc/$!/cgroup" || abort "set-up: sleep not in $cg"
audit_conf "$T/host.conf" "$(printf '[instance drift]\ncgroup = /e2e-drift\npolicy = bind\nnodes = 1\n[instance ORCL]\nmatch_comm = ora_*_E2E\n')"

fl "$T/host.conf"
raised AUTONUMA_ON i= sev=info v=1
result autonuma-on
raised NUMAD_RUNNING v=$numad_pid sev=info
[ "$(match NUMAD_RUNNING)" = 1 ] || fail "NUMAD_RUNNING $(match NUMAD_RUNNING) times: numadx is not numad"
result numad-raised
raised LIBNUMA_MISSING i=ORCL
result libnuma-missing
raised ORPHAN_SEGMENT "s=shmid $big " sev=warning
not_raised ORPHAN_SEGMENT "s=shmid $small "
not_raised ORPHAN_SEGMENT "s=shmid $att "
result orphan-unattached
raised CPUSET_DRIFT i=drift n=1
result cpuset-drift

# the other side of each boundary
echo 0 > /proc/sys/kernel/numa_balancing
kill -TERM "$numad_pid"; wait "$numad_pid" 2> /dev/null
ln -s libnuma.so.1 /usr/lib/x86_64-linux-gnu/libnuma.so || abort "set-up: cannot make libnuma.so visible"
at_exit "rm -f /usr/lib/x86_64-linux-gnu/libnuma.so"
[ -e /usr/lib/x86_64-linux-gnu/libnuma.so ] || abort "set-up: libnuma.so.1 missing in the guest"
ipcrm -m "$att" || abort "ipcrm -m $att"
echo 1 > "$cg/cpuset.mems" || abort "cpuset.mems = 1"
fl "$T/host.conf"
not_raised AUTONUMA_ON
result autonuma-off
not_raised NUMAD_RUNNING
result numad-not-raised
not_raised LIBNUMA_MISSING i=ORCL
result libnuma-visible
raised ORPHAN_SEGMENT "s=shmid $att " sev=info
result orphan-removed-attached
not_raised CPUSET_DRIFT i=drift
result cpuset-no-drift
kill -TERM "$WL_PID"; wait "$WL_PID" 2> /dev/null

# ------------------------------------------------ page tables: 64 attachers
cp "$WL" "$T/ptdb" || abort "cp $WL"
WL_SAVE=$WL WL=$T/ptdb
wl_start sysv -s 32 -p 63 --child-touch || abort "workload"
WL=$WL_SAVE
# pt_sum: PTE = the VmPTE sum (kB) of every ptdb process, NP = how many
pt_sum() {
    local s comm v k x
    PTE=0 NP=0
    for s in /proc/[0-9]*/status; do
        comm="" v=0
        while read -r k x _; do
            case $k in Name:) comm=$x ;; VmPTE:) v=$x ;; esac
        done < "$s" 2> /dev/null
        [ "$comm" = ptdb ] && PTE=$((PTE + v)) NP=$((NP + 1))
    done
}
total=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
# measured before and after both audits; if the sum moved in between (a
# late page-table allocation), measure and audit again
for attempt in 1 2 3; do
    pt_sum; before=$PTE
    m=$((PTE * 1000000 / total))
    log "ptdb: $NP processes, VmPTE $PTE kB of MemTotal $total kB: share $m millionths"
    ((NP == 64)) || abort "set-up: $NP ptdb processes, expected 64"
    ((m >= 1000)) || abort "set-up: share $m millionths is below the configurable minimum 0.001"
    audit_conf "$T/pt-at.conf" "$(printf 'pagetable_share = 0.%06d\n[instance pt]\nmatch_comm = ptdb\n' "$m")"
    audit_conf "$T/pt-above.conf" "$(printf 'pagetable_share = 0.%06d\n[instance pt]\nmatch_comm = ptdb\n' $((m + 1)))"
    fl "$T/pt-at.conf"; fl_at=$FL
    fl "$T/pt-above.conf"; fl_above=$FL
    pt_sum
    [ "$PTE" = "$before" ] && break
    log "VmPTE sum moved from $before to $PTE kB during the audits: again"
done
[ "$PTE" = "$before" ] || fail "set-up: the VmPTE sum never held still over two audits"
FL=$fl_at
raised PAGETABLE_BLOAT i=pt sev=warning
result pagetables-raised
FL=$fl_above
not_raised PAGETABLE_BLOAT i=pt
result pagetables-not-raised
