// Thumb decoding and the per-core cycle tables (see thumb.h). Encodings are
// those of the ARMv6-M and ARMv7-M Architecture Reference Manuals; cycle
// counts those of the cores' Technical Reference Manuals, cited per kind.
#include "thumb.h"

#include <string.h>

const char *const iclass_names[C_COUNT] = {
    "alu", "mul", "mull", "dsp", "div", "load", "store", "multi", "branch", "fp", "fpmem", "sys", "other",
};

// Timing kinds: one row of a TRM table each.
typedef enum {
    K_ONE,      // one cycle
    K_MUL,      // MUL(S)
    K_MLA,      // MLA, MLS
    K_MULL,     // SMULL, UMULL
    K_MLAL,     // SMLAL, UMLAL (and UMAAL on the M4)
    K_DSPMUL,   // DSP multiplies (M4 only)
    K_DIV,      // SDIV, UDIV
    K_LOAD,     // single load
    K_STR_IMM,  // single store, immediate offset
    K_STR_REG,  // single store, register offset
    K_DUAL,     // LDRD, STRD
    K_MULTI,    // LDM, STM, PUSH, POP: 1+N
    K_MULTI_PC, // LDM / POP with PC
    K_LDR_PC,   // LDR PC
    K_TB,       // TBB, TBH
    K_B,        // B
    K_BCOND,    // B<cc>, CBZ, CBNZ
    K_BL,       // BL
    K_BX,       // BX, BLX
    K_PCDP,     // MOV PC / ADD PC
    K_MRS,      // MRS
    K_MSR,      // MSR
    K_CPS,      // CPSID, CPSIE
    K_BARRIER,  // DMB, DSB
    K_ISB,      // ISB
    K_WFX,      // WFI, WFE
    K_IT,       // IT
    K_NOTIME,   // SVC, BKPT, UDF: no timing in the TRMs
    K_FP1,      // single-cycle FP (M4 table 7-1)
    K_FPMAC,    // VMLA, VMLS, VNMLA, VNMLS, VFMA, VFMS, VFNMA, VFNMS: 3
    K_FPDIV,    // VDIV, VSQRT: 14
    K_VLS1,     // VLDR.32, VSTR.32: 2
    K_VLS2,     // VLDR.64, VSTR.64: 3
    K_VLSM,     // VLDM, VSTM, VPUSH, VPOP: 1 + words
    K_VMOV2,    // VMOV of two core registers: 2
} kind_t;

