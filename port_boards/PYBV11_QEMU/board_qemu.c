// Clocks for QEMU's STM32F405. QEMU has no model of the reset and clock
// controller (RCC): its registers read as zero, so no oscillator or PLL ever
// reports ready and the port's SystemClock_Config (HSE at 12 MHz, PLL to
// 168 MHz) stops with a fatal error. Zero is also the reset state, with the
// 16 MHz HSI driving the core, which is what this firmware keeps.
#include "py/mphal.h"

void SystemClock_Config(void) {
    SystemCoreClock = HSI_VALUE;
    // The HAL's millisecond tick, from the clock the HAL computes (HSI).
    HAL_SYSTICK_Config(HAL_RCC_GetHCLKFreq() / 1000);
    HAL_SYSTICK_CLKSourceConfig(SYSTICK_CLKSOURCE_HCLK);
    NVIC_SetPriority(SysTick_IRQn, NVIC_EncodePriority(NVIC_PRIORITYGROUP_4, TICK_INT_PRIORITY, 0));
}

// A HardFault prints the registers and stops, where the real board resets:
// a test sees why the board stopped answering (tflm_host.device's crash
// markers) instead of a fresh boot banner.
extern uint32_t pyb_hard_fault_debug;

void tflm_qemu_board_early_init(void) {
    pyb_hard_fault_debug = 1;
}
