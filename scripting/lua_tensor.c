/* lua_tensor.c - the C side of the Tensor front end: the host data of the
 * tensor graph's BUFFER nodes (a registry per Lua state: a buffer's data
 * lives as long as its node, and goes when a compaction frees the node or
 * the state closes), reading and writing that data as Lua values, shapes,
 * dtype facts and promotion for tensor.lua, and uop.reference, the naive
 * evaluator of a tensor graph that tests check the front end against.
 *
 *   uop.buffer(dtype, n | {values})  a BUFFER with host data (zeroed or filled)
 *   uop.buffer_values(buf [, shape]) its data: a flat list, or nested by shape
 *   uop.reference(t | u)             the value of a tensor graph, nested lists
 *   uop.shape(u)                     the tensor shape of a node (nil if none)
 *   uop._has_data(u)                 whether u is a BUFFER with host data
 *   uop._unique()                    a fresh UNIQUE node (shared counter)
 *   uop._dtype_info(dt)              {dtype=, kind=, bits=, itemsize=, min=, max=}
 *   uop._least_upper(a, b)           tinygrad's least_upper_dtype */
#include "lua_internal.h"
#include "tensor_data.h"
#include "../core/backend/backend.h"
#include "../core/backend/tensor_reference.h"
#include "../core/sched/shape.h"
#include "../core/util/interrupt.h"
#include "../core/util/u64map.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REGISTRY_KEY "uopdb.tensor_data"
#define REGISTRY_MT "uopdb.TensorData"

/* one node's host data */
typedef struct HostBuffer {
    void *data;             /* buffer_alloc'd */
    size_t bytes;
} HostBuffer;

typedef struct BufferRegistry {
    U64Map data;            /* BUFFER (or DEFINE_GLOBAL) node id -> HostBuffer */
    size_t bytes;           /* host data held, in bytes */
    int64_t next_unique;    /* the next UNIQUE number to hand out */
} BufferRegistry;

static void host_buffer_free(HostBuffer *h) {
    if (!h) return;
    buffer_free(h->data);
    free(h);
}

static BufferRegistry *registry(lua_State *L);

static int registry_gc(lua_State *L) {
    BufferRegistry *r = luaL_checkudata(L, 1, REGISTRY_MT);
    for (size_t i = 0; i < r->data.cap; i++)
        if (r->data.vals[i]) host_buffer_free((HostBuffer *)r->data.vals[i]);
    u64map_free(&r->data);
    memset(r, 0, sizeof *r);
    return 0;
}

/* Registers data (bytes long) as node id's host data, freeing what the id
 * had; false (nothing changed, data not taken) when out of memory. */
static bool registry_put(BufferRegistry *r, uint32_t id, void *data, size_t bytes) {
    HostBuffer *h = malloc(sizeof *h);
    if (!h) return false;
    *h = (HostBuffer){data, bytes};
    HostBuffer *old = (HostBuffer *)u64map_get(&r->data, id);
    if (!u64map_put(&r->data, id, h)) {
        free(h);
        return false;
    }
    if (old) r->bytes -= old->bytes;
    host_buffer_free(old);
    r->bytes += bytes;
    return true;
}

size_t luop_buffer_bytes(lua_State *L) {
    BufferRegistry *r = registry(L);
    return r ? r->bytes : 0;
}

size_t luop_buffer_count(lua_State *L) {
    BufferRegistry *r = registry(L);
    return r ? r->data.count : 0;
}

