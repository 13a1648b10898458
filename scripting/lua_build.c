/* lua_build.c - the constructors of the module: uop.const, uop.var,
 * uop.range, uop.new (any node, checked), uop.node (by stable id). */
#include "lua_internal.h"

#include <math.h>

const UOp *luop_const_number(lua_State *L, const DType *dt, int idx) {
    UCtx *c = luop_ctx(L);
    const UOp *u = NULL;
    if (lua_type(L, idx) == LUA_TBOOLEAN) u = uop_const_int(c, dt, lua_toboolean(L, idx));
    else if (lua_isinteger(L, idx)) u = uop_const_int(c, dt, lua_tointeger(L, idx));
    else if (lua_type(L, idx) == LUA_TNUMBER) {
        double v = lua_tonumber(L, idx);
        /* converting an out-of-range float to an integer is undefined in C */
        if (dt_is_int(dt) && isfinite(v) && !(v >= -0x1p63 && v < 0x1p63))
            luaL_error(L, "CONST: %f does not fit in an integer", v);
        u = uop_const_float(c, dt, v);
    } else luaL_error(L, "expected a UOp or a number, got %s", luaL_typename(L, idx));
    if (!u) luop_ctx_error(L);
    return u;
}

/* uop.const(dtype, v): v an integer, a float, a boolean or uop.Invalid */
static int b_const(lua_State *L) {
    luop_safe_point(L);
    const DType *dt = luop_check_dtype(L, 1);
    UCtx *c = luop_ctx(L);
    const UOp *u = NULL;
    switch (lua_type(L, 2)) {
    case LUA_TNUMBER:
    case LUA_TBOOLEAN: u = luop_const_number(L, dt, 2); break;
    case LUA_TUSERDATA: {
        const Arg *a = luop_to_arg(L, 2);
        if (!a || a->kind != ARG_INVALID) return luaL_typeerror(L, 2, "number, boolean or uop.Invalid");
        u = uop_const_arg(c, dt, a);
        break;
    }
    default: return luaL_typeerror(L, 2, "number, boolean or uop.Invalid");
    }
    luop_push_result(L, u);
    return 1;
}

/* uop.var(name, lo, hi): DEFINE_VAR of dtype index */
static int b_var(lua_State *L) {
    luop_safe_point(L);
    const char *name = luaL_checkstring(L, 1);
    lua_Integer lo = luaL_checkinteger(L, 2), hi = luaL_checkinteger(L, 3);
    if (lo > hi) return luaL_error(L, "var: '%s' has lo %I > hi %I", luop_quote(L, name), lo, hi);
    luop_push_result(L, uop_var(luop_ctx(L), name, lo, hi));
    return 1;
}

/* uop.range(n, axis_id = 0, axis_type = "LOOP"): n an integer or a UOp */
static int b_range(lua_State *L) {
    luop_safe_point(L);
    UCtx *c = luop_ctx(L);
    const UOp *end = luop_test(L, 1);
    if (!end) {
        if (!lua_isinteger(L, 1)) return luaL_typeerror(L, 1, "integer or UOp");
        end = uop_const_int(c, DT_INDEX, lua_tointeger(L, 1));
        if (!end) return luop_ctx_error(L);
    }
    lua_Integer axis_id = luaL_optinteger(L, 2, 0);
    AxisType at = lua_isnoneornil(L, 3) ? AXIS_LOOP : luop_check_axis(L, 3);
    luop_push_result(L, uop_range(c, end, axis_id, at));
    return 1;
}

/* uop.new(op, dtype, {srcs}, arg) */
static int b_new(lua_State *L) {
    luop_safe_point(L);
    lua_settop(L, 4);
    Op op = luop_check_op(L, 1);
    const DType *dt = lua_isnoneornil(L, 2) ? DT_VOID : luop_check_dtype(L, 2);
    int n = 0;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        lua_Integer len = (lua_Integer)lua_rawlen(L, 3);
        if (len > 65535) return luaL_error(L, "new: %I sources is too many", len);
        n = (int)len;
    }
    const UOp **src = lua_newuserdatauv(L, sizeof(UOp *) * (size_t)(n ? n : 1), 0);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, 3, i + 1);
        src[i] = luop_test(L, -1);
        if (!src[i])
            return luaL_error(L, "new: source %d of %s must be a UOp, got %s", i + 1, op_name(op), luaL_typename(L, -1));
        lua_pop(L, 1);
    }
    const Arg *arg = luop_to_arg(L, 4);
    luop_push_result(L, uop_new(luop_ctx(L), op, dt, src, n, arg));
    return 1;
}

/* uop.node(id): the node with this stable id, or nil */
static int b_node(lua_State *L) {
    lua_Integer id = luaL_checkinteger(L, 1);
    if (id < 0 || id > UINT32_MAX) { lua_pushnil(L); return 1; }
    luop_push(L, uctx_node(luop_ctx(L), (uint32_t)id));
    return 1;
}

/* uop.node_count(): nodes made in this state's context so far (the ids handed
 * out; nodes a compaction freed count too: uop.memory().nodes are the live ones) */
static int b_node_count(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)uctx_node_count(luop_ctx(L)));
    return 1;
}

static const luaL_Reg build_funcs[] = {
    {"const", b_const}, {"var", b_var}, {"range", b_range}, {"new", b_new},
    {"node", b_node}, {"node_count", b_node_count}, {NULL, NULL}};

void luop_open_build(lua_State *L) { luaL_setfuncs(L, build_funcs, 0); }
