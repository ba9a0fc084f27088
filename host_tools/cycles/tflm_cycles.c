// A QEMU TCG plugin that estimates the cycles a Cortex-M0, M0+, M3 or M4
// would take for the code QEMU runs: every executed instruction is counted
// by class, and the cycles its core's Technical Reference Manual gives are
// added (thumb.c holds the tables). What depends on execution is taken from
// it: whether a branch was taken (the next block's address), the pipeline
// refill of an ARMv7-M branch (the target's alignment and width), whether a
// conditional load or store in an IT block ran, the address of unaligned
// accesses, and the accesses to a flash region (instruction fetches and data
// reads through a modelled cache), reported apart from the cycles.
//
//   qemu-system-arm ... -plugin libtflm_cycles.so,core=m3,mark=0x1234,out=FILE
//
// Arguments: core=m0|m0plus|m3|m4; mark=ADDR (up to 128): each time the
// instruction at ADDR is about to run, a line with the counts so far (that
// instruction excluded) is written to `out` (default: QEMU's log, -d plugin);
// flash=BASE:SIZE (up to 4 regions) with icache=LINES:BYTES:WAYS and
// dcache=... (a data cache; dcache=unified shares the instruction cache): the
// flash regions' accesses; profile=1: at each mark, also a line per
// translated block that ran since the previous mark ("block ADDR END
// cycles=N runs=N", nominal cycles: its own, a taken branch into it (so a
// call's branch counts in the function called, a return's in the caller),
// its unaligned and conditional accesses; a marked block's instructions
// from the mark on in the next span, as the marks count them), for a
// profile by function: each span's lines add up to the difference of its
// marks' nominal cycles.
//
// Counts come in three figures: nominal (the TRM's figure, its ranges read
// as documented in docs/speed.md), least and most (the ends of the TRM's
// ranges: early-terminating multiplies, divides, the refill P, IT folding,
// load/store pipelining). QEMU 7.2's plugin interface reads no register, so
// operand-dependent timings are bounds, with the worst case as nominal.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin.h"
#include "thumb.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

// -- counters -------------------------------------------------------------------

enum {
    E_TAKEN,      // branches taken
    E_PIPELINED,  // loads/stores that pipelined behind a load (one cycle saved)
    E_INTERLOCK,  // loads/stores whose address waited for the previous instruction's result
    E_FOLDED,     // IT instructions folded behind a 16-bit instruction
    E_UNALIGNED,  // unaligned accesses (their penalty cycles are in the totals)
    E_FPSTALL,    // FP results read by the next instruction (one cycle)
    E_PUSH_LR,    // PUSH with LR (N counts LR)
    E_POP_PC,     // POP with PC, executed
    E_FLASH_I,    // instruction cache lookups of flash lines
    E_FLASH_IMISS,
    E_FLASH_D,    // data reads from flash
    E_FLASH_DMISS,
    E_COUNT
};
static const char *const event_names[E_COUNT] = {
    "taken", "pipelined", "interlock", "folded", "unaligned", "fpstall", "push_lr", "pop_pc",
    "flash_i", "flash_imiss", "flash_d", "flash_dmiss",
};

typedef struct {
    uint64_t insns, nom, min, max;
    uint64_t n[C_COUNT], cyc[C_COUNT]; // per class: executed, nominal cycles
    uint64_t ev[E_COUNT];
} counts_t;

static counts_t totals;

static void counts_add(counts_t *a, const counts_t *b) {
    uint64_t *x = (uint64_t *)a;
    const uint64_t *y = (const uint64_t *)b;
    for (size_t i = 0; i < sizeof(counts_t) / sizeof(uint64_t); ++i) {
        x[i] += y[i];
    }
}

static void counts_sub(counts_t *a, const counts_t *b) {
    uint64_t *x = (uint64_t *)a;
    const uint64_t *y = (const uint64_t *)b;
    for (size_t i = 0; i < sizeof(counts_t) / sizeof(uint64_t); ++i) {
        x[i] -= y[i];
    }
}

// -- configuration --------------------------------------------------------------

#define MAX_MARKS 128
static core_t core;
static bool v7m;
static uint64_t marks[MAX_MARKS];
static int n_marks;
static FILE *out;
static uint64_t mark_seq;
static bool profile;
static struct block **prof_blocks; // every block translated, for the profile's lines
static size_t prof_n, prof_cap;

