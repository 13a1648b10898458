/* llvm_checks.c - what the renderer compiles into kernels beyond the
 * program itself: loops that poll the interrupt flag, and the bounds checks
 * of checked kernels (see llvm_render_int.h and backend.h).
 *
 * Interrupts: the flag is the global @uopdb.interrupt, which the JIT binds
 * to uopdb_interrupt_flag() (llvm_jit.c); a poll is a volatile load and a
 * branch to a shared `ret void`.  Polls stay out of the loops LLVM
 * vectorises: an outermost loop with loops inside polls once per iteration,
 * one without polls once before it starts, and a loop without inner loops
 * whose end is not a constant <= 65536 runs in chunks, the chunk loop
 * polling and the counted loop inside it unchanged.
 *
 * Checks: every LOAD/STORE through an INDEX into a buffer of known size
 * compares the element offset with the size; outside, the kernel writes a
 * KernelRawReport (the site, the offset, the open loops' counters) through
 * its hidden report parameter and returns. */
#include "llvm_render_int.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/range_arg.h"
#include "../util/interrupt.h"

#define CHUNK 65536

/* ---- the loop structure, scanned before rendering ---- */

bool lr_scan_loops(Render *r, const UOp *const *lst, size_t n) {
    const UOp **open = calloc(n + 1, sizeof *open);
    r->outer = calloc(n + 1, sizeof *r->outer);
    if (!open || !r->outer) {
        free(open);
        lr_fail(r, NULL, "out of memory");
        return false;
    }
    int nopen = 0;
    for (size_t i = 0; i < n; i++) {
        const UOp *u = lst[i];
        if (uop_op(u) == OP_RANGE) {
            if (nopen && (!r->nouter || r->outer[r->nouter - 1] != open[nopen - 1])) {
                bool seen = false;
                for (int k = 0; k < r->nouter && !seen; k++) seen = r->outer[k] == open[nopen - 1];
                if (!seen) r->outer[r->nouter++] = open[nopen - 1];
            }
            open[nopen++] = u;
        } else if (uop_op(u) == OP_END) {
            for (int s = 0; s < u->nsrc; s++)
                for (int k = nopen - 1; k >= 0; k--)
                    if (open[k] == u->src[s]) {
                        memmove(&open[k], &open[k + 1], (size_t)(nopen - k - 1) * sizeof *open);
                        nopen--;
                        break;
                    }
        }
    }
    free(open);
    return true;
}

static bool has_inner_loops(const Render *r, const UOp *u) {
    for (int k = 0; k < r->nouter; k++)
        if (r->outer[k] == u) return true;
    return false;
}

/* ---- the shared early return and the interrupt poll ---- */

static LLVMBasicBlockRef bail_block(Render *r) {
    if (!r->bail) {
        r->bail = LLVMAppendBasicBlockInContext(r->ctx, r->fn, "bail");
        LLVMBuilderRef b = LLVMCreateBuilderInContext(r->ctx);
        LLVMPositionBuilderAtEnd(b, r->bail);
        LLVMBuildRetVoid(b);
        LLVMDisposeBuilder(b);
    }
    return r->bail;
}

/* cond, marked as expected to be `likely` for the optimiser's block layout */
static LLVMValueRef expect(Render *r, LLVMValueRef cond, bool likely) {
    const char *name = "llvm.expect";
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) return cond;
    LLVMTypeRef i1 = LLVMInt1TypeInContext(r->ctx);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(r->mod, id, &i1, 1);
    LLVMTypeRef fty = LLVMIntrinsicGetType(r->ctx, id, &i1, 1);
    LLVMValueRef args[2] = {cond, LLVMConstInt(i1, likely, 0)};
    return LLVMBuildCall2(r->b, fty, fn, args, 2, "");
}

static LLVMValueRef interrupt_flag(Render *r) {
    LLVMValueRef g = LLVMGetNamedGlobal(r->mod, LLVM_INTERRUPT_SYMBOL);
    if (!g) {
        g = LLVMAddGlobal(r->mod, LLVMIntTypeInContext(r->ctx, 8 * sizeof(sig_atomic_t)), LLVM_INTERRUPT_SYMBOL);
        LLVMSetLinkage(g, LLVMExternalLinkage);
    }
    return g;
}

