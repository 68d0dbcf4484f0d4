# SPDX-License-Identifier: GPL-2.0-or-later
#
# rtrs-rs: RTRS and RNBD as Rust kernel modules.
#
#   make          build the modules (installs what is missing, builds the
#                 test kernel once; both are cached); KDIR=<kernel build
#                 tree> builds them against another 6.12 tree
#   make install  install them where modprobe prefers them to the C ones
#                 (INSTALL_MOD_PATH, INSTALL_MOD_DIR: updates); uninstall
#   make run      boot a client and a server VM, map a remote disk, do IO
#   make check    host unit tests, then the selftests in the VM pair
#   make soak     the long fault tests (server crash, path flaps, map churn,
#                 failed allocations, three clients, RAID1 over two servers),
#                 and make check's tests at length, with C's controls
#   make bench    Rust vs C RNBD vs NVMe-oF vs raw verbs, in bench/results/
#   make help     everything else
#
# Kbuild reads ./Kbuild, not this file, when it builds the modules.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all

export RTRS_CACHE ?= $(HOME)/.cache/rtrs-rs
# The kernel's Rust needs a rustc whose sysroot has rust-src (Debian's
# rustc-web). It is passed to the kernel build only: cargo keeps its own.
KRUSTC ?= /usr/bin/rustc
BUILD := $(CURDIR)/build
# Options for the VM runner, e.g. make check T=rxe  (only tests matching 'rxe').
T ?=
# The test kernel: default, or debug (KASAN, lockdep, UBSAN, kmemleak; see
# scripts/kernel/debug.config).
export RTRS_PROFILE := $(or $(PROFILE),default)

BINDGEN ?= $(RTRS_CACHE)/cargo/bin/bindgen
# The kernel the modules build against: a tree of the user's (KDIR=, checked
# first by scripts/check-kdir), or the test kernel (built and cached).
ifdef KDIR
kdir := $(abspath $(KDIR))
kmake_args = $$(scripts/check-kdir --make-args "$(kdir)")
else
kdir = $$(scripts/build-kernel)
kmake_args = $$(scripts/build-kernel --make-args)
endif
kmake = $(MAKE) -C "$(kdir)" M=$(CURDIR) RUSTC=$(KRUSTC) BINDGEN=$(BINDGEN) $(kmake_args)
# Where make install puts the modules: beside the kernel's, in a directory
# that depmod searches first (kmod's default: updates).
INSTALL_MOD_DIR ?= updates
export INSTALL_MOD_PATH

.PHONY: all deps kernel modules install uninstall hosttest kselftest dkms check soak run bench clean \
	help fmt fmtcheck

all: modules

deps:
	@scripts/install-deps

ifdef KDIR
kernel:
	@RUSTC=$(KRUSTC) BINDGEN=$(BINDGEN) scripts/check-kdir "$(kdir)"
else
kernel: deps
	@scripts/build-kernel >/dev/null
endif

# The objects are built beside the sources, and Kbuild judges a crate's
# dependency on the tree's Rust (rust/libcore.rmeta, ...) by time alone: an
# object built against one tree looks up to date against an older one. So
# the tree an object was built against is recorded, and objects of another
# tree are cleaned first.
kdir_guard = stamp="$$(cd "$(kdir)" && pwd -P) $$(cat "$(kdir)/include/config/kernel.release") \
	$$(stat -c %Y "$(kdir)/rust/libcore.rmeta" 2>/dev/null)"; mkdir -p $(BUILD); \
	if [ -f $(BUILD)/kdir.stamp ] && [ "$$(cat $(BUILD)/kdir.stamp)" != "$$stamp" ]; then \
		echo "make: built against another kernel tree before: cleaning its objects"; \
		$(kmake) clean >/dev/null; fi; \
	echo "$$stamp" >$(BUILD)/kdir.stamp

# Warnings are errors: rustc's and gcc's by flag, objtool's by inspection
# (6.12's objtool has no --Werror).
modules: kernel
	@$(kdir_guard)
	@$(kmake) KRUSTFLAGS=-Dwarnings KCFLAGS=-Werror modules 2>&1 | tee $(BUILD)/modules.log
	@if grep -q 'objtool: .*warning\|warning: objtool' $(BUILD)/modules.log; then \
		echo "make: objtool warnings above; they are errors here" >&2; exit 1; fi
	@mkdir -p $(BUILD)/modules
	@find rtrs rnbd rust-bindings -name '*.ko' -exec cp -t $(BUILD)/modules {} + 2>/dev/null || true

# The five modules alone (no test modules), installed with Kbuild's
# modules_install (which signs and compresses them as the tree says, and
# runs depmod); uninstall removes them and runs depmod, and the C modules
# are in charge again.
our_kos := rtrs/rtrs-core rtrs/rtrs-client rtrs/rtrs-server rnbd/rnbd-client rnbd/rnbd-server
install: kernel
	@$(kdir_guard)
	@$(kmake) RTRS_TESTS=n KRUSTFLAGS=-Dwarnings KCFLAGS=-Werror modules
	@$(kmake) RTRS_TESTS=n INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) modules_install

uninstall:
	@rel=$$(cat "$(kdir)/include/config/kernel.release") && \
	dir="$(INSTALL_MOD_PATH)/lib/modules/$$rel/$(INSTALL_MOD_DIR)" && \
	for m in $(our_kos); do rm -fv "$$dir/$$m".ko*; done && \
	depmod -a $(if $(INSTALL_MOD_PATH),-b "$(INSTALL_MOD_PATH)") "$$rel"

