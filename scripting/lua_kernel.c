/* lua_kernel.c - a kernel in Lua: steps through the 22 stages (seek, step,
 * back), shows the IR, diffs, the stage table, rules and rewrites, DOT,
 * LLVM IR and assembly, sets opts, and checks or bisects the kernel against
 * the reference (core/debug). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua_compile.h"
#include "tensor_data.h"
#include "../viz/diff.h"
#include "../viz/dot.h"
#include "../viz/listing.h"
#include "../viz/render.h"

/* ---- Kernel ---- */

int luop_kernel_tostring(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    int pos = pipeline_position(kp);
    const Stage *st = stage_get(pos);
    lua_pushfstring(L, "Kernel %s at stage %d%s%s%s", pipeline_name(kp), pos, st ? " (" : " (as scheduled",
                    st ? st->name : "", ")");
    return 1;
}

static int k_name(lua_State *L) {
    lua_pushstring(L, pipeline_name(check_kernel(L, 1, NULL)));
    return 1;
}

static int stage_arg(lua_State *L, int idx, KernelPipeline *kp) {
    if (lua_isnoneornil(L, idx)) return pipeline_position(kp);
    lua_Integer n = luaL_checkinteger(L, idx);
    if (n < 0 || n > STAGE_COUNT)
        luaL_error(L, "no stage %I: stages are 0 (the kernel as scheduled) to %d", (LUAI_UACINT)n, STAGE_COUNT);
    return (int)n;
}

static const UOp *root_at(lua_State *L, KernelPipeline *kp, int n) {
    char err[1024];
    const UOp *r = pipeline_root(kp, n, err, sizeof err);
    if (!r) luaL_error(L, "%s", err);
    return r;
}

static void stage_line(StrBuf *sb, KernelPipeline *kp, int n) {
    const Stage *st = stage_get(n);
    const StageResult *r = pipeline_result(kp, n);
    if (!st || !r) {
        sb_printf(sb, "%s: the kernel as scheduled (%zu nodes)", pipeline_name(kp),
                  uop_graph_size(pipeline_root(kp, 0, NULL, 0)));
        return;
    }
    sb_printf(sb, "%s: stage %d (%s): %zu -> %zu nodes, %zu rewrite%s, %.3f ms%s", pipeline_name(kp), n, st->name,
              r->nodes_before, r->nodes_after, r->rewrites, r->rewrites == 1 ? "" : "s", r->ms,
              r->changed ? "" : ", unchanged");
    if (st->status != STAGE_WRITTEN) sb_printf(sb, " [%s: %s]", stage_status_name(st->status), st->note ? st->note : "");
}

/* Moves to stage n; returns a one-line summary of it (the REPL prints it,
 * a script statement does not). */
static int move_to(lua_State *L, KernelPipeline *kp, int n) {
    char err[1024];
    bool ok = pipeline_seek(kp, n, err, sizeof err);
    set_current(L, 1);
    if (!ok) return luaL_error(L, "%s", err);
    StrBuf sb;
    sb_init(&sb);
    stage_line(&sb, kp, n);
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    return 1;
}

static int k_seek(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    return move_to(L, kp, stage_arg(L, 2, kp));
}

static int k_step(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    int pos = pipeline_position(kp);
    if (pos >= STAGE_COUNT) return luaL_error(L, "already at the last stage (%d)", STAGE_COUNT);
    return move_to(L, kp, pos + 1);
}

static int k_back(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    int pos = pipeline_position(kp);
    if (pos <= 0) return luaL_error(L, "already at the start (stage 0, the kernel as scheduled)");
    return move_to(L, kp, pos - 1);
}

static int k_pos(lua_State *L) {
    lua_pushinteger(L, pipeline_position(check_kernel(L, 1, NULL)));
    return 1;
}

static int k_root(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    luop_push(L, root_at(L, kp, stage_arg(L, 2, kp)));
    return 1;
}

static void listing_text(StrBuf *sb, const UOp *root) {
    ListingOpts lo = {0};
    uop_listing(sb, root, &lo);
}

static int k_listing(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    const UOp *r = root_at(L, kp, stage_arg(L, 2, kp));
    StrBuf sb;
    sb_init(&sb);
    listing_text(&sb, r);
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    return 1;
}

