// ARMv6-M microbenchmarks: the Cortex-M0 (QEMU microbit) and M0+ tables.
#include "bench.h"

        .balign 4
        .thumb_func
        .global reset
reset:
        CASE(alu)
        adds r0, r0, #1
        adds r0, r0, #1
        adds r0, r0, #1
        adds r0, r0, #1
        subs r0, r0, #1
        lsls r0, r0, #1
        eors r0, r0, r1
        mov r8, r0
        END(alu)
        CASE4 mul, muls r0, r1, r0
        CASE(ldr)
        ldr r0, [r1]
        ldr r4, [r1, #4]
        ldrb r4, [r1, #5]
        ldrh r4, [r1, r5]
        END(ldr)
        CASE(str)
        str r0, [r1]
        strb r0, [r1, #5]
        strh r0, [r1, r5]
        str r0, [sp, #0]
        END(str)
        CASE(literal)
        ldr r0, =0x12345678
        ldr r4, =0x9abcdef0
        END(literal)
        CASE(ldm)
        ldm r1!, {r4-r7}
        END(ldm)
        CASE(stm)
        stm r1!, {r4-r6}
        END(stm)
        CASE(push_pop)
        push {r4-r7}
        pop {r4-r7}
        END(push_pop)
        CASE(push_lr)
        push {r4, lr}
        pop {r4}
        pop {r4}
        END(push_lr)
        CASE(b)
        b 1f
        nop
1:
        END(b)
        BRANCH_CASES
        CALL_CASES
        CASE(bx)
        adr r0, 2f
        adds r0, #1
        bx r0
        nop
        .balign 4
2:
        END(bx)
        CASE(mov_pc)
        adr r0, 2f
        mov pc, r0
        nop
        .balign 4
2:
        END(mov_pc)
        CASE(mrs)
        mrs r0, apsr
        END(mrs)
        CASE(dmb)
        dmb
        END(dmb)
        CASE(ext)
        sxtb r0, r1
        uxth r0, r1
        rev r0, r1
        END(ext)
        exit

        .thumb_func
leaf:   bx lr
        .thumb_func
frame:  push {r4, lr}
        pop {r4, pc}

        .thumb_func
init:   ldr r1, =buf
        movs r2, r1
        adds r2, #64
        movs r3, r1
        adds r3, #128
        str r2, [r1]
        movs r0, #3
        movs r5, #8
        movs r4, #0
        bx lr
        .ltorg