// A set-associative LRU cache of flash lines (tags only).
typedef struct {
    uint32_t lines, line_bytes, ways, sets;
    uint64_t *tag;  // sets * ways, most recent first; UINT64_MAX empty
} cache_t;

#define MAX_REGIONS 4
static bool flash_on;
static uint64_t flash_base[MAX_REGIONS], flash_size[MAX_REGIONS];
static int n_regions;
static cache_t icache, dcache_own;
static cache_t *dcache;

static bool in_flash(uint64_t a) {
    for (int i = 0; i < n_regions; ++i) {
        if (a - flash_base[i] < flash_size[i]) {
            return true;
        }
    }
    return false;
}

static bool cache_parse(const char *v, cache_t *c) {
    unsigned lines, bytes, ways;
    if (sscanf(v, "%u:%u:%u", &lines, &bytes, &ways) != 3 || !lines || !bytes || !ways || lines % ways ||
        (bytes & (bytes - 1))) {
        return false;
    }
    c->lines = lines;
    c->line_bytes = bytes;
    c->ways = ways;
    c->sets = lines / ways;
    c->tag = malloc(sizeof(uint64_t) * lines);
    for (unsigned i = 0; i < lines; ++i) {
        c->tag[i] = UINT64_MAX;
    }
    return true;
}

// Looks a line up; true on a hit. The set's tags move so the line is first.
static bool cache_lookup(cache_t *c, uint64_t addr) {
    uint64_t line = addr / c->line_bytes;
    uint64_t *set = c->tag + (line % c->sets) * c->ways;
    unsigned i = 0;
    while (i < c->ways && set[i] != line) {
        ++i;
    }
    bool hit = i < c->ways;
    if (!hit) {
        i = c->ways - 1;
    }
    memmove(set + 1, set, i * sizeof(uint64_t));
    set[0] = line;
    return hit;
}

// -- per block and per instruction records ----------------------------------------

// What the plugin keeps of an instruction for its neighbour.
typedef struct {
    insn_t d;
    bool cond; // conditional: in an IT block, or B<cc>/CBZ/CBNZ
} slot_t;

typedef struct block {
    uint64_t vaddr, end;   // first byte, and the address after the last instruction
    counts_t stat;         // the block's counts when it runs to its end (a branch: not taken)
    // The branch ending the block, if any.
    bool branch, cond, loads_pc, refill;
    uint8_t taken_nom, taken_min, taken_max; // cycles a taken branch adds, before the refill
    uint8_t branch_cls;
    bool pop_pc;           // a conditional POP {..., PC}: counted when taken
    // Neighbours across blocks (a block that ends without a branch).
    slot_t head, tail;
    uint8_t first_size;
    bool flash; // fetched from the flash region
    uint64_t prof_cycles, prof_runs; // since the last mark (profile=1)
} block_t;

typedef struct {
    counts_t suffix; // counts of the marked instruction and those after it in its block
    uint64_t pc;
    block_t *block;  // the block holding it
} mark_t;

typedef struct {
    uint8_t per_access; // cycles a conditional instruction's access adds when it runs
    bool check_align;   // M3/M4 single load/store: unaligned penalty
    bool skip_extra;    // conditional: the access means the instruction ran
    uint8_t cls;
} memop_t;

static const block_t *prev_block;

// Refill P of a taken ARMv7-M branch into `b`: 3 when the PC came from
// memory, else 1, or 2 when the target is a 32-bit instruction straddling
// a word boundary (two fetches).
static int refill(const block_t *from, const block_t *to, int *lo, int *hi) {
    *lo = 1;
    *hi = 3;
    if (from->loads_pc) {
        return 3;
    }
    return (to->first_size == 4 && (to->vaddr & 2)) ? 2 : 1;
}

