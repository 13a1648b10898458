/* symbolic_narrow.c - the narrowing cast rules of tinygrad v0.12.0's
 * symbolic sets.
 *   symbolic_simple: a uint64 built from two uint32 halves (hi * 2^32 | lo,
 *                    or hi << 32 | lo, as THREEFRY's lowering does) cast back
 *                    to uint32 is lo, and divided (or shifted) by 2^32 is hi;
 *                    (x & 0xFFFFFFFF) cast to uint32 is x cast to uint32.
 *   symbolic:        (x + c) of the index dtype cast to a signed int is
 *                    cast(x) + cast(c), so the constant folds into the
 *                    narrower type. */
#include "sym_rules.h"

static const RuleSpec narrow_simple_specs[] = {
    RULE_TMPL("cast_u32_of_low_mask", "(CAST:uint32 (AND x:uint64 4294967295))", "(CAST:uint32 x)"),
    RULE_TMPL("cast_u32_of_mul_join", "(CAST:uint32 (OR (MUL _:uint64 4294967296) (CAST:uint64 y:uint32)))", "y"),
    RULE_TMPL("div_of_mul_join", "(IDIV (OR (MUL x:uint64 4294967296) (CAST:uint64 _:uint32)) 4294967296)", "x"),
    RULE_TMPL("cast_u32_of_shl_join", "(CAST:uint32 (OR (SHL _:uint64 32) (CAST:uint64 y:uint32)))", "y"),
    RULE_TMPL("shr_of_shl_join", "(SHR (OR (SHL x:uint64 32) (CAST:uint64 _:uint32)) 32)", "x"),
};
const RuleTable sym_narrow_simple_rules = RULE_TABLE(narrow_simple_specs);

static const RuleSpec narrow_symbolic_specs[] = {
    RULE_TMPL("cast_index_add_const", "(CAST:sints (ADD x:index c@(CONST)))", "(ADD (CAST x) (CAST c))"),
};
const RuleTable sym_narrow_symbolic_rules = RULE_TABLE(narrow_symbolic_specs);
