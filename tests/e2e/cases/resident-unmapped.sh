#!/usr/bin/env bash
# Every resident page counts, whether or not a living process maps it.
# Each segment is filled by one process bound 3:1 over two nodes
# (ng-shm-workload --split A,B), which then detaches (--detach): its
# attachers left never touched a page, so their page tables hold none. The
# oracles are the kernel's own: the segment's resident count
# (/proc/sysvipc/shm rss, the file's or the mapping's allocated blocks,
# the nodes' HugePages counters) and the binding (75 % on A, 25 % on B),
# never numaguard's other output. An audit must leave every node's MemFree
# and HugePages_Free and every segment's count as it found them: it never
# allocates a page, not even in a sparse file's holes, and it never
# attaches (nattch and the last attacher's pid stay).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 7
need_ctl
((${#NODE_IDS[@]} >= 2)) || abort "needs two nodes"
A=${NODE_IDS[-1]} B=${NODE_IDS[-2]}     # far from node 0, which holds the kernel

# node_kib NODE KEY: a node's meminfo figure (kB; HugePages_* in pages)
node_kib() { awk -v k="$2:" '$3 == k { print $4 }' "/sys/devices/system/node/node$1/meminfo"; }
# warm [ARGS]: the same audit once unmeasured, so that the measured one
# finds what it reads (its binary, libraries, /proc's dentries) in memory
warm() { "$CTL" segments --json "$@" > /dev/null 2>&1; jq -n 1 > /dev/null; }
free_all() { local n out=""; for n in "${NODE_IDS[@]}"; do out+="$n:$(node_kib "$n" MemFree):$(node_kib "$n" HugePages_Free) "; done; echo "$out"; }
# no_allocation BEFORE AFTER: MemFree within 16 MiB on every node (the
# kernel's own noise, and the page cache of what the audit runs: each
# measured audit follows a warm-up one), HugePages_Free equal. The exact
# oracle is the segment's own count, checked beside it. The sanitizer
# build's allocator maps and frees far more than the plain one, and what it
# gives back at exit waits in the per-CPU page lists, which MemFree does not
# count: 48 MiB of room there.
slack=16384
grep -q __asan_init "$CTL" 2>/dev/null && slack=49152
no_allocation() {
    local b a n mb ma hb ha
    for b in $1; do
        n=${b%%:*}; mb=$(cut -d: -f2 <<<"$b"); hb=$(cut -d: -f3 <<<"$b")
        a=$(tr ' ' '\n' <<<"$2" | grep "^$n:"); ma=$(cut -d: -f2 <<<"$a"); ha=$(cut -d: -f3 <<<"$a")
        (( mb - ma <= slack )) || fail "node $n: MemFree fell by $(( (mb - ma) / 1024 )) MiB during the audit"
        [ "$hb" = "$ha" ] || fail "node $n: HugePages_Free went from $hb to $ha during the audit"
    done
}
# sysv_field SHMID COLUMN: /proc/sysvipc/shm's key shmid perms size cpid
# lpid nattch uid gid cuid cgid atime dtime ctime rss swap, 1-based
sysv_field() {
    awk -v id="$1" -v c="$2" '$2 == id { print $c }' /proc/sysvipc/shm
}
# kernel_count: the segment's resident bytes as the kernel counts them
kernel_count() {
    case $1 in
    sysv) echo $(( $(sysv_field "$WL_SHMID" 15) )) ;;      # rss, bytes
    file) echo $(( $(stat -c %b "$2") * 512 )) ;;
    anon) echo $(( $(stat -L -c %b "$2") * 512 )) ;;
    esac
}
# check_3to1 WHAT: SEG_* within 2 points of 75/25 over A,B
check_3to1() {
    local total a b pa
    total=$(seg_total_bytes); a=$(seg_node_bytes "$A"); b=$(seg_node_bytes "$B")
    ((total > 0)) || { fail "$1: nothing placed"; return; }
    pa=$(( a * 10000 / total ))
    log "$1: numaguard N$A=$a N$B=$b of $total (want 75 % / 25 %)"
    (( pa >= 7300 && pa <= 7700 )) || fail "$1: node $A holds $((pa / 100)).$((pa % 100 / 10)) %, the binding put 75 % there"
    (( a + b == total )) || fail "$1: $((total - a - b)) bytes on other nodes"
}
# check_resident WHAT KERNEL: numaguard's resident within 2 % of the kernel's
check_resident() {
    log "$1: resident per numaguard $SEG_resident_bytes, per the kernel $2 (method $SEG_method, resident from $SEG_resident_source, placement from $SEG_placement_source)"
    (( $2 > 0 )) || { fail "$1: the kernel counts nothing resident"; return; }
    within2 "$SEG_resident_bytes" "$2" || fail "$1: numaguard says $SEG_resident_bytes resident, the kernel $2"
}

