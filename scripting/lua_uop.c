/* lua_uop.c - UOps as Lua values: one userdata box per node (cached in a
 * weak table, so == and rawequal are node identity), the Lua operators and
 * the methods u:op(), u:src(), u:lt(x), u:vmin(), u:eval{...}, ...
 *
 * Arithmetic follows tinygrad v0.12.0's math mixin: a Lua number on either
 * side becomes a CONST of the other operand's dtype (the CONST comes first
 * when the number is on the left); a - b is ADD(a, -b); -x is MUL(x, -1)
 * (for floats too) and, for bool, CMPNE(x, True); a / b is
 * MUL(a, RECIPROCAL(b)); eq, ge and le are the logical not (CMPNE with True)
 * of ne, lt and gt; min(a, b) is -max(-a, -b). */
#include "lua_internal.h"
#include "../viz/listing.h"
#include "../core/sym/bounds.h"
#include "../core/sym/eval.h"
#include <stdlib.h>
#include <string.h>

#define UOP_CACHE "uopdb.uop_boxes"

typedef struct UOpBox { const UOp *u; } UOpBox;

void luop_push(lua_State *L, const UOp *u) {
    if (!u) { lua_pushnil(L); return; }
    lua_getfield(L, LUA_REGISTRYINDEX, UOP_CACHE);
    if (lua_rawgetp(L, -1, u) == LUA_TUSERDATA) { lua_remove(L, -2); return; }
    lua_pop(L, 1);
    UOpBox *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->u = u;
    luaL_setmetatable(L, LUOP_UOP_MT);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, -3, u);
    lua_remove(L, -2);
}