// Cycles the pair (a, b) of neighbouring instructions changes b's cost by,
// nominal, least and most; events counted into c.
static void pair(const slot_t *a, const slot_t *b, int *dn, int *dl, int *dh, counts_t *c) {
    *dn = *dl = *dh = 0;
    if (!v7m) {
        return;
    }
    const insn_t *x = &a->d, *y = &b->d;
    if ((y->flags & F_IT) && !(x->flags & F_WRITES_PC)) {
        if (x->size == 2) { // folded onto a preceding 16-bit instruction
            *dn = -1;
            c->ev[E_FOLDED]++;
        }
    }
    if ((y->flags & (F_LOAD1 | F_STORE1)) && (x->flags & F_LOAD1) && !a->cond && !b->cond && !(x->dst & y->addr)) {
        // LDR pipelines into a following LDR or STR whose address does not need its result
        if (y->cyc > 1) {
            *dn -= 1;
        }
        if (y->cyc_min > 1) {
            *dl -= 1;
        }
        c->ev[E_PIPELINED]++;
    }
    if ((y->flags & F_MEM) && (x->flags & F_DP) && (x->dst & y->addr)) {
        // no forwarding path from a data-processing result to an address
        *dn += 1;
        *dl += 1;
        *dh += 1;
        c->ev[E_INTERLOCK]++;
    }
    if ((x->flags & F_FPARITH) && (x->fdst & y->fsrc)) {
        *dn += 1;
        *dl += 1;
        *dh += 1;
        c->ev[E_FPSTALL]++;
    }
}

static void add_pair_to(counts_t *c, const slot_t *b, int dn, int dl, int dh) {
    c->nom += (uint64_t)(int64_t)dn;
    c->min += (uint64_t)(int64_t)dl;
    c->max += (uint64_t)(int64_t)dh;
    c->cyc[b->d.cls] += (uint64_t)(int64_t)dn;
}

static void vcpu_tb_exec(unsigned int vcpu, void *udata) {
    (void)vcpu;
    block_t *b = udata;
    const block_t *p = prev_block;
    uint64_t before = totals.nom;
    if (p != NULL) {
        bool seq = b->vaddr == p->end;
        if (p->branch) {
            bool taken = !p->cond || !seq;
            if (taken) {
                int lo = 0, hi = 0, pn = 0;
                if (p->refill) {
                    pn = refill(p, b, &lo, &hi);
                }
                totals.nom += p->taken_nom + (uint64_t)pn;
                totals.min += p->taken_min + (uint64_t)lo;
                totals.max += p->taken_max + (uint64_t)hi;
                totals.cyc[p->branch_cls] += p->taken_nom + (uint64_t)pn;
                totals.ev[E_TAKEN]++;
                if (p->pop_pc) {
                    totals.ev[E_POP_PC]++;
                }
            }
        } else if (seq) {
            int dn, dl, dh;
            pair(&p->tail, &b->head, &dn, &dl, &dh, &totals);
            add_pair_to(&totals, &b->head, dn, dl, dh);
        }
    }
    counts_add(&totals, &b->stat);
    if (b->flash) {
        for (uint64_t a = b->vaddr & ~(uint64_t)(icache.line_bytes - 1); a < b->end; a += icache.line_bytes) {
            totals.ev[E_FLASH_I]++;
            if (!cache_lookup(&icache, a)) {
                totals.ev[E_FLASH_IMISS]++;
            }
        }
    }
    if (profile) {
        b->prof_cycles += totals.nom - before;
        b->prof_runs++;
    }
    prev_block = b;
}

static void vcpu_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata) {
    (void)vcpu;
    const memop_t *m = udata;
    if (m->skip_extra) {
        totals.nom += m->per_access;
        totals.min += m->per_access;
        totals.max += m->per_access;
        totals.cyc[m->cls] += m->per_access;
        if (profile && prev_block) {
            ((block_t *)prev_block)->prof_cycles += m->per_access;
        }
    }
    if (m->check_align) {
        unsigned size = 1u << qemu_plugin_mem_size_shift(info);
        unsigned extra = 0;
        if (size == 4 && (vaddr & 3)) {
            extra = (vaddr & 1) ? 2 : 1;
        } else if (size == 2 && (vaddr & 1)) {
            extra = 1;
        }
        if (extra) {
            totals.nom += extra;
            totals.min += extra;
            totals.max += extra;
            totals.cyc[m->cls] += extra;
            totals.ev[E_UNALIGNED]++;
            if (profile && prev_block) {
                ((block_t *)prev_block)->prof_cycles += extra;
            }
        }
    }
    if (flash_on && !qemu_plugin_mem_is_store(info) && in_flash(vaddr)) {
        totals.ev[E_FLASH_D]++;
        if (!cache_lookup(dcache, vaddr)) {
            totals.ev[E_FLASH_DMISS]++;
        }
    }
}

