/* lua_text.c - the ways to see a graph from Lua: u:render(), u:listing(),
 * u:to_tinygrad(), uop.parse(listing), uop.from_tinygrad(text),
 * uop.dot(u [, opts]), uop.diff(a, b [, opts]) and uop.renumber_ranges(u),
 * which makes two graphs comparable up to the numbering of their RANGEs. */
#include "lua_internal.h"
#include "../viz/listing.h"
#include "../viz/render.h"
#include "../viz/tinygrad_repr.h"
#include "../viz/dot.h"
#include "../viz/diff.h"
#include "../core/ir/renumber_ranges.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Pushes the StrBuf's text and frees it. */
static int push_sb(lua_State *L, StrBuf *sb) {
    bool oom = sb->oom;
    lua_pushlstring(L, sb->data ? sb->data : "", sb->data ? sb->len : 0);
    sb_free(sb);
    if (oom) return luaL_error(L, "out of memory while printing");
    return 1;
}

static bool opt_bool(lua_State *L, int t, const char *field, bool dflt) {
    if (lua_type(L, t) != LUA_TTABLE) return dflt;
    lua_getfield(L, t, field);
    bool v = lua_isnil(L, -1) ? dflt : lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

static lua_Integer opt_int(lua_State *L, int t, const char *field, lua_Integer dflt) {
    if (lua_type(L, t) != LUA_TTABLE) return dflt;
    lua_getfield(L, t, field);
    lua_Integer v = dflt;
    if (!lua_isnil(L, -1)) {
        int ok;
        v = lua_tointegerx(L, -1, &ok);
        if (!ok) luaL_error(L, "option '%s' must be an integer, got %s", field, luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    return v;
}

/* a string option; the value stays on the stack until the caller pops */
static const char *opt_string(lua_State *L, int t, const char *field) {
    if (lua_type(L, t) != LUA_TTABLE) { lua_pushnil(L); return NULL; }
    lua_getfield(L, t, field);
    if (lua_isnil(L, -1)) return NULL;
    if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "option '%s' must be a string, got %s", field, luaL_typename(L, -1));
    return lua_tostring(L, -1);
}

static void check_opts(lua_State *L, int idx) {
    if (!lua_isnoneornil(L, idx)) luaL_checktype(L, idx, LUA_TTABLE);
}

static int t_render(lua_State *L) {
    const UOp *u = luop_check(L, 1);
    StrBuf sb;
    sb_init(&sb);
    uop_render_expr(&sb, u);
    return push_sb(L, &sb);
}

static int t_listing(lua_State *L) {
    const UOp *u = luop_check(L, 1);
    check_opts(L, 2);
    ListingOpts o = {.color = opt_bool(L, 2, "color", false)};
    StrBuf sb;
    sb_init(&sb);
    uop_listing(&sb, u, &o);
    return push_sb(L, &sb);
}

static int t_to_tinygrad(lua_State *L) {
    const UOp *u = luop_check(L, 1);
    StrBuf sb;
    sb_init(&sb);
    char err[256];
    if (!uop_to_tinygrad(&sb, u, err, sizeof err)) {
        sb_free(&sb);
        return luaL_error(L, "to_tinygrad: %s", err);
    }
    return push_sb(L, &sb);
}

static int t_parse(lua_State *L) {
    const char *text = luaL_checkstring(L, 1);
    char err[512] = "";
    const UOp *u = uop_parse_listing(luop_ctx(L), text, err, sizeof err);
    if (!u) return luaL_error(L, "parse: %s", err[0] ? err : "no nodes in the text");
    luop_push(L, u);
    return 1;
}

static int t_from_tinygrad(lua_State *L) {
    const char *text = luaL_checkstring(L, 1);
    char err[512] = "";
    const UOp *u = uop_from_tinygrad(luop_ctx(L), text, err, sizeof err);
    if (!u) return luaL_error(L, "from_tinygrad: %s", err[0] ? err : "no UOp in the text");
    luop_push(L, u);
    return 1;
}

static const char *extension(const char *path) {
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash) || !dot[1]) return NULL;
    return dot + 1;
}