void luop_mark_boxes(lua_State *L, UCtxMarks *m) {
    lua_getfield(L, LUA_REGISTRYINDEX, UOP_CACHE);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        UOpBox *b = lua_touserdata(L, -1);
        if (b) uctx_mark(m, b->u);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

void luop_push_result(lua_State *L, const UOp *u) {
    if (!u) luop_ctx_error(L);
    luop_push(L, u);
}

const UOp *luop_test(lua_State *L, int idx) {
    UOpBox *b = luaL_testudata(L, idx, LUOP_UOP_MT);
    return b ? b->u : NULL;
}

const UOp *luop_check(lua_State *L, int idx) {
    const UOp *u = luop_test(L, idx);
    if (!u) luaL_typeerror(L, idx, "UOp");
    return u;
}

/* ---- building blocks of the operators ---- */

/* tinygrad's ufix: the UOp at idx, or a number/boolean there as a CONST of
 * like's dtype */
static const UOp *ufix(lua_State *L, int idx, const UOp *like) {
    const UOp *u = luop_test(L, idx);
    return u ? u : luop_const_number(L, like->dtype, idx);
}

static const UOp *checked(lua_State *L, const UOp *u) {
    if (!u) luop_ctx_error(L);
    return u;
}

static const UOp *binop(lua_State *L, Op op, const UOp *a, const UOp *b) {
    return checked(L, uop_binary(luop_ctx(L), op, a, b));
}

static const UOp *const_like(lua_State *L, const UOp *like, lua_Integer v) {
    return checked(L, uop_const_int(luop_ctx(L), like->dtype, v));
}

static const UOp *logical_not(lua_State *L, const UOp *u) {
    const UOp *t = checked(L, uop_const_int(luop_ctx(L), u->dtype, 1));
    return binop(L, OP_CMPNE, u, t);
}

static const UOp *neg(lua_State *L, const UOp *u) {
    if (dt_is_bool(u->dtype)) return logical_not(L, u);
    return binop(L, OP_MUL, u, const_like(L, u, -1));
}

/* -x of the Lua value at idx, as a UOp like `like` */
static const UOp *neg_value(lua_State *L, int idx, const UOp *like) {
    const UOp *u = luop_test(L, idx);
    if (u) return neg(L, u);
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_error(L, "expected a UOp or a number, got %s", luaL_typename(L, idx));
    lua_pushvalue(L, idx);
    lua_arith(L, LUA_OPUNM);
    const UOp *r = ufix(L, -1, like);
    lua_pop(L, 1);
    return r;
}

/* For a metamethod (a, b): which side is the UOp.  Returns its index and
 * sets *reverse when the UOp is on the right. */
static int uop_side(lua_State *L, bool *reverse) {
    luop_safe_point(L);
    *reverse = luop_test(L, 1) == NULL;
    int self = *reverse ? 2 : 1;
    luop_check(L, self);
    return self;
}

static int arith(lua_State *L, Op op) {
    bool reverse;
    int self = uop_side(L, &reverse);
    const UOp *s = luop_test(L, self);
    const UOp *o = ufix(L, reverse ? 1 : 2, s);
    luop_push(L, reverse ? binop(L, op, o, s) : binop(L, op, s, o));
    return 1;
}

static int m_add(lua_State *L) { return arith(L, OP_ADD); }
static int m_mul(lua_State *L) { return arith(L, OP_MUL); }
static int m_idiv(lua_State *L) { return arith(L, OP_IDIV); }
static int m_mod(lua_State *L) { return arith(L, OP_MOD); }
static int m_band(lua_State *L) { return arith(L, OP_AND); }
static int m_bor(lua_State *L) { return arith(L, OP_OR); }
static int m_bxor(lua_State *L) { return arith(L, OP_XOR); }
static int m_shl(lua_State *L) { return arith(L, OP_SHL); }
static int m_shr(lua_State *L) { return arith(L, OP_SHR); }

static int m_sub(lua_State *L) {
    bool reverse;
    int self = uop_side(L, &reverse);
    const UOp *s = luop_test(L, self);
    if (reverse) luop_push(L, binop(L, OP_ADD, ufix(L, 1, s), neg(L, s)));
    else luop_push(L, binop(L, OP_ADD, s, neg_value(L, 2, s)));
    return 1;
}

static int m_div(lua_State *L) {
    bool reverse;
    int self = uop_side(L, &reverse);
    const UOp *s = luop_test(L, self);
    UCtx *c = luop_ctx(L);
    if (reverse) luop_push(L, binop(L, OP_MUL, ufix(L, 1, s), checked(L, uop_unary(c, OP_RECIPROCAL, s))));
    else luop_push(L, binop(L, OP_MUL, s, checked(L, uop_unary(c, OP_RECIPROCAL, ufix(L, 2, s)))));
    return 1;
}

static int m_unm(lua_State *L) {
    luop_safe_point(L);
    luop_push(L, neg(L, luop_check(L, 1)));
    return 1;
}

static int m_eq(lua_State *L) {
    lua_pushboolean(L, luop_test(L, 1) == luop_test(L, 2));
    return 1;
}

/* Lua's <, <=, > and >= always give a boolean, never a node: the error
 * names the methods that build the comparison */
static int m_compare(lua_State *L) {
    return luaL_error(L, "Lua's <, <=, > and >= give a boolean, not a UOp: write a:lt(b), a:le(b), a:gt(b) or "
                         "a:ge(b) (a:eq(b) and a:ne(b) for == and ~=)");
}

/* "UOp %12 = ADD int32 (%10, %11)": the node's listing line */
static void format_summary(StrBuf *sb, const UOp *u) {
    sb_puts(sb, "UOp ");
    uop_listing_line(sb, u, NULL);
}

static int m_tostring(lua_State *L) {
    StrBuf sb;
    sb_init(&sb);
    format_summary(&sb, luop_check(L, 1));
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    return 1;
}

static int m_concat(lua_State *L) {
    luaL_tolstring(L, 1, NULL);
    luaL_tolstring(L, 2, NULL);
    lua_concat(L, 2);
    return 1;
}

/* ---- methods ---- */

static int u_op(lua_State *L) { lua_pushstring(L, op_name(uop_op(luop_check(L, 1)))); return 1; }
static int u_dtype(lua_State *L) { luop_push_dtype(L, luop_check(L, 1)->dtype); return 1; }
static int u_id(lua_State *L) { lua_pushinteger(L, luop_check(L, 1)->id); return 1; }
static int u_arg(lua_State *L) { luop_push_arg(L, luop_check(L, 1)->arg); return 1; }
static int u_tag(lua_State *L) { luop_push_arg(L, luop_check(L, 1)->tag); return 1; }
static int u_graph_size(lua_State *L) { lua_pushinteger(L, (lua_Integer)uop_graph_size(luop_check(L, 1))); return 1; }

static int u_src(lua_State *L) {
    const UOp *u = luop_check(L, 1);
    lua_createtable(L, u->nsrc, 0);
    for (int i = 0; i < u->nsrc; i++) {
        luop_push(L, u->src[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int u_toposort(lua_State *L) {
    const UOp *u = luop_check(L, 1);
    size_t n;
    const UOp **order = uop_toposort(u, &n);
    if (!order) return luaL_error(L, "toposort: out of memory");
    /* copy into Lua with no chance of an error leaking the array */
    if (!lua_checkstack(L, 2)) { free(order); return luaL_error(L, "toposort: stack overflow"); }
    lua_createtable(L, (int)(n < 1u << 20 ? n : 0), 0);
    for (size_t i = 0; i < n; i++) {
        luop_push(L, order[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    free(order);
    return 1;
}

static int bounds_error(lua_State *L, const char *what, const UOp *u) {
    StrBuf sb;
    sb_init(&sb);
    dt_format(&sb, u->dtype);
    lua_pushfstring(L, "%s: %%%d has dtype %s, which has no integer bounds", what, (int)u->id, sb_str(&sb));
    sb_free(&sb);
    return lua_error(L);
}

static int u_vmin(lua_State *L) {
    const UOp *u = luop_check(L, 1);
    int64_t lo, hi;
    if (!uop_bounds(u, &lo, &hi)) return bounds_error(L, "vmin", u);
    if (dt_is_bool(u->dtype)) lua_pushboolean(L, lo != 0);
    else lua_pushinteger(L, lo);
    return 1;
}

static int u_vmax(lua_State *L) {
    const UOp *u = luop_check(L, 1);
    int64_t lo, hi;
    if (!uop_bounds(u, &lo, &hi)) return bounds_error(L, "vmax", u);
    if (dt_is_bool(u->dtype)) lua_pushboolean(L, hi != 0);
    else lua_pushinteger(L, hi);
    return 1;
}

/* u:eval{x=3, r0=2}: integer (or boolean for a bool node) */
static int u_eval(lua_State *L) {
    const UOp *u = luop_check(L, 1);
    if (lua_isnoneornil(L, 2)) lua_newtable(L);
    else luaL_checktype(L, 2, LUA_TTABLE);
    int t = lua_absindex(L, lua_isnoneornil(L, 2) ? -1 : 2);
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) { n++; lua_pop(L, 1); }
    EvalBinding *b = lua_newuserdatauv(L, sizeof *b * (n ? n : 1), 0);
    size_t i = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            return luaL_error(L, "eval: binding names must be strings, got %s", luaL_typename(L, -2));
        const char *name = lua_tostring(L, -2);
        int isint;
        lua_Integer v = lua_tointegerx(L, -1, &isint);
        if (!isint && lua_isboolean(L, -1)) { v = lua_toboolean(L, -1); isint = 1; }
        if (!isint) {
            const char *type = luaL_typename(L, -1);
            return luaL_error(L, "eval: value of '%s' must be an integer, got %s", luop_quote(L, name), type);
        }
        b[i].name = name; /* kept alive: the key stays in the table */
        b[i].value = v;
        i++;
        lua_pop(L, 1);
    }
    int64_t out;
    char err[256];
    if (!uop_eval_int(u, b, n, &out, err, sizeof err)) return luaL_error(L, "eval: %s", err);
    if (dt_is_bool(u->dtype)) lua_pushboolean(L, out != 0);
    else lua_pushinteger(L, out);
    return 1;
}

static int u_lt(lua_State *L) {
    const UOp *s = luop_check(L, 1);
    luop_push(L, binop(L, OP_CMPLT, s, ufix(L, 2, s)));
    return 1;
}
static int u_gt(lua_State *L) {
    const UOp *s = luop_check(L, 1);
    luop_push(L, binop(L, OP_CMPLT, ufix(L, 2, s), s));
    return 1;
}
static int u_ge(lua_State *L) {
    const UOp *s = luop_check(L, 1);
    luop_push(L, logical_not(L, binop(L, OP_CMPLT, s, ufix(L, 2, s))));
    return 1;
}
static int u_le(lua_State *L) {
    const UOp *s = luop_check(L, 1);
    luop_push(L, logical_not(L, binop(L, OP_CMPLT, ufix(L, 2, s), s)));
    return 1;
}
static int u_ne(lua_State *L) {
    const UOp *s = luop_check(L, 1);
    luop_push(L, binop(L, OP_CMPNE, s, ufix(L, 2, s)));
    return 1;
}
static int u_eq(lua_State *L) {
    const UOp *s = luop_check(L, 1);
    luop_push(L, logical_not(L, binop(L, OP_CMPNE, s, ufix(L, 2, s))));
    return 1;
}
static int u_max(lua_State *L) {
    const UOp *s = luop_check(L, 1);
    luop_push(L, binop(L, OP_MAX, s, ufix(L, 2, s)));
    return 1;
}
static int u_min(lua_State *L) {
    const UOp *s = luop_check(L, 1);
    const UOp *m = binop(L, OP_MAX, neg(L, s), neg_value(L, 2, s));
    luop_push(L, neg(L, m));
    return 1;
}
static int u_logical_not(lua_State *L) {
    luop_push(L, logical_not(L, luop_check(L, 1)));
    return 1;
}
static int u_neg(lua_State *L) { return m_unm(L); }

/* cond:where(x, y): one of x, y must be a UOp; a number takes its dtype */
static int u_where(lua_State *L) {
    const UOp *cond = luop_check(L, 1);
    const UOp *x = luop_test(L, 2), *y = luop_test(L, 3);
    if (x) y = ufix(L, 3, x);
    else if (y) x = ufix(L, 2, y);
    else return luaL_error(L, "where: x or y must be a UOp");
    luop_push(L, checked(L, uop_where(luop_ctx(L), cond, x, y)));
    return 1;
}

static int u_cast(lua_State *L) {
    const UOp *s = luop_check(L, 1);
    luop_push(L, checked(L, uop_cast(luop_ctx(L), s, luop_check_dtype(L, 2))));
    return 1;
}

static int u_bitcast(lua_State *L) {
    const UOp *s = luop_check(L, 1);
    luop_push(L, checked(L, uop_new(luop_ctx(L), OP_BITCAST, luop_check_dtype(L, 2), &s, 1, NULL)));
    return 1;
}

static int u_const_like(lua_State *L) {
    const UOp *s = luop_check(L, 1);
    luaL_checkany(L, 2);
    luop_push(L, ufix(L, 2, s));
    return 1;
}

/* u:alu(op, ...): an ALU node with u as first source, dtype inferred */
static int u_alu(lua_State *L) {
    const UOp *s = luop_check(L, 1);
    Op op = luop_check_op(L, 2);
    int n = lua_gettop(L) - 1;
    if (n > 3) return luaL_error(L, "alu: at most 3 sources");
    const UOp *src[3] = {s, NULL, NULL};
    for (int i = 1; i < n; i++) src[i] = ufix(L, 2 + i, s);
    luop_push(L, checked(L, uop_alu(luop_ctx(L), op, src, n)));
    return 1;
}

static int unary(lua_State *L) {
    const UOp *s = luop_check(L, 1);
    Op op = (Op)lua_tointeger(L, lua_upvalueindex(1));
    luop_push(L, checked(L, uop_unary(luop_ctx(L), op, s)));
    return 1;
}

static const luaL_Reg uop_methods[] = {
    {"op", u_op}, {"dtype", u_dtype}, {"src", u_src}, {"arg", u_arg}, {"tag", u_tag}, {"id", u_id},
    {"graph_size", u_graph_size}, {"toposort", u_toposort}, {"vmin", u_vmin}, {"vmax", u_vmax},
    {"eval", u_eval}, {"lt", u_lt}, {"gt", u_gt}, {"le", u_le}, {"ge", u_ge}, {"ne", u_ne},
    {"eq", u_eq}, {"max", u_max}, {"min", u_min}, {"where", u_where}, {"cast", u_cast},
    {"bitcast", u_bitcast}, {"logical_not", u_logical_not}, {"neg", u_neg},
    {"const_like", u_const_like}, {"alu", u_alu}, {NULL, NULL}};

static const luaL_Reg uop_meta[] = {
    {"__add", m_add}, {"__sub", m_sub}, {"__mul", m_mul}, {"__div", m_div}, {"__idiv", m_idiv},
    {"__mod", m_mod}, {"__unm", m_unm}, {"__band", m_band}, {"__bor", m_bor}, {"__bxor", m_bxor},
    {"__shl", m_shl}, {"__shr", m_shr}, {"__eq", m_eq}, {"__lt", m_compare}, {"__le", m_compare},
    {"__tostring", m_tostring},
    {"__concat", m_concat}, {NULL, NULL}};

static const struct { const char *name; Op op; } unary_methods[] = {
    {"sqrt", OP_SQRT}, {"exp2", OP_EXP2}, {"log2", OP_LOG2}, {"sin", OP_SIN},
    {"reciprocal", OP_RECIPROCAL}, {"trunc", OP_TRUNC}};

void luop_open_uop(lua_State *L) {
    lua_newtable(L);
    lua_newtable(L);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, UOP_CACHE);

    luaL_newmetatable(L, LUOP_UOP_MT);
    luaL_setfuncs(L, uop_meta, 0);
    luaL_newlib(L, uop_methods);
    for (size_t i = 0; i < sizeof unary_methods / sizeof unary_methods[0]; i++) {
        lua_pushinteger(L, unary_methods[i].op);
        lua_pushcclosure(L, unary, 1);
        lua_setfield(L, -2, unary_methods[i].name);
    }
    /* uop.methods: the method table, for the prelude and completion */
    lua_pushvalue(L, -1);
    lua_setfield(L, -4, "methods");
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}
