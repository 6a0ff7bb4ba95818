#!/usr/bin/env bash
# Packaging of numaguardd: `make install`/`make uninstall` with DESTDIR put
# and remove every file; the unit passes `systemd-analyze verify` (with the
# installed man pages); the journal catalog compiles and has an entry for
# every MESSAGE_ID the daemon sends; man pages render without warnings and
# have EXIT STATUS; the Prometheus rules parse and use only metrics that
# numaguard writes.
# BUILD: build directory (default build).
set -u
echo 1..21
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
[ -x "$B/numaguardd" ] || { echo "not ok packaging: $B/numaguardd not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_PREFIX=packaging; . "$SRC/tests/shell/lib.sh"
san=0; case $BUILD in *san*) san=1 ;; esac

# ---- install / uninstall into a DESTDIR
D=$tmp/inst
mk() { make -s -C "$SRC" BUILD="$BUILD" SANITIZE=$san PREFIX=/usr SYSCONFDIR=/etc \
        SYSTEMDSYSTEMUNITDIR=/usr/lib/systemd/system CATALOGDIR=/usr/lib/systemd/catalog \
        TMPFILESDIR=/usr/lib/tmpfiles.d DESTDIR="$D" "$@" > "$tmp/make.out" 2>&1; }
if mk install; then pass install; else fail install "$(tail -5 "$tmp/make.out")"; fi
want=(usr/sbin/numaguardd usr/bin/numaguardctl usr/lib/libnumaguard.a usr/lib/libnumaguard.so
      usr/include/numaguard/ng-audit.h usr/include/numaguard/ng-metrics.h usr/lib/pkgconfig/numaguard.pc
      usr/lib/systemd/system/numaguard.service usr/lib/systemd/catalog/numaguard.catalog
      usr/lib/tmpfiles.d/numaguard.conf etc/numaguard/numaguard.conf etc/numaguard/numaguard.conf.d
      usr/share/numaguard/numaguard.rules.yml usr/share/numaguard/numaguard.rules.test.yml usr/share/man/man8/numaguardd.8
      usr/share/man/man1/numaguardctl.1 usr/share/man/man5/numaguard.conf.5)
missing=""
for f in "${want[@]}"; do [ -e "$D/$f" ] || missing+=" $f"; done
check install-files "missing:$missing" test -z "$missing"
# the shipped rules' tests run where they are installed, beside the rules
if command -v promtool > /dev/null; then
        out=$(cd "$D/usr/share/numaguard" 2>/dev/null && promtool test rules numaguard.rules.test.yml 2>&1); rc=$?
        check install-rules-tests "exit $rc: $(tail -5 <<<"$out")" test "$rc" = 0
else
        echo "skip packaging-install-rules-tests: promtool not installed"
fi
check install-unit-paths "$(grep -E '^Exec' "$D/usr/lib/systemd/system/numaguard.service")" eval \
        'grep -qx "ExecStart=/usr/sbin/numaguardd" "$D/usr/lib/systemd/system/numaguard.service" &&
         grep -qx "ExecReload=/usr/bin/numaguardctl reload" "$D/usr/lib/systemd/system/numaguard.service"'
# An administrator's config survives install and uninstall.
echo "# mine" >> "$D/etc/numaguard/numaguard.conf"
mk install
check install-keeps-config "config overwritten" grep -q '^# mine' "$D/etc/numaguard/numaguard.conf"

# ---- the unit: systemd-analyze verify, with the man pages it names
if command -v systemd-analyze > /dev/null; then
        sed -e "s|@SBINDIR@|$B|g; s|@BINDIR@|$B|g" "$SRC/systemd/numaguard.service.in" > "$tmp/numaguard.service"
        out=$(MANPATH=$D/usr/share/man systemd-analyze verify "$tmp/numaguard.service" 2>&1); rc=$?
        check unit-verify "exit $rc: $out" test "$rc" = 0 -a -z "$out"
        # docs/ARCHITECTURE.md, "Corrections": these would make the correcting
        # writes fail.
        check unit-no-readonly-tunables "ProtectKernelTunables/ProtectControlGroups set" \
                eval '! grep -qE "^(ProtectKernelTunables|ProtectControlGroups)=" "$tmp/numaguard.service"'
        caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$tmp/numaguard.service")
        undocumented=""
        for c in $caps; do grep -q "^# $c:" "$tmp/numaguard.service" || undocumented+=" $c"; done
        check unit-caps-justified "no comment for:$undocumented" test -n "$caps" -a -z "$undocumented"
