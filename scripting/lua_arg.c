/* lua_arg.c - UOp args between Lua and C, and the Lua values that only
 * exist as args: ops (uop.ops.ADD), axis types (uop.axis.REDUCE), and the
 * markers uop.None (None inside a tuple) and uop.Invalid.
 *
 *   nil <-> None           integer <-> int         float <-> float
 *   boolean <-> bool       string <-> string       dtype value <-> dtype
 *   list table <-> tuple   uop.ops.X <-> op        uop.axis.X <-> axis type
 *   uop.Invalid <-> Invalid                        uop.None <-> None in a tuple */
#include "lua_internal.h"
#include <string.h>

#define OPS_BY_INDEX "uopdb.ops_by_index"
#define AXIS_BY_INDEX "uopdb.axis_by_index"
#define NONE_KEY "uopdb.None"
#define INVALID_KEY "uopdb.Invalid"
#define MAX_TUPLE_DEPTH 32

typedef struct EnumBox { int value; } EnumBox;
enum { SENTINEL_NONE, SENTINEL_INVALID };

/* ---- ops and axis types ---- */

void luop_push_op(lua_State *L, Op op) {
    lua_getfield(L, LUA_REGISTRYINDEX, OPS_BY_INDEX);
    lua_rawgeti(L, -1, (lua_Integer)op + 1);
    lua_remove(L, -2);
}

void luop_push_axis(lua_State *L, AxisType a) {
    lua_getfield(L, LUA_REGISTRYINDEX, AXIS_BY_INDEX);
    lua_rawgeti(L, -1, (lua_Integer)a + 1);
    lua_remove(L, -2);
}

Op luop_check_op(lua_State *L, int idx) {
    EnumBox *b = luaL_testudata(L, idx, LUOP_OP_MT);
    if (b) return (Op)b->value;
    if (lua_type(L, idx) == LUA_TSTRING) {
        Op op;
        const char *s = lua_tostring(L, idx);
        if (op_from_name(s, &op)) return op;
        luaL_error(L, "unknown op '%s'", luop_quote(L, s));
    }
    luaL_typeerror(L, idx, "op name or uop.ops value");
    return OP_NOOP;
}

AxisType luop_check_axis(lua_State *L, int idx) {
    EnumBox *b = luaL_testudata(L, idx, LUOP_AXIS_MT);
    if (b) return (AxisType)b->value;
    if (lua_type(L, idx) == LUA_TSTRING) {
        AxisType a;
        const char *s = lua_tostring(L, idx);
        if (axis_from_name(s, &a)) return a;
        luaL_error(L, "unknown axis type '%s'", luop_quote(L, s));
    }
    luaL_typeerror(L, idx, "axis type name or uop.axis value");
    return AXIS_LOOP;
}

static int op_tostring(lua_State *L) {
    EnumBox *b = luaL_checkudata(L, 1, LUOP_OP_MT);
    lua_pushfstring(L, "Ops.%s", op_name((Op)b->value));
    return 1;
}
static int op_name_m(lua_State *L) {
    lua_pushstring(L, op_name(luop_check_op(L, 1)));
    return 1;
}
static int axis_tostring(lua_State *L) {
    EnumBox *b = luaL_checkudata(L, 1, LUOP_AXIS_MT);
    lua_pushfstring(L, "AxisType.%s", axis_name((AxisType)b->value));
    return 1;
}
static int axis_name_m(lua_State *L) {
    lua_pushstring(L, axis_name(luop_check_axis(L, 1)));
    return 1;
}
static int sentinel_tostring(lua_State *L) {
    EnumBox *b = luaL_checkudata(L, 1, LUOP_SENTINEL_MT);
    lua_pushstring(L, b->value == SENTINEL_NONE ? "None" : "Invalid");
    return 1;
}

/* ---- conversion ---- */

void luop_push_arg(lua_State *L, const Arg *a) {
    if (!a) { lua_pushnil(L); return; }
    luaL_checkstack(L, 4, "arg nested too deeply");
    switch (a->kind) {
    case ARG_INT: lua_pushinteger(L, a->v.i); break;
    case ARG_FLOAT: lua_pushnumber(L, a->v.f); break;
    case ARG_BOOL: lua_pushboolean(L, a->v.b); break;
    case ARG_STR: lua_pushlstring(L, a->v.s, a->n); break;
    case ARG_OP: luop_push_op(L, a->v.op); break;
    case ARG_AXIS: luop_push_axis(L, a->v.axis); break;
    case ARG_DTYPE: luop_push_dtype(L, a->v.dt); break;
    case ARG_INVALID: lua_getfield(L, LUA_REGISTRYINDEX, INVALID_KEY); break;
    case ARG_TUPLE:
        lua_createtable(L, (int)a->n, 0);
        for (uint32_t i = 0; i < a->n; i++) {
            if (a->items[i]) luop_push_arg(L, a->items[i]);
            else lua_getfield(L, LUA_REGISTRYINDEX, NONE_KEY);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    }
}

static const Arg *to_arg(lua_State *L, int idx, int depth);

static const Arg *table_to_tuple(lua_State *L, int idx, int depth) {
    if (depth > MAX_TUPLE_DEPTH) luaL_error(L, "arg: tables nested more than %d deep", MAX_TUPLE_DEPTH);
    luaL_checkstack(L, 4, "arg: tables nested too deeply");
    UCtx *c = luop_ctx(L);
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    lua_Integer nkeys = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) { nkeys++; lua_pop(L, 1); }
    if (nkeys != n) luaL_error(L, "arg: a table arg must be a list (1..n, no other keys; use uop.None for None)");
    if (n > 65536) luaL_error(L, "arg: tuple of %d items is too long", (int)n);
    /* the items array lives in a userdata so a Lua error cannot leak it */
    const Arg **items = lua_newuserdatauv(L, sizeof(Arg *) * (size_t)(n ? n : 1), 0);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, idx, i);
        items[i - 1] = to_arg(L, lua_gettop(L), depth + 1);
        lua_pop(L, 1);
    }
    const Arg *t = arg_tuple(c, items, (uint32_t)n);
    lua_pop(L, 1);
    if (!t) luop_ctx_error(L);
    return t;
}

