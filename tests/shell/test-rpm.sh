#!/usr/bin/env bash
# suite: alongside
# The RPM packages for Oracle Linux and RHEL, built here on Debian: `make rpm`
# runs rpmbuild -ba on rpm/numaguard.spec with --nodeps (Debian's rpm
# database knows none of the BuildRequires; the build uses the Debian
# packages tests/install-deps installs) and rpm/macros.systemd-fallback
# (Debian's rpm has no systemd-rpm-macros). Checked: each file lands in its
# package (numaguard, libnumaguard, libnumaguard-devel), the configuration is
# %config(noreplace), the licence texts are %license files (numaguard: both,
# as it links the LGPL library statically; libnumaguard: the LGPL; the
# -devel package requires libnumaguard, which carries them), the scriptlets (preset, tmpfiles, the journal catalog,
# disable on erase, try-restart on upgrade, the erase clean-up) parse, the
# requires and provides (libnumaguard-devel requires pkgconfig() of every
# module numaguard.pc names and numactl-devel for its -lnuma), the .pc and
# the unit's paths, and rpmlint finds nothing with rpm/rpmlint.toml (whose
# filters say why each is not RHEL's concern). Not tried here: installing
# them, which needs an RPM-based host (README.md, "RPM packages").
# Under a sanitizer build (BUILD=build-san) the plain pass does it. Under CI
# missing tools are a failure.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in *san*) echo "1..0 # rpm: built and checked by the plain (non-sanitizer) pass"; exit 0 ;; esac
echo 1..12
TAP_PREFIX=rpm; . "$SRC/tests/shell/lib.sh"
for t in rpmbuild rpmlint rpm2cpio cpio; do
        command -v $t > /dev/null || skip_all "$t not installed (tests/install-deps test installs rpm, rpmlint, cpio)"
done
V=$(sed -n 's/^VERSION := //p' "$SRC/Makefile")
SPEC=$SRC/rpm/numaguard.spec
R=$SRC/build-rpm/RPMS/$(rpm --eval '%{_arch}')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sv=$(sed -n 's/^Version: *//p' "$SPEC")
check version "rpm/numaguard.spec has $sv, the Makefile $V" test "$sv" = "$V"
t0=$(date +%s)
if ! make -C "$SRC" -s rpm RPMBUILD_OPTS="--nodeps --load rpm/macros.systemd-fallback --quiet" > "$tmp/build.log" 2>&1; then
        fail build "make rpm failed: $(tail -20 "$tmp/build.log")"; exit 1
fi
echo "# make rpm (tarball, rpmbuild -ba): $(($(date +%s) - t0)) s"
rel=$(rpm -q --qf '%{RELEASE}\n' --specfile "$SPEC" 2>/dev/null | head -1)
arch=$(rpm --eval '%{_arch}')
main=$R/numaguard-$V-$rel.$arch.rpm lib=$R/libnumaguard-$V-$rel.$arch.rpm dev=$R/libnumaguard-devel-$V-$rel.$arch.rpm
missing=""
for f in "$main" "$lib" "$dev" "$SRC/build-rpm/SRPMS/numaguard-$V-$rel.src.rpm"; do [ -f "$f" ] || missing+=" ${f##*/}"; done
check build "missing:$missing ($(ls "$R" 2>&1 | tr '\n' ' '))" test -z "$missing"
[ -z "$missing" ] || exit 1

# ---- each file in its package
rpm -qlp "$main" > "$tmp/main"; rpm -qlp "$lib" > "$tmp/lib"; rpm -qlp "$dev" > "$tmp/dev"
has() { local list=$1; shift; local m=""; for f; do grep -qxE "$f" "$list" || m+=" $f"; done; echo "$m"; }
m=$(has "$tmp/main" /usr/sbin/numaguardd /usr/bin/numaguardctl /usr/lib/systemd/system/numaguard.service \
        /usr/lib/systemd/catalog/numaguard.catalog /usr/lib/tmpfiles.d/numaguard.conf /etc/numaguard/numaguard.conf /etc/numaguard/numaguard.conf.d \
        /usr/share/numaguard/numaguard.rules.yml '/usr/share/man/man1/numaguardctl\.1(\.gz)?' \
        '/usr/share/man/man5/numaguard\.conf\.5(\.gz)?' '/usr/share/man/man8/numaguardd\.8(\.gz)?' \
        /usr/share/bash-completion/completions/numaguardctl /usr/share/zsh/site-functions/_numaguardctl)
