# A generic ESP32 module (ESP32: two Xtensa LX6 at 240 MHz, 520 KiB SRAM,
# 4 MiB flash) with the tflm module and a 1 MiB ROMFS partition for models.
# Build through the project: make firmware BOARD=ESP32_GENERIC (or make -C
# ports/esp32 BOARD_DIR=<project>/port_boards/ESP32_GENERIC
# USER_C_MODULES=<project>/micropython_mod/micropython.cmake), with ESP-IDF
# v5.2 to v5.4 exported.
set(IDF_TARGET esp32)

# esp32board.icount(): the core's instruction counter (board_icount.c).
list(APPEND MICROPY_SOURCE_BOARD ${CMAKE_CURRENT_LIST_DIR}/board_icount.c)

# The port's settings for the ESP32, then this board's partition table. The
# table's path must be absolute (ESP-IDF resolves relative ones against the
# port's folder), so it is written into a settings file in the build folder.
#
# The interrupt watchdog at 3 s instead of ESP-IDF's 300 ms: QEMU's esp32
# machine runs without -icount (device.py says why), so its timers keep the
# host's time, and a host that leaves the emulator no CPU for 300 ms (make
# test's parallel load did) trips it in the middle of a run. On a board it
# only reports an interrupt handler that hangs later.
file(WRITE ${CMAKE_BINARY_DIR}/sdkconfig.tflm_board
    "CONFIG_ESPTOOLPY_FLASHSIZE_4MB=y\n"
    "CONFIG_PARTITION_TABLE_CUSTOM=y\n"
    "CONFIG_PARTITION_TABLE_CUSTOM_FILENAME=\"${CMAKE_CURRENT_LIST_DIR}/partitions-tflm-4MiB.csv\"\n"
    "CONFIG_ESP_INT_WDT_TIMEOUT_MS=3000\n"
)
set(SDKCONFIG_DEFAULTS
    boards/sdkconfig.base
    boards/sdkconfig.ble
    ${CMAKE_BINARY_DIR}/sdkconfig.tflm_board
)
