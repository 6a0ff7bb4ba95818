#!/usr/bin/env bash
# Shell completion of numaguardctl: `make install` puts the bash and zsh
# files where the shells look; bash registers it (complete -p) and completes
# commands, subcommands, each command's options (from `numaguardctl help`),
# instance names from the configuration, --node and --size from a tree, and
# --color values; zsh registers it through compinit and completes the same
# (compadd recorded). zsh comes with `tests/install-deps test`.
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
tree=$SRC/tests/fixtures/trees/guest4-v2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
        "color%audit --color %always auto never"
        "help-command%help hug%hugepages"
        "help-subcommand%help hugepages %apply plan reserve"
)
zcases=(commands subcommands options-reserve instance-cpuset instance-rehearse node size probe-size audit-instance audit-second-instance)
echo "1..$((3 + ${#cases[@]} + 2 + ${#zcases[@]}))"

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
        # shellcheck disable=SC2086
        read -ra w <<<"$words"
        [[ $words == *" " || -z $words ]] && w+=("")
        got=$(bash_complete "${w[@]}")
        if [ "$got" = "$want" ]; then pass "bash-$name"; else fail "bash-$name" "'numaguardctl $words<TAB>': got '$got', expected '$want'"; fi
done

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
        read -ra w <<<"$words"
        [[ $words == *" " || -z $words ]] && w+=("")
        got=$(zsh_complete "${w[@]}")
        # zsh filters by PREFIX itself: compare only the candidates matching it
        pre=${w[${#w[@]}-1]}
        got=$(tr ' ' '\n' <<<"$got" | grep -E "^$pre" | sort -u | tr '\n' ' ' | sed 's/ $//')
        if [ "$got" = "$want" ]; then pass "zsh-$name"; else fail "zsh-$name" "'numaguardctl $words<TAB>': got '$got', expected '$want'"; fi
done
[ $fails = 0 ]