run_kind() {   # run_kind sysv|file|anon
    local kind=$1 f="" mf="" before after lpid0 lpid1 nat0 nat1 counted
    [ "$kind" = file ] && { f=/dev/shm/ng_e2e_detached; rm -f "$f"; at_exit "rm -f $f"; }
    wl_start $kind $f -s 64 -p 2 --split "$A,$B" --detach || { abort "$kind workload"; }
    case $kind in
    sysv) sel="(.kind == \"sysv\" and .shmid == $WL_SHMID)" ;;
    file) sel="(.kind == \"file\" and .name == \"$f\")" ;;
    anon) sel="(.kind == \"anon_shared\" and (.pids | any(. == ${WL_CHILDREN%%,*})))" ;;
    esac
    if [ "$kind" = anon ]; then
        local child=${WL_CHILDREN%%,*} range
        range=$(awk '/dev\/zero/ { print $1; exit }' "/proc/$child/maps")
        mf=/proc/$child/map_files/$range
    fi
    counted=$(kernel_count "$kind" "${f:-$mf}")
    [ "$kind" = sysv ] && { lpid0=$(sysv_field "$WL_SHMID" 6); nat0=$(sysv_field "$WL_SHMID" 7); }
    warm; before=$(free_all)
    seg_select "$sel" || { result; return; }
    after=$(free_all)
    expect_field method sampled
    expect_field placement_source segment
    check_resident "$kind" "$counted"
    check_3to1 "$kind"
    no_allocation "$before" "$after"
    [ "$(kernel_count "$kind" "${f:-$mf}")" = "$counted" ] || fail "$kind: the kernel's count moved from $counted during the audit"
    if [ "$kind" = sysv ]; then
        lpid1=$(sysv_field "$WL_SHMID" 6); nat1=$(sysv_field "$WL_SHMID" 7)
        [ "$lpid0/$nat0" = "$lpid1/$nat1" ] || fail "sysv: the audit changed lpid/nattch from $lpid0/$nat0 to $lpid1/$nat1"
    fi
    result "$kind"
    kill "$WL_PID" 2>/dev/null; wait "$WL_PID" 2>/dev/null
}

run_kind sysv
run_kind file
run_kind anon

# --exact asks every page with data: 75/25 to the page (64 MiB SysV again)
wl_start sysv -s 64 -p 2 --split "$A,$B" --detach || abort "exact workload"
counted=$(kernel_count sysv)
warm --exact; before=$(free_all)
SEG_ARGS=--exact seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)" || abort "exact: segment"
after=$(free_all)
expect_field method exact
expect_field placement_source segment
a=$(seg_node_bytes "$A") b=$(seg_node_bytes "$B")
[ "$a/$b" = "$((48 << 20))/$((16 << 20))" ] || fail "exact: N$A=$a N$B=$b, the binding put 48 MiB and 16 MiB there"
no_allocation "$before" "$after"
[ "$(kernel_count sysv)" = "$counted" ] || fail "exact: the kernel's count moved from $counted during the audit"
result exact
kill "$WL_PID" 2>/dev/null; wait "$WL_PID" 2>/dev/null

