#!/usr/bin/env bash
# suite: alongside
# libnumaguard's public API as `make install DESTDIR=... PREFIX=/usr`
# installs it (docs/ARCHITECTURE.md, "Public API"):
#  - the headers installed are numaguard.h and exactly those it includes;
#    none of the private ones (parsers, sampling, unit helpers,
#    *-internal.h), and every header an installed one includes is installed;
#  - every installed header compiles alone as C99 with -pedantic and as
#    C++11 (warnings as errors), and declares its functions in extern "C";
#  - a C++ program built with `pkg-config --cflags --libs numaguard` against
#    the installed copy audits a committed fixture tree and prints what
#    numaguardctl audit --json says there (segments, findings, exit status);
#  - libnumaguard.so exports ng_ symbols only, all at version NUMAGUARD_0:
#    exactly the functions and objects the installed headers declare, and
#    every symbol of
#    default visibility of the static library; no library object defines a
#    global symbol without the prefix (the version script would hide it from
#    the .so, not from the static library).
# BUILD: build directory (default build).
set -u
echo 1..9
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
TAP_PREFIX=api; . "$SRC/tests/shell/lib.sh"
for t in cc g++ nm readelf pkg-config jq; do
        command -v $t > /dev/null || skip_all "$t not installed (tests/install-deps installs it)"
done
[ -x "$B/numaguardctl" ] || { echo "not ok api: $B/numaguardctl not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
san=0 sanflags=""
case $BUILD in *san*) san=1 sanflags="-fsanitize=address,undefined" ;; esac

D=$tmp/dest
if ! make -s --no-print-directory -C "$SRC" BUILD="$BUILD" SANITIZE=$san PREFIX=/usr DESTDIR="$D" install \
        > "$tmp/install.log" 2>&1; then
        echo "not ok api-install: $(tail -5 "$tmp/install.log" | tr '\n' ' ')"; exit 1
fi
I=$D/usr/include/numaguard
L=$D/usr/lib

# 1. the installed set: numaguard.h and what it includes, closed under
# #include, nothing private
want=$( (echo numaguard.h; sed -n 's/^#include "\(.*\)"$/\1/p' "$SRC/lib/numaguard.h") | sort | tr '\n' ' ')
got=$(cd "$I" 2>/dev/null && ls | sort | tr '\n' ' ')
private=$(cd "$I" 2>/dev/null && ls | grep -E '^(parse\.h|sample\.h|units\.h|.*-internal\.h)$' | tr '\n' ' ')
unresolved=""
for h in "$I"/*.h; do
        for inc in $(sed -n 's/^#include "\(.*\)"$/\1/p' "$h"); do
                [ -e "$I/$inc" ] || unresolved+=" ${h##*/}->$inc"
        done
done
if [ -n "$want" ] && [ "$want" = "$got" ] && [ -z "$private" ] && [ -z "$unresolved" ]; then
        pass installed-headers
else
        fail installed-headers "installed: $got; numaguard.h names: $want; private: ${private:-none}; unresolved:${unresolved:- none}"
fi

# 2, 3. each header alone: C99 -pedantic, C++11; extern "C" around its
# declarations
JSONC=$(pkg-config --cflags json-c 2>/dev/null)
bad_c="" bad_cxx="" no_guard=""
for h in "$I"/*.h; do
        n=${h##*/}
        printf '#include <%s>\n#include <%s>\nint main(void) { return 0; }\n' "$n" "$n" > "$tmp/one.c"
        # shellcheck disable=SC2086
        cc -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$I" $JSONC "$tmp/one.c" \
                > "$tmp/c.err" 2>&1 || bad_c+=" $n: $(grep -m1 'error' "$tmp/c.err");"
        # shellcheck disable=SC2086
        g++ -std=c++11 -pedantic -Wall -Wextra -Werror -fsyntax-only -x c++ -I"$I" $JSONC "$tmp/one.c" \
                > "$tmp/cxx.err" 2>&1 || bad_cxx+=" $n: $(grep -m1 'error' "$tmp/cxx.err");"
        [ "$n" = numaguard.h ] || grep -q '^extern "C" {$' "$h" || no_guard+=" $n"
