/* heuristic_opts.c - the opts tinygrad v0.12.0 chooses by itself for a CPU
 * kernel (its hand_coded_optimizations), worked out on the kernel as stage 7
 * gets it.  The choice is made step by step on the kernel itself: each opt
 * chosen is applied (with stage 7's own code) before the next is looked for,
 * as tinygrad does.  For the CPU only these parts matter:
 *
 *   - small masked output axes (<= 7, used in a WHERE's condition) are
 *     upcast whole;
 *   - while the output has >= 1024 elements and less than 32 are upcast,
 *     an output axis that some buffer does not index (stride 0: the B of a
 *     matmul broadcast over the rows) is upcast by 3 or 4, the axis with the
 *     fewest buffers using it and the smallest strides first;
 *   - the last reduce axis is unrolled whole when <= 32 (a second one too
 *     when both are <= 3), else by 4;
 *   - when nothing is upcast yet, the last output axis by 4;
 *   - with threads, the first LOOP axis is split over 32..2 cores, at most
 *     the given thread count and about 128K operations per core.
 *
 * For the gpu target (heuristic_opts_for with TARGET_GPU) the parts that
 * need locals come in too, as tinygrad does them with a renderer that has
 * local memory:
 *
 *   - matvec: a sum of a product of two buffers whose first reduce range is
 *     a term of the first buffer's index, every range of which the second
 *     index uses too, gets GROUP 8 of the reduce and LOCAL 4 and UPCAST 4 of
 *     the first GLOBAL axis of 16k (and nothing more);
 *   - GROUPTOP 16 of the first reduce axis of 0..2 that takes it, when the
 *     output has at most 2048 elements; a grouped kernel gets nothing more;
 *   - after the upcasts and unrolls, up to three GLOBAL axes become LOCAL:
 *     axes some buffer does not index first, the last first, by 32 (axis 0
 *     only), 16, 8, 4, 3 or 2, at most 128 work items in all;
 *   - no threads.
 *
 * Left out: tensor cores and image buffers (float4), which need special
 * hardware; tinygrad tries GROUPTOP on the CPU too, but it always fails
 * there for want of locals.
 *
 * Axis numbers: tinygrad numbers an UPCAST/THREAD axis by the position of
 * the range among all ranges ordered by kind (LOOP first) then id, and an
 * UNROLL axis among the reduce ranges; stage 7 counts output ranges for
 * UPCAST/THREAD and reduce ranges for UNROLL, both in id order.  With all
 * output ranges LOOP (always so on the CPU) the numbers are the same; they
 * are converted here all the same.  The gpu target's stage 7 takes
 * tinygrad's numbers as they are. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "early.h"
#include "ranges.h"
#include "stages.h"
#include "../util/strbuf.h"

#define H_MAX_RANGES 64
#define H_MAX_BUFS 64

typedef struct Range {
    const UOp *r;
    AxisType type;
    int64_t size;      /* -1: symbolic */
} Range;

/* one look at the kernel: its ranges in tinygrad's order and its buffers' index expressions */
typedef struct View {
    Range rng[H_MAX_RANGES];
    int n;
    const UOp *idx[H_MAX_BUFS];   /* index expression of each INDEX, last INDEX first */
    const UOp *buf[H_MAX_BUFS];   /* what each INDEX indexes */
    int nbufs;
    const UOp *root;
} View;

static int cmp_range(const void *pa, const void *pb) {
    const Range *a = pa, *b = pb;
    int ka = axis_to_pos(a->type), kb = axis_to_pos(b->type);
    if (ka != kb) return ka < kb ? -1 : 1;
    return range_ids_cmp(a->r, b->r);   /* all the ids: (0, 0) before (0, 1) */
}

static bool is_output(AxisType t) { return t == AXIS_GLOBAL || t == AXIS_LOCAL || t == AXIS_LOOP; }
static bool is_reduce(AxisType t) { return t == AXIS_GROUP_REDUCE || t == AXIS_REDUCE; }
static bool is_upcast(AxisType t) { return t == AXIS_UPCAST || t == AXIS_UNROLL; }