# The selftests the kernel's way (their Makefile includes the kernel's
# kselftest lib.mk): run_tests runs each of them on the host, where each
# must skip (lib.sh: the guests only); gen_tar packs them for the guests,
# where kselftest_gen_tar.sh runs the packed tree with kselftest's runner.
ksft_make = $(MAKE) -s --no-print-directory -C tools/testing/selftests/rtrs-rs KDIR="$(kdir)"
kselftest: kernel
	@mkdir -p $(BUILD)
	@n=$$($(ksft_make) emit_tests | wc -l); \
	$(ksft_make) run_tests >$(BUILD)/kselftest-host.log 2>&1 || true; \
	s=$$(grep -c '^ok [0-9]* selftests: .* # SKIP$$' $(BUILD)/kselftest-host.log || true); \
	if [ "$$s" != "$$n" ] || [ "$$n" = 0 ]; then cat $(BUILD)/kselftest-host.log; \
		echo "make: kselftest's run_tests on the host: $$s of $$n tests skipped, not all" >&2; \
		exit 1; fi; \
	echo "kselftest: run_tests on the host: the $$n tests skipped, as off the guests they must"
	@rm -rf $(BUILD)/kselftest && $(ksft_make) gen_tar KSFT_INSTALL_PATH=$(BUILD)/kselftest \
		>$(BUILD)/kselftest.log 2>&1 || { cat $(BUILD)/kselftest.log; exit 1; }

# The operator's DKMS: build, install beside the kernel's modules in a
# staged tree, modprobe resolves to ours (scripts/dkms-test).
dkms: kernel
	@mkdir -p $(BUILD)
	@scripts/dkms-test "$(kdir)" >$(BUILD)/dkms.log 2>&1 || { cat $(BUILD)/dkms.log; exit 1; }
	@tail -n 2 $(BUILD)/dkms.log

# The selftests get the modules as make install puts them too, staged
# (install_modprobe.sh installs them in the guests as an operator would),
# and the selftests' kselftest tarball.
check: hosttest modules kselftest dkms
	@rm -rf $(BUILD)/stage && $(MAKE) --no-print-directory install INSTALL_MOD_PATH=$(BUILD)/stage \
		>$(BUILD)/install.log 2>&1 || { cat $(BUILD)/install.log; exit 1; }
	scripts/run-tests --kdir "$(kdir)" --modules $(BUILD)/modules --stage $(BUILD)/stage \
		--kselftest $(BUILD)/kselftest/kselftest-packages/kselftest.tar.gz \
		$(if $(T),--filter '$(T)')

# Fault scenarios too long for make check (Documentation/reliability.md).
soak: modules
	scripts/run-tests --suite soak --kdir "$(kdir)" --modules $(BUILD)/modules $(if $(T),--filter '$(T)')

# The pure protocol code on the host: unit tests, and the kernel's lints
# through clippy; and every .rs file formatted as rustfmt would. cargo uses
# its own toolchain, not the kernel's rustc.
hosttest: fmtcheck
	env -u RUSTC cargo test --workspace --quiet
	env -u RUSTC cargo clippy --workspace --all-targets --quiet -- -D warnings

run: modules
	scripts/vm --kdir "$(kdir)" --modules $(BUILD)/modules run scripts/demo.sh

# Options for scripts/bench, e.g. make bench BENCH='--runs 1 --only rust'.
BENCH ?=
bench: modules
	@scripts/install-deps --bench
	scripts/bench --kdir "$(kdir)" --modules $(BUILD)/modules $(BENCH)

# Host fuzzing of every parser and decoder in fuzz/ (scripts/fuzz), each
# target for FUZZ_SECONDS (default 10) or FUZZ_RUNS executions, e.g.
# make fuzz FUZZ_RUNS=10000000 T=rnbd_  (only the targets matching rnbd_).
.PHONY: fuzz
fuzz:
	scripts/fuzz $(if $(T),--filter '$(T)')

fmt:
	rustfmt --edition 2021 --config-path .rustfmt.toml $$(git ls-files '*.rs')

fmtcheck:
	rustfmt --edition 2021 --config-path .rustfmt.toml --check $$(git ls-files '*.rs')

clean:
	-@kd=$(if $(KDIR),$(kdir),$$(scripts/build-kernel --path 2>/dev/null)) && [ -d "$$kd" ] && \
		$(MAKE) -C "$$kd" M=$(CURDIR) clean
	rm -rf $(BUILD) target

help:
	@sed -n '3,14p' Makefile | sed 's/^# \{0,1\}//'
	@echo "  make fmt | fmtcheck   rustfmt with the kernel's .rustfmt.toml"
	@echo "  make CLIPPY=1         build with clippy, as the kernel does"
	@echo "  make check T=<re>     only the selftests whose name matches <re>"
	@echo "  make kselftest        the selftests through kselftest's run_tests on the host"
	@echo "                        (all skip there) and its gen_tar, in build/kselftest"
	@echo "  make check PROFILE=debug  the same on a KASAN/lockdep/UBSAN/kmemleak kernel"
	@echo "  make soak T=<re>      only the soak tests whose name matches <re>"
	@echo "  make fuzz             fuzz every parser and decoder on the host (FUZZ_SECONDS,"
	@echo "                        FUZZ_RUNS, FUZZ_JOBS, T=<re>; Documentation/reliability.md)"
	@echo "  RTRS_CACHE=<dir>      where the kernel, bindgen and initramfs are cached"
