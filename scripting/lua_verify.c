/* lua_verify.c - the spec verifier in Lua (core/stages/spec_verify.h):
 * k:verify([n | "all"]) checks a point of a kernel (or every point, naming
 * the first stage whose output breaks its spec), uop.verify(u [, spec])
 * checks any graph, and uop.verify_stages([on]) turns the check after
 * every stage on or off (UOPDB_VERIFY sets it at start).  Results are text
 * objects (kind "verify") with fields ok, spec, nodes and, when broken,
 * rule, node and message; a point inside a stage, between two of its
 * rewrites, is checked too and said to be one (inside_stage, and whether
 * the stage's output meets the spec: stage_end_ok). */
#include <stdio.h>
#include <string.h>

#include "lua_compile.h"
#include "../core/stages/spec_verify.h"
#include "../core/util/strbuf.h"

/* the fields of a verdict on the text object on top */
static void set_verdict(lua_State *L, bool ok, SpecKind kind, size_t nodes, const VerifyError *e) {
    lua_pushboolean(L, ok);
    lua_setfield(L, -2, "ok");
    lua_pushstring(L, spec_kind_name(kind));
    lua_setfield(L, -2, "spec");
    lua_pushinteger(L, (lua_Integer)nodes);
    lua_setfield(L, -2, "nodes");
    if (ok) return;
    lua_pushstring(L, e->rule ? e->rule : "");
    lua_setfield(L, -2, "rule");
    luop_push(L, e->node);
    lua_setfield(L, -2, "node");
    lua_pushstring(L, e->msg);
    lua_setfield(L, -2, "message");
}

/* "point 14 (stage 14 devectorize, codegen spec)" or, inside a stage, "point 15.3 (...)" */
static void point_label(StrBuf *sb, int n, long rewrite, SpecKind kind) {
    const Stage *st = stage_get(n);
    if (rewrite >= 0) sb_printf(sb, "point %d.%ld", n, rewrite);
    else sb_printf(sb, "point %d", n);
    if (st) sb_printf(sb, " (stage %d %s, %s spec)", n, st->name, spec_kind_name(kind));
    else sb_printf(sb, " (as scheduled, %s spec)", spec_kind_name(kind));
}

/* Point (n, rewrite) when it is a graph inside stage n, between two of its
 * rewrites (not its input n.0, nor its end), else NULL: the stage's result. */
static const StageResult *inside_stage(KernelPipeline *kp, int n, long rewrite) {
    const StageResult *res = pipeline_ran(kp, n);
    if (rewrite <= 0 || !res) return NULL;
    return res->failed || (size_t)rewrite < res->rewrites ? res : NULL;
}

/* Says, on a line of its own, that a point inside a stage is a form the
 * stage passes through, and whether its output meets the spec; sets inside_stage,
 * stage_end_ok (absent for a stage that failed, which has no output) and,
 * when the output breaks it, stage_end_message on the verdict on top. */
static void add_inside_note(lua_State *L, StrBuf *sb, int n, long rewrite, const StageResult *res, SpecKind kind,
                            bool ok) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "inside_stage");
    if (res->failed && (size_t)rewrite >= res->rewrites)
        sb_printf(sb, "\n  point %d.%ld is inside stage %d, after the last rewrite it made before it failed", n, rewrite,
                  n);
    else sb_printf(sb, "\n  point %d.%ld is inside stage %d, between two of its rewrites", n, rewrite, n);
    if (!ok)
        sb_printf(sb, ", where the graph may break the spec for a while (the users of a rewritten node are "
                      "rebuilt with it, and rewritten only later)");
    if (res->failed) {
        sb_printf(sb, "; stage %d failed, so it has no output to check", n);
        return;
    }
    VerifyError e;
    bool end_ok = uop_verify(res->root, kind, &e, NULL);
    if (end_ok) sb_printf(sb, "; the stage's output, point %d, meets the spec%s", n, ok ? " too" : "");
    else sb_printf(sb, "; the stage's output, point %d, breaks %s: %s", n, ok ? "the spec" : "it too", e.msg);
    lua_pushboolean(L, end_ok);
    lua_setfield(L, -2, "stage_end_ok");
    if (end_ok) return;
    lua_pushstring(L, e.msg);
    lua_setfield(L, -2, "stage_end_message");
}