// nom, min, max cycles of a kind on a core, with N (list length); refill:
// the ARMv7-M cores add the pipeline refill P when it is taken.
static void cost(core_t core, kind_t k, int n, insn_t *o) {
    int nom = 1, lo = 1, hi = 1;
    bool v6 = core == CORE_M0 || core == CORE_M0PLUS;
    bool m0 = core == CORE_M0;
    o->refill = false;
    o->cyc_skip = 1;
    switch (k) {
        case K_ONE:
        case K_NOTIME:
        case K_CPS:
            if (k == K_CPS && !v6) {
                nom = hi = 2; // M3/M4: "1 or 2"
            }
            break;
        case K_MUL:
            break; // MULS 1 (M0/M0+ with the single-cycle multiplier), MUL 1 (M3, M4)
        case K_MLA:
            nom = lo = hi = core == CORE_M3 ? 2 : 1;
            break;
        case K_MULL:
            if (core == CORE_M3) {
                lo = 3, nom = hi = 5; // early termination on the operands' size: 3 to 5
            }
            break;
        case K_MLAL:
            if (core == CORE_M3) {
                lo = 4, nom = hi = 7; // 4 to 7
            }
            break;
        case K_DSPMUL:
            break;
        case K_DIV:
            lo = 2, nom = hi = 12; // 2 to 12, on the operands
            break;
        case K_LOAD:
        case K_STR_REG:
            nom = lo = hi = 2;
            break;
        case K_STR_IMM:
            if (v6) {
                nom = lo = hi = 2;
            } else {
                hi = 2; // "STR Rx,[Ry,#imm] is always one cycle"; the table's 2 as the bound
            }
            break;
        case K_DUAL:
            nom = lo = hi = 3; // 1+N, N=2
            break;
        case K_MULTI:
            nom = lo = hi = 1 + n;
            break;
        case K_MULTI_PC:
            nom = lo = hi = (m0 ? 4 : core == CORE_M0PLUS ? 3 : 1) + n;
            o->refill = !v6;
            break;
        case K_LDR_PC:
            nom = lo = hi = 2;
            o->refill = true;
            break;
        case K_TB:
            nom = lo = hi = 3; // "two cycles for the load, one cycle for the add", then the refill
            o->refill = true;
            break;
        case K_B:
        case K_BCOND:
            nom = lo = hi = m0 ? 3 : core == CORE_M0PLUS ? 2 : 1;
            o->refill = !v6;
            break;
        case K_BL:
            nom = lo = hi = m0 ? 4 : core == CORE_M0PLUS ? 3 : 1;
            o->refill = !v6;
            break;
        case K_BX:
        case K_PCDP:
            nom = lo = hi = m0 ? 3 : core == CORE_M0PLUS ? 2 : 1;
            o->refill = !v6;
            break;
        case K_MRS:
        case K_MSR:
            if (v6) {
                nom = lo = hi = m0 ? 4 : 3;
            } else {
                nom = hi = 2; // "1 or 2"
            }
            break;
        case K_BARRIER:
            if (v6) {
                nom = lo = hi = m0 ? 4 : 3;
            } // M3/M4: 1+B, B at least 0 with nothing outstanding
            break;
        case K_ISB:
            if (v6) {
                nom = lo = hi = m0 ? 4 : 3;
            } else {
                nom = lo = 2, hi = 4; // 1+B, B at least a pipeline refill (1 to 3)
            }
            break;
        case K_WFX:
            if (v6) {
                nom = lo = hi = 2; // excluding the time spent waiting
            }
            break;
        case K_IT:
            break; // the plugin folds it (0 cycles) behind a 16-bit instruction
        case K_FP1:
            break;
        case K_FPMAC:
            nom = lo = hi = 3;
            break;
        case K_FPDIV:
            nom = lo = hi = 14;
            break;
        case K_VLS1:
            nom = lo = hi = 2;
            break;
        case K_VLS2:
            nom = lo = hi = 3;
            break;
        case K_VLSM:
            nom = lo = hi = 1 + n;
            break;
        case K_VMOV2:
            nom = lo = hi = 2;
            break;
    }
    o->cyc = (uint8_t)nom;
    o->cyc_min = (uint8_t)lo;
    o->cyc_max = (uint8_t)hi;
}

static inline uint16_t bit(unsigned r) {
    return (uint16_t)(1u << (r & 15));
}

static inline unsigned popcount16(unsigned v) {
    return (unsigned)__builtin_popcount(v & 0xffffu);
}

#define REG_SP 13
#define REG_LR 14
#define REG_PC 15

static void set(insn_t *o, core_t core, iclass_t cls, kind_t k, int n) {
    o->cls = (uint8_t)cls;
    o->nregs = (uint8_t)n;
    cost(core, k, n, o);
}

// A data-processing result in Rd (a move to PC is a branch).
static void dp(insn_t *o, core_t core, unsigned rd, uint16_t src) {
    o->src = src;
    if (rd == REG_PC) {
        o->flags |= F_WRITES_PC;
        set(o, core, C_BRANCH, K_PCDP, 0);
        return;
    }
    o->dst = bit(rd);
    o->flags |= F_DP;
    set(o, core, C_ALU, K_ONE, 0);
}

// -- 16-bit encodings -----------------------------------------------------------

