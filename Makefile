# numaguard — plain Makefile. `make`, `make check`, `make check SANITIZE=1`,
# `make check-e2e`, `make fuzz-smoke`, `make bench`, `make bench-config`, `make install`.

VERSION := 0.1.0
SONAME_MAJOR := 0

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# systemd's own directories; the fallbacks are systemd's defaults.
SYSTEMDSYSTEMUNITDIR ?= $(or $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd 2>/dev/null),/usr/lib/systemd/system)
CATALOGDIR ?= $(or $(shell $(PKG_CONFIG) --variable=catalogdir systemd 2>/dev/null),/usr/lib/systemd/catalog)
TMPFILESDIR ?= $(or $(shell $(PKG_CONFIG) --variable=tmpfilesdir systemd 2>/dev/null),/usr/lib/tmpfiles.d)
DATADIR ?= $(PREFIX)/share
BASHCOMPLETIONDIR ?= $(or $(shell $(PKG_CONFIG) --variable=completionsdir bash-completion 2>/dev/null),$(DATADIR)/bash-completion/completions)
# Debian's zsh looks there; Fedora's in $(DATADIR)/zsh/site-functions.
ZSHCOMPLETIONDIR ?= $(DATADIR)/zsh/vendor-completions
DESTDIR ?=

CC ?= cc
CLANG ?= clang
PKG_CONFIG ?= pkg-config
CFLAGS ?= -O2 -g
WARNINGS := -std=gnu11 -Wall -Wextra -Wformat=2 -Wshadow -Wmissing-prototypes \
	-Wstrict-prototypes -Wvla -fno-common -fstack-protector-strong
ifeq ($(CI),true)
WERROR ?= 1
endif
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif

ifeq ($(SANITIZE),1)
BUILD ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD ?= build
SANFLAGS :=
endif

