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

// QEMU 7.2's STM32 USART lowers its interrupt line only when DR is read (or
// SR written), not when the firmware clears RXNEIE. The port's UART handler
// does clear RXNEIE, leaving the byte in DR, when its receive buffer is full
// (260 bytes arrived while nothing read them: a paste into a busy board), so
// there the line stays raised, the handler runs again at once, and the board
// hangs in it for good. On the real chip, clearing RXNEIE drops the line.
// The linker wraps the port's handler and its buffer reader (-Wl,--wrap in
// mpconfigboard.mk): the line is masked in the NVIC while RXNEIE is off, and
// unmasked when the reader turns RXNEIE on again, which is what the chip does.
#include "uart.h"

static uint32_t qemu_uart_masked_irq[MICROPY_HW_MAX_UART + 1];

void __real_uart_irq_handler(mp_uint_t uart_id);
int __real_uart_rx_char(machine_uart_obj_t *self);

void __wrap_uart_irq_handler(mp_uint_t uart_id) {
    __real_uart_irq_handler(uart_id);
    machine_uart_obj_t *self = MP_STATE_PORT(machine_uart_obj_all)[uart_id - 1];
    if (self != NULL && !(self->uartx->CR1 & USART_CR1_RXNEIE) && (self->uartx->SR & USART_SR_RXNE)) {
        // The running exception is this UART's interrupt: IPSR - 16 is its IRQn.
        IRQn_Type irqn = (IRQn_Type)((int)__get_IPSR() - 16);
        NVIC_DisableIRQ(irqn);
        qemu_uart_masked_irq[uart_id] = (uint32_t)irqn + 1;
    }
}

int __wrap_uart_rx_char(machine_uart_obj_t *self) {
    int data = __real_uart_rx_char(self);
    uint32_t masked = qemu_uart_masked_irq[self->uart_id];
    if (masked && (self->uartx->CR1 & USART_CR1_RXNEIE)) {
        qemu_uart_masked_irq[self->uart_id] = 0;
        NVIC_EnableIRQ((IRQn_Type)(masked - 1));
    }
    return data;
}