/* the index of an INDEX without its validity: WHERE(valid, idx, Invalid) -> idx */
static const UOp *index_expr(const UOp *ix) {
    if (ix->nsrc < 2) return NULL;
    const UOp *e = ix->src[1];
    if (uop_op(e) == OP_WHERE && e->nsrc == 3 && uop_op(e->src[2]) == OP_CONST && e->src[2]->arg &&
        e->src[2]->arg->kind == ARG_INVALID)
        return e->src[1];
    return e;
}

static bool view_load(View *v, const UOp *root) {
    memset(v, 0, sizeof *v);
    v->root = root;
    size_t n;
    const UOp **all = uop_toposort(root, &n);
    if (!all) return false;
    for (size_t i = 0; i < n; i++) {
        const UOp *u = all[i];
        if (uop_op(u) == OP_RANGE) {
            int64_t size;
            bool known = uop_const_int_value(u->src[0], &size);
            if (known && size <= 1) continue;
            if (v->n == H_MAX_RANGES) { free(all); return false; }
            v->rng[v->n++] = (Range){u, range_axis_type(u), known ? size : -1};
        }
    }
    for (size_t i = n; i-- > 0;)
        if (uop_op(all[i]) == OP_INDEX && index_expr(all[i])) {
            if (v->nbufs == H_MAX_BUFS) { free(all); return false; }
            v->buf[v->nbufs] = all[i]->src[0];
            v->idx[v->nbufs++] = index_expr(all[i]);
        }
    free(all);
    qsort(v->rng, (size_t)v->n, sizeof *v->rng, cmp_range);
    return true;
}

/* u is among the sources of e, at any depth (e itself does not count); each
 * node is looked at once, however much the graph shares */
static bool in_slice(const UOp *e, const UOp *u) {
    if (e == u) return false;
    size_t n;
    const UOp **all = uop_toposort(e, &n);
    bool found = false;
    for (size_t i = 0; all && i < n && !found; i++) found = all[i] == u;
    free(all);
    return found;
}

static bool upcastable(const Range *r) { return is_output(r->type) && r->size > 1; }
static bool unrollable(const Range *r) { return is_reduce(r->type) && r->size > 1; }

static int64_t upcast_size(const View *v) {
    int64_t p = 1;
    for (int i = 0; i < v->n; i++)
        if (is_upcast(v->rng[i].type)) p *= v->rng[i].size > 0 ? v->rng[i].size : 1;
    return p;
}

/* product of the sizes of the upcastable output axes */
static int64_t upcastable_elements(const View *v) {
    int64_t p = 1;
    for (int i = 0; i < v->n; i++) {
        const Range *r = &v->rng[i];
        if (!upcastable(r)) continue;
        if (r->size < 0) return -1;
        p *= r->size;
    }
    return p;
}

/* the stage-7 axis number of v->rng[k] for op */
static int opt_axis_for(const View *v, StageTarget target, OptOp op, int k) {
    int a = 0;
    if (target == TARGET_GPU) {
        /* tinygrad's own numbers: UNROLL among the reduce ranges, GROUP among
         * the REDUCE ranges, the rest among all ranges, in its order */
        if (op != OPT_UNROLL && op != OPT_GROUP && op != OPT_GROUPTOP) return k;
        for (int i = 0; i < k; i++)
            a += op == OPT_UNROLL ? is_reduce(v->rng[i].type) : v->rng[i].type == AXIS_REDUCE;
        return a;
    }
    for (int i = 0; i < v->n; i++) {
        const Range *r = &v->rng[i];
        bool counts = op == OPT_UNROLL ? is_reduce(r->type) : is_output(r->type);
        if (counts && range_ids_cmp(r->r, v->rng[k].r) < 0) a++;
    }
    return a;
}

