# bench/axes.sh -- sourced by bench/run-bench (uses its helpers): the audit
# of a sparse /dev/shm file, numaguardd's steady poll against the number
# of processes attached to one SGA, and its poll with a /dev/shm filled by
# anyone. See bench/README.md.

SPARSE_FILE=/dev/shm/numaguard-bench-sparse
DENSE_FILE=/dev/shm/numaguard-bench-dense
SHM_SIZE_ORIG=""        # /dev/shm's size= when the run raised it

# ---- a sparse /dev/shm file ------------------------------------------------

restore_dev_shm() {
        rm -f "$SPARSE_FILE" "$DENSE_FILE"
        if [ -n "$SHM_SIZE_ORIG" ]; then
                mount -o remount,size="$SHM_SIZE_ORIG" /dev/shm || loud "could not restore /dev/shm size=$SHM_SIZE_ORIG"
                say "/dev/shm size restored to $SHM_SIZE_ORIG"
                SHM_SIZE_ORIG=""
        fi
}

# /dev/shm must take 1 GiB of data (and some room): raises its size= for
# the run when it cannot.
ensure_dev_shm() {
        local need_kib=$((1100 * 1024)) avail size
        avail=$(df -k --output=avail /dev/shm | tail -1 | tr -d ' ')
        [ "$avail" -ge "$need_kib" ] && return 0
        size=$(findmnt -no OPTIONS /dev/shm | tr ',' '\n' | sed -n 's/^size=//p')
        SHM_SIZE_ORIG=${size:-50%}
        mount -o remount,size=$(( $(df -k --output=size /dev/shm | tail -1) + need_kib ))k /dev/shm ||
                { SHM_SIZE_ORIG=""; return 1; }
        say "/dev/shm size raised from $SHM_SIZE_ORIG for the run"
}

# seg_source FILE: the placement_source numaguardctl segments gives FILE.
seg_source() {
        "$CTL" segments --json 2>/dev/null |
                jq -r --arg f "$1" '[.segments[] | select(.name == $f)][0] | "\(.placement_source // "missing") \(.resident_bytes // 0)"' 2>/dev/null
}

# audit_file FILE: measures one audit with FILE in /dev/shm; sets A_CPU and
# SEEN (placement_source and resident bytes of FILE).
audit_file() {
        SEEN=$(seg_source "$1")
        [ "${SEEN%% *}" = segment ] || loud "numaguardctl segments shows $1 as: ${SEEN:-nothing} (placement_source segment expected)"
        measure_audit
}

# The audit (numaguardctl audit --json, sampled, live) with a 1 TiB file
# holding 1 GiB of data halfway (512 GiB in) against one with a 1 GiB file
# fully resident, each alone in /dev/shm: tier 1 sampling costs the sample
# budget, not the segment's size. Sets SPARSE_CPU DENSE_CPU SPARSE_SEEN
# DENSE_SEEN SPARSE_SKIP, and NOFILE_CPU (the same audit with neither file:
# the rest of the host).
SPARSE_CPU=- DENSE_CPU=- NOFILE_CPU=- SPARSE_SEEN="" DENSE_SEEN="" SPARSE_SKIP=""
sparse_audit() {
        if ! ensure_dev_shm; then
                SPARSE_SKIP="/dev/shm cannot hold 1 GiB"
                loud "SKIPPED: sparse /dev/shm file: $SPARSE_SKIP"
                return 0
        fi
        rm -f "$SPARSE_FILE" "$DENSE_FILE"
        measure_audit
        NOFILE_CPU=$A_CPU
        say "audit with neither file: cpu ${A_CPU}s (runs $A_RUNS)"
        truncate -s 1T "$SPARSE_FILE"
        dd if=/dev/zero of="$SPARSE_FILE" bs=1M count=1024 seek=$((512 * 1024)) conv=notrunc status=none
        say "sparse: $(du -k --apparent-size "$SPARSE_FILE" | cut -f1) KiB apparent, $(du -k "$SPARSE_FILE" | cut -f1) KiB allocated"
        audit_file "$SPARSE_FILE"
        SPARSE_CPU=$A_CPU SPARSE_SEEN=$SEEN
        say "audit with a 1 TiB /dev/shm file, 1 GiB resident: cpu ${A_CPU}s (runs $A_RUNS), the file seen as: $SEEN"
        rm -f "$SPARSE_FILE"
        dd if=/dev/zero of="$DENSE_FILE" bs=1M count=1024 status=none
        audit_file "$DENSE_FILE"
        DENSE_CPU=$A_CPU DENSE_SEEN=$SEEN
        say "audit with a 1 GiB /dev/shm file, all resident: cpu ${A_CPU}s (runs $A_RUNS), the file seen as: $SEEN"
        restore_dev_shm
}

