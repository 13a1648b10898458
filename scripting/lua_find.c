/* lua_find.c - patterns of the rule language matched from Lua:
 *   uop.match(u, pattern), u:match(pattern) -> the captures {name = node}
 *     (empty when the pattern captures nothing), or nil and why not: "4
 *     fails on %5: wants the value 4, it is 3" (the furthest the match got);
 *   k:find(pattern [, {limit = N}]) -> a text object (kind "find"): the
 *     nodes of the kernel's graph at its current point that match, each
 *     with its captures; when none does, the node the match got furthest
 *     on and where it failed.  Fields: pattern, point, nodes, captures (one
 *     table per node), closest {node, pattern, reason} when none matches.
 * A pattern that does not compile is an error naming the place in it. */
#include <stdlib.h>
#include <string.h>

#include "lua_compile.h"
#include "../core/util/strbuf.h"

#define FIND_SHOWN 50 /* nodes k:find's text lists by default */

static Pat *check_pattern(lua_State *L, int idx, const char *what) {
    const char *text = luaL_checkstring(L, idx);
    char err[512];
    Pat *p = pattern_compile(text, err, sizeof err);
    if (!p) luaL_error(L, "%s: pattern %s", what, err);
    return p;
}

/* pushes {name = node} for a match */
static void push_captures(lua_State *L, const Pat *p, const UOp *const *caps) {
    lua_createtable(L, 0, pattern_capture_count(p));
    for (int i = 0; i < pattern_capture_count(p); i++) set_node_field(L, pattern_capture_name(p, i), caps[i]);
}

/* a full userdata owning a compiled pattern, so an error raised while
 * k:find works (out of memory, Ctrl-C) still frees it */
#define PATTERN_BOX_MT "uopdb.PatternBox"
static int box_gc(lua_State *L) {
    Pat **box = luaL_checkudata(L, 1, PATTERN_BOX_MT);
    pattern_free(*box);
    *box = NULL;
    return 0;
}