stray=$(grep -E 'libnumaguard|/include/' "$tmp/main" | tr '\n' ' ')
check files-numaguard "missing:$m; not its own: $stray" eval '[ -z "$m" ] && [ -z "$stray" ]'
m=$(has "$tmp/lib" /usr/lib64/libnumaguard.so.0 "/usr/lib64/libnumaguard.so.$V")
stray=$(grep -vE "^/usr/lib64/libnumaguard\.so\.(0|$V)$|^/usr/lib/\.build-id|^/usr/share/licenses/libnumaguard" "$tmp/lib" |
        tr '\n' ' ')
check files-libnumaguard "missing:$m; not its own: $stray" eval '[ -z "$m" ] && [ -z "$stray" ]'
m=$(has "$tmp/dev" /usr/include/numaguard/numaguard.h /usr/include/numaguard/ng-kernel.h /usr/lib64/libnumaguard.so \
        /usr/lib64/libnumaguard.a /usr/lib64/pkgconfig/numaguard.pc '/usr/share/man/man3/numaguard\.3(\.gz)?')
stray=$(grep -E 'ng-parse\.h|-internal\.h|\.so\.' "$tmp/dev" | tr '\n' ' ')
check files-devel "missing:$m; private or not its own: $stray" eval '[ -z "$m" ] && [ -z "$stray" ]'
flags=$(rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$main" | awk '$1 == "/etc/numaguard/numaguard.conf" { print $2 }')
check config-noreplace "flags of /etc/numaguard/numaguard.conf: '$flags'" test "$flags" = cn
# the licence texts, each as the tree has it, flagged %license, in the
# package's licence directory (RHEL: NAME; Debian's rpm: NAME-VERSION)
lic() {         # PACKAGE: "FILE FLAGS" of its files under /usr/share/licenses
        rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$1" | awk '$1 ~ "^/usr/share/licenses/" { print }'
}
bad=""
for want in "$main numaguard COPYING GPL-2.0-or-later.txt LGPL-2.1-or-later.txt" "$lib libnumaguard COPYING LGPL-2.1-or-later.txt"; do
        read -r pkg name files <<<"$want"
        got=$(lic "$pkg")
        for f in $files; do
                grep -qxE "/usr/share/licenses/$name(-$V)?/$f l" <<<"$got" || bad+=" $name:$f(got: $(echo $got))"
        done
        (cd "$tmp" && rm -rf lic && mkdir lic && cd lic && rpm2cpio "$pkg" | cpio -idm --quiet "./usr/share/licenses/*") 2> /dev/null
        for f in $files; do
                src=$SRC/$f; [ "$f" = COPYING ] || src=$SRC/LICENSES/$f
                inst=$(ls "$tmp"/lic/usr/share/licenses/*/"$f" 2> /dev/null | head -1)
                cmp -s "$src" "${inst:-/nonexistent}" || bad+=" $name:$f(not the tree's)"
        done
done
[ -n "$(lic "$dev")" ] && bad+=" libnumaguard-devel:own licence files (it requires libnumaguard)"
check license "$bad" test -z "$bad"

# ---- scriptlets: what they run, and each parses (RHEL's /bin/sh is bash)
rpm -qp --scripts "$main" > "$tmp/scripts"
bad=""
for s in postinstall preuninstall postuninstall; do
        awk -v s="$s" '/^[a-z]+ scriptlet/ { on = ($1 == s) ; next } on' "$tmp/scripts" > "$tmp/$s.sh"
        bash -n "$tmp/$s.sh" 2> /dev/null || bad+=" $s(syntax)"
done
grep -q 'systemctl --no-reload preset numaguard.service' "$tmp/postinstall.sh" || bad+=" post:preset"
grep -q 'systemd-tmpfiles --create /usr/lib/tmpfiles.d/numaguard.conf' "$tmp/postinstall.sh" || bad+=" post:tmpfiles"
grep -q 'journalctl --update-catalog' "$tmp/postinstall.sh" || bad+=" post:catalog"
grep -q 'systemctl --no-reload disable --now numaguard.service' "$tmp/preuninstall.sh" || bad+=" preun:disable"
grep -q 'metrics_file' "$tmp/preuninstall.sh" || bad+=" preun:metrics_file"
grep -q 'systemctl try-restart numaguard.service' "$tmp/postuninstall.sh" || bad+=" postun:restart"
grep -q 'rm -rf /var/lib/numaguard' "$tmp/postuninstall.sh" || bad+=" postun:state"
grep -q 'KEPT /etc/tmpfiles.d/numaguard-hugepages.conf' "$tmp/postuninstall.sh" || bad+=" postun:hugepages"
rpm -qp --scripts "$lib" | grep -q '/sbin/ldconfig' || bad+=" lib:ldconfig"
check scriptlets "$bad" test -z "$bad"

# ---- requires and provides
req_main=$(rpm -qp --requires "$main") req_dev=$(rpm -qp --requires "$dev")
prov_lib=$(rpm -qp --provides "$lib") prov_dev=$(rpm -qp --provides "$dev")
bad=""
for l in libjson-c.so.5 libinih.so.1 libnuma.so.1 libsystemd.so.0 libarchive.so.13; do
        grep -q "^$l()" <<<"$req_main" || bad+=" numaguard:$l"
done
grep -q libnumaguard <<<"$req_main" && bad+=" numaguard:libnumaguard(linked statically)"
grep -q '^libnumaguard.so.0()' <<<"$prov_lib" || bad+=" libnumaguard:provides-soname"
grep -qx "pkgconfig(numaguard) = $V" <<<"$prov_dev" || bad+=" devel:provides-pkgconfig"
grep -qx "libnumaguard(x86-64) = $V-$rel" <<<"$req_dev" || bad+=" devel:libnumaguard"
check requires-provides "$bad" test -z "$bad"
# libnumaguard-devel follows numaguard.pc: pkgconfig(X) for every module of
# Requires and Requires.private, numactl-devel (libnuma) for -lnuma
pc_field() { sed -n "s/^$1:[[:space:]]*//p" "$SRC/lib/numaguard.pc.in" | tr ',' ' '; }
want="" skipver=0
for t in $(pc_field Requires) $(pc_field 'Requires\.private'); do
        if ((skipver)); then skipver=0; continue; fi
        case $t in '<' | '>' | '=' | '<=' | '>=' | '!=') skipver=1; continue ;; esac
        want+=" pkgconfig($t)"
done
for t in $(pc_field 'Libs\.private'); do
        case $t in -lnuma) want+=" numactl-devel(x86-64)" ;; -l*) want+=" ?${t#-l}(no RHEL package known to this test)" ;; esac