sparse_report() {
        if [ -n "$SPARSE_SKIP" ]; then
                echo "target (audit with a 1 TiB sparse /dev/shm file within 1.5x of a 1 GiB one): not measured (SKIPPED: $SPARSE_SKIP)"
                return 0
        fi
        local r
        r=$(ratio "$SPARSE_CPU" "$DENSE_CPU")
        echo "audit with a /dev/shm file (CPU seconds, median of $BENCH_REPEAT): 1 TiB sparse, 1 GiB resident: $SPARSE_CPU ($SPARSE_SEEN); 1 GiB all resident: $DENSE_CPU ($DENSE_SEEN); ratio $r; neither file: $NOFILE_CPU"
        if [ "${SPARSE_SEEN%% *}" != segment ] || [ "${DENSE_SEEN%% *}" != segment ]; then
                echo "target (audit with a 1 TiB sparse /dev/shm file within 1.5x of a 1 GiB one: ${r}x): NOT met (a file not placed by the segment itself)"
        else
                target "audit with a 1 TiB sparse /dev/shm file within 1.5x of a 1 GiB one: ${r}x" "$r" 1.500001 "<"
        fi
        echo "sparse_vs_dense_audit: $r"
}

# ---- processes attached to one SGA -----------------------------------------

# numaguardd's steady poll (full_scan_every = 100000, interval 300 ms, as
# the daemon-poll axis runs it) with A processes attached to one 64 MiB
# SysV segment, each having populated 1 MiB of it (dedicated servers), for A
# in BENCH_A: with the default attacher_read_budget, and with 0 (every attacher's
# CPU time read every poll, as before the budget). Then the CPU share per
# node by turns against every thread's (bench/cpu-shares) with the largest
# A attached, every 100th of them using CPU time.
declare -A ATT_BUDGET ATT_ALL ATT_READS ATT_EVERY ATT_C ATT_S ATT_ALL_C ATT_ALL_S ATT_ACC
ATT_SHARES="" ATT_SHARES_SKIP=""
att_mean() { awk '{s = 0; n = 0; for (i = 1; i <= NF; i++) if ($i != "-") { s += $i; n++ }
                   if (!n) print "-"; else printf "%.6f", s / n}' <<<"$1"; }