static int k_print(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    int n = stage_arg(L, 2, kp);
    const UOp *r = root_at(L, kp, n);
    StrBuf sb;
    sb_init(&sb);
    const Stage *st = stage_get(n);
    sb_printf(&sb, "# %s at stage %d (%s)\n", pipeline_name(kp), n, st ? st->name : "as scheduled");
    listing_text(&sb, r);
    print_text(sb_str(&sb));
    sb_free(&sb);
    return 0;
}

/* k:diff([a, b]): a defaults to the point before b, b to the current one */
static void diff_points(lua_State *L, KernelPipeline *kp, int *a, int *b) {
    if (lua_isnoneornil(L, 2) && lua_isnoneornil(L, 3)) {
        *b = pipeline_position(kp);
        *a = *b > 0 ? *b - 1 : 0;
    } else if (lua_isnoneornil(L, 3)) {
        *b = stage_arg(L, 2, kp);
        *a = *b > 0 ? *b - 1 : 0;
    } else {
        *a = stage_arg(L, 2, kp);
        *b = stage_arg(L, 3, kp);
    }
}

static void diff_text(lua_State *L, KernelPipeline *kp, int a, int b, StrBuf *sb, DiffStats *st) {
    const UOp *ra = root_at(L, kp, a), *rb = root_at(L, kp, b);
    char la[64], lb[64];
    snprintf(la, sizeof la, "stage %d", a);
    snprintf(lb, sizeof lb, "stage %d", b);
    DiffOpts o = {.label_a = la, .label_b = lb};
    *st = uop_diff_text(sb, ra, rb, &o);
}

/* k:diff([a, b]) prints the diff (saying so when there is none);
 * k:diff_text([a, b]) returns it */
static int diff_method(lua_State *L, bool print) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    int a, b;
    diff_points(L, kp, &a, &b);
    StrBuf sb;
    sb_init(&sb);
    DiffStats st;
    diff_text(L, kp, a, b, &sb, &st);
    if (print) {
        if (st.added == 0 && st.removed == 0) sb_printf(&sb, "stage %d and stage %d are the same graph\n", a, b);
        print_text(sb_str(&sb));
    } else {
        lua_pushstring(L, sb_str(&sb));
    }
    sb_free(&sb);
    return print ? 0 : 1;
}

static int k_diff(lua_State *L) { return diff_method(L, true); }
static int k_diff_text(lua_State *L) { return diff_method(L, false); }

static int k_stages(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    bool quiet = opt_bool(L, 2, "quiet");
    char err[1024];
    bool ok = pipeline_root(kp, STAGE_COUNT, err, sizeof err) != NULL;
    StrBuf sb;
    sb_init(&sb);
    int pos = pipeline_position(kp);
    sb_printf(&sb, "stages of %s\n", pipeline_name(kp));
    sb_printf(&sb, "  %2s  %-20s %-12s %6s %6s %8s %8s  %-7s %s\n", "#", "name", "phase", "before", "after", "rewrites",
              "ms", "changed", "status");
    lua_createtable(L, STAGE_COUNT, 0);
    double total = 0;
    for (int n = 1; n <= STAGE_COUNT; n++) {
        const Stage *st = stage_get(n);
        const StageResult *r = pipeline_result(kp, n);
        sb_printf(&sb, "%s %2d  %-20s %-12s ", n == pos ? ">" : " ", n, st->name, st->phase);
        if (r) {
            total += r->ms;
            sb_printf(&sb, "%6zu %6zu %8zu %8.3f  %-7s %s", r->nodes_before, r->nodes_after, r->rewrites, r->ms,
                      r->changed ? "yes" : "no", stage_status_name(st->status));
        } else {
            sb_printf(&sb, "%6s %6s %8s %8s  %-7s %s", "-", "-", "-", "-", "-", stage_status_name(st->status));
        }
        if (st->status != STAGE_WRITTEN && st->note) sb_printf(&sb, " (%s)", st->note);
        sb_putc(&sb, '\n');
        lua_createtable(L, 0, 10);
        lua_pushinteger(L, n);
        lua_setfield(L, -2, "number");
        lua_pushstring(L, st->name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, st->phase);
        lua_setfield(L, -2, "phase");
        lua_pushstring(L, stage_status_name(st->status));
        lua_setfield(L, -2, "status");
        char runs[256];
        lua_pushstring(L, stage_runs(st, runs, sizeof runs));
        lua_setfield(L, -2, "runs");
        if (r) {
            lua_pushinteger(L, (lua_Integer)r->nodes_before);
            lua_setfield(L, -2, "nodes_before");
            lua_pushinteger(L, (lua_Integer)r->nodes_after);
            lua_setfield(L, -2, "nodes_after");
            lua_pushinteger(L, (lua_Integer)r->rewrites);
            lua_setfield(L, -2, "rewrites");
            lua_pushnumber(L, r->ms);
            lua_setfield(L, -2, "ms");
            lua_pushboolean(L, r->changed);
            lua_setfield(L, -2, "changed");
        }
        lua_rawseti(L, -2, n);
    }
    sb_printf(&sb, "  total %.3f ms\n", total);
    if (!ok) sb_printf(&sb, "  stopped: %s\n", err);
    if (!quiet) print_text(sb_str(&sb));
    sb_free(&sb);
    char summary[128];
    snprintf(summary, sizeof summary, "(%d stages of %s)", STAGE_COUNT, pipeline_name(kp));
    set_summary(L, summary);
    return 1;
}

