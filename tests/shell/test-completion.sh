#!/usr/bin/env bash
# Shell completion of numaguardctl: `make install` puts the bash and zsh
# files where the shells look; bash registers it (complete -p) and completes
# commands, subcommands, each command's options (from `numaguardctl help`),
# instance names from the configuration, --node and --size from a tree, and
# --color values; zsh registers it through compinit and completes the same
# (compadd recorded). --instance also offers the running numaguardd's
# instances (as root: a daemon on a tree with a real mariadbd, discovered as
# mysql:/tmp/my/data, and a postgres whose data directory's name holds a
# command substitution, which is neither offered nor run); with no daemon
# answering, the configuration's names and not a word more. With
# bash-completion loaded, a name is completed past its colon. (The same
# daemon's status says the mariadbd's InnoDB buffer pool is private memory,
# not shared: the line completion reads.) zsh and
# bash-completion come with `tests/install-deps test`.
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
tree=$SRC/tests/fixtures/trees/guest4-v2
tmp=$(mktemp -d)
dpid=""
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null; rm -rf "$tmp"' EXIT
TAP_PREFIX=completion; . "$SRC/tests/shell/lib.sh"
[ -x "$CTL" ] || { echo "not ok completion: $CTL not built"; exit 1; }

cat > "$tmp/ng.conf" <<'EOF'
[global]
interval = 30s

[instance ORCL]
cgroup = /oracle.slice

[instance ORCLDG]
policy = interleave

[instance pgmain]
policy = local
EOF

mkdir "$tmp/ng.conf.d"
printf '[instance FLEETDB]\nmatch_comm = postgres\n' > "$tmp/ng.conf.d/50-fleet.conf"

# ---- a running numaguardd, root only (its socket's directory must be root's)
SOCK=$tmp/run/ctl.sock daemon=""
if [ "$(id -u)" = 0 ]; then
        dtree=$tmp/tree
        mkdir "$dtree" && cp -a "$tree/." "$dtree/"
        mkdir -p "$dtree/proc/221" "$dtree/proc/222"
        for f in stat status maps numa_maps; do
                cp "$SRC/tests/fixtures/text/guest4-mariadb-bound-$f" "$dtree/proc/221/$f"
                sed -e 's/^221 (mariadbd)/222 (postgres)/' -e 's/^\(Name:\t\)mariadbd/\1postgres/' \
                        -e 's/^\(Pid:\t\)221/\1222/' "$dtree/proc/221/$f" > "$dtree/proc/222/$f"
        done
        printf '/usr/sbin/mariadbd\0--datadir=/tmp/my/data\0' > "$dtree/proc/221/cmdline"
        printf 'postgres\0-D\0/tmp/$(touch %s/pwned)\0' "$tmp" > "$dtree/proc/222/cmdline"
        printf '[global]\ninterval = 1s\nmetrics_file =\nsocket = %s\n' "$SOCK" > "$tmp/d.conf"
        "$B/numaguardd" --foreground --root "$dtree" --config "$tmp/d.conf" --alert-log "$tmp/alerts" \
                2> "$tmp/d.err" &
        dpid=$!
        for _ in $(seq 100); do
                "$CTL" status --socket "$SOCK" 2>/dev/null | grep -q "^  mysql:" && break
                sleep 0.1
        done
        if "$CTL" status --socket "$SOCK" 2>/dev/null | grep -q '^  postgresql:/tmp/$(touch'; then daemon=up
        else daemon="numaguardd on $dtree lists no hostile postgres: $("$CTL" status --socket "$SOCK" 2>&1 |
                sed -n '/^Instances/,/^$/p' | head -5) $(tail -2 "$tmp/d.err")"; fi
else
        daemon="needs root (numaguardd's socket directory must be root's)"
fi