size_t luop_buffer_prune(lua_State *L, size_t *bytes_freed) {
    BufferRegistry *r = registry(L);
    *bytes_freed = 0;
    if (!r) return 0;
    UCtx *c = luop_ctx(L);
    size_t gone = 0;
    for (size_t i = 0; i < r->data.cap; i++)
        if (r->data.vals[i] && !uctx_node(c, (uint32_t)r->data.keys[i])) gone++;
    if (!gone) return 0;
    /* the map cannot remove keys: the entries that stay go into a new one */
    U64Map kept = {0};
    for (size_t i = 0; i < r->data.cap; i++) {
        HostBuffer *h = (HostBuffer *)r->data.vals[i];
        if (!h || !uctx_node(c, (uint32_t)r->data.keys[i])) continue;
        if (!u64map_put(&kept, r->data.keys[i], h)) {
            u64map_free(&kept); /* out of memory: keep everything for now */
            return 0;
        }
    }
    for (size_t i = 0; i < r->data.cap; i++) {
        HostBuffer *h = (HostBuffer *)r->data.vals[i];
        if (!h || uctx_node(c, (uint32_t)r->data.keys[i])) continue;
        *bytes_freed += h->bytes;
        r->bytes -= h->bytes;
        host_buffer_free(h);
    }
    u64map_free(&r->data);
    r->data = kept;
    luop_memory(L)->host_bytes = r->bytes;
    return gone;
}

/* NULL when the module is not open in this state (never raises) */
static BufferRegistry *registry(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, REGISTRY_KEY);
    BufferRegistry *r = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return r;
}

static BufferRegistry *check_registry(lua_State *L) {
    BufferRegistry *r = registry(L);
    if (!r) luaL_error(L, "uopdb: the tensor data registry is not open in this Lua state");
    return r;
}


static bool buffer_dtype_ok(const DType *dt) {
    return dt->kind != DTK_PTR && dt->sk != SK_VOID && dt->sk != SK_INDEX && dt->sk != SK_FP8E4M3 &&
           dt->sk != SK_FP8E5M2;
}

static const UOp *fresh_unique(lua_State *L, BufferRegistry *r) {
    UCtx *c = luop_ctx(L);
    return uop_new(c, OP_UNIQUE, DT_VOID, NULL, 0, arg_int(c, r->next_unique++));
}

/* raises "uop.buffer: N bytes exceeds the host buffer limit (16 GiB)" before
 * a buffer too large to hold is allocated */
static void check_host_limit(lua_State *L, const DType *dt, int64_t count) {
    int64_t bytes = buffer_bytes(dt, count);
    if (bytes < 0 || bytes > BUFFER_HOST_LIMIT_BYTES) {
        if (bytes < 0) luaL_error(L, "uop.buffer: %I elements overflow a byte count; the host buffer limit is " BUFFER_HOST_LIMIT_TEXT, (lua_Integer)count);
        luaL_error(L, "uop.buffer: %I bytes exceeds the host buffer limit (" BUFFER_HOST_LIMIT_TEXT ")", (lua_Integer)bytes);
    }
}

const UOp *luop_buffer_new(lua_State *L, const DType *dt, int64_t count, void **data_out) {
    BufferRegistry *r = check_registry(L);
    UCtx *c = luop_ctx(L);
    char name[64];
    if (!buffer_dtype_ok(dt))
        luaL_error(L, "buffer: %s cannot hold host data (a scalar number or bool dtype is needed)", dt_str(dt, name, sizeof name));
    if (count < 0) luaL_error(L, "buffer: negative size %I", (lua_Integer)count);
    check_host_limit(L, dt, count);
    void *data = buffer_alloc(dt, count);
    if (!data) luaL_error(L, "buffer: out of memory for %I elements of %s", (lua_Integer)count, dt_str(dt, name, sizeof name));
    const UOp *dev = uop_new(c, OP_DEVICE, DT_VOID, NULL, 0, arg_str(c, "CPU"));
    const UOp *buf = NULL;
    /* a UNIQUE number someone built by hand could already name a buffer */
    for (int tries = 0; dev && tries < 1000; tries++) {
        const UOp *src[2] = {fresh_unique(L, r), dev};
        if (!src[0]) break;
        buf = uop_new(c, OP_BUFFER, dt, src, 2, arg_int(c, count));
        if (!buf || !u64map_get(&r->data, buf->id)) break;
        buf = NULL;
    }
    if (!buf || !registry_put(r, buf->id, data, (size_t)buffer_bytes(dt, count))) {
        buffer_free(data);
        if (buf) luaL_error(L, "buffer: out of memory");
        luop_ctx_error(L);
    }
    luop_memory(L)->host_bytes = r->bytes;
    if (data_out) *data_out = data;
    return buf;
}