static const Arg *to_arg(lua_State *L, int idx, int depth) {
    UCtx *c = luop_ctx(L);
    const Arg *a = NULL;
    EnumBox *b;
    switch (lua_type(L, idx)) {
    case LUA_TNONE:
    case LUA_TNIL: return NULL;
    case LUA_TBOOLEAN: a = arg_bool(c, lua_toboolean(L, idx)); break;
    case LUA_TNUMBER:
        a = lua_isinteger(L, idx) ? arg_int(c, lua_tointeger(L, idx)) : arg_float(c, lua_tonumber(L, idx));
        break;
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        a = arg_strn(c, s, len);
        break;
    }
    case LUA_TTABLE: return table_to_tuple(L, idx, depth);
    case LUA_TUSERDATA:
        if ((b = luaL_testudata(L, idx, LUOP_OP_MT))) a = arg_op(c, (Op)b->value);
        else if ((b = luaL_testudata(L, idx, LUOP_AXIS_MT))) a = arg_axis(c, (AxisType)b->value);
        else if ((b = luaL_testudata(L, idx, LUOP_SENTINEL_MT))) {
            if (b->value == SENTINEL_NONE) return NULL;
            a = arg_invalid(c);
        } else if (luop_test_dtype(L, idx)) a = arg_dtype(c, luop_test_dtype(L, idx));
        else if (luop_test(L, idx)) luaL_error(L, "arg: a UOp cannot be an arg (put it in the sources)");
        else luaL_error(L, "arg: cannot convert a %s to an arg", luaL_typename(L, idx));
        break;
    default:
        luaL_error(L, "arg: cannot convert a %s to an arg", luaL_typename(L, idx));
    }
    if (!a) luop_ctx_error(L);
    return a;
}

const Arg *luop_to_arg(lua_State *L, int idx) { return to_arg(L, lua_absindex(L, idx), 0); }

/* ---- registration ---- */

static void new_enum_box(lua_State *L, const char *mt, int value) {
    EnumBox *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->value = value;
    luaL_setmetatable(L, mt);
}

static void enum_metatable(lua_State *L, const char *name, lua_CFunction tostring, lua_CFunction namefn) {
    luaL_newmetatable(L, name);
    lua_pushcfunction(L, tostring);
    lua_setfield(L, -2, "__tostring");
    lua_newtable(L);
    if (namefn) {
        lua_pushcfunction(L, namefn);
        lua_setfield(L, -2, "name");
    }
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}

void luop_open_arg(lua_State *L) {
    enum_metatable(L, LUOP_OP_MT, op_tostring, op_name_m);
    enum_metatable(L, LUOP_AXIS_MT, axis_tostring, axis_name_m);
    enum_metatable(L, LUOP_SENTINEL_MT, sentinel_tostring, NULL);

    /* uop.ops.NAME, and the registry list by index (kept alive by both) */
    lua_newtable(L);
    lua_createtable(L, OP_COUNT, 0);
    for (int i = 0; i < OP_COUNT; i++) {
        new_enum_box(L, LUOP_OP_MT, i);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, i + 1);
        lua_setfield(L, -3, op_name((Op)i));
    }
    lua_setfield(L, LUA_REGISTRYINDEX, OPS_BY_INDEX);
    lua_setfield(L, -2, "ops");

    lua_newtable(L);
    lua_createtable(L, AXIS_COUNT, 0);
    for (int i = 0; i < AXIS_COUNT; i++) {
        new_enum_box(L, LUOP_AXIS_MT, i);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, i + 1);
        lua_setfield(L, -3, axis_name((AxisType)i));
    }
    lua_setfield(L, LUA_REGISTRYINDEX, AXIS_BY_INDEX);
    lua_setfield(L, -2, "axis");

    new_enum_box(L, LUOP_SENTINEL_MT, SENTINEL_NONE);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, NONE_KEY);
    lua_setfield(L, -2, "None");
    new_enum_box(L, LUOP_SENTINEL_MT, SENTINEL_INVALID);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, INVALID_KEY);
    lua_setfield(L, -2, "Invalid");
}