# NAME % WORDS after numaguardctl (the last one is being completed) % expected
# candidates, sorted, space-separated
cases=(
        "commands%%audit cpuset help hugepages probe rebalance rehearse reload segments snapshot status topology"
        "command-prefix%re%rebalance rehearse reload"
        "subcommands%hugepages %apply plan reserve"
        "cpuset-subcommand%cpuset %apply"
        "options-topology%topology --%--color --help --json --root"
        "options-reserve%hugepages reserve --%--color --config --dry-run --help --json --node --pages --persist --root --size"
        "instance-rebalance%-c $tmp/ng.conf rebalance OR%ORCL ORCLDG"
        "instance-cpuset%cpuset apply --config $tmp/ng.conf %FLEETDB ORCL ORCLDG pgmain"
        "instance-after-instance%--config $tmp/ng.conf rebalance ORCL %"
        "instance-rehearse%-c $tmp/ng.conf rehearse OR%ORCL ORCLDG"
        "node%--root $tree hugepages reserve --node %0 1 2 3"
        "size%--root $tree hugepages reserve --size %1G 2M"
        "probe-size%probe --size %1G 256M 64M"
        "audit-instance%-c $tmp/ng.conf audit --instance OR%ORCL ORCLDG"
        "audit-second-instance%-c $tmp/ng.conf audit --instance ORCL --instance %FLEETDB ORCL ORCLDG pgmain"
        "instance-no-daemon%-c $tmp/ng.conf --socket $tmp/none.sock audit --instance %FLEETDB ORCL ORCLDG pgmain"
        "instance-running%--socket $SOCK audit --instance my%mysql:/tmp/my/data"
        "instance-running-and-config%-c $tmp/ng.conf --socket $SOCK audit --instance %FLEETDB ORCL ORCLDG mysql:/tmp/my/data pgmain"
        "instance-hostile-not-offered%--socket $SOCK audit --instance post%"
        "color%audit --color %always auto never"
        "help-command%help hug%hugepages"
        "help-subcommand%help hugepages %apply plan reserve"
)
zcases=(commands subcommands options-reserve instance-cpuset instance-rehearse node size probe-size audit-instance audit-second-instance
        instance-no-daemon instance-running-and-config instance-hostile-not-offered)
needs_daemon=" instance-running instance-running-and-config instance-hostile-not-offered "
echo "1..$((3 + ${#cases[@]} + 3 + 2 + ${#zcases[@]}))"

# ---- make install puts both files where bash-completion and zsh look
D=$tmp/inst
san=0; case $BUILD in *san*) san=1 ;; esac
if make -s -C "$SRC" BUILD="$BUILD" SANITIZE=$san PREFIX=/usr DESTDIR="$D" install > "$tmp/make.out" 2>&1 &&
   [ -f "$D/usr/share/bash-completion/completions/numaguardctl" ] &&
   [ -f "$D/usr/share/zsh/vendor-completions/_numaguardctl" ]; then
        pass install
else
        fail install "$(tail -3 "$tmp/make.out"; find "$D" -path '*complet*' | head)"
fi
BASHFILE=$D/usr/share/bash-completion/completions/numaguardctl
[ -f "$BASHFILE" ] || BASHFILE=$SRC/completion/numaguardctl.bash

out=$(bash -c 'source "$1" && complete -p numaguardctl' sh "$BASHFILE" 2>&1)
if [ "$out" = "complete -F _numaguardctl numaguardctl" ]; then pass bash-complete-p
else fail bash-complete-p "complete -p: $out"; fi
# The function must exist and be the one complete -p names.
if bash -c 'source "$1" && declare -F _numaguardctl' sh "$BASHFILE" > /dev/null 2>&1; then pass bash-function
else fail bash-function "_numaguardctl not defined by $BASHFILE"; fi

# ---- bash: a scripted completion per case (COMP_WORDS as bash would set them)
bash_complete() {       # WORDS...: the candidates, sorted, one line
        PATH=$B:$PATH bash -c '
                source "$1"; shift
                COMP_WORDS=(numaguardctl "$@"); COMP_CWORD=$#
                COMPREPLY=()
                _numaguardctl
                printf "%s\n" "${COMPREPLY[@]}"' sh "$BASHFILE" "$@" 2>&1 | sort | tr '\n' ' ' | sed 's/ $//'
}
for c in "${cases[@]}"; do
        IFS='%' read -r name words want <<<"$c"
        if [[ $needs_daemon == *" $name "* && $daemon != up ]]; then echo "skip completion-bash-$name: $daemon"; continue; fi
        # shellcheck disable=SC2086
        read -ra w <<<"$words"
        [[ $words == *" " || -z $words ]] && w+=("")
        got=$(bash_complete "${w[@]}")
        if [ "$got" = "$want" ]; then pass "bash-$name"; else fail "bash-$name" "'numaguardctl $words<TAB>': got '$got', expected '$want'"; fi
done

# ---- bash with bash-completion loaded: bash splits at the colon
# (COMP_WORDBREAKS), its helpers join the word back and bash is handed
# what follows the colon
BC=/usr/share/bash-completion/bash_completion
if [ "$daemon" != up ]; then
        echo "skip completion-bash-instance-past-colon: $daemon"
