// The pyboard v1.1's HAL settings (12 MHz HSE crystal, 32.768 kHz LSE) are
// the port's own; this board only moves the firmware and adds ROMFS.
#include "boards/PYBV11/stm32f4xx_hal_conf.h"