done
if [ -z "$bad_c" ]; then pass headers-c99-pedantic; else fail headers-c99-pedantic "$bad_c"; fi
if [ -z "$bad_cxx" ] && [ -z "$no_guard" ]; then pass headers-cxx
else fail headers-cxx "${bad_cxx}${no_guard:+ no extern \"C\":$no_guard}"; fi

# 4, 5. a C++ program against the installed headers and library, found
# through the installed numaguard.pc
tree=$SRC/tests/fixtures/trees/guest4-v1
printf '[global]\nmin_segment_size = 1M\n' > "$tmp/numaguard.conf"
cat > "$tmp/audit.cc" <<'EOF'
#include <cinttypes>
#include <cstdio>
#include <numaguard.h>

int main(int argc, char **argv)
{
        struct ng_path *p = nullptr;
        struct ng_config *cfg = nullptr;
        struct ng_snapshot *s = nullptr;
        struct ng_audit *a = nullptr;
        if (argc != 3 || ng_path_new(argv[1], &p) < 0 || ng_config_load(argv[2], nullptr, nullptr, &cfg) < 0 ||
            ng_collect_for_config(p, cfg, NG_PLACEMENT_AUTO, &s) < 0 || ng_audit_run(s, cfg, &a) < 0)
                return 3;
        for (size_t i = 0; i < a->n_segments; i++) {
                const struct ng_segment *seg = &a->segments[i];
                std::printf("segment %s %s %" PRIu64, seg->name, ng_method_name(seg->method), seg->resident_bytes);
                for (size_t j = 0; j < seg->n_nodes; j++)
                        std::printf(" %d:%" PRIu64, seg->nodes[j].node, seg->nodes[j].bytes);
                std::printf("\n");
        }
        for (size_t i = 0; i < a->n_findings; i++) {
                const struct ng_finding *fd = &a->findings[i];
                std::printf("finding %s %s %s | %s\n", ng_severity_name(fd->severity), ng_code_name(fd->code),
                            fd->instance, fd->message);
        }
        int r = ng_audit_exit_status(a);
        ng_audit_free(a);
        ng_snapshot_free(s);
        ng_config_free(cfg);
        ng_path_free(p);
        return r;
}
EOF
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$L/pkgconfig
pc_cflags=$(pkg-config --cflags numaguard 2>"$tmp/pc.err") && pc_libs=$(pkg-config --libs numaguard 2>>"$tmp/pc.err")
pc_rc=$?
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH
# shellcheck disable=SC2086
if [ $pc_rc = 0 ] && g++ -std=c++11 -Wall -Wextra -Werror $sanflags $pc_cflags -o "$tmp/audit" "$tmp/audit.cc" \
        $pc_libs -Wl,-rpath,"$L" > "$tmp/link.err" 2>&1; then
        pass cxx-build
else
        fail cxx-build "pkg-config: $(cat "$tmp/pc.err") cflags '$pc_cflags' libs '$pc_libs': $(head -5 "$tmp/link.err" | tr '\n' ' ')"
fi
if [ -x "$tmp/audit" ]; then
        "$tmp/audit" "$tree" "$tmp/numaguard.conf" > "$tmp/cxx.out" 2> "$tmp/cxx.err"; rc=$?
        "$B/numaguardctl" audit --json --root "$tree" --config "$tmp/numaguard.conf" > "$tmp/ctl.json" 2> /dev/null; crc=$?
        jq -r '(.segments[] | "segment \(.name) \(.method) \(.resident_bytes)" +
                        ([.nodes[] | " \(.id):\(.bytes)"] | join(""))),
               (.findings[] | "finding \(.severity) \(.code) \(.instance) | \(.message)")' \
                "$tmp/ctl.json" > "$tmp/ctl.out"
        lib=$(ldd "$tmp/audit" | awk '$1 ~ /^libnumaguard/ { print $3 }')
        if [ "$(grep -c '^finding' "$tmp/ctl.out")" -ge 5 ] && [ $rc = $crc ] && cmp -s "$tmp/cxx.out" "$tmp/ctl.out" &&
                [ "$lib" = "$L/libnumaguard.so.0" ]; then
                pass cxx-audit-equals-numaguardctl
        else
                fail cxx-audit-equals-numaguardctl "exit $rc (numaguardctl $crc), libnumaguard from '$lib': $(head -3 "$tmp/cxx.err") $(diff "$tmp/ctl.out" "$tmp/cxx.out" | head -6 | tr '\n' ' ')"
        fi
