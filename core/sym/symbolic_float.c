/* symbolic_float.c - the float rules of tinygrad v0.12.0's symbolic sets.
 * A float division is written x * (1/y) (MUL and RECIPROCAL), so these rules
 * cancel and split reciprocals:
 *   symbolic_simple: x/x -> 1 and (x*y)/y -> x (wrong when the value divided
 *                    by is 0 or not finite, as in tinygrad);
 *   symbolic:        (x/y)/z -> x/(y*z);
 *   sym:             1/(x*x), 1/(x*x*x) and 1/(x*c) split into reciprocals,
 *                    and x/(1+x) written 1 - 1/(1+x) (also inside y*(...)
 *                    and (...)+y).
 * tinygrad's 0/0 -> nan and (x*0)/0 -> nan are not here: sources are
 * rewritten before their users, so 1/0 is folded to inf and 0*inf to nan by
 * constant folding before either could match. */
#include "sym_rules.h"

#define CTX (m->ctx)
#define GET(n) match_get(m, n)

static const UOp *fdiv_chain(const Match *m, void *ud) {
    (void)ud;
    const UOp *x = GET("x"), *x2 = GET("x2"), *x3 = GET("x3");
    if (x2 == x3) return NULL;
    const UOp *prod = uop_binary(CTX, OP_MUL, x2, x3);
    return prod ? uop_binary(CTX, OP_MUL, x, uop_unary(CTX, OP_RECIPROCAL, prod)) : NULL;
}

static const RuleSpec float_simple_specs[] = {
    RULE_TMPL("fold_fdiv_self", "(MUL x (RECIPROCAL x))", "1"),
    RULE_TMPL("fold_fdiv_cancel", "(MUL (MUL x y) (RECIPROCAL y))", "x"),
};
const RuleTable sym_float_simple_rules = RULE_TABLE(float_simple_specs);

static const RuleSpec float_symbolic_specs[] = {
    RULE_FN("fold_fdiv_chain", "(MUL (MUL x (RECIPROCAL x2)) (RECIPROCAL x3))", fdiv_chain),
};
const RuleTable sym_float_symbolic_rules = RULE_TABLE(float_symbolic_specs);

/* 1 - d is written as tinygrad builds it: 1 + d*-1 */
static const RuleSpec float_sym_specs[] = {
    RULE_TMPL("recip_of_square", "(RECIPROCAL (MUL x x))", "(MUL (RECIPROCAL x) (RECIPROCAL x))"),
    RULE_TMPL("recip_of_cube", "(RECIPROCAL (MUL (MUL x x) x))",
              "(MUL (MUL (RECIPROCAL x) (RECIPROCAL x)) (RECIPROCAL x))"),
    RULE_TMPL("recip_of_mul_const", "(RECIPROCAL (MUL x c@(CONST)))", "(MUL (RECIPROCAL x) (RECIPROCAL c))"),
    RULE_TMPL("div_one_plus_self", "(MUL x d@(RECIPROCAL (ADD 1 x)))", "(ADD 1 (MUL d -1))"),
    RULE_TMPL("div_one_plus_self_mul", "(MUL x (MUL d@(RECIPROCAL (ADD 1 x)) y))", "(MUL y (ADD 1 (MUL d -1)))"),
    RULE_TMPL("div_one_plus_self_add", "(MUL x (ADD d@(RECIPROCAL (ADD 1 x)) y))", "(ADD (ADD 1 (MUL d -1)) (MUL x y))"),
};
const RuleTable sym_float_sym_rules = RULE_TABLE(float_sym_specs);