elif [ ! -r "$BC" ]; then
        echo "skip completion-bash-instance-past-colon: $BC missing (tests/install-deps test installs bash-completion)"
else
        line="numaguardctl --socket $SOCK audit --instance mysql:/tmp/my/d"
        got=$(PATH=$B:$PATH bash -c '
                source "$1"; source "$2"
                COMP_LINE=$3; COMP_POINT=${#COMP_LINE}
                COMP_WORDS=(numaguardctl --socket "$4" audit --instance mysql : /tmp/my/d); COMP_CWORD=6
                COMPREPLY=()
                _numaguardctl
                printf "%s\n" "${COMPREPLY[@]}"' sh "$BC" "$BASHFILE" "$line" "$SOCK" 2>&1)
        if [ "$got" = /tmp/my/data ]; then pass bash-instance-past-colon
        else fail bash-instance-past-colon "'$line<TAB>': bash was handed '$got', expected '/tmp/my/data'"; fi
fi
if [ "$daemon" != up ]; then
        echo "skip completion-status-pool-private: $daemon"
else
        line=$("$CTL" status --socket "$SOCK" 2>&1 | grep "^  mysql:/tmp/my/data ")
        if [[ $line =~ ^"  mysql:/tmp/my/data (mysql, pid 221): "[0-9.]+" MiB private, "[0-9.]+\ [KMG]iB\ resident$ ]]; then
                pass status-pool-private
        else
                fail status-pool-private "status: '$line'"
        fi
fi
if [ ! -e "$tmp/pwned" ]; then pass hostile-name-never-run
else fail hostile-name-never-run "completing ran the command substitution in a discovered instance's name"; fi

# ---- zsh
if ! command -v zsh > /dev/null; then
        echo "skip completion-zsh-compinit: zsh not installed"
        echo "skip completion-zsh-syntax: zsh not installed"
        for z in "${zcases[@]}"; do echo "skip completion-zsh-$z: zsh not installed"; done
        [ $fails = 0 ]; exit
fi
ZDIR=$D/usr/share/zsh/vendor-completions
[ -f "$ZDIR/_numaguardctl" ] || ZDIR=$SRC/completion
out=$(HOME=$tmp zsh -fc 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -d "$2"; print -r -- $_comps[numaguardctl]' \
        sh "$ZDIR" "$tmp/zcompdump" 2>&1)
if [ "$out" = _numaguardctl ]; then pass zsh-compinit; else fail zsh-compinit "compinit registered '$out'"; fi
if zsh -n "$ZDIR/_numaguardctl" 2>"$tmp/zerr"; then pass zsh-syntax; else fail zsh-syntax "$(head -3 "$tmp/zerr")"; fi
zsh_complete() {        # WORDS...: what _numaguardctl hands compadd, sorted
        PATH=$B:$PATH zsh -fc '
                compadd() { if [[ $1 == -a ]]; then print -rl -- ${(P)2}; else print -rl -- "$@"; fi }
                _files() { print FILES }
                compdef() { : }
                source "$1"; shift
                words=(numaguardctl "$@"); CURRENT=$#words; PREFIX=$words[-1]
                _numaguardctl' sh "$ZDIR/_numaguardctl" "$@" 2>&1 | grep -v '^$' | sort | tr '\n' ' ' | sed 's/ $//'
}
for z in "${zcases[@]}"; do
        for c in "${cases[@]}"; do [ "${c%%%*}" = "$z" ] && break; done
        IFS='%' read -r name words want <<<"$c"
        if [[ $needs_daemon == *" $name "* && $daemon != up ]]; then echo "skip completion-zsh-$name: $daemon"; continue; fi
        read -ra w <<<"$words"
        [[ $words == *" " || -z $words ]] && w+=("")
        got=$(zsh_complete "${w[@]}")
        # zsh filters by PREFIX itself: compare only the candidates matching it
        pre=${w[${#w[@]}-1]}
        got=$(tr ' ' '\n' <<<"$got" | grep -E "^$pre" | sort -u | tr '\n' ' ' | sed 's/ $//')
        if [ "$got" = "$want" ]; then pass "zsh-$name"; else fail "zsh-$name" "'numaguardctl $words<TAB>': got '$got', expected '$want'"; fi
done
[ $fails = 0 ]
