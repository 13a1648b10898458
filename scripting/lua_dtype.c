/* lua_dtype.c - dtypes as Lua values: uop.dtypes.<name>, with :vec(n),
 * :ptr(size[, addrspace]), :scalar(), :count() and friends.  One box per
 * dtype (dtypes are interned), so == and rawequal both work. */
#include "lua_internal.h"
#include <string.h>
#include "../core/backend/scalar_eval.h"

#define DTYPE_CACHE "uopdb.dtype_boxes"

typedef struct DTypeBox { const DType *dt; } DTypeBox;

void luop_push_dtype(lua_State *L, const DType *dt) {
    if (!dt) { lua_pushnil(L); return; }
    lua_getfield(L, LUA_REGISTRYINDEX, DTYPE_CACHE);
    if (lua_rawgetp(L, -1, dt) == LUA_TUSERDATA) { lua_remove(L, -2); return; }
    lua_pop(L, 1);
    DTypeBox *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->dt = dt;
    luaL_setmetatable(L, LUOP_DTYPE_MT);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, -3, dt);
    lua_remove(L, -2);
}

const DType *luop_test_dtype(lua_State *L, int idx) {
    DTypeBox *b = luaL_testudata(L, idx, LUOP_DTYPE_MT);
    return b ? b->dt : NULL;
}

const DType *luop_check_dtype(lua_State *L, int idx) {
    const DType *dt = luop_test_dtype(L, idx);
    if (dt) return dt;
    if (lua_type(L, idx) == LUA_TSTRING) {
        const char *s = lua_tostring(L, idx);
        int n = dt_parse(s, &dt);
        if (n > 0 && (size_t)n == strlen(s) && dt) return dt;
        luaL_error(L, "unknown dtype '%s'", luop_quote(L, s));
        return NULL;
    }
    luaL_typeerror(L, idx, "dtype");
    return NULL;
}

static int dt_tostring(lua_State *L) {
    const DType *dt = luop_test_dtype(L, 1);
    if (!dt) return luaL_typeerror(L, 1, "DType");
    StrBuf sb;
    sb_init(&sb);
    dt_format(&sb, dt);
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    return 1;
}

static int dt_eq(lua_State *L) {
    lua_pushboolean(L, luop_test_dtype(L, 1) == luop_test_dtype(L, 2));
    return 1;
}

static int dt_vec_m(lua_State *L) {
    const DType *dt = luop_check_dtype(L, 1);
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 1 || n > 65536) return luaL_error(L, "vec: count %d is out of range", (int)n);
    const DType *v = dt_is_ptr(dt) ? dt_ptr_vec(dt, (int)n) : dt_vec(dt, (int)n);
    if (!v) {
        StrBuf sb;
        sb_init(&sb);
        dt_format(&sb, dt);
        lua_pushfstring(L, "vec: %s cannot be a vector of %d", sb_str(&sb), (int)n);
        sb_free(&sb);
        return lua_error(L);
    }
    luop_push_dtype(L, v);
    return 1;
}

static int dt_ptr_m(lua_State *L) {
    const DType *dt = luop_check_dtype(L, 1);
    lua_Integer size = luaL_optinteger(L, 2, -1);
    const char *space = luaL_optstring(L, 3, "global");
    AddrSpace as;
    if (strcmp(space, "global") == 0) as = ADDR_GLOBAL;
    else if (strcmp(space, "local") == 0) as = ADDR_LOCAL;
    else if (strcmp(space, "reg") == 0) as = ADDR_REG;
    else return luaL_error(L, "ptr: unknown address space '%s' (global, local or reg)", luop_quote(L, space));
    if (dt_is_ptr(dt)) return luaL_error(L, "ptr: a pointer cannot point to a pointer");
    const DType *p = dt_ptr(dt, size, as);
    if (!p) return luaL_error(L, "ptr: cannot make a pointer of this dtype");
    luop_push_dtype(L, p);
    return 1;
}

static int dt_scalar_m(lua_State *L) { luop_push_dtype(L, luop_check_dtype(L, 1)->scalar); return 1; }
static int dt_base_m(lua_State *L) { luop_push_dtype(L, luop_check_dtype(L, 1)->base); return 1; }
static int dt_count_m(lua_State *L) { lua_pushinteger(L, dt_vcount(luop_check_dtype(L, 1))); return 1; }
static int dt_itemsize_m(lua_State *L) { lua_pushinteger(L, dt_itemsize(luop_check_dtype(L, 1))); return 1; }
static int dt_is_float_m(lua_State *L) { lua_pushboolean(L, dt_is_float(luop_check_dtype(L, 1))); return 1; }
static int dt_is_int_m(lua_State *L) { lua_pushboolean(L, dt_is_int(luop_check_dtype(L, 1))); return 1; }
static int dt_is_ptr_m(lua_State *L) { lua_pushboolean(L, dt_is_ptr(luop_check_dtype(L, 1))); return 1; }
/* dt:round(x) -> x rounded to the nearest value the float dtype dt holds,
 * as a CAST to dt rounds it */
static int dt_round_m(lua_State *L) {
    const DType *dt = luop_check_dtype(L, 1);
    lua_Number x = luaL_checknumber(L, 2);
    char name[64];
    if (!dt_is_float(dt) || dt->kind != DTK_SCALAR)
        return luaL_error(L, "round: %s is not a float dtype", dt_str(dt, name, sizeof name));
    lua_pushnumber(L, scalar_from_float(dt, x).f);
    return 1;
}

static int dt_tinygrad_m(lua_State *L) {
    StrBuf sb;
    sb_init(&sb);
    dt_format_tinygrad(&sb, luop_check_dtype(L, 1));
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    return 1;
}

static const luaL_Reg dtype_methods[] = {
    {"vec", dt_vec_m}, {"ptr", dt_ptr_m}, {"scalar", dt_scalar_m}, {"base", dt_base_m},
    {"count", dt_count_m}, {"itemsize", dt_itemsize_m}, {"is_float", dt_is_float_m},
    {"is_int", dt_is_int_m}, {"is_ptr", dt_is_ptr_m}, {"tinygrad", dt_tinygrad_m}, {"round", dt_round_m},
    {NULL, NULL}};

void luop_open_dtype(lua_State *L) {
    /* weak-valued cache: lightuserdata(DType*) -> box */
    lua_newtable(L);
    lua_newtable(L);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, DTYPE_CACHE);

    luaL_newmetatable(L, LUOP_DTYPE_MT);
    lua_pushcfunction(L, dt_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, dt_eq);
    lua_setfield(L, -2, "__eq");
    luaL_newlib(L, dtype_methods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);

    lua_newtable(L);
    for (int i = 0; dt_all_names[i]; i++) {
        ScalarKind sk;
        if (!sk_from_name(dt_all_names[i], &sk)) continue;
        luop_push_dtype(L, dt_scalar(sk));
        lua_setfield(L, -2, dt_all_names[i]);
    }
    lua_setfield(L, -2, "dtypes");
}
