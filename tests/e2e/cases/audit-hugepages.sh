#!/usr/bin/env bash
# HUGEPAGE_FALLBACK: a 16 MiB segment asks for 2 MiB pages and falls back to
# 4 KiB pages, as databases do, when the pool is one page short (7 pages);
# with 8 pages it gets them and nothing is raised.
# HUGEPAGE_NOT_PERMITTED: beside each, the same segment asked for by user
# nobody (no capability). With vm.hugetlb_shm_group = nobody's group it has
# the right (the short pool alone makes it fall back): not raised. With
# vm.hugetlb_shm_group = 0 the 6.1 kernel refuses it SHM_HUGETLB (EPERM)
# whatever its memlock limit and it sits in 4 KiB pages: raised. root
# (CAP_IPC_LOCK) raises it in neither.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 4
need_ctl
audit_conf "$T/ng.conf"
shm_group=$(cat /proc/sys/vm/hugetlb_shm_group)
at_exit "echo 0 > /proc/sys/vm/nr_hugepages; echo $shm_group > /proc/sys/vm/hugetlb_shm_group"
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
echo 7 > /proc/sys/vm/nr_hugepages
[ "$(cat /proc/sys/vm/nr_hugepages)" = 7 ] || abort "cannot reserve 7 pages"
echo 65534 > /proc/sys/vm/hugetlb_shm_group
wl_start sysv --huge-try -s 16 -p 1 || abort "workload"
[ "$WL_PAGE_KIB" = 4 ] || abort "set-up: the workload got $WL_PAGE_KIB KiB pages from a 7-page pool"
short=unclaimed:shmid-$WL_SHMID root_pid=$WL_PID
wl_start "${nobody[@]}" sysv --huge-try -s 16 -p 1 || abort "workload as nobody"
[ "$WL_PAGE_KIB" = 4 ] || abort "set-up: nobody got $WL_PAGE_KIB KiB pages from a 7-page pool"
grouped=unclaimed:shmid-$WL_SHMID
audit_load --config "$T/ng.conf" || abort "audit"
expect_finding HUGEPAGE_FALLBACK "$short" warning
expect_finding HUGEPAGE_IDLE "" warning
expect_no_finding HUGEPAGE_NOT_PERMITTED "$short"
result one-page-short
expect_finding HUGEPAGE_FALLBACK "$grouped" warning
expect_no_finding HUGEPAGE_NOT_PERMITTED "$grouped"
result permitted-by-group
kill -TERM "$root_pid" "$WL_PID"; wait "$root_pid" "$WL_PID" 2>/dev/null

echo 8 > /proc/sys/vm/nr_hugepages
echo 0 > /proc/sys/vm/hugetlb_shm_group
wl_start sysv --huge-try -s 16 -p 1 || abort "workload"
[ "$WL_PAGE_KIB" = 2048 ] || abort "set-up: the workload got $WL_PAGE_KIB KiB pages from an 8-page pool"
fits=unclaimed:shmid-$WL_SHMID
wl_start "${nobody[@]}" sysv --huge-try -s 16 -p 1 || abort "workload as nobody"
[ "$WL_PAGE_KIB" = 4 ] || abort "set-up: nobody got $WL_PAGE_KIB KiB pages without the right"
denied=unclaimed:shmid-$WL_SHMID
audit_load --config "$T/ng.conf" || abort "audit"
expect_no_finding HUGEPAGE_FALLBACK "$fits"
expect_no_finding HUGEPAGE_IDLE ""
expect_no_finding HUGEPAGE_NOT_PERMITTED "$fits"
result pool-fits
expect_finding HUGEPAGE_NOT_PERMITTED "$denied" warning
expect "the message names uid 65534 and vm.hugetlb_shm_group = 0" \
    jq -e --arg i "$denied" '.findings[] | select(.code == "HUGEPAGE_NOT_PERMITTED" and .instance == $i)
        | .message | test("uid 65534, gid 65534, groups none\\) has neither CAP_IPC_LOCK nor the group vm.hugetlb_shm_group = 0: since Linux 5.16")' \
    "$T/audit.json" > /dev/null
result not-permitted
