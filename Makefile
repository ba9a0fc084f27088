# tflm-micropython: TinyML models on MicroPython, natively.
#
# `make help` lists the targets: each is the `## make ...` line above its
# rule (here and in port_boards/boards.mk), so the list is the rules'.
#
# Everything built lives in build/ (ignored by git); nothing is downloaded
# again when it is already there.

SHELL := /bin/bash
.DEFAULT_GOAL := help

TOP := $(CURDIR)
# Everything built goes here; BUILD=... gives a separate tree (MPY_DIR can stay shared).
BUILD ?= $(TOP)/build
MPY_VERSION := 1.25.0
# A MicroPython 1.25 checkout of your own can be given with MPY_DIR=...
MPY_DIR ?= $(BUILD)/micropython-$(MPY_VERSION)
VENV := $(TOP)/.venv
PY := $(VENV)/bin/python
MODELS ?= $(abspath $(TOP)/../shared/models)
# Offline copies of the real boards' SDKs and the RP2040 bootrom (SOURCES.md there).
SDK ?= $(abspath $(TOP)/../shared/sdk)
BOARD ?= NETDUINO2
# The boards, from their descriptions port_boards/<BOARD>/board.json: QEMU_BOARDS
# (the qemu port's), REAL_BOARDS (rp2, stm32, esp32), TESTED_REAL_BOARDS (those
# `make test` builds) and REAL_PORT_<BOARD>. Read by the host package's reader
# with the system's python3 (standard library only: no .venv needed), once per
# make command (sub-makes inherit it), as NAME=V1,V2 words.
ifndef TFLM_BOARD_VARS
TFLM_BOARD_VARS := $(shell PYTHONPATH=$(TOP)/host_tools python3 -m tflm_host.board_info make-vars)
endif
ifeq ($(strip $(TFLM_BOARD_VARS)),)
$(error the boards' descriptions (port_boards/*/board.json) could not be read: PYTHONPATH=host_tools python3 -m tflm_host.board_info make-vars)
endif
export TFLM_BOARD_VARS
tflm_comma := ,
$(foreach v,$(TFLM_BOARD_VARS),$(eval $(subst =, := ,$(subst $(tflm_comma), ,$(v)))))
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

MPY_CROSS := $(BUILD)/mpy-cross/mpy-cross
UNIX_BIN := $(BUILD)/unix/micropython
MPY_STAMP := $(MPY_DIR)/py/mpconfig.h
VENV_STAMP := $(VENV)/.installed

# Kernels to link in (empty: all of them), e.g. TFLM_OPS="FULLY_CONNECTED QUANTIZE".
TFLM_OPS ?=
# Tensor types each kernel is built for (empty: all), e.g. TFLM_TYPES="CONV_2D:int32,int8"
# (`tflm-host ops MODEL` prints a model's TFLM_OPS and TFLM_TYPES).
TFLM_TYPES ?=
# Memory planners to link in (empty: all), e.g. TFLM_PLANNERS=offline.
TFLM_PLANNERS ?=
# A plan compiled in as tflm.builtin_plan: PLAN=plan.h (tflm-host plan --c-header).
PLAN ?=
# Patch-based stages (`tflm-host prepare --max-extra-macs`) built in (empty or
# 1) or left out (0: `tflm-host ops MODEL` prints it when no model has one).
TFLM_PATCH ?=
ifneq ($(filter-out 0 1,$(strip $(TFLM_PATCH))),)
$(error TFLM_PATCH=$(TFLM_PATCH): 0 (no patch-based stages) or 1)
endif
MPY_MAKE_FLAGS := USER_C_MODULES=$(TOP) MICROPY_MPYCROSS=$(MPY_CROSS) FROZEN_MANIFEST= \
	TFLM_OPS="$(TFLM_OPS)" TFLM_TYPES="$(TFLM_TYPES)" TFLM_PLANNERS="$(TFLM_PLANNERS)" TFLM_PATCH="$(TFLM_PATCH)" \
	TFLM_PLAN="$(if $(PLAN),$(abspath $(PLAN)))" -j$(JOBS)

# The RISC-V and Xtensa compilers are for `make compile-check` (ESP32 cores);
# cmake, g++ and Arm's libstdc++ build the RP2040 firmware and picotool;
# clang the engine's tests a second time, its sanitizers seeing more;
# Python's headers the host package's engine extension; dpkg-source
# unpacks QEMU's source package for the cycle estimator's plugin header.
APT_PACKAGES := gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm \
	gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf gcc-xtensa-lx106 picolibc-xtensa-lx106-elf \
	cmake g++ libstdc++-arm-none-eabi-newlib python3-dev dpkg-dev clang

.PHONY: help deps apt-deps venv cycles-plugin micropython mpy-cross unix unix-asan test-attacks-asan firmware qemu-firmware \
	list-qemu-boards demo size-report fw-dir test engine-binaries test-engine test-fmath test-pico test-esp32 fuzz soak \
	converter-check natmod unix-stock firmware-stock natmod-stock dist dist-parts dist-natmod dist-pkg \
	clean distclean

## make help: this list
help:
	@echo "Targets (variables in capitals; BOARD: $(QEMU_BOARDS) on QEMU, $(REAL_BOARDS) real):"
	@sed -n 's/^## //p' $(MAKEFILE_LIST) | awk '{ i = index($$0, ": "); t = substr($$0, 1, i - 1); \
		d = substr($$0, i + 2); if (length(t) > 30) printf "  %s\n  %-30s %s\n", t, "", d; \
		else printf "  %-30s %s\n", t, d }'

# ---------------------------------------------------------------------------
# Dependencies

# pico-emulator (port_boards/boards.mk): rp2040js, which runs the RPI_PICO firmware in tests;
# esp32-python: ESP-IDF's Python requirements in .venv (the ESP32 firmware's build).
# The Debian packages first (the rest build with them), then the rest side by
# side: most of it waits on downloads (PyPI, npm, Debian's source archive).
## make deps: toolchains, QEMU, .venv, the MicroPython 1.25.0 source, the RP2040 emulator (once)
deps: apt-deps
	@$(MAKE) --no-print-directory -j4 -O venv micropython pico-emulator cycles-plugin esp32-python

apt-deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "Installing:$$missing"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@# clang's sanitizer runtime, a package of its own (libclang-rt-<major>-dev) that clang only recommends.
	@if ! echo 'int main(void) { return 0; }' | clang -x c -fsanitize=address,undefined -o /dev/null - 2>/dev/null; then \
		v=$$(clang -dumpversion | cut -d. -f1); echo "Installing: libclang-rt-$$v-dev"; \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends libclang-rt-$$v-dev; \
	fi

# tflm-host's engine extension (tflm_host._engine), built in place by the
# editable install and again whenever the module's C sources change.
ENGINE_EXT_STAMP := $(BUILD)/host-engine.stamp
ENGINE_EXT_SOURCES := $(wildcard micropython_mod/*.h micropython_mod/engine/* micropython_mod/kernels/*) \
	host_tools/tflm_host/_engine.c

# The maintainers' tools (host_tools/tflm_dev: benchmarks, reports, the test
# model builder, codegen) are not in the tflm-host wheel: .venv finds them
# in the checkout, through a .pth file naming host_tools.
DEV_PATH_STAMP := $(VENV)/.tflm-dev-path

## make venv: .venv with tflm-host and its C engine (again after a change to the module's C)
venv: $(VENV_STAMP) $(ENGINE_EXT_STAMP) $(DEV_PATH_STAMP)

$(VENV_STAMP): host_tools/pyproject.toml host_tools/setup.py tests/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e 'host_tools[plot]' -r tests/requirements.txt
	touch $@

$(DEV_PATH_STAMP): $(VENV_STAMP)
	echo "$(abspath host_tools)" > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/tflm-dev.pth"
	@touch $@

# --force: build_ext compares each .c with its object only, so a changed
# header alone would leave the extension as it was.
$(ENGINE_EXT_STAMP): $(VENV_STAMP) $(ENGINE_EXT_SOURCES)
	@mkdir -p $(@D)
	cd host_tools && $(abspath $(PY)) setup.py -q build_ext --inplace --force -j $(JOBS)
	@touch $@

# The cycle estimator: a QEMU TCG plugin (host_tools/cycles), built against
# the plugin header of the installed QEMU's own Debian source package
# (fetched once, and again when the installed QEMU changes).
CYCLES_DIR := $(BUILD)/cycles
CYCLES_PLUGIN := $(CYCLES_DIR)/libtflm_cycles.so
CYCLES_SOURCES := $(wildcard host_tools/cycles/*.c host_tools/cycles/*.h)

## make cycles-plugin: the cycle estimator, a QEMU TCG plugin (tflm-host bench speed --cycles)
cycles-plugin: $(CYCLES_PLUGIN)

$(CYCLES_PLUGIN): $(CYCLES_SOURCES) | apt-deps
	@if [ "$$(cat $(CYCLES_DIR)/include/qemu-plugin.version 2>/dev/null)" != \
		"$$(dpkg-query -W -f='$${source:Version}' qemu-system-arm 2>/dev/null)" ]; then \
		bash host_tools/cycles/fetch_plugin_header.sh $(BUILD) $(CYCLES_DIR)/include; fi
	gcc -std=gnu99 -O2 -Wall -Wextra -Werror -fPIC -shared -I$(CYCLES_DIR)/include -Ihost_tools/cycles \
		-o $@ host_tools/cycles/tflm_cycles.c host_tools/cycles/thumb.c

micropython: $(MPY_STAMP)

# MicroPython 1.25.0: Debian trixie's source package (through a private apt
# configuration in build/apt, so the system's is left alone), else git.
$(MPY_STAMP):
ifneq ($(MPY_DIR),$(BUILD)/micropython-$(MPY_VERSION))
	@echo "MPY_DIR=$(MPY_DIR) holds no MicroPython source" && false
endif
	@mkdir -p $(BUILD)
	@if ! bash port_boards/fetch_micropython.sh debian $(BUILD) $(MPY_VERSION); then \
		echo "Debian source package not reachable, trying git"; \
		bash port_boards/fetch_micropython.sh git $(BUILD) $(MPY_VERSION); \
	fi
	@grep -Eq '^#define MICROPY_VERSION_MINOR \(?25\)?$$' $@ || (echo "$@ is not MicroPython 1.25" && false)
	@touch $@

mpy-cross: $(MPY_CROSS)

$(MPY_CROSS): $(MPY_STAMP)
	$(MAKE) -C $(MPY_DIR)/mpy-cross BUILD=$(BUILD)/mpy-cross -j$(JOBS)

# ---------------------------------------------------------------------------
# Builds (MicroPython's make decides what is out of date)

# Not stripped: benchmarks count instructions per function (valgrind).
## make unix: the MicroPython unix port with the tflm module (build/unix/micropython)
unix: $(MPY_CROSS)
	$(MAKE) -C $(MPY_DIR)/ports/unix VARIANT=standard BUILD=$(BUILD)/unix STRIP= \
		MICROPY_PY_BTREE=0 MICROPY_PY_SSL=0 MICROPY_PY_FFI=0 $(MPY_MAKE_FLAGS)

# The same port built by clang (macOS's compiler; build/unix-clang), with the
# port's warnings as errors as with GCC: tests/test_models.py runs the shared
# models on it too.
## make unix-clang: the unix port built by clang (build/unix-clang/micropython)
unix-clang: $(MPY_CROSS)
	$(MAKE) -C $(MPY_DIR)/ports/unix VARIANT=standard BUILD=$(BUILD)/unix-clang STRIP= CC=clang \
		MICROPY_PY_BTREE=0 MICROPY_PY_SSL=0 MICROPY_PY_FFI=0 $(MPY_MAKE_FLAGS)

# The unix port under AddressSanitizer and UBSan (build/unix-asan): the
# binding's attacks and API fuzzing run on it (TFLM_UNIX_BINARY). The
# collector's heap is one block to ASan, so it sees accesses past the heap
# and the engine's undefined behaviour, not a freed block of the heap
# reused; the engine alone is fuzzed with exact bounds (make fuzz).
# Exceptions unwind with setjmp/longjmp, which ASan follows (the port's own
# assembly leaves its view of the stack stale); MicroPython's core passes
# NULL with a zero length to memcpy, which UBSan would stop at.
UNIX_ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
	-fno-sanitize=nonnull-attribute -DMICROPY_NLR_SETJMP=1 -Wno-clobbered
## make unix-asan: the unix port under AddressSanitizer and UBSan (build/unix-asan)
unix-asan: $(MPY_CROSS)
	$(MAKE) -C $(MPY_DIR)/ports/unix VARIANT=standard BUILD=$(BUILD)/unix-asan STRIP= \
		MICROPY_PY_BTREE=0 MICROPY_PY_SSL=0 MICROPY_PY_FFI=0 COPT=-O1 \
		CFLAGS_EXTRA="$(UNIX_ASAN_FLAGS)" LDFLAGS_EXTRA="$(UNIX_ASAN_FLAGS)" $(MPY_MAKE_FLAGS)

# The attacks of tests/test_attacks.py and the API fuzz on the unix port
# under the sanitizers.
## make test-attacks-asan: the API attacks and fuzz on the sanitized unix port
test-attacks-asan: unix-asan
	TFLM_UNIX_BINARY=$(BUILD)/unix-asan/micropython ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
		nice $(PY) -m pytest -q tests/test_attacks.py -k unix
	TFLM_UNIX_BINARY=$(BUILD)/unix-asan/micropython ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
		nice $(PY) tests/api_fuzz.py $(FUZZ_API_ASAN_N) $(FUZZ_SEED)

# With TFLM_OPS, TFLM_TYPES, TFLM_PLANNERS, TFLM_PATCH, PLAN, or
# TFLM_KERNEL_OPT or TFLM_KERNEL_OPT_ONLY given, the firmware goes to its
# own folder, build/<BOARD>-cfg-<hash>: MicroPython's make does not rebuild
# objects when compiler flags change.
FW_CONFIG = $(strip $(sort $(TFLM_OPS)) $(if $(strip $(TFLM_TYPES)),types: $(sort $(TFLM_TYPES))) \
	$(if $(TFLM_PLANNERS),planners: $(sort $(TFLM_PLANNERS))) $(if $(PLAN),plan: $(abspath $(PLAN))) \
	$(if $(strip $(TFLM_PATCH)),patch: $(strip $(TFLM_PATCH)))$(KERNEL_OPT_KNOBS))
FW_BUILD = $(BUILD)/$(BOARD)$(if $(FW_CONFIG),-cfg-$(shell echo "$(FW_CONFIG)" | md5sum | cut -c1-8))

# Real boards (RPI_PICO, ESP32_GENERIC, PYBV11) and the cross-compile checks.
include port_boards/boards.mk

# The board's make settings, hashed: when they change, the build folder
# starts afresh (MicroPython's make does not see changed compiler flags).
BOARD_CONFIG_HASH = $(shell cat port_boards/$(BOARD)/mpconfigboard.mk port_boards/common/*.mk port_boards/common/*.h \
	2>/dev/null | md5sum | cut -c1-16)

## make firmware BOARD=... [TFLM_OPS= TFLM_TYPES= TFLM_PLANNERS= TFLM_PATCH= PLAN=]: MicroPython with the module for a board
ifneq ($(filter $(BOARD),$(REAL_BOARDS)),)
firmware: firmware-real
else
firmware: $(MPY_CROSS)
	@test -d port_boards/$(BOARD) || (echo "Unknown BOARD=$(BOARD); boards: $(QEMU_BOARDS) $(REAL_BOARDS)" && false)
	@if [ -d $(FW_BUILD) ] && [ "$$(cat $(FW_BUILD)/.board-config 2>/dev/null)" != "$(BOARD_CONFIG_HASH)" ]; then \
		echo "board settings changed: rebuilding $(FW_BUILD) from scratch"; rm -rf $(FW_BUILD); fi
	$(MAKE) -C $(MPY_DIR)/ports/qemu BOARD=$(BOARD) BOARD_DIR=$(TOP)/port_boards/$(BOARD) \
		BUILD=$(FW_BUILD) $(MPY_MAKE_FLAGS)
	@echo "$(BOARD_CONFIG_HASH)" > $(FW_BUILD)/.board-config
	@echo "firmware: $(FW_BUILD)/firmware.elf"
endif

## make list-qemu-boards: the QEMU boards and the machine each runs on
list-qemu-boards:
	@for b in $(QEMU_BOARDS); do \
		printf '%-14s %s\n' $$b "$$(sed -n 's/^QEMU_MACHINE = //p' port_boards/$$b/mpconfigboard.mk)"; done

## make qemu-firmware: the firmware of every QEMU board
qemu-firmware: $(MPY_CROSS)
	@for b in $(QEMU_BOARDS); do $(MAKE) --no-print-directory firmware BOARD=$$b || exit 1; done

# ---------------------------------------------------------------------------
# The module as a dynamic native module (tflm.mpy) for stock MicroPython
# 1.25.0 firmware: micropython_mod/natmod.mk, built in build/natmod/<ARCH>.
# armv6m: Cortex-M0/M0+ (RP2040), armv7m: Cortex-M3, armv7emsp: Cortex-M4F,
# xtensawin: the ESP32's LX6 (and the ESP32-S3's LX7), x64: the unix port.
# TFLM_OPS and TFLM_TYPES as for `make firmware`: a native module's code is
# loaded into RAM, so a model's ops only save it.
# (The stock firmware the tests load it on: build/unix-stock, build/<BOARD>-stock.)
# BUILD=obj: the natmod's own object folder, whatever BUILD this make was given
# (a command-line BUILD reaches sub-makes and would put every ARCH's objects
# in one place).
ARCH ?= x64
NATMOD_ARCHS := x64 armv6m armv7m armv7emsp xtensawin
# Those the release folder has no build for (make dist): every kernel's
# xtensawin build is more code than the ESP32 holds in executable RAM
# (docs/natmod.md); a model's own kernels are built from a checkout.
NATMOD_CHECKOUT_ARCHS := xtensawin
NATMOD_RELEASE_ARCHS := $(filter-out $(NATMOD_CHECKOUT_ARCHS),$(NATMOD_ARCHS))
# xtensawin's compiler: xtensa-esp32-elf-gcc on PATH (ESP-IDF's export.sh),
# else the offline ESP32 kit's (make esp32-sdk extracts it).
NATMOD_XTENSA_PATH = $(if $(shell command -v xtensa-esp32-elf-gcc 2> /dev/null),,$(abspath $(ESP32_DIR))/xt/bin:)
# $(call natmod_dir,ARCH,TFLM_OPS,TFLM_TYPES[,TFLM_PATCH]): where make natmod builds with those settings.
natmod_dir = $(BUILD)/natmod/$(1)$(if $(strip $(2)$(3)$(4)),-cfg-$(shell echo "$(sort $(2)) $(sort $(3))$(if \
	$(strip $(4)), patch: $(strip $(4)))" | md5sum | cut -c1-8))
NATMOD_DIR = $(call natmod_dir,$(ARCH),$(TFLM_OPS),$(TFLM_TYPES),$(TFLM_PATCH))
# The kernels' optimization knobs when given (micropython.mk's and
# natmod.mk's): a natmod's objects made with other settings are made again,
# a firmware with them has a folder of its own (FW_CONFIG).
KERNEL_OPT_KNOBS = $(foreach v,TFLM_KERNEL_OPT TFLM_KERNEL_OPT_ONLY,$(if $(filter undefined,$(origin $(v))),, $(v)=[$($(v))]))
NATMOD_CONFIG = $(TFLM_OPS) $(TFLM_TYPES)$(if $(strip $(TFLM_PATCH)), TFLM_PATCH=$(strip $(TFLM_PATCH)))$(KERNEL_OPT_KNOBS)
# The release's second tflm.mpy for the RP2040: the ops most small
# convolutional and dense models use, every type (a stock Pico's heap cannot
# hold every kernel and a model: docs/natmod.md).
NATMOD_CORE_OPS := ADD AVERAGE_POOL_2D CONCATENATION CONV_2D DEPTHWISE_CONV_2D DEQUANTIZE FULLY_CONNECTED LOGISTIC \
	MAX_POOL_2D MEAN MUL PAD QUANTIZE RESHAPE SOFTMAX
NATMOD_CORE_ARCHS := armv6m
# Its kernels at -O2 (natmod.mk's TFLM_KERNEL_OPT_ONLY): the depthwise
# convolution's alone, so that a stock Pico's heap still holds kws_ref_model
# read into it beside the module (tests/test_dist.py; with conv_s8's too,
# 165,686 B, it does not). On MICROBIT's stock firmware: micro_speech_quantized
# 2,944,548 cycles (4,886,259 with conv_s8 at -O2 instead), kws_ref_model
# 23,019,741 (22,925,423).
# Without patch-based stages (TFLM_PATCH=0: 13 KB less of the heap): a model
# that a stage would help is too big for a stock Pico's heap anyway; one
# with a stage is refused with NotImplementedError. (With them, after the
# depthwise pixel rule's code, 165,308 B: kws_ref_model no longer fitted.)
NATMOD_CORE_PATCH := 0
NATMOD_CORE_OPT_ONLY := depthwise_conv_s8
UNIX_STOCK := $(BUILD)/unix-stock/micropython

## make natmod ARCH=x64|armv6m|armv7m|armv7emsp|xtensawin [TFLM_OPS= TFLM_TYPES= TFLM_PATCH= TFLM_KERNEL_OPT= TFLM_KERNEL_OPT_ONLY=]: tflm.mpy, the module for stock firmware (build/natmod/ARCH)
natmod: $(MPY_STAMP) $(VENV_STAMP)
	@test -n "$(filter $(ARCH),$(NATMOD_ARCHS))" || (echo "Unknown ARCH=$(ARCH); archs: $(NATMOD_ARCHS)" && false)
	@mkdir -p $(NATMOD_DIR)
	@ln -sfn $(TOP)/micropython_mod $(NATMOD_DIR)/src
	@ln -sfn src/natmod.mk $(NATMOD_DIR)/Makefile
	@if [ "$$(cat $(NATMOD_DIR)/.config 2>/dev/null)" != "$(NATMOD_CONFIG)" ]; then rm -rf $(NATMOD_DIR)/obj; fi
	@echo "$(NATMOD_CONFIG)" > $(NATMOD_DIR)/.config
ifeq ($(ARCH),xtensawin)
	@if [ -n "$(NATMOD_XTENSA_PATH)" ]; then \
		if [ -z "$(ESP32_KIT)" ]; then echo "make natmod ARCH=xtensawin: no xtensa-esp32-elf-gcc on PATH (source" \
			"ESP-IDF's export.sh) and no offline ESP32 kit in $(ESP32_SDK)" >&2; exit 1; fi; \
		$(MAKE) --no-print-directory esp32-sdk; fi
endif
	PATH="$(if $(filter xtensawin,$(ARCH)),$(NATMOD_XTENSA_PATH))$$PATH" \
		$(MAKE) -C $(NATMOD_DIR) MPY_DIR=$(MPY_DIR) ARCH=$(ARCH) PYTHON=$(PY) BUILD=obj \
		TFLM_OPS="$(TFLM_OPS)" TFLM_TYPES="$(TFLM_TYPES)" TFLM_PATCH="$(TFLM_PATCH)" -j$(JOBS)
	@echo "natmod: $(NATMOD_DIR)/tflm.mpy ($$(stat -c %s $(NATMOD_DIR)/tflm.mpy) bytes)"

# The firmware of a QEMU board without the module, to load tflm.mpy:
# build/<BOARD>-stock. Only the board's glue (ROMFS at /rom, the clock:
# port_boards/micropython.mk) is built in, as a user C module alone.
STOCK_MODULES := $(BUILD)/stock-modules
# The qemu port leaves the native emitter out of its nRF51 (Cortex-M0)
# build, and with it the loading of native code; the RP2040's stock firmware
# (the same ISA) has it for ARMv6-M: so here.
STOCK_CFLAGS = $(if $(filter MICROBIT,$(BOARD)),-DMICROPY_EMIT_THUMB=1 -DMICROPY_EMIT_THUMB_ARMV7M=0)
## make firmware-stock BOARD=...: a board's firmware without the module, to load tflm.mpy (build/BOARD-stock)
ifneq ($(filter $(BOARD),$(REAL_BOARDS)),)
firmware-stock: firmware-stock-real
else
firmware-stock: $(MPY_CROSS)
	@mkdir -p $(STOCK_MODULES) && ln -sfn $(TOP)/port_boards $(STOCK_MODULES)/boards
	$(MAKE) -C $(MPY_DIR)/ports/qemu BOARD=$(BOARD) BOARD_DIR=$(TOP)/port_boards/$(BOARD) \
		BUILD=$(BUILD)/$(BOARD)-stock USER_C_MODULES=$(STOCK_MODULES) MICROPY_MPYCROSS=$(MPY_CROSS) \
		CFLAGS_EXTRA="$(STOCK_CFLAGS)" FROZEN_MANIFEST= -j$(JOBS)
endif

# What tests/test_natmod.py loads: tflm.mpy for x64 with every kernel and,
# for each board whose board.json has a natmod entry (NATMOD_BOARDS), for its
# architecture: with every kernel, or with its models' kernels only as
# `tflm-host ops MODELS --natmod ARCH` builds them (the test asks that
# command for them; the whole set is more than MICROBIT's heap); the stock
# unix port and each such board's stock firmware.
NATMOD_OPS = TFLM_BUILD=$(abspath $(BUILD)) $(PY) -m tflm_host ops --natmod $(1) $(2) > /dev/null
define NATMOD_STOCK_BOARD
	$(if $(NATMOD_MODELS_$(1)),$(call NATMOD_OPS,$(NATMOD_ARCH_$(1)),$(addprefix $(MODELS)/,$(NATMOD_MODELS_$(1)))),@$(MAKE) --no-print-directory natmod ARCH=$(NATMOD_ARCH_$(1)))
	@$(MAKE) --no-print-directory firmware-stock BOARD=$(1)

endef
# tests/test_install.py installs, with `tflm-host install --model`, an
# armv7m tflm.mpy with hello_world_int8's kernel onto MPS2_AN385's stock
# firmware (the whole set takes twice as long to send over its UART).
## make natmod-stock: tflm.mpy (x64 and each NATMOD_BOARDS' architecture) and the stock firmware the tests load it on
natmod-stock:
	@$(MAKE) --no-print-directory natmod ARCH=x64
	@$(MAKE) --no-print-directory unix-stock
	$(foreach b,$(NATMOD_BOARDS),$(call NATMOD_STOCK_BOARD,$(b)))
	$(call NATMOD_OPS,armv7m,$(MODELS)/hello_world_int8.tflite)

## make unix-stock: the unix port without the module, to load tflm.mpy (build/unix-stock/micropython)
unix-stock: $(MPY_CROSS)
	$(MAKE) -C $(MPY_DIR)/ports/unix VARIANT=standard BUILD=$(BUILD)/unix-stock STRIP= \
		MICROPY_PY_BTREE=0 MICROPY_PY_SSL=0 MICROPY_PY_FFI=0 MICROPY_MPYCROSS=$(MPY_CROSS) FROZEN_MANIFEST= -j$(JOBS)

# ---------------------------------------------------------------------------
# Release artifacts: `make dist` builds what is missing (every RELEASE_BOARDS
# firmware, tflm.mpy with every kernel for each of NATMOD_RELEASE_ARCHS and with
# NATMOD_CORE_OPS for NATMOD_CORE_ARCHS, the host package's sdist and the
# wheel built from it) and copies it into DIST with
# SHA256SUMS and manifest.json (host_tools/tflm_dev/dist.py). Only the
# default builds: no TFLM_OPS, TFLM_TYPES, TFLM_PLANNERS or PLAN.
DIST ?= $(BUILD)/dist
PKG_DIR := $(BUILD)/pkg
PKG_STAMP := $(PKG_DIR)/.built
PKG_SOURCES := host_tools/pyproject.toml host_tools/setup.py host_tools/MANIFEST.in host_tools/README.md \
	$(shell find host_tools/tflm_host -type f \( -name '*.py' -o -name '*.c' -o -name '*.cjs' -o -name '*.json' \) \
		-not -path '*/board_data/*' -not -path '*/node_modules/*' 2>/dev/null) \
	$(ENGINE_EXT_SOURCES) $(wildcard port_boards/*/board.json)

## make dist [DIST=build/dist]: release artifacts: every real board's firmware, tflm.mpy per ARCH, the host wheel and sdist, SHA256SUMS, manifest.json
dist: dist-parts
	$(PY) -m tflm_dev.dist --build $(BUILD) --pkg $(PKG_DIR) --out $(DIST) --micropython $(MPY_VERSION) \
		--archs $(NATMOD_RELEASE_ARCHS) --core-ops $(NATMOD_CORE_OPS) \
		--core $(foreach a,$(NATMOD_CORE_ARCHS),$(a)=$(call natmod_dir,$(a),$(NATMOD_CORE_OPS),,$(NATMOD_CORE_PATCH))/tflm.mpy)

# What `make dist` copies, each built where its own target builds it.
dist-parts: venv
	@if [ -n "$(strip $(TFLM_OPS)$(TFLM_TYPES)$(TFLM_PLANNERS)$(TFLM_PATCH)$(PLAN)$(KERNEL_OPT_KNOBS))" ]; then \
		echo "make dist ships the default builds: no TFLM_OPS, TFLM_TYPES, TFLM_PLANNERS, TFLM_PATCH, PLAN, TFLM_KERNEL_OPT or" \
			"TFLM_KERNEL_OPT_ONLY" >&2; exit 1; fi
	@for b in $(RELEASE_BOARDS); do $(BOARDS_MAKE) firmware-real BOARD=$$b || exit 1; done
	@$(MAKE) --no-print-directory dist-natmod dist-pkg

# make test builds these in its host lane, the firmware in its real-boards lane.
## make dist-natmod: tflm.mpy with every kernel for each NATMOD_RELEASE_ARCHS (build/natmod/ARCH), and with NATMOD_CORE_OPS for NATMOD_CORE_ARCHS
dist-natmod:
	@for a in $(NATMOD_RELEASE_ARCHS); do $(MAKE) --no-print-directory natmod ARCH=$$a || exit 1; done
	@for a in $(NATMOD_CORE_ARCHS); do $(MAKE) --no-print-directory natmod ARCH=$$a TFLM_OPS="$(NATMOD_CORE_OPS)" \
		TFLM_KERNEL_OPT_ONLY="$(NATMOD_CORE_OPT_ONLY)" TFLM_PATCH=$(NATMOD_CORE_PATCH) || exit 1; done

## make dist-pkg: the host package's sdist and the wheel built from it (build/pkg)
dist-pkg: $(PKG_STAMP)

# The wheel is built from the sdist (as a user's pip builds it), so the
# sdist is checked to carry all of the engine.
$(PKG_STAMP): $(VENV_STAMP) $(PKG_SOURCES)
	rm -rf $(PKG_DIR) && mkdir -p $(PKG_DIR)
	cd host_tools && $(abspath $(PY)) setup.py -q sdist -d $(PKG_DIR) > /dev/null
	$(PY) -m pip wheel -q --no-deps -w $(PKG_DIR) $(PKG_DIR)/*.tar.gz
	@touch $@

# The build folder `make firmware` uses with the same variables.
## make fw-dir [BOARD= TFLM_OPS= ...]: the build folder make firmware uses with these settings
fw-dir:
	@echo $(FW_BUILD)

# Firmware text of the module with every kernel, with person_detect's only
# for its tensor types only (and for every type), those without patch-based
# stages, and with those and person_detect's plan built in, no greedy
# planner (docs/size.md).
SIZE_SETTING = $(shell $(PY) -m tflm_host ops $(MODELS)/person_detect.tflite | sed -n 's/^$(1)="\(.*\)"$$/\1/p')
SIZE_OPS = $(call SIZE_SETTING,TFLM_OPS)
SIZE_TYPES = $(call SIZE_SETTING,TFLM_TYPES)
SIZE_PLAN := $(BUILD)/size-report/person_detect_plan.h
SIZE_DIR = $(shell $(MAKE) --no-print-directory -s fw-dir BUILD=$(BUILD) BOARD=NETDUINO2 $(1))

## make size-report: docs/size.md, the module's firmware text with all ops and with one model's
size-report: deps
	@mkdir -p $(dir $(SIZE_PLAN))
	$(PY) -m tflm_host plan $(MODELS)/person_detect.tflite --no-reorder --c-header $(SIZE_PLAN) > /dev/null
	@$(MAKE) --no-print-directory firmware BOARD=NETDUINO2
	@$(MAKE) --no-print-directory firmware BOARD=NETDUINO2 TFLM_OPS="$(SIZE_OPS)" TFLM_TYPES="$(SIZE_TYPES)"
	@$(MAKE) --no-print-directory firmware BOARD=NETDUINO2 TFLM_OPS="$(SIZE_OPS)"
	@$(MAKE) --no-print-directory firmware BOARD=NETDUINO2 TFLM_OPS="$(SIZE_OPS)" TFLM_TYPES="$(SIZE_TYPES)" TFLM_PATCH=0
	@$(MAKE) --no-print-directory firmware BOARD=NETDUINO2 TFLM_OPS="$(SIZE_OPS)" TFLM_TYPES="$(SIZE_TYPES)" \
		TFLM_PLANNERS=offline PLAN=$(SIZE_PLAN)
	$(PY) -m tflm_host bench size --target NETDUINO2 --out docs/size.md \
		--builds "all ops=$(call SIZE_DIR)" \
		"person_detect's ops ($(SIZE_OPS)), its types only (TFLM_TYPES)=$(call SIZE_DIR,TFLM_OPS="$(SIZE_OPS)" TFLM_TYPES="$(SIZE_TYPES)")" \
		"person_detect's ops, every type=$(call SIZE_DIR,TFLM_OPS="$(SIZE_OPS)")" \
		"person_detect's ops and types, no patch-based stages (TFLM_PATCH=0)=$(call SIZE_DIR,TFLM_OPS="$(SIZE_OPS)" TFLM_TYPES="$(SIZE_TYPES)" TFLM_PATCH=0)" \
		"person_detect's ops and types, its plan built in, offline planner only=$(call SIZE_DIR,TFLM_OPS="$(SIZE_OPS)" TFLM_TYPES="$(SIZE_TYPES)" TFLM_PLANNERS=offline PLAN=$(SIZE_PLAN))"

# ---------------------------------------------------------------------------
# Demo: a model in the emulated STM32's flash, run from MicroPython

## make demo: person detection from flash on the emulated STM32 (NETDUINO2)
demo: deps
	@$(MAKE) --no-print-directory firmware BOARD=NETDUINO2
	$(PY) -m tflm_host demo --board NETDUINO2 --models $(MODELS) --prepare

# ---------------------------------------------------------------------------
# Tests

# pytest processes (pytest-xdist); 1 runs the suite in one process. Three
# on two cores: the boards' tests wait on their emulators' serial lines (on
# the device tests alone, 86% of two cores busy with two processes, 95%
# with three).
TEST_JOBS ?= 3

# tests/suite.py: the builds in two lanes with the engine's tests beside
# them, then pytest (the engine's tests still beside it), each
# phase timed and the slowest tests listed.
## make test [TEST_JOBS=3]: every test, each phase timed (the Pico's firmware in an RP2040 emulator, the ESP32's in QEMU)
test: deps
	@TFLM_MODELS=$(MODELS) TFLM_BUILD=$(BUILD) $(PY) tests/suite.py --make "$(MAKE) BUILD=$(BUILD) MODELS=$(MODELS)" --build $(BUILD) --jobs $(TEST_JOBS)

# The engine's host programs that pytest drives (tflm_run).
engine-binaries: venv
	@$(MAKE) --no-print-directory -C tests/engine BUILD=$(BUILD)/engine MODELS=$(MODELS) PY=$(abspath $(PY)) -j$(JOBS) binaries

# The whole device suite (every test parametrised over targets, every shared
# model) on the real RPI_PICO firmware in the RP2040 emulator: about 20 times
# slower than QEMU, so not part of `make test`, which runs a selection there.
## make test-pico: the whole device suite on the RPI_PICO firmware in the RP2040 emulator
test-pico: deps
	@$(MAKE) --no-print-directory firmware-real BOARD=RPI_PICO
	TFLM_PICO=all TFLM_MODELS=$(MODELS) TFLM_BUILD=$(BUILD) $(PY) -m pytest -q tests -k RPI_PICO

# The whole device suite on the real ESP32_GENERIC firmware on QEMU's esp32
# machine; `make test` runs a selection there (tests/conftest.py).
## make test-esp32: the whole device suite on the ESP32_GENERIC firmware in QEMU
test-esp32: deps
	@$(MAKE) --no-print-directory firmware-real BOARD=ESP32_GENERIC
	TFLM_ESP32=all TFLM_MODELS=$(MODELS) TFLM_BUILD=$(BUILD) $(PY) -m pytest -q tests -k ESP32_GENERIC

# The engine alone, on the host, under AddressSanitizer and UBSan.
## make test-engine: the engine's C tests and a fuzz slice on the host under ASan/UBSan, built by gcc, then by clang
test-engine: venv
	$(MAKE) -C tests/engine BUILD=$(BUILD)/engine MODELS=$(MODELS) PY=$(abspath $(PY))
	@# Again built by clang, whose UBSan also stops at an offset added to a null pointer.
	$(MAKE) -C tests/engine BUILD=$(BUILD)/engine-clang GENERATED=$(BUILD)/engine/generated CC=clang MODELS=$(MODELS) \
		PY=$(abspath $(PY))

# engine/fmath*.c against glibc over every float input (make test takes
# every 61st): after a change to them.
## make test-fmath: engine/fmath*.c against glibc over every float input
test-fmath:
	@$(MAKE) --no-print-directory -C tests/engine BUILD=$(BUILD)/engine fmath

# Reliability (docs/reliability.md): the engine's fuzzer over every shared
# model, generated models and offline plans (FUZZ_N cases in all, FUZZ_JOBS
# processes), the host CLI over mutated models, the binding's API with
# random arguments; figures written into docs/reliability.md.
FUZZ_N ?= 1000000
FUZZ_SEED ?= 2
FUZZ_JOBS ?= 2
FUZZ_CLI_N ?= 200
FUZZ_API_N ?= 20000
# Calls of the API fuzz on the sanitized unix port (make test-attacks-asan).
FUZZ_API_ASAN_N ?= 4000
# A UTC time (HH:MM) to stop at, counting the cases completed by then.
FUZZ_DEADLINE ?=

## make fuzz [FUZZ_N=1000000 FUZZ_JOBS=2]: mutated models through the engine, the CLI and the API (docs/reliability.md)
fuzz: venv
	@$(MAKE) --no-print-directory -C tests/engine BUILD=$(BUILD)/engine MODELS=$(MODELS) PY=$(abspath $(PY)) -j$(JOBS) binaries generated
	@mkdir -p $(BUILD)/fuzz && cp $(BUILD)/engine/fuzz_model $(BUILD)/fuzz/fuzz_model  # the run's own copy
	nice $(PY) tests/engine/fuzz.py --binary $(BUILD)/fuzz/fuzz_model --models $(MODELS) \
		--generated $(BUILD)/engine/generated --work $(BUILD)/fuzz -n $(FUZZ_N) --seed $(FUZZ_SEED) \
		--jobs $(FUZZ_JOBS) --doc docs/reliability.md $(if $(FUZZ_DEADLINE),--deadline $(FUZZ_DEADLINE))
	TFLM_MODELS=$(MODELS) nice $(PY) tests/cli_fuzz.py $(FUZZ_CLI_N) --doc docs/reliability.md
	@$(MAKE) --no-print-directory unix
	TFLM_BUILD=$(BUILD) nice $(PY) tests/api_fuzz.py $(FUZZ_API_N) $(FUZZ_SEED) --doc docs/reliability.md
	@# The same calls on tflm.mpy and the stock unix port (its calls into MicroPython go through natmod.h).
	@$(MAKE) --no-print-directory unix-stock natmod ARCH=x64
	MICROPYPATH=$(BUILD)/natmod/x64 TFLM_UNIX_BINARY=$(BUILD)/unix-stock/micropython TFLM_BUILD=$(BUILD) \
		nice $(PY) tests/api_fuzz.py $(FUZZ_API_N) $(FUZZ_SEED)
	nice $(PY) tests/slow_spots.py --doc docs/reliability.md

# 100,000 invokes of a stateless and a stateful model on one QEMU board (and
# on the emulated Pico with SOAK_PICO=1), 500 interpreters created and
# dropped; outputs and free heap checked (tests/soak.py), figures written
# into docs/reliability.md.
SOAK_BOARD ?= NETDUINO2
SOAK_INVOKES ?= 100000
SOAK_INTERPRETERS ?= 500
SOAK_PICO_INVOKES ?= $(SOAK_INVOKES)

## make soak [SOAK_BOARD= SOAK_PICO=1]: 100,000 invokes and 500 interpreters on an emulated board
soak: venv
	@$(MAKE) --no-print-directory firmware BOARD=$(SOAK_BOARD)
	TFLM_BUILD=$(BUILD) nice $(PY) tests/soak.py --target $(SOAK_BOARD) --invokes $(SOAK_INVOKES) \
		--interpreters $(SOAK_INTERPRETERS) --models $(MODELS) --doc docs/reliability.md
ifneq ($(SOAK_PICO),)
	@$(MAKE) --no-print-directory firmware-real BOARD=RPI_PICO
	TFLM_BUILD=$(BUILD) nice $(PY) tests/soak.py --target RPI_PICO --invokes $(SOAK_PICO_INVOKES) \
		--interpreters $(SOAK_INTERPRETERS) --models $(MODELS) --doc docs/reliability.md
endif

# Models from TensorFlow's own converter (tests/converter): common small
# architectures, float32 and int8, run here and on TFLM's reference with the
# same inputs; docs/converter.md gets the verdicts. tensorflow-cpu goes into a
# venv of its own (about 600 MB), never into .venv nor make test.
TF_VENV := $(BUILD)/tf-venv
TF_VERSION ?= 2.21.0

$(TF_VENV)/.installed:
	python3 -m venv $(TF_VENV)
	$(TF_VENV)/bin/pip install -q --upgrade pip
	$(TF_VENV)/bin/pip install -q tensorflow-cpu==$(TF_VERSION)
	touch $@

## make converter-check: architectures converted by TensorFlow's converter, here vs TFLM (docs/converter.md)
converter-check: venv $(TF_VENV)/.installed
	@rm -rf $(BUILD)/converter && mkdir -p $(BUILD)/converter
	nice $(TF_VENV)/bin/python tests/converter/architectures.py $(BUILD)/converter 2>&1 \
		| grep --line-buffered -E "^(wrote|.* FAILED|.*: the converter's process)" | tee $(BUILD)/converter/convert.log
	nice $(PY) tests/converter/report.py $(BUILD)/converter --log $(BUILD)/converter/convert.log \
		--tflite-python $(TF_VENV)/bin/python --out docs/converter.md

## make clean: the builds of the module (unix, boards, engine), not the SDKs or MicroPython
clean:
	rm -rf $(BUILD)/unix $(addprefix $(BUILD)/,$(QEMU_BOARDS) $(REAL_BOARDS)) $(BUILD)/engine $(BUILD)/compile-check

## make distclean: build/ and .venv
distclean:
	rm -rf $(BUILD) $(VENV)
