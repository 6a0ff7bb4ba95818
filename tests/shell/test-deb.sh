#!/usr/bin/env bash
# The Debian packages: `make deb` runs dpkg-buildpackage -us -uc -b on a copy
# of the tree in build-deb/src/numaguard-VERSION and collects copies of what
# it wrote in the copy's parent (as sbuild, pbuilder and debuild expect it
# there) in build-deb/packages/; it builds numaguard, libnumaguard0 and
# libnumaguard-dev; lintian reports no error; the files, the conffile, the
# maintainer scripts debhelper wrote (unit enabled and started, tmpfiles
# applied), the library's metadata (soname, .pc, symbols file) and the -dev
# package's headers are checked; libnumaguard-dev depends on the -dev
# package of everything numaguard.pc names (Requires, Requires.private,
# Libs.private), found with dpkg -S. Then, as root on a host without
# numaguard installed, the packages are installed (no service started: a
# policy-rc.d says no) and purged: purge removes the metrics files (the
# default and a metrics_file of the configuration) and /var/lib/numaguard,
# keeps a numaguard-hugepages.conf in /etc/tmpfiles.d and says so on
# stderr. The packages are left in build-deb/packages/ for the systemd
# guest (tests/e2e topology `systemd`), which installs them.
# Built once per suite run: under a sanitizer build (BUILD=build-san) this
# test leaves it to the plain pass. Under CI missing tools are a failure.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in *san*) echo "1..0 # deb: built and checked by the plain (non-sanitizer) pass"; exit 0 ;; esac
echo 1..19
TAP_PREFIX=deb; . "$SRC/tests/shell/lib.sh"
for t in dpkg-buildpackage dh lintian; do
        command -v $t > /dev/null || skip_all "$t not installed (tests/install-deps test installs dpkg-dev, debhelper, lintian)"
done
P=$SRC/build-deb/packages
V=$(sed -n 's/^VERSION := //p' "$SRC/Makefile")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cv=$(cd "$SRC" && dpkg-parsechangelog -S Version)
check version "debian/changelog has $cv, the Makefile $V" test "$cv" = "$V"
if ! make -C "$SRC" -s deb > "$tmp/build.log" 2>&1; then
        fail build "make deb failed: $(tail -20 "$tmp/build.log")"; exit 1
fi
arch=$(dpkg --print-architecture)
for p in numaguard libnumaguard0 libnumaguard-dev; do
        [ -f "$P/${p}_${V}_$arch.deb" ] || fail "build-$p" "no $P/${p}_${V}_$arch.deb"
done
((fails)) && exit 1
pass build

# dpkg-buildpackage's own place: the parent of the tree it ran in holds the
# .debs, the .buildinfo and the .changes, and the .changes lists each file.
par=$SRC/build-deb/src
changes=$par/numaguard_${V}_$arch.changes
missing=""
for f in numaguard_${V}_$arch.deb libnumaguard0_${V}_$arch.deb libnumaguard-dev_${V}_$arch.deb \
         numaguard_${V}_$arch.buildinfo numaguard_${V}_$arch.changes; do
        [ -f "$par/$f" ] || missing+=" $f"
        case $f in *.changes) ;; *) grep -q " $f\$" "$changes" 2>/dev/null || missing+=" $f(not in the .changes)" ;; esac
done
check parent-dir "in $par, missing:$missing" test -z "$missing"

# lintian: the summary for the record, errors fail
lintian --fail-on error "$P/numaguard_${V}_$arch.changes" > "$tmp/lintian" 2>&1; rc=$?
grep -v 'running with root privileges' "$tmp/lintian" | sed 's/^/# /'
echo "# lintian: $(grep -c '^E: ' "$tmp/lintian") errors, $(grep -c '^W: ' "$tmp/lintian") warnings"
check lintian "exit $rc: $(grep '^E: ' "$tmp/lintian")" test "$rc" = 0

deb=$P/numaguard_${V}_$arch.deb
dpkg-deb -c "$deb" | awk '{print $6}' > "$tmp/files"
missing=""
for f in ./usr/sbin/numaguardd ./usr/bin/numaguardctl ./lib/systemd/system/numaguard.service \
         ./usr/lib/systemd/catalog/numaguard.catalog ./usr/lib/tmpfiles.d/numaguard.conf \
         ./etc/numaguard/numaguard.conf ./etc/numaguard/numaguard.conf.d/ ./usr/share/man/man8/numaguardd.8.gz ./usr/share/numaguard/numaguard.rules.yml; do
        grep -qx "$f" "$tmp/files" || missing+=" $f"