static void decode16(core_t core, uint16_t h, insn_t *o) {
    unsigned rd = h & 7, rn = (h >> 3) & 7, rm = (h >> 6) & 7;
    if ((h >> 14) == 0) { // shift (immediate), add, subtract, move, compare
        unsigned op = (h >> 11) & 7;
        if (op < 3) {
            dp(o, core, rd, bit(rn));
        } else if (op == 3) { // ADD/SUB register or 3-bit immediate
            dp(o, core, rd, (uint16_t)(bit(rn) | ((h & 0x400) ? 0 : bit(rm))));
        } else {
            unsigned rdn = (h >> 8) & 7;
            if (op == 5) { // CMP immediate
                o->src = bit(rdn);
                set(o, core, C_ALU, K_ONE, 0);
            } else {
                dp(o, core, rdn, op == 4 ? 0 : bit(rdn));
            }
        }
        return;
    }
    if ((h >> 10) == 0x10) { // data processing (register)
        unsigned op = (h >> 6) & 15;
        if (op == 8 || op == 10 || op == 11) { // TST, CMP, CMN
            o->src = (uint16_t)(bit(rd) | bit(rn));
            set(o, core, C_ALU, K_ONE, 0);
        } else if (op == 13) { // MULS
            dp(o, core, rd, (uint16_t)(bit(rd) | bit(rn)));
            set(o, core, C_MUL, K_MUL, 0);
        } else {
            dp(o, core, rd, (uint16_t)(bit(rd) | bit(rn)));
        }
        return;
    }
    if ((h >> 10) == 0x11) { // special data processing, branch and exchange
        unsigned op = (h >> 8) & 3;
        unsigned m = (h >> 3) & 15;
        unsigned dn = ((h >> 4) & 8) | rd;
        if (op == 0) {
            dp(o, core, dn, (uint16_t)(bit(dn) | bit(m)));
        } else if (op == 1) {
            o->src = (uint16_t)(bit(dn) | bit(m));
            set(o, core, C_ALU, K_ONE, 0);
        } else if (op == 2) {
            dp(o, core, dn, bit(m));
        } else { // BX / BLX
            o->src = bit(m);
            o->flags |= F_WRITES_PC;
            if (h & 0x80) {
                o->dst = bit(REG_LR);
            }
            set(o, core, C_BRANCH, K_BX, 0);
        }
        return;
    }
    if ((h >> 11) == 0x09) { // LDR literal
        o->dst = bit((h >> 8) & 7);
        o->addr = bit(REG_PC);
        o->flags |= F_LOAD1 | F_LITERAL | F_MEM;
        set(o, core, C_LOAD, K_LOAD, 0);
        return;
    }
    if ((h >> 12) == 0x5) { // load/store, register offset
        unsigned op = (h >> 9) & 7;
        o->addr = (uint16_t)(bit(rn) | bit(rm));
        o->flags |= F_REGOFF | F_MEM;
        if (op < 3) {
            o->src = (uint16_t)(o->addr | bit(rd));
            o->flags |= F_STORE1;
            set(o, core, C_STORE, K_STR_REG, 0);
        } else {
            o->src = o->addr;
            o->dst = bit(rd);
            o->flags |= F_LOAD1;
            set(o, core, C_LOAD, K_LOAD, 0);
        }
        return;
    }
    if ((h >> 13) == 0x3 || (h >> 12) == 0x8 || (h >> 12) == 0x9) { // load/store immediate, SP-relative
        bool load = (h >> 11) & 1;
        unsigned rt = rd, base = rn;
        if ((h >> 12) == 0x9) {
            rt = (h >> 8) & 7;
            base = REG_SP;
        }
        o->addr = bit(base);
        o->flags |= F_MEM;
        if (load) {
            o->src = o->addr;
            o->dst = bit(rt);
            o->flags |= F_LOAD1;
            set(o, core, C_LOAD, K_LOAD, 0);
        } else {
            o->src = (uint16_t)(o->addr | bit(rt));
            o->flags |= F_STORE1;
            set(o, core, C_STORE, K_STR_IMM, 0);
        }
        return;
    }
    if ((h >> 12) == 0xa) { // ADR, ADD Rd, SP, #imm
        dp(o, core, (h >> 8) & 7, (h & 0x800) ? bit(REG_SP) : bit(REG_PC));
        return;
    }
    if ((h >> 12) == 0xb) { // miscellaneous
        if ((h & 0xff00) == 0xb000) { // ADD/SUB SP, SP, #imm
            dp(o, core, REG_SP, bit(REG_SP));
        } else if ((h & 0xf500) == 0xb100) { // CBZ, CBNZ
            o->src = bit(rd);
            o->flags |= F_WRITES_PC | F_COND;
            set(o, core, C_BRANCH, K_BCOND, 0);
        } else if ((h & 0xff00) == 0xb200 || (h & 0xff00) == 0xba00) { // extend, reverse
            dp(o, core, rd, bit(rn));
        } else if ((h & 0xfe00) == 0xb400) { // PUSH
            unsigned n = popcount16(h & 0xff) + ((h >> 8) & 1);
            o->src = (uint16_t)((h & 0xff) | ((h & 0x100) ? bit(REG_LR) : 0) | bit(REG_SP));
            o->dst = bit(REG_SP);
            o->addr = bit(REG_SP);
            o->flags |= F_MEM | ((h & 0x100) ? F_PUSH_LR : 0);
            set(o, core, C_MULTI, K_MULTI, (int)n);
        } else if ((h & 0xfe00) == 0xbc00) { // POP
            unsigned n = popcount16(h & 0xff) + ((h >> 8) & 1);
            o->src = bit(REG_SP);
            o->dst = (uint16_t)((h & 0xff) | bit(REG_SP));
            o->addr = bit(REG_SP);
            o->flags |= F_MEM;
            if (h & 0x100) {
                o->flags |= F_WRITES_PC | F_LOADS_PC | F_POP_PC;
                set(o, core, C_MULTI, K_MULTI_PC, (int)n);
            } else {
                set(o, core, C_MULTI, K_MULTI, (int)n);
            }
        } else if ((h & 0xffe0) == 0xb660) { // CPS
            set(o, core, C_SYS, K_CPS, 0);
        } else if ((h & 0xff00) == 0xbe00) { // BKPT
            o->flags |= F_NOTIME;
            set(o, core, C_SYS, K_NOTIME, 0);
        } else if ((h & 0xff00) == 0xbf00) { // IT, hints
            if (h & 0xf) {
                o->flags |= F_IT;
                o->it_mask = (uint8_t)(h & 0xff);
                set(o, core, C_SYS, K_IT, 0);
            } else {
                unsigned hint = (h >> 4) & 15;
                set(o, core, C_SYS, (hint == 2 || hint == 3) ? K_WFX : K_ONE, 0);
            }
        } else {
            set(o, core, C_OTHER, K_ONE, 0);
        }
        return;
    }
    if ((h >> 12) == 0xc) { // LDM, STM (with writeback unless the base is loaded)
        unsigned base = (h >> 8) & 7;
        unsigned n = popcount16(h & 0xff);
        o->addr = bit(base);
        o->flags |= F_MEM;
        if (h & 0x800) {
            o->src = bit(base);
            o->dst = (uint16_t)((h & 0xff) | bit(base));
        } else {
            o->src = (uint16_t)((h & 0xff) | bit(base));
            o->dst = bit(base);
        }
        set(o, core, C_MULTI, K_MULTI, (int)n);
        return;
    }
    if ((h >> 12) == 0xd) { // B<cc>, UDF, SVC
        unsigned cond = (h >> 8) & 15;
        if (cond >= 14) {
            o->flags |= F_NOTIME;
            set(o, core, C_SYS, K_NOTIME, 0);
        } else {
            o->flags |= F_WRITES_PC | F_COND;
            set(o, core, C_BRANCH, K_BCOND, 0);
        }
        return;
    }
    if ((h >> 11) == 0x1c) { // B
        o->flags |= F_WRITES_PC;
        set(o, core, C_BRANCH, K_B, 0);
        return;
    }
    set(o, core, C_OTHER, K_ONE, 0);
}

