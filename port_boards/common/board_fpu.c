// Cores with a floating-point unit (hard-float builds): the FPU is off after
// reset, and compiled code may use it from the first function on. This
// vector table sits in front of the port's (the linker script puts
// .tflm_isr_vector at address 0): its reset handler grants access to the
// FPU, then runs the port's Reset_Handler. The other entries are the port's.
#include <stdint.h>

#if TFLM_BOARD_FPU

extern uint32_t _estack;
void Reset_Handler(void);
void NMI_Handler(void);
void HardFault_Handler(void);
void MemManage_Handler(void);
void BusFault_Handler(void);
void UsageFault_Handler(void);
void SVC_Handler(void);
void DebugMon_Handler(void);
void PendSV_Handler(void);
void SysTick_Handler(void);

__attribute__((naked)) static void tflm_fpu_reset(void) {
    __asm volatile (
        "ldr r0, =0xe000ed88\n"    // CPACR
        "ldr r1, [r0]\n"
        "orr r1, r1, #(0xf << 20)\n" // CP10 and CP11: full access
        "str r1, [r0]\n"
        "dsb\n"
        "isb\n"
        "b Reset_Handler\n"
        );
}

const uint32_t tflm_isr_vector[] __attribute__((section(".tflm_isr_vector"), used)) = {
    (uint32_t)&_estack,
    (uint32_t)&tflm_fpu_reset,
    (uint32_t)&NMI_Handler,
    (uint32_t)&HardFault_Handler,
    (uint32_t)&MemManage_Handler,
    (uint32_t)&BusFault_Handler,
    (uint32_t)&UsageFault_Handler,
    0,
    0,
    0,
    0,
    (uint32_t)&SVC_Handler,
    (uint32_t)&DebugMon_Handler,
    0,
    (uint32_t)&PendSV_Handler,
    (uint32_t)&SysTick_Handler,
};

#endif