done
check files "missing:$missing" test -z "$missing"
dpkg-deb -e "$deb" "$tmp/ctl"
check conffile "conffiles: $(cat "$tmp/ctl/conffiles" 2>&1)" grep -qx /etc/numaguard/numaguard.conf "$tmp/ctl/conffiles"
check postinst-enable "no deb-systemd-helper enable" grep -q "deb-systemd-helper enable 'numaguard.service'" "$tmp/ctl/postinst"
check postinst-start "no deb-systemd-invoke" grep -q "deb-systemd-invoke .*'numaguard.service'" "$tmp/ctl/postinst"
check postinst-tmpfiles "no systemd-tmpfiles --create" grep -q 'systemd-tmpfiles .*--create numaguard.conf' "$tmp/ctl/postinst"
check unit-paths "$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./lib/systemd/system/numaguard.service | grep ^Exec)" eval \
        'dpkg-deb --fsys-tarfile "$deb" | tar -xO ./lib/systemd/system/numaguard.service | grep -qx "ExecStart=/usr/sbin/numaguardd"'

# the library: soname package, the .pc names only what users need
dpkg-deb -x "$P/libnumaguard0_${V}_$arch.deb" "$tmp/lib"
dpkg-deb -x "$P/libnumaguard-dev_${V}_$arch.deb" "$tmp/dev"
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
so=$(readelf -d "$tmp/lib/usr/lib/$ma/libnumaguard.so.0" 2>&1 | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
check soname "SONAME '$so'" test "$so" = libnumaguard.so.0
pc=$tmp/dev/usr/lib/$ma/pkgconfig/numaguard.pc
check pc "$(cat "$pc" 2>&1)" eval 'grep -qx "libdir=/usr/lib/$ma" "$pc" && ! grep -qE "cgroup" "$pc" && grep -qx "Requires.private: inih libsystemd" "$pc"'
# the -dev package carries the public headers only; the library's symbols
# file follows its version node
hdrs=$(cd "$tmp/dev/usr/include/numaguard" 2>/dev/null && ls | tr '\n' ' ')
check dev-headers "installed: $hdrs" eval '[[ " $hdrs" == *" numaguard.h "* && " $hdrs" == *" ng-kernel.h "* && " $hdrs" != *" parse.h "* && " $hdrs" != *"-internal.h "* ]]'
dpkg-deb -e "$P/libnumaguard0_${V}_$arch.deb" "$tmp/libctl"
syms=$tmp/libctl/symbols
odd=$(grep '^ ' "$syms" 2>&1 | grep -vE '^ (ng_[a-z0-9_]+|NUMAGUARD_0)@NUMAGUARD_0 ' | head -3)
check symbols "$(grep -c '^ ng_' "$syms" 2>&1) ng_ symbols; other: $odd" eval \
        '[ "$(grep -c "^ ng_" "$syms")" -gt 100 ] && [ -z "$odd" ] && head -1 "$syms" | grep -q "^libnumaguard.so.0 libnumaguard0 "'

# libnumaguard-dev depends on what numaguard.pc makes pkg-config look for:
# each module of Requires and Requires.private (pkg-config reads the
# private ones even without --static) and each -l of Libs.private (a
# static link), mapped to the package that ships its .pc or libX.so.
pc_field() { sed -n "s/^$1:[[:space:]]*//p" "$SRC/lib/numaguard.pc.in" | tr ',' ' '; }
want="" unmapped=""
skipver=0
for t in $(pc_field Requires) $(pc_field 'Requires\.private'); do
        if ((skipver)); then skipver=0; continue; fi
        case $t in '<' | '>' | '=' | '<=' | '>=' | '!=') skipver=1; continue ;; esac
        pcdir=$(pkg-config --variable=pcfiledir "$t" 2>/dev/null)
        pkg=$(dpkg -S "$pcdir/$t.pc" 2>/dev/null | head -1 | cut -d: -f1)
        [ -n "$pkg" ] && want+=" $pkg" || unmapped+=" $t"
done
for t in $(pc_field 'Libs\.private'); do
        case $t in -l*) ;; *) continue ;; esac
        pkg=$(dpkg -S "/usr/lib/$ma/lib${t#-l}.so" 2>/dev/null | head -1 | cut -d: -f1)
        [ -n "$pkg" ] && want+=" $pkg" || unmapped+=" $t"
done
want=$(tr ' ' '\n' <<<"$want" | sed '/^$/d' | sort -u | tr '\n' ' ')
have=$(dpkg-deb -f "$P/libnumaguard-dev_${V}_$arch.deb" Depends | tr ',' '\n' |
        sed -E 's/^ *//; s/[ (:].*//' | grep -- '-dev$' | sort -u | tr '\n' ' ')