static Pat *boxed_pattern(lua_State *L, int idx, const char *what) {
    Pat **box = lua_newuserdatauv(L, sizeof *box, 0);
    *box = NULL;
    if (luaL_newmetatable(L, PATTERN_BOX_MT)) {
        lua_pushcfunction(L, box_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    *box = check_pattern(L, idx, what);
    return *box;
}

/* frees the boxed pattern at index box now and removes the box */
static void unbox(lua_State *L, int box) {
    Pat **b = lua_touserdata(L, box);
    pattern_free(*b);
    *b = NULL;
    lua_remove(L, box);
}


static int l_match(lua_State *L) {
    const UOp *u = luop_check(L, 1);
    Pat *p = boxed_pattern(L, 2, "match");
    int box = lua_gettop(L);
    const UOp *caps[PAT_MAX_CAPTURES];
    PatternMiss miss;
    if (pattern_explain(p, u, caps, &miss)) {
        push_captures(L, p, caps);
        unbox(L, box);
        return 1;
    }
    lua_pushnil(L);
    StrBuf sb;
    sb_init(&sb);
    add_pattern_miss(&sb, &miss);
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    unbox(L, box);
    return 2;
}

/* appends " x = %12, c = %3" */
static void add_captures(StrBuf *sb, const Pat *p, const UOp *const *caps) {
    int shown = 0;
    for (int i = 0; i < pattern_capture_count(p); i++)
        if (caps[i]) sb_printf(sb, "%s%s = %%%u", shown++ ? ", " : "   ", pattern_capture_name(p, i), caps[i]->id);
}

/* the work of k:find once its arguments are read; the pattern is freed by the caller */
static void find_in(lua_State *L, KernelPipeline *kp, const Pat *p, const char *text, int limit) {
    char err[1024];
    int stage = pipeline_position(kp);
    long r = pipeline_rewrite_position(kp);
    const UOp *root = r >= 0 ? pipeline_rewrite_point(kp, stage, (size_t)r, err, sizeof err)
                             : pipeline_root(kp, stage, err, sizeof err);
    if (!root) luaL_error(L, "find: %s", err);
    char point[32];
    point_text(point, sizeof point, stage, r);
    size_t n;
    const UOp **order = uop_toposort(root, &n);
    if (!order) luaL_error(L, "find: out of memory");
    /* the nodes that match, and the best miss when none does */
    lua_newtable(L); /* nodes */
    lua_newtable(L); /* captures */
    StrBuf sb;
    sb_init(&sb);
    int found = 0;
    PatternMiss best = {.progress = -2};
    const UOp *best_at = NULL;
    for (size_t i = 0; i < n; i++) {
        const UOp *caps[PAT_MAX_CAPTURES];
        PatternMiss miss;
        if (!pattern_explain(p, order[i], caps, &miss)) {
            if (miss.progress > best.progress) best = miss, best_at = order[i];
            continue;
        }
        found++;
        if (found <= limit) {
            add_node_line(L, &sb, "  ", order[i]);
            add_captures(&sb, p, caps);
            sb_putc(&sb, '\n');
        }
        luop_push(L, order[i]);
        lua_rawseti(L, -3, found);
        push_captures(L, p, caps);
        lua_rawseti(L, -2, found);
    }
    free((void *)order);
    StrBuf head;
    sb_init(&head);
    if (found)
        sb_printf(&head, "find %s at point %s: %d node%s\n", text, point, found, found == 1 ? "" : "s");
    else
        sb_printf(&head, "find %s at point %s: no node matches\n", text, point);
    sb_puts(&head, sb_str(&sb));
    if (found > limit) sb_printf(&head, "  ... and %d more (the field nodes has them all)\n", found - limit);
    if (!found && best_at) {
        add_node_line(L, &head, "  closest: ", best_at);
        sb_puts(&head, "\n    ");
        add_pattern_miss(&head, &best);
        sb_putc(&head, '\n');
    }
    if (head.len && head.data[head.len - 1] == '\n') head.data[--head.len] = 0;
    /* nodes and captures are on the stack: the text object goes under them */
    push_text(L, "find", sb_str(&head));
    sb_free(&head);
    sb_free(&sb);
    lua_insert(L, -3);
    lua_setfield(L, -3, "captures");
    lua_setfield(L, -2, "nodes");
    lua_pushstring(L, text);
    lua_setfield(L, -2, "pattern");
    lua_pushstring(L, point);
    lua_setfield(L, -2, "point");
    if (!found && best_at) {
        lua_createtable(L, 0, 3);
        set_node_field(L, "node", best.node);
        set_node_field(L, "root", best_at);
        lua_pushstring(L, best.pattern);
        lua_setfield(L, -2, "pattern");
        lua_pushstring(L, best.reason);
        lua_setfield(L, -2, "reason");
        lua_setfield(L, -2, "closest");
    }
}

int luop_kernel_find(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    const char *text = luaL_checkstring(L, 2);
    if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    check_option_keys(L, 3, "find", (const char *[]){"limit", NULL});
    double limit = opt_number(L, 3, "limit", FIND_SHOWN);
    if (!(limit >= 0 && limit <= 1e9) || limit != (double)(long)limit)
        return luaL_error(L, "find: limit must be a whole number from 0 to 1000000000");
    Pat *p = boxed_pattern(L, 2, "find");
    int box = lua_gettop(L);
    find_in(L, kp, p, text, (int)limit);
    unbox(L, box);
    return 1;
}

static const luaL_Reg find_funcs[] = {{"match", l_match}, {NULL, NULL}};

void luop_open_find(lua_State *L) {
    luaL_setfuncs(L, find_funcs, 0);
    /* u:match(pattern) too */
    lua_getfield(L, -1, "methods");
    lua_pushcfunction(L, l_match);
    lua_setfield(L, -2, "match");
    lua_pop(L, 1);
}
