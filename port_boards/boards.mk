# Real boards and compile checks, included by the top-level Makefile (which
# defines TOP, BUILD, MPY_DIR, MPY_CROSS, SDK, BOARD, JOBS, TFLM_OPS, TFLM_TYPES,
# TFLM_PLANNERS, PLAN, FW_BUILD and the apt-deps and firmware rules).
#
#   make deps-boards BOARD=RPI_PICO|PYBV11
#       the port's SDKs in MPY_DIR/lib: extracted from the offline archives
#       in ../shared/sdk (SDK=...) when they are there, else `git submodule`
#       in a MicroPython git clone (needs GitHub); picotool for the RP2040,
#       built once from its archive.
#   make firmware BOARD=RPI_PICO|ESP32_GENERIC|PYBV11 [MPY_DIR=<1.25 checkout>]
#       MicroPython 1.25 with the tflm module for a real board (rule
#       firmware-real), in build/<BOARD>[-cfg-<hash>], then checked for fit
#       (firmware text in its region, ROMFS region free, heap for the
#       largest shared model's arena).
#   make real-firmware   the real boards `make test` builds (TESTED_REAL_BOARDS)
#   make boards-report   docs/boards.md's figures, from the built firmware, and
#       the README's board table, from the board files
#   make pico-emulator   rp2040js and the RP2040 bootrom in build/rp2040js
#   make compile-check
#       compiles all of the module's C (engine, kernels, binding) with
#       -Werror for the real boards' CPUs: Cortex-M0+ (RP2040), Cortex-M4F
#       (STM32F4), Cortex-M7 (STM32F7/H7), RV32IMC (ESP32-C3 class), Xtensa
#       (lx106: the ESP8266's call0 core; the ESP32's LX6 with the offline
#       kit's compiler), and once with only some kernels; prints the
#       module's size per CPU.
#
# Usable before the top-level Makefile includes it:
#   make -f Makefile -f port_boards/boards.mk compile-check

ifndef TFLM_BOARDS_MK
TFLM_BOARDS_MK := $(abspath $(lastword $(MAKEFILE_LIST)))

ifndef TOP
$(error port_boards/boards.mk goes with the top-level Makefile: make -f Makefile -f port_boards/boards.mk TARGET)
endif

# Recursive make that knows this file's targets, whether or not the
# top-level Makefile includes it.
TFLM_TOP_MAKEFILE := $(abspath $(firstword $(MAKEFILE_LIST)))
BOARDS_MAKE = $(MAKE) --no-print-directory -f $(TFLM_TOP_MAKEFILE) -f $(TFLM_BOARDS_MK)

.PHONY: firmware-real firmware-stock-real real-boards-check deps-boards picotool pico-emulator real-firmware boards-report \
	compile-check compile-check-objs compile-check-deps compile-check-genhdr compile-check-report

# ---------------------------------------------------------------------------
# Real boards

# REAL_BOARDS, TESTED_REAL_BOARDS (the real boards `make test` builds:
# ESP32_GENERIC from the offline ESP-IDF of ../shared/sdk/esp32, or your own
# with IDF_PATH set; PYBV11_QEMU, the pyboard firmware's variant that runs on
# QEMU's STM32F405) and each one's port, REAL_PORT_<BOARD>: set by the
# top-level Makefile from port_boards/<BOARD>/board.json.
REAL_PORT = $(REAL_PORT_$(BOARD))

# The offline SDKs (submodules at MicroPython 1.25.0's commits, picotool,
# the RP2040 bootrom): ../shared/sdk, see its SOURCES.md.
SDK ?= $(abspath $(TOP)/../shared/sdk)

# ESP32_GENERIC (the esp32 port)
#
# With IDF_PATH set (your own ESP-IDF v5.2 to v5.4, its export.sh sourced):
# the full ESP32_GENERIC board, Wi-Fi and Bluetooth included, built with
# that ESP-IDF's tools. Without it, from the offline copies of
# ../shared/sdk/esp32 (its SOURCES.md): the xtensa-esp32-elf toolchain,
# ESP-IDF v5.2.2 trimmed to the ESP32, MicroPython's esp32 extras (mdns,
# berkeley-db) and QEMU with Espressif's esp32 machine, extracted once into
# build/esp32-sdk; the board's NORADIO variant (no radio libraries: they
# are not in the offline copy), idf.py running with the project's .venv,
# where `make deps` installs ESP-IDF's Python requirements. The build
# folder (build/ESP32_GENERIC) is kept: an unchanged module rebuilds in
# seconds.
ESP32_SDK := $(SDK)/esp32
ESP32_DIR := $(BUILD)/esp32-sdk
ESP32_IDF_VERSION := v5.2.2
ESP32_ARCHIVES := xtensa-esp32-elf-gcc12.2.0-newlib4.1.0-x86_64-linux.tar.xz esp-idf-$(ESP32_IDF_VERSION)-esp32-trim.tar.xz \
	qemu-esp32-esp-develop-20220919-x86_64.tar.xz micropython-1.25.0-esp32-extras.tar.xz
ESP32_KIT := $(if $(wildcard $(ESP32_SDK)/esp-idf-$(ESP32_IDF_VERSION)-esp32-trim.tar.xz),1)
ESP32_OFFLINE := $(if $(IDF_PATH),,$(ESP32_KIT))
ESP32_STAMP := $(ESP32_DIR)/.extracted
ESP32_REQUIREMENTS := $(TOP)/port_boards/ESP32_GENERIC/requirements-idf.txt
ESP32_REQUIREMENTS_STAMP := $(VENV)/.esp-idf-requirements
# ninja for ESP-IDF's CMake; the toolchain's and QEMU's shared libraries
# (SOURCES.md: runtime packages on Debian 12).
ESP32_APT_PACKAGES := cmake ninja-build libmpc3 libmpfr6 libgmp10 libisl23 libzstd1 libglib2.0-0 libpixman-1-0 \
	libgcrypt20 libslirp0