typedef struct Chooser {
    UCtx *c;
    StageTarget target;
    const UOp *root;
    View v;
    KernelOpt *opts;
    int nopts, max;
    StrBuf *why;
    char *err;
    size_t errlen;
} Chooser;

static void say(Chooser *ch, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(Chooser *ch, const char *fmt, ...) {
    if (!ch->why) return;
    va_list ap;
    va_start(ap, fmt);
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    sb_printf(ch->why, "%s\n", line);
}

/* applies opt op on range v.rng[k] (amount 0: whole); false when stage 7 refuses it
 * (the message in ch->err), or on a hard failure (returns false and sets *hard) */
static bool apply(Chooser *ch, OptOp op, int k, int amount, bool *hard) {
    KernelOpt o = {op, opt_axis_for(&ch->v, ch->target, op, k), amount};
    if (ch->nopts == ch->max) {
        snprintf(ch->err, ch->errlen, "more than %d opts", ch->max);
        *hard = true;
        return false;
    }
    StageCtx sc = {.c = ch->c, .opts = &o, .nopts = 1, .err = ch->err, .errlen = ch->errlen, .target = ch->target};
    const UOp *next = stage_apply_opts(&sc, ch->root);
    if (!next) return false;
    ch->root = next;
    ch->opts[ch->nopts++] = o;
    if (!view_load(&ch->v, next)) {
        snprintf(ch->err, ch->errlen, "kernel too large to look at (more than %d ranges or buffers)", H_MAX_RANGES);
        *hard = true;
        return false;
    }
    return true;
}


/* ---- the parts for a GPU (locals) ---- */

static const UOp *first_reduce_op(const UOp *root) {
    size_t n;
    const UOp **all = uop_toposort(root, &n);
    const UOp *r = NULL;
    for (size_t i = 0; all && i < n && !r; i++)
        if (uop_op(all[i]) == OP_REDUCE) r = all[i];
    free(all);
    return r;
}

/* t is one of the terms of the sum e */
static bool is_term(const UOp *e, const UOp *t) {
    const UOp *stack[256];
    int sp = 0;
    stack[sp++] = e;
    while (sp) {
        const UOp *u = stack[--sp];
        if (u == t) return true;
        if (uop_op(u) == OP_ADD && sp + 2 <= 256) {
            stack[sp++] = u->src[1];
            stack[sp++] = u->src[0];
        }
    }
    return false;
}

/* every RANGE under a is under b too */
static bool ranges_within(const UOp *a, const UOp *b) {
    size_t n;
    const UOp **all = uop_toposort(a, &n);
    bool ok = all != NULL;
    for (size_t i = 0; ok && i < n; i++)
        if (uop_op(all[i]) == OP_RANGE && !in_slice(b, all[i]) && b != all[i]) ok = false;
    free(all);
    return ok;
}

/* the range with this arg (ids and type; args are interned) */
static int find_arg(const View *v, const Arg *arg) {
    for (int k = 0; k < v->n; k++)
        if (v->rng[k].r->arg == arg) return k;
    return -1;
}

/* matvec and GROUPTOP: 1 when the kernel is done (grouped), 0 to go on, -1 on a hard failure */
static int gpu_group(Chooser *ch, bool *hard) {
    View *v = &ch->v;
    const UOp *red = first_reduce_op(ch->root);
    bool sum = red && red->arg && red->arg->kind == ARG_OP && red->arg->v.op == OP_ADD;
    const UOp *mul = red ? red->src[0] : NULL;
    if (sum && v->n >= 2 && uop_op(mul) == OP_MUL && uop_op(mul->src[0]) == OP_INDEX &&
        uop_op(mul->src[1]) == OP_INDEX && index_expr(mul->src[0]) && index_expr(mul->src[1])) {
        const UOp *i0 = index_expr(mul->src[0]), *i1 = index_expr(mul->src[1]);
        int fr = -1;
        for (int k = 0; k < v->n && fr < 0; k++)
            if (v->rng[k].type == AXIS_REDUCE) fr = k;
        if (fr >= 0 && is_term(i0, v->rng[fr].r) && ranges_within(i0, i1)) {
            int64_t fr_size = v->rng[fr].size;
            for (int k = 0; k < v->n; k++) {
                if (v->rng[k].type != AXIS_GLOBAL) continue;
                if (fr_size < 0 || fr_size % 8 || v->rng[k].size < 0 || v->rng[k].size % 16) continue;
                const Arg *garg = v->rng[k].r->arg;
                say(ch, "matvec: the first reduce axis is a term of the first buffer's index; GROUP 8 of it, "
                    "LOCAL 4 and UPCAST 4 of axis %d", k);
                int f = -1;
                for (int j = 0; j < v->n && f < 0; j++)
                    if (v->rng[j].type == AXIS_REDUCE) f = j;
                if (!apply(ch, OPT_GROUP, f, 8, hard) && *hard) return -1;
                int g = find_arg(v, garg);
                if (g < 0 || !apply(ch, OPT_LOCAL, g, 4, hard)) return -1;
                g = find_arg(v, garg);
                if (g < 0 || !apply(ch, OPT_UPCAST, g, 4, hard)) return -1;
                return 1;
            }
        }
    }
    int64_t outn = upcastable_elements(v);
    if (outn >= 0 && outn <= 2048) {
        for (int axis = 0; axis < 3; axis++) {
            int k = -1, seen = 0;
            for (int j = 0; j < v->n && k < 0; j++)
                if (v->rng[j].type == AXIS_REDUCE && seen++ == axis) k = j;
            if (k < 0) continue;
            if (apply(ch, OPT_GROUPTOP, k, 16, hard)) {
                say(ch, "GROUPTOP axis %d by 16: the output has %lld elements, at most 2048; nothing more for a "
                    "grouped kernel", axis, (long long)outn);
                return 1;
            }
            if (*hard) return -1;
        }
        say(ch, "GROUPTOP: no reduce axis 0..2 takes 16");
    } else {
        say(ch, "GROUPTOP: none (the output has %lld elements, more than 2048)", (long long)outn);
    }
    return 0;
}

static int cmp_rank(const void *pa, const void *pb) {
    const int *a = pa, *b = pb;   /* {expand, axis}: expand axes first, then the last axis first */
    if (a[0] != b[0]) return a[0] > b[0] ? -1 : 1;
    return (a[1] > b[1]) ? -1 : (a[1] < b[1]);
}

static int cmp_triple(const void *pa, const void *pb) {
    const int *a = pa, *b = pb;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}

/* up to three GLOBAL axes become LOCAL */
static bool gpu_locals(Chooser *ch, bool *hard) {
    View *v = &ch->v;
    int rank[H_MAX_RANGES][2], nr = 0;
    for (int k = 0; k < v->n; k++) {
        const Range *r = &v->rng[k];
        if ((r->type != AXIS_GLOBAL && r->type != AXIS_LOOP) || uop_op(r->r->src[0]) != OP_CONST) continue;
        int expand = 0;
        /* (as tinygrad: an index that is the range itself does not count as using it) */
        for (int b = 0; b < v->nbufs && !expand; b++) expand = !in_slice(v->idx[b], r->r);
        rank[nr][0] = expand;
        rank[nr][1] = k;
        nr++;
    }
    qsort(rank, (size_t)nr, sizeof *rank, cmp_rank);
    int to_local[H_MAX_RANGES][3], nl = 0;
    int64_t local_size = 1;
    for (int i = 0; i < nr; i++) {
        int axis = rank[i][1];
        static const int sizes[] = {32, 16, 8, 4, 3, 2};
        for (size_t s = axis == 0 ? 0 : 1; s < sizeof sizes / sizeof *sizes; s++) {
            if (v->rng[axis].size % sizes[s] == 0 && local_size * sizes[s] <= 128) {
                to_local[nl][0] = axis;
                to_local[nl][1] = sizes[s];
                to_local[nl][2] = rank[i][0];
                nl++;
                local_size *= sizes[s];
                break;
            }
        }
    }
    if (nl > 3) nl = 3;
    qsort(to_local, (size_t)nl, sizeof *to_local, cmp_triple);
    int deleted = 0;
    if (!nl) say(ch, "LOCAL: none (no GLOBAL axis divides by 2..32)");
    for (int i = 0; i < nl; i++) {
        int axis = to_local[i][0] - deleted;
        bool will_delete = to_local[i][1] == v->rng[axis].size;
        say(ch, "LOCAL axis %d by %d: %s, at most 128 work items", axis, to_local[i][1],
            to_local[i][2] ? "some buffer does not index it (those axes go first)" : "a GLOBAL axis");
        if (!apply(ch, OPT_LOCAL, axis, to_local[i][1], hard)) return false;
        if (will_delete) deleted++;
    }
    return true;
}

#define TRY(call) do { if (!(call) && hard) return -1; } while (0)

int heuristic_opts(UCtx *c, const UOp *root, int threads, KernelOpt *opts, int max, StrBuf *why, char *err,
                   size_t errlen) {
    return heuristic_opts_for(c, root, TARGET_CPU, threads, opts, max, why, err, errlen);
}

#define opt_axis(v, op, k) opt_axis_for((v), ch.target, (op), (k))

int heuristic_opts_for(UCtx *c, const UOp *root, StageTarget target, int threads, KernelOpt *opts, int max,
                       StrBuf *why, char *err, size_t errlen) {
    Chooser ch = {.c = c, .target = target, .root = root, .opts = opts, .max = max, .why = why, .err = err,
                  .errlen = errlen};
    if (target == TARGET_GPU) {
        /* the kernel as the gpu target's stage 7 sees it: its output LOOP ranges GLOBAL */
        StageCtx sc = {.c = c, .err = err, .errlen = errlen, .target = target};
        if (!(ch.root = stage_apply_opts(&sc, root))) return -1;
        threads = 0;
    }
    if (!view_load(&ch.v, ch.root)) {
        snprintf(err, errlen, "kernel too large to look at (more than %d ranges or buffers)", H_MAX_RANGES);
        return -1;
    }
    View *v = &ch.v;
    bool hard = false;
    if (target == TARGET_GPU) {
        int r = gpu_group(&ch, &hard);
        if (r != 0) return r < 0 ? -1 : ch.nopts;
    } else {
        say(&ch, "GROUPTOP: skipped, it needs locals (the CPU has none)");
    }

    /* 1. small masked output axes, upcast whole (last first) */
    int masked[H_MAX_RANGES], nmasked = 0;
    int64_t masked_prod = 1;
    {
        size_t n;
        const UOp **all = uop_toposort(v->root, &n);
        if (!all) { snprintf(err, errlen, "out of memory"); return -1; }
        for (int k = 0; k < v->n; k++) {
            const Range *r = &v->rng[k];
            if (!upcastable(r) || r->size > 7) continue;
            bool is_masked = false;
            for (size_t i = 0; i < n && !is_masked; i++)
                if (uop_op(all[i]) == OP_WHERE && in_slice(all[i]->src[0], r->r)) is_masked = true;
            if (is_masked && masked_prod * r->size <= 49) {
                masked[nmasked++] = k;
                masked_prod *= r->size;
            }
        }
        free(all);
    }
    /* the masked ranges by their ids (the whole tuple: a split range's parts
     * share the first): applying changes positions and nodes, so look each
     * up again */
    const UOp *masked_ranges[H_MAX_RANGES];
    for (int i = 0; i < nmasked; i++) masked_ranges[i] = v->rng[masked[i]].r;
    for (int i = nmasked; i-- > 0;)
        for (int k = 0; k < v->n; k++)
            if (range_ids_cmp(v->rng[k].r, masked_ranges[i]) == 0 && upcastable(&v->rng[k])) {
                say(&ch, "UPCAST axis %d whole (%lld): a small output axis used in a WHERE's condition",
                    opt_axis(v, OPT_UPCAST, k), (long long)v->rng[k].size);
                if (!apply(&ch, OPT_UPCAST, k, 0, &hard)) return -1;
                break;
            }

    /* 2. upcast output axes that some buffer has stride 0 on */
    const UOp *done_ranges[H_MAX_RANGES];   /* upcast here; compared by their ids */
    int ndone = 0;
    for (;;) {
        int64_t outn = upcastable_elements(v);
        if (outn < 1024 || upcast_size(v) >= 32) break;
        int64_t best[4] = {0};   /* num_strides, sum_strides, tinygrad axis, amount */
        bool have = false;
        int best_k = -1, best_buf = -1;
        for (int k = 0; k < v->n; k++) {
            const Range *r = &v->rng[k];
            if (!upcastable(r)) continue;
            bool done = false;
            for (int d = 0; d < ndone; d++) done |= range_ids_cmp(done_ranges[d], r->r) == 0;
            for (int amount = 3; amount <= 4; amount++) {
                if (done || r->size % amount) continue;
                int zero_buf = -1;
                for (int b = 0; b < v->nbufs && zero_buf < 0; b++) {
                    if (in_slice(v->idx[b], r->r)) continue;
                    bool has_all = true;
                    for (int j = 0; j < v->n; j++)
                        if (is_upcast(v->rng[j].type) && !in_slice(v->idx[b], v->rng[j].r)) has_all = false;
                    if (has_all) zero_buf = b;
                }
                if (zero_buf < 0) continue;
                int64_t num = 0, sum = 0;
                for (int b = 0; b < v->nbufs; b++) {
                    const UOp *e = v->idx[b];
                    if (in_slice(e, r->r)) num++;
                    /* the terms of the sum e */
                    const UOp *stack[256];
                    int sp = 0;
                    stack[sp++] = e;
                    while (sp) {
                        const UOp *t = stack[--sp];
                        if (uop_op(t) == OP_ADD && sp + 2 <= 256) {
                            stack[sp++] = t->src[1];
                            stack[sp++] = t->src[0];
                            continue;
                        }
                        int64_t s;
                        if (t == r->r) sum += 1;
                        else if (uop_op(t) == OP_MUL && t->src[0] == r->r && uop_op(t->src[1]) == OP_CONST &&
                                 uop_const_int_value(t->src[1], &s))
                            sum += s;
                        else if (uop_op(t) == OP_MUL && t->src[1] == r->r && uop_op(t->src[0]) == OP_CONST &&
                                 uop_const_int_value(t->src[0], &s))
                            sum += s;
                    }
                }
                int64_t cand[4] = {num, sum, k, amount};
                bool better = !have;
                for (int q = 0; q < 4 && !better; q++) {
                    if (cand[q] != best[q]) { better = cand[q] < best[q]; break; }
                }
                if (better) {
                    memcpy(best, cand, sizeof best);
                    have = true;
                    best_k = k;
                    best_buf = zero_buf;
                }
            }
        }
        if (!have) break;
        const UOp *zb = v->buf[best_buf];
        int64_t gnum = -1;
        if (uop_op(zb) == OP_DEFINE_GLOBAL && zb->arg && zb->arg->kind == ARG_INT) gnum = zb->arg->v.i;
        say(&ch, "UPCAST axis %d by %lld: buffer %lld has stride 0 on it (it is broadcast along the axis); "
            "%lld index%s use the axis inside, its strides sum to %lld",
            opt_axis(v, OPT_UPCAST, best_k), (long long)best[3], (long long)gnum, (long long)best[0],
            best[0] == 1 ? "" : "es", (long long)best[1]);
        done_ranges[ndone++] = v->rng[best_k].r;
        if (!apply(&ch, OPT_UPCAST, best_k, (int)best[3], &hard)) return -1;
    }

    /* 3. unroll the last reduce axis */
    {
        int last = -1, nunroll = 0;
        bool any_unroll = false;
        for (int k = 0; k < v->n; k++) {
            if (unrollable(&v->rng[k])) { last = k; nunroll++; }
            any_unroll |= v->rng[k].type == AXIS_UNROLL;
        }
        int64_t us = upcast_size(v);
        if (last >= 0 && (us <= 4 || !any_unroll) && us < 64) {
            int64_t s = v->rng[last].size;
            if (s <= 32) {
                say(&ch, "UNROLL axis %d whole (%lld): the last reduce axis is small", nunroll - 1, (long long)s);
                if (apply(&ch, OPT_UNROLL, last, 0, &hard)) {
                    int last2 = -1, n2 = 0;
                    for (int k = 0; k < v->n; k++)
                        if (unrollable(&v->rng[k])) { last2 = k; n2++; }
                    if (last2 >= 0 && s <= 3 && v->rng[last2].size <= 3) {
                        say(&ch, "UNROLL axis %d whole (%lld): it and the reduce axis unrolled before are <= 3",
                            n2 - 1, (long long)v->rng[last2].size);
                        TRY(apply(&ch, OPT_UNROLL, last2, 0, &hard));
                    }
                } else if (hard) return -1;
            } else if (s % 4 == 0) {
                say(&ch, "UNROLL axis %d by 4: the last reduce axis (%lld) is large", nunroll - 1, (long long)s);
                TRY(apply(&ch, OPT_UNROLL, last, 4, &hard));
            }
        }
    }

    /* 4. nothing upcast yet: the last output axis by 4 */
    {
        bool upcasted = false;
        int last = -1;
        for (int k = 0; k < v->n; k++) {
            upcasted |= is_upcast(v->rng[k].type);
            if (upcastable(&v->rng[k])) last = k;
        }
        if (!upcasted && last >= 0 && v->rng[last].size % 4 == 0) {
            say(&ch, "UPCAST axis %d by 4: nothing is upcast yet and the last output axis (%lld) divides by 4",
                opt_axis(v, OPT_UPCAST, last), (long long)v->rng[last].size);
            if (!apply(&ch, OPT_UPCAST, last, 4, &hard)) return -1;
        }
    }

    if (target == TARGET_GPU && !gpu_locals(&ch, &hard)) return -1;

    /* 5. threads */
    if (target == TARGET_GPU) {
        say(&ch, "THREAD: none (the gpu target has no threads)");
    } else if (threads > 0) {
        static const int counts[] = {32, 16, 12, 8, 6, 5, 4, 3, 2};
        int64_t total = 1;
        bool symbolic = false;
        for (int k = 0; k < v->n; k++) {
            if (v->rng[k].size < 0) symbolic = true;
            else total *= v->rng[k].size;
        }
        bool split = false;
        for (size_t t = 0; t < sizeof counts / sizeof *counts && !split && !symbolic; t++) {
            int n = counts[t];
            if (n > threads || total / (128 << 10) < n) continue;
            for (int k = 0; k < v->n; k++) {
                if (v->rng[k].type != AXIS_LOOP) continue;
                if (v->rng[k].size > 0 && v->rng[k].size % n == 0) {
                    char why_line[160];
                    snprintf(why_line, sizeof why_line,
                             "THREAD axis %d by %d: %lld operations, about 128K or more per core, %d cores at most",
                             opt_axis(v, OPT_THREAD, k), n, (long long)total, threads);
                    if (apply(&ch, OPT_THREAD, k, n, &hard)) {
                        say(&ch, "%s", why_line);
                        split = true;
                    } else if (hard) return -1;
                    break;
                }
            }
        }
        if (!split) say(&ch, "THREAD: none (%lld operations is too few to split, or no LOOP axis divides)",
                        (long long)total);
    } else {
        say(&ch, "THREAD: none (no threads)");
    }
    return ch.nopts;
}
