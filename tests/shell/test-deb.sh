#!/usr/bin/env bash
# The Debian packages: `make deb` (dpkg-buildpackage -us -uc -b) builds
# numaguard, libnumaguard0 and libnumaguard-dev; lintian reports no error;
# the files, the conffile, the maintainer scripts debhelper wrote (unit
# enabled and started, tmpfiles applied), the library's metadata (soname,
# .pc, symbols file) and the -dev package's headers are checked. The
# packages are left in build-deb/packages/ for the systemd guest (tests/e2e
# topology `systemd`), which installs them.
# Built once per suite run: under a sanitizer build (BUILD=build-san) this
# test leaves it to the plain pass. Under CI missing tools are a failure.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in *san*) echo "1..0 # deb: built and checked by the plain (non-sanitizer) pass"; exit 0 ;; esac
echo 1..13
skip() { if [ "${CI:-}" = true ]; then echo "not ok deb: $1"; exit 1; fi; echo "skip deb: $1"; exit 77; }
for t in dpkg-buildpackage dh lintian; do
        command -v $t > /dev/null || skip "$t not installed (tests/install-deps test installs dpkg-dev, debhelper, lintian)"
done
P=$SRC/build-deb/packages
V=$(sed -n 's/^VERSION := //p' "$SRC/Makefile")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
pass() { echo "ok deb-$1"; }
fail() { echo "not ok deb-$1: $2"; fails=$((fails + 1)); }
check() { local name=$1 msg=$2; shift 2; if "$@"; then pass "$name"; else fail "$name" "$msg"; fi; }

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
         ./etc/numaguard/numaguard.conf ./usr/share/man/man8/numaguardd.8.gz ./usr/share/numaguard/numaguard.rules.yml; do
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
check dev-headers "installed: $hdrs" eval '[[ " $hdrs" == *" numaguard.h "* && " $hdrs" == *" ng-kernel.h "* && " $hdrs" != *" ng-parse.h "* && " $hdrs" != *"-internal.h "* ]]'
dpkg-deb -e "$P/libnumaguard0_${V}_$arch.deb" "$tmp/libctl"
syms=$tmp/libctl/symbols
odd=$(grep '^ ' "$syms" 2>&1 | grep -vE '^ (ng_[a-z0-9_]+|NUMAGUARD_0)@NUMAGUARD_0 ' | head -3)
check symbols "$(grep -c '^ ng_' "$syms" 2>&1) ng_ symbols; other: $odd" eval \
        '[ "$(grep -c "^ ng_" "$syms")" -gt 100 ] && [ -z "$odd" ] && head -1 "$syms" | grep -q "^libnumaguard.so.0 libnumaguard0 "'
exit $((fails > 0))
