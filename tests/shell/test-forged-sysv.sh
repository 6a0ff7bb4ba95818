#!/usr/bin/env bash
# A user cannot forge the placement of root's SysV segment. Root makes an
# 8 MiB segment (mode 0644, every page touched) and keeps an attacher; an
# unprivileged user (65534, started before it: the lower pid, asked first)
# attaches the segment read-only and swaps that attach, thousands of times
# a second, for a mapping at the same address of a file of its own
# whose inode number is the shmid (tests/helpers/ng-shm-swap.c), so that
# the file numaguard opens through /proc/PID/map_files may not be the one
# the maps line named, and the maps line may itself be the user's file:
#   file        a file on a tmpfs of its own (another device);
#   memfd       a memfd, on the segment's own device (only its name differs);
#   sysv-name   the tmpfs file named SYSV<key> and unlinked: its maps line
#               reads like the segment's, on another device;
#   sysv-name-touch        the same with every page of the file written
#               and mapped (--touch): the user's page tables hold pages of
#               its own where the segment's would be, and the file has a
#               shared policy of its own ("prefer:N"; the segment's is
#               "default");
#   sysv-name-touch-alone  the same with root's attacher gone before the
#               rounds: the user's process is the only attacher.
# The user's process is of neither root nor the segment's owner: its maps
# lines, map_files links and page tables never speak for the segment.
# Each runs NG_FORGED_SECONDS (default 5) of `segments --json` rounds (every
# 8th --exact; at most NG_FORGED_ROUNDS, default 400), and on until 20 ran
# and one raced (below), within six times that. The segment must
# never be reported with other resident bytes or another placement than
# the kernel's (/proc/sysvipc/shm's rss, the numa_maps of root's attacher,
# read before the rounds), nor through the user's process: 0 forged rounds.
# On one node a forged placement may show the kernel's nodes; it shows as
# the user's pid the representative (the user never reads the segment: a
# placement from its page tables is its own file's, and a sample through
# it may be), or as the user's file's policy. With root's attacher present
# it serves every round; a round whose attachers include the user's pid
# (its maps line read as the segment) and which root's attacher served
# "raced": there must be some, or the user was never there to be taken.
# With the user alone the placement is unknown in every round, and says
# why: the user's pid in untrusted_pids ("declined": some must).
# Root only; leaves no segment, process or mount behind (the tmpfs is in
# no namespace and goes with the swapper).
# BUILD: build directory (default build); NG_FORGED_VARIANTS: the variants
# to run (default all five).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl SW=$B/tests/helpers/ng-shm-swap
VARIANTS=${NG_FORGED_VARIANTS:-file memfd sysv-name sysv-name-touch sysv-name-touch-alone}
set -f; v=($VARIANTS); set +f; echo "1..$((${#v[@]} * 3 + 1))"
TAP_PREFIX=forged-sysv; . "$SRC/tests/shell/lib.sh"
for x in "$CTL" "$SW"; do [ -x "$x" ] || { echo "not ok forged-sysv: $x not built"; exit 1; }; done
[ "$(id -u)" = 0 ] || skip_all "needs root (a segment of root's, a user's process to watch)"
command -v jq > /dev/null || skip_all "jq not installed"
SECS=${NG_FORGED_SECONDS:-5} MINR=20 MAXR=${NG_FORGED_ROUNDS:-400} DWELL=${NG_FORGED_DWELL_US:-20}
USER_ID=65534
tmp=$(mktemp -d /tmp/ng-forged.XXXXXX)
chmod 711 "$tmp"
mkdir "$tmp/u" && chown $USER_ID:$USER_ID "$tmp/u"      # the user's ready file
swpid="" hopid="" shmid="" made="" J_ID="" J_SW="" J_HO="" J_REF=""
stop() {        # stop PID: SIGTERM, then reaped
        [ -n "$1" ] && kill "$1" 2>/dev/null && wait "$1" 2>/dev/null
}
cleanup() {
        stop "$swpid"; stop "$hopid"
        [ -n "$shmid" ] && ipcrm -m "$shmid" 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# wait_ready FILE PID: 0 once FILE exists, 1 when PID exited first or 20 s passed
wait_ready() {
        local i
        for ((i = 0; i < 400; i++)); do
                [ -s "$1" ] && return 0
                kill -0 "$2" 2>/dev/null || return 1
                sleep 0.05
        done
        return 1
}

# A round's record of the victim (one `segments --json` output on stdin),
# classified: forged (other resident bytes or nodes, the user's file's
# policy, the user's page tables: it never reads the segment), user (the
# segment through the user's process), caught (root's attacher served and
# the user's pid is among the attachers), holder (root's attacher served),
# declined (no placement, the user's pid named untrusted), unknown (no
# placement, no reason), missing.
classify='[.segments[] | select(.kind == "sysv" and .shmid == $id)] as $s
        | if ($s | length) != 1 then "missing"
          else $s[0] as $g
          | if $g.resident_bytes != $bytes then "forged"
            elif $g.policy != null and $g.policy != "default" then "forged"
            elif $g.representative_pid == $sw and $g.placement_source == "attacher" and ($g.nodes | length) > 0
                then "forged"
            elif ($g.nodes | sort_by(.id)) == $ref then
                (if $g.representative_pid == $sw then "user"
                 elif $g.representative_pid == $ho and ($g.pids | index($sw)) != null then "caught"
                 else "holder" end)
            elif $g.nodes == [] and ($g.placement_coverage // 0) == 0 then
                (if (($g.untrusted_pids // []) | index($sw)) != null then "declined" else "unknown" end)
            else "forged" end
          end'

# judge FILE...: the class of each round given (J_*: the variant's shmid,
# pids and the kernel's placement); judge_rounds FROM TO: of rounds FROM
# to TO - 1, in order (a failed round left no file).
judge() {
        jq -r --argjson id "$J_ID" --argjson sw "$J_SW" --argjson ho "$J_HO" --argjson bytes $((8 << 20)) \
                --argjson ref "$J_REF" "$classify" "$@"
}
judge_rounds() {
        local k files=()
        for ((k = $1; k < $2; k++)); do
                [ -e "$tmp/r/$k.json" ] && files+=("$tmp/r/$k.json")
        done
        ((${#files[@]})) && judge "${files[@]}"
}

# variant NAME: three results (started, none forged, raced)
variant() {
        local name=$1 opts=() vopts=() out rc i alone=0
        case $name in
        memfd) opts=(--memfd) vopts=(--memfd) ;;
        sysv-name) opts=(--sysv-name) ;;
        sysv-name-touch) opts=(--sysv-name --touch) ;;
        sysv-name-touch-alone) opts=(--sysv-name --touch) alone=1 ;;
        esac
        rm -f "$tmp"/*.ready "$tmp"/u/* "$tmp/forged.json" "$tmp/failed.err"
        out=$("$SW" victim "${vopts[@]}" 2> "$tmp/victim.err"); rc=$?
        if [ $rc = 77 ]; then
                for c in started none raced; do echo "skip forged-sysv-$name-$c: $(tail -1 "$tmp/victim.err")"; done
                return
        fi
        [[ $out =~ ^shmid=([0-9]+)\  ]] && shmid=${BASH_REMATCH[1]} made+=" ${BASH_REMATCH[1]}"
        if [ $rc != 0 ] || [ -z "$shmid" ]; then
                fail "$name-started" "victim exited $rc: $(tail -1 "$tmp/victim.err")"
                fail "$name-none" "not run"; fail "$name-raced" "not run"
                return
        fi
        "$SW" swap "$shmid" --uid $USER_ID --gid $USER_ID --dwell "$DWELL" "${opts[@]}" -r "$tmp/u/sw.ready" \
                > "$tmp/sw.out" 2> "$tmp/sw.err" &
        swpid=$!
        if ! wait_ready "$tmp/u/sw.ready" "$swpid"; then
                wait "$swpid"; rc=$?; swpid=""
                ipcrm -m "$shmid"; shmid=""
                if [ $rc = 77 ]; then
                        for c in started none raced; do echo "skip forged-sysv-$name-$c: $(tail -1 "$tmp/sw.err")"; done
                else
                        fail "$name-started" "swapper exited $rc: $(tail -1 "$tmp/sw.err")"
                        fail "$name-none" "not run"; fail "$name-raced" "not run"
                fi
                return
        fi
        # root's attacher after the user's: a higher pid, asked second
        # (pids wrap: a lower one is started again)
        for ((i = 0; i < 5; i++)); do
                "$SW" hold "$shmid" -r "$tmp/ho.ready" 2> "$tmp/ho.err" &
                hopid=$!
                wait_ready "$tmp/ho.ready" "$hopid" && [ "$hopid" -gt "$swpid" ] && break
                stop "$hopid"; hopid=""; rm -f "$tmp/ho.ready"
        done
        # the kernel's placement: root's attacher's numa_maps line
        local addr pages ref=null
        addr=$(sed -n 's/.* addr=0x\([0-9a-f]*\) .*/\1/p' "$tmp/ho.ready" 2>/dev/null)
        [ -n "$hopid" ] && [ -n "$addr" ] && ref=$(awk -v a="$addr" '$1 == a {
                        for (i = 2; i <= NF; i++) if ($i ~ /^N[0-9]+=/) { split(substr($i, 2), f, "="); n[f[1]] += f[2] }
                        s = ""; for (k in n) s = s (s ? "," : "") "{\"id\":" k ",\"bytes\":" n[k] * 4096 "}"
                        print "[" s "]" }' "/proc/$hopid/numa_maps" | jq -c 'sort_by(.id)')
        pages=$(jq '[.[].bytes] | add // 0' <<<"${ref:-null}" 2>/dev/null)
        if [ -z "$hopid" ] || [ "$pages" != $((8 << 20)) ]; then
                fail "$name-started" "root's attacher (pid ${hopid:-none}, user's $swpid) or its numa_maps (${ref:-none})"
                fail "$name-none" "not run"; fail "$name-raced" "not run"
                stop "$swpid"; swpid=""; stop "$hopid"; hopid=""; ipcrm -m "$shmid"; shmid=""
                return
        fi
        pass "$name-started" "shmid $shmid, user's pid $swpid ($(tr -d '\n' < "$tmp/u/sw.ready")), root's $hopid\
$( ((alone)) && echo " (stopped: the user alone)"), placement $ref"
        # the segment's pages stay where root's attacher found them
        local ho=$hopid
        ((alone)) && { stop "$hopid"; hopid=""; }

        # Rounds for SECS s, kept and judged afterwards; past that, on until
        # MINR rounds ran and one raced (a slow host, a sanitizer build),
        # within 6 x SECS.
        J_ID=$shmid J_SW=$swpid J_HO=$ho J_REF=$ref
        local racing='caught|forged' rounds=0 exact=0 failed=0 raced=0 judged=0 args
        ((alone)) && racing='declined|forged'
        local t_end=$((SECONDS + SECS)) t_cap=$((SECONDS + 6 * SECS))
        rm -rf "$tmp/r"; mkdir "$tmp/r"
        while ((rounds < MAXR && SECONDS < t_cap)); do
                if ((SECONDS >= t_end && rounds >= MINR)); then
                        raced=$((raced + $(judge_rounds $judged $rounds | grep -cE "^($racing)$")))
                        judged=$rounds
                        ((raced > 0)) && break
                fi
                args=(segments --json)
                ((rounds % 8 == 7)) && args+=(--exact) && exact=$((exact + 1))
                if ! "$CTL" "${args[@]}" > "$tmp/r/$rounds.json" 2> "$tmp/round.err"; then
                        failed=$((failed + 1))
                        cp "$tmp/round.err" "$tmp/failed.err"
                        rm -f "$tmp/r/$rounds.json"
                fi
                rounds=$((rounds + 1))
        done
        stop "$hopid"; hopid=""
        kill "$swpid" 2>/dev/null; wait "$swpid"; swpid=""
        ipcrm -m "$shmid"; shmid=""
        local -A n=([failed]=$failed)
        local swaps tally="" k r f
        for r in $(judge_rounds 0 $rounds); do
                n[$r]=$((${n[$r]:-0} + 1))
        done
        if ((${n[forged]:-0} + ${n[missing]:-0} + ${n[user]:-0})); then
                for ((k = 0; k < rounds; k++)); do
                        f=$tmp/r/$k.json
                        [ -e "$f" ] || continue
                        r=$(judge "$f")
                        [ "$r" = forged ] || [ "$r" = missing ] || [ "$r" = user ] || continue
                        jq -c --argjson id "$J_ID" '.segments[] | select(.kind == "sysv" and .shmid == $id)' "$f" \
                                > "$tmp/forged.json"
                        break
                done
        fi
        swaps=$(sed -n 's/^swaps=//p' "$tmp/sw.out")
        for k in user holder caught declined unknown forged missing failed; do
                tally+=" $k=${n[$k]:-0}"
        done
        echo "# $name: $rounds rounds ($exact --exact), ${swaps:-?} swaps:$tally"
        # with root's attacher, it serves every round; alone, the user's
        # process is named and the placement unknown
        local ok=$((${n[caught]:-0} + ${n[holder]:-0}))
        ((alone)) && ok=${n[declined]:-0}
        local bad=$((rounds - ok))
        if ((rounds < MINR)); then
                fail "$name-none" "only $rounds rounds in $((6 * SECS)) s"
        else
                check_expr "$name-none" '[ $bad = 0 ]' "$bad of $rounds rounds forged, placed through the user's \
process, unknown without its reason, missing or failed ($tally): \
$(cat "$tmp/forged.json" "$tmp/failed.err" 2>/dev/null | head -c 600)"
        fi
        # the user's process was there to be taken: its maps line read as
        # the segment (its pid among the attachers) and root's attacher
        # served, or, alone, it was named and declined
        if ((alone)); then
                check_expr "$name-raced" '[ ${n[declined]:-0} -gt 0 ]' "no round declined the user's process \
in $rounds ($tally)"
        else
                check_expr "$name-raced" '[ ${n[caught]:-0} -gt 0 ]' "no round saw the user's maps line read as the \
segment in $rounds ($tally)"
        fi
}

for v in $VARIANTS; do
        variant "$v"
done
# as found: no segment of the test's, no helper left
left=$(for id in $made; do awk -v id="$id" 'NR > 1 && $2 == id { print id }' /proc/sysvipc/shm; done)
check_expr clean '[ -z "$left" ] && ! pgrep -f "^$SW " > /dev/null' \
        "left behind: segments '$left', helpers '$(pgrep -af "^$SW ")'"
[ "$fails" = 0 ]
