#!/usr/bin/env bash
# suite: alongside
# The tree's shape, checked on the built objects (nm):
#  - lib/ stages: an object of stage N calls only into stages 0..N (the
#    include path enforces it for declarations; this checks the link);
#  - no circle between the files of the library or of either program: the
#    "file A calls a function defined in file B" graph sorts (tsort);
#  - no .c file in lib/ or daemon/ is over MAX_LINES (600) lines: a bigger
#    one is split along its seams (docs/ARCHITECTURE.md);
#  - the database engines' process names are spelled in one table
#    (lib/1-collect/engine/engine.c), nowhere else in lib/;
#  - no two source files share a name, and the ng- prefix marks exactly
#    the public headers (those lib/numaguard.h includes);
#  - a *-internal.h is its folder's own: no file of another folder (another
#    stage, another module of lib/1-collect, a program) includes one (they
#    use the folder's face);
#  - lib/1-collect is modules in an order (collect_modules below, lowest
#    first; its top, the collector, above them all): every folder is one
#    of them, with one face (one header neither public, ng-*.h, nor
#    *-internal.h), the top has no header of its own, and a module
#    includes the headers and calls the functions only of the modules
#    before it and of its own;
#  - numaguardd and numaguardctl are modules, one header each: no header of
#    a whole program (daemon.h, ctl.h) or of collect (collect-internal.h);
#    every .c but main's has a header of its name, and there is no other;
#    a program's headers are included by its own files (and the tests),
#    never by the other program or lib/; each compiles alone;
#  - the core kit (lib/0-core/util.h) is the one definition of ELEMENTSOF
#    and the time units, and is used: no array length spelled out as
#    sizeof / sizeof, no realloc() or reallocarray() growth by hand
#    (ng_grow), no clock_gettime() (now_usec, ng_timespec_usec) in lib or
#    the daemon;
#  - README.md opens with the two set-up commands, each in a block of its
#    own: installing, building and auditing this host first, alone; then a
#    one-line warning that the suite is for a test machine, never a
#    database host; then the suite's command, the one .ci/run runs.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
# the sources and the objects' include arrows: the plain pass checks them
case $BUILD in *san*) echo "1..0 # layout: checked by the plain (non-sanitizer) pass"; exit 0 ;; esac
echo "1..31"
command -v nm >/dev/null && command -v tsort >/dev/null || { echo "skip layout: nm or tsort missing"; exit 77; }

stages=()
for d in "$SRC"/lib/*/; do
        d=${d%/}; [ -n "$(ls "$d"/*.c 2>/dev/null)" ] && stages+=("${d##*/}")
done
TAP_PREFIX=layout; . "$SRC/tests/shell/lib.sh"