/* The trace of stage n (argument 2, default the current stage) of the
 * kernel at 1, running the stages as needed; *quiet from argument 3. */
static const Trace *stage_trace(lua_State *L, KernelPipeline **kp_out, int *n_out, bool *quiet) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    *quiet = opt_bool(L, 3, "quiet");
    int n = stage_arg(L, 2, kp);
    if (n < 1) luaL_error(L, "stage 0 is the kernel as scheduled: nothing was rewritten; give a stage 1..%d", STAGE_COUNT);
    root_at(L, kp, n);
    *kp_out = kp;
    *n_out = n;
    return &pipeline_result(kp, n)->trace;
}

/* k:rules([n]): which rules fired in stage n (default: the current one) */
static int k_rules(lua_State *L) {
    KernelPipeline *kp;
    int n;
    bool quiet;
    const Trace *t = stage_trace(L, &kp, &n, &quiet);
    /* count per rule name, in order of first firing */
    lua_createtable(L, 0, 8);
    int counts = lua_gettop(L);
    lua_createtable(L, 8, 0);
    int order = lua_gettop(L);
    int nnames = 0;
    /* the first rewrite of each rule, in order of first firing (for where it is written) */
    size_t *first = lua_newuserdatauv(L, (t->nrewrites + 1) * sizeof *first, 0);
    lua_insert(L, counts);
    counts++, order++;
    for (size_t i = 0; i < t->nrewrites; i++) {
        const TraceRewrite *w = &t->rewrites[i];
        lua_getfield(L, counts, w->rule);
        lua_Integer c = lua_tointeger(L, -1);
        lua_pop(L, 1);
        if (c == 0) {
            first[nnames] = i;
            lua_pushstring(L, w->rule);
            lua_rawseti(L, order, ++nnames);
        }
        lua_pushinteger(L, c + 1);
        lua_setfield(L, counts, w->rule);
    }
    StrBuf sb;
    sb_init(&sb);
    const Stage *st = stage_get(n);
    char runs[256];
    sb_printf(&sb, "stage %d (%s) runs %s: %zu rewrite%s by %d rule%s\n", n, st->name,
              stage_runs(st, runs, sizeof runs), t->nrewrites, t->nrewrites == 1 ? "" : "s", nnames,
              nnames == 1 ? "" : "s");
    for (int i = 1; i <= nnames; i++) {
        lua_rawgeti(L, order, i);
        const char *name = lua_tostring(L, -1);
        lua_getfield(L, counts, name);
        lua_Integer c = lua_tointeger(L, -1);
        const TraceRewrite *w = &t->rewrites[first[i - 1]];
        sb_printf(&sb, "  %6lld  %-36s %s:%d\n", (long long)c, name, w->file ? w->file : "", w->line);
        lua_pop(L, 2);
    }
    if (!quiet) print_text(sb_str(&sb));
    sb_free(&sb);
    lua_pop(L, 1);
    char summary[96];
    snprintf(summary, sizeof summary, "(%d rules fired in stage %d)", nnames, n);
    set_summary(L, summary);
    return 1;
}

/* k:rewrites([n [, {quiet=}]]): every rewrite stage n made, in order:
 * the rule, where it is written, and the node before and after; printed as
 * one line each with the nodes rendered, returned as a list */
