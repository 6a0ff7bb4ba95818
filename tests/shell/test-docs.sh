#!/usr/bin/env bash
# suite: alongside
# The documents against the code, where the code is the one truth:
#  - docs-severities: README.md's table of findings gives each code the
#    severities the code table gives it (lib/2-analyze/ng-codes.h: its own
#    and its documented overrides, NG_CODE_OVERRIDES), no more, no less;
#  - docs-message-ids: numaguardd(8)'s table of MESSAGE_IDs is the code
#    table's IDs and the daemon's own events (daemon/numaguardd/sink.c),
#    each once, in order;
#  - docs-named-files: every header and project file README.md,
#    docs/*.md, the man pages, the configuration file and the test and
#    bench READMEs name exists, and every header a comment in lib/ or
#    daemon/ names (NEWS, the history, may name what is gone);
#  - docs-named-functions: every function they name as name() is one the
#    code declares;
#  - docs-codes, docs-keys, docs-metrics: numaguardctl(1)'s list of codes
#    is the code table's, numaguard.conf(5)'s keys the loader's, and the
#    metrics the man pages name those the code writes, and back (the two
#    names renamed before 1.0 aside, which numaguardd(8) lists as such);
#  - docs-checks-report: each check fails on a planted drift.
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..8"
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
# "CODE info warning critical": each code's words once, in that order
sev_norm() { awk '{ delete seen; for (i = 2; i <= NF; i++) seen[$i] = 1; s = $1
                    if ("info" in seen) s = s " info"; if ("warning" in seen) s = s " warning"
                    if ("critical" in seen) s = s " critical"; print s }'; }
