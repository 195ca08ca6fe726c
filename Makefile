# bpfsym build.  `make` builds ./bpfsym; `make test` runs every test;
# `make run` installs what is missing, builds and profiles the system.
# Library flags come from pkg-config, so a sub-make is used after
# scripts/install-deps.sh has had a chance to install them.

CC	?= gcc
CLANG	?= clang
BPFTOOL	?= $(or $(shell command -v bpftool 2>/dev/null),/usr/sbin/bpftool)
PROTOC_C ?= protoc-c
ARCH	:= x86
BUILD	:= build

# A build on a machine without the dependencies stops here with one line
# naming them, not at the first tool that is missing.  `make test` and
# `make run` install them first (the sub-make checks); `make deps` does.
NODEP_GOALS := deps deps-test test run clean vmlinux test-kernel uninstall
ifneq ($(filter-out $(NODEP_GOALS),$(or $(MAKECMDGOALS),all)),)
DEPS_MISSING := $(shell scripts/check-deps.sh $(BPFTOOL))
ifneq ($(DEPS_MISSING),)
$(error $(DEPS_MISSING))
endif
endif

PKGS	:= libbpf libelf libzstd liblzma zlib libprotobuf-c
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libiberty (binutils' demangler for C++ and Rust) has no pkg-config file.
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -liberty

WARN	:= -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2 -Wvla
CFLAGS	?= -O2 -g
ALL_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -I$(BUILD) $(PKG_CFLAGS)
# `bpfsym --version`: the release, and the commit it was built from where git
# knows one (cmd_record.o is rebuilt with the sources it depends on, not on
# every commit: a build from a clean tree names its own commit).
VERSION	:= 0.1
GIT_DESC := $(shell git describe --always --dirty 2>/dev/null)
$(BUILD)/rel/cli/cmd_record.o $(BUILD)/san/cli/cmd_record.o: ALL_CFLAGS += \
	-DBPFSYM_VERSION='"$(VERSION)$(if $(GIT_DESC), (git $(GIT_DESC)))"'
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDLIBS	:= $(PKG_LIBS) -lm

# Every source under user/, in its stage folder (docs/ARCHITECTURE.md).
USER_SRCS := $(sort $(shell find user -name '*.c'))
# The command line and the loader (the only code that includes libbpf);
# the rest are modules below the loader: no libbpf, unit-tested without root.
APP_SRCS := $(filter user/main.c user/cli/% user/record/%,$(USER_SRCS))
LIB_SRCS := $(filter-out $(APP_SRCS),$(USER_SRCS))
BPF_SRCS := $(wildcard bpf/*.bpf.c)
SKELS	 := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS)) $(BUILD)/sampler_exec.skel.h
HDRS	 := $(shell find user include -name '*.h')
# user/.../NAME.c for each NAME of $(1), wherever its stage folder is.
srcs_of  = $(foreach m,$(1),$(filter %/$(m).c,$(USER_SRCS)))
# protoc-c's C for proto/*.proto, generated into build/ (never committed).
PROTOS	 := $(wildcard proto/*.proto)
PROTO_HDRS := $(patsubst proto/%.proto,$(BUILD)/%.pb-c.h,$(PROTOS))

REL_LIB_OBJS := $(patsubst user/%.c,$(BUILD)/rel/%.o,$(LIB_SRCS)) \
		$(patsubst proto/%.proto,$(BUILD)/rel/%.pb-c.o,$(PROTOS))
REL_APP_OBJS := $(patsubst user/%.c,$(BUILD)/rel/%.o,$(APP_SRCS))
SAN_LIB_OBJS := $(patsubst user/%.c,$(BUILD)/san/%.o,$(LIB_SRCS)) \
		$(patsubst proto/%.proto,$(BUILD)/san/%.pb-c.o,$(PROTOS))
SAN_APP_OBJS := $(patsubst user/%.c,$(BUILD)/san/%.o,$(APP_SRCS))

UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/san/%,$(UNIT_SRCS))

.PHONY: all run test check unit deps deps-test clean vmlinux install uninstall deb test-kernel
.DELETE_ON_ERROR:
# Keep the BPF objects: handy for bpftool and llvm-objdump.
.SECONDARY:

all: bpfsym

bpfsym: $(REL_APP_OBJS) $(REL_LIB_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# The sanitizer build the tests drive.
$(BUILD)/san/bpfsym: $(SAN_APP_OBJS) $(SAN_LIB_OBJS)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/rel/%.o: user/%.c $(HDRS) $(SKELS) $(PROTO_HDRS) | $(BUILD)/rel
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/san/%.o: user/%.c $(HDRS) $(SKELS) $(PROTO_HDRS) | $(BUILD)/san
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

# One rule makes both files (a pattern rule with two targets runs once).
$(BUILD)/%.pb-c.c $(BUILD)/%.pb-c.h: proto/%.proto | $(BUILD)
	$(PROTOC_C) --proto_path=proto --c_out=$(BUILD) $<

$(BUILD)/rel/%.pb-c.o: $(BUILD)/%.pb-c.c $(BUILD)/%.pb-c.h | $(BUILD)/rel
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/san/%.pb-c.o: $(BUILD)/%.pb-c.c $(BUILD)/%.pb-c.h | $(BUILD)/san
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

# BPF: CO-RE objects against the committed vmlinux.h, embedded as skeletons.
# The tracker and the sampler (lazy_maps: at a first sample) take a
# fresh view's slot with an atomic fetch-and-add, whose result needs the
# v3 instruction set (kernel 5.12 on).
$(BUILD)/maptrack.bpf.o $(BUILD)/sampler.bpf.o $(BUILD)/sampler_exec.bpf.o: BPF_CPU = -mcpu=v3
# Each object is then checked for the loops and the call chains' stacks
# Linux 6.1's verifier refuses whatever they do (scripts/check-bpf-cfg.py,
# scripts/check-bpf-stack.py): 6.18 loads them, so only these checks or a
# 6.1 VM would tell.  An object that fails is removed.
BPF_CHECKS := scripts/check-bpf-cfg.py scripts/check-bpf-stack.py
define bpf_obj
	$(CLANG) -g -O2 -target bpf $(BPF_CPU) -D__TARGET_ARCH_$(ARCH) $(BPF_DEFS) -Wall \
		-Iinclude -Ivmlinux/$(ARCH) -Ibpf -c $< -o $@
	python3 scripts/check-bpf-cfg.py $@ && python3 scripts/check-bpf-stack.py $@ || { rm -f $@; exit 1; }
endef
$(BUILD)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) include/bpfsym.h vmlinux/$(ARCH)/vmlinux.h $(BPF_CHECKS) | $(BUILD)
	$(bpf_obj)

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(notdir $*)_bpf > $@.tmp && mv $@.tmp $@

# The sampler again for kernels without task work or the VMA iterator
# (bpf/sampler.bpf.c, BPFSYM_FIRST_SAMPLE): record/probes.c opens its
# bytes through sampler.skel.h's type, so the two skeletons must declare
# the same maps, programs and settings; scripts/same-skeleton.sh checks.
$(BUILD)/sampler_exec.bpf.o: BPF_DEFS = -DBPFSYM_FIRST_SAMPLE=0
$(BUILD)/sampler_exec.bpf.o: bpf/sampler.bpf.c $(wildcard bpf/*.h) include/bpfsym.h vmlinux/$(ARCH)/vmlinux.h $(BPF_CHECKS) | $(BUILD)
	$(bpf_obj)

$(BUILD)/sampler_exec.skel.h: $(BUILD)/sampler_exec.bpf.o $(BUILD)/sampler.skel.h scripts/same-skeleton.sh
	$(BPFTOOL) gen skeleton $< name sampler_exec_bpf > $@.tmp && \
		scripts/same-skeleton.sh $(BUILD)/sampler.skel.h sampler_bpf $@.tmp sampler_exec_bpf && \
		mv $@.tmp $@

$(BUILD)/san/test_%: tests/unit/test_%.c $(wildcard tests/unit/*.h) $(SAN_LIB_OBJS)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Itests/unit -o $@ $< $(UNIT_APP_OBJS) $(SAN_LIB_OBJS) $(LDLIBS)

# The loader's modules linked into their own tests (pure functions of theirs).
$(BUILD)/san/test_pace: UNIT_APP_OBJS = $(BUILD)/san/record/pace.o
$(BUILD)/san/test_pace: $(BUILD)/san/record/pace.o
$(BUILD)/san/test_kfeatures: UNIT_APP_OBJS = $(BUILD)/san/record/kfeatures.o
$(BUILD)/san/test_kfeatures: $(BUILD)/san/record/kfeatures.o

$(BUILD) $(BUILD)/rel $(BUILD)/san:
	mkdir -p $@

unit: $(UNIT_BINS)

# Everything the test runner needs, built by the sub-make.
check: bpfsym $(BUILD)/san/bpfsym $(UNIT_BINS) fuzz-build
	tests/run.sh

# `make deps`: what building and running need; `make deps-test`: that and
# the tests' toolchain (browsers, runtimes, runc, perf...).
deps:
	scripts/install-deps.sh

deps-test:
	scripts/install-deps.sh --test

test: deps-test
	@$(MAKE) --no-print-directory check

run: deps
	@$(MAKE) --no-print-directory bpfsym
	scripts/demo.sh

vmlinux:
	scripts/gen-vmlinux.sh $(ARCH)

# ---- Installing (GNU directory variables; PREFIX is the old spelling of prefix)
# `make install prefix=/usr DESTDIR=/tmp/stage`: the binary, every man page
# in docs/, the systemd unit (installed, not enabled), the examples and the
# license.  `make uninstall` with the same variables removes exactly those.
PREFIX		?= /usr/local
prefix		?= $(PREFIX)
exec_prefix	?= $(prefix)
bindir		?= $(exec_prefix)/bin
datarootdir	?= $(prefix)/share
mandir		?= $(datarootdir)/man
man1dir		?= $(mandir)/man1
docdir		?= $(datarootdir)/doc/bpfsym
sysconfdir	?= $(prefix)/etc
# systemd looks in /usr/local/lib/systemd/system and /lib/systemd/system
# (systemd.unit(5)); the .deb sets unitdir=/lib/systemd/system.
unitdir		?= $(exec_prefix)/lib/systemd/system
INSTALL		?= install
MAN1		:= $(sort $(wildcard docs/*.1))
EXAMPLES	:= examples/busy.c examples/parca.yaml examples/config.alloy examples/bpfsym.service.in
LICENSE_FILES	:= LICENSE $(sort $(wildcard LICENSES/*))
# What install puts, relative to DESTDIR (uninstall's list).
INSTALLED	= $(bindir)/bpfsym $(addprefix $(man1dir)/,$(notdir $(MAN1))) \
		  $(unitdir)/bpfsym.service $(addprefix $(docdir)/examples/,$(notdir $(EXAMPLES))) \
		  $(addprefix $(docdir)/,$(notdir $(LICENSE_FILES))) $(docdir)/README.md

# The unit is filled from its template straight into DESTDIR: no file in
# the tree, so an install by the tests leaves the checkout as it was.
install: bpfsym
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(man1dir) $(DESTDIR)$(unitdir) $(DESTDIR)$(docdir)/examples
	$(INSTALL) -m 0755 bpfsym $(DESTDIR)$(bindir)/bpfsym
	$(INSTALL) -m 0644 $(MAN1) $(DESTDIR)$(man1dir)/
	sed 's|@bindir@|$(bindir)|g' examples/bpfsym.service.in > $(DESTDIR)$(unitdir)/bpfsym.service
	chmod 0644 $(DESTDIR)$(unitdir)/bpfsym.service
	$(INSTALL) -m 0644 $(EXAMPLES) $(DESTDIR)$(docdir)/examples/
	$(INSTALL) -m 0644 $(LICENSE_FILES) README.md $(DESTDIR)$(docdir)/

# Files only; then the directories install made, if they are left empty.
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(docdir)/examples $(DESTDIR)$(docdir) 2>/dev/null

# ---- The Debian package: `make deb` stages `make install` into
# $(BUILD)/deb and builds bpfsym_VERSION_ARCH.deb with dpkg-deb from
# packaging/control.in (Depends by dpkg-shlibdeps); no network, no debhelper.
deb: bpfsym
	packaging/build-deb.sh

clean:
	rm -rf $(BUILD) bpfsym

# ---- Fuzzing ----
# One libFuzzer target per parser of untrusted input (tests/fuzz/fuzz_*.c),
# linked with the modules it exercises, all built by clang with ASan/UBSan
# and coverage.  `make fuzz` runs each for FUZZ_SECONDS (60 s: with the 15
# targets, 15 minutes in all; run it under `nice -n 10` on a shared machine)
# and keeps what it finds in build/fuzz/corpus/; `make check` builds them (fuzz-build) and
# tests/integration/test_fuzz_replay.sh replays that corpus.  The seeds are
# made at build time by tests/fuzz/make-corpus.sh, never committed.
FUZZ_CC		?= clang-14
FUZZ_SECONDS	?= 60
FUZZ_DIR	:= $(BUILD)/fuzz
FUZZ_CFLAGS	:= $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -I$(BUILD) $(PKG_CFLAGS) \
		   -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
# Every tests/fuzz/fuzz_NAME.c is a target; its modules are listed below.
FUZZ_NAMES	:= $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS	:= $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_NAMES))
FUZZ_LINK	 = $(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $(filter %.c %.o,$^) $(LDLIBS)

.PHONY: fuzz fuzz-build fuzz-targets

$(FUZZ_DIR)/obj/%.o: user/%.c $(HDRS) $(PROTO_HDRS) | $(FUZZ_DIR)/obj
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_DIR)/obj/%.pb-c.o: $(BUILD)/%.pb-c.c $(BUILD)/%.pb-c.h | $(FUZZ_DIR)/obj
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

# The modules each target links, by name (found in their stage folders),
# and user/base/ (plumbing every module may use).
fuzz_objs = $(patsubst user/%.c,$(FUZZ_DIR)/obj/%.o,$(call srcs_of,$(1)) $(wildcard user/base/*.c))
$(FUZZ_DIR)/fuzz_elfsym: tests/fuzz/fuzz_elfsym.c $(call fuzz_objs,elfsym elfsym_symtab elfplt elfnote symidx minidebug)
	$(FUZZ_LINK)
# The report reader and the views (with what --symfs and --kallsyms rename frames by).
FUZZ_REPORT_MODS := report_read report_loaded report_merge report_windex report_end report_offcpu report_cgroup container view_ctr reasons report_view report_agg \
		view_opts report_table report_header report_script report_flame report_flame_tree \
		xml_text frame_namer kallsyms symfs imgcache \
		debugfile debuginfod demangle fileid elfsym elfsym_symtab elfplt elfnote symidx minidebug procmap mapsline pathstore
$(FUZZ_DIR)/fuzz_report: tests/fuzz/fuzz_report.c $(call fuzz_objs,$(FUZZ_REPORT_MODS))
	$(FUZZ_LINK)
$(FUZZ_DIR)/fuzz_kallsyms: tests/fuzz/fuzz_kallsyms.c $(call fuzz_objs,kallsyms)
	$(FUZZ_LINK)
$(FUZZ_DIR)/fuzz_procmaps: tests/fuzz/fuzz_procmaps.c $(call fuzz_objs,procmap mapsline pathstore)
	$(FUZZ_LINK)
$(FUZZ_DIR)/fuzz_perfmap: tests/fuzz/fuzz_perfmap.c $(call fuzz_objs,perfmap jitsyms)
	$(FUZZ_LINK)
$(FUZZ_DIR)/fuzz_jitdump: tests/fuzz/fuzz_jitdump.c $(call fuzz_objs,jitdump jitsyms)
	$(FUZZ_LINK)
$(FUZZ_DIR)/fuzz_hints: tests/fuzz/fuzz_hints.c $(call fuzz_objs,hints)
	$(FUZZ_LINK)
$(FUZZ_DIR)/fuzz_cfi: tests/fuzz/fuzz_cfi.c $(call fuzz_objs,cfi cfi_enc cfi_parse cfi_eval cfi_merge)
	$(FUZZ_LINK)
$(FUZZ_DIR)/fuzz_http: tests/fuzz/fuzz_http.c $(call fuzz_objs,http_parse)
	$(FUZZ_LINK)
$(FUZZ_DIR)/fuzz_httpconn: tests/fuzz/fuzz_httpconn.c $(call fuzz_objs,httpd httpd_conn httpd_listen http_parse http_host)
	$(FUZZ_LINK)
# The ELF readers with what fileid.c and debugfile.c open through (the model's mappings).
FUZZ_ELF_MODS	:= fileid elfsym elfsym_symtab elfplt elfnote symidx minidebug procmap mapsline pathstore
$(FUZZ_DIR)/fuzz_fileid: tests/fuzz/fuzz_fileid.c $(call fuzz_objs,$(FUZZ_ELF_MODS))
	$(FUZZ_LINK)
$(FUZZ_DIR)/fuzz_debugfile: tests/fuzz/fuzz_debugfile.c $(call fuzz_objs,debugfile $(FUZZ_ELF_MODS))
	$(FUZZ_LINK)
$(FUZZ_DIR)/fuzz_symfs: tests/fuzz/fuzz_symfs.c $(call fuzz_objs,$(FUZZ_REPORT_MODS))
	$(FUZZ_LINK)
$(FUZZ_DIR)/fuzz_cgroup: tests/fuzz/fuzz_cgroup.c $(call fuzz_objs,cgpaths)
	$(FUZZ_LINK)
# The Python runtime's readers of what processes and their files hold (runtime/python/).
$(FUZZ_DIR)/fuzz_pylinetable: tests/fuzz/fuzz_pylinetable.c $(call fuzz_objs,pycode)
	$(FUZZ_LINK)
$(FUZZ_DIR)/fuzz_pyelf: tests/fuzz/fuzz_pyelf.c $(call fuzz_objs,pyelf pyelf_file)
	$(FUZZ_LINK)
# A recording's whole per-record path: every module below the loader but the views and the agent.
$(FUZZ_DIR)/fuzz_ingest: tests/fuzz/fuzz_ingest.c $(patsubst user/%.c,$(FUZZ_DIR)/obj/%.o,$(filter \
		user/base/% user/ingest/% user/model/% user/report/% user/runtime/% user/symbolize/% \
		user/unwind/%,$(LIB_SRCS)))
	$(FUZZ_LINK)
$(FUZZ_DIR)/fuzz_pprof: tests/fuzz/fuzz_pprof.c $(call fuzz_objs,report_pprof report_pprof_pack $(FUZZ_REPORT_MODS)) \
		$(patsubst $(BUILD)/%.pb-c.h,$(FUZZ_DIR)/obj/%.pb-c.o,$(PROTO_HDRS))
	$(FUZZ_LINK)
$(FUZZ_BINS): $(HDRS) $(PROTO_HDRS) $(wildcard tests/fuzz/*.h)

# The report seeds come from the real writer, itself sanitized.
$(FUZZ_DIR)/gen_report_seeds: tests/fuzz/gen_report_seeds.c $(call srcs_of,report_write report_write_offcpu report_windex report_read report_loaded report_merge report_end report_offcpu report_cgroup reasons) $(wildcard user/base/*.c) \
		$(HDRS) | $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^) $(LDLIBS)

$(FUZZ_DIR)/seeds/.stamp: tests/fuzz/make-corpus.sh $(wildcard tests/fuzz/seeds-*.sh) $(FUZZ_DIR)/gen_report_seeds
	CC=$(CC) sh tests/fuzz/make-corpus.sh $(FUZZ_DIR)/seeds $(FUZZ_DIR)/gen_report_seeds
	touch $@

$(FUZZ_DIR) $(FUZZ_DIR)/obj:
	mkdir -p $@

fuzz-targets: $(FUZZ_BINS) $(FUZZ_DIR)/seeds/.stamp
	@:

# What the replay in `make check` needs; without clang/libFuzzer, nothing (it SKIPs).
fuzz-build:
	@if why=$$(sh tests/fuzz/check-toolchain.sh $(FUZZ_CC)); then \
		$(MAKE) --no-print-directory fuzz-targets; \
	else \
		echo "fuzz-build: skipped: $$why"; \
	fi

fuzz: fuzz-targets
	sh tests/fuzz/replay.sh -t $(FUZZ_SECONDS) -l fuzz $(FUZZ_NAMES)

# ---- Kernel tests ----
# `make test-kernel`: the integration tests inside Debian 12's 6.1 kernel
# under qemu, over this machine's root (tests/kernel/test-kernel.sh).
# KERNEL=<linux-image package> boots another kernel; KERNEL_TESTS=ci runs
# the subset in tests/kernel/ci-tests, KERNEL_TESTS="test_unwind ..." those.
test-kernel: deps-test
	@$(MAKE) --no-print-directory bpfsym $(BUILD)/san/bpfsym fuzz-build
	KERNEL='$(KERNEL)' KERNEL_TESTS='$(KERNEL_TESTS)' tests/kernel/test-kernel.sh
