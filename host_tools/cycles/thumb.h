// Thumb instruction decoding for the cycle estimator: what each ARMv6-M /
// ARMv7-M (with the DSP and single-precision FP extensions) instruction is,
// which registers it reads and writes, and what it costs on a Cortex-M0,
// M0+, M3 or M4 by the cores' Technical Reference Manuals.
//
// Contract: thumb_decode() never fails: an encoding it does not know is
// class C_OTHER and costs one cycle (the plugin counts such instructions,
// so a gap shows). Costs here are per instruction in isolation; what depends
// on neighbours (load/store pipelining, address interlocks, IT folding, FP
// result stalls) or on execution (taken branches, the pipeline refill P,
// unaligned accesses) is applied by the plugin (tflm_cycles.c) with the
// helpers below.
#ifndef TFLM_CYCLES_THUMB_H
#define TFLM_CYCLES_THUMB_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    CORE_M0,     // Cortex-M0 r0p0 TRM (DDI 0432C), table 3-1
    CORE_M0PLUS, // Cortex-M0+ TRM (DDI 0484C), table 3-1; single-cycle multiplier (RP2040)
    CORE_M3,     // Cortex-M3 TRM r2p1 (100165_0201), table 3-1 and 3.3.2
    CORE_M4,     // Cortex-M4 TRM r0p1 (DDI 0439D), tables 3-1, 3-2, 7-1 and 3.3.2
} core_t;

// Instruction classes, for the per-class counts.
typedef enum {
    C_ALU,    // data processing, moves, shifts, extends, bit fields, compares
    C_MUL,    // 32-bit result multiplies (MUL, MLA, MLS)
    C_MULL,   // 64-bit result multiplies (SMULL, UMULL, SMLAL, UMLAL, UMAAL, SMLAL<x><y>, SMLALD, SMLSLD)
    C_DSP,    // DSP extension: 16-bit and SIMD multiplies, parallel add/sub, saturating arithmetic, SEL, USAD8
    C_DIV,    // SDIV, UDIV
    C_LOAD,   // single loads (LDR, LDRB, LDRH, LDRSB, LDRSH, LDREX*, literal)
    C_STORE,  // single stores (STR, STRB, STRH, STREX*)
    C_MULTI,  // LDM, STM, PUSH, POP, LDRD, STRD
    C_BRANCH, // B, B<cc>, BL, BX, BLX, CBZ, CBNZ, TBB, TBH, writes of PC by MOV/ADD/LDR
    C_FP,     // floating-point data processing and transfers between core and FP registers
    C_FPMEM,  // VLDR, VSTR, VLDM, VSTM, VPUSH, VPOP
    C_SYS,    // IT, barriers, hints, MRS, MSR, CPS, SVC, BKPT
    C_OTHER,  // encodings the decoder does not know (one cycle)
    C_COUNT
} iclass_t;

extern const char *const iclass_names[C_COUNT];

// What the instruction does, for the neighbour and execution rules.
enum {
    F_LOAD1 = 1u << 0,     // single load (may pipeline into the next load/store)
    F_STORE1 = 1u << 1,    // single store
    F_REGOFF = 1u << 2,    // load/store with a register offset
    F_LITERAL = 1u << 3,   // PC-relative load
    F_DP = 1u << 4,        // data processing writing a core register (address interlock source)
    F_WRITES_PC = 1u << 5, // a branch of any kind: the plugin resolves taken / not taken
    F_COND = 1u << 6,      // conditional by encoding (B<cc>, CBZ, CBNZ)
    F_LOADS_PC = 1u << 7,  // PC from memory (LDR PC, LDM/POP with PC, TBB, TBH): refill P = 3 nominal
    F_IT = 1u << 8,        // the IT instruction
    F_MEM = 1u << 9,       // accesses memory
    F_FPARITH = 1u << 10,  // FP arithmetic whose result costs a cycle when the next instruction reads it
    F_FPMAC = 1u << 11,    // FP multiply-accumulate (reads its addend late)
    F_PUSH_LR = 1u << 12,  // PUSH with LR (M0/M0+: N counts LR)
    F_POP_PC = 1u << 13,   // POP with PC
    F_NOTIME = 1u << 14,   // no TRM timing (SVC, BKPT, UDF): counted as one cycle
};

typedef struct {
    uint8_t size;   // bytes: 2 or 4
    uint8_t cls;    // iclass_t
    uint16_t flags; // F_*
    uint8_t it_mask; // for IT: the firstcond/mask byte (instructions it covers)
    uint8_t nregs;  // LDM/STM/PUSH/POP: registers in the list (N, with LR or PC); VLDM/VSTM: words
    uint16_t dst;   // core registers written (bit n: Rn)
    uint16_t src;   // core registers read
    uint16_t addr;  // core registers that form a memory address
    uint32_t fdst;  // FP single registers written (bit n: Sn)
    uint32_t fsrc;  // FP single registers read, except a multiply-accumulate's addend
    // Cycles of the instruction in isolation when executed (a branch: taken),
    // nominal / least / most by the TRM, excluding the pipeline refill P of
    // an ARMv7-M branch, which the plugin adds from the target.
    uint8_t cyc, cyc_min, cyc_max;
    // Cycles when not executed: a conditional branch not taken (1), or a
    // conditional instruction in an IT block whose condition fails (1).
    uint8_t cyc_skip;
    bool refill;    // ARMv7-M: the taken instruction adds the pipeline refill P
} insn_t;

// Decodes the instruction whose first halfword is hw1 (hw2: the next
// halfword, used when hw1 starts a 32-bit instruction) for `core`.
void thumb_decode(core_t core, uint16_t hw1, uint16_t hw2, insn_t *out);

// True when the halfword starts a 32-bit instruction.
static inline bool thumb_is_32bit(uint16_t hw1) {
    return (hw1 >> 11) >= 0x1d;
}

#endif