ifneq ($(ESP32_OFFLINE),)
ESP32_ENV = IDF_PATH=$(ESP32_DIR)/esp-idf IDF_PYTHON_ENV_PATH=$(VENV) IDF_PYTHON_CHECK_CONSTRAINTS=no \
	IDF_COMPONENT_MANAGER=0 PATH="$(VENV)/bin:$(ESP32_DIR)/xt/bin:$(ESP32_DIR)/esp-idf/tools:$$PATH"
ESP32_VARIANT := BOARD_VARIANT=NORADIO
ESP32_IDF_DEFS := -D TFLM_ESP32_MDNS_INCLUDE=$(ESP32_DIR)/extras/ports/esp32/components/mdns/include
ESP32_IDF_ID = offline NORADIO $(ESP32_DIR) $(shell cat $(ESP32_SDK)/SHA256SUMS 2>/dev/null | md5sum | cut -c1-16) $(ESP32_BOARD_ID)
else
ESP32_ENV :=
ESP32_VARIANT :=
ESP32_IDF_DEFS :=
ESP32_IDF_ID = $(IDF_PATH) $(ESP32_BOARD_ID)
endif
# The board's settings: ESP-IDF takes SDKCONFIG_DEFAULTS only when it writes
# a build folder's sdkconfig, so a change to them starts the folder afresh.
ESP32_BOARD_ID = $(shell cat $(TOP)/port_boards/ESP32_GENERIC/*.cmake $(TOP)/port_boards/ESP32_GENERIC/sdkconfig.* | md5sum | cut -c1-16)

# The module's build settings as CMake definitions (lists are ;-separated).
tflm_empty :=
tflm_space := $(tflm_empty) $(tflm_empty)
tflm_cmake_list = $(subst $(tflm_space),;,$(strip $(1)))
TFLM_CMAKE_DEFS = $(if $(strip $(TFLM_OPS)),"-DTFLM_OPS=$(call tflm_cmake_list,$(TFLM_OPS))") \
	$(if $(strip $(TFLM_TYPES)),"-DTFLM_TYPES=$(call tflm_cmake_list,$(TFLM_TYPES))") \
	$(if $(strip $(TFLM_PLANNERS)),"-DTFLM_PLANNERS=$(call tflm_cmake_list,$(TFLM_PLANNERS))") \
	$(if $(strip $(TFLM_PATCH)),"-DTFLM_PATCH=$(strip $(TFLM_PATCH))") \
	$(if $(strip $(PLAN)),"-DTFLM_PLAN=$(abspath $(PLAN))")
TFLM_IDF_DEFS = $(if $(strip $(TFLM_OPS)),-D "TFLM_OPS=$(call tflm_cmake_list,$(TFLM_OPS))") \
	$(if $(strip $(TFLM_TYPES)),-D "TFLM_TYPES=$(call tflm_cmake_list,$(TFLM_TYPES))") \
	$(if $(strip $(TFLM_PLANNERS)),-D "TFLM_PLANNERS=$(call tflm_cmake_list,$(TFLM_PLANNERS))") \
	$(if $(strip $(TFLM_PATCH)),-D "TFLM_PATCH=$(strip $(TFLM_PATCH))") \
	$(if $(strip $(PLAN)),-D "TFLM_PLAN=$(abspath $(PLAN))")

MPY_CLONE_DIR := \$$HOME/micropython-1.25
MPY_DEFAULT_DIR = $(BUILD)/micropython-$(MPY_VERSION)

# How to get what a port needs, one echo per command.
SETUP_CLONE := echo "  git clone --branch v1.25.0 https://github.com/micropython/micropython.git $(MPY_CLONE_DIR)";
SETUP_rp2 := $(SETUP_CLONE) \
	echo "  make -C $(MPY_CLONE_DIR)/ports/rp2 submodules"; \
	echo "  sudo apt-get install cmake g++ python3 gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib";
SETUP_stm32 := $(SETUP_CLONE) \
	echo "  make -C $(MPY_CLONE_DIR)/ports/stm32 BOARD=PYBV11 submodules"; \
	echo "  sudo apt-get install python3 gcc-arm-none-eabi libnewlib-arm-none-eabi";
SETUP_esp32 := $(SETUP_CLONE) \
	echo "  git clone --branch v5.2.2 --recursive https://github.com/espressif/esp-idf.git ~/esp-idf"; \
	echo "  ~/esp-idf/install.sh esp32"; \
	echo "  . ~/esp-idf/export.sh   (in every new shell: it puts idf.py on PATH)"; \
	echo "  make -C $(MPY_CLONE_DIR)/ports/esp32 submodules";

# Prints the problem ($(1)) and the commands that fix it, then fails.
real_board_missing = { echo "make firmware BOARD=$(BOARD): $(1)"; echo; \
	echo "To build the $(BOARD) firmware (port $(REAL_PORT) of MicroPython 1.25):"; $(SETUP_$(REAL_PORT)) \
	echo "  make firmware BOARD=$(BOARD) MPY_DIR=$(MPY_CLONE_DIR)"; echo; \
	echo "The board guide: docs/boards.md"; } >&2; exit 1

# What each port needs from MPY_DIR (a submodule is there when its folder is
# not empty), the offline archive of each, and the tools on PATH.
has_dir = [ -n "$$(ls -A $(1) 2>/dev/null)" ]
SUBMODULES_rp2 := lib/pico-sdk lib/tinyusb lib/mbedtls lib/micropython-lib
SUBMODULES_stm32 := lib/stm32lib lib/libhydrogen lib/micropython-lib
SUBMODULES_esp32 := lib/berkeley-db-1.xx lib/micropython-lib
SDK_ARCHIVE_lib/berkeley-db-1.xx := esp32/micropython-1.25.0-esp32-extras.tar.xz
SDK_ARCHIVE_lib/pico-sdk := pico-sdk-2.1.1.tar.xz
SDK_ARCHIVE_lib/tinyusb := tinyusb-0.17.0.tar.xz
SDK_ARCHIVE_lib/mbedtls := mbedtls-3.6.2.tar.xz
SDK_ARCHIVE_lib/micropython-lib := micropython-lib.tar.xz
SDK_ARCHIVE_lib/stm32lib := stm32lib-f4.tar.xz
SDK_ARCHIVE_lib/libhydrogen := libhydrogen.tar.xz
TOOLS_rp2 := cmake c++ arm-none-eabi-gcc arm-none-eabi-g++ arm-none-eabi-nm python3
TOOLS_stm32 := arm-none-eabi-gcc python3
TOOLS_esp32 = $(if $(ESP32_OFFLINE),cmake ninja python3,idf.py cmake python3)
# Debian packages for the rp2 and stm32 builds (picotool is C++ built with
# cmake; the pico-sdk's C++ runtime needs the newlib libstdc++).
BOARDS_APT_PACKAGES := cmake g++ gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib

# picotool 2.1.1, which pico-sdk 2.1.1 wants for the .uf2: built once from
# its archive (no USB support: only ELF to UF2), else the SDK finds an
# installed one or clones it from GitHub at configure time.
PICOTOOL_ARCHIVE := $(SDK)/picotool-2.1.1.tar.xz
PICOTOOL_DIR := $(BUILD)/picotool
PICOTOOL := $(PICOTOOL_DIR)/picotool/picotool
PICOTOOL_CMAKE = $(if $(wildcard $(PICOTOOL_ARCHIVE)),-Dpicotool_DIR=$(PICOTOOL_DIR)/picotool)

# Gets the port's submodules into MPY_DIR (sdk_deps.sh says from where), the
# packages, and for the rp2 port picotool; stops with the setup commands
# when something is missing.
## make deps-boards BOARD=...: a real board's SDKs (from ../shared/sdk) and picotool
deps-boards: | $(BUILD)
	@case " $(REAL_BOARDS) " in *" $(BOARD) "*) ;; \
		*) echo "BOARD=$(BOARD) is not a real board; real boards: $(REAL_BOARDS)" >&2; exit 1;; esac
	@if [ "$(MPY_DIR)" = "$(MPY_DEFAULT_DIR)" ] && [ -n "$(wildcard $(SDK)/*.tar.xz)" ]; then \
		$(BOARDS_MAKE) micropython; fi
	@if ! grep -Eqs '^#define MICROPY_VERSION_MINOR \(?25\)?$$' $(MPY_DIR)/py/mpconfig.h; then \
		$(call real_board_missing,MPY_DIR=$(MPY_DIR) holds no MicroPython 1.25 source); fi
	@bash $(TOP)/port_boards/sdk_deps.sh $(MPY_DIR) $(SDK) \
		$(foreach m,$(SUBMODULES_$(REAL_PORT)),$(m)=$(SDK_ARCHIVE_$(m))) || true
	@for m in $(SUBMODULES_$(REAL_PORT)); do \
		if ! $(call has_dir,$(MPY_DIR)/$$m); then \
			$(call real_board_missing,MPY_DIR=$(MPY_DIR) has no $$m: the $(REAL_PORT) port needs a MicroPython 1.25 git checkout with its submodules$(if $(filter $(MPY_DEFAULT_DIR),$(MPY_DIR)), (the source in build/ is Debian's source package: it has none)) or the SDK archives of ../shared/sdk (SDK=$(SDK))); \
		fi; done
ifneq ($(filter rp2 stm32,$(REAL_PORT)),)
	@if [ "$(TFLM_NO_APT)" != 1 ]; then $(BOARDS_MAKE) apt-deps APT_PACKAGES="$(BOARDS_APT_PACKAGES)"; fi
endif
ifeq ($(REAL_PORT),rp2)
	@$(BOARDS_MAKE) picotool
endif
ifeq ($(REAL_PORT)$(ESP32_KIT),esp321)
	@# The kit also when your own ESP-IDF builds: its QEMU runs the firmware in tests.
	@if [ "$(TFLM_NO_APT)" != 1 ]; then $(BOARDS_MAKE) apt-deps APT_PACKAGES="$(ESP32_APT_PACKAGES)"; fi
	@$(BOARDS_MAKE) esp32-sdk
endif

$(BUILD):
	@mkdir -p $@

picotool:
	@if [ -f $(PICOTOOL_ARCHIVE) ]; then $(BOARDS_MAKE) $(PICOTOOL); \
	else echo "picotool: no $(PICOTOOL_ARCHIVE); the pico-sdk looks for an installed picotool 2.1.x, else clones it (network)"; fi

$(PICOTOOL): $(PICOTOOL_ARCHIVE)
	@echo "picotool: building 2.1.1 from $(PICOTOOL_ARCHIVE) into $(PICOTOOL_DIR)"
	@rm -rf $(BUILD)/picotool-src $(BUILD)/picotool-build $(PICOTOOL_DIR)
	@mkdir -p $(BUILD)/picotool-src && tar -xJf $< -C $(BUILD)/picotool-src
	@cmake -S $(BUILD)/picotool-src/picotool -B $(BUILD)/picotool-build -DCMAKE_BUILD_TYPE=Release \
		-DPICO_SDK_PATH=$(MPY_DIR)/lib/pico-sdk -DPICOTOOL_NO_LIBUSB=1 -DPICOTOOL_FLAT_INSTALL=1 \
		-DCMAKE_INSTALL_PREFIX=$(PICOTOOL_DIR) > $(BUILD)/picotool-build.log 2>&1 \
		&& $(MAKE) -C $(BUILD)/picotool-build -j$(JOBS) install >> $(BUILD)/picotool-build.log 2>&1 \
		|| { tail -30 $(BUILD)/picotool-build.log; echo "picotool: build failed ($(BUILD)/picotool-build.log)" >&2; exit 1; }
	@rm -rf $(BUILD)/picotool-src $(BUILD)/picotool-build
	@$@ version

# Everything a real board's build needs, checked (and fetched) before it starts.
real-boards-check: deps-boards
	@for t in $(TOOLS_$(REAL_PORT)); do \
		if ! command -v $$t > /dev/null; then \
			$(call real_board_missing,$$t is not on PATH$(if $(filter esp32,$(REAL_PORT)), (ESP-IDF v5.2 to v5.4 must be installed and its export.sh sourced in this shell))); \
		fi; done

# The module's C files: when the list changes, the CMake ports must be
# configured again (micropython.cmake lists them when CMake runs).
TFLM_SOURCE_LIST = $(shell cd $(TOP)/micropython_mod && ls engine/*.c kernels/*.c binding/*.c | md5sum | cut -c1-16)

# The frozen modules' C file lists the names (qstrs) the firmware lacks;
# the ports do not make it again when the module adds names, so it is
# removed when the binding changed since it was made.
#
# The ports build mpy-cross themselves with `make -C mpy-cross`, which
# inherits BUILD= from this make's command line and builds it in the wrong
# place. They are given the project's own (MICROPY_MPYCROSS), so no port
# builds one and nothing of the host's lands in a board's folder.
firmware-real: real-boards-check
	@$(BOARDS_MAKE) $(MPY_CROSS)
	@f=$(FW_BUILD)/frozen_content.c; if [ -f $$f ] && [ -n "$$(find $(TOP)/micropython_mod/binding -newer $$f -print -quit)" ]; then \
		echo "the module's names (qstrs) may have changed: frozen content made again"; rm -f $$f; fi
ifeq ($(REAL_PORT),rp2)
	@if [ -f $(FW_BUILD)/CMakeCache.txt ] && [ "$$(cat $(FW_BUILD)/.tflm-sources 2>/dev/null)" != "$(TFLM_SOURCE_LIST)" ]; then \
		echo "the module's source files changed: configuring $(FW_BUILD) again"; \
		MICROPY_MPYCROSS=$(MPY_CROSS) cmake $(FW_BUILD) > /dev/null; fi
	MICROPY_MPYCROSS=$(MPY_CROSS) CMAKE_ARGS='$(TFLM_CMAKE_DEFS) $(PICOTOOL_CMAKE)' \
		$(MAKE) -C $(MPY_DIR)/ports/rp2 BOARD=$(BOARD) \
		BOARD_DIR=$(TOP)/port_boards/$(BOARD) BUILD=$(FW_BUILD) \
		USER_C_MODULES=$(TOP)/micropython_mod/micropython.cmake -j$(JOBS)
	@echo "$(TFLM_SOURCE_LIST)" > $(FW_BUILD)/.tflm-sources
	@PYTHONPATH=$(TOP)/host_tools python3 -m tflm_host.boards check $(BOARD) $(FW_BUILD)
	@echo "firmware: $(FW_BUILD)/firmware.uf2"
endif
ifeq ($(REAL_PORT),esp32)
	@# ESP-IDF's build scripts import its Python requirements (make deps
	@# installs them too; a build without it would stop at the first import).
	@$(BOARDS_MAKE) esp32-python
	@# A folder configured by another ESP-IDF (or the other variant) keeps
	@# that one's sdkconfig: start afresh.
	@if [ -d $(FW_BUILD) ] && [ "$$(cat $(FW_BUILD)/.tflm-idf 2>/dev/null)" != "$(ESP32_IDF_ID)" ]; then \
		echo "$(FW_BUILD) was configured with another ESP-IDF or board variant: building it afresh"; \
		rm -rf $(FW_BUILD); fi
	@if [ -f $(FW_BUILD)/CMakeCache.txt ] && [ "$$(cat $(FW_BUILD)/.tflm-sources 2>/dev/null)" != "$(TFLM_SOURCE_LIST)" ]; then \
		echo "the module's source files changed: configuring $(FW_BUILD) again"; \
		$(ESP32_ENV) MICROPY_MPYCROSS=$(MPY_CROSS) cmake $(FW_BUILD) > /dev/null; fi
	@mkdir -p $(FW_BUILD) && echo "$(ESP32_IDF_ID)" > $(FW_BUILD)/.tflm-idf
	$(ESP32_ENV) MICROPY_MPYCROSS=$(MPY_CROSS) IDFPY_FLAGS='$(TFLM_IDF_DEFS) $(ESP32_IDF_DEFS)' \
		$(MAKE) -C $(MPY_DIR)/ports/esp32 BOARD=$(BOARD) $(ESP32_VARIANT) \
		BOARD_DIR=$(TOP)/port_boards/$(BOARD) BUILD=$(FW_BUILD) \
		USER_C_MODULES=$(TOP)/micropython_mod/micropython.cmake
	@echo "$(TFLM_SOURCE_LIST)" > $(FW_BUILD)/.tflm-sources
	@# The whole 4 MiB flash as one image (bootloader, partition table, app;
	@# erased elsewhere): what QEMU's esp32 machine boots, or esptool writes at 0.
	cd $(FW_BUILD) && $(ESP32_ENV) esptool.py --chip esp32 merge_bin --fill-flash-size 4MB -o flash.bin @flash_args \
		> /dev/null
	@PYTHONPATH=$(TOP)/host_tools python3 -m tflm_host.boards check $(BOARD) $(FW_BUILD)
	@echo "firmware: $(FW_BUILD)/firmware.bin (write it at 0x1000; $(FW_BUILD)/flash.bin is the whole flash, at 0)"
endif
ifeq ($(REAL_PORT),stm32)
	@# The port links firmware.elf again only when an object changed, not
	@# when the flash map did (the board's .ld and makefile), and compiles
	@# nothing again when flags did (the makefile's TFLM_KERNEL_OPT_ONLY).
	@f=$(FW_BUILD)/firmware.elf; if [ -f $$f ] && [ -n "$$(find $(TOP)/port_boards/$(BOARD) $(TOP)/port_boards/PYBV11 \
		-newer $$f -print -quit)" ]; then echo "the board's files changed: compiling the module and linking $$f again"; \
		rm -rf $$f $(FW_BUILD)/micropython_mod; fi
	$(MAKE) -C $(MPY_DIR)/ports/stm32 BOARD=$(BOARD) BOARD_DIR=$(TOP)/port_boards/$(BOARD) \
		BUILD=$(FW_BUILD) MICROPY_MPYCROSS=$(MPY_CROSS) USER_C_MODULES=$(TOP) TFLM_OPS="$(TFLM_OPS)" \
		TFLM_TYPES="$(TFLM_TYPES)" TFLM_PLANNERS="$(TFLM_PLANNERS)" TFLM_PATCH="$(TFLM_PATCH)" \
		TFLM_PLAN="$(if $(PLAN),$(abspath $(PLAN)))" -j$(JOBS)
	@PYTHONPATH=$(TOP)/host_tools python3 -m tflm_host.boards check $(BOARD) $(FW_BUILD)
	@echo "firmware: $(FW_BUILD)/firmware.dfu (also firmware.hex, firmware0.bin at 0x08000000, firmware1.bin at the FLASH_TEXT region's start above)"
endif

# The stock firmware of a real board, to load tflm.mpy on (make
# firmware-stock, make natmod-stock): MicroPython 1.25.0's own board
# definition of that name, unchanged and without the module, in
# build/<BOARD>-stock. The rp2 port's RPI_PICO: littlefs at the end of flash,
# no ROMFS.
firmware-stock-real: real-boards-check
	@$(BOARDS_MAKE) $(MPY_CROSS)
ifeq ($(REAL_PORT),rp2)
	MICROPY_MPYCROSS=$(MPY_CROSS) CMAKE_ARGS='$(PICOTOOL_CMAKE)' \
		$(MAKE) -C $(MPY_DIR)/ports/rp2 BOARD=$(BOARD) BUILD=$(BUILD)/$(BOARD)-stock -j$(JOBS)
	@echo "firmware: $(BUILD)/$(BOARD)-stock/firmware.uf2 (stock MicroPython)"
else
	@echo "firmware-stock: no stock build here for the $(REAL_PORT) port's $(BOARD)" >&2; exit 1
endif

# ---------------------------------------------------------------------------
# ESP32: the offline kit and ESP-IDF's Python requirements (variables above)

.PHONY: esp32-sdk esp32-python

# The offline ESP32 kit, extracted once (again when an archive changes).
esp32-sdk: $(ESP32_STAMP) $(ESP32_DIR)/esp-idf/version.txt

# ESP-IDF's version, which its CMake otherwise takes from `git describe` in
# IDF_PATH: the extracted copy lies inside this checkout, so it would be the
# project's commit, compiled into every object as IDF_VER, and every commit
# (or edit: "-dirty") would rebuild all 1,100 files of the build folder.
$(ESP32_DIR)/esp-idf/version.txt: $(ESP32_STAMP)
	@echo $(ESP32_IDF_VERSION) > $@

$(ESP32_STAMP): $(addprefix $(ESP32_SDK)/,$(ESP32_ARCHIVES))
	@echo "esp32: extracting the toolchain, ESP-IDF, QEMU and MicroPython's esp32 extras from $(ESP32_SDK) into $(ESP32_DIR)"
	@cd $(ESP32_SDK) && sha256sum --quiet -c --ignore-missing SHA256SUMS
	@rm -rf $(ESP32_DIR) && mkdir -p $(ESP32_DIR)/extras
	@for a in $(filter-out micropython-%,$(ESP32_ARCHIVES)); do tar -xJf $(ESP32_SDK)/$$a -C $(ESP32_DIR) || exit 1; done
	@tar -xJf $(ESP32_SDK)/micropython-1.25.0-esp32-extras.tar.xz -C $(ESP32_DIR)/extras
	@touch $@

# ESP-IDF's Python requirements in the project's .venv (part of make deps).
esp32-python: $(ESP32_REQUIREMENTS_STAMP)

$(ESP32_REQUIREMENTS_STAMP): $(ESP32_REQUIREMENTS) $(VENV_STAMP)
	$(VENV)/bin/pip install -q -r $(ESP32_REQUIREMENTS)
	@touch $@

# The real boards `make test` builds and runs.
## make real-firmware: the real boards' firmware that make test builds
real-firmware:
	@for b in $(TESTED_REAL_BOARDS); do $(BOARDS_MAKE) firmware-real BOARD=$$b || exit 1; done

# docs/boards.md's figures: the built firmware measured, the RPI_PICO
# firmware run in the RP2040 emulator, the ESP32_GENERIC one on QEMU; and
# the README's board table, from the board files in port_boards/.
## make boards-report: docs/boards.md's figures and the README's board table
boards-report: real-firmware pico-emulator qemu-firmware
	TFLM_BUILD=$(BUILD) $(PY) -m tflm_dev.boards_report report --models $(MODELS) --pico --esp32 --out docs/boards.md \
		--readme README.md

# The RP2040 emulator for the RPI_PICO firmware: rp2040js at the version
# host_tools/tflm_host/pico/package-lock.json pins, and the RP2040's B1
# bootrom from ../shared/sdk (checked against its published hash).
EMU_DIR := $(BUILD)/rp2040js
EMU_SRC := $(TOP)/host_tools/tflm_host/pico
EMU_STAMP := $(EMU_DIR)/.installed
RP2040_BOOTROM := $(SDK)/rp2040-bootrom-b1.bin
RP2040_BOOTROM_SHA256 := 90b31e108faedfa6bbcfcc33ba05dac61e645108cfbbdc385f8dafc71fde44ae

## make pico-emulator: rp2040js and the RP2040 bootrom in build/rp2040js
pico-emulator: $(EMU_STAMP)

$(EMU_STAMP): $(EMU_SRC)/package.json $(EMU_SRC)/package-lock.json
	@if ! command -v node > /dev/null || ! command -v npm > /dev/null; then \
		$(BOARDS_MAKE) apt-deps APT_PACKAGES="nodejs npm"; fi
	@test -f $(RP2040_BOOTROM) || { echo "no RP2040 bootrom at $(RP2040_BOOTROM) (SDK=...): the Pico emulator needs it" >&2; exit 1; }
	@echo "$(RP2040_BOOTROM_SHA256)  $(RP2040_BOOTROM)" | sha256sum -c --quiet \
		|| { echo "$(RP2040_BOOTROM) is not the RP2040 B1 bootrom" >&2; exit 1; }
	@mkdir -p $(EMU_DIR)
	cp $(EMU_SRC)/package.json $(EMU_SRC)/package-lock.json $(RP2040_BOOTROM) $(EMU_DIR)/
	cd $(EMU_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# ---------------------------------------------------------------------------
# Compile checks for the real boards' CPUs
#
# Every C file of the module is compiled (not linked) for each CPU with the
# flags its MicroPython port gives user modules, and -Werror. The binding
# needs MicroPython's headers and a port configuration: the qemu port's
# mpconfigport.h is used, with the generated headers (qstrs, module and root
# pointer lists) of the project's NETDUINO2 board, remade when the binding
# changes. That configuration exists without any SDK, and it sets
# what the binding's code depends on the same way as rp2, stm32 and esp32 do:
# 32-bit mp_int_t, object representation A, single-precision floats, the
# extra-features ROM level. It has no CPU code of its own (nothing of the
# port but its headers is compiled), and for the Cortex-M0+ it takes the
# qemu port's Cortex-M0 branch (QEMU_SOC_NRF51: no Thumb-2 emitter), as its
# MICROBIT board does.

CC_DIR := $(BUILD)/compile-check
CC_MOD := $(TOP)/micropython_mod
CC_GENHDR_BOARD := NETDUINO2
CC_GENHDR_DIR := $(CC_DIR)/genhdr-$(CC_GENHDR_BOARD)
CC_APT_PACKAGES := gcc-arm-none-eabi libnewlib-arm-none-eabi gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf \
	gcc-xtensa-lx106 picolibc-xtensa-lx106-elf

CC_SRCS = $(patsubst $(CC_MOD)/%,%,$(sort $(wildcard $(CC_MOD)/engine/*.c $(CC_MOD)/kernels/*.c $(CC_MOD)/binding/*.c)))

# The configuration with fewer kernels: TFLM_OPS if given, else those of
# person_detect.tflite (tflm-host ops), built for TFLM_TYPES if given, else
# for person_detect's types (so the kernels' code for the types left out is
# compiled out under -Werror too), and without patch-based stages unless
# TFLM_PATCH=1 (person_detect as it comes has none: tflm-host ops prints
# TFLM_PATCH=0 for it).
CHECK_OPS ?= $(or $(strip $(TFLM_OPS)),AVERAGE_POOL_2D CONV_2D DEPTHWISE_CONV_2D RESHAPE SOFTMAX)
CHECK_TYPES_DEFAULT := AVERAGE_POOL_2D:int8 CONV_2D:int32,int8 DEPTHWISE_CONV_2D:int32,int8 RESHAPE:int32,int8 SOFTMAX:int8
CHECK_TYPES ?= $(or $(strip $(TFLM_TYPES)),$(CHECK_TYPES_DEFAULT))
include $(TOP)/micropython_mod/tflm_types.mk
CC_CONFIGS ?= cortex-m0plus cortex-m4 cortex-m7 rv32imc xtensa $(if $(ESP32_KIT),xtensa-lx6) cortex-m4-ops

# Warnings of the make-based ports (stm32, qemu, ...) for user modules.
CC_WARN := -Wall -Wpointer-arith -Wdouble-promotion -Wfloat-conversion -Werror
CC_BASE = -ffp-contract=off -ffunction-sections -fdata-sections -DNDEBUG \
	-I$(CC_MOD) -I$(MPY_DIR) -I$(MPY_DIR)/ports/qemu -I$(CC_GENHDR_DIR)
TFLM_CHECK_PLANNERS = $(if $(strip $(TFLM_PLANNERS)),$(foreach p,GREEDY LINEAR OFFLINE,-DTFLM_PLANNER_$(p)=$(if $(filter $(p),$(shell echo $(TFLM_PLANNERS) | tr a-z A-Z)),1,0)))

# rp2 (RP2040), a CMake port: CMake's MinSizeRel (-Os), the kernels at -O2
# as micropython.cmake builds them, no ROM text compression (CMake ports
# have none).
CC_cortex-m0plus_CC := arm-none-eabi-gcc
CC_cortex-m0plus_SIZE := arm-none-eabi-size
CC_cortex-m0plus_FLAGS := -mcpu=cortex-m0plus -mthumb -mfloat-abi=soft -DQEMU_SOC_NRF51 -std=gnu99 -Os \
	$(CC_WARN) -DMICROPY_ROM_TEXT_COMPRESSION=0
CC_cortex-m0plus_KOPT := -O2
CC_cortex-m0plus_WHAT := RPI_PICO (rp2): RP2040, -Os, kernels -O2

# stm32 (F4: PYBV11): the port's CPU flags, -Os, ROM text compression, and
# -fsingle-precision-constant, which the module's objects turn off again
# (port_boards/PYBV11/mpconfigboard.mk: the engine's double constants must
# stay double); kernels at -O2 as micropython.mk builds them.
CC_STM32_FLAGS := -mthumb -Os $(CC_WARN) -std=gnu99 -DMICROPY_ROM_TEXT_COMPRESSION=1 \
	-fsingle-precision-constant -fno-single-precision-constant
CC_cortex-m4_CC := arm-none-eabi-gcc
CC_cortex-m4_SIZE := arm-none-eabi-size
CC_cortex-m4_FLAGS := -mcpu=cortex-m4 -mtune=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard -mfp16-format=ieee $(CC_STM32_FLAGS)
CC_cortex-m4_KOPT := -O2
CC_cortex-m4_WHAT := PYBV11 (stm32): STM32F405, -Os, kernels -O2

CC_cortex-m7_CC := arm-none-eabi-gcc
CC_cortex-m7_SIZE := arm-none-eabi-size
CC_cortex-m7_FLAGS := -mcpu=cortex-m7 -mtune=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard -mfp16-format=ieee $(CC_STM32_FLAGS)
CC_cortex-m7_KOPT := -O2
CC_cortex-m7_WHAT := stm32 F7/H7 boards, -Os, kernels -O2

# esp32 (ESP32-C3 class RISC-V core): ESP-IDF's C flags (gnu17, -Wall
# -Wextra less the warnings it turns off) and MicroPython's
# CONFIG_COMPILER_OPTIMIZATION_PERF (-O2); Debian's RISC-V GCC with picolibc
# for the C headers.
CC_rv32imc_CC := riscv64-unknown-elf-gcc
CC_rv32imc_SIZE := riscv64-unknown-elf-size
CC_rv32imc_FLAGS := -march=rv32imc -mabi=ilp32 --specs=picolibc.specs -std=gnu17 -O2 $(CC_WARN) \
	-Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-enum-conversion -Wno-missing-field-initializers \
	-Wno-clobbered -Wno-deprecated-declarations -DMICROPY_ROM_TEXT_COMPRESSION=0
CC_rv32imc_KOPT :=
CC_rv32imc_WHAT := ESP32-C3 class (esp32 port), -O2

# esp32 (ESP32: Xtensa LX6): no Xtensa-ESP32 compiler is packaged for
# Debian; its lx106 compiler (the ESP8266's core: same instruction set base,
# call0 ABI, no FPU) with picolibc compiles the module with ESP-IDF's flags
# (-mlongcalls as ESP-IDF builds Xtensa code), so Xtensa-specific warnings
# and type sizes are checked.
XTENSA_PICOLIBC_SPECS := /usr/lib/xtensa-lx106-elf/picolibc.specs
CC_xtensa_CC := xtensa-lx106-elf-gcc
CC_xtensa_SIZE := xtensa-lx106-elf-size
CC_xtensa_FLAGS := -mlongcalls --specs=$(XTENSA_PICOLIBC_SPECS) -std=gnu17 -O2 $(CC_WARN) \
	-Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-enum-conversion -Wno-missing-field-initializers \
	-Wno-clobbered -Wno-deprecated-declarations -DMICROPY_ROM_TEXT_COMPRESSION=0
CC_xtensa_KOPT :=
CC_xtensa_WHAT := ESP8266 class (call0 Xtensa): lx106 compiler, -O2

# The ESP32 itself (Xtensa LX6, windowed ABI: the kernels' TFLM_ARCH_XTENSA
# loops) with the offline kit's xtensa-esp32-elf compiler and its newlib,
# ESP-IDF's flags, when ../shared/sdk/esp32 is there.
CC_xtensa-lx6_CC := $(ESP32_DIR)/xt/bin/xtensa-esp32-elf-gcc
CC_xtensa-lx6_SIZE := $(ESP32_DIR)/xt/bin/xtensa-esp32-elf-size
CC_xtensa-lx6_FLAGS := -mlongcalls -std=gnu17 -O2 $(CC_WARN) \
	-Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-enum-conversion -Wno-missing-field-initializers \
	-Wno-clobbered -Wno-deprecated-declarations -DMICROPY_ROM_TEXT_COMPRESSION=0
CC_xtensa-lx6_KOPT :=
CC_xtensa-lx6_WHAT := ESP32_GENERIC (esp32 port): Xtensa LX6, xtensa-esp32-elf GCC 12.2, -O2

CC_cortex-m4-ops_CC := $(CC_cortex-m4_CC)
CC_cortex-m4-ops_SIZE := $(CC_cortex-m4_SIZE)
CC_cortex-m4-ops_FLAGS = $(CC_cortex-m4_FLAGS) -DTFLM_KERNELS_DEFAULT=0 $(foreach op,$(CHECK_OPS),-DTFLM_KERNEL_$(op)=1) \
	$(call tflm_types_cflags,$(CHECK_TYPES)) $(TFLM_CHECK_PLANNERS) -DTFLM_PATCH=$(CHECK_PATCH)
CHECK_PATCH = $(or $(strip $(TFLM_PATCH)),0)
CC_cortex-m4-ops_KOPT := $(CC_cortex-m4_KOPT)
CC_cortex-m4-ops_WHAT = PYBV11, only $(CHECK_OPS) for their types $(CHECK_TYPES)$(if $(strip $(TFLM_PLANNERS)), and the \
	$(TFLM_PLANNERS) planners)$(if $(filter 0,$(CHECK_PATCH)), without patch-based stages)

CC_OBJS = $(foreach c,$(CC_CONFIGS),$(addprefix $(CC_DIR)/$(c)/,$(CC_SRCS:.c=.o)))

# One set of rules per configuration. Objects depend on the file holding the
# configuration's flags, rewritten only when they change, and on the
# headers they include (-MMD).
define CC_CONFIG_RULES
$(CC_DIR)/$(1)/cflags: FORCE
	@mkdir -p $$(@D)
	@echo '$$(CC_$(1)_CC) $$(CC_$(1)_FLAGS) $$(CC_BASE) | $$(CC_$(1)_KOPT)' > $$@.new
	@cmp -s $$@.new $$@ && rm $$@.new || mv $$@.new $$@

$(CC_DIR)/$(1)/kernels/%.o: $(CC_MOD)/kernels/%.c $(CC_DIR)/$(1)/cflags
	@mkdir -p $$(@D)
	@echo "CC $(1) $$(patsubst $(CC_MOD)/%,%,$$<)"
	@$$(CC_$(1)_CC) $$(CC_$(1)_FLAGS) $$(CC_BASE) $$(CC_$(1)_KOPT) -MMD -MP -c $$< -o $$@

$(CC_DIR)/$(1)/%.o: $(CC_MOD)/%.c $(CC_DIR)/$(1)/cflags
	@mkdir -p $$(@D)
	@echo "CC $(1) $$(patsubst $(CC_MOD)/%,%,$$<)"
	@$$(CC_$(1)_CC) $$(CC_$(1)_FLAGS) $$(CC_BASE) -MMD -MP -c $$< -o $$@
endef
$(foreach c,$(CC_CONFIGS),$(eval $(call CC_CONFIG_RULES,$(c))))

.PHONY: FORCE
FORCE:

ifneq ($(filter compile-check-objs,$(MAKECMDGOALS)),)
-include $(wildcard $(CC_OBJS:.o=.d))
endif

compile-check-deps:
	@$(BOARDS_MAKE) apt-deps APT_PACKAGES="$(CC_APT_PACKAGES)"
	@if [ -n "$(filter xtensa-lx6,$(CC_CONFIGS))" ]; then $(BOARDS_MAKE) esp32-sdk; fi

# The generated headers the binding includes: those of the NETDUINO2 QEMU
# board's configuration, made in a folder of this check's own (the qstr and
# module lists only, no firmware); made again when the binding changes.
CC_GENHDR_FILES := qstrdefs.generated.h moduledefs.h root_pointers.h mpversion.h compressed.data.h
compile-check-genhdr: $(MPY_STAMP)
	@mkdir -p $(CC_DIR)
	@$(MAKE) -C $(MPY_DIR)/ports/qemu BOARD=$(CC_GENHDR_BOARD) BOARD_DIR=$(TOP)/port_boards/$(CC_GENHDR_BOARD) \
		BUILD=$(CC_GENHDR_DIR) USER_C_MODULES=$(TOP) FROZEN_MANIFEST= TFLM_OPS= TFLM_TYPES= TFLM_PLANNERS= TFLM_PATCH= TFLM_PLAN= \
		$(addprefix $(CC_GENHDR_DIR)/genhdr/,$(CC_GENHDR_FILES)) > $(CC_DIR)/genhdr.log 2>&1 \
		|| (cat $(CC_DIR)/genhdr.log; echo "compile-check: the generated headers of $(CC_GENHDR_BOARD) could not be made" >&2; exit 1)

compile-check-objs: $(CC_OBJS)

## make compile-check: the module compiled with -Werror for every board CPU, its size per CPU
compile-check:
	@mkdir -p $(CC_DIR)
	@$(BOARDS_MAKE) compile-check-deps
	@$(BOARDS_MAKE) compile-check-genhdr
	@$(BOARDS_MAKE) -j$(JOBS) compile-check-objs
	@$(BOARDS_MAKE) compile-check-report

# The module's size per configuration (text: code and read-only data), by
# part, from the objects of today's sources (old objects may linger):
# written to build/compile-check/sizes.md.
compile-check-report:
	@{ echo "| CPU | build | engine | kernels | binding | module text | data+bss |"; \
	echo "|---|---|---|---|---|---|---|"; \
	$(foreach c,$(CC_CONFIGS),printf '| %s | %s |' '$(c)' '$(CC_$(c)_WHAT)'; \
		$(foreach part,engine kernels binding,\
			$(CC_$(c)_SIZE) $(filter $(CC_DIR)/$(c)/$(part)/%,$(addprefix $(CC_DIR)/$(c)/,$(CC_SRCS:.c=.o))) \
				| awk '$(CC_AWK_SUM) { t += $$1 } END { printf " %s |", n(t) }';) \
		$(CC_$(c)_SIZE) $(addprefix $(CC_DIR)/$(c)/,$(CC_SRCS:.c=.o)) | awk '$(CC_AWK_SUM) { t += $$1; d += $$2 + $$3 } END { printf " %s | %s |\n", n(t), n(d) }';) \
	} > $(CC_DIR)/sizes.md
	@cat $(CC_DIR)/sizes.md
	@echo "compile-check: $(words $(CC_SRCS)) files compiled with -Werror for each of: $(CC_CONFIGS)"

# awk: n() writes a number with thousands separators; the rule skips size's header.
CC_AWK_SUM := function n(v,  s, r) { s = sprintf("%d", v); r = ""; \
	while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) } return s r } NR > 1

endif # TFLM_BOARDS_MK
