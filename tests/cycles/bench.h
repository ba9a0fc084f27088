// Microbenchmarks of the cycle estimator (tests/test_cycles.py): bare-metal
// Thumb code for QEMU's microbit (Cortex-M0), mps2-an385 (Cortex-M3) and
// netduinoplus2 (Cortex-M4F) machines and for the RP2040 emulator. Each case
// runs once, from its label c_NAME to e_NAME; the estimator's marks at both
// give its cycles, which the test compares with the figure counted by hand
// from the core's Technical Reference Manual. Before each case the registers
// are set again (init) and a NOP stands before its first instruction, so no
// neighbour rule reaches into it.
        .syntax unified
        .thumb

#define CASE(name) bl init; nop; .global c_##name; c_##name:
#define END(name) .global e_##name; e_##name: nop

        .section .isr_vector, "a"
        .word _estack
        .word reset
        .rept 14
        .word fault
        .endr

        .text
        .thumb_func
fault:  b fault

// Semihosting SYS_EXIT (ADP_Stopped_ApplicationExit).
        .macro exit
        movs r0, #0x18
        ldr r1, =0x20026
        bkpt 0xab
        .endm

        .bss
        .balign 8
buf:    .space 256
        .text

// The case ends at the next instruction, which stays out of it.
#define END_AT(name) .global e_##name; e_##name:
