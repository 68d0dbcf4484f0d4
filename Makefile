# SPDX-License-Identifier: GPL-2.0-or-later
#
# rtrs-rs: RTRS and RNBD as Rust kernel modules.
#
#   make          build the modules (installs what is missing, builds the
#                 test kernel once; both are cached)
#   make run      boot a client and a server VM, map a remote disk, do IO
#   make check    host unit tests, then the selftests in the VM pair
#   make soak     the long fault tests (server crash, path flaps, map churn,
#                 failed allocations, three clients, RAID1 over two servers)
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

kdir = $$(scripts/build-kernel)
kmake = $(MAKE) -C "$(kdir)" M=$(CURDIR) RUSTC=$(KRUSTC) BINDGEN=$(RTRS_CACHE)/cargo/bin/bindgen \
	$$(scripts/build-kernel --make-args)

.PHONY: all deps kernel modules hosttest check soak run bench clean help fmt fmtcheck

all: modules

deps:
	@scripts/install-deps

kernel: deps
	@scripts/build-kernel >/dev/null

# Warnings are errors: rustc's and gcc's by flag, objtool's by inspection
# (6.12's objtool has no --Werror).
modules: kernel
	@mkdir -p $(BUILD)
	@$(kmake) KRUSTFLAGS=-Dwarnings KCFLAGS=-Werror modules 2>&1 | tee $(BUILD)/modules.log
	@if grep -q 'objtool: .*warning\|warning: objtool' $(BUILD)/modules.log; then \
		echo "make: objtool warnings above; they are errors here" >&2; exit 1; fi
	@mkdir -p $(BUILD)/modules
	@find rtrs rnbd rust-bindings -name '*.ko' -exec cp -t $(BUILD)/modules {} + 2>/dev/null || true

check: hosttest modules
	scripts/run-tests --kdir "$(kdir)" --modules $(BUILD)/modules $(if $(T),--filter '$(T)')

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
	-@kd=$$(scripts/build-kernel --path 2>/dev/null) && [ -d "$$kd" ] && $(MAKE) -C "$$kd" M=$(CURDIR) clean
	rm -rf $(BUILD) target

help:
	@sed -n '3,14p' Makefile | sed 's/^# \{0,1\}//'
	@echo "  make fmt | fmtcheck   rustfmt with the kernel's .rustfmt.toml"
	@echo "  make CLIPPY=1         build with clippy, as the kernel does"
	@echo "  make check T=<re>     only the selftests whose name matches <re>"
	@echo "  make check PROFILE=debug  the same on a KASAN/lockdep/UBSAN/kmemleak kernel"
	@echo "  make soak T=<re>      only the soak tests whose name matches <re>"
	@echo "  make fuzz             fuzz every parser and decoder on the host (FUZZ_SECONDS,"
	@echo "                        FUZZ_RUNS, FUZZ_JOBS, T=<re>; Documentation/reliability.md)"
	@echo "  RTRS_CACHE=<dir>      where the kernel, bindgen and initramfs are cached"