# file_nobody_maps NAME FILE: the file's resident bytes per numaguard, exact
# and sampled, are its blocks, on node A; the audits allocate nothing.
file_nobody_maps() {
    local name=$1 f=$2 blocks0 before after
    blocks0=$(stat -c %b "$f")
    warm --exact; warm; before=$(free_all)
    SEG_ARGS=--exact seg_select "(.kind == \"file\" and .name == \"$f\")" || abort "$name: segment"
    check_resident "$name-exact" $((blocks0 * 512))
    seg_select "(.kind == \"file\" and .name == \"$f\")" || abort "$name: segment"
    after=$(free_all)
    [ "$(stat -c %b "$f")" = "$blocks0" ] || fail "$name: the file's blocks went from $blocks0 to $(stat -c %b "$f")"
    no_allocation "$before" "$after"
    check_resident "$name" $((blocks0 * 512))
    expect_on_node "$A"
    result "$name"
}

# A sparse file: 512 MiB long, 8 MiB of data at 300 MiB, nobody maps it.
f=/dev/shm/ng_e2e_sparse
rm -f "$f"; at_exit "rm -f $f"
truncate -s 512M "$f" && numactl --membind="$A" dd if=/dev/zero of="$f" bs=1M count=8 seek=300 conv=notrunc status=none ||
    abort "sparse file"
file_nobody_maps sparse "$f"

# Pages fallocate(2) made and nobody wrote, as PostgreSQL makes its dynamic
# shared memory: 8 MiB written, 16 MiB fallocated at 100 MiB of a 256 MiB
# file. SEEK_DATA and mincore pass the 16 MiB over; the file's blocks (and
# the node's Shmem) count them: numaguard must count all 24 MiB, on node A,
# and allocate nothing while it probes the holes around them.
f=/dev/shm/ng_e2e_falloc
rm -f "$f"; at_exit "rm -f $f"
truncate -s 256M "$f" && numactl --membind="$A" dd if=/dev/zero of="$f" bs=1M count=8 conv=notrunc status=none &&
    numactl --membind="$A" fallocate -o 100M -l 16M "$f" || abort "fallocated file"
(( $(stat -c %b "$f") * 512 == 24 << 20 )) || fail "fallocated: the kernel counts $(( $(stat -c %b "$f") * 512 )) bytes, 24 MiB expected"
file_nobody_maps fallocated "$f"

# Hugetlb: the pool's per-node counters are the placement when the segment
# is all its pools hold; the audit takes no page from a pool.
set_hugepages "$A" 32 || abort "pool on $A"
set_hugepages "$B" 16 || abort "pool on $B"
wl_start sysv --huge -s 64 -p 2 --split "$A,$B" --detach || abort "hugetlb workload"
counted=$(kernel_count sysv)    # rss: the pages the segment holds, 2 MiB each
warm; before=$(free_all)
seg_select "(.kind == \"sysv\" and .shmid == $WL_SHMID)" || abort "hugetlb: segment"
after=$(free_all)
# Before Linux 5.14 fork copied the page tables of a shared hugetlb
# mapping (copy_page_range skipped only mappings without VM_HUGETLB), so
# the attachers forked after the fill map every page and their numa_maps
# is an exact source too: 'attacher' is right where a child's numa_maps
# shows all 32 pages, 'pool' where it shows none.
child=${WL_CHILDREN%%,*}
mapped=$(awk '/ huge / && /SYSV/ { for (i = 2; i <= NF; i++) if ($i ~ /^N[0-9]+=/) { split($i, kv, "="); t += kv[2] } } END { print t + 0 }' "/proc/$child/numa_maps")
log "hugetlb: the attacher $child maps $mapped of the segment's 32 pages (numa_maps)"
if ((mapped == 32)); then expect_field placement_source attacher; else expect_field placement_source pool; fi
expect_field resident_source counter
a=$(seg_node_bytes "$A") b=$(seg_node_bytes "$B")
log "hugetlb: HugePages_Total/Free N$A: $(node_kib "$A" HugePages_Total)/$(node_kib "$A" HugePages_Free), N$B: $(node_kib "$B" HugePages_Total)/$(node_kib "$B" HugePages_Free)"
[ "$a/$b" = "$((48 << 20))/$((16 << 20))" ] || fail "hugetlb: N$A=$a N$B=$b, the binding put 24 and 8 pages there"
check_resident hugetlb "$counted"
no_allocation "$before" "$after"
[ "$(kernel_count sysv)" = "$counted" ] || fail "hugetlb: the kernel's count moved from $counted during the audit"
result hugetlb