# Two passes, the A values up and then down (the farm shrinks), averaged:
# a loaded host's drift then does not count against the A measured last.
attachers_axis() {
        local a f out cur=0
        ensure_shm_limits $((64 << 20))
        FARM_OPTS="-t 1"
        start_farm_mib 64 4k || die "could not create the 64 MiB segment of the attachers axis"
        for a in $ATT_ORDER $(tr ' ' '\n' <<<"$ATT_ORDER" | grep . | tac | tr '\n' ' '); do
                if [ "$a" -ge "$cur" ]; then grow_farm "$a"; else grow_farm "$a" shrink; fi
                cur=$a
                DAEMON_CONF_EXTRA=""
                daemon_polls 100000
                ATT_ACC["$a B"]+="$D_CPU " ATT_ACC["$a C"]+="$D_CPU_C " ATT_ACC["$a S"]+="$D_CPU_S "
                ATT_READS[$a]=$D_CPU_READS ATT_EVERY[$a]=$D_CPU_EVERY f=$D_CPU
                DAEMON_CONF_EXTRA=$'attacher_read_budget = 0\n'
                daemon_polls 100000
                DAEMON_CONF_EXTRA=""
                ATT_ACC["$a A"]+="$D_CPU " ATT_ACC["$a AC"]+="$D_CPU_C " ATT_ACC["$a AS"]+="$D_CPU_S "
                say "A=$a attachers: steady poll ${f}s with attacher_read_budget = 100 (the CPU time of ${ATT_READS[$a]} processes read a poll, each every ${ATT_EVERY[$a]} polls), ${D_CPU}s with 0 (every one)"
        done
        for a in $ATT_ORDER; do
                ATT_BUDGET[$a]=$(att_mean "${ATT_ACC["$a B"]}") ATT_C[$a]=$(att_mean "${ATT_ACC["$a C"]}")
                ATT_S[$a]=$(att_mean "${ATT_ACC["$a S"]}") ATT_ALL[$a]=$(att_mean "${ATT_ACC["$a A"]}")
                ATT_ALL_C[$a]=$(att_mean "${ATT_ACC["$a AC"]}") ATT_ALL_S[$a]=$(att_mean "${ATT_ACC["$a AS"]}")
        done
        stop_farm
        a=$(awk '{print $NF}' <<<"$ATT_ORDER")
        if [ ! -x "$SHARES" ]; then
                ATT_SHARES_SKIP="$SHARES not built (make $SHARES; make bench builds it)"
                loud "SKIPPED: CPU shares by turns: $ATT_SHARES_SKIP"
                FARM_OPTS=""
                return 0
        fi
        FARM_OPTS="-t 1 -c"
        start_farm_mib 64 4k || die "could not create the 64 MiB segment of the attachers axis"
        grow_farm "$a"
        FARM_OPTS=""
        say "CPU shares by turns: $a attachers, every 100th using CPU time; $BENCH_SHARE_POLLS polls 500 ms apart ($(date +%T))"
        out=$("$SHARES" -s "$SHMID" -b 100 -n "$BENCH_SHARE_POLLS" -i 500) || loud "cpu-shares: exit $?: $out"
        ATT_SHARES=$out
        say "$out"
        stop_farm
}

attachers_report() {
        local lo hi g ga d
        lo=$(awk '{print $1}' <<<"$ATT_ORDER")
        hi=$(awk '{print $NF}' <<<"$ATT_ORDER")
        echo
        echo "numaguardd steady poll CPU seconds (mean of $BENCH_POLLS polls after the first, full_scan_every = 100000) with A processes"
        echo "attached to one 64 MiB SysV segment (1 MiB of it populated by each): budget = attacher_read_budget 100 (the default),"
        echo "all = attacher_read_budget 0 (every attacher's stat read every poll); reads = attachers whose CPU time a poll read, every = polls per turn"
        echo "(_counters / _sampling: the polls that read counters only, and the one in sample_every that also samples);"
        echo "each A measured in two passes, the A values up and then down, averaged"
        printf '%6s %17s %14s %6s %6s %18s %18s %15s %15s\n' A budget_poll_cpu_s all_poll_cpu_s reads every \
                budget_counters_s budget_sampling_s all_counters_s all_sampling_s
        for a in $ATT_ORDER; do
                printf '%6s %17s %14s %6s %6s %18s %18s %15s %15s\n' "$a" "${ATT_BUDGET[$a]}" "${ATT_ALL[$a]}" \
                        "${ATT_READS[$a]}" "${ATT_EVERY[$a]}" "${ATT_C[$a]}" "${ATT_S[$a]}" "${ATT_ALL_C[$a]}" "${ATT_ALL_S[$a]}"
        done
        g=$(ratio "${ATT_BUDGET[$hi]:--}" "${ATT_BUDGET[$lo]:--}")
        ga=$(ratio "${ATT_ALL[$hi]:--}" "${ATT_ALL[$lo]:--}")
        target "steady poll CPU grows at most 2x from A=$lo to A=$hi attachers: ${g}x (every attacher read: ${ga}x)" "$g" 2.000001 "<"
        if [ -n "$ATT_SHARES_SKIP" ]; then
                echo "target (CPU share per node by turns within 5 points of every thread's): not measured (SKIPPED: $ATT_SHARES_SKIP)"
        elif [[ $ATT_SHARES == shares* ]]; then
                echo "$ATT_SHARES"
                d=$(field run_diff_points "$ATT_SHARES")
                target "CPU share per node by turns within 5 points of every thread's over the run: $d points (pseudo=1: one node per CPU)" "$d" 5.000001 "<"
        else
                echo "target (CPU share per node by turns within 5 points of every thread's): NOT met (cpu-shares said: ${ATT_SHARES:-nothing})"
        fi
        echo "attacher_poll_growth_${lo}_to_${hi}: $g"
        echo "attacher_poll_growth_${lo}_to_${hi}_all: $ga"
        echo "cpu_share_diff_points: $(field run_diff_points "$ATT_SHARES")"
}