// -- 32-bit encodings -------------------------------------------------------------

// Single precision register numbers of the FP encodings: Vx:x (S) or x:Vx (D).
static uint32_t sreg(unsigned v, unsigned x, bool dbl) {
    if (dbl) {
        unsigned d = (x << 4) | v;
        return d < 16 ? (3u << (2 * d)) : 0;
    }
    return 1u << ((v << 1) | x);
}

static void decode_fp(core_t core, uint16_t h1, uint16_t h2, insn_t *o) {
    bool dbl = ((h2 >> 8) & 15) == 11;
    unsigned vd = (h2 >> 12) & 15, d = (h1 >> 6) & 1;
    unsigned vn = h1 & 15, n = (h2 >> 7) & 1;
    unsigned vm = h2 & 15, m = (h2 >> 5) & 1;
    unsigned rt = (h2 >> 12) & 15;
    if (!(h1 & 0x0200)) { // extension register load/store, 64-bit transfers
        unsigned op = (h1 >> 4) & 31;
        unsigned rn = h1 & 15;
        if ((op & 0x1e) == 0x04) { // VMOV: two core registers
            if (op & 1) {
                o->dst = (uint16_t)(bit(rt) | bit(h1 & 15));
                o->fsrc = sreg(vm, m, dbl) | (dbl ? 0 : sreg(vm, m, false) << 1);
            } else {
                o->src = (uint16_t)(bit(rt) | bit(h1 & 15));
                o->fdst = sreg(vm, m, dbl) | (dbl ? 0 : sreg(vm, m, false) << 1);
            }
            set(o, core, C_FP, K_VMOV2, 0);
            return;
        }
        bool p = op & 16, w = op & 2, load = op & 1;
        o->addr = bit(rn);
        o->src = bit(rn);
        o->flags |= F_MEM;
        if (p && !w) { // VLDR, VSTR
            if (load) {
                o->fdst = sreg(vd, d, dbl);
            } else {
                o->fsrc = sreg(vd, d, dbl);
            }
            set(o, core, C_FPMEM, dbl ? K_VLS2 : K_VLS1, 0);
            return;
        }
        unsigned words = h2 & 0xff; // VLDM, VSTM, VPUSH, VPOP: 1+N (.32), 1+2N (.64)
        if (w) {
            o->dst = bit(rn);
        }
        set(o, core, C_FPMEM, K_VLSM, (int)words);
        return;
    }
    if (h2 & 0x10) { // transfers between core and FP registers, VMRS, VMSR
        if (h1 & 0x10) {
            o->dst = rt == 15 ? 0 : bit(rt);
        } else {
            o->src = bit(rt);
        }
        set(o, core, C_FP, K_FP1, 0);
        return;
    }
    // VFP data processing
    unsigned opc1 = ((h1 >> 4) & 0xb), opc2 = h1 & 15, opc3 = (h2 >> 6) & 3;
    uint32_t sd = sreg(vd, d, dbl), sn = sreg(vn, n, dbl), sm = sreg(vm, m, dbl);
    o->fdst = sd;
    o->fsrc = sn | sm;
    o->flags |= F_FPARITH;
    switch (opc1) {
        case 0x0:
        case 0x1:
        case 0x9:
        case 0xa:
            o->flags |= F_FPMAC;
            set(o, core, C_FP, K_FPMAC, 0);
            return;
        case 0x8:
            set(o, core, C_FP, K_FPDIV, 0);
            return;
        case 0xb:
            o->fsrc = sm;
            if ((opc3 & 1) == 0) { // VMOV immediate
                o->fsrc = 0;
                o->flags &= (uint16_t)~F_FPARITH;
            } else if (opc2 == 0 || (opc2 == 1 && opc3 == 1)) { // VMOV, VABS, VNEG
                o->flags &= (uint16_t)~F_FPARITH;
            } else if (opc2 == 1 && opc3 == 3) { // VSQRT
                set(o, core, C_FP, K_FPDIV, 0);
                return;
            } else if ((opc2 & 0xe) == 4) { // VCMP, VCMPE: FPSCR flags
                o->fsrc = sd | sm;
                o->fdst = 0;
                o->flags &= (uint16_t)~F_FPARITH;
            }
            set(o, core, C_FP, K_FP1, 0);
            return;
        default:
            set(o, core, C_FP, K_FP1, 0);
            return;
    }
}