static void write_element(lua_State *L, const DType *dt, void *p, size_t k, int idx);

const void *luop_buffer_data(lua_State *L, const UOp *buffer) {
    BufferRegistry *r = registry(L);
    if (!r || !buffer || (uop_op(buffer) != OP_BUFFER && uop_op(buffer) != OP_DEFINE_GLOBAL)) return NULL;
    const HostBuffer *h = u64map_get(&r->data, buffer->id);
    return h ? h->data : NULL;
}

void *luop_buffer_attach(lua_State *L, const UOp *node, const DType *dt, int64_t count) {
    BufferRegistry *r = check_registry(L);
    char name[64];
    if (!buffer_dtype_ok(dt))
        luaL_error(L, "buffer: %s cannot hold host data (a scalar number or bool dtype is needed)", dt_str(dt, name, sizeof name));
    check_host_limit(L, dt, count);
    void *data = buffer_alloc(dt, count);
    if (!data) luaL_error(L, "buffer: out of memory for %I elements of %s", (lua_Integer)count, dt_str(dt, name, sizeof name));
    if (!registry_put(r, node->id, data, (size_t)buffer_bytes(dt, count))) {
        buffer_free(data);
        luaL_error(L, "buffer: out of memory");
    }
    luop_memory(L)->host_bytes = r->bytes;
    return data;
}

void luop_buffer_write(lua_State *L, const DType *dt, void *data, int64_t k, int idx) {
    write_element(L, dt, data, (size_t)k, idx);
}

const void *luop_buffer_lookup(void *ud, const UOp *buffer) { return luop_buffer_data(ud, buffer); }

/* ---- element access ---- */

static bool dt_is_floating(const DType *dt) { return dt_is_float(dt); }

/* writes the Lua value at idx as element k; raises on a non-number */
static void write_element(lua_State *L, const DType *dt, void *p, size_t k, int idx) {
    int t = lua_type(L, idx);
    if (t != LUA_TNUMBER && t != LUA_TBOOLEAN)
        luaL_error(L, "buffer: element %I is a %s, not a number or boolean", (lua_Integer)k + 1, luaL_typename(L, idx));
    double f = t == LUA_TBOOLEAN ? (double)lua_toboolean(L, idx) : lua_tonumber(L, idx);
    int64_t i = 0;
    if (t == LUA_TBOOLEAN) i = lua_toboolean(L, idx);
    else if (lua_isinteger(L, idx)) i = lua_tointeger(L, idx);
    else if (!dt_is_floating(dt)) {
        /* only an integer or bool element needs the integer value: a NaN or
         * inf bound for a float buffer is never converted to int64 */
        if (!dt_is_floating(dt) && dt->sk != SK_BOOL && (isnan(f) || !(f >= -0x1p63 && f < 0x1p63)))
            luaL_error(L, "buffer: element %I (%f) does not fit in an integer", (lua_Integer)k + 1, f);
        i = dt->sk == SK_BOOL ? f != 0 : (int64_t)f;
    }
    if (lua_isinteger(L, idx)) f = (double)lua_tointeger(L, idx);
    switch (dt->sk) {
    case SK_BOOL: ((unsigned char *)p)[k] = i != 0; break;
    case SK_INT8: ((int8_t *)p)[k] = (int8_t)(uint8_t)i; break;
    case SK_UINT8: ((uint8_t *)p)[k] = (uint8_t)i; break;
    case SK_INT16: ((int16_t *)p)[k] = (int16_t)(uint16_t)i; break;
    case SK_UINT16: ((uint16_t *)p)[k] = (uint16_t)i; break;
    case SK_INT32: ((int32_t *)p)[k] = (int32_t)(uint32_t)i; break;
    case SK_UINT32: ((uint32_t *)p)[k] = (uint32_t)i; break;
    case SK_INT64: ((int64_t *)p)[k] = i; break;
    case SK_UINT64: ((uint64_t *)p)[k] = (uint64_t)i; break;
    case SK_FLOAT16: ((_Float16 *)p)[k] = (_Float16)f; break;
    case SK_BFLOAT16: ((uint16_t *)p)[k] = bf16_from_double(f); break;
    case SK_FLOAT32: ((float *)p)[k] = (float)f; break;
    case SK_FLOAT64: ((double *)p)[k] = f; break;
    default: luaL_error(L, "buffer: no host layout for this dtype");
    }
}

