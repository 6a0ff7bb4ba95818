# bash completion for numaguardctl(1)                  -*- shell-script -*-
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Commands and each command's options come from numaguardctl itself
# (`numaguardctl --help`, `numaguardctl help COMMAND`), so a new command or
# option completes without changing this file. Instance names come from the
# [instance NAME] sections of the configuration (--config, or the default)
# and, for --instance, also from the running numaguardd (`numaguardctl
# status`, which asks it and audits nothing): the instances it discovered
# (postgresql:/var/lib/postgresql/15/main), silently none when it does not
# answer. Names others chose are offered only when made of letters, digits
# and _.:/@+=,- (nothing a shell would read otherwise); ':' is kept whole
# where bash-completion is loaded. --node from the host's (or --root
# tree's) NUMA nodes; --size from its hugepage sizes, spelled as
# numaguardctl spells them (2M, 1G), or for probe buffer sizes.

_numaguardctl_words() {         # the command words typed so far (no options)
        local i w skip=0
        _ng_cmd=() _ng_conf=/etc/numaguard/numaguard.conf _ng_root="" _ng_status=()
        for ((i = 1; i < cword; i++)); do
                w=${words[i]}
                if ((skip)); then skip=0; continue; fi
                case $w in
                -c | --config) skip=1; _ng_conf=${words[i + 1]}; _ng_status+=(--config "$_ng_conf") ;;
                --config=*) _ng_conf=${w#--config=}; _ng_status+=(--config "$_ng_conf") ;;
                -r | --root) skip=1; _ng_root=${words[i + 1]} ;;
                --root=*) _ng_root=${w#--root=} ;;
                --socket) skip=1; _ng_status+=(--socket "${words[i + 1]}") ;;
                --socket=*) _ng_status+=("$w") ;;
                -o | --output | --instance | --size | --pages | --node | --nodes | --color) skip=1 ;;
                -*) ;;
                *) _ng_cmd+=("$w") ;;
                esac
        done
}

_numaguardctl_instances() {     # the file and its drop-ins (numaguard.conf(5))
        local f
        for f in "$1" "$1".d/*.conf; do
                [ -r "$f" ] && sed -nE 's/^[[:space:]]*\[instance[[:space:]]+([^]]+)\][[:space:]]*$/\1/p' "$f"
        done
}

_numaguardctl_running() {       # the running numaguardd's instances: ctl, status options
        local ctl=$1 n
        shift
        "$ctl" status --color never "$@" 2> /dev/null |
                sed -nE '/^Instances:/,/^$/ s/^  (.+) \([a-z?]+, pid -?[0-9]+\): .*/\1/p' |
                while IFS= read -r n; do
                        [[ $n =~ ^[A-Za-z0-9_.:/@+=,-]+$ ]] && printf '%s\n' "$n"
                done
}

_numaguardctl_nodes() {
        local d
        for d in "$1"/sys/devices/system/node/node[0-9]*; do
                [ -d "$d" ] && echo "${d##*/node}"
        done
}

_numaguardctl_sizes() {
        local d kb
        for d in "$1"/sys/kernel/mm/hugepages/hugepages-*kB; do
                [ -d "$d" ] || continue
                kb=${d##*hugepages-}; kb=${kb%kB}
                if ((kb % 1048576 == 0)); then echo "$((kb / 1048576))G"
                elif ((kb % 1024 == 0)); then echo "$((kb / 1024))M"
                else echo "${kb}K"; fi
        done
}

_numaguardctl() {
        local cur prev words cword ctl=${COMP_WORDS[0]}
        # bash splits "postgresql:/data" at the colon; bash-completion joins it
        if declare -F _get_comp_words_by_ref > /dev/null; then
                _get_comp_words_by_ref -n : cur prev words cword
        else
                words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
                cur=${words[cword]} prev=${words[cword - 1]}
        fi
        local _ng_cmd _ng_conf _ng_root _ng_status
        _numaguardctl_words
        case $prev in
        -r | --root) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        -c | --config | -o | --output | --socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
        --node) COMPREPLY=($(compgen -W "$(_numaguardctl_nodes "$_ng_root")" -- "$cur")); return ;;
        --size)
                # probe's buffer, or a hugepage size of the host
                if [ "${_ng_cmd[0]}" = probe ]; then COMPREPLY=($(compgen -W "64M 256M 1G" -- "$cur"))
                else COMPREPLY=($(compgen -W "$(_numaguardctl_sizes "$_ng_root")" -- "$cur")); fi
                return ;;
        --instance)
                # no compgen -W: it would expand what others chose ($(...))
                local n
                COMPREPLY=()
                while IFS= read -r n; do
                        [[ $n == "$cur"* ]] && COMPREPLY+=("$n")
                done < <({ _numaguardctl_instances "$_ng_conf"; _numaguardctl_running "$ctl" "${_ng_status[@]}"; } | sort -u)
                declare -F __ltrim_colon_completions > /dev/null && __ltrim_colon_completions "$cur"
                return ;;
        --pages) return ;;
        esac
        local n=${#_ng_cmd[@]} cmds
        cmds=$("$ctl" --help 2>/dev/null | sed -nE 's/^  ([a-z]+)( [a-z]+)?( [A-Z]+)? .*/\1/p' | sort -u)
        if [[ $cur == -* ]]; then
                local opts
                if ((n == 0)); then opts="--help --version"
                else opts=$("$ctl" help "${_ng_cmd[@]:0:2}" 2>/dev/null | grep -oE '^ +(-[a-z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+' | sort -u)
                fi
                COMPREPLY=($(compgen -W "$opts" -- "$cur"))
                return
        fi
        if ((n == 0)); then
                COMPREPLY=($(compgen -W "$cmds help" -- "$cur"))
                return
        fi
        local subs
        subs=$("$ctl" --help 2>/dev/null | sed -nE "s/^  ${_ng_cmd[0]} ([a-z]+)( [A-Z]+)? .*/\\1/p")
        if [ "${_ng_cmd[0]}" = help ]; then
                if ((n == 1)); then COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
                elif ((n == 2)); then COMPREPLY=($(compgen -W "$("$ctl" --help 2>/dev/null | sed -nE "s/^  ${_ng_cmd[1]} ([a-z]+)( [A-Z]+)? .*/\\1/p")" -- "$cur"))
                fi
                return
        fi
        if [ -n "$subs" ] && ((n == 1)); then
                COMPREPLY=($(compgen -W "$subs" -- "$cur"))
                return
        fi
        # the command's INSTANCE argument: cpuset apply INSTANCE, rebalance INSTANCE
        local syn
        syn=$("$ctl" help "${_ng_cmd[@]:0:2}" 2>/dev/null | head -1)
        local words_in_name=1
        [ -n "$subs" ] && words_in_name=2
        if [[ $syn == *" INSTANCE"* || $syn == *" [INSTANCE]"* ]] && ((n == words_in_name)); then
                local IFS=$'\n'
                COMPREPLY=($(compgen -W "$(_numaguardctl_instances "$_ng_conf")" -- "$cur"))
        fi
}
complete -F _numaguardctl numaguardctl