# ---- a /dev/shm filled by anyone ---------------------------------------------

# numaguardd (audit mode, interval 300 ms, as the daemon-poll axis runs it)
# with a /dev/shm of its own (bench/shm-flood: a private mount namespace, a
# fresh tmpfs) holding BENCH_FLOOD empty files, against the same /dev/shm
# empty: the steady poll (full_scan_every = 100000: the picture's copy of
# each mount's last listing serves while nothing changed there) and the
# listing poll (full_scan_every = 1: every poll lists every mount again, as
# the full_scan_every-th poll does). Sets FLOOD_STEADY_0 FLOOD_STEADY_N
# FLOOD_LIST_0 FLOOD_LIST_N (mean poll CPU seconds) and FLOOD_SKIP.
FLOOD_STEADY_0=- FLOOD_STEADY_N=- FLOOD_LIST_0=- FLOOD_LIST_N=- FLOOD_SKIP=""
flood_axis() {
        if ! "$FLOOD" 0 true 2>"$TMP/flood.err"; then
                FLOOD_SKIP="no /dev/shm of its own here: $(tail -1 "$TMP/flood.err")"
                loud "SKIPPED: /dev/shm flood: $FLOOD_SKIP"
                return 0
        fi
        DAEMON_CONF_EXTRA=""
        daemon_polls 100000 "$FLOOD" 0
        FLOOD_STEADY_0=$D_CPU
        daemon_polls 100000 "$FLOOD" "$BENCH_FLOOD"
        FLOOD_STEADY_N=$D_CPU
        say "/dev/shm flood: steady poll ${FLOOD_STEADY_0}s with no file, ${FLOOD_STEADY_N}s with $BENCH_FLOOD small files"
        daemon_polls 1 "$FLOOD" 0
        FLOOD_LIST_0=$D_CPU
        daemon_polls 1 "$FLOOD" "$BENCH_FLOOD"
        FLOOD_LIST_N=$D_CPU
        say "/dev/shm flood: listing poll ${FLOOD_LIST_0}s with no file, ${FLOOD_LIST_N}s with $BENCH_FLOOD small files"
}

flood_report() {
        local r rl
        echo
        if [ -n "$FLOOD_SKIP" ]; then
                echo "target (a steady poll with $BENCH_FLOOD small files in /dev/shm at most 2x one without): not measured (SKIPPED: $FLOOD_SKIP)"
                echo "flood_poll_ratio: -"
                return 0
        fi
        r=$(ratio "$FLOOD_STEADY_N" "$FLOOD_STEADY_0")
        rl=$(ratio "$FLOOD_LIST_N" "$FLOOD_LIST_0")
        echo "numaguardd poll CPU seconds (mean of $BENCH_POLLS polls after the first) with $BENCH_FLOOD empty files in a /dev/shm of its own"
        echo "and with that /dev/shm empty: steady = full_scan_every 100000 (the copy of the last listing serves), listing ="
        echo "full_scan_every 1 (every poll lists /dev/shm and reads every process again, as the full_scan_every-th poll does)"
        printf '%10s %14s %14s %8s\n' poll no_file_cpu_s flood_cpu_s ratio
        printf '%10s %14s %14s %8s\n' steady "$FLOOD_STEADY_0" "$FLOOD_STEADY_N" "$r"
        printf '%10s %14s %14s %8s\n' listing "$FLOOD_LIST_0" "$FLOOD_LIST_N" "$rl"
        target "a steady poll with $BENCH_FLOOD small files in /dev/shm costs at most 2x one without: ${r}x" "$r" 2.000001 "<"
        echo "flood_poll_ratio: $r"
        echo "flood_listing_poll_ratio: $rl"
}