/* writes text to path (for .dot/.gv) or has Graphviz render it */
static void write_dot_file(lua_State *L, const char *text, const char *path) {
    const char *ext = extension(path);
    if (!ext) luaL_error(L, "dot: cannot tell the format of '%s' (use .dot, .svg, .png or .pdf)", luop_quote(L, path));
    if (strcmp(ext, "dot") == 0 || strcmp(ext, "gv") == 0) {
        FILE *f = fopen(path, "w");
        if (!f) luaL_error(L, "dot: cannot write '%s': %s", luop_quote(L, path), strerror(errno));
        size_t len = strlen(text);
        bool ok = fwrite(text, 1, len, f) == len;
        ok = (fclose(f) == 0) && ok;
        if (!ok) luaL_error(L, "dot: error writing '%s'", luop_quote(L, path));
        return;
    }
    char err[512] = "";
    if (!dot_render(text, ext, path, err, sizeof err)) luaL_error(L, "dot: %s", err);
}

/* uop.dot(u [, {file=, focus=, radius=, keep_consts=, title=}]) -> DOT text;
 * with file=, the graph is written there (svg/png/pdf by the extension,
 * .dot as text) and the result is "wrote FILE" */
static int t_dot(lua_State *L) {
    const UOp *u = luop_check(L, 1);
    check_opts(L, 2);
    DotOpts o = {.radius = 2};
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_getfield(L, 2, "focus");
        if (!lua_isnil(L, -1)) {
            o.focus = luop_test(L, -1);
            if (!o.focus) return luaL_error(L, "dot: option 'focus' must be a UOp, got %s", luaL_typename(L, -1));
        }
        lua_pop(L, 1);
        lua_Integer r = opt_int(L, 2, "radius", 2);
        if (r < 0 || r > 1000000) return luaL_error(L, "dot: radius %I is out of range", r);
        o.radius = (int)r;
        o.keep_consts = opt_bool(L, 2, "keep_consts", false);
    }
    o.title = opt_string(L, 2, "title");
    const char *file = opt_string(L, 2, "file");
    StrBuf sb;
    sb_init(&sb);
    uop_dot(&sb, u, &o);
    push_sb(L, &sb);
    if (!file) return 1;
    write_dot_file(L, lua_tostring(L, -1), file);
    lua_pushfstring(L, "wrote %s", file);
    return 1;
}

/* the options uop.diff takes, in the order its error message lists them */
static const char *const DIFF_OPTIONS[] = {"context", "side", "width", "color", "label_a", "label_b", "stats", NULL};

static bool diff_bool(lua_State *L, int t, const char *field) {
    lua_getfield(L, t, field);
    int ty = lua_type(L, -1);
    if (ty != LUA_TNIL && ty != LUA_TBOOLEAN)
        luaL_error(L, "diff: option '%s' must be a boolean, got %s", field, luaL_typename(L, -1));
    bool v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

/* an unknown key in the options is an error naming the known ones */
static void diff_check_keys(lua_State *L, int t) {
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        bool known = false;
        if (lua_type(L, -1) == LUA_TSTRING)
            for (int k = 0; DIFF_OPTIONS[k] && !known; k++) known = strcmp(lua_tostring(L, -1), DIFF_OPTIONS[k]) == 0;
        if (known) continue;
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (int k = 0; DIFF_OPTIONS[k]; k++) {
            if (k) luaL_addstring(&b, ", ");
            luaL_addstring(&b, DIFF_OPTIONS[k]);
        }
        luaL_pushresult(&b);
        const char *names = lua_tostring(L, -1);
        if (lua_type(L, -2) == LUA_TSTRING) luaL_error(L, "diff: unknown option '%s' (options: %s)", luop_quote(L, lua_tostring(L, -2)), names);
        luaL_error(L, "diff: unknown option [%s] (options: %s)", luop_describe(L, -2), names);
    }
}

/* uop.diff(a, b [, {context=, side=, width=, color=, label_a=, label_b=, stats=true}]) -> text [, stats]
 * context = N as diff -U N (0: changed lines only; default 3); side = true
 * puts a and b in two columns that fit width (default 100).  The counts come
 * back only when asked for, so print(uop.diff(a, b)) prints just the diff. */
