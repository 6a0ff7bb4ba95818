#!/usr/bin/env bash
# A hugepage pool recorded for boot is back after a real reboot (topology
# `systemd-reboot`: systemd as PID 1, the kernel booted with
# "hugepages=BOOT_HUGEPAGES", numa-vm --reboots 1). This script runs once
# per boot (NUMA_VM_BOOT):
#
# boot 1: the pools are the kernel's split of the command line's total
#   (BOOT_HUGEPAGES / 2 on each node) and no HUGEPAGE_NOT_PERSISTENT; node
#   PERSIST_NODE grown to PERSIST_PAGES with `hugepages reserve` raises it
#   (the total differs from the command line's); `hugepages reserve
#   --persist` records the pools of both nodes in
#   /etc/tmpfiles.d/numaguard-hugepages.conf and the finding clears; then
#   `hugepages apply --persist` for an instance expecting 16 MiB on the
#   other node grows that node to the plan's target and records it too;
#   then the guest reboots (systemctl reboot).
# boot 2: a new kernel (another boot_id, same command line), and each
#   node's nr_hugepages is what was persisted (the kernel's split, then
#   systemd-tmpfiles-setup's write of numaguard's lines); no
#   HUGEPAGE_NOT_PERSISTENT; `hugepages plan` names the sources.
#
# The pools before the reboot and after it go to
# $BUILD/e2e/hugepages-reboot-record.txt.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
boot=${NUMA_VM_BOOT:-1}
if [ "$boot" = 1 ]; then plan 4; else plan 2; fi
need_ctl
[ "$(cat /proc/1/comm)" = systemd ] || abort "PID 1 is $(cat /proc/1/comm), not systemd (numa-vm --systemd)"
RECORD=$REC_DIR/hugepages-reboot-record.txt
BOOT1=$REC_DIR/hugepages-reboot.boot1
mkdir -p "$REC_DIR"
say() { log "$*"; echo "$*" >> "$RECORD"; }
pn=$PERSIST_NODE on=$((1 - PERSIST_NODE)) half=$((BOOT_HUGEPAGES / 2))
tmpf=/etc/tmpfiles.d/numaguard-hugepages.conf
# the boot pools expected per node in id order, N:PAGES|SOURCE|SPLIT, once
# --persist recorded every node's pool of the size (node PERSIST_NODE's
# grown, the other's as the kernel split it, or as apply --persist grew it:
# ON_PAGES)
APPLIED=$REC_DIR/hugepages-reboot.applied
ON_PAGES=$half
persisted() { local n o=""; for n in 0 1; do
    if [ "$n" = "$pn" ]; then o+=" $n:$PERSIST_PAGES|tmpfiles|false"; else o+=" $n:$ON_PAGES|tmpfiles|false"; fi; done; echo "${o# }"; }
pools() { echo "node 0: $(cat "$(hp_file 0)"), node 1: $(cat "$(hp_file 1)")"; }
printf '[global]\nnode_free_floor = 32M\nmin_segment_size = 4M\n' > "$T/hp.conf"
read -r boot_id < /proc/sys/kernel/random/boot_id
log "boot $boot, boot_id $boot_id, kernel command line: $(cat /proc/cmdline)"

# plan_load: "boot_pages|boot_source|boot_split" per node of `hugepages plan --json`
plan_load() {
    local rc
    "$CTL" -c "$T/hp.conf" hugepages plan --json > "$T/plan.json" 2> "$T/plan.err"; rc=$?
    ((rc <= 1)) || { fail "hugepages plan exited $rc"; logf "$T/plan.err"; }
    PLAN_BOOT=$(jq -r '[.nodes[] | "\(.id):\(.boot_pages)|\(.boot_source)|\(.boot_split)"] | join(" ")' "$T/plan.json")
    log "plan: $PLAN_BOOT"
}

