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

        .macro case_start name
        bl init
        nop
        .global c_\name
c_\name:
        .endm
        .macro case_end name
        .global e_\name
e_\name: nop
        .endm
#define CASE(name) case_start name
#define END(name) case_end name

// A case of one instruction four times over (its throughput, or the
// latency of its result when each reads the one before).
        .macro CASE4 name, insn:vararg
        case_start \name
        \insn
        \insn
        \insn
        \insn
        case_end \name
        .endm

// The conditional branch and loop cases, the same on ARMv6-M and ARMv7-M.
        .macro BRANCH_CASES
        CASE(bcc_taken)
        cmp r0, r0
        beq 1f
        nop
1:
        END(bcc_taken)
        CASE(bcc_not)
        cmp r0, r0
        bne 1f
1:
        END(bcc_not)
        CASE(loop)
        movs r0, #10
1:      subs r0, #1
        bne 1b
        END(loop)
        .endm

// A call of a leaf (BL, BX LR) and of a function with a frame (BL, PUSH,
// POP {.., pc}); each file defines leaf and frame.
        .macro CALL_CASES
        CASE(call)
        bl leaf
        END(call)
        CASE(call_pop)
        bl frame
        END(call_pop)
        .endm

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