done
m=""
for w in $want; do grep -qxF "$w" <<<"$req_dev" || m+=" $w"; done
check devel-requires-pc "numaguard.pc needs:$want; missing from libnumaguard-devel's requires:$m" test -z "$m"

# ---- the .pc and the unit as installed
(cd "$tmp" && rpm2cpio "$dev" | cpio -idm --quiet ./usr/lib64/pkgconfig/numaguard.pc &&
        rpm2cpio "$main" | cpio -idm --quiet ./usr/lib/systemd/system/numaguard.service) 2> /dev/null
pc=$tmp/usr/lib64/pkgconfig/numaguard.pc unit=$tmp/usr/lib/systemd/system/numaguard.service
check paths "$(grep -E '^(libdir|includedir)=' "$pc" 2>&1 | tr '\n' ' ') $(grep -E '^Exec' "$unit" 2>&1 | tr '\n' ' ')" eval \
        'grep -qx "libdir=/usr/lib64" "$pc" && grep -qx "includedir=/usr/include" "$pc" &&
        grep -qx "ExecStart=/usr/sbin/numaguardd" "$unit" && grep -qx "ExecReload=/usr/bin/numaguardctl reload" "$unit"'

# ---- rpmlint: the summary for the record; any error or warning fails
(cd "$SRC/build-rpm" && rpmlint -c "$SRC/rpm/rpmlint.toml" RPMS/*/*.rpm SRPMS/*.rpm "$SPEC") > "$tmp/rpmlint" 2>&1; rc=$?
grep -E '^[^ ]+: [EW]: ' "$tmp/rpmlint" | sed 's/^/# /'
summary=$(grep -E 'packages and .* checked' "$tmp/rpmlint")
echo "# rpmlint $(rpmlint --version 2>/dev/null): ${summary:-no summary}"
check rpmlint "exit $rc: $summary" eval '[ $rc = 0 ] && grep -q " 0 errors, 0 warnings" <<<"$summary"'
exit $((fails > 0))