else
        fail cxx-audit-equals-numaguardctl "not built"
fi

# 6, 7. the shared library's exports
so=$(readlink -f "$L/libnumaguard.so")
nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' | sort -u > "$tmp/exports.v"
sed 's/@.*//' "$tmp/exports.v" | sort -u > "$tmp/exports"
other=$(grep -v '^ng_' "$tmp/exports" | tr '\n' ' ')
unversioned=$(grep -v '@@NUMAGUARD_0$' "$tmp/exports.v" | head -5 | tr '\n' ' ')
if [ "$(wc -l < "$tmp/exports")" -gt 100 ] && [ -z "$other" ] && [ -z "$unversioned" ]; then
        pass exports-prefixed
else
        fail exports-prefixed "$(wc -l < "$tmp/exports") exports; not ng_: ${other:-none}; not at NUMAGUARD_0: ${unversioned:-none}"
fi
# Exactly what the installed headers declare: functions ("ng_x(" starting a
# declaration, or after its return type; not static inline helpers) and
# extern objects. Private headers hide their declarations (visibility).
cat "$I"/*.h | grep -vE '^static|^#' | grep -oE '^[a-z][a-z0-9_ ]*[ *]\**(ng_[a-z0-9_]+)\(' |
        grep -oE 'ng_[a-z0-9_]+\($' | tr -d '(' > "$tmp/declared"
cat "$I"/*.h | grep -oE '^extern [a-z_ ]+[ *]\**ng_[a-z0-9_]+' | grep -oE 'ng_[a-z0-9_]+$' >> "$tmp/declared"
sort -u -o "$tmp/declared" "$tmp/declared"
missing=$(comm -23 "$tmp/declared" "$tmp/exports" | tr '\n' ' ')
extra=$(comm -13 "$tmp/declared" "$tmp/exports" | tr '\n' ' ')
if [ "$(wc -l < "$tmp/declared")" -gt 100 ] && [ -z "$missing" ] && [ -z "$extra" ]; then pass exports-equal-headers
else fail exports-equal-headers "$(wc -l < "$tmp/declared") declared; not exported: ${missing:-none}; exported, declared in no installed header (hide it: #pragma GCC visibility push(hidden) in its private header): ${extra:-none}"; fi

# 8. no object of the library defines an unprefixed global symbol (but
# ASan's ODR indicators, __odr_asan.NAME, in a sanitizer build)
objs=("$B"/lib/*/*.o)
bad=$(nm -A --defined-only "${objs[@]}" 2> /dev/null | awk '$(NF - 1) ~ /^[TDBRVWGS]$/ && $NF !~ /^(ng_|__odr_asan)/ { sub(/:.*/, "", $1); sub(/.*\//, "", $1); print $1 ":" $NF }' | sort -u | tr '\n' ' ')
if [ -e "${objs[0]}" ] && [ -z "$bad" ]; then pass objects-prefixed
else fail objects-prefixed "global symbols without ng_: ${bad:-no objects under $B/lib}"; fi

# 9. the shared library exports every symbol of default visibility the
# static one defines (declarations of *-internal.h are hidden: not those)
readelf -sW "$L/libnumaguard.a" 2> /dev/null |
        awk '$5 == "GLOBAL" && $6 == "DEFAULT" && $7 != "UND" && ($4 == "FUNC" || $4 == "OBJECT") &&
             $8 !~ /^__odr_asan/ { print $8 }' | sort -u > "$tmp/static"
if [ -s "$tmp/static" ] && cmp -s "$tmp/static" "$tmp/exports"; then pass static-equals-shared
else fail static-equals-shared "$(diff "$tmp/static" "$tmp/exports" | head -5 | tr '\n' ' ')"; fi
exit $((fails > 0))
