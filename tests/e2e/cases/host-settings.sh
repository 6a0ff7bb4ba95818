#!/usr/bin/env bash
# The host settings a database checklist has, each raised and not raised
# live, from the kernel's own files (the case sets them and puts them back):
#  - ZONE_RECLAIM_ON: vm.zone_reclaim_mode = 1 on a multi-node host, and 0;
#  - THP_NOT_AS_VENDOR: an Oracle instance (a process named ora_pmon_HS)
#    under transparent hugepages "always" (Oracle asks for "never"), and
#    under "never";
#  - HUGEPAGE_OVERCOMMIT: a SHM_HUGETLB segment whose pages came from
#    vm.nr_overcommit_hugepages because the persistent pool was empty
#    (HugePages_Surp > 0), and the same overcommit setting with a pool that
#    holds the segment (no surplus page in use).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 3
need_ctl
hn=$HUGE_NODE
thp=/sys/kernel/mm/transparent_hugepage/enabled
zr=/proc/sys/vm/zone_reclaim_mode oc=/proc/sys/vm/nr_overcommit_hugepages
read -r zr_orig < "$zr" && read -r oc_orig < "$oc" || abort "no $zr or $oc"
thp_orig=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$thp")
[ -n "$thp_orig" ] || abort "cannot read $thp"
at_exit "echo $zr_orig > $zr"
at_exit "echo $oc_orig > $oc"
at_exit "echo $thp_orig > $thp"
read_back() { local got; read -r got < "$1"; [ "$got" = "$2" ] || abort "set-up: $1 reads '$got' after writing '$2'"; }
surplus() { awk '/^HugePages_Surp:/ { print $2 }' /proc/meminfo; }   # the kernel's surplus pages in use

# an Oracle instance: a process whose comm is ora_pmon_HS
cp "$(command -v sleep)" "$T/ora_pmon_HS" || abort "cp sleep"
"$T/ora_pmon_HS" 600 > /dev/null 2>&1 & WL_PIDS+=($!)
audit_conf "$T/ng.conf" "$(printf '[instance ORA]\nmatch_comm = ora_*_HS\n')"

# zone_reclaim_mode
echo 1 > "$zr"; read_back "$zr" 1
audit_load --config "$T/ng.conf" || abort "audit"
expect_finding ZONE_RECLAIM_ON "" warning
echo 0 > "$zr"; read_back "$zr" 0
audit_load --config "$T/ng.conf" || abort "audit"
expect_no_finding ZONE_RECLAIM_ON ""
result zone-reclaim

# transparent hugepages against Oracle's "never"
echo always > "$thp" || abort "cannot write $thp"
audit_load --config "$T/ng.conf" || abort "audit"
expect_finding THP_NOT_AS_VENDOR ORA warning
jq -e '[.findings[] | select(.code == "THP_NOT_AS_VENDOR") | .message | test("\"always\".*\"never\"")] | any' \
    "$T/audit.json" > /dev/null || fail "THP_NOT_AS_VENDOR does not name always against never"
echo never > "$thp" || abort "cannot write $thp"
audit_load --config "$T/ng.conf" || abort "audit"
expect_no_finding THP_NOT_AS_VENDOR ORA
result thp-vendor

# surplus hugepages under vm.nr_overcommit_hugepages
for f in /sys/devices/system/node/node*/hugepages/hugepages-2048kB/nr_hugepages; do
    read -r v < "$f"; at_exit "echo $v > $f"; echo 0 > "$f"
done
echo 8 > "$oc"; read_back "$oc" 8
# On CPUs of node hn too: the guest's 6.1 kernel takes surplus pages from
# the node of the CPU that asks (gather_surplus_pages, NUMA_NO_NODE), then
# refuses the segment (ENOMEM) when none of them is on the policy's node;
# on a CPU of another node this fails every time.
wl_start numactl --membind="$hn" --cpunodebind="$hn" -- sysv --huge -s 8 -p 1 || abort "workload"
surp=$(surplus)
[ "${surp:-0}" -gt 0 ] || abort "set-up: no surplus page in use (HugePages_Surp ${surp:-?})"
audit_load --config "$T/ng.conf" || abort "audit"
expect_finding HUGEPAGE_OVERCOMMIT "" warning
jq -e --argjson s "$surp" '[.findings[] | select(.code == "HUGEPAGE_OVERCOMMIT") | .message | test("^\($s) surplus")] | any' \
    "$T/audit.json" > /dev/null || fail "HUGEPAGE_OVERCOMMIT does not count the kernel's $surp surplus pages"
kill "$WL_PID"; wait "$WL_PID" 2> /dev/null
for ((i = 0; i < 150; i++)); do [ "$(surplus)" = 0 ] && break; sleep 0.2; done
set_hugepages "$hn" 8 || abort "cannot reserve 8 pages on node $hn"
wl_start numactl --membind="$hn" --cpunodebind="$hn" -- sysv --huge -s 8 -p 1 || abort "workload"
surp=$(surplus)
[ "$surp" = 0 ] || fail "set-up: $surp surplus pages with a pool of 8"
audit_load --config "$T/ng.conf" || abort "audit"
expect_no_finding HUGEPAGE_OVERCOMMIT ""
result overcommit