// A line of output: to `out`, else to QEMU's log (as the marks').
static void put_line(const char *line) {
    if (out) {
        fputs(line, out);
    } else {
        qemu_plugin_outs(line);
    }
}

static void print_counts(const char *what, uint64_t seq, uint64_t pc, const counts_t *c) {
    char line[2048];
    int n = snprintf(line, sizeof line, "%s %" PRIu64 " pc=0x%" PRIx64 " insns=%" PRIu64 " cycles=%" PRIu64
                     " min=%" PRIu64 " max=%" PRIu64, what, seq, pc, c->insns, c->nom, c->min, c->max);
    for (int i = 0; i < C_COUNT && n < (int)sizeof line; ++i) {
        n += snprintf(line + n, sizeof line - (size_t)n, " n.%s=%" PRIu64 " c.%s=%" PRIu64, iclass_names[i], c->n[i],
                      iclass_names[i], c->cyc[i]);
    }
    for (int i = 0; i < E_COUNT && n < (int)sizeof line; ++i) {
        n += snprintf(line + n, sizeof line - (size_t)n, " %s=%" PRIu64, event_names[i], c->ev[i]);
    }
    if (n < (int)sizeof line - 1) {
        line[n++] = '\n';
        line[n] = 0;
    }
    put_line(line);
    if (out) {
        fflush(out);
    }
}

static void vcpu_mark(unsigned int vcpu, void *udata) {
    (void)vcpu;
    const mark_t *m = udata;
    counts_t now = totals;
    counts_sub(&now, &m->suffix);
    print_counts("mark", mark_seq++, m->pc, &now);
    if (profile) {
        // The marked block's instructions from the mark on run after it, as
        // the mark's counts have them: they go to the next span.
        m->block->prof_cycles -= m->suffix.nom;
        for (size_t i = 0; i < prof_n; ++i) {
            block_t *b = prof_blocks[i];
            if (b->prof_runs || b->prof_cycles) {
                char line[128];
                snprintf(line, sizeof line, "block 0x%" PRIx64 " 0x%" PRIx64 " cycles=%" PRIu64 " runs=%" PRIu64 "\n",
                         b->vaddr, b->end, b->prof_cycles, b->prof_runs);
                put_line(line);
                b->prof_cycles = b->prof_runs = 0;
            }
        }
        m->block->prof_cycles = m->suffix.nom;
        if (out) {
            fflush(out);
        }
    }
}

