// Included first in every file of the project's QEMU firmware.
#ifndef TFLM_PORT_BOARDS_BOARD_H
#define TFLM_PORT_BOARDS_BOARD_H

// Called at the end of mp_init(): mounts the board's ROMFS region at /rom.
void tflm_board_init(void);
void tflm_board_clock_start(void);
#define MICROPY_PORT_INIT_FUNC tflm_board_init()

#endif