# edges OBJ...: "caller callee symbol" for every undefined symbol of one
# object that another of the given objects defines.
edges() {
        { nm -A --defined-only "$@" | awk '$(NF - 1) ~ /^[TDBR]$/ { sub(/:.*/, "", $1); print "D", $1, $NF }'
          nm -A -u "$@" | awk '{ sub(/:.*/, "", $1); print "U", $1, $NF }'; } |
                awk '$1 == "D" { def[$3] = $2; next } { u[++n] = $2 " " $3 }
                     END { for (i = 1; i <= n; i++) { split(u[i], f, " ");
                                if ((f[2] in def) && def[f[2]] != f[1]) print f[1], def[f[2]], f[2] } }'
}
rel() { local p=$1; p=${p#"$B"/}; echo "${p%.o}.c"; }

libobjs=()
shopt -s nullglob
for st in "${stages[@]}"; do libobjs+=("$B/lib/$st/"*.o "$B/lib/$st/"*/*.o); done
shopt -u nullglob
[ ${#stages[@]} -ge 5 ] && [ -e "${libobjs[0]}" ] || { echo "not ok layout: no staged objects under $B/lib"; exit 1; }
libedges=$(edges "${libobjs[@]}")

stage_of() {    # index of the stage folder of an object path
        local i
        for i in "${!stages[@]}"; do
                case $1 in "$B/lib/${stages[$i]}/"*) echo "$i"; return ;; esac
        done
        echo -1
}
up=""
while read -r a b s; do
        [ -n "$a" ] || continue
        [ "$(stage_of "$b")" -le "$(stage_of "$a")" ] || up+=" $(rel "$a")->$(rel "$b")($s)"
done <<<"$libedges"
if [ -z "$up" ]; then pass "lib-stages-call-down"; else fail "lib-stages-call-down" "calls into a later stage:$up"; fi

# Rooms: a stage's folder may hold folders of its own, one level deep, which
# belong to the stage (the Makefile puts each on the stage's include path,
# and stage_of above counts their objects as the stage's); a file includes
# a header by its name alone, never by a relative path into another room.
deep=$(cd "$SRC" && find lib -mindepth 3 -type d | tr '\n' ' ')
if [ -z "$deep" ]; then pass "lib-rooms-one-level"; else fail "lib-rooms-one-level" "folders below a room: $deep"; fi
relinc=$(cd "$SRC" && grep -rnE '#include "[^"]*/' lib | tr '\n' ' ')
if [ -z "$relinc" ]; then pass "lib-includes-by-name"; else fail "lib-includes-by-name" "$relinc"; fi

# The pipeline order is the folder order.
want="0-core 1-collect 2-analyze 3-report 4-act"
if [ "${stages[*]}" = "$want" ]; then pass "lib-stage-order"; else fail "lib-stage-order" "ls lib: ${stages[*]}"; fi

acyclic() {     # NAME EDGES: the file graph has no circle
        local name=$1 out
        out=$(awk 'NF == 3 { print $1, $2 }' <<<"$2" | sort -u | tsort 2>&1 >/dev/null)
        if [ -z "$out" ]; then pass "$name-no-circle"
        else fail "$name-no-circle" "$(sed "s|$B/||g" <<<"$out" | tr '\n' ' ')"; fi
}
acyclic lib "$libedges"
for prog in cli:numaguardctl numaguardd:numaguardd; do
        dir=${prog%%:*} prog=${prog#*:}
        objs=("$B/daemon/$dir/"*.o)
        [ -e "${objs[0]}" ] || { fail "$prog-no-circle" "no objects under $B/daemon/$dir"; continue; }
        acyclic "$prog" "$(edges "${objs[@]}")"
done

# Rooms stay small: a .c over MAX_LINES lines is split along its seams.
MAX_LINES=600
big() {         # FILE...: "file (N lines)" for each file over MAX_LINES
        awk -v max=$MAX_LINES 'FNR == 1 && NR > 1 && n > max { printf " %s (%d lines)", f, n }
                               { f = FILENAME; n = FNR }
                               END { if (n > max) printf " %s (%d lines)", f, n }' "$@"
}
cfiles=()
while IFS= read -r -d '' f; do cfiles+=("${f#"$SRC"/}"); done < <(find "$SRC/lib" "$SRC/daemon" -name '*.c' -print0 | sort -z)
over=$(cd "$SRC" && big "${cfiles[@]}")
if [ ${#cfiles[@]} -gt 0 ] && [ -z "$over" ]; then pass "c-files-at-most-$MAX_LINES-lines"
else fail "c-files-at-most-$MAX_LINES-lines" "split along the seams:${over:- no .c found}"; fi
# ... and the size check can fail.
tmp=$(mktemp); trap 'rm -rf "$tmp" "$tmp.d"' EXIT
seq 1 $((MAX_LINES + 1)) > "$tmp"
if [ -n "$(big "$tmp")" ] && [ -z "$(head -n $MAX_LINES "$tmp" | big /dev/stdin)" ]; then pass "size-check-reports-big-file"
else fail "size-check-reports-big-file" "a file of $((MAX_LINES + 1)) lines passed, or one of $MAX_LINES failed"; fi

# One table of engines: their process names appear in lib/ only there.
spelled=$(cd "$SRC" && grep -rlE '"ora_|mysqld|mariadbd|hdb|postgres' lib | grep -vx 'lib/1-collect/engine/engine.c' | tr '\n' ' ')
if [ -z "$spelled" ] && grep -q '"mysqld"' "$SRC/lib/1-collect/engine/engine.c"; then pass "engines-one-table"
else fail "engines-one-table" "engine names outside lib/1-collect/engine/engine.c: ${spelled:-(the table names none)}"; fi

# Names: a file name says which file it is, in the whole tree of sources
# (lib/ and both programs); the ng- prefix marks the public headers, the
# ones lib/numaguard.h includes, and no private one.
dups=$(cd "$SRC" && find lib daemon -name '*.[ch]' -printf '%f\n' | sort | uniq -d | tr '\n' ' ')
if [ -z "$dups" ] && [ ${#cfiles[@]} -gt 0 ]; then pass "file-names-unique"
else fail "file-names-unique" "names used twice: ${dups:-(no sources found)}"; fi
public=$(sed -n 's/^#include "\(ng-[a-z0-9-]*\.h\)"$/\1/p' "$SRC/lib/numaguard.h" | sort)
prefixed=$(cd "$SRC" && find lib -name 'ng-*.h' -printf '%f\n' | sort)
if [ -n "$public" ] && [ "$public" = "$prefixed" ]; then pass "ng-prefix-is-public"
else fail "ng-prefix-is-public" "public but unprefixed or missing: $(comm -23 <(echo "$public") <(echo "$prefixed") | tr '\n' ' ');\
 prefixed but private: $(comm -13 <(echo "$public") <(echo "$prefixed") | tr '\n' ' ')"; fi

# A *-internal.h is included only by the files of its own folder (a stage's,
# or one module's of lib/1-collect); the others use the folder's face.
declare -A internal_of
while IFS= read -r -d '' h; do
        r=${h#"$SRC"/}; internal_of[${h##*/}]=${r%/*}
done < <(find "$SRC/lib" -name '*-internal.h' -print0)
# stdin: grep -n lines "FILE:N:#include ..."; prints " FILE:N->HEADER" for
# each include of a header that the map named MAP (header -> its folder)
# holds, from a file outside that folder.
includes_outside() {    # MAP
        local -n folder_of=$1
        local f n inc h
        while IFS=: read -r f n inc; do
                h=$(sed -n 's/^#include "\([^"]*\)".*/\1/p' <<<"$inc")
                [ -n "$h" ] && [ -n "${folder_of[$h]:-}" ] || continue
                [ "${f%/*}" = "${folder_of[$h]}" ] || printf ' %s:%s->%s' "$f" "$n" "$h"
        done
}
cross_includes() { includes_outside internal_of; }
cross=$(cd "$SRC" && grep -rnE '^#include "[^"]*-internal\.h"' lib daemon | cross_includes)
if [ ${#internal_of[@]} -gt 0 ] && [ -z "$cross" ]; then pass "internal-headers-stay-in-folder"
else fail "internal-headers-stay-in-folder" "another folder's internals included:${cross:- (no *-internal.h found)}"; fi
# ... and the check can fail: a later stage, a program, another module of
# collect and collect's top including a module's internals.
fake=$(printf 'lib/4-act/x.c:1:#include "owner-internal.h"\ndaemon/cli/y.c:2:#include "path-internal.h"\nlib/1-collect/owners/z.c:3:#include "owner-internal.h"\nlib/1-collect/dbconf/w.c:4:#include "owner-internal.h"\nlib/1-collect/collect.c:5:#include "shm-internal.h"\n')
if [ "$(cross_includes <<<"$fake")" = " lib/4-act/x.c:1->owner-internal.h daemon/cli/y.c:2->path-internal.h lib/1-collect/dbconf/w.c:4->owner-internal.h lib/1-collect/collect.c:5->shm-internal.h" ]
then pass "internal-check-reports-crossing"
else fail "internal-check-reports-crossing" "got: $(cross_includes <<<"$fake")"; fi

# lib/1-collect's modules, lowest first (docs/ARCHITECTURE.md, "The modules
# of collect"). A module includes the headers of those before it and its
# own, never a later one's, and calls only into them; the top
# (lib/1-collect/*.c, the collector) is above them all.
collect_modules=(kernel-text path sampler snapshot engine reader host namespaces owners cgroups dbconf proc
                 picture shm placement)
declare -A module_rank
for i in "${!collect_modules[@]}"; do module_rank[${collect_modules[$i]}]=$i; done
rank_of() {     # PATH (a source, header or object under lib/1-collect): its module's rank
        local p=${1#*lib/1-collect/}
        case $p in
        */*) echo "${module_rank[${p%%/*}]:--1}" ;;
        *) echo "${#collect_modules[@]}" ;;
        esac
}
folders=$(cd "$SRC/lib/1-collect" && find . -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ')
listed=$(printf '%s\n' "${collect_modules[@]}" | sort | tr '\n' ' ')
hub=$(cd "$SRC/lib/1-collect" && find . -maxdepth 1 -name '*.h' -printf '%f ')
if [ "$folders" = "$listed" ] && [ -z "$hub" ]; then pass "collect-modules-listed"
else fail "collect-modules-listed" "folders: $folders; in the order: $listed; headers at the top: ${hub:-none}"; fi
faces=""
for m in "${collect_modules[@]}"; do
        f=$(cd "$SRC/lib/1-collect/$m" 2>/dev/null && find . -maxdepth 1 -name '*.h' ! -name 'ng-*' ! -name '*-internal.h' -printf '%f ')
        [ "$(wc -w <<<"$f")" = 1 ] || faces+=" $m: ${f:-none};"
done
if [ -z "$faces" ]; then pass "collect-modules-one-face"
else fail "collect-modules-one-face" "a module's face is one header:$faces"; fi
declare -A header_rank
while IFS= read -r -d '' h; do header_rank[${h##*/}]=$(rank_of "$h"); done < <(find "$SRC/lib/1-collect" -name '*.h' -print0)
includes_up() { # stdin: grep -n lines "FILE:N:#include ...": " FILE:N->HEADER" for each later module's header
        local f n inc h
        while IFS=: read -r f n inc; do
                h=$(sed -n 's/^#include "\([^"]*\)".*/\1/p' <<<"$inc")
                [ -n "$h" ] && [ -n "${header_rank[$h]:-}" ] || continue
                [ "${header_rank[$h]}" -le "$(rank_of "$f")" ] || printf ' %s:%s->%s' "$f" "$n" "$h"
        done
}
up=$(cd "$SRC" && grep -rnE '^#include "' lib/1-collect | includes_up)
if [ ${#header_rank[@]} -gt 0 ] && [ -z "$up" ]; then pass "collect-modules-include-down"
else fail "collect-modules-include-down" "a later module's header included:${up:- (no header found)}"; fi
calls_up() {    # stdin: edges "CALLER CALLEE SYMBOL": those from a module of collect to a later one
        local a b sym
        while read -r a b sym; do
                case $a in *lib/1-collect/*) ;; *) continue ;; esac
                case $b in *lib/1-collect/*) ;; *) continue ;; esac
                [ "$(rank_of "$b")" -le "$(rank_of "$a")" ] || printf ' %s->%s(%s)' "$(rel "$a")" "$(rel "$b")" "$sym"
        done
}
up=$(calls_up <<<"$libedges")
if [ -z "$up" ]; then pass "collect-modules-call-down"
else fail "collect-modules-call-down" "calls into a later module:$up"; fi
# ... and both checks can fail: the kernel's text including the placement's
# face, the snapshot's public header the owners' (as it once did), the
# snapshot's queries calling into the placement.
fake=$(printf 'lib/1-collect/kernel-text/x.c:1:#include "placement.h"\nlib/1-collect/placement/y.c:2:#include "parse.h"\nlib/1-collect/collect.c:3:#include "shm.h"\nlib/1-collect/snapshot/ng-snapshot.h:4:#include "ng-owner.h"\n')
fedge="$B/lib/1-collect/snapshot/q.o $B/lib/1-collect/placement/c.o f
$B/lib/1-collect/placement/c.o $B/lib/1-collect/snapshot/q.o g"
if [ "$(includes_up <<<"$fake")" = " lib/1-collect/kernel-text/x.c:1->placement.h lib/1-collect/snapshot/ng-snapshot.h:4->ng-owner.h" ] &&
   [ "$(calls_up <<<"$fedge")" = " lib/1-collect/snapshot/q.c->lib/1-collect/placement/c.c(f)" ]
then pass "collect-modules-checks-report"
else fail "collect-modules-checks-report" "got: $(includes_up <<<"$fake"); $(calls_up <<<"$fedge")"; fi

# One core kit: ELEMENTSOF and the time units defined once, in util.h.
kit_defs() {    # FILE...: "file:line" of each definition of a kit macro
        grep -HnE '^[[:space:]]*#[[:space:]]*define[[:space:]]+(ELEMENTSOF|N_ELEMENTS|NSEC_PER_USEC|USEC_PER_MSEC|USEC_PER_SEC)\b' "$@" |
                cut -d: -f1,2 | tr '\n' ' '
}
mapfile -t srcs < <(cd "$SRC" && find lib daemon tests/unit -name '*.[ch]' | sort)
defs=$(cd "$SRC" && kit_defs "${srcs[@]}")
if [ "$(wc -w <<<"$defs")" = 4 ] && [ -z "$(tr ' ' '\n' <<<"$defs" | grep -v '^lib/0-core/util.h:')" ]
then pass "core-kit-defined-once"
else fail "core-kit-defined-once" "ELEMENTSOF, NSEC_PER_USEC, USEC_PER_MSEC, USEC_PER_SEC defined at: ${defs:-nowhere}"; fi
# ... and used: an array's length, growth and the microsecond clock.
kit_bypassed() {        # FILE...: lines that spell out what the kit does (tests may grow
                        # and read clocks their own way, to check the kit)
        { grep -HnE 'sizeof[^;/]*/[[:space:]]*sizeof' "$@"
          grep -HnE '(^|[^_a-z])(realloc|reallocarray|clock_gettime)\(|tv_nsec[[:space:]]*/[[:space:]]*1000[^0]' "$@" |
                grep -v '^tests/'; } |
                grep -v '^lib/0-core/util.h:' | cut -d: -f1,2 | sort -t: -k1,1 -k2,2n | tr '\n' ' '
}
bypass=$(cd "$SRC" && kit_bypassed "${srcs[@]}")
if [ -z "$bypass" ]; then pass "core-kit-used"
else fail "core-kit-used" "use ELEMENTSOF, ng_grow() or now_usec() (util.h) at: $bypass"; fi
# ... and both checks can fail.
printf '#define ELEMENTSOF(a) 1\nn = sizeof(v) / sizeof(v[0]);\np = realloc(p, 2 * n);\nu = ts.tv_nsec / 1000;\nq = reallocarray(q, n + 1, 8);\nclock_gettime(CLOCK_MONOTONIC, &ts);\n' > "$tmp"
if [ "$(kit_defs "$tmp" | wc -w)" = 1 ] && [ "$(kit_bypassed "$tmp" | wc -w)" = 5 ]; then pass "core-kit-checks-report"
else fail "core-kit-checks-report" "a second ELEMENTSOF, a spelled-out length, realloc, reallocarray or clock went unseen"; fi

# One typed query of meminfo: after collection (the parser in kernel-text,
# the reader's checks of what it read), a key is looked up by its text only
# in lib/1-collect/snapshot/node-supply.c (ng_meminfo_bytes,
# ng_default_huge_kib, ng_node_supply, ng_host_memory).
meminfo_lookups() {     # FILE...: "file:line" of a lookup outside the query
        grep -HnE '(^|[^_a-z])ng_meminfo_(get|value)\(' "$@" |
                grep -vE '^(lib/1-collect/kernel-text/|lib/1-collect/reader/|lib/1-collect/snapshot/node-supply\.c:|tests/)' |
                cut -d: -f1,2 | tr '\n' ' '
}
mapfile -t lib_srcs < <(cd "$SRC" && find lib daemon -name '*.[ch]' | sort)
look=$(cd "$SRC" && meminfo_lookups "${lib_srcs[@]}")
if [ -z "$look" ]; then pass "meminfo-one-query"
else fail "meminfo-one-query" "ask ng_meminfo_bytes() or ng_default_huge_kib() (ng-snapshot.h) at: $look"; fi
mkdir -p "$tmp.d/lib/2-analyze"
printf 'uint64_t k = ng_meminfo_value(&s->meminfo, "Hugepagesize");\n' > "$tmp.d/lib/2-analyze/x.c"
if [ "$(cd "$tmp.d" && meminfo_lookups lib/2-analyze/x.c)" = "lib/2-analyze/x.c:1 " ]; then pass "meminfo-check-reports"
else fail "meminfo-check-reports" "a lookup in lib/2-analyze went unseen"; fi
rm -rf "$tmp.d"

# The programs' modules (docs/ARCHITECTURE.md, "The modules of the
# programs"): no header is shared by a whole program (daemon.h and ctl.h
# are gone, as collect's hub collect-internal.h is); every .c of numaguardd
# and numaguardctl but the one with main() has a header of its own name, and
# no other header is there; a program's headers are its own (its files and
# the tests include them, never the other program or lib/); each compiles
# alone, included twice.
programs=(daemon/numaguardd:numaguardd daemon/cli:numaguardctl)
hubs_back() {   # ROOT: the shared headers that are gone, where one is back
        (cd "$1" && find lib daemon tests bench \( -name daemon.h -o -name ctl.h -o -name collect-internal.h \) -print \
                2>/dev/null) | sort | tr '\n' ' '
}
module_headers() {      # ROOT DIR MAIN: " DIR/X.h (why)" for a module without its header, a header of no module
        local root=$1 dir=$2 main=$3 f b
        for f in "$root/$dir"/*.c; do
                [ -e "$f" ] || continue
                b=${f##*/} b=${b%.c}
                [ "$b" = "$main" ] || [ -e "$root/$dir/$b.h" ] || printf ' %s/%s.h (missing)' "$dir" "$b"
        done
        for f in "$root/$dir"/*.h; do
                [ -e "$f" ] || continue
                b=${f##*/} b=${b%.h}
                [ "$b" != "$main" ] && [ -e "$root/$dir/$b.c" ] || printf ' %s/%s.h (not a module'"'"'s)' "$dir" "$b"
        done
}
declare -A program_of
for p in "${programs[@]}"; do
        for h in "$SRC/${p%%:*}"/*.h; do [ -e "$h" ] && program_of[${h##*/}]=${p%%:*}; done
done
foreign_includes() { includes_outside program_of; }        # a program's header included outside it
alone_flags=(-std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -fsyntax-only)
# shellcheck disable=SC2207
alone_flags+=($(pkg-config --cflags json-c libsystemd 2>/dev/null))
for d in "$SRC"/lib/*/ "$SRC"/lib/*/*/; do alone_flags+=("-I${d%/}"); done
not_alone() {   # ROOT DIR...: " DIR/HEADER" for each header of DIR that does not compile alone
        local root=$1 d h
        shift
        for d in "$@"; do
                for h in "$root/$d"/*.h; do
                        [ -e "$h" ] || continue
                        printf '#include "%s"\n#include "%s"\n' "${h##*/}" "${h##*/}" |
                                cc "${alone_flags[@]}" -iquote "$root/$d" -x c - > /dev/null 2>&1 || printf ' %s/%s' "$d" "${h##*/}"
                done
        done
}
back=$(hubs_back "$SRC")
if [ -z "$back" ]; then pass "program-hub-headers-gone"
else fail "program-hub-headers-gone" "a header of a whole program or folder is back (one header per module): $back"; fi
bad=""
for p in "${programs[@]}"; do bad+=$(module_headers "$SRC" "${p%%:*}" "${p#*:}"); done
if [ ${#program_of[@]} -gt 0 ] && [ -z "$bad" ]; then pass "program-header-per-module"
else fail "program-header-per-module" "each .c but main's has the header of its name, and no other:${bad:- (no header found)}"; fi
foreign=$(cd "$SRC" && grep -rnE --include='*.[ch]' '^#include "' lib daemon bench | foreign_includes)
if [ -z "$foreign" ]; then pass "program-headers-stay-in-program"
else fail "program-headers-stay-in-program" "a program's header included outside it:$foreign"; fi
if command -v cc > /dev/null; then
        bad=$(not_alone "$SRC" "${programs[@]%%:*}")
        if [ -z "$bad" ]; then pass "program-headers-compile-alone"
        else fail "program-headers-compile-alone" "each includes what it needs, once:$bad"; fi
else fail "program-headers-compile-alone" "cc not found"; fi
# ... and the checks can fail: daemon.h back, a module without its header,
# main's header, a header of no module, numaguardd's header in numaguardctl
# and in lib/, numaguardctl's in numaguardd, a header missing an include
# and one without #pragma once.
mkdir -p "$tmp.d/daemon/numaguardd" "$tmp.d/daemon/cli" "$tmp.d/h"
touch "$tmp.d/daemon/numaguardd/daemon.h" "$tmp.d/daemon/cli/"{numaguardctl.c,numaguardctl.h,x.c,y.h,z.c,z.h}
fake=$(printf 'daemon/cli/a.c:1:#include "manager.h"\nlib/2-analyze/b.c:2:#include "sink.h"\ndaemon/numaguardd/c.c:3:#include "common.h"\ndaemon/numaguardd/d.c:4:#include "sink.h"\ndaemon/cli/e.c:5:#include "term.h"\n')
printf '#pragma once\n#include <stdio.h>\nvoid f(FILE *o);\n' > "$tmp.d/h/good.h"
printf '#pragma once\nvoid g(FILE *o);\n' > "$tmp.d/h/bad.h"
printf '#include <stdio.h>\nstruct s { FILE *o; };\n' > "$tmp.d/h/twice.h"
got_hubs=$(hubs_back "$tmp.d")
got_modules=$(module_headers "$tmp.d" daemon/cli numaguardctl)
got_foreign=$(foreign_includes <<<"$fake")
got_alone=$(command -v cc > /dev/null && not_alone "$tmp.d" h)
if [ "$got_hubs" = "daemon/numaguardd/daemon.h " ] &&
   [ "$got_modules" = " daemon/cli/x.h (missing) daemon/cli/numaguardctl.h (not a module's) daemon/cli/y.h (not a module's)" ] &&
   [ "$got_foreign" = " daemon/cli/a.c:1->manager.h lib/2-analyze/b.c:2->sink.h daemon/numaguardd/c.c:3->common.h" ] &&
   [ "$got_alone" = " h/bad.h h/twice.h" ]
then pass "program-checks-report"
else fail "program-checks-report" "got: '$got_hubs' '$got_modules' '$got_foreign' '$got_alone'"; fi
rm -rf "$tmp.d"

# README.md's opening, up to its first section: two code blocks of one
# command each, the warning on the line right before the second.
readme_opening() {      # FILE: "" when right, else what is wrong
        awk -v ci="$2" '
                /^## / { exit }
                /^```/ { if (inblock) { inblock = 0; nb++ } else { inblock = 1; n[nb + 1] = 0; before[nb + 1] = last } next }
                inblock && NF { n[nb + 1]++; cmd[nb + 1] = $0; next }
                NF { last = $0 }
                END {
                        if (nb != 2) { print "code blocks before the first section: " nb ", not 2"; exit }
                        if (n[1] != 1 || cmd[1] !~ /make/ || cmd[1] !~ /numaguardctl audit/ || cmd[1] ~ /run-all/)
                                print "first block: not the one install, build and audit command"
                        if (n[2] != 1 || cmd[2] != ci) print "second block: not .ci/run'"'"'s command (" ci ")"
                        if (before[2] !~ /test machine/ || before[2] !~ /never on a database host/ ||
                            before[2] !~ /hugepage pools/ || before[2] !~ /cgroups/ || before[2] !~ /SysV segments/)
                                print "no warning right before the second block: \"" before[2] "\""
                }' "$1"
}
ci=$(sed -n 's/^exec //p' "$SRC/.ci/run")
bad=$(readme_opening "$SRC/README.md" "$ci")
printf '# t\n\n```sh\nmake && numaguardctl audit\n%s\n```\n\n## Install\n' "$ci" > "$tmp"
if [ -z "$bad" ] && [ -n "$ci" ] && [ -n "$(readme_opening "$tmp" "$ci")" ]; then pass "readme-opening"
else fail "readme-opening" "README.md: ${bad:-the check took both commands in one block (.ci/run: '$ci')}"; fi

# The checks above can fail: a circle is reported.
fake=$(printf 'a b f\nb a g\n')
if [ -n "$(awk '{ print $1, $2 }' <<<"$fake" | tsort 2>&1 >/dev/null)" ]; then pass "tsort-reports-circle"
else fail "tsort-reports-circle" "tsort accepted a->b->a"; fi
[ $fails = 0 ]