static void push_element(lua_State *L, const DType *dt, const void *p, size_t k) {
    switch (dt->sk) {
    case SK_BOOL: lua_pushboolean(L, ((const unsigned char *)p)[k] != 0); break;
    case SK_INT8: lua_pushinteger(L, ((const int8_t *)p)[k]); break;
    case SK_UINT8: lua_pushinteger(L, ((const uint8_t *)p)[k]); break;
    case SK_INT16: lua_pushinteger(L, ((const int16_t *)p)[k]); break;
    case SK_UINT16: lua_pushinteger(L, ((const uint16_t *)p)[k]); break;
    case SK_INT32: lua_pushinteger(L, ((const int32_t *)p)[k]); break;
    case SK_UINT32: lua_pushinteger(L, ((const uint32_t *)p)[k]); break;
    case SK_INT64: lua_pushinteger(L, ((const int64_t *)p)[k]); break;
    case SK_UINT64: lua_pushinteger(L, (lua_Integer)((const uint64_t *)p)[k]); break;
    case SK_FLOAT16: lua_pushnumber(L, (double)((const _Float16 *)p)[k]); break;
    case SK_BFLOAT16: lua_pushnumber(L, bf16_to_double(((const uint16_t *)p)[k])); break;
    case SK_FLOAT32: lua_pushnumber(L, ((const float *)p)[k]); break;
    case SK_FLOAT64: lua_pushnumber(L, ((const double *)p)[k]); break;
    default: lua_pushnil(L); break;
    }
}

/* the most Lua lists a nested result may take (about 4 GiB of tables): an
 * empty shape such as (1e9, 0) has no elements but would take 1e9 lists */
#define NESTED_MAX_LISTS ((int64_t)1 << 26)

/* whether a result of shape s takes at most NESTED_MAX_LISTS lists */
static bool nested_lists_ok(const Shape *s) {
    int64_t lists = 1, level = 1;
    for (int i = 0; i + 1 < s->ndim && lists <= NESTED_MAX_LISTS; i++) {
        level = s->d[i] > NESTED_MAX_LISTS ? NESTED_MAX_LISTS + 1 : level * s->d[i];
        if (level > NESTED_MAX_LISTS) level = NESTED_MAX_LISTS + 1;
        lists += level;
    }
    return lists <= NESTED_MAX_LISTS;
}

/* raises "what: the shape (...) needs more than 2^26 nested lists" */
static int nested_lists_error(lua_State *L, const char *what, const Shape *s) {
    StrBuf sb;
    sb_init(&sb);
    shape_format(&sb, s);
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    return luaL_error(L, "%s: the shape %s needs more than 2^26 nested lists", what, lua_tostring(L, -1));
}

/* Pushes the elements as lists nested by shape (a bare value for ()). */
typedef void (*PushFn)(lua_State *L, const void *src, size_t k);