static int k_rewrites(lua_State *L) {
    KernelPipeline *kp;
    int n;
    bool quiet;
    const Trace *t = stage_trace(L, &kp, &n, &quiet);
    StrBuf sb, e;
    sb_init(&sb);
    sb_init(&e);
    sb_printf(&sb, "stage %d (%s): %zu rewrite%s\n", n, stage_get(n)->name, t->nrewrites, t->nrewrites == 1 ? "" : "s");
    lua_createtable(L, (int)t->nrewrites, 0);
    for (size_t i = 0; i < t->nrewrites; i++) {
        const TraceRewrite *w = &t->rewrites[i];
        sb_printf(&sb, "  %4zu  %-28s %%%u -> %%%u", i + 1, w->rule, w->before->id, w->after->id);
        /* small value expressions read better rendered */
        if (!dt_is_ptr(w->before->dtype) && w->before->dtype != DT_VOID && uop_graph_size(w->before) <= 12 &&
            uop_graph_size(w->after) <= 12) {
            sb_clear(&e);
            uop_render_expr(&e, w->before);
            sb_printf(&sb, "   %s", sb_str(&e));
            sb_clear(&e);
            uop_render_expr(&e, w->after);
            sb_printf(&sb, "  ->  %s", sb_str(&e));
        }
        sb_printf(&sb, "   (%s:%d)\n", w->file ? w->file : "?", w->line);
        lua_createtable(L, 0, 5);
        lua_pushstring(L, w->rule);
        lua_setfield(L, -2, "rule");
        lua_pushfstring(L, "%s:%d", w->file ? w->file : "?", w->line);
        lua_setfield(L, -2, "where");
        luop_push(L, w->before);
        lua_setfield(L, -2, "before");
        luop_push(L, w->after);
        lua_setfield(L, -2, "after");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    if (!quiet) print_text(sb_str(&sb));
    sb_free(&sb);
    sb_free(&e);
    char summary[96];
    snprintf(summary, sizeof summary, "(%zu rewrites in stage %d)", t->nrewrites, n);
    set_summary(L, summary);
    return 1;
}

/* k:dot([file [, n]]): DOT text of point n; with a file name, also renders
 * it (svg/png by the extension, .dot writes the text) */
static int k_dot(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    const char *file = luaL_optstring(L, 2, NULL);
    const UOp *r = root_at(L, kp, stage_arg(L, 3, kp));
    StrBuf sb;
    sb_init(&sb);
    DotOpts o = {0};
    uop_dot(&sb, r, &o);
    if (file) {
        const char *ext = strrchr(file, '.');
        char err[1024];
        if (ext && !strcmp(ext, ".dot")) {
            FILE *f = fopen(file, "w");
            if (!f) {
                sb_free(&sb);
                return luaL_error(L, "cannot write %s: %s", file, strerror(errno));
            }
            fputs(sb_str(&sb), f);
            fclose(f);
        } else if (!dot_render(sb_str(&sb), ext ? ext + 1 : "svg", file, err, sizeof err)) {
            sb_free(&sb);
            return luaL_error(L, "%s", err);
        }
    }
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    return 1;
}

/* Reads opts from the table at idx: {{"UPCAST", axis, amount}, ...} or a
 * single flat {"UPCAST", axis, amount}; returns how many. */
int parse_opts(lua_State *L, int idx, KernelOpt *out) {
    idx = lua_absindex(L, idx);
    luaL_checktype(L, idx, LUA_TTABLE);
    int n = (int)luaL_len(L, idx);
    if (n > 32) return luaL_error(L, "at most 32 opts");
    /* a single opt may be given flat: k:opts{"UPCAST", 1, 3} */
    lua_geti(L, idx, 1);
    bool flat = lua_type(L, -1) == LUA_TSTRING;
    lua_pop(L, 1);
    if (flat) n = 1;
    for (int i = 0; i < n; i++) {
        if (!flat) {
            lua_geti(L, idx, i + 1);
            if (lua_type(L, -1) != LUA_TTABLE)
                return luaL_error(L, "opt %d: expected {\"UPCAST\"|\"UNROLL\"|\"THREAD\", axis, amount}", i + 1);
        } else {
            lua_pushvalue(L, idx);
        }
        int t = lua_gettop(L);
        lua_geti(L, t, 1);
        lua_geti(L, t, 2);
        lua_geti(L, t, 3);
        const char *op = lua_tostring(L, -3);
        if (!op || !opt_op_from_name(op, &out[i].op))
            return luaL_error(L, "opt %d: unknown opt %s (UPCAST, UNROLL or THREAD)", i + 1, op ? op : "(not a string)");
        if (!lua_isinteger(L, -2) || !lua_isinteger(L, -1))
            return luaL_error(L, "opt %d: axis and amount must be integers", i + 1);
        lua_Integer axis = lua_tointeger(L, -2), amount = lua_tointeger(L, -1);
        if (axis < INT_MIN || axis > INT_MAX || amount < INT_MIN || amount > INT_MAX)
            return luaL_error(L, "opt %d: axis %I or amount %I out of range", i + 1, (LUAI_UACINT)axis,
                              (LUAI_UACINT)amount);
        out[i].axis = (int)axis;
        out[i].amount = (int)amount;
        lua_pop(L, 4);
    }
    return n;
}

/* k:opts{{"UPCAST", axis, amount}, ...} sets; k:opts() returns them */
static int k_opts(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    if (lua_isnoneornil(L, 2)) {
        const KernelOpt *o;
        int n = pipeline_opts(kp, &o);
        lua_createtable(L, n, 0);
        for (int i = 0; i < n; i++) {
            lua_createtable(L, 3, 0);
            lua_pushstring(L, opt_op_name(o[i].op));
            lua_rawseti(L, -2, 1);
            lua_pushinteger(L, o[i].axis);
            lua_rawseti(L, -2, 2);
            lua_pushinteger(L, o[i].amount);
            lua_rawseti(L, -2, 3);
            lua_rawseti(L, -2, i + 1);
        }
        return 1;
    }
    KernelOpt opts[32];
    int n = parse_opts(L, 2, opts);
    pipeline_set_opts(kp, opts, n);
    set_current(L, 1);
    return 0;
}

/* k:insert(n, rules [, {before=true}]): runs the rules inside stage n, after
 * its own rule sets (before them with before=true); stages n.. run again */
static int k_insert(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    lua_Integer n = luaL_checkinteger(L, 2);
    RuleSet *rs = luop_to_rules(L, 3);
    if (!lua_isnoneornil(L, 4)) luaL_checktype(L, 4, LUA_TTABLE);
    check_option_keys(L, 4, "insert", (const char *[]){"before", NULL});
    char err[256];
    if (n < 1 || n > STAGE_COUNT || !pipeline_insert(kp, (int)n, rs, opt_bool(L, 4, "before"), err, sizeof err))
        return luaL_error(L, "insert: %s", n < 1 || n > STAGE_COUNT ? "rules go into stages 1 to 22" : err);
    set_current(L, 1);
    return 0;
}

/* k:inserted() -> {{stage=, rules=name, before=, names={rule names}}, ...} */
static int k_inserted(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    int n = pipeline_inserted_count(kp);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        const InsertedRules *ins = pipeline_inserted(kp, i);
        lua_createtable(L, 0, 4);
        lua_pushinteger(L, ins->stage);
        lua_setfield(L, -2, "stage");
        lua_pushstring(L, ruleset_name(ins->rules));
        lua_setfield(L, -2, "rules");
        lua_pushboolean(L, ins->before);
        lua_setfield(L, -2, "before");
        int nr = ruleset_count(ins->rules);
        lua_createtable(L, nr, 0);
        for (int r = 0; r < nr; r++) {
            lua_pushstring(L, rule_name(ruleset_rule(ins->rules, r)));
            lua_rawseti(L, -2, r + 1);
        }
        lua_setfield(L, -2, "names");
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* k:remove(n [, rules or name]) -> how many sets were taken out of stage n */
static int k_remove(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    lua_Integer n = luaL_checkinteger(L, 2);
    const char *name = NULL;
    if (lua_type(L, 3) == LUA_TSTRING) name = lua_tostring(L, 3);
    else if (!lua_isnoneornil(L, 3)) name = ruleset_name(luop_to_rules(L, 3));
    lua_pushinteger(L, n < 1 || n > STAGE_COUNT ? 0 : pipeline_remove(kp, (int)n, name));
    return 1;
}

static Kernel *compiled(lua_State *L, KernelPipeline *kp) {
    char err[1024];
    Kernel *k = pipeline_kernel(kp, err, sizeof err);
    if (!k) luaL_error(L, "%s", err);
    return k;
}

/* k:llvm() prints the IR before and after optimisation; k:llvm("before")
 * or k:llvm("after") returns one of them */
static int k_llvm(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    const char *which = luaL_optstring(L, 2, NULL);
    Kernel *k = compiled(L, kp);
    if (which) {
        if (strcmp(which, "before") && strcmp(which, "after"))
            return luaL_argerror(L, 2, "\"before\" or \"after\" (optimisation)");
        lua_pushstring(L, kernel_ir(k, !strcmp(which, "after")));
        return 1;
    }
    double r, o, j;
    kernel_compile_times(k, &r, &o, &j);
    printf("; ---- %s: LLVM IR as rendered ----\n", pipeline_name(kp));
    print_text(kernel_ir(k, false));
    printf("; ---- %s: after default<O2> for %s (render %.2f ms, optimise %.2f ms, JIT %.2f ms) ----\n",
           pipeline_name(kp), backend_host_cpu(), r, o, j);
    print_text(kernel_ir(k, true));
    return 0;
}

static int k_asm(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    bool ret = lua_toboolean(L, 2);
    const char *a = kernel_asm(compiled(L, kp));
    if (!a) return luaL_error(L, "%s: the host assembly could not be generated", pipeline_name(kp));
    if (ret) {
        lua_pushstring(L, a);
        return 1;
    }
    print_text(a);
    return 0;
}

/* k:compile_ms() -> total, render, optimise, jit (compiling if needed) */
static int k_compile_ms(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    Kernel *k = compiled(L, kp);
    double r, o, j;
    kernel_compile_times(k, &r, &o, &j);
    lua_pushnumber(L, kernel_compile_ms(k));
    lua_pushnumber(L, r);
    lua_pushnumber(L, o);
    lua_pushnumber(L, j);
    return 4;
}

/* kernel index of the Kernel at idx */
static int kernel_index(lua_State *L, int idx) {
    LKernel *k = luaL_checkudata(L, idx, KERNEL_MT);
    return k->index;
}

/* pushes the Lua report of one checked point: {ok=, mismatches=, stage=, text=} */
static void push_report(lua_State *L, const ValidateReport *rep, int n, const char *text) {
    lua_createtable(L, 0, 4);
    lua_pushboolean(L, rep->ok);
    lua_setfield(L, -2, "ok");
    lua_pushinteger(L, (lua_Integer)rep->mismatches);
    lua_setfield(L, -2, "mismatches");
    lua_pushinteger(L, n);
    lua_setfield(L, -2, "stage");
    lua_pushstring(L, text);
    lua_setfield(L, -2, "text");
}

/* Runs the check of kernel at point n; pushes the report table {ok=,
 * mismatches=, text=} or, when the point cannot be run, returns false with
 * the reason in err. */
static bool check_point(lua_State *L, LProgram *p, int ki, int n, double atol, double rtol, char *err, size_t errlen) {
    ValidateReport rep;
    StrBuf sb;
    sb_init(&sb);
    bool ok = program_check_kernel(p->s, p->kps, ki, n, luop_buffer_lookup, L, atol, rtol, &rep, &sb, err, errlen);
    if (ok) push_report(L, &rep, n, sb_str(&sb));
    sb_free(&sb);
    return ok;
}

/* k:check([n [, {atol=, rtol=, quiet=}]]): runs the kernel at stage n
 * (default: the current one) on the program's data and compares its output
 * with the reference; returns the report */
static int k_check(lua_State *L) {
    LProgram *p;
    KernelPipeline *kp = check_kernel(L, 1, &p);
    int n = stage_arg(L, 2, kp);
    if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    double atol = opt_number(L, 3, "atol", 1e-5), rtol = opt_number(L, 3, "rtol", 1e-4);
    char err[1024];
    if (!check_point(L, p, kernel_index(L, 1), n, atol, rtol, err, sizeof err)) return luaL_error(L, "check: %s", err);
    if (!opt_bool(L, 3, "quiet")) {
        lua_getfield(L, -1, "text");
        printf("%s at stage %d: %s\n", pipeline_name(kp), n, lua_tostring(L, -1));
        fflush(stdout);
        lua_pop(L, 1);
    }
    return 1;
}

/* k:bisect([{quiet=}]): checks the kernel at every stage it can run and
 * returns the first stage whose output differs from the reference (nil if
 * none), and the per-stage reports (indexed by stage + 1) */
/* a node for a verdict: "%12 = ADD int32 (...)": its listing line, with its
 * expression rendered when that is short */
static void push_rendered(lua_State *L, const UOp *u) {
    StrBuf sb;
    sb_init(&sb);
    uop_listing_line(&sb, u, NULL);
    StrBuf e;
    sb_init(&e);
    uop_render_expr(&e, u);
    if (e.len && e.len < 200) sb_printf(&sb, "   -- %s", sb_str(&e));
    sb_free(&e);
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
}

static void push_culprit(lua_State *L, const BisectCulprit *c) {
    if (!c->found) {
        lua_pushnil(L);
        return;
    }
    lua_createtable(L, 0, 8);
    lua_pushstring(L, c->rule);
    lua_setfield(L, -2, "rule");
    lua_pushfstring(L, "%s:%d", c->file, c->line);
    lua_setfield(L, -2, "where");
    lua_pushinteger(L, (lua_Integer)c->index);
    lua_setfield(L, -2, "index");
    lua_pushinteger(L, (lua_Integer)c->of);
    lua_setfield(L, -2, "of");
    push_rendered(L, c->before);
    lua_setfield(L, -2, "before");
    push_rendered(L, c->after);
    lua_setfield(L, -2, "after");
    luop_push(L, c->before);
    lua_setfield(L, -2, "before_node");
    luop_push(L, c->after);
    lua_setfield(L, -2, "after_node");
}

/* k:bisect([{quiet=}]) -> stage, culprit, reports: the first stage whose
 * output differs from the reference (nil if none), the rewrite in it that
 * made it wrong ({rule=, where=, index=, of=, before=, after=}, nil when it
 * cannot be named), and the reports of the points checked (by stage + 1) */
static int k_bisect(lua_State *L) {
    LProgram *p;
    KernelPipeline *kp = check_kernel(L, 1, &p);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    bool quiet = opt_bool(L, 2, "quiet");
    BisectResult r;
    char err[1024];
    if (!dbg_bisect(p->s, p->kps, kernel_index(L, 1), luop_buffer_lookup, L, 1e-5, 1e-4, &r, err, sizeof err))
        return luaL_error(L, "bisect: %s", err);
    if (r.first_bad >= 0) lua_pushinteger(L, r.first_bad);
    else lua_pushnil(L);
    push_culprit(L, &r.culprit);
    lua_createtable(L, STAGE_COUNT + 1, 0);
    for (int n = 0; n <= STAGE_COUNT; n++)
        if (r.points[n].state == POINT_MATCHES || r.points[n].state == POINT_DIFFERS) {
            push_report(L, &r.points[n].rep, n, r.points[n].text);
            lua_rawseti(L, -2, n + 1);
        }
    if (!quiet) {
        StrBuf sb;
        sb_init(&sb);
        bisect_format(&r, pipeline_name(kp), &sb);
        if (r.culprit.found) {
            lua_getfield(L, -2, "before");
            lua_getfield(L, -3, "after");
            sb_printf(&sb, "  before: %s\n  after:  %s\n", lua_tostring(L, -2), lua_tostring(L, -1));
            lua_pop(L, 2);
        }
        fputs(sb_str(&sb), stdout);
        fflush(stdout);
        sb_free(&sb);
    }
    bisect_result_free(&r);
    return 3;
}

static int k_program(lua_State *L) {
    check_kernel(L, 1, NULL);
    lua_getiuservalue(L, 1, 1);
    return 1;
}


const luaL_Reg luop_kernel_methods[] = {
    {"name", k_name},     {"seek", k_seek},         {"step", k_step},     {"back", k_back},   {"pos", k_pos},
    {"root", k_root},     {"listing", k_listing},   {"print", k_print},   {"diff", k_diff},   {"diff_text", k_diff_text},
    {"stages", k_stages}, {"rules", k_rules},       {"dot", k_dot},       {"opts", k_opts},   {"llvm", k_llvm},
    {"asm", k_asm},       {"program", k_program}, {"compile_ms", k_compile_ms}, {"check", k_check}, {"rewrites", k_rewrites},
    {"bisect", k_bisect}, {"insert", k_insert}, {"inserted", k_inserted}, {"remove", k_remove},   {NULL, NULL}};
