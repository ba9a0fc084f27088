// The pyboard v1.1's HAL settings.
#include "../PYBV11/stm32f4xx_hal_conf.h"