static void decode32(core_t core, uint16_t h1, uint16_t h2, insn_t *o) {
    unsigned op1 = (h1 >> 11) & 3, op2 = (h1 >> 4) & 0x7f;
    unsigned rn = h1 & 15, rd = (h2 >> 8) & 15, rt = (h2 >> 12) & 15, rm = h2 & 15;
    if (op1 == 1) {
        if ((op2 & 0x64) == 0x00) { // load/store multiple
            unsigned list = h2;
            bool load = h1 & 0x10, wb = h1 & 0x20;
            unsigned n = popcount16(list);
            o->addr = bit(rn);
            o->flags |= F_MEM;
            if (load) {
                o->src = bit(rn);
                o->dst = (uint16_t)((list & 0x7fff) | (wb ? bit(rn) : 0));
                if (list & 0x8000) {
                    o->flags |= F_WRITES_PC | F_LOADS_PC | ((rn == REG_SP && wb) ? F_POP_PC : 0);
                    set(o, core, C_MULTI, K_MULTI_PC, (int)n);
                    return;
                }
            } else {
                o->src = (uint16_t)(list | bit(rn));
                o->dst = wb ? bit(rn) : 0;
                if (rn == REG_SP && wb && (list & 0x4000)) {
                    o->flags |= F_PUSH_LR;
                }
            }
            set(o, core, C_MULTI, K_MULTI, (int)n);
            return;
        }
        if ((op2 & 0x64) == 0x04) { // load/store dual, exclusive, table branch
            unsigned a = (h1 >> 7) & 3, b = (h1 >> 4) & 3, c = (h2 >> 4) & 15;
            o->addr = bit(rn);
            o->flags |= F_MEM;
            if (a == 0 && b == 0) { // STREX: pipelines like a load
                o->src = (uint16_t)(bit(rn) | bit(rt));
                o->dst = bit(rd);
                o->flags |= F_LOAD1;
                set(o, core, C_STORE, K_LOAD, 0);
            } else if (a == 0 && b == 1) { // LDREX
                o->src = bit(rn);
                o->dst = bit(rt);
                o->flags |= F_LOAD1;
                set(o, core, C_LOAD, K_LOAD, 0);
            } else if (a == 1 && b == 1 && c < 2) { // TBB, TBH
                o->src = (uint16_t)(bit(rn) | bit(rm));
                o->addr = o->src;
                o->flags |= F_WRITES_PC | F_LOADS_PC | F_REGOFF;
                set(o, core, C_BRANCH, K_TB, 0);
            } else if (a == 1 && b <= 1) { // STREXB/H, LDREXB/H
                o->src = (uint16_t)(bit(rn) | (b ? 0 : bit(rt)));
                o->dst = b ? bit(rt) : bit(rm);
                o->flags |= F_LOAD1;
                set(o, core, b ? C_LOAD : C_STORE, K_LOAD, 0);
            } else { // LDRD, STRD
                bool load = b & 1, wb = h1 & 0x20;
                if (load) {
                    o->src = bit(rn);
                    o->dst = (uint16_t)(bit(rt) | bit(rd) | (wb ? bit(rn) : 0));
                } else {
                    o->src = (uint16_t)(bit(rn) | bit(rt) | bit(rd));
                    o->dst = wb ? bit(rn) : 0;
                }
                set(o, core, C_MULTI, K_DUAL, 2);
            }
            return;
        }
        if ((op2 & 0x60) == 0x20) { // data processing (shifted register)
            unsigned op = (h1 >> 5) & 15;
            bool s = h1 & 0x10;
            uint16_t src = (uint16_t)(bit(rn) | bit(rm));
            if (rd == 15 && s && (op == 0 || op == 4 || op == 8 || op == 13)) { // TST, TEQ, CMN, CMP
                o->src = src;
                set(o, core, C_ALU, K_ONE, 0);
            } else if (op == 6) { // PKHBT, PKHTB
                dp(o, core, rd, src);
                o->cls = C_DSP;
            } else {
                dp(o, core, rd, src);
            }
            return;
        }
        if (op2 & 0x40) { // coprocessor: the FP extension
            decode_fp(core, h1, h2, o);
            return;
        }
    } else if (op1 == 2) {
        if ((h2 & 0x8000) == 0) { // data processing (modified or plain immediate)
            bool plain = h1 & 0x200;
            unsigned op = (h1 >> 4) & 31;
            if (!plain && rd == 15 && (op & 1) && ((op >> 1) == 0 || (op >> 1) == 4 || (op >> 1) == 8 ||
                                                   (op >> 1) == 13)) { // TST, TEQ, CMN, CMP
                o->src = bit(rn);
                set(o, core, C_ALU, K_ONE, 0);
                return;
            }
            dp(o, core, rd, bit(rn));
            if (plain && (op == 0x12 || op == 0x1a) && (h2 & 0x70c0) == 0) {
                o->cls = C_DSP; // SSAT16, USAT16
            }
            return;
        }
        // branches and miscellaneous control
        unsigned b = (h2 >> 12) & 7;
        if ((b & 5) == 0) { // B<cc>.W or miscellaneous
            if (((h1 >> 7) & 7) != 7) {
                o->flags |= F_WRITES_PC | F_COND;
                set(o, core, C_BRANCH, K_BCOND, 0);
                return;
            }
            unsigned m = (h1 >> 4) & 0x7f;
            if ((m & 0x7e) == 0x38) { // MSR
                o->src = bit(rn);
                set(o, core, C_SYS, K_MSR, 0);
            } else if (m == 0x3a) { // hints
                unsigned hint = h2 & 0xff;
                set(o, core, C_SYS, (hint == 2 || hint == 3) ? K_WFX : K_ONE, 0);
            } else if (m == 0x3b) { // CLREX, DSB, DMB, ISB
                unsigned opt = (h2 >> 4) & 15;
                set(o, core, C_SYS, opt == 6 ? K_ISB : (opt == 4 || opt == 5) ? K_BARRIER : K_ONE, 0);
            } else if ((m & 0x7e) == 0x3e) { // MRS
                o->dst = bit(rd);
                set(o, core, C_SYS, K_MRS, 0);
            } else {
                o->flags |= F_NOTIME;
                set(o, core, C_SYS, K_NOTIME, 0);
            }
            return;
        }
        if ((b & 5) == 1) { // B.W
            o->flags |= F_WRITES_PC;
            set(o, core, C_BRANCH, K_B, 0);
            return;
        }
        if ((b & 5) == 5) { // BL
            o->flags |= F_WRITES_PC;
            o->dst = bit(REG_LR);
            set(o, core, C_BRANCH, K_BL, 0);
            return;
        }
        o->flags |= F_NOTIME;
        set(o, core, C_OTHER, K_NOTIME, 0);
        return;
    } else if (op1 == 3) {
        if ((op2 & 0x71) == 0x00 || ((op2 & 0x67) != 0x67 && (op2 & 0x61) == 0x01)) { // load/store single
            bool load = op2 & 1;
            unsigned size = (h1 >> 5) & 3;
            bool regoff = !(h1 & 0x80) && rn != 15 && ((h2 >> 6) & 0x3f) == 0;
            bool imm8 = !(h1 & 0x80) && (h2 & 0x800);
            bool wb = imm8 && (h2 & 0x100);
            o->addr = (uint16_t)(bit(rn) | (regoff ? bit(rm) : 0));
            o->flags |= F_MEM | (regoff ? F_REGOFF : 0);
            if (load) {
                o->src = o->addr;
                if (rn == 15) {
                    o->flags |= F_LITERAL;
                }
                if (rt == 15 && size != 2) { // PLD, PLI: a hint
                    o->flags &= (uint16_t)~F_MEM;
                    set(o, core, C_SYS, K_ONE, 0);
                    return;
                }
                o->dst = (uint16_t)(bit(rt) | (wb ? bit(rn) : 0));
                if (rt == 15) {
                    o->dst = wb ? bit(rn) : 0;
                    o->flags |= F_WRITES_PC | F_LOADS_PC;
                    set(o, core, C_BRANCH, K_LDR_PC, 0);
                    return;
                }
                o->flags |= F_LOAD1;
                set(o, core, C_LOAD, K_LOAD, 0);
            } else {
                o->src = (uint16_t)(o->addr | bit(rt));
                o->dst = wb ? bit(rn) : 0;
                o->flags |= F_STORE1;
                set(o, core, C_STORE, regoff ? K_STR_REG : K_STR_IMM, 0);
            }
            return;
        }
        if ((op2 & 0x70) == 0x20) { // data processing (register): shifts, extends, parallel, misc
            unsigned a = (h1 >> 4) & 15, c = (h2 >> 4) & 15;
            uint16_t src = (uint16_t)(bit(rn) | bit(rm));
            dp(o, core, rd, src);
            if ((a & 8) && (c & 8) == 0) {
                o->cls = C_DSP; // parallel add/subtract
            } else if ((a & 0xc) == 8 && (c & 0xc) == 8 && (a & 3) == 0) {
                o->cls = C_DSP; // QADD, QDADD, QSUB, QDSUB
            } else if ((a & 0xc) == 8 && (c & 0xc) == 8 && (a & 3) == 2) {
                o->cls = C_DSP; // SEL
            } else if ((c & 8) && (a & 8) == 0 && ((a >> 1) == 1 || (a >> 1) == 2 || a == 2 || a == 3)) {
                o->cls = C_DSP; // SXTB16, UXTB16 and their accumulating forms
            }
            return;
        }
        if ((op2 & 0x78) == 0x30) { // multiply, multiply accumulate, absolute difference
            unsigned a = (h1 >> 4) & 7, c = (h2 >> 4) & 3;
            uint16_t src = (uint16_t)(bit(rn) | bit(rm) | (rt != 15 ? bit(rt) : 0));
            dp(o, core, rd, src);
            if (a == 0) {
                if (rt == 15 && c == 0) {
                    set(o, core, C_MUL, K_MUL, 0);
                } else {
                    set(o, core, C_MUL, K_MLA, 0);
                }
            } else {
                set(o, core, C_DSP, K_DSPMUL, 0);
            }
            return;
        }
        if ((op2 & 0x78) == 0x38) { // long multiply, long multiply accumulate, divide
            unsigned a = (h1 >> 4) & 7, c = (h2 >> 4) & 15;
            o->src = (uint16_t)(bit(rn) | bit(rm));
            o->flags |= F_DP;
            if (a == 1 || a == 3) { // SDIV, UDIV
                o->dst = bit(rd);
                set(o, core, C_DIV, K_DIV, 0);
                return;
            }
            o->dst = (uint16_t)(bit(rt) | bit(rd));
            if (a >= 4) {
                o->src |= (uint16_t)(bit(rt) | bit(rd)); // accumulators
            }
            if ((a == 0 || a == 2) && c == 0) {
                set(o, core, C_MULL, K_MULL, 0);
            } else if ((a == 4 || a == 6) && c == 0) {
                set(o, core, C_MULL, K_MLAL, 0);
            } else {
                set(o, core, C_MULL, core == CORE_M3 ? K_MLAL : K_DSPMUL, 0); // UMAAL, SMLALxy, SMLALD, SMLSLD
            }
            return;
        }
        if (op2 & 0x40) {
            decode_fp(core, h1, h2, o);
            return;
        }
    }
    set(o, core, C_OTHER, K_ONE, 0);
}

void thumb_decode(core_t core, uint16_t hw1, uint16_t hw2, insn_t *out) {
    memset(out, 0, sizeof *out);
    if (thumb_is_32bit(hw1)) {
        out->size = 4;
        decode32(core, hw1, hw2, out);
    } else {
        out->size = 2;
        decode16(core, hw1, out);
    }
}
