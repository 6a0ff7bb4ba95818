#!/usr/bin/env bash
# suite: alongside
# The documents against the code, where the code is the one truth:
#  - docs-severities: README.md's table of findings gives each code the
#    severities the code table gives it (lib/2-analyze/ng-codes.h: its own
#    and its documented overrides, NG_CODE_OVERRIDES), no more, no less;
#  - docs-message-ids: numaguardd(8)'s table of MESSAGE_IDs is the code
#    table's IDs and the daemon's own events (daemon/numaguardd/sink.c),
#    each once, in order;
#  - docs-checks-report: each check fails on a planted drift.
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..3"
codes_h=$SRC/lib/2-analyze/ng-codes.h

# "CODE sev sev ..." per code: the table's severity and its overrides
table_severities() {    # NG-CODES.H
        awk '
                /X\([A-Z_]+, "[0-9a-f]{32}", [A-Z]+,/ {
                        match($0, /X\([A-Z_]+,/); c = substr($0, RSTART + 2, RLENGTH - 3)
                        split(substr($0, RSTART + RLENGTH), f, ","); s = f[2]; gsub(/[ \t]/, "", s)
                        order[++n] = c; sev[c] = tolower(s)
                }
                /^#define NG_CODE_OVERRIDES/ { ov = 1; next }
                ov && /X\([A-Z_]+, [A-Z]+,/ {
                        match($0, /X\([A-Z_]+, [A-Z]+,/); split(substr($0, RSTART + 2, RLENGTH - 3), f, ", ")
                        sev[f[1]] = sev[f[1]] " " tolower(f[2])
                }
                ov && !/\\$/ { ov = 0 }
                END { for (i = 1; i <= n; i++) print order[i], sev[order[i]] }' "$1"
}
# "CODE sev sev ..." per code in README.md's table of findings
readme_severities() {   # README.MD
        awk -F'|' '
                /^## What it finds/ { on = 1; next }
                on && /^## / { exit }
                on && /^\| `[A-Z_]+`/ {
                        s = ""; w = $3
                        while (match(w, /info|warning|critical/)) { s = s " " substr(w, RSTART, RLENGTH); w = substr(w, RSTART + RLENGTH) }
                        c = $2
                        while (match(c, /`[A-Z_]+`/)) { print substr(c, RSTART + 1, RLENGTH - 2) s; c = substr(c, RSTART + RLENGTH) }
                }' "$1"
}
sorted_words() { tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' '; }
severity_drift() {      # NG-CODES.H README.MD: "" when they agree, else each code that differs
        local code rest want have out=""
        while read -r code rest; do
                want=$(sorted_words <<<"$rest")
                have=$(readme_severities "$2" | awk -v c="$code" '$1 == c { $1 = ""; print }' | sorted_words)
                [ "$want" = "$have" ] || out+="$code: the code raises '${want% }', README says '${have% }'; "
        done < <(table_severities "$1")
        echo "$out"
}
out=$(severity_drift "$codes_h" "$SRC/README.md")
if [ -n "$(table_severities "$codes_h" | head -1)" ] && [ -z "$out" ]; then echo "ok docs-severities"
else echo "not ok docs-severities: ${out:-the code table could not be read}"; fi

# "NAME ID" of every MESSAGE_ID numaguardd sends for a raised finding or an
# event of its own; and the man page's table
code_ids() {            # NG-CODES.H SINK.C
        sed -nE 's/.*X\(([A-Z_]+), "([0-9a-f]{32})",.*/\1 \2/p' "$1"
        sed -nE 's/.*\[DAEMON_EVENT_[A-Z_]+\] = \{ "([0-9a-f]{32})", "([a-z_]+)" \}.*/(\2) \1/p' "$2" | tr _ ' ' |
                sed -E 's/^\(([a-z]+) ([a-z]+)\) /(\1 \2) /'
}
man_ids() {             # NUMAGUARDD.8
        awk '/^MESSAGE_IDs of raised findings:/ { on = 1; next }
             on && /^\.fi/ { exit }
             on && /[0-9a-f]{32}$/ { id = $NF; $NF = ""; sub(/ +$/, ""); print $0, id }' "$1"
}
id_drift() {            # NG-CODES.H SINK.C NUMAGUARDD.8
        diff <(code_ids "$1" "$2") <(man_ids "$3") | grep '^[<>]' | sed 's/^</code:/; s/^>/man:/' | tr '\n' ';'
}
out=$(id_drift "$codes_h" "$SRC/daemon/numaguardd/sink.c" "$SRC/man/numaguardd.8")
if [ "$(code_ids "$codes_h" "$SRC/daemon/numaguardd/sink.c" | wc -l)" -gt 30 ] && [ -z "$out" ]; then
        echo "ok docs-message-ids"
else echo "not ok docs-message-ids: ${out:-fewer IDs in the code than its codes}"; fi

# Planted drifts: a severity the code does not raise, an override README
# leaves out, a MESSAGE_ID changed in the man page.
sed 's/^| `CYCLOPS` | warning |/| `CYCLOPS` | warning \/ critical |/; s/^| `NODE_PRESSURE` | warning \/ critical |/| `NODE_PRESSURE` | warning |/' \
        "$SRC/README.md" > "$tmp/README.md"
sed 's/^CYCLOPS                  e8/CYCLOPS                  f8/' "$SRC/man/numaguardd.8" > "$tmp/numaguardd.8"
sev=$(severity_drift "$codes_h" "$tmp/README.md")
ids=$(id_drift "$codes_h" "$SRC/daemon/numaguardd/sink.c" "$tmp/numaguardd.8")
if [[ $sev == *"CYCLOPS: "*"NODE_PRESSURE: "* ]] && [ "$(tr ';' '\n' <<<"$ids" | grep -c CYCLOPS)" = 2 ]; then
        echo "ok docs-checks-report"
else echo "not ok docs-checks-report: planted drifts went unseen: '$sev' '$ids'"; fi