static void push_nested(lua_State *L, const Shape *s, int dim, size_t *k, PushFn push, const void *src) {
    if (dim == s->ndim) {
        push(L, src, (*k)++);
        return;
    }
    luaL_checkstack(L, 3, "tensor too deep");
    lua_createtable(L, s->d[dim] < (1 << 20) ? (int)s->d[dim] : 0, 0);
    for (int64_t i = 0; i < s->d[dim]; i++) {
        push_nested(L, s, dim + 1, k, push, src);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* reads a shape from the Lua list at idx */
static void check_shape(lua_State *L, int idx, Shape *s) {
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    if (n > SHAPE_MAX_DIMS) luaL_error(L, "shape: %I dimensions is more than the %d supported", n, SHAPE_MAX_DIMS);
    s->ndim = (int)n;
    for (int i = 0; i < s->ndim; i++) {
        lua_rawgeti(L, idx, i + 1);
        int isint;
        lua_Integer v = lua_tointegerx(L, -1, &isint);
        if (!isint || v < 0) luaL_error(L, "shape: dimension %d must be a non-negative integer", i);
        s->d[i] = v;
        lua_pop(L, 1);
    }
}

/* ---- Lua functions ---- */

typedef struct ElemSrc { const DType *dt; const void *p; } ElemSrc;
static void push_buffer_elem(lua_State *L, const void *src, size_t k) {
    const ElemSrc *e = src;
    push_element(L, e->dt, e->p, k);
}

/* uop.buffer(dtype, n | {values}): a BUFFER on CPU with host data */
static int t_buffer(lua_State *L) {
    luop_safe_point(L);
    const DType *dt = luop_check_dtype(L, 1);
    void *data;
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_Integer n = (lua_Integer)lua_rawlen(L, 2);
        const UOp *b = luop_buffer_new(L, dt, n, &data);
        for (lua_Integer i = 0; i < n; i++) {
            lua_rawgeti(L, 2, i + 1);
            write_element(L, dt, data, (size_t)i, -1);
            lua_pop(L, 1);
        }
        luop_push(L, b);
        return 1;
    }
    lua_Integer n = luaL_checkinteger(L, 2);
    luop_push(L, luop_buffer_new(L, dt, n, &data));
    return 1;
}

/* uop._random_buffer(dtype, count, bits, seed): a BUFFER of count uniform
 * numbers in [0, 1) with bits random bits each, from splitmix64 starting at
 * seed (Tensor.rand's generator, filled here so that no Lua table of count
 * numbers is built; the size is checked before anything is allocated) */
static int t_random_buffer(lua_State *L) {
    const DType *dt = luop_check_dtype(L, 1);
    lua_Integer count = luaL_checkinteger(L, 2), bits = luaL_checkinteger(L, 3);
    uint64_t state = (uint64_t)luaL_checkinteger(L, 4);
    if (dt->sk != SK_FLOAT16 && dt->sk != SK_FLOAT32 && dt->sk != SK_FLOAT64)
        return luaL_error(L, "_random_buffer: needs float16, float32 or float64");
    if (bits < 1 || bits > 53) return luaL_error(L, "_random_buffer: bits must be 1 to 53");
    void *data;
    const UOp *b = luop_buffer_new(L, dt, count, &data);
    double scale = ldexp(1.0, -(int)bits);
    for (lua_Integer i = 0; i < count; i++) {
        /* a fill of billions of numbers stops on Ctrl-C */
        if ((i & 0xFFFFF) == 0xFFFFF && uopdb_interrupted()) return luaL_error(L, "rand: interrupted");
        state += 0x9E3779B97F4A7C15ull;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        double v = (double)(z >> (64 - bits)) * scale;
        if (dt->sk == SK_FLOAT16) ((_Float16 *)data)[i] = (_Float16)v;
        else if (dt->sk == SK_FLOAT32) ((float *)data)[i] = (float)v;
        else ((double *)data)[i] = v;
    }
    luop_push(L, b);
    return 1;
}

/* uop.buffer_values(buf [, shape]): the host data, flat or nested */
static int t_buffer_values(lua_State *L) {
    const UOp *b = luop_check(L, 1);
    const void *p = luop_buffer_data(L, b);
    if (!p) return luaL_error(L, "buffer_values: %%%d is not a BUFFER with host data", (int)b->id);
    int64_t count = b->arg && b->arg->kind == ARG_INT ? b->arg->v.i : 0;
    Shape s = {.ndim = 1, .d = {count}};
    if (!lua_isnoneornil(L, 2)) {
        check_shape(L, 2, &s);
        if (shape_numel(&s) != count)
            return luaL_error(L, "buffer_values: shape of %I elements for a buffer of %I", (lua_Integer)shape_numel(&s),
                              (lua_Integer)count);
    }
    if (!nested_lists_ok(&s)) return nested_lists_error(L, "buffer_values", &s);
    ElemSrc e = {b->dtype, p};
    size_t k = 0;
    push_nested(L, &s, 0, &k, push_buffer_elem, &e);
    return 1;
}

const UOp *luop_test_tensor(lua_State *L, int idx) {
    const UOp *u = luop_test(L, idx);
    if (u || lua_type(L, idx) != LUA_TTABLE) return u;
    lua_getfield(L, idx, "uop");
    u = luop_test(L, -1);
    lua_pop(L, 1);
    return u;
}

/* the UOp of a Tensor (a table with field uop) or a UOp; an error otherwise */
static const UOp *tensor_or_uop(lua_State *L, int idx) {
    const UOp *u = luop_test_tensor(L, idx);
    if (!u) luaL_typeerror(L, idx, "Tensor or UOp");
    return u;
}

static void push_ref_elem(lua_State *L, const void *src, size_t k) {
    const RefTensor *t = src;
    if (t->f) lua_pushnumber(L, t->f[k]);
    else if (dt_is_bool(t->dtype)) lua_pushboolean(L, t->i[k] != 0);
    else lua_pushinteger(L, t->i[k]);
}

/* uop.reference(t | u): the graph computed naively, as nested lists */
static int t_reference(lua_State *L) {
    const UOp *u = tensor_or_uop(L, 1);
    RefTensor t;
    char err[512];
    if (!ref_eval(u, luop_buffer_lookup, L, &t, err, sizeof err)) return luaL_error(L, "%s", err);
    /* copy out with no chance of an error leaking the result */
    if (!nested_lists_ok(&t.shape)) {
        Shape shape = t.shape;
        ref_tensor_free(&t);
        return nested_lists_error(L, "reference", &shape);
    }
    if (!lua_checkstack(L, SHAPE_MAX_DIMS * 3 + 8)) {
        ref_tensor_free(&t);
        return luaL_error(L, "reference: stack overflow");
    }
    size_t k = 0;
    push_nested(L, &t.shape, 0, &k, push_ref_elem, &t);
    ref_tensor_free(&t);
    return 1;
}

/* a shape as a Lua list of its dims */
static void push_shape(lua_State *L, const Shape *s) {
    lua_createtable(L, s->ndim, 0);
    for (int i = 0; i < s->ndim; i++) {
        lua_pushinteger(L, s->d[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

/* uop.shape(u): the tensor shape as a list, nil for a node without one */
static int t_shape(lua_State *L) {
    const UOp *u = tensor_or_uop(L, 1);
    Shape s;
    char err[512];
    if (!uop_shape(u, &s, err, sizeof err)) return luaL_error(L, "%s", err);
    if (s.ndim < 0) lua_pushnil(L);
    else push_shape(L, &s);
    return 1;
}

/* uop._shapes(u): the shape of every node of u's graph, keyed by node id (a
 * list, or false for a node without one), and the graph's nodes in
 * toposort order: one walk of the graph, where uop.shape walks it once a
 * call */
static int t_shapes(lua_State *L) {
    const UOp *u = tensor_or_uop(L, 1);
    const UOp **topo;
    size_t n;
    char err[512];
    Shape *shapes = uop_graph_shapes(u, &topo, &n, err, sizeof err);
    if (!shapes) return luaL_error(L, "%s", err);
    if (!lua_checkstack(L, 6)) {
        free(shapes);
        free(topo);
        return luaL_error(L, "shapes: stack overflow");
    }
    lua_createtable(L, 0, (int)(n < 1u << 20 ? n : 0));
    for (size_t i = 0; i < n; i++) {
        if (shapes[i].ndim < 0) lua_pushboolean(L, 0);
        else push_shape(L, &shapes[i]);
        lua_rawseti(L, -2, topo[i]->id);
    }
    lua_createtable(L, (int)(n < 1u << 20 ? n : 0), 0);
    for (size_t i = 0; i < n; i++) {
        luop_push(L, topo[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    free(shapes);
    free(topo);
    return 2;
}

/* uop._has_data(u): whether u is a BUFFER with host data */
static int t_has_data(lua_State *L) {
    lua_pushboolean(L, luop_buffer_data(L, luop_check(L, 1)) != NULL);
    return 1;
}

static int t_unique(lua_State *L) {
    luop_push_result(L, fresh_unique(L, check_registry(L)));
    return 1;
}

/* uop._dtype_info(dt): what tensor.lua needs to know of a dtype */
static int t_dtype_info(lua_State *L) {
    const DType *dt = luop_check_dtype(L, 1);
    lua_createtable(L, 0, 8);
    luop_push_dtype(L, dt);
    lua_setfield(L, -2, "dtype");
    const char *kind = dt->kind != DTK_SCALAR || dt->sk == SK_VOID || dt->sk == SK_INDEX ? "other"
                     : dt_is_bool(dt) ? "bool" : dt_is_float(dt) ? "float" : dt_is_unsigned(dt) ? "uint" : "int";
    lua_pushstring(L, kind);
    lua_setfield(L, -2, "kind");
    char name[64];
    lua_pushstring(L, dt_str(dt, name, sizeof name));
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, dt_bitsize(dt));
    lua_setfield(L, -2, "bits");
    lua_pushinteger(L, dt_itemsize(dt));
    lua_setfield(L, -2, "itemsize");
    lua_pushboolean(L, dt->kind == DTK_SCALAR && buffer_dtype_ok(dt));
    lua_setfield(L, -2, "host");
    if (dt_is_float(dt)) {
        lua_pushnumber(L, -HUGE_VAL);
        lua_setfield(L, -2, "min");
        lua_pushnumber(L, HUGE_VAL);
        lua_setfield(L, -2, "max");
        /* mantissa bits, for uniform random numbers */
        int mant = dt->sk == SK_FLOAT16 ? 11 : dt->sk == SK_BFLOAT16 ? 8 : dt->sk == SK_FLOAT32 ? 24
                 : dt->sk == SK_FLOAT64 ? 53 : 4;
        lua_pushinteger(L, mant);
        lua_setfield(L, -2, "mantissa");
    } else if (strcmp(kind, "other") != 0) {
        if (dt_is_bool(dt)) {
            lua_pushboolean(L, 0);
            lua_setfield(L, -2, "min");
            lua_pushboolean(L, 1);
            lua_setfield(L, -2, "max");
        } else {
            lua_pushinteger(L, dt_min_int(dt));
            lua_setfield(L, -2, "min");
            lua_pushinteger(L, dt_max_int(dt));
            lua_setfield(L, -2, "max");
        }
    }
    return 1;
}

static int t_least_upper(lua_State *L) {
    const DType *a = luop_check_dtype(L, 1), *b = luop_check_dtype(L, 2);
    const DType *r = dt_least_upper(a, b);
    if (!r) {
        char an[64], bn[64];
        return luaL_error(L, "no common dtype for %s and %s", dt_str(a, an, sizeof an), dt_str(b, bn, sizeof bn));
    }
    luop_push_dtype(L, r);
    return 1;
}

static const luaL_Reg tensor_funcs[] = {
    {"buffer", t_buffer}, {"buffer_values", t_buffer_values}, {"_buffer_values", t_buffer_values}, {"reference", t_reference},
    {"shape", t_shape}, {"_shapes", t_shapes}, {"_has_data", t_has_data}, {"_unique", t_unique}, {"_dtype_info", t_dtype_info},
    {"_least_upper", t_least_upper}, {"_random_buffer", t_random_buffer}, {NULL, NULL}};

void luop_open_tensor(lua_State *L) {
    if (!registry(L)) {
        BufferRegistry *r = lua_newuserdatauv(L, sizeof *r, 0);
        memset(r, 0, sizeof *r);
        if (luaL_newmetatable(L, REGISTRY_MT)) {
            lua_pushcfunction(L, registry_gc);
            lua_setfield(L, -2, "__gc");
        }
        lua_setmetatable(L, -2);
        lua_setfield(L, LUA_REGISTRYINDEX, REGISTRY_KEY);
    }
    luaL_setfuncs(L, tensor_funcs, 0);
    lua_pushinteger(L, BUFFER_HOST_LIMIT_BYTES);
    lua_setfield(L, -2, "_host_buffer_limit");
}