if [ "$boot" = 1 ]; then
    : > "$RECORD"
    echo "$boot_id" > "$BOOT1"
    grep -qw "hugepages=$BOOT_HUGEPAGES" /proc/cmdline || abort "the kernel was not booted with hugepages=$BOOT_HUGEPAGES"
    say "boot 1 (boot_id $boot_id), as booted with hugepages=$BOOT_HUGEPAGES: $(pools)"
    expect "pools $(pools), expected $half on each node (the kernel's split)" \
        test "$(cat "$(hp_file 0)") $(cat "$(hp_file 1)")" = "$half $half"
    audit_load -c "$T/hp.conf"
    expect_no_finding HUGEPAGE_NOT_PERSISTENT ""
    plan_load
    expect "boot pools $PLAN_BOOT" test "$PLAN_BOOT" = "0:$half|cmdline|true 1:$half|cmdline|true"
    result as-booted

    "$CTL" -c "$T/hp.conf" hugepages reserve --size 2M --pages "$PERSIST_PAGES" --node "$pn" > "$T/r.out" 2>&1 ||
        { logf "$T/r.out"; fail "hugepages reserve exited $?"; }
    say "boot 1, node $pn grown with hugepages reserve: $(pools)"
    expect "node $pn has $(cat "$(hp_file "$pn")") pages, expected $PERSIST_PAGES" test "$(cat "$(hp_file "$pn")")" = "$PERSIST_PAGES"
    audit_load -c "$T/hp.conf"
    expect_finding HUGEPAGE_NOT_PERSISTENT "" warning "0,1"
    result before-persist

    "$CTL" -c "$T/hp.conf" hugepages reserve --size 2M --pages "$PERSIST_PAGES" --node "$pn" --persist > "$T/p.out" 2>&1 ||
        { logf "$T/p.out"; fail "hugepages reserve --persist exited $?"; }
    logf "$T/p.out"
    expect "no line for node $pn in $tmpf: $(cat $tmpf 2>&1)" \
        grep -qx "w /sys/devices/system/node/node$pn/hugepages/hugepages-2048kB/nr_hugepages - - - - $PERSIST_PAGES" $tmpf
    audit_load -c "$T/hp.conf"
    expect_no_finding HUGEPAGE_NOT_PERSISTENT ""
    plan_load
    expect "boot pools $PLAN_BOOT" test "$PLAN_BOOT" = "$(persisted)"
    say "boot 1, recorded with --persist ($tmpf: $(grep -c '^w ' $tmpf) lines): $(pools)"
    result persisted

    # apply --persist: the plan's pool for an instance expecting 16 MiB on
    # node $on, grown now and recorded for boot next to node $pn's
    printf '[global]\nnode_free_floor = 32M\nmin_segment_size = 4M\n[instance HP]\nmatch_comm = ng-shm-workload\nexpected_size = 16M\nnodes = %s\n' \
        "$on" > "$T/apply.conf"
    wl_start sysv -s 4 -p 0 || abort "workload"
    "$CTL" -c "$T/apply.conf" hugepages plan --json > "$T/aplan.json" 2>&1
    ON_PAGES=$(jq -r --argjson n "$on" '.nodes[] | select(.id == $n) | .target' "$T/aplan.json")
    expect "plan target for node $on is '$ON_PAGES', expected more than $half" test "${ON_PAGES:-0}" -gt "$half"
    "$CTL" -c "$T/apply.conf" hugepages apply --persist > "$T/a.out" 2>&1 || { logf "$T/a.out"; fail "hugepages apply --persist exited $?"; }
    logf "$T/a.out"
    expect "node $on has $(cat "$(hp_file "$on")") pages, expected $ON_PAGES" test "$(cat "$(hp_file "$on")")" = "$ON_PAGES"
    expect "no line for node $on in $tmpf: $(cat $tmpf 2>&1)" \
        grep -qx "w /sys/devices/system/node/node$on/hugepages/hugepages-2048kB/nr_hugepages - - - - $ON_PAGES" $tmpf
    expect "node $pn's line lost: $(cat $tmpf 2>&1)" \
        grep -qx "w /sys/devices/system/node/node$pn/hugepages/hugepages-2048kB/nr_hugepages - - - - $PERSIST_PAGES" $tmpf
    echo "$ON_PAGES" > "$APPLIED"
    audit_load -c "$T/hp.conf"
    expect_no_finding HUGEPAGE_NOT_PERSISTENT ""
    plan_load
    expect "boot pools $PLAN_BOOT" test "$PLAN_BOOT" = "$(persisted)"
    say "boot 1, node $on grown and recorded with apply --persist, rebooting: $(pools)"
    # numa-vm (--reboots) saves the disk and reboots once this script ends
    : > /run/numa-vm/reboot || fail "cannot ask numa-vm for a reboot"
    result apply-persisted
    exit 0
fi
read -r ON_PAGES < "$APPLIED" 2>/dev/null || ON_PAGES=$half

at_exit "rm -f $tmpf; echo 0 > $(hp_file 0); echo 0 > $(hp_file 1)"
read -r boot1_id < "$BOOT1" 2>/dev/null || boot1_id=""
expect "boot_id $boot_id is the first boot's ($boot1_id): the guest did not reboot" \
    test -n "$boot1_id" -a "$boot1_id" != "$boot_id"
expect "the command line lost hugepages=$BOOT_HUGEPAGES" grep -qw "hugepages=$BOOT_HUGEPAGES" /proc/cmdline
expect "$tmpf did not survive the reboot" test -s $tmpf
tf=$(systemctl show -p ActiveState --value systemd-tmpfiles-setup.service)
log "systemd-tmpfiles-setup.service: $tf"
say "boot 2 (boot_id $boot_id), after the reboot: $(pools)"
expect "node $pn has $(cat "$(hp_file "$pn")") pages after the reboot, expected $PERSIST_PAGES" \
    test "$(cat "$(hp_file "$pn")")" = "$PERSIST_PAGES"
expect "node $on has $(cat "$(hp_file "$on")") pages after the reboot, expected $ON_PAGES (as apply --persist recorded)" \
    test "$(cat "$(hp_file "$on")")" = "$ON_PAGES"
result after-reboot

audit_load -c "$T/hp.conf"
expect_no_finding HUGEPAGE_NOT_PERSISTENT ""
plan_load
expect "boot pools $PLAN_BOOT" test "$PLAN_BOOT" = "$(persisted)"
result after-reboot-audit
