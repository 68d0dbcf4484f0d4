# SPDX-License-Identifier: GPL-2.0-or-later
#
# The kselftest build of the rtrs-rs selftests, included by the Makefile of
# each of their directories (rtrs-rs/, soak/, harness/) after its TEST_PROGS
# and TEST_FILES. It includes the kselftest lib.mk of a kernel tree, which
# gives them the targets of every kselftest directory (all, run_tests,
# install INSTALL_PATH=..., emit_tests, clean), and adds gen_tar (and
# kselftest_install, the tree it packs).
#
# The kernel tree: the one whose tools/testing/selftests this directory
# sits in, if it was copied there; otherwise KDIR (default: the test kernel,
# scripts/build-kernel --path, as in the top Makefile), or KDIR/source when
# KDIR is the build tree of a separate O= directory.

rtrs_ksft_mk := $(realpath $(lastword $(MAKEFILE_LIST)))
# tools/testing/selftests of this repository, or of the kernel tree this
# directory was copied into.
rtrs_selftests := $(realpath $(dir $(rtrs_ksft_mk))/..)
rtrs_here := $(realpath $(dir $(firstword $(MAKEFILE_LIST))))

ifneq ($(wildcard $(rtrs_selftests)/lib.mk),)
rtrs_ksft := $(rtrs_selftests)
else
ifndef KDIR
KDIR := $(shell $(rtrs_selftests)/../../../scripts/build-kernel --path)
endif
rtrs_ksft := $(firstword $(wildcard $(KDIR)/tools/testing/selftests/lib.mk \
	$(KDIR)/source/tools/testing/selftests/lib.mk))
ifeq ($(rtrs_ksft),)
$(error KDIR=$(KDIR): no tools/testing/selftests/lib.mk there; give KDIR= a kernel \
	tree with its sources, or build the test kernel (scripts/build-kernel))
endif
rtrs_ksft := $(patsubst %/,%,$(dir $(rtrs_ksft)))
endif

# The collection, as the selftests' top Makefile names it: this directory
# below tools/testing/selftests (rtrs-rs, rtrs-rs/soak, rtrs-rs/harness).
COLLECTION ?= $(patsubst $(rtrs_selftests)/%,%,$(rtrs_here))
# Where install finds a TEST_INCLUDES file (../lib.sh of soak/, harness/),
# and where it puts it (OBJ_PATH), as the selftests' top Makefile passes
# them; its shell reads SRC_PATH from the environment.
SRC_PATH ?= $(rtrs_selftests)
export SRC_PATH
# Installed alone (make install INSTALL_PATH=<dir>), <dir> is the
# collection's place in an install tree: its root is as many levels up as
# the collection has.
rtrs_space := $(subst ,, )
ifdef INSTALL_PATH
OBJ_PATH ?= $(abspath $(INSTALL_PATH)/$(subst $(rtrs_space),/,$(patsubst %,..,$(subst /, ,$(COLLECTION)))))
endif

include $(rtrs_ksft)/lib.mk

# lib.mk's, except that the directory's settings (timeout=) hold here too:
# kselftest/runner.sh reads the settings of directories below the kernel's
# tools/testing/selftests only, and this one may be elsewhere.
define RUN_TESTS
	BASE_DIR="$(selfdir)";			\
	. $(selfdir)/kselftest/runner.sh;	\
	$(if $(wildcard $(rtrs_here)/settings),	\
		kselftest_default_timeout=$$(sed -n 's/^timeout=//p' $(rtrs_here)/settings);) \
	if [ "X$(summary)" != "X" ]; then       \
		per_test_logging=1;		\
	fi;                                     \
	run_many $(1)
endef

# gen_tar: what `make -C tools/testing/selftests TARGETS=<collection>
# gen_tar` of a kernel tree makes, for this directory alone (that Makefile
# takes its TARGETS below itself only): $(KSFT_INSTALL_PATH) holds
# run_kselftest.sh, kselftest/ (the runner and its KTAP helpers),
# kselftest-list.txt and the collection's files, installed by lib.mk's
# install; kselftest-packages/kselftest.tar$(FORMAT) packs them. On the
# machine that runs the tests: unpack, then ./run_kselftest.sh [-t
# $(COLLECTION):<test>].
KSFT_INSTALL_PATH ?= $(CURDIR)/kselftest_install
override KSFT_INSTALL_PATH := $(abspath $(KSFT_INSTALL_PATH))
FORMAT ?= .gz
rtrs_tar := $(KSFT_INSTALL_PATH)/kselftest-packages/kselftest.tar$(FORMAT)

kselftest_install:
	mkdir -p $(KSFT_INSTALL_PATH)/kselftest
	install -m 744 $(addprefix $(selfdir)/kselftest/,module.sh runner.sh prefix.pl \
		ktap_helpers.sh ksft.py) $(KSFT_INSTALL_PATH)/kselftest/
	install -m 744 $(selfdir)/run_kselftest.sh $(KSFT_INSTALL_PATH)/
	$(MAKE) --no-print-directory install INSTALL_PATH=$(KSFT_INSTALL_PATH)/$(COLLECTION) \
		OBJ_PATH=$(KSFT_INSTALL_PATH)
	$(MAKE) -s --no-print-directory emit_tests >$(KSFT_INSTALL_PATH)/kselftest-list.txt

gen_tar: kselftest_install
	@mkdir -p $(dir $(rtrs_tar))
	@tar caf $(rtrs_tar) --exclude=kselftest-packages -C $(KSFT_INSTALL_PATH) .
	@echo "Created $(rtrs_tar)"

.PHONY: kselftest_install gen_tar