// The instruction's own counts, as the block adds them.
static void own_counts(counts_t *c, const slot_t *s, bool last_branch) {
    const insn_t *d = &s->d;
    c->insns++;
    c->n[d->cls]++;
    int nom = d->cyc, lo = d->cyc_min, hi = d->cyc_max;
    if (d->flags & F_IT) {
        lo = 0; // may fold (the neighbour rule takes the nominal cycle off)
    }
    if (last_branch && s->cond) {
        nom = lo = hi = d->cyc_skip; // the taken part is added when the next block shows it
    } else if (s->cond && (d->flags & F_MEM)) {
        nom = lo = hi = d->cyc_skip; // the accesses add the rest when it runs
    } else if (s->cond) {
        lo = d->cyc_skip;
    }
    if ((d->flags & F_LITERAL) && v7m) {
        hi += 1; // "might add a cycle because of contention with the fetch unit"
    }
    if (d->flags & F_PUSH_LR) {
        c->ev[E_PUSH_LR]++;
    }
    if ((d->flags & F_POP_PC) && !s->cond) {
        c->ev[E_POP_PC]++;
    }
    c->nom += (uint64_t)nom;
    c->min += (uint64_t)lo;
    c->max += (uint64_t)hi;
    c->cyc[d->cls] += (uint64_t)nom;
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    if (n == 0) {
        return;
    }
    block_t *b = calloc(1, sizeof *b);
    slot_t *slots = calloc(n, sizeof *slots);
    counts_t *own = calloc(n, sizeof *own); // per instruction, neighbour rule included
    b->vaddr = qemu_plugin_tb_vaddr(tb);
    int it_left = 0;
    for (size_t i = 0; i < n; ++i) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        const uint8_t *bytes = qemu_plugin_insn_data(insn);
        // The bytes QEMU read for the instruction: before an instruction
        // that crosses a page, the block's last one also holds the halfword
        // QEMU looked ahead at (6 bytes), so the size is the decoder's.
        size_t read = qemu_plugin_insn_size(insn);
        uint16_t hw1 = (uint16_t)(bytes[0] | bytes[1] << 8);
        uint16_t hw2 = read >= 4 ? (uint16_t)(bytes[2] | bytes[3] << 8) : 0;
        slot_t *s = &slots[i];
        thumb_decode(core, hw1, hw2, &s->d);
        size_t size = s->d.size;
        s->cond = (s->d.flags & F_COND) || it_left > 0;
        if (it_left > 0) {
            --it_left;
        }
        if (s->d.flags & F_IT) {
            it_left = 4 - __builtin_ctz(s->d.it_mask & 15u);
        }
        bool last = i + 1 == n;
        bool branch = (s->d.flags & F_WRITES_PC) && last;
        own_counts(&own[i], s, branch);
        if (i > 0) {
            int dn, dl, dh;
            pair(&slots[i - 1], s, &dn, &dl, &dh, &own[i]);
            add_pair_to(&own[i], s, dn, dl, dh);
        }
        if (branch) {
            b->branch = true;
            b->cond = s->cond;
            b->loads_pc = s->d.flags & F_LOADS_PC;
            b->refill = s->d.refill;
            b->branch_cls = s->d.cls;
            b->pop_pc = s->cond && (s->d.flags & F_POP_PC);
            int skip = s->d.cyc_skip;
            b->taken_nom = (uint8_t)(s->cond ? s->d.cyc - skip : 0);
            b->taken_min = (uint8_t)(s->cond ? s->d.cyc_min - skip : 0);
            b->taken_max = (uint8_t)(s->cond ? s->d.cyc_max - skip : 0);
        }
        // Memory callbacks: conditional accesses, unaligned accesses, flash reads.
        bool mem = s->d.flags & F_MEM;
        bool cond_mem = mem && s->cond && !(s->d.flags & F_WRITES_PC);
        bool align = mem && v7m && (s->d.flags & (F_LOAD1 | F_STORE1));
        if (mem && (cond_mem || align || flash_on)) {
            memop_t *m = calloc(1, sizeof *m);
            m->cls = s->d.cls;
            m->check_align = align;
            m->skip_extra = cond_mem;
            if (cond_mem) {
                unsigned accesses = s->d.cls == C_MULTI ? (s->d.nregs ? s->d.nregs : 1) : 1;
                unsigned extra = s->d.cyc > s->d.cyc_skip ? s->d.cyc - s->d.cyc_skip : 0;
                m->per_access = (uint8_t)(extra / accesses);
            }
            qemu_plugin_register_vcpu_mem_cb(insn, vcpu_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, m);
        }
        b->end = qemu_plugin_insn_vaddr(insn) + size;
        if (i == 0) {
            b->first_size = (uint8_t)size;
        }
    }
    b->head = slots[0];
    b->tail = slots[n - 1];
    b->flash = in_flash(b->vaddr);
    for (size_t i = 0; i < n; ++i) {
        counts_add(&b->stat, &own[i]);
    }
    // Marks: the counts from the marked instruction to the block's end come
    // off the totals the block added as it started.
    for (size_t i = 0; i < n; ++i) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t pc = qemu_plugin_insn_vaddr(insn);
        for (int k = 0; k < n_marks; ++k) {
            if (marks[k] == pc) {
                mark_t *m = calloc(1, sizeof *m);
                m->pc = pc;
                m->block = b;
                for (size_t j = i; j < n; ++j) {
                    counts_add(&m->suffix, &own[j]);
                }
                qemu_plugin_register_vcpu_insn_exec_cb(insn, vcpu_mark, QEMU_PLUGIN_CB_NO_REGS, m);
            }
        }
    }
    b->stat.insns = n;
    if (profile) {
        if (prof_n == prof_cap) {
            prof_cap = prof_cap ? 2 * prof_cap : 1024;
            prof_blocks = realloc(prof_blocks, prof_cap * sizeof *prof_blocks);
            if (!prof_blocks) {
                fprintf(stderr, "tflm_cycles: out of memory for the profile\n");
                abort();
            }
        }
        prof_blocks[prof_n++] = b;
    }
    free(own);
    free(slots);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, vcpu_tb_exec, QEMU_PLUGIN_CB_NO_REGS, b);
}