void luop_diff_opts(lua_State *L, int t, DiffOpts *o, bool *want_stats) {
    *o = (DiffOpts){.context = 3};
    *want_stats = false;
    check_opts(L, t);
    if (lua_type(L, t) == LUA_TTABLE) {
        diff_check_keys(L, t);
        lua_Integer ctx = opt_int(L, t, "context", 3);
        if (ctx < 0 || ctx > 1000000) luaL_error(L, "diff: context %I is out of range (0 to 1000000)", ctx);
        o->context = ctx == 0 ? -1 : (int)ctx; /* DiffOpts spells "no context" as negative */
        lua_Integer width = opt_int(L, t, "width", 100);
        if (width < 10 || width > 100000) luaL_error(L, "diff: width %I is out of range (10 to 100000)", width);
        o->width = (int)width;
        o->side = diff_bool(L, t, "side");
        o->color = diff_bool(L, t, "color");
        *want_stats = diff_bool(L, t, "stats");
    }
    o->label_a = opt_string(L, t, "label_a");
    o->label_b = opt_string(L, t, "label_b");
}

static int t_diff(lua_State *L) {
    const UOp *a = luop_check(L, 1), *b = luop_check(L, 2);
    bool want_stats;
    DiffOpts o;
    luop_diff_opts(L, 3, &o, &want_stats);
    StrBuf sb;
    sb_init(&sb);
    DiffStats st = uop_diff_text(&sb, a, b, &o);
    push_sb(L, &sb);
    if (!want_stats) return 1;
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, (lua_Integer)st.added);
    lua_setfield(L, -2, "added");
    lua_pushinteger(L, (lua_Integer)st.removed);
    lua_setfield(L, -2, "removed");
    lua_pushinteger(L, (lua_Integer)st.kept);
    lua_setfield(L, -2, "kept");
    lua_pushinteger(L, (lua_Integer)st.renamed);
    lua_setfield(L, -2, "renamed");
    return 2;
}

/* uop.diff_dot(a, b) -> DOT text of both graphs, changes coloured */
static int t_diff_dot(lua_State *L) {
    const UOp *a = luop_check(L, 1), *b = luop_check(L, 2);
    StrBuf sb;
    sb_init(&sb);
    uop_diff_dot(&sb, a, b);
    return push_sb(L, &sb);
}

/* uop.renumber_ranges(u) -> u with its RANGEs numbered 0, 1, ... in the
 * order they first appear in its toposort; two graphs are equal up to range
 * numbering when their renumbered graphs are the same node */
static const UOp *renumbered(lua_State *L, int idx) {
    const UOp *u = luop_check(L, idx);
    const UOp *r = uop_renumber_ranges(luop_ctx(L), u);
    if (!r) luop_ctx_error(L);
    return r;
}

static int t_renumber_ranges(lua_State *L) {
    luop_push(L, renumbered(L, 1));
    return 1;
}

/* uop.same_up_to_ranges(a, b) -> true when a and b differ at most in the
 * numbering of their RANGEs */
static int t_same_up_to_ranges(lua_State *L) {
    const UOp *a = renumbered(L, 1), *b = renumbered(L, 2);
    lua_pushboolean(L, a == b);
    return 1;
}

static const luaL_Reg text_methods[] = {
    {"render", t_render}, {"listing", t_listing}, {"to_tinygrad", t_to_tinygrad}, {NULL, NULL}};

static const luaL_Reg text_funcs[] = {
    {"render", t_render}, {"listing", t_listing}, {"to_tinygrad", t_to_tinygrad},
    {"parse", t_parse}, {"from_tinygrad", t_from_tinygrad}, {"dot", t_dot},
    {"diff", t_diff}, {"diff_dot", t_diff_dot}, {"renumber_ranges", t_renumber_ranges},
    {"same_up_to_ranges", t_same_up_to_ranges}, {NULL, NULL}};

void luop_open_text(lua_State *L) {
    luaL_setfuncs(L, text_funcs, 0);
    luaL_getmetatable(L, LUOP_UOP_MT);
    lua_getfield(L, -1, "__index");
    luaL_setfuncs(L, text_methods, 0);
    lua_pop(L, 2);
}
