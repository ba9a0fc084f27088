# Raspberry Pi Pico (RP2040: two Cortex-M0+ at 125 MHz, 264 KiB SRAM, 2 MiB
# QSPI flash) with the tflm module and a ROMFS region for models.
# Build through the project: make firmware BOARD=RPI_PICO (or make -C ports/rp2
# BOARD_DIR=<project>/port_boards/RPI_PICO
# USER_C_MODULES=<project>/micropython_mod/micropython.cmake).
set(PICO_BOARD "pico")
set(PICO_PLATFORM "rp2040")
