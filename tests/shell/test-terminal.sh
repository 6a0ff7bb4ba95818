#!/usr/bin/env bash
# suite: alongside
# numaguardctl on a pseudo-terminal (script(1)) and piped: block bars only on
# a terminal with a UTF-8 locale (ASCII otherwise), colour for severities on
# a terminal (off with NO_COLOR or --color=never, forced by --color=always),
# progress on stderr only when stderr is a terminal; JSON never decorated;
# on a terminal lines wrap to its width ($COLUMNS where the pty has none),
# piped they stay whole.
# Reads the committed guest4-v2 tree; NUMAGUARD_PROGRESS_DELAY_MS=0 makes
# progress show at once instead of after a second.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
CTL=$PWD/$B/numaguardctl
case $B in /*) CTL=$B/numaguardctl ;; esac
tree=$PWD/tests/fixtures/trees/guest4-v2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
TAP_PREFIX=terminal; . tests/shell/lib.sh
printf '[global]\nmin_segment_size = 1M\n' > "$T/ng.conf"

# NAME ~ WHERE (tty: stdout and stderr on a pty; pipe: both piped) ~ ENV ~ ARGS
#      ~ must match (grep -P on the bytes) ~ must not match
cases=(
        "utf8-bars~tty~LC_ALL=C.UTF-8 TERM=xterm~segments --root $tree~\xe2\x96\x88~[#]{20}"
        "c-locale-ascii-bars~tty~LC_ALL=C TERM=xterm~segments --root $tree~^  N3   #{20} 100%~\xe2\x96"
        "dumb-terminal-ascii-bars~tty~LC_ALL=C.UTF-8 TERM=dumb~segments --root $tree~#{20}~\xe2\x96"
        "piped-ascii-bars~pipe~LC_ALL=C.UTF-8 TERM=xterm~segments --root $tree~^  N3   #{20} 100%~\xe2\x96"
        "severity-colour~tty~LC_ALL=C TERM=xterm~audit --root $tree -c $T/ng.conf~\e\[1;31mcritical\e\[0m REMOTE_MEMORY~"
        "warning-colour~tty~LC_ALL=C TERM=xterm~audit --root $tree -c $T/ng.conf~\e\[33mwarning\e\[0m  CYCLOPS~"
        "no-color-env~tty~LC_ALL=C TERM=xterm NO_COLOR=1~audit --root $tree -c $T/ng.conf~^critical REMOTE_MEMORY~\e\["
        "color-never~tty~LC_ALL=C TERM=xterm~audit --color=never --root $tree -c $T/ng.conf~^critical REMOTE_MEMORY~\e\["
        "wrap-to-width~tty~LC_ALL=C TERM=xterm COLUMNS=90~audit --color=never --root $tree -c $T/ng.conf~^            \(numaguardctl cpuset apply\) or the numactl binding it starts under$~[^\r\n]{91,}"
        "wrap-coloured-to-width~tty~LC_ALL=C TERM=xterm COLUMNS=90~audit --root $tree -c $T/ng.conf~^         -> put the instance's memory on the nodes of its CPUs: fix cpuset.mems$~[^\r\n\e]{91,}"
        "piped-no-wrap~pipe~LC_ALL=C TERM=xterm COLUMNS=90~audit --root $tree -c $T/ng.conf~^         -> put the instance's memory on the nodes of its CPUs: fix cpuset.mems \(numaguardctl cpuset apply\) or the numactl binding it starts under$~"
        "piped-no-colour~pipe~LC_ALL=C TERM=xterm~audit --root $tree -c $T/ng.conf~^critical REMOTE_MEMORY~\e\["
        "piped-color-always~pipe~LC_ALL=C TERM=xterm~audit --color=always --root $tree -c $T/ng.conf~\e\[1;31mcritical\e\[0m~"
        "json-undecorated~tty~LC_ALL=C.UTF-8 TERM=xterm~audit --json --root $tree -c $T/ng.conf~\"severity\": ?\"critical\"~\e\["
        "exact-progress~tty~LC_ALL=C TERM=xterm NUMAGUARD_PROGRESS_DELAY_MS=0~audit --exact --root $tree -c $T/ng.conf~\rnumaguardctl: reading numa_maps\.\.\. [0-9]+ s.*\e\[K.*\r\e\[K~"
        "piped-no-progress~pipe~LC_ALL=C TERM=xterm NUMAGUARD_PROGRESS_DELAY_MS=0~audit --exact --root $tree -c $T/ng.conf~^critical~reading numa_maps|\r"
        "snapshot-progress~tty~LC_ALL=C TERM=xterm NUMAGUARD_PROGRESS_DELAY_MS=0~snapshot -o $T/s.tar.gz --root $tree -c $T/ng.conf~numaguardctl: capturing the host\.\.\. [0-9]+ s, [0-9]+ files read~"
        "snapshot-piped-no-progress~pipe~LC_ALL=C TERM=xterm NUMAGUARD_PROGRESS_DELAY_MS=0~snapshot -o $T/p.tar.gz --root $tree -c $T/ng.conf~^numaguardctl: snapshot written to~capturing the host|\r"
)
echo "1..$((${#cases[@]} + 1))"

if ! script -qec true /dev/null > /dev/null 2>&1; then
        for c in "${cases[@]}"; do echo "skip terminal-${c%%~*}: script(1) cannot open a pseudo-terminal here"; done
        echo "skip terminal-color-invalid: script(1) missing"
        exit 0
fi

for c in "${cases[@]}"; do
        IFS='~' read -r name where envs args want unwanted <<<"$c"
        if [ "$where" = tty ]; then
                # shellcheck disable=SC2086
                env $envs script -qec "$CTL $args" /dev/null < /dev/null > "$T/out" 2>&1
                tr -d '\r' < "$T/out" > "$T/lines"   # the pty's CRLF; progress keeps its own \r in $T/out
        else
                # shellcheck disable=SC2086
                env $envs "$CTL" $args < /dev/null 2>&1 | cat > "$T/out"
                cp "$T/out" "$T/lines"
        fi
        why=""
        case $want in *'\r'*) f=$T/out ;; *) f=$T/lines ;; esac
        LC_ALL=C grep -qaP -- "$want" "$f" || why="does not match /$want/"
        if [ -n "$unwanted" ] && LC_ALL=C grep -qaP -- "$unwanted" "$T/out"; then
                why="${why:+$why; }matches /$unwanted/"
        fi
        [ -z "$why" ] || why="$why: $(head -c 300 "$T/out" | cat -v)"
        if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why"; fi
done

"$CTL" audit --color=sometimes --root "$tree" > "$T/out" 2>&1; rc=$?
if [ $rc = 3 ] && grep -qxF "numaguardctl: audit: --color: 'sometimes' is not auto, always or never (see 'numaguardctl help audit')" "$T/out"; then
        pass color-invalid
else
        fail color-invalid "exit $rc: $(head -c 200 "$T/out")"
fi
[ $fails = 0 ]