check dev-depends "numaguard.pc needs: $want (not found with dpkg -S:$unmapped); libnumaguard-dev depends on: $have" \
        eval '[ -z "$unmapped" ] && [ -n "$want" ] && [ "$want" = "$have" ]'

# ---- installed and purged on this host
inst() { dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null; }
why=""
if [ "$(id -u)" != 0 ]; then why="not root"
elif [ -n "$(inst numaguard)" ] && [ "$(inst numaguard)" != not-installed ]; then
        why="numaguard is installed on this host ($(inst numaguard)); the test would purge it"
elif [ -e /var/lib/numaguard ] || [ -e /etc/numaguard ]; then
        why="/var/lib/numaguard or /etc/numaguard exist (a make install?); the test would remove them"
fi
if [ -n "$why" ]; then
        for n in install pkg-config removed hugepages-kept; do
                if [ "${CI:-}" = true ]; then fail "purge-$n" "$why"; else echo "skip deb-purge-$n: $why"; fi
        done
        exit $((fails > 0))
fi
prom=/var/lib/prometheus/node-exporter/numaguard.prom
hp=/etc/tmpfiles.d/numaguard-hugepages.conf
own_hp=0; [ -e "$hp" ] || own_hp=1
policy=/usr/sbin/policy-rc.d own_policy=0
cleanup() {
        ((own_policy)) && rm -f "$policy"
        ((own_hp)) && rm -f "$hp"
        rm -rf "$tmp"
}
trap cleanup EXIT
# install: no service starts (deb-systemd-invoke asks policy-rc.d)
if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy" && own_policy=1; fi
apt=(apt-get -y -q -o DPkg::Lock::Timeout=300)
if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" install "$P"/{numaguard,libnumaguard0,libnumaguard-dev}_${V}_$arch.deb \
        > "$tmp/install.log" 2>&1; then
        fail purge-install "$(tail -5 "$tmp/install.log")"
else
        pass purge-install
fi
# the -dev package works: pkg-config resolves numaguard.pc
out=$(pkg-config --cflags --libs numaguard 2>&1)
check purge-pkg-config "pkg-config: $out" eval '[[ "$out" == *-lnumaguard* ]]'
# what a running numaguard leaves: its metrics (the default path and the one
# of metrics_file), a temporary file, the probe's matrix, boot pools
mkdir -p /var/lib/prometheus/node-exporter /var/lib/numaguard "$tmp/textfile"
printf 'numaguard_up 0\n' > "$prom"
printf 'numaguard_up 1\n' > "$tmp/textfile/db.prom"
: > "$prom.AbC123"
echo '{}' > /var/lib/numaguard/latency.json
printf '[global]\nmetrics_file = %s\n' "$tmp/textfile/db.prom" >> /etc/numaguard/numaguard.conf
# node 999: tmpfiles' w writes only to a file that exists, so the line does
# nothing should it outlive the test
((own_hp)) && printf 'w /sys/devices/system/node/node999/hugepages/hugepages-2048kB/nr_hugepages - - - - 7\n' > "$hp"
# apt-get passes on what the maintainer scripts print on stderr, on its stdout
DEBIAN_FRONTEND=noninteractive "${apt[@]}" purge numaguard libnumaguard0 libnumaguard-dev \
        > "$tmp/purge.err" 2>&1; rc=$?
grep '^numaguard:' "$tmp/purge.err" | sed 's/^/# /'
left=""
# node_exporter's textfile directory goes with numaguard only when no other
# package owns it (prometheus-node-exporter does, where it is installed)
textdir=/var/lib/prometheus/node-exporter
dpkg -S "$textdir" > /dev/null 2>&1 && textdir=""
for f in "$prom" "$prom.AbC123" "$tmp/textfile/db.prom" /var/lib/numaguard /etc/numaguard /run/numaguard \
         $textdir /usr/sbin/numaguardd /etc/systemd/system/numaguardd.service \
         /etc/systemd/system/multi-user.target.wants/numaguard.service; do
        [ -e "$f" ] && left+=" $f"
done
check purge-removed "exit $rc, left:$left; $(tail -3 "$tmp/purge.err")" eval '[ $rc = 0 ] && [ -z "$left" ] &&
        { [ "$(inst numaguard)" = not-installed ] || [ -z "$(inst numaguard)" ]; }'
if ((own_hp)); then
        check purge-hugepages-kept "$(cat "$tmp/purge.err")" eval '[ -f "$hp" ] &&
                grep -q "numaguard: KEPT $hp" "$tmp/purge.err" &&
                grep -q "numaguard:   node 999: 7 pages of 2048 kB" "$tmp/purge.err"'
else
        echo "skip deb-purge-hugepages-kept: $hp existed before the test (left alone)"
fi
exit $((fails > 0))
