/* linear_prog.h - building linear programs by hand, the way tinygrad's
 * linearizer lists them for the CPU, for the unit tests of the LLVM backend
 * (checked runs, interrupts).  Include after cmocka.h. */
#ifndef UOPDB_TEST_LINEAR_PROG_H
#define UOPDB_TEST_LINEAR_PROG_H
#include <stdint.h>
#include "core/backend/backend.h"
#include "core/backend/linear_interp.h"
#include "core/ir/uop.h"

#define LP_UNUSED __attribute__((unused))
#define LP_MAX 256

typedef struct Prog {
    UCtx *c;
    const UOp *lst[LP_MAX];
    size_t n;
} Prog;

/* Appends u unless it is already in the list (nodes are hash-consed). */
LP_UNUSED static const UOp *P(Prog *p, const UOp *u) {
    if (!u) fail_msg("node construction failed: %s", uctx_error(p->c));
    for (size_t i = 0; i < p->n; i++)
        if (p->lst[i] == u) return u;
    assert_true(p->n < LP_MAX);
    p->lst[p->n++] = u;
    return u;
}

LP_UNUSED static const UOp *glob(Prog *p, int i, ScalarKind sk, int64_t size) {
    return P(p, uop_new(p->c, OP_DEFINE_GLOBAL, dt_ptr(dt_scalar(sk), size, ADDR_GLOBAL), NULL, 0, arg_int(p->c, i)));
}
LP_UNUSED static const UOp *cint(Prog *p, ScalarKind sk, int64_t v) { return P(p, uop_const_int(p->c, dt_scalar(sk), v)); }
LP_UNUSED static const UOp *cflt(Prog *p, double v) { return P(p, uop_const_float(p->c, DT_FLOAT32, v)); }
LP_UNUSED static const UOp *rng(Prog *p, const UOp *end, int axis, AxisType at) {
    return P(p, uop_range(p->c, end, axis, at));
}
LP_UNUSED static const UOp *idx(Prog *p, const UOp *buf, const UOp *i) {
    const UOp *s[2] = {buf, i};
    return P(p, uop_new(p->c, OP_INDEX, buf->dtype, s, 2, NULL));
}
LP_UNUSED static const UOp *idx_gated(Prog *p, const UOp *buf, const UOp *i, const UOp *gate) {
    const UOp *s[3] = {buf, i, gate};
    return P(p, uop_new(p->c, OP_INDEX, buf->dtype, s, 3, NULL));
}
LP_UNUSED static const UOp *ld(Prog *p, const UOp *addr) {
    return P(p, uop_new(p->c, OP_LOAD, addr->dtype->base, &addr, 1, NULL));
}
LP_UNUSED static const UOp *ld_alt(Prog *p, const UOp *addr, const UOp *alt) {
    const UOp *s[2] = {addr, alt};
    return P(p, uop_new(p->c, OP_LOAD, addr->dtype->base, s, 2, NULL));
}
LP_UNUSED static const UOp *st(Prog *p, const UOp *addr, const UOp *v) {
    const UOp *s[2] = {addr, v};
    return P(p, uop_new(p->c, OP_STORE, DT_VOID, s, 2, NULL));
}
LP_UNUSED static const UOp *end(Prog *p, const UOp *v, const UOp *r) {
    const UOp *s[2] = {v, r};
    return P(p, uop_new(p->c, OP_END, DT_VOID, s, 2, NULL));
}
LP_UNUSED static const UOp *after(Prog *p, const UOp *buf, const UOp *dep) {
    const UOp *s[2] = {buf, dep};
    return P(p, uop_new(p->c, OP_AFTER, buf->dtype, s, 2, NULL));
}
LP_UNUSED static const UOp *bin(Prog *p, Op op, const UOp *a, const UOp *b) { return P(p, uop_binary(p->c, op, a, b)); }
LP_UNUSED static const UOp *reg(Prog *p, ScalarKind sk, int64_t size) {
    return P(p, uop_new(p->c, OP_DEFINE_REG, dt_ptr(dt_scalar(sk), size, ADDR_REG), NULL, 0, arg_int(p->c, 0)));
}
LP_UNUSED static const UOp *special(Prog *p, int64_t n) {
    const UOp *e = cint(p, SK_INT32, n);
    return P(p, uop_new(p->c, OP_SPECIAL, DT_INT32, &e, 1, arg_str(p->c, "gidx0")));
}
LP_UNUSED static const UOp *sink(Prog *p, const UOp *last) { return P(p, uop_sink(p->c, &last, 1)); }

LP_UNUSED static Kernel *compile_prog(Prog *p, const char *name, bool checked) {
    char err[512];
    KernelCompileOpts o = {.checked = checked};
    Kernel *k = kernel_compile_opts(name, p->lst, p->n, &o, err, sizeof err);
    if (!k) fail_msg("%s: %s", name, err);
    return k;
}

/* Runs the program in the linear interpreter on bufs (each DEFINE_GLOBAL as
 * large as its pointer dtype says) and checks that it stops with want: an
 * access outside a buffer reads the same whichever executor ran it. */
LP_UNUSED static void interp_fails_with(Prog *p, void **bufs, int nbufs, const char *want) {
    int64_t sizes[8] = {0};
    assert_true(nbufs <= 8);
    for (size_t i = 0; i < p->n; i++) {
        const UOp *u = p->lst[i];
        if (uop_op(u) == OP_DEFINE_GLOBAL && u->arg->v.i >= 0 && u->arg->v.i < nbufs) sizes[u->arg->v.i] = u->dtype->size;
    }
    const UOp *lin = uop_new(p->c, OP_LINEAR, DT_VOID, p->lst, p->n, NULL);
    char err[512];
    assert_false(linear_interp_run(lin, bufs, sizes, nbufs, err, sizeof err));
    assert_string_equal(err, want);
}

#endif