static void plugin_exit(qemu_plugin_id_t id, void *p) {
    (void)id;
    (void)p;
    print_counts("end", mark_seq, 0, &totals);
    if (out) {
        fclose(out);
        out = NULL;
    }
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    bool have_core = false;
    const char *dcache_arg = NULL;
    if (strcmp(info->target_name, "arm") != 0) {
        fprintf(stderr, "tflm_cycles: an Arm target is needed, not %s\n", info->target_name);
        return -1;
    }
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i];
        const char *eq = strchr(a, '=');
        if (!eq) {
            fprintf(stderr, "tflm_cycles: argument %s is not key=value\n", a);
            return -1;
        }
        size_t klen = (size_t)(eq - a);
        const char *v = eq + 1;
        if (klen == 4 && !strncmp(a, "core", 4)) {
            have_core = true;
            if (!strcmp(v, "m0")) {
                core = CORE_M0;
            } else if (!strcmp(v, "m0plus")) {
                core = CORE_M0PLUS;
            } else if (!strcmp(v, "m3")) {
                core = CORE_M3;
            } else if (!strcmp(v, "m4")) {
                core = CORE_M4;
            } else {
                fprintf(stderr, "tflm_cycles: core=%s: m0, m0plus, m3 or m4\n", v);
                return -1;
            }
        } else if (klen == 4 && !strncmp(a, "mark", 4)) {
            if (n_marks == MAX_MARKS) {
                fprintf(stderr, "tflm_cycles: at most %d marks\n", MAX_MARKS);
                return -1;
            }
            marks[n_marks++] = strtoull(v, NULL, 0) & ~1ull;
        } else if (klen == 3 && !strncmp(a, "out", 3)) {
            out = fopen(v, "w");
            if (!out) {
                fprintf(stderr, "tflm_cycles: cannot write %s\n", v);
                return -1;
            }
        } else if (klen == 5 && !strncmp(a, "flash", 5)) {
            char *end;
            if (n_regions == MAX_REGIONS) {
                fprintf(stderr, "tflm_cycles: at most %d flash regions\n", MAX_REGIONS);
                return -1;
            }
            flash_base[n_regions] = strtoull(v, &end, 0);
            if (*end != ':') {
                fprintf(stderr, "tflm_cycles: flash=BASE:SIZE\n");
                return -1;
            }
            flash_size[n_regions] = strtoull(end + 1, NULL, 0);
            flash_on = flash_on || flash_size[n_regions] > 0;
            ++n_regions;
        } else if (klen == 6 && !strncmp(a, "icache", 6)) {
            if (!cache_parse(v, &icache)) {
                fprintf(stderr, "tflm_cycles: icache=LINES:BYTES:WAYS\n");
                return -1;
            }
        } else if (klen == 6 && !strncmp(a, "dcache", 6)) {
            dcache_arg = v;
        } else if (klen == 7 && !strncmp(a, "profile", 7)) {
            if (strcmp(v, "0") && strcmp(v, "1")) {
                fprintf(stderr, "tflm_cycles: profile=0|1\n");
                return -1;
            }
            profile = !strcmp(v, "1");
        } else {
            fprintf(stderr, "tflm_cycles: unknown argument %s\n", a);
            return -1;
        }
    }
    if (!have_core) {
        fprintf(stderr, "tflm_cycles: core=m0|m0plus|m3|m4 is needed\n");
        return -1;
    }
    v7m = core == CORE_M3 || core == CORE_M4;
    if (flash_on) {
        if (!icache.tag) {
            fprintf(stderr, "tflm_cycles: flash= needs icache=LINES:BYTES:WAYS\n");
            return -1;
        }
        if (dcache_arg == NULL || !strcmp(dcache_arg, "unified")) {
            dcache = &icache;
        } else if (cache_parse(dcache_arg, &dcache_own)) {
            dcache = &dcache_own;
        } else {
            fprintf(stderr, "tflm_cycles: dcache=LINES:BYTES:WAYS or unified\n");
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, vcpu_tb_trans);
    qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
    return 0;
}