/* if the interrupt flag is set, return; u names the blocks */
static void poll_interrupt(Render *r, const UOp *u) {
    if (r->ptx) return;   /* a GPU kernel cannot see the host's flag */
    LLVMTypeRef it = LLVMIntTypeInContext(r->ctx, 8 * sizeof(sig_atomic_t));
    LLVMValueRef f = LLVMBuildLoad2(r->b, it, interrupt_flag(r), "");
    LLVMSetVolatile(f, 1);
    LLVMSetAlignment(f, (unsigned)sizeof(sig_atomic_t));
    LLVMValueRef stop = expect(r, LLVMBuildICmp(r->b, LLVMIntNE, f, LLVMConstNull(it), ""), false);
    LLVMBasicBlockRef go = lr_new_block(r, "go", u);
    LLVMBuildCondBr(r->b, stop, bail_block(r), go);
    LLVMPositionBuilderAtEnd(r->b, go);
}

/* ---- loops ---- */

/* the RANGE's entry in the signature's ranges (checked kernels), -1 on OOM */
static int add_range(Render *r, const UOp *u) {
    KernelSignature *sig = r->sig;
    if (sig->nranges == r->cap_ranges) {
        int cap = r->cap_ranges ? 2 * r->cap_ranges : 16;
        KernelRangeInfo *a = realloc(sig->ranges, (size_t)cap * sizeof *a);
        if (!a) {
            lr_fail(r, NULL, "out of memory");
            return -1;
        }
        sig->ranges = a, r->cap_ranges = cap;
    }
    KernelRangeInfo *ri = &sig->ranges[sig->nranges];
    ri->id = u->id;
    range_label(u, ri->name, sizeof ri->name);
    return sig->nranges++;
}

LLVMValueRef lr_open_loop(Render *r, const UOp *u, LLVMValueRef end, const char *nm) {
    bool uns = dt_is_unsigned(u->src[0]->dtype);
    LLVMIntPredicate lt = uns ? LLVMIntULT : LLVMIntSLT;
    LLVMTypeRef t = LLVMTypeOf(end);
    bool outermost = true;
    for (int k = 0; k < r->depth; k++)
        if (uop_op(r->stack[k].op) == OP_RANGE) outermost = false;
    bool inner = has_inner_loops(r, u);
    int64_t n;
    bool small = uop_const_int_value(u->src[0], &n) && n <= CHUNK;
    bool chunked = !inner && !small && LLVMGetIntTypeWidth(t) >= 32;
    Block bl = {.op = u, .range_slot = -1};
    if (r->checked && (bl.range_slot = add_range(r, u)) < 0) return NULL;
    if (outermost && !inner && !chunked) poll_interrupt(r, u);

    LLVMValueRef start = LLVMConstNull(t), limit = end;
    LLVMBasicBlockRef exit = lr_new_block(r, "loop_exit", u);
    if (chunked) {
        /* for c = 0; c < end; c = c_end: poll, c_end = end - c > CHUNK ? c + CHUNK : end, then the loop c..c_end */
        LLVMBasicBlockRef from = LLVMGetInsertBlock(r->b);
        bl.chunk_head = lr_new_block(r, "chunk", u);
        bl.chunk_next = lr_new_block(r, "chunk_next", u);
        LLVMBuildBr(r->b, bl.chunk_head);
        LLVMPositionBuilderAtEnd(r->b, bl.chunk_head);
        bl.chunk = LLVMBuildPhi(r->b, t, "");
        LLVMAddIncoming(bl.chunk, &start, &from, 1);
        LLVMBasicBlockRef chunk_body = lr_new_block(r, "chunk_body", u);
        LLVMBuildCondBr(r->b, LLVMBuildICmp(r->b, lt, bl.chunk, end, ""), chunk_body, exit);
        LLVMPositionBuilderAtEnd(r->b, chunk_body);
        poll_interrupt(r, u);
        LLVMValueRef chunk = LLVMConstInt(t, CHUNK, 0);
        LLVMValueRef rest = LLVMBuildSub(r->b, end, bl.chunk, "");
        LLVMValueRef big = LLVMBuildICmp(r->b, uns ? LLVMIntUGT : LLVMIntSGT, rest, chunk, "");
        bl.chunk_end = LLVMBuildSelect(r->b, big, LLVMBuildAdd(r->b, bl.chunk, chunk, ""), end, "");
        start = bl.chunk, limit = bl.chunk_end;
    }
    LLVMBasicBlockRef from = LLVMGetInsertBlock(r->b);
    LLVMBasicBlockRef header = lr_new_block(r, "loop", u), body = lr_new_block(r, "body", u);
    LLVMBuildBr(r->b, header);
    LLVMPositionBuilderAtEnd(r->b, header);
    LLVMValueRef phi = LLVMBuildPhi(r->b, t, nm);
    LLVMAddIncoming(phi, &start, &from, 1);
    LLVMValueRef more = LLVMBuildICmp(r->b, lt, phi, limit, "");
    LLVMBuildCondBr(r->b, more, body, chunked ? bl.chunk_next : exit);
    LLVMPositionBuilderAtEnd(r->b, body);
    if (outermost && inner) poll_interrupt(r, u);
    bl.counter = phi, bl.header = header, bl.exit = exit;
    if (!lr_push_block(r, bl)) return NULL;
    return phi;
}

