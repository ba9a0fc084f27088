// ARMv7-M microbenchmarks: the Cortex-M3 (QEMU mps2-an385) and Cortex-M4
// tables (QEMU netduinoplus2; the DSP and FP cases only there).
#include "bench.h"

        .balign 4
        .thumb_func
        .global reset
reset:
#if defined(__ARM_FP)
        ldr r0, =0xe000ed88      // CPACR: CP10 and CP11 on
        ldr r1, [r0]
        orr r1, r1, #(0xf << 20)
        str r1, [r0]
        dsb
        isb
#endif
        CASE(alu)
        adds r0, r0, #1
        adds r0, r0, #1
        adds r0, r0, #1
        adds r0, r0, #1
        add.w r0, r0, #1
        lsl r0, r0, #1
        ubfx r0, r1, #2, #3
        movw r0, #1234
        END(alu)
        CASE(mul)
        muls r0, r1, r0
        mul r0, r1, r0
        mul r4, r1, r0
        mul r0, r4, r5
        END(mul)
        CASE4 mla, mla r0, r1, r5, r0
        CASE4 smull, smull r6, r7, r0, r5
        CASE4 smlal, smlal r6, r7, r0, r5
        CASE(sdiv)
        sdiv r6, r0, r5
        udiv r6, r0, r5
        END(sdiv)
        CASE(ldr_single)
        ldr r0, [r1]
        END(ldr_single)
        // The four examples of the TRM's load/store timings (3.3.2).
        CASE(ldr_pair)
        ldr r0, [r1]
        ldr r1, [r2]
        END(ldr_pair)
        CASE(ldr_str)
        ldr r0, [r1, r5]
        str r0, [r3, #20]
        END(ldr_str)
        CASE(ldr_str_reg)
        ldr r0, [r1, r5]
        str r1, [r3, r5]
        END(ldr_str_reg)
        CASE(ldr_three)
        ldr r0, [r1, r5]
        ldr r1, [r2]
        ldr r2, [r3, #4]
        END(ldr_three)
        // ldr_pair with its second load a 32-bit instruction across a 1 KB
        // boundary (QEMU's pages here): QEMU ends a block before such an
        // instruction and reads its first halfword with the one before.
        b.w 2f
        .balign 1024
        .space 1024 - 10
2:
        CASE(ldr_pair_page)
        ldr r0, [r1]
        ldr.w r1, [r2]
        END(ldr_pair_page)
        CASE(ldr_dep)
        ldr r0, [r1]
        ldr r4, [r0]
        END(ldr_dep)
        CASE(str_imm)
        str r0, [r1, #4]
        str r0, [r1, #8]
        str r0, [r1, #12]
        str r0, [r1, #16]
        END(str_imm)
        CASE(str_ldr)
        str r0, [r1]
        ldr r4, [r1, #4]
        END(str_ldr)
        CASE(interlock)
        adds r1, r1, #0
        ldr r0, [r1]
        END(interlock)
        CASE(ldm3)
        ldm r1, {r4, r6, r7}
        END(ldm3)
        CASE(stm8)
        stm r1, {r0, r2-r8}
        END(stm8)
        CASE(ldrd)
        ldrd r6, r7, [r1]
        END(ldrd)
        CASE(push_pop)
        push {r4-r7, lr}
        pop {r4-r8}
        END(push_pop)
        CASE(b)
        b.n 1f
        nop
1:
        END(b)
        CASE(b_wide)
        b.n 1f
        .balign 4
        nop
1:
        END_AT(b_wide)
        add.w r0, r0, #1
        BRANCH_CASES
        CASE(cbz)
        cbz r4, 1f
        nop
1:
        END(cbz)
        CALL_CASES
        CASE(ldr_pc)
        ldr pc, [r1, #8]
        nop
        .balign 4
        .thumb_func
ldrpc_target:
        END(ldr_pc)
        CASE(it_fold)
        cmp r0, r0
        it eq
        moveq r0, #1
        END(it_fold)
        CASE(it_nofold)
        cmp.w r0, r0
        it eq
        moveq r0, #1
        END(it_nofold)
        CASE(it_load)
        cmp r0, r0
        ite eq
        ldreq r4, [r1]
        ldrne r4, [r1, #4]
        END(it_load)
        CASE(unaligned_word1)
        ldr r0, [r1, #1]
        END(unaligned_word1)
        CASE(unaligned_word2)
        ldr r0, [r1, #2]
        END(unaligned_word2)
        CASE(unaligned_half)
        ldrh r4, [r1, #1]
        END(unaligned_half)
#if defined(__ARM_FEATURE_DSP)
        CASE4 smlad, smlad r0, r1, r5, r0
        CASE(simd)
        sxtb16 r4, r5
        sxtb16 r6, r5, ror #8
        sadd16 r7, r4, r6
        smlabb r0, r4, r6, r0
        END(simd)
        CASE(vadd)
        vadd.f32 s0, s1, s2
        vadd.f32 s3, s4, s5
        vadd.f32 s6, s7, s8
        vadd.f32 s9, s10, s11
        END(vadd)
        CASE4 vadd_chain, vadd.f32 s0, s0, s1
        CASE(vmla)
        vmla.f32 s0, s1, s2
        vmla.f32 s3, s4, s5
        END(vmla)
        CASE(vdiv)
        vdiv.f32 s0, s1, s2
        END(vdiv)
        CASE(vldr)
        vldr s0, [r1]
        END(vldr)
        CASE(vmov)
        vmov r0, s1
        vmov s2, s3, r0, r4
        END(vmov)
#endif
        exit

        .thumb_func
leaf:   bx lr
        .balign 4
        .thumb_func
frame:  push {r4, lr}
        pop {r4, pc}

        .thumb_func
init:   ldr r1, =buf
        add r2, r1, #64
        add r3, r1, #128
        str r2, [r1]
        ldr r0, =ldrpc_target
        str r0, [r1, #8]
        movs r0, #3
        movs r5, #8
        movs r4, #0
        bx lr
        .ltorg