/* verifies one point; pushes its verdict; false only when the point
 * cannot be computed (err says why) */
static bool verify_one(lua_State *L, KernelPipeline *kp, int n, long rewrite, char *err, size_t errlen) {
    const UOp *root = rewrite >= 0 ? pipeline_rewrite_point(kp, n, (size_t)rewrite, err, errlen)
                                   : pipeline_root(kp, n, err, errlen);
    if (!root) return false;
    SpecKind kind = spec_for_point(n);
    VerifyError e;
    size_t nodes = 0;
    bool ok = uop_verify(root, kind, &e, &nodes);
    const StageResult *inside = inside_stage(kp, n, rewrite);
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s ", pipeline_name(kp));
    point_label(&sb, n, rewrite, kind);
    if (ok) sb_printf(&sb, ": ok, %zu %s", nodes, kind == SPEC_PROGRAM ? "instructions" : "nodes");
    else sb_printf(&sb, ": breaks it: %s", e.msg);
    push_text(L, "verify", "");
    set_verdict(L, ok, kind, nodes, &e);
    lua_pushinteger(L, n);
    lua_setfield(L, -2, "point");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "inside_stage");
    if (inside) add_inside_note(L, &sb, n, rewrite, inside, kind, ok);
    set_text(L, "verify", sb_str(&sb));
    sb_free(&sb);
    return true;
}

/* the line under a verdict of verify_all at point n: the points before it passed */
static void put_points_before(StrBuf *sb, int n) {
    if (n == 1) sb_puts(sb, "\n  point 0 meets its spec");
    else if (n > 1) sb_printf(sb, "\n  points 0 to %d meet their spec", n - 1);
}

/* k:verify("all"): every point in order; the verdict of the first that
 * breaks its spec (or cannot be computed), or one line saying all pass */
static int verify_all(lua_State *L, KernelPipeline *kp) {
    char err[1024];
    size_t total = 0;
    for (int n = 0; n <= STAGE_COUNT; n++) {
        if (!verify_one(L, kp, n, -1, err, sizeof err)) {
            StrBuf sb;
            sb_init(&sb);
            sb_printf(&sb, "%s: point %d cannot be computed: %s", pipeline_name(kp), n, err);
            put_points_before(&sb, n);
            push_text(L, "verify", sb_str(&sb));
            sb_free(&sb);
            lua_pushboolean(L, 0);
            lua_setfield(L, -2, "ok");
            lua_pushinteger(L, n);
            lua_setfield(L, -2, "first_bad");
            lua_pushstring(L, err);
            lua_setfield(L, -2, "message");
            return 1;
        }
        lua_getfield(L, -1, "ok");
        bool ok = lua_toboolean(L, -1);
        lua_pop(L, 1);
        if (!ok) {
            /* the verdict names the point; say it is the first */
            lua_getfield(L, -1, "text");
            StrBuf sb;
            sb_init(&sb);
            const Stage *st = stage_get(n);
            if (st) sb_printf(&sb, "%s: stage %d (%s) is the first whose output breaks its spec", pipeline_name(kp), n,
                              st->name);
            else sb_printf(&sb, "%s: the kernel as scheduled breaks the kernel spec", pipeline_name(kp));
            /* the point's line without the kernel's name, which the first line gives */
            sb_printf(&sb, "\n  %s", lua_tostring(L, -1) + strlen(pipeline_name(kp)) + 1);
            put_points_before(&sb, n);
            lua_pop(L, 1);
            set_text(L, "verify", sb_str(&sb));
            sb_free(&sb);
            lua_pushinteger(L, n);
            lua_setfield(L, -2, "first_bad");
            return 1;
        }
        lua_getfield(L, -1, "nodes");
        total += (size_t)lua_tointeger(L, -1);
        lua_pop(L, 2);
    }
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s: all %d points meet their spec (%zu nodes checked): kernel spec at 0, codegen 1-15, "
                   "lowered 16-20, program 21-22",
              pipeline_name(kp), STAGE_COUNT + 1, total);
    push_text(L, "verify", sb_str(&sb));
    sb_free(&sb);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "ok");
    lua_pushinteger(L, (lua_Integer)total);
    lua_setfield(L, -2, "nodes");
    return 1;
}