# Each library is linked only where it is called: the library uses json-c
# (its JSON renderers), inih (the config parser), libnuma (move_pages) and
# libsystemd's sd-bus (a cpuset's owner: a unit's properties, read and set
# through the manager); the programs also call sd-event, sd-journal and
# sd_notify. libcgroup is not used: cpuset writes go through the path layer
# (see lib/4-act/act-cpuset.c) and cgconfig.conf is read and edited in place
# (lib/1-collect/owners/parse-owner.c), so it is neither linked nor named in numaguard.pc.
LIB_PKGS := json-c inih libsystemd
LIB_LIBS := $(shell $(PKG_CONFIG) --libs $(LIB_PKGS) 2>/dev/null) -lnuma
PROG_PKGS := libsystemd
# numaguardctl alone writes archives (snapshot): libarchive is linked there.
CTL_PKGS := libarchive
CTL_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(CTL_PKGS) 2>/dev/null)
CTL_LIBS := $(shell $(PKG_CONFIG) --libs $(CTL_PKGS) 2>/dev/null)
DEPS_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(LIB_PKGS) $(PROG_PKGS) 2>/dev/null)
DEPS_LIBS := $(LIB_LIBS) $(shell $(PKG_CONFIG) --libs $(PROG_PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS := $(shell $(PKG_CONFIG) --libs check 2>/dev/null)

# lib/ holds one folder per pipeline stage, numbered so that `ls lib` lists
# them in pipeline order. A stage sees its own headers and those of the
# stages before it, never a later one: the include path enforces it.
# A stage's folder may hold rooms, one folder deep (lib/1-collect/path/):
# they belong to their stage, and its include path lists each of them.
# lib/1-collect's rooms are modules in an order (docs/ARCHITECTURE.md, "The
# modules of collect"), which tests/shell/test-layout.sh keeps.
LIB_STAGES := 0-core 1-collect 2-analyze 3-report 4-act
stage_dirs = $(foreach s,$(1),lib/$(s) $(patsubst %/,%,$(sort $(wildcard lib/$(s)/*/))))
LIB_INC := $(addprefix -I,$(call stage_dirs,$(LIB_STAGES)))
stage_inc = $(addprefix -I,$(call stage_dirs,$(wordlist 1,$(1),$(LIB_STAGES))))
$(foreach i,1 2 3 4 5,$(eval $$(BUILD)/lib/$(word $(i),$(LIB_STAGES))/%.o: STAGE_INC := $$(call stage_inc,$(i))))

ALL_CFLAGS := $(WARNINGS) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) -D_GNU_SOURCE -DNG_VERSION='"$(VERSION)"' \
	$(DEPS_CFLAGS)
ALL_LDFLAGS := $(LDFLAGS) $(SANFLAGS)

LIB_SRCS := $(sort $(wildcard $(LIB_STAGES:%=lib/%/*.c) $(LIB_STAGES:%=lib/%/*/*.c)))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
LIB_HDRS := $(wildcard $(LIB_STAGES:%=lib/%/*.h) $(LIB_STAGES:%=lib/%/*/*.h))
# The public API is lib/numaguard.h and the headers it includes, nothing
# else: the parsers (parse.h), tier-1 sampling (sample.h), unit
# arithmetic (units.h), the table of engines (engine.h), the escaping
# of untrusted names (text.h), cleanup.h and every *-internal.h stay
# private to lib/.
LIB_PUBLIC_NAMES := $(shell sed -n 's/^\#include "\(ng-[a-z0-9-]*\.h\)"$$/\1/p' lib/numaguard.h)
LIB_PUBLIC_HDRS := lib/numaguard.h $(foreach h,$(LIB_PUBLIC_NAMES),$(filter %/$(h),$(LIB_HDRS)))
# libnumaguard.so exports only the ng_ symbols (tests/shell/test-api.sh).
LIB_MAP := lib/libnumaguard.map
CTL_SRCS := $(sort $(wildcard daemon/cli/*.c))
CTL_OBJS := $(CTL_SRCS:%.c=$(BUILD)/%.o)
CTL_HDRS := $(wildcard daemon/cli/*.h)
# numaguardd's modules; tests/unit/test-daemon-*.c link them without main().
# In both programs each module has a header of its own name; some of these
# names are system headers' too (syslog.h, poll.h, check.h; archive.h,
# term.h), so a program's folder is only ever searched for #include "..."
# (-iquote), never for <...>.
DAEMON_SRCS := $(sort $(filter-out %/numaguardd.c,$(wildcard daemon/numaguardd/*.c)))
DAEMON_OBJS := $(DAEMON_SRCS:%.c=$(BUILD)/%.o)
DAEMON_HDRS := $(wildcard daemon/numaguardd/*.h)
UNIT_SRCS := $(sort $(wildcard tests/unit/test-*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
HELPER_SRCS := $(sort $(wildcard tests/helpers/*.c))
HELPER_BINS := $(HELPER_SRCS:tests/helpers/%.c=$(BUILD)/tests/helpers/%)
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz-*.c))
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=build-fuzz/%)

STATIC_LIB := $(BUILD)/libnumaguard.a
SHARED_LIB := $(BUILD)/libnumaguard.so.$(VERSION)
CTL := $(BUILD)/numaguardctl
DAEMON := $(BUILD)/numaguardd
UNIT := $(BUILD)/numaguard.service
MANPAGES := man/numaguardctl.1 man/numaguard.3 man/numaguard.conf.5 man/numaguardd.8

.PHONY: all check check-unit unit-bins check-e2e fuzz fuzz-smoke golden-update bench bench-config install uninstall clean deb rpm

all: $(STATIC_LIB) $(SHARED_LIB) $(CTL) $(BUILD)/numaguard.pc $(DAEMON) $(UNIT)

# Library objects see only their stage's include path (above); the
# programs see every stage.
STAGE_INC ?= $(LIB_INC)
$(BUILD)/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(STAGE_INC) -fPIC -c -o $@ $<

$(STATIC_LIB): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(SHARED_LIB): $(LIB_OBJS) $(LIB_MAP)
	$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,libnumaguard.so.$(SONAME_MAJOR) \
		-Wl,--version-script=$(LIB_MAP) -o $@ $(LIB_OBJS) $(LIB_LIBS)
	ln -sf libnumaguard.so.$(VERSION) $(BUILD)/libnumaguard.so.$(SONAME_MAJOR)
	ln -sf libnumaguard.so.$(SONAME_MAJOR) $(BUILD)/libnumaguard.so

$(CTL): $(CTL_OBJS) $(STATIC_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $(CTL_OBJS) $(STATIC_LIB) $(DEPS_LIBS) $(CTL_LIBS)

$(CTL_OBJS): $(CTL_HDRS)
$(CTL_OBJS): ALL_CFLAGS += $(CTL_CFLAGS)
$(DAEMON_OBJS) $(BUILD)/daemon/numaguardd/numaguardd.o: $(DAEMON_HDRS)

$(DAEMON): $(DAEMON_OBJS) $(BUILD)/daemon/numaguardd/numaguardd.o $(STATIC_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $(DAEMON_OBJS) $(BUILD)/daemon/numaguardd/numaguardd.o $(STATIC_LIB) $(DEPS_LIBS)

$(UNIT): systemd/numaguard.service.in Makefile
	@mkdir -p $(@D)
	sed -e 's|@SBINDIR@|$(SBINDIR)|g; s|@BINDIR@|$(BINDIR)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' $< > $@

$(BUILD)/numaguard.pc: lib/numaguard.pc.in Makefile
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' $< > $@

$(BUILD)/tests/%: tests/unit/%.c $(STATIC_LIB) tests/unit/ng-test.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) $(CHECK_CFLAGS) -Itests/unit -o $@ $< $(STATIC_LIB) $(DEPS_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

$(BUILD)/tests/test-daemon-%: tests/unit/test-daemon-%.c $(DAEMON_OBJS) $(STATIC_LIB) tests/unit/ng-test.h $(DAEMON_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) $(CHECK_CFLAGS) -Itests/unit -iquote daemon/numaguardd -o $@ $< $(DAEMON_OBJS) $(STATIC_LIB) $(DEPS_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

$(BUILD)/tests/helpers/%: tests/helpers/%.c $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) -o $@ $< $(STATIC_LIB) $(DEPS_LIBS) $(ALL_LDFLAGS)

# The unit and shell suites; the NUMA-guest stage follows when the host can
# boot a guest (tests/e2e/run-e2e --can-boot). When it cannot (or NO_E2E=1)
# the stage is one counted skip, and under CI (CI set) a failure.
check: all $(UNIT_BINS) $(HELPER_BINS)
	BUILD=$(BUILD) tests/run-suite $(UNIT_BINS) -- tests/shell/test-*.sh
	@if [ "$(NO_E2E)" = 1 ]; then tests/e2e/run-e2e --skip-stage "NO_E2E=1"; \
	elif tests/e2e/run-e2e --can-boot; then $(MAKE) --no-print-directory check-e2e; \
	else tests/e2e/run-e2e --skip-stage "this host cannot boot a guest (see tests/e2e/run-e2e --can-boot)"; fi

# What check-unit runs, built on its own (make -j2 unit-bins, then check-unit).
unit-bins: all $(UNIT_BINS) $(HELPER_BINS)

check-unit: unit-bins
	BUILD=$(BUILD) tests/run-suite $(UNIT_BINS) -- tests/shell/test-*.sh

# E2E_ARGS="-t 4node -t 2node-v1" limits the topologies.
check-e2e: all $(HELPER_BINS)
	BUILD=$(BUILD) E2E_SANITIZER=$(or $(SANITIZE),0) tests/e2e/run-e2e $(E2E_ARGS)

# libFuzzer targets, one per parser; fuzz-smoke is the bounded CI run.
# The library is compiled once, instrumented, into an archive each target
# links; only the targets themselves carry libFuzzer's main().
FUZZ_CFLAGS := -std=gnu11 -g -O1 -D_GNU_SOURCE $(LIB_INC) -fsanitize=fuzzer,address,undefined
FUZZ_LIB_CFLAGS := -std=gnu11 -g -O1 -D_GNU_SOURCE $(LIB_INC) -fsanitize=fuzzer-no-link,address,undefined
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=build-fuzz/%.o)
FUZZ_LIB := build-fuzz/libnumaguard-fuzz.a
build-fuzz/lib/%.o: lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_LIB_CFLAGS) $(DEPS_CFLAGS) -c -o $@ $<
$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^
build-fuzz/%: tests/fuzz/%.c $(FUZZ_LIB) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) $(DEPS_CFLAGS) -o $@ $< $(FUZZ_LIB) $(LIB_LIBS)

# The control socket's framing lives in the daemon, without its sd-event parts:
# request.c and request.h alone.
build-fuzz/fuzz-control-request: tests/fuzz/fuzz-control-request.c daemon/numaguardd/request.c daemon/numaguardd/request.h
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -iquote daemon/numaguardd -o $@ $< daemon/numaguardd/request.c

fuzz: $(FUZZ_BINS)

fuzz-smoke: $(FUZZ_BINS)
	tests/fuzz/run-smoke $(FUZZ_BINS)

# Rewrites the golden outputs of tests/fixtures/trees that differ from what
# numaguardctl prints now, and prints each diff for review before a commit.
golden-update: all
	GOLDEN_UPDATE=1 BUILD=$(BUILD) bash tests/shell/test-golden.sh

bench: all $(BUILD)/tests/helpers/ng-block-fs $(BUILD)/bench/cpu-shares $(BUILD)/bench/rebalance $(BUILD)/bench/procmap
	BUILD=$(BUILD) bench/run-bench

# rebalance of a segment nobody maps against the kernel's migrate_pages(2)
# of the same pages (bench/run-bench runs it; needs two memory nodes).
$(BUILD)/bench/rebalance: bench/rebalance.c $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) -o $@ $< $(STATIC_LIB) $(DEPS_LIBS) $(ALL_LDFLAGS)

# Reading a large process's maps: the text against PROCMAP_QUERY (Linux
# 6.11), same run (bench/run-bench runs it).
$(BUILD)/bench/procmap: bench/procmap.c $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) -o $@ $< $(STATIC_LIB) $(DEPS_LIBS) $(ALL_LDFLAGS)

# The CPU share per node by turns against every thread's (bench/run-bench,
# attachers axis).
$(BUILD)/bench/cpu-shares: bench/cpu-shares.c $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) -o $@ $< $(STATIC_LIB) $(DEPS_LIBS) -lm $(ALL_LDFLAGS)

# Seconds, no root: loading numaguard.conf of 2,000 and 20,000 instances.
$(BUILD)/bench/config-load: bench/config-load.c $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) -o $@ $< $(STATIC_LIB) $(DEPS_LIBS) $(ALL_LDFLAGS)

bench-config: $(BUILD)/bench/config-load
	$(BUILD)/bench/config-load

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/numaguard $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0755 $(CTL) $(DESTDIR)$(BINDIR)/numaguardctl
	install -m 0644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 0755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libnumaguard.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libnumaguard.so.$(SONAME_MAJOR)
	ln -sf libnumaguard.so.$(SONAME_MAJOR) $(DESTDIR)$(LIBDIR)/libnumaguard.so
	install -m 0644 $(LIB_PUBLIC_HDRS) $(DESTDIR)$(INCLUDEDIR)/numaguard/
	@# generated here, as the unit below: PREFIX may differ from the one of `make all`
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' \
		lib/numaguard.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/numaguard.pc
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/numaguard.pc
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(SYSTEMDSYSTEMUNITDIR) $(DESTDIR)$(CATALOGDIR) \
		$(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(SYSCONFDIR)/numaguard/numaguard.conf.d $(DESTDIR)$(DATADIR)/numaguard \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(DAEMON) $(DESTDIR)$(SBINDIR)/numaguardd
	@# generated here, not from $(UNIT): PREFIX may differ from the one of `make all`
	sed -e 's|@SBINDIR@|$(SBINDIR)|g; s|@BINDIR@|$(BINDIR)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		systemd/numaguard.service.in > $(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/numaguard.service
	chmod 0644 $(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/numaguard.service
	install -m 0644 systemd/numaguard.catalog $(DESTDIR)$(CATALOGDIR)/numaguard.catalog
	install -m 0644 systemd/numaguard.tmpfiles $(DESTDIR)$(TMPFILESDIR)/numaguard.conf
	install -m 0644 conf/numaguard.rules.yml $(DESTDIR)$(DATADIR)/numaguard/numaguard.rules.yml
	@# the rules' tests, run beside the rules: promtool test rules numaguard.rules.test.yml
	sed 's|^  - \.\./\.\./conf/numaguard\.rules\.yml$$|  - numaguard.rules.yml|' tests/prometheus/numaguard.rules.test.yml \
		> $(DESTDIR)$(DATADIR)/numaguard/numaguard.rules.test.yml
	chmod 0644 $(DESTDIR)$(DATADIR)/numaguard/numaguard.rules.test.yml
	install -m 0644 conf/numaguard.conf $(DESTDIR)$(DATADIR)/numaguard/numaguard.conf
	@# never overwrite an administrator's config
	[ -e $(DESTDIR)$(SYSCONFDIR)/numaguard/numaguard.conf ] || \
		install -m 0644 conf/numaguard.conf $(DESTDIR)$(SYSCONFDIR)/numaguard/numaguard.conf
	for m in $(MANPAGES); do install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/; done
	install -d $(DESTDIR)$(BASHCOMPLETIONDIR) $(DESTDIR)$(ZSHCOMPLETIONDIR)
	install -m 0644 completion/numaguardctl.bash $(DESTDIR)$(BASHCOMPLETIONDIR)/numaguardctl
	install -m 0644 completion/_numaguardctl $(DESTDIR)$(ZSHCOMPLETIONDIR)/_numaguardctl

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/numaguardctl $(DESTDIR)$(LIBDIR)/libnumaguard.*
	rm -rf $(DESTDIR)$(INCLUDEDIR)/numaguard
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/numaguard.pc
	rm -f $(DESTDIR)$(SBINDIR)/numaguardd $(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/numaguard.service \
		$(DESTDIR)$(CATALOGDIR)/numaguard.catalog $(DESTDIR)$(TMPFILESDIR)/numaguard.conf
	@# the config goes only if the administrator did not change it
	cmp -s conf/numaguard.conf $(DESTDIR)$(SYSCONFDIR)/numaguard/numaguard.conf && \
		rm -f $(DESTDIR)$(SYSCONFDIR)/numaguard/numaguard.conf || true
	rmdir $(DESTDIR)$(SYSCONFDIR)/numaguard/numaguard.conf.d 2>/dev/null || true
	rmdir $(DESTDIR)$(SYSCONFDIR)/numaguard 2>/dev/null || true
	rm -rf $(DESTDIR)$(DATADIR)/numaguard
	for m in $(MANPAGES); do rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/}; done
	rm -f $(DESTDIR)$(BASHCOMPLETIONDIR)/numaguardctl $(DESTDIR)$(ZSHCOMPLETIONDIR)/_numaguardctl
	@# journalctl -x reads a compiled catalog database: drop numaguard's
	@# entries from it, or it keeps explaining ids nothing sends any more.
	@# With no catalog left journalctl keeps the old database: remove it.
	db=$(DESTDIR)/var/lib/systemd/catalog/database; \
	if [ -f $$db ] && command -v journalctl >/dev/null; then \
		if ls $(DESTDIR)$(CATALOGDIR)/*.catalog $(DESTDIR)$(SYSCONFDIR)/systemd/catalog/*.catalog 2>/dev/null | grep -q .; \
		then journalctl $(if $(DESTDIR),--root=$(DESTDIR)) --update-catalog; else rm -f $$db; fi; fi

# The Debian packages (debian/): numaguard, libnumaguard0, libnumaguard-dev.
# dpkg-buildpackage writes the .debs, .buildinfo and .changes to the parent of
# the source tree, as sbuild, pbuilder and debuild expect. `make deb` runs it
# on a copy of this tree in $(DEBSRC)/numaguard-$(VERSION) (uncommitted edits
# included; build directories and .git left out), so that its parent is
# $(DEBSRC) and not a directory other checkouts share, then collects copies of
# the artifacts in $(DEBDIR).
DEBDIR := build-deb/packages
DEBSRC := build-deb/src
deb:
	rm -rf $(DEBSRC) $(DEBDIR)
	mkdir -p $(DEBSRC)/numaguard-$(VERSION) $(DEBDIR)
	tar -c --exclude=./.git --exclude=./build --exclude=./build-san --exclude=./build-fuzz \
		--exclude=./build-deb --exclude=./$(RPMDIR) --exclude=./tests/e2e/.cache . | tar -x -C $(DEBSRC)/numaguard-$(VERSION)
	cd $(DEBSRC)/numaguard-$(VERSION) && dpkg-buildpackage -us -uc -b -jauto
	cp -p $(DEBSRC)/*.deb $(DEBSRC)/*.buildinfo $(DEBSRC)/*.changes $(DEBDIR)/
	@ls -1 $(DEBDIR)

# The RPM packages (rpm/numaguard.spec): numaguard, libnumaguard,
# libnumaguard-devel and the source package, in $(RPMDIR)/RPMS and SRPMS,
# from a tarball of this tree (uncommitted edits included). On Debian:
# make rpm RPMBUILD_OPTS="--nodeps --load rpm/macros.systemd-fallback"
# (its rpm has neither the build dependencies in its database nor the
# systemd macros; tests/shell/test-rpm.sh builds it so).
RPMDIR := build-rpm
RPMBUILD_OPTS ?=
rpm:
	rm -rf $(RPMDIR)
	mkdir -p $(RPMDIR)/SOURCES
	tar -c --exclude=./.git --exclude=./build --exclude=./build-san --exclude=./build-fuzz \
		--exclude=./build-deb --exclude=./$(RPMDIR) --exclude=./tests/e2e/.cache \
		--transform 's,^\.,numaguard-$(VERSION),' . | gzip -n > $(RPMDIR)/SOURCES/numaguard-$(VERSION).tar.gz
	rpmbuild -ba --define '_topdir $(CURDIR)/$(RPMDIR)' $(RPMBUILD_OPTS) rpm/numaguard.spec

clean:
	rm -rf build build-san build-fuzz build-deb $(RPMDIR)