void lr_close_loop(Render *r) {
    Block *lp = &r->stack[--r->depth];
    LLVMValueRef next = LLVMBuildAdd(r->b, lp->counter, LLVMConstInt(LLVMTypeOf(lp->counter), 1, 0), "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(r->b);
    LLVMBuildBr(r->b, lp->header);
    LLVMAddIncoming(lp->counter, &next, &latch, 1);
    if (lp->chunk) {
        LLVMPositionBuilderAtEnd(r->b, lp->chunk_next);
        LLVMBuildBr(r->b, lp->chunk_head);
        LLVMAddIncoming(lp->chunk, &lp->chunk_end, &lp->chunk_next, 1);
    }
    LLVMPositionBuilderAtEnd(r->b, lp->exit);
}

/* ---- bounds checks ---- */

/* the DEFINE_GLOBAL/REG/LOCAL a pointer comes from */
static const UOp *pointer_base(const UOp *p) {
    /* a vector of pointers holds one pointer in every lane (render_pointer_vector) */
    while (p && (uop_op(p) == OP_AFTER || uop_op(p) == OP_CAST || uop_op(p) == OP_NOOP || uop_op(p) == OP_BITCAST ||
                 uop_op(p) == OP_VECTORIZE) &&
           p->nsrc >= 1)
        p = p->src[0];
    Op op = p ? uop_op(p) : OP_NOOP;
    return op == OP_DEFINE_GLOBAL || op == OP_DEFINE_REG || op == OP_DEFINE_LOCAL ? p : NULL;
}

static int add_site(Render *r, const KernelCheckSite *site) {
    KernelSignature *sig = r->sig;
    if (sig->nsites == r->cap_sites) {
        int cap = r->cap_sites ? 2 * r->cap_sites : 16;
        KernelCheckSite *a = realloc(sig->sites, (size_t)cap * sizeof *a);
        if (!a) {
            lr_fail(r, NULL, "out of memory");
            return -1;
        }
        sig->sites = a, r->cap_sites = cap;
    }
    sig->sites[sig->nsites] = *site;
    return sig->nsites++;
}

/* stores integer v into the report at byte offset `offset` */
static void report_store(Render *r, LLVMValueRef v, size_t offset) {
    LLVMTypeRef i8 = LLVMInt8TypeInContext(r->ctx), i64 = LLVMInt64TypeInContext(r->ctx);
    LLVMValueRef off = LLVMConstInt(i64, offset, 0);
    LLVMValueRef p = LLVMBuildGEP2(r->b, i8, r->report, &off, 1, "");
    LLVMSetAlignment(LLVMBuildStore(r->b, v, p), LLVMGetIntTypeWidth(LLVMTypeOf(v)) / 8);
}

/* v as an i64 (sign-extended unless unsigned) */
static LLVMValueRef to_i64(Render *r, LLVMValueRef v, bool uns) {
    LLVMTypeRef i64 = LLVMInt64TypeInContext(r->ctx);
    unsigned w = LLVMGetIntTypeWidth(LLVMTypeOf(v));
    if (w == 64) return v;
    return uns ? LLVMBuildZExt(r->b, v, i64, "") : LLVMBuildSExt(r->b, v, i64, "");
}

void lr_check_access(Render *r, const UOp *mem, const DType *vd, int lane) {
    if (!r->checked || r->failed) return;
    const UOp *ix = uop_op(mem) == OP_INDEX ? mem : lr_address_index(mem->src[0]); /* a value INDEX loads itself */
    if (!ix || ix->nsrc < 1) return;
    const DType *pd = ix->src[0]->dtype;
    if (!dt_is_ptr(pd) || pd->size < 0) return;   /* a pointer without a size cannot be checked */
    ValEntry *e = lr_map_find(&r->vals, ix);
    if (!e) return;
    const UOp *base = pointer_base(ix->src[0]);
    int bsz = dt_itemsize(pd->base), vsz = dt_itemsize(vd);
    KernelCheckSite site = {
        .index_id = ix->id,
        .store = uop_op(mem) == OP_STORE,
        .buffer_op = base ? uop_op(base) : OP_NOOP,
        .buffer = base && uop_op(base) == OP_DEFINE_GLOBAL && base->arg ? base->arg->v.i : base ? (int64_t)base->id : -1,
        .size = pd->size,
        .width = bsz > 0 && vsz > bsz ? vsz / bsz : 1,
    };
    const Block *loops[ACCESS_FAULT_LOOPS];
    for (int k = 0; k < r->depth && site.nranges < ACCESS_FAULT_LOOPS; k++) {
        const Block *bl = &r->stack[k];
        if (uop_op(bl->op) != OP_RANGE || bl->range_slot < 0) continue;
        loops[site.nranges] = bl;
        site.ranges[site.nranges++] = bl->range_slot;
    }
    int s = add_site(r, &site);
    if (s < 0) return;

    LLVMTypeRef i1 = LLVMInt1TypeInContext(r->ctx), i32 = LLVMInt32TypeInContext(r->ctx),
                i64 = LLVMInt64TypeInContext(r->ctx);
    LLVMValueRef off = e->offset;
    if (off && lane >= 0) off = lr_extract(r, off, lane);
    off = off ? to_i64(r, off, dt_is_unsigned(ix->src[1]->dtype)) : LLVMConstNull(i64);
    int64_t last = pd->size - site.width;   /* the last offset at which the access fits */
    /* unsigned: a negative offset is huge and fails too */
    LLVMValueRef ok = last < 0 ? LLVMConstInt(i1, 0, 0)
                               : LLVMBuildICmp(r->b, LLVMIntULE, off, LLVMConstInt(i64, (unsigned long long)last, 0), "");
    LLVMBasicBlockRef bad = lr_new_block(r, "out_of_bounds", mem), good = lr_new_block(r, "in_bounds", mem);
    LLVMBuildCondBr(r->b, expect(r, ok, true), good, bad);
    LLVMPositionBuilderAtEnd(r->b, bad);
    report_store(r, LLVMConstInt(i32, (unsigned)s, 0), offsetof(KernelRawReport, site));
    report_store(r, off, offsetof(KernelRawReport, index));
    for (int k = 0; k < site.nranges; k++) {
        LLVMValueRef v = to_i64(r, loops[k]->counter, dt_is_unsigned(loops[k]->op->src[0]->dtype));
        report_store(r, v, offsetof(KernelRawReport, ranges) + (size_t)k * sizeof(int64_t));
    }
    report_store(r, LLVMConstInt(i32, 1, 0), offsetof(KernelRawReport, failed));
    LLVMBuildBr(r->b, bail_block(r));
    LLVMPositionBuilderAtEnd(r->b, good);
}