else
        for n in unit-verify unit-no-readonly-tunables unit-caps-justified; do
                echo "skip packaging-$n: systemd-analyze not installed"
        done
fi

# ---- the catalog: compiles, one entry per id the programs send
if command -v journalctl > /dev/null; then
        out=$(journalctl --root="$D" --update-catalog 2>&1); rc=$?
        check catalog-compiles "exit $rc: $out" test "$rc" = 0
        journalctl --root="$D" --list-catalog > "$tmp/catalog.list" 2>&1
        ids=$(grep -ohE '"[0-9a-f]{32}"' "$SRC/daemon/numaguardd/sink.c" "$SRC/lib/2-analyze/ng-codes.h" "$SRC/lib/0-core/ng-correction.h" |
              tr -d '"' | sort -u)
        nocat=""
        for id in $ids; do grep -q "^$id numaguard: " "$tmp/catalog.list" || nocat+=" $id"; done
        check catalog-complete "ids without entry:$nocat" test "$(wc -w <<<"$ids")" -ge 19 -a -z "$nocat"
else
        for n in catalog-compiles catalog-complete uninstall-catalog; do
                echo "skip packaging-$n: journalctl not installed"
        done
fi

# ---- man pages
for m in numaguardd.8 numaguardctl.1 numaguard.conf.5; do
        out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=all -l "$SRC/man/$m" 2>&1 > "$tmp/$m.txt"); rc=$?
        check "man-$m" "exit $rc: $out" eval '[ $rc = 0 ] && [ -z "$out" ] && grep -q "^EXIT STATUS" "$tmp/$m.txt"'
done

# ---- Prometheus rules: valid YAML, only metrics numaguard writes
rules=$SRC/conf/numaguard.rules.yml
if python3 -c 'import yaml' 2> /dev/null; then
        check rules-yaml "does not parse" python3 -c "import yaml, sys
d = yaml.safe_load(open('$rules'))
assert all('alert' in r and 'expr' in r for g in d['groups'] for r in g['rules'])"
else
        echo "skip packaging-rules-yaml: python3-yaml not installed"
fi
unknown=""
for mname in $(grep -oE 'numaguard_[a-z_]+' "$rules" | sort -u); do
        # the library's series, and the daemon's own (numaguard_up)
        grep -q "\"${mname#numaguard_}\"" "$SRC/lib/3-report/metrics.c" "$SRC/daemon/numaguardd/metrics-file.c" ||
                unknown+=" $mname"
done
check rules-metrics "unknown metrics:$unknown" test -z "$unknown"
unknown=""
for code in CYCLOPS REMOTE_MEMORY HUGEPAGE_FALLBACK HUGEPAGE_SHORTFALL HUGEPAGE_NODE_SHORTFALL HUGEPAGE_IDLE; do
        grep -q "$code" "$rules" || unknown+=" $code"
done
check rules-codes "codes without a rule:$unknown" test -z "$unknown"

# ---- the library names only what its users need, links only what it calls
pc=$(PKG_CONFIG_PATH=$D/usr/lib/pkgconfig pkg-config --libs --static numaguard 2>&1); rc=$?
check pc-resolves "pkg-config --libs --static numaguard: exit $rc: $pc" test "$rc" = 0
# libsystemd: the library asks and sets a unit's cpuset properties over sd-bus.
check pc-no-unused "names a library numaguard does not call: $pc" eval '! grep -qE "cgroup" <<<"$pc" && grep -q -- -lsystemd <<<"$pc"'
needed=$(readelf -d "$D/usr/lib/libnumaguard.so" 2>&1 | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
check so-needed "libnumaguard.so needs: $needed" eval 'grep -q libjson-c <<<"$needed" && grep -q libsystemd <<<"$needed" && ! grep -qE "cgroup" <<<"$needed"'

# ---- uninstall removes what install put (the edited config stays) and
# drops numaguard's entries from the compiled catalog
mk uninstall
if command -v journalctl > /dev/null; then
        left=$(journalctl --root="$D" --list-catalog 2>/dev/null | grep -c ' numaguard: ')
        check uninstall-catalog "$left numaguard entries left in the catalog database" test "$left" = 0
fi
rm -rf "$D/var/lib/systemd/catalog"     # journalctl --update-catalog above
left=$(cd "$D" && find . -type f | sort)
check uninstall "left: $left" test "$left" = "./etc/numaguard/numaguard.conf"
exit $((fails > 0))