/* k:verify([n | "N.R" | "all"]): point n (default: the current point, a
 * rewrite point included) against the spec of its point */
int luop_kernel_verify(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    if (lua_type(L, 2) == LUA_TSTRING && !strcmp(lua_tostring(L, 2), "all")) return verify_all(L, kp);
    if (lua_type(L, 2) == LUA_TSTRING && !strchr(lua_tostring(L, 2), '.'))
        return luaL_error(L, "verify: takes a point 0..%d, \"N.R\" or \"all\", not \"%s\"", STAGE_COUNT,
                          luop_quote(L, lua_tostring(L, 2)));
    if (lua_isinteger(L, 2) && (lua_tointeger(L, 2) < 0 || lua_tointeger(L, 2) > STAGE_COUNT))
        return luaL_error(L, "verify: no point %d: points are 0 (the kernel as scheduled) to %d",
                          (int)lua_tointeger(L, 2), STAGE_COUNT);
    int n;
    long rewrite;
    luop_point_arg(L, 2, kp, &n, &rewrite);
    char err[1024];
    if (!verify_one(L, kp, n, rewrite, err, sizeof err)) return luaL_error(L, "verify: %s", err);
    if (rewrite > 0 && !pipeline_rewrite_in_range(kp, n, (size_t)rewrite, err, sizeof err))
        return luaL_error(L, "verify: %s", err);
    return 1;
}

/* uop.verify(u [, spec]): u against the named spec ("kernel", "codegen",
 * "lowered", "program"; default "program" for a LINEAR, else "kernel") */
static int l_verify(lua_State *L) {
    const UOp *u = luop_check(L, 1);
    SpecKind kind = uop_op(u) == OP_LINEAR ? SPEC_PROGRAM : SPEC_KERNEL;
    if (!lua_isnoneornil(L, 2) && !spec_kind_from_name(luaL_checkstring(L, 2), &kind))
        return luaL_error(L, "uop.verify: unknown spec '%s' (kernel, codegen, lowered, program)", luop_quote(L, lua_tostring(L, 2)));
    VerifyError e;
    size_t nodes = 0;
    bool ok = uop_verify(u, kind, &e, &nodes);
    StrBuf sb;
    sb_init(&sb);
    if (ok) sb_printf(&sb, "%s spec: ok, %zu %s", spec_kind_name(kind), nodes, kind == SPEC_PROGRAM ? "instructions" : "nodes");
    else sb_printf(&sb, "%s spec: broken: %s", spec_kind_name(kind), e.msg);
    push_text(L, "verify", sb_str(&sb));
    sb_free(&sb);
    set_verdict(L, ok, kind, nodes, &e);
    return 1;
}

/* uop.verify_stages([on]) -> whether every stage's output is verified as it
 * runs (after setting it when on is given) */
static int l_verify_stages(lua_State *L) {
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TBOOLEAN);
        spec_verify_set_enabled(lua_toboolean(L, 1));
    }
    lua_pushboolean(L, spec_verify_enabled());
    return 1;
}

/* uop.spec_for_point(n) -> the spec's name point n must meet */
static int l_spec_for_point(lua_State *L) {
    lua_Integer n = luaL_checkinteger(L, 1);
    if (n < 0 || n > STAGE_COUNT) return luaL_error(L, "uop.spec_for_point: no point %d (0..%d)", (int)n, STAGE_COUNT);
    lua_pushstring(L, spec_kind_name(spec_for_point((int)n)));
    return 1;
}

static const luaL_Reg verify_funcs[] = {
    {"verify", l_verify}, {"verify_stages", l_verify_stages}, {"spec_for_point", l_spec_for_point}, {NULL, NULL}};

void luop_open_verify(lua_State *L) { luaL_setfuncs(L, verify_funcs, 0); }