severity_drift() {      # NG-CODES.H README.MD: "" when they agree, else each code that differs
        awk 'NR == FNR { have[$1] = $0; next }
             { h = $1 in have ? have[$1] : $1; if (h != $0) {
                   w = $0; sub(/^[A-Z_]+ ?/, "", w); r = h; sub(/^[A-Z_]+ ?/, "", r)
                   printf "%s: the code raises \047%s\047, README says \047%s\047; ", $1, w, r } }' \
                <(readme_severities "$2" | sev_norm) <(table_severities "$1" | sev_norm)
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

docs=(README.md docs/*.md man/*.[1-8] conf/numaguard.conf bench/README.md tests/e2e/README.md)
# "what (where)" for each header or project path named that is not there
# the compiler's include directories, each with the subdirectories the
# code's headers come from
mapfile -t incdirs < <(cc -E -Wp,-v -x c /dev/null 2>&1 | sed -n 's/^ \(\/.*\)/\1/p')
system_header() {       # H: a header the compiler finds, as <H> or <sys/H>, <linux/H>, ...
        local d sub
        for d in "${incdirs[@]}"; do
                for sub in "" sys/ linux/ json-c/ systemd/; do [ -e "$d/$sub$1" ] && return 0; done
        done
        return 1
}
missing_headers() {     # DIR FILE...: headers FILE... (relative to DIR) name that are nowhere
        local dir=$1 h have
        shift
        have=$(cd "$dir" && find lib daemon tests bench -name '*.h' -printf '%f\n' 2>/dev/null | sort -u)
        (cd "$dir" && grep -ohE '\b[A-Za-z0-9_-]+\.h\b' "$@" | sort -u) | comm -23 - <(echo "$have") |
                while read -r h; do
                        [[ $h == internal.h ]] && continue     # "*-internal.h", each folder's own
                        system_header "$h" || echo "$h ($(cd "$dir" && grep -lE "\b$h\b" "$@" | head -3 | tr '\n' ' '))"
                done
}
# a project path: not inside another path (/usr/lib/..., $BUILD/bench/...),
# no glob or placeholder (rules-*.c, cases/NAME.sh)
missing_paths() {       # DIR FILE...
        local dir=$1 p
        shift
        for p in $(cd "$dir" && grep -ohE '(^|[^/A-Za-z0-9_.$)-])(lib|daemon|tests|bench|conf|systemd|man|docs|debian|rpm|completion)/[A-Za-z0-9_./*-]*[A-Za-z0-9_*]' "$@" |
                   sed -E 's/^[^a-z]//' | sort -u); do
                [[ $p == *'*'* || $p =~ [A-Z]{3} ]] && continue
                [ -e "$dir/$p" ] || [ -e "$dir/$p.c" ] || [ -e "$dir/${p%.*}" ] ||
                        echo "$p ($(cd "$dir" && grep -lF "$p" "$@" | head -3 | tr '\n' ' '))"
        done
}
missing_files() { missing_headers "$@"; missing_paths "$@"; }
mapfile -t commented < <(cd "$SRC" && find lib daemon -name '*.[ch]' | sort)
out=$( { missing_files "$SRC" "${docs[@]}"; missing_headers "$SRC" "${commented[@]}"; } | tr '\n' ';')
if [ -z "$out" ]; then echo "ok docs-named-files"
else echo "not ok docs-named-files: named but not there: $out"; fi

# functions named as name(): declared or defined in the code
missing_functions() {   # DIR FILE...
        local dir=$1 known
        shift
        known=$(grep -rhoE '\b[a-z_][a-z0-9_]*\(' "$dir/lib" "$dir/daemon" "$dir/tests" "$dir/bench" --include='*.[ch]' 2>/dev/null |
                tr -d '(' | sort -u)
        (cd "$dir" && grep -ohE '(^|[^*_a-z0-9])[a-z][a-z0-9_]*\(\)' "$@" | sed -E 's/^[^a-z]//; s/\(\)//' | sort -u) |
                grep -vxF pkgconfig |   # the RPM spec's BuildRequires syntax
                comm -23 - <(echo "$known") | while read -r f; do
                        echo "$f() ($(cd "$dir" && grep -lE "\b$f\(\)" "$@" | head -3 | tr '\n' ' '))"
                done
}
out=$(missing_functions "$SRC" "${docs[@]}" | tr '\n' ';')
if [ -z "$out" ]; then echo "ok docs-named-functions"
else echo "not ok docs-named-functions: named but not in the code: $out"; fi

# the codes numaguardctl(1) lists for findings[].code
man_codes() { awk '/^\.B findings\[\]/ { on = 1 } on { print } on && /codes are added/ { exit }' "$1" |
                grep -oE '\b[A-Z][A-Z_]+[A-Z]\b' | sort -u; }
out=$(diff <(sed -nE 's/.*X\(([A-Z_]+), "[0-9a-f]{32}",.*/\1/p' "$codes_h" | sort -u) <(man_codes "$SRC/man/numaguardctl.1") |
      grep '^[<>]' | sed 's/^</code:/; s/^>/man:/' | tr '\n' ' ')
if [ -z "$out" ]; then echo "ok docs-codes"; else echo "not ok docs-codes: $out"; fi

# numaguard.conf(5)'s keys (each a .TP with .B KEY) against the loader's table
conf_keys() { grep -A1 '^\.TP' "$1" | awk '$1 == ".B" || $1 == ".BR" || $1 == ".BI" { print $2 }' | sort -u; }
out=$(diff <(grep -ohE '\.key = "[a-z_]+"' "$SRC"/lib/0-core/*.c | sed 's/.key = "//; s/"//' | sort -u) \
           <(conf_keys "$SRC/man/numaguard.conf.5") | grep '^[<>]' | sed 's/^</code:/; s/^>/man:/' | tr '\n' ' ')
if [ -z "$out" ]; then echo "ok docs-keys"; else echo "not ok docs-keys: $out"; fi

# the metric families the code writes (each through ng_metrics_family(),
# directly, through gauge() or ng_metrics_seconds(), or from a table whose
# rows begin with the name) and those the man pages name
code_metrics() { { grep -ohE '(ng_metrics_family|gauge|ng_metrics_seconds)\(f, "[a-z_]+"' "$@" | sed -E 's/.*"([a-z_]+)"/\1/'
                   grep -ohE '^\s*\{ "[a-z_]+",' "$@" | sed -E 's/.*"([a-z_]+)".*/\1/'; } | sort -u; }
man_metrics() { grep -ohE '\bnumaguard_[a-z_]+' "$@" | sed 's/^numaguard_//' |
                grep -vxE 'node_hugepages_total|poll_bytes_read' | sort -u; }
out=$(diff <(code_metrics "$SRC/lib/3-report/metrics.c" "$SRC/daemon/numaguardd/metrics-file.c") \
           <(man_metrics "$SRC"/man/*.[1-8]) | grep '^[<>]' | sed 's/^</code:/; s/^>/man:/' | tr '\n' ' ')
if [ -z "$out" ]; then echo "ok docs-metrics"; else echo "not ok docs-metrics: $out"; fi

# Planted drifts: a severity the code does not raise, an override README
# leaves out, a MESSAGE_ID changed in the man page.
sed 's/^| `CYCLOPS` | warning |/| `CYCLOPS` | warning \/ critical |/; s/^| `NODE_PRESSURE` | warning \/ critical |/| `NODE_PRESSURE` | warning |/' \
        "$SRC/README.md" > "$tmp/README.md"
sed 's/^CYCLOPS                  e8/CYCLOPS                  f8/' "$SRC/man/numaguardd.8" > "$tmp/numaguardd.8"
sev=$(severity_drift "$codes_h" "$tmp/README.md")
ids=$(id_drift "$codes_h" "$SRC/daemon/numaguardd/sink.c" "$tmp/numaguardd.8")
mkdir -p "$tmp/p/lib" "$tmp/p/daemon" "$tmp/p/tests" "$tmp/p/bench" "$tmp/p/man"
printf 'see ng-gone.h, lib/gone.c and ng_gone_away()\n' > "$tmp/p/x.md"
named=$(missing_files "$tmp/p" x.md; missing_functions "$tmp/p" x.md)
printf '.TP\n.B gone_key\nnumaguard_gone_metric\n' > "$tmp/p/man/x.5"
keys=$(diff <(grep -ohE '\.key = "[a-z_]+"' "$SRC"/lib/0-core/*.c | sed 's/.key = "//; s/"//' | sort -u) \
            <(conf_keys "$tmp/p/man/x.5") | grep -c '^>')
mets=$(diff <(code_metrics "$SRC/lib/3-report/metrics.c") <(man_metrics "$tmp/p/man/x.5") | grep -c '^>')
if [[ $sev == *"CYCLOPS: "*"NODE_PRESSURE: "* ]] && [ "$(tr ';' '\n' <<<"$ids" | grep -c CYCLOPS)" = 2 ] &&
   [ "$(wc -l <<<"$named")" = 3 ] && [ "$keys" = 1 ] && [ "$mets" = 1 ]; then
        echo "ok docs-checks-report"
else echo "not ok docs-checks-report: planted drifts went unseen: '$sev' '$ids' '$named' $keys $mets"; fi
