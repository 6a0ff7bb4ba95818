#!/usr/bin/env bash
# HUGEPAGE_FALLBACK: a 16 MiB segment asks for 2 MiB pages and falls back to
# 4 KiB pages, as databases do, when the pool is one page short (7 pages);
# with 8 pages it gets them and nothing is raised.
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 2
need_ctl
audit_conf "$T/ng.conf"
at_exit "echo 0 > /proc/sys/vm/nr_hugepages"
echo 7 > /proc/sys/vm/nr_hugepages
[ "$(cat /proc/sys/vm/nr_hugepages)" = 7 ] || abort "cannot reserve 7 pages"
wl_start sysv --huge-try -s 16 -p 1 || abort "workload"
[ "$WL_PAGE_KIB" = 4 ] || abort "set-up: the workload got $WL_PAGE_KIB KiB pages from a 7-page pool"
short=unclaimed:shmid-$WL_SHMID
audit_load --config "$T/ng.conf" || abort "audit"
expect_finding HUGEPAGE_FALLBACK "$short" warning
expect_finding HUGEPAGE_IDLE "" warning
result one-page-short
kill -TERM "$WL_PID"; wait "$WL_PID" 2>/dev/null
echo 8 > /proc/sys/vm/nr_hugepages
wl_start sysv --huge-try -s 16 -p 1 || abort "workload"
[ "$WL_PAGE_KIB" = 2048 ] || abort "set-up: the workload got $WL_PAGE_KIB KiB pages from an 8-page pool"
fits=unclaimed:shmid-$WL_SHMID
audit_load --config "$T/ng.conf" || abort "audit"
expect_no_finding HUGEPAGE_FALLBACK "$fits"
expect_no_finding HUGEPAGE_IDLE ""
result pool-fits
