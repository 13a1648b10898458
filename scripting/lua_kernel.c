/* lua_kernel.c - a kernel in Lua: steps through the 22 stages (seek, step,
 * back), shows the IR, diffs, the stage table, rules and rewrites, DOT,
 * LLVM IR and assembly, sets opts, and checks or bisects the kernel against
 * the reference (core/debug). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lua_compile.h"
#include "progress_line.h"
#include "../core/debug/rule_why.h"
#include "uopdb_lua.h"
#include "../core/debug/breakpoints.h"
#include "tensor_data.h"
#include "../viz/diff.h"
#include "../viz/dot.h"
#include "../viz/listing.h"
#include "../viz/render.h"
#include "../core/backend/parallel.h"
#include "../core/util/strbuf.h"

/* ---- Kernel ---- */

int luop_kernel_tostring(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    int pos = pipeline_position(kp);
    const Stage *st = stage_get(pos);
    lua_pushfstring(L, "Kernel %s at stage %d%s%s%s", pipeline_name(kp), pos, st ? " (" : " (as scheduled",
                    st ? st->name : "", ")");
    return 1;
}

/* k:name() -> the name as scheduled, and tinygrad's name once the opts are
 * applied (nil when a stage up to 7 fails: the stages say why) */
static int k_name(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    lua_pushstring(L, pipeline_name(kp));
    char err[1024];
    const char *after = pipeline_opt_name(kp, err, sizeof err);
    if (after) lua_pushstring(L, after);
    else lua_pushnil(L);
    return 2;
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

/* a point of the pipeline: a whole stage (rewrite -1) or the first
 * `rewrite` rewrites of a stage */
typedef struct Point {
    int stage;
    long rewrite;
} Point;

static Point current_point(const KernelPipeline *kp) {
    return (Point){pipeline_position(kp), pipeline_rewrite_position(kp)};
}

/* argument idx as a point: nil is the current one, an integer a whole
 * stage, a string "N.R" the point after rewrite R of stage N */
static Point point_arg(lua_State *L, int idx, KernelPipeline *kp) {
    if (lua_isnoneornil(L, idx)) return current_point(kp);
    static const char usage[] = "a stage number, or \"N.R\" for the point after rewrite R of stage N";
    if (lua_type(L, idx) == LUA_TSTRING) {
        /* digits, then a dot and digits or nothing: the whole string */
        size_t len;
        const char *s = lua_tolstring(L, idx, &len), *p = s;
        long v[2] = {0, -1};
        bool ok = len > 0;
        for (int part = 0; part < 2 && ok && (size_t)(p - s) < len; part++) {
            if (part == 1 && *p++ != '.') ok = false;
            const char *digits = p;
            for (v[part] = 0; ok && (size_t)(p - s) < len && isdigit((unsigned char)*p) && p - digits < 9; p++)
                v[part] = v[part] * 10 + (*p - '0');
            ok = ok && p > digits;
        }
        if (!ok || (size_t)(p - s) != len) luaL_error(L, "point '%s': %s", luop_quote(L, s), usage);
        if (v[0] > STAGE_COUNT)
            luaL_error(L, "no stage %d: stages are 0 (the kernel as scheduled) to %d", (int)v[0], STAGE_COUNT);
        return (Point){(int)v[0], v[1]};
    }
    if (lua_type(L, idx) == LUA_TNUMBER && !lua_isinteger(L, idx)) {
        lua_Number x = lua_tonumber(L, idx);
        if (x != x) luaL_error(L, "point nan: %s", usage);
        if (x != floor(x)) luaL_error(L, "point %s: %s", lua_tostring(L, idx), usage);
    }
    return (Point){stage_arg(L, idx, kp), -1};
}

void luop_point_arg(lua_State *L, int idx, KernelPipeline *kp, int *stage, long *rewrite) {
    Point p = point_arg(L, idx, kp);
    *stage = p.stage;
    *rewrite = p.rewrite;
}

static const UOp *point_root(lua_State *L, KernelPipeline *kp, Point p) {
    if (p.rewrite < 0) return root_at(L, kp, p.stage);
    char err[1024];
    const UOp *r = pipeline_rewrite_point(kp, p.stage, (size_t)p.rewrite, err, sizeof err);
    /* a point past the stage's rewrites is not its end: said as k:seek says it */
    if (!r || !pipeline_rewrite_in_range(kp, p.stage, (size_t)p.rewrite, err, sizeof err)) luaL_error(L, "%s", err);
    return r;
}

/* "stage 15 (lower index dtype)" or "stage 15 (lower index dtype), rewrite 3 of 16" */
static void point_label(StrBuf *sb, const KernelPipeline *kp, Point p) {
    const Stage *st = stage_get(p.stage);
    sb_printf(sb, "stage %d (%s)", p.stage, st ? st->name : "as scheduled");
    const StageResult *r = pipeline_ran(kp, p.stage);
    if (p.rewrite >= 0 && r)
        sb_printf(sb, ", rewrite %ld of %s%zu%s", p.rewrite, r->failed ? "the " : "", r->rewrites,
                  r->failed ? " it made before it failed" : "");
}

/* appends text wrapped at width columns, continuation lines indented */
static void wrap_line(StrBuf *sb, const char *text, size_t width, const char *indent) {
    size_t col = 0;
    const char *p = text;
    while (*p) {
        const char *w = p;
        while (*w == ' ') w++;
        const char *e = w;
        while (*e && *e != ' ') e++;
        size_t len = (size_t)(e - w), gap = (size_t)(w - p);
        if (col > 0 && col + gap + len > width) {
            sb_printf(sb, "\n%s", indent);
            col = strlen(indent);
            gap = 0;
        }
        sb_printf(sb, "%.*s%.*s", (int)gap, p, (int)len, w);
        col += gap + len;
        p = e;
    }
    sb_putc(sb, '\n');
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
    if (!ok) return luaL_error(L, "%s", err);
    StrBuf sb;
    sb_init(&sb);
    stage_line(&sb, kp, n);
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    return 1;
}

/* Moves to rewrite r of stage n; returns its summary line: the rewrite that
 * got there (rule, where, before -> after) */
static int move_to_rewrite(lua_State *L, KernelPipeline *kp, int n, size_t r) {
    char err[1024];
    bool ok = pipeline_seek_rewrite(kp, n, r, err, sizeof err);
    if (!ok) return luaL_error(L, "%s", err);
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s: ", pipeline_name(kp));
    point_label(&sb, kp, (Point){n, (long)r});
    const StageResult *res = pipeline_ran(kp, n);
    if (r > 0 && res && r <= res->trace.nrewrites) {
        const TraceRewrite *w = &res->trace.rewrites[r - 1];
        sb_printf(&sb, ": %s (%s:%d) %%%u %s -> %%%u %s", w->rule, w->file, w->line, w->before->id,
                  op_name(uop_op(w->before)), w->after->id, op_name(uop_op(w->after)));
    }
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    return 1;
}

/* k:seek(n [, r]): stage n, or rewrite r of stage n (after its first r rewrites) */
static int k_seek(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    int n = stage_arg(L, 2, kp);
    if (lua_isnoneornil(L, 3)) return move_to(L, kp, n);
    lua_Integer r = luaL_checkinteger(L, 3);
    if (r < 0) return luaL_error(L, "no rewrite %I: rewrite points count from 0", (LUAI_UACINT)r);
    if (n < 1) return luaL_error(L, "stage 0 is the kernel as scheduled: it has no rewrites");
    return move_to_rewrite(L, kp, n, (size_t)r);
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
    if (pipeline_rewrite_position(kp) >= 0) return move_to(L, kp, pos > 0 ? pos - 1 : 0);
    if (pos <= 0) return luaL_error(L, "already at the start (stage 0, the kernel as scheduled)");
    return move_to(L, kp, pos - 1);
}

/* stage n's result, running it as needed: finished, or failed with the
 * rewrites it made before (their points can be visited); raises when a
 * stage before it failed */
static const StageResult *stage_ran(lua_State *L, KernelPipeline *kp, int n) {
    char err[1024];
    if (pipeline_root(kp, n, err, sizeof err)) return pipeline_result(kp, n);
    const StageResult *f = pipeline_failure(kp, n);
    if (!f) luaL_error(L, "%s", err);
    return f;
}

static size_t stage_rewrites(lua_State *L, KernelPipeline *kp, int n) { return stage_ran(L, kp, n)->rewrites; }

/* k:next(): the next rewrite, across stage boundaries (a stage that changed
 * the kernel without rewrites, such as opts or linearize, is one step) */
static int k_next(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    Point p = current_point(kp);
    if (p.stage >= 1 && p.rewrite >= 0 && (size_t)p.rewrite < stage_rewrites(L, kp, p.stage))
        return move_to_rewrite(L, kp, p.stage, (size_t)p.rewrite + 1);
    for (int n = p.stage + 1; n <= STAGE_COUNT; n++) {
        if (stage_rewrites(L, kp, n) > 0) return move_to_rewrite(L, kp, n, 1);
        if (pipeline_result(kp, n)->changed) return move_to(L, kp, n);
    }
    return luaL_error(L, "no rewrite after this point: the kernel is at its last stage");
}

/* k:prev(): the previous rewrite, across stage boundaries */
static int k_prev(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    Point p = current_point(kp);
    if (p.stage >= 1) {
        size_t r = p.rewrite >= 0 ? (size_t)p.rewrite : stage_rewrites(L, kp, p.stage);
        if (r >= 2) return move_to_rewrite(L, kp, p.stage, r - 1);
    }
    for (int n = p.stage - 1; n >= 1; n--) {
        size_t r = stage_rewrites(L, kp, n);
        if (r > 0) return move_to_rewrite(L, kp, n, r);
        if (pipeline_result(kp, n)->changed) return move_to(L, kp, n);
    }
    if (p.stage == 0) return luaL_error(L, "already at the start (stage 0, the kernel as scheduled)");
    return move_to(L, kp, 0);
}

/* k:pos() -> stage, rewrite (nil when the position is a whole stage) */
static int k_pos(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    lua_pushinteger(L, pipeline_position(kp));
    long r = pipeline_rewrite_position(kp);
    if (r >= 0) lua_pushinteger(L, r);
    else lua_pushnil(L);
    return 2;
}

static int k_root(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    luop_push(L, point_root(L, kp, point_arg(L, 2, kp)));
    return 1;
}

static void listing_text(StrBuf *sb, const UOp *root) {
    ListingOpts lo = {0};
    uop_listing(sb, root, &lo);
}

static int k_listing(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    const UOp *r = point_root(L, kp, point_arg(L, 2, kp));
    StrBuf sb;
    sb_init(&sb);
    listing_text(&sb, r);
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    return 1;
}

static int k_print(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    Point pt = point_arg(L, 2, kp);
    const UOp *r = point_root(L, kp, pt);
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "# %s at ", pipeline_name(kp));
    point_label(&sb, kp, pt);
    sb_putc(&sb, '\n');
    listing_text(&sb, r);
    print_text(sb_str(&sb));
    sb_free(&sb);
    return 0;
}

/* k:diff([a, b]): a defaults to the point before b, b to the current one */
/* the two points of k:diff([a, b]): b defaults to the current point and a
 * to the point just before b (at a rewrite point: before that rewrite) */
static void diff_points(lua_State *L, KernelPipeline *kp, Point *a, Point *b) {
    if (!lua_isnoneornil(L, 3)) {
        *a = point_arg(L, 2, kp);
        *b = point_arg(L, 3, kp);
        return;
    }
    *b = point_arg(L, 2, kp);
    if (b->rewrite > 0) *a = (Point){b->stage, b->rewrite - 1};
    else if (b->rewrite == 0) *a = (Point){b->stage > 0 ? b->stage - 1 : 0, -1};
    else *a = (Point){b->stage > 0 ? b->stage - 1 : 0, -1};
}

static void diff_text(lua_State *L, KernelPipeline *kp, Point a, Point b, DiffOpts *o, StrBuf *sb, DiffStats *st) {
    const UOp *ra = point_root(L, kp, a), *rb = point_root(L, kp, b);
    char la[64], lb[64];
    if (a.rewrite >= 0) snprintf(la, sizeof la, "stage %d.%ld", a.stage, a.rewrite);
    else snprintf(la, sizeof la, "stage %d", a.stage);
    if (b.rewrite >= 0) snprintf(lb, sizeof lb, "stage %d.%ld", b.stage, b.rewrite);
    else snprintf(lb, sizeof lb, "stage %d", b.stage);
    if (!o->label_a) o->label_a = la;
    if (!o->label_b) o->label_b = lb;
    *st = uop_diff_text(sb, ra, rb, o);
}

/* k:diff([a, b] [, {side=, context=, width=, color=}]) returns the diff as a
 * text object (saying so when there is none); k:diff_text(...) as a string */
static int diff_method(lua_State *L, bool object) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    DiffOpts o;
    bool stats;
    int top = lua_gettop(L);
    bool have_opts = top >= 2 && lua_type(L, top) == LUA_TTABLE;
    luop_diff_opts(L, have_opts ? top : top + 1, &o, &stats);
    if (have_opts) lua_settop(L, top - 1);
    Point a, b;
    bool one_point = lua_isnoneornil(L, 3);
    diff_points(L, kp, &a, &b);
    if (one_point && b.stage == 0 && b.rewrite < 0) {
        const char *msg = "point 0 is the kernel as scheduled: no point comes before it (:diff 0 7 or k:diff(0, 7) compares it with point 7)\n";
        if (object) push_text(L, "diff", msg);
        else lua_pushstring(L, msg);
        return 1;
    }
    StrBuf sb;
    sb_init(&sb);
    DiffStats st;
    diff_text(L, kp, a, b, &o, &sb, &st);
    if (st.added == 0 && st.removed == 0) sb_puts(&sb, "the two points are the same graph\n");
    if (object) push_text(L, "diff", sb_str(&sb));
    else lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    return 1;
}

static int k_diff(lua_State *L) { return diff_method(L, true); }
static int k_diff_text(lua_State *L) { return diff_method(L, false); }

/* the rules k:insert put into stage n, by name, joined with ", " (the
 * first few; "" if none) */
static void put_inserted_names(StrBuf *sb, const KernelPipeline *kp, int n) {
    enum { SHOWN = 4 };
    int count = 0;
    for (int i = 0; i < pipeline_inserted_count(kp); i++) {
        const InsertedRules *ins = pipeline_inserted(kp, i);
        if (ins->stage != n) continue;
        for (int j = 0; j < ruleset_count(ins->rules); j++, count++)
            if (count < SHOWN) sb_printf(sb, "%s%s", count ? ", " : "", rule_name(ruleset_rule(ins->rules, j)));
    }
    if (count > SHOWN) sb_printf(sb, " and %d more", count - SHOWN);
}

static int k_stages(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    char err[1024];
    bool ok = pipeline_root(kp, STAGE_COUNT, err, sizeof err) != NULL;
    StrBuf sb;
    sb_init(&sb);
    int pos = pipeline_position(kp);
    const char *after = ok ? pipeline_opt_name(kp, err, sizeof err) : NULL;
    sb_printf(&sb, "stages of %s", pipeline_name(kp));
    if (after && strcmp(after, pipeline_name(kp))) sb_printf(&sb, " (%s with its opts)", after);
    sb_printf(&sb, "\n");
    sb_printf(&sb, "  %2s  %-20s %6s %6s %8s %8s  %-7s %s\n", "#", "name", "before", "after", "rewrites", "ms",
              "changed", "status");
    lua_createtable(L, STAGE_COUNT, 0);
    StrBuf inserted;   /* the lines naming the rules k:insert put into stages */
    sb_init(&inserted);
    double total = 0;
    for (int n = 1; n <= STAGE_COUNT; n++) {
        const Stage *st = stage_get(n);
        const StageResult *r = pipeline_result(kp, n), *f = pipeline_failure(kp, n);
        sb_printf(&sb, "%s %2d  %-20s ", n == pos ? ">" : " ", n, st->name);
        if (r) {
            total += r->ms;
            sb_printf(&sb, "%6zu %6zu %8zu %8.3f  %-7s %s", r->nodes_before, r->nodes_after, r->rewrites, r->ms,
                      r->changed ? "yes" : "no", stage_status_name(st->status));
        } else if (f) {
            /* the rewrites it made before it failed (stopped: below says why) */
            sb_printf(&sb, "%6s %6s %8zu %8s  %-7s %s", "-", "-", f->rewrites, "-", "FAILED",
                      stage_status_name(st->status));
        } else {
            sb_printf(&sb, "%6s %6s %8s %8s  %-7s %s", "-", "-", "-", "-", "-", stage_status_name(st->status));
        }
        if (st->status != STAGE_WRITTEN && st->note) sb_puts(&sb, " *");
        StrBuf ins;
        sb_init(&ins);
        put_inserted_names(&ins, kp, n);
        if (ins.len) sb_puts(&sb, " +");
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
        lua_pushstring(L, stage_runs_for(st, pipeline_options(kp).native_transcendentals, runs, sizeof runs));
        lua_setfield(L, -2, "runs");
        if (ins.len) {
            lua_pushstring(L, sb_str(&ins));
            lua_setfield(L, -2, "inserted");
            /* named below the table, after the notes on the stages' status */
            char line[512];
            snprintf(line, sizeof line, "  + %d also runs inserted rules: %s (k:rules(%d) counts their rewrites, k:remove(%d) "
                     "takes them out)", n, sb_str(&ins), n, n);
            wrap_line(&inserted, line, 80, "      ");
        }
        sb_free(&ins);
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
        } else if (f) {
            lua_pushstring(L, f->error);
            lua_setfield(L, -2, "failed");
            lua_pushinteger(L, (lua_Integer)f->rewrites);
            lua_setfield(L, -2, "rewrites");
        }
        lua_rawseti(L, -2, n);
    }
    sb_printf(&sb, "  total %.3f ms\n", total);
    /* the phases, one line under the table rather than a column, so a row fits 80 columns */
    sb_puts(&sb, "  phases:");
    for (int n = 1; n <= STAGE_COUNT;) {
        int last = n;
        while (last < STAGE_COUNT && !strcmp(stage_get(last + 1)->phase, stage_get(n)->phase)) last++;
        sb_printf(&sb, "%s %s %d-%d", n > 1 ? "," : "", stage_get(n)->phase, n, last);
        n = last + 1;
    }
    sb_putc(&sb, '\n');
    /* the notes below the table, wrapped to 80 columns */
    for (int n = 1; n <= STAGE_COUNT; n++) {
        const Stage *st = stage_get(n);
        if (st->status == STAGE_WRITTEN || !st->note) continue;
        char line[512];
        snprintf(line, sizeof line, "  * %d %s: %s", n, stage_status_name(st->status), st->note);
        wrap_line(&sb, line, 80, "      ");
    }
    /* the stages that do not run as written: rules put in by k:insert */
    if (inserted.len) sb_puts(&sb, sb_str(&inserted));
    sb_free(&inserted);
    if (!ok) sb_printf(&sb, "  stopped: %s\n", err);
    set_text(L, "stages", sb_str(&sb));
    sb_free(&sb);
    return 1;
}

/* The trace of stage n (argument 2, default the current stage) of the
 * kernel at 1, running the stages as needed (argument 3, options, is
 * accepted and ignored: nothing prints); for a stage that failed, the
 * rewrites it made before, with the failure in *failed (NULL otherwise). */
static const Trace *stage_trace(lua_State *L, KernelPipeline **kp_out, int *n_out, const char **failed) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    int n = stage_arg(L, 2, kp);
    if (n < 1) luaL_error(L, "stage 0 is the kernel as scheduled: nothing was rewritten; give a stage 1..%d", STAGE_COUNT);
    *kp_out = kp;
    *n_out = n;
    const StageResult *r = stage_ran(L, kp, n);
    *failed = r->failed ? r->error : NULL;
    return &r->trace;
}

/* the names of the sets k:insert put before (or after) stage n's own, joined with " + " */
static void put_inserted(StrBuf *sb, const KernelPipeline *kp, int n, bool before) {
    for (int i = 0; i < pipeline_inserted_count(kp); i++) {
        const InsertedRules *ins = pipeline_inserted(kp, i);
        if (ins->stage != n || ins->before != before) continue;
        if (before) sb_printf(sb, "%s (inserted) + ", ruleset_name(ins->rules));
        else sb_printf(sb, " + %s (inserted)", ruleset_name(ins->rules));
    }
}

/* k:rules([n]): which rules fired in stage n (default: the current one),
 * how often (the text's fields: rule name -> count), and the rules
 * inserted into the stage that never fired (count 0) */
static int k_rules(lua_State *L) {
    KernelPipeline *kp;
    int n;
    const char *failed;
    const Trace *t = stage_trace(L, &kp, &n, &failed);
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
    /* the sets k:insert put into the stage, where they run: "A (inserted) + own sets + B (inserted)" */
    /* the counts first, so a narrow terminal that cuts the line keeps them */
    sb_printf(&sb, "stage %d (%s): %zu rewrite%s by %d rule%s\n  it runs ", n, st->name, t->nrewrites,
              t->nrewrites == 1 ? "" : "s", nnames, nnames == 1 ? "" : "s");
    put_inserted(&sb, kp, n, true);
    sb_printf(&sb, "%s", stage_runs_for(st, pipeline_options(kp).native_transcendentals, runs, sizeof runs));
    put_inserted(&sb, kp, n, false);
    sb_putc(&sb, '\n');
    for (int i = 1; i <= nnames; i++) {
        lua_rawgeti(L, order, i);
        const char *name = lua_tostring(L, -1);
        lua_getfield(L, counts, name);
        lua_Integer c = lua_tointeger(L, -1);
        const TraceRewrite *w = &t->rewrites[first[i - 1]];
        sb_printf(&sb, "  %6lld  %-36s %s:%d\n", (long long)c, name, w->file ? w->file : "", w->line);
        lua_pop(L, 2);
    }
    /* rules put into this stage with k:insert that never fired: the likely
     * surprise, so they are listed too */
    for (int i = 0; i < pipeline_inserted_count(kp); i++) {
        const InsertedRules *ins = pipeline_inserted(kp, i);
        if (ins->stage != n) continue;
        for (int r = 0; r < ruleset_count(ins->rules); r++) {
            const Rule *rule = ruleset_rule(ins->rules, r);
            lua_getfield(L, counts, rule_name(rule));
            bool fired = lua_tointeger(L, -1) > 0;
            lua_pop(L, 1);
            if (fired) continue;
            lua_pushinteger(L, 0);
            lua_setfield(L, counts, rule_name(rule));
            /* a rule whose error stopped the stage did run: the trace says which */
            bool raised = t->error_rule && strcmp(t->error_rule, rule_name(rule)) == 0 &&
                          strcmp(t->error_file, rule_file(rule) ? rule_file(rule) : "") == 0 &&
                          t->error_line == rule_line(rule);
            sb_printf(&sb, "  %6d  %-36s %s:%d   inserted, ", 0, rule_name(rule), rule_file(rule) ? rule_file(rule) : "",
                      rule_line(rule));
            if (raised) sb_printf(&sb, "its error stopped the stage (below)\n");
            else sb_printf(&sb, "never fired (:why %s ID says why)\n", rule_name(rule));
        }
    }
    lua_pop(L, 1);
    if (failed) sb_printf(&sb, "  then it failed: %s\n", failed);
    set_text(L, "rules", sb_str(&sb));
    sb_free(&sb);
    return 1;
}

/* k:rewrites([n [, {quiet=}]]): every rewrite stage n made, in order:
 * the rule, where it is written, and the node before and after; printed as
 * a line each, with the nodes rendered on a line under it (so a line fits
 * 80 columns), returned as a list */
static int k_rewrites(lua_State *L) {
    KernelPipeline *kp;
    int n;
    const char *failed;
    const Trace *t = stage_trace(L, &kp, &n, &failed);
    StrBuf sb, e;
    sb_init(&sb);
    sb_init(&e);
    sb_printf(&sb, "stage %d (%s): %zu rewrite%s\n", n, stage_get(n)->name, t->nrewrites, t->nrewrites == 1 ? "" : "s");
    lua_createtable(L, (int)t->nrewrites, 0);
    for (size_t i = 0; i < t->nrewrites; i++) {
        const TraceRewrite *w = &t->rewrites[i];
        sb_printf(&sb, "  %4zu  %-22s %%%u -> %%%u   (%s:%d)\n", i + 1, w->rule, w->before->id, w->after->id,
                  w->file ? w->file : "?", w->line);
        /* small value expressions read better rendered */
        if (!dt_is_ptr(w->before->dtype) && w->before->dtype != DT_VOID && uop_graph_size(w->before) <= 12 &&
            uop_graph_size(w->after) <= 12) {
            sb_clear(&e);
            uop_render_expr(&e, w->before);
            size_t before_len = e.len;
            sb_printf(&sb, "        %s", sb_str(&e));
            sb_clear(&e);
            uop_render_expr(&e, w->after);
            /* on one line when the two fit 80 columns, else after under before */
            if (8 + before_len + 6 + e.len <= 80) sb_printf(&sb, "  ->  %s\n", sb_str(&e));
            else sb_printf(&sb, "\n    ->  %s\n", sb_str(&e));
        }
        luop_push_rewrite(L, w);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    if (failed) {
        sb_printf(&sb, "  then it failed: %s\n", failed);
        lua_pushstring(L, failed);
        lua_setfield(L, -2, "failed");
    }
    set_text(L, "rewrites", sb_str(&sb));
    sb_free(&sb);
    sb_free(&e);
    return 1;
}

/* k:dot([file [, n]]): the DOT text of point n as a text object; with a
 * file name, renders it there instead (svg/png by the extension, .dot
 * writes the text) and returns "wrote FILE" */
static int k_dot(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    const char *file = luaL_optstring(L, 2, NULL);
    const UOp *r = point_root(L, kp, point_arg(L, 3, kp));
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
                return luaL_error(L, "cannot write %s: %s", luop_quote(L, file), strerror(errno));
            }
            fputs(sb_str(&sb), f);
            fclose(f);
        } else if (!dot_render(sb_str(&sb), ext ? ext + 1 : "svg", file, err, sizeof err)) {
            sb_free(&sb);
            return luaL_error(L, "%s", err);
        }
        sb_free(&sb);
        lua_pushfstring(L, "wrote %s", file);
        return 1;
    }
    push_text(L, "dot", sb_str(&sb));
    sb_free(&sb);
    return 1;
}

/* Reads opts from the table at idx: {{"UPCAST", axis, amount}, ...} or a
 * single flat {"UPCAST", axis, amount}; returns how many. */
int parse_opts(lua_State *L, int idx, KernelOpt *out) {
    idx = lua_absindex(L, idx);
    luaL_checktype(L, idx, LUA_TTABLE);
    int n = (int)luaL_len(L, idx);
    if (n > 32) return luaL_error(L, "opts: at most 32 opts, got %d", n);
    /* a single opt may be given flat: k:opts{"UPCAST", 1, 3} */
    lua_geti(L, idx, 1);
    bool flat = lua_type(L, -1) == LUA_TSTRING;
    lua_pop(L, 1);
    if (flat) n = 1;
    for (int i = 0; i < n; i++) {
        if (!flat) {
            lua_geti(L, idx, i + 1);
            if (lua_type(L, -1) != LUA_TTABLE)
                return luaL_error(L, "opt %d: expected {\"UPCAST\"|\"UNROLL\"|\"THREAD\"|\"LOCAL\"|..., axis, amount}", i + 1);
        } else {
            lua_pushvalue(L, idx);
        }
        int t = lua_gettop(L);
        lua_geti(L, t, 1);
        lua_geti(L, t, 2);
        lua_geti(L, t, 3);
        const char *op = lua_tostring(L, -3);
        if (!op || !opt_op_from_name(op, &out[i].op))
            return luaL_error(L, "opt %d: unknown opt %s (UPCAST, UNROLL, THREAD, LOCAL, GROUP, GROUPTOP, PADTO, SWAP or "
                              "NOLOCALS)", i + 1, op ? op : "(not a string)");
        /* NOLOCALS takes no axis or amount */
        if (out[i].op == OPT_NOLOCALS && lua_isnil(L, -2) && lua_isnil(L, -1)) {
            lua_pushinteger(L, 0);
            lua_replace(L, -3);
            lua_pushinteger(L, 0);
            lua_replace(L, -2);
        }
        /* a float with an integer value (2^40) counts as that integer */
        int axis_ok, amount_ok;
        lua_Integer axis = lua_tointegerx(L, -2, &axis_ok), amount = lua_tointegerx(L, -1, &amount_ok);
        if (!axis_ok || !amount_ok) {
            const char *a = luop_describe(L, -2);
            const char *b = luop_describe(L, -2);   /* the amount, below the text just pushed */
            return luaL_error(L, "opt %d: axis and amount must be integers, got %s and %s", i + 1, a, b);
        }
        if (axis < 0 || axis > INT_MAX)
            return luaL_error(L, "opt %d: axis %I is out of range (0 to %d)", i + 1, (LUAI_UACINT)axis, INT_MAX);
        if (amount < INT_MIN || amount > INT_MAX)
            return luaL_error(L, "opt %d: amount %I is out of range (at most %d)", i + 1, (LUAI_UACINT)amount, INT_MAX);
        out[i].axis = (int)axis;
        out[i].amount = (int)amount;
        lua_pop(L, 4);
    }
    return n;
}

/* pushes {{"UPCAST", axis, amount}, ...} */
void push_opts_table(lua_State *L, const KernelOpt *o, int n) {
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
}

/* k:opts{{"UPCAST", axis, amount}, ...} sets (k:opts{} turns opts off);
 * k:opts() returns them, and a text: the opts, then why, one line per
 * decision of the heuristic that chose them (or that they were given by hand) */
static int k_opts(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    if (lua_isnoneornil(L, 2)) {
        const KernelOpt *o;
        int n = pipeline_opts(kp, &o);
        push_opts_table(L, o, n);
        const char *why = pipeline_opts_why(kp);
        StrBuf sb = {0};
        sb_printf(&sb, "opts {");
        for (int i = 0; i < n; i++)
            sb_printf(&sb, "%s{\"%s\", %d, %d}", i ? ", " : "", opt_op_name(o[i].op), o[i].axis, o[i].amount);
        sb_printf(&sb, "}\n%s", why ? why : n ? "given by hand\n" : "no opts\n");
        char err[1024];
        const char *after = pipeline_opt_name(kp, err, sizeof err);
        if (after) sb_printf(&sb, "the kernel's name with them: %s\n", after);
        push_text(L, "opts", sb_str(&sb));
        sb_free(&sb);
        return 2;
    }
    KernelOpt opts[32];
    int n = parse_opts(L, 2, opts);
    const KernelOpt *cur;
    int nbefore = pipeline_opts(kp, &cur);
    KernelOpt *before = malloc((size_t)(nbefore ? nbefore : 1) * sizeof *before);
    char *why_before = pipeline_opts_why(kp) ? strdup(pipeline_opts_why(kp)) : NULL;
    if (!before || (pipeline_opts_why(kp) && !why_before)) {
        free(before);
        free(why_before);
        return luaL_error(L, "out of memory");
    }
    memcpy(before, cur, (size_t)nbefore * sizeof *before);
    Point at = current_point(kp);
    pipeline_set_opts(kp, opts, n);
    /* checked now, by running stage 7, rather than at the next :goto or
     * :run; refused opts leave the kernel with the opts it had, where it
     * stood.  A stage 7 that fails with the opts it had too (a rule
     * inserted there) says nothing about the new ones, which are kept. */
    char err[1024], err_before[1024];
    bool refused = !pipeline_root(kp, 7, err, sizeof err) && pipeline_failure(kp, 7);
    if (refused) {
        pipeline_set_opts(kp, before, nbefore);
        pipeline_set_opts_why(kp, why_before);
        if (!pipeline_root(kp, 7, err_before, sizeof err_before) && pipeline_failure(kp, 7)) {
            pipeline_set_opts(kp, opts, n);
            refused = false;
        } else if (at.rewrite >= 0) {
            pipeline_seek_rewrite(kp, at.stage, (size_t)at.rewrite, err_before, sizeof err_before);
        } else {
            pipeline_seek(kp, at.stage, err_before, sizeof err_before);
        }
    }
    free(before);
    free(why_before);
    if (refused) return luaL_error(L, "opts refused, the kernel keeps its opts: %s", err);
    return 0;
}

/* k:heuristic([threads]): the opts tinygrad v0.12.0's heuristic would choose
 * for this kernel on its target (the CPU: threads are the cores THREAD may
 * use, by default the machine's, 0 for none; the gpu target: locals and no
 * threads), without applying them.  Returns a text (the
 * opts, then one line per decision) and the opts as a table
 * {{"UPCAST", axis, amount}, ...} that k:opts takes. */
static int k_heuristic(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    lua_Integer threads = luaL_optinteger(L, 2, parallel_cores());
    if (threads < 0 || threads > 64) return luaL_error(L, "heuristic: threads must be 0 to 64, got %I", (LUAI_UACINT)threads);
    char err[512];
    const UOp *root = pipeline_root(kp, 6, err, sizeof err);
    if (!root) return luaL_error(L, "heuristic: %s", err);
    KernelOpt opts[32];
    StrBuf why = {0};
    int n = heuristic_opts_for(pipeline_ctx(kp), root, pipeline_options(kp).target, (int)threads, opts, 32, &why, err,
                               sizeof err);
    if (n < 0) {
        sb_free(&why);
        return luaL_error(L, "heuristic: %s", err);
    }
    StrBuf sb = {0};
    sb_printf(&sb, "opts {");
    for (int i = 0; i < n; i++)
        sb_printf(&sb, "%s{\"%s\", %d, %d}", i ? ", " : "", opt_op_name(opts[i].op), opts[i].axis, opts[i].amount);
    sb_printf(&sb, "}\n%s", sb_str(&why));
    sb_free(&why);
    push_text(L, "heuristic", sb_str(&sb));
    sb_free(&sb);
    push_opts_table(L, opts, n);
    return 2;
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

/* ---- breakpoints ---- */

typedef struct LuaWhen {
    lua_State *L;
    int ref;
} LuaWhen;

static int lua_when(void *ud, const UOp *before, const UOp *after, char *err, size_t errlen) {
    LuaWhen *w = ud;
    lua_State *L = w->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->ref);
    luop_push(L, before);
    luop_push(L, after);
    /* the stepping holds nodes Lua does not: no compaction meanwhile */
    LuaMemory *mem = luop_memory(L);
    mem->busy++;
    int status = lua_pcall(L, 2, 1, 0);
    mem->busy--;
    if (status != LUA_OK) {
        snprintf(err, errlen, "breakpoint predicate: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return -1;
    }
    int hit = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return hit;
}

static void lua_when_free(void *ud) {
    LuaWhen *w = ud;
    luaL_unref(w->L, LUA_REGISTRYINDEX, w->ref);
    free(w);
}

/* k:breakpoint{rule="name"} / {op="IDIV"} / {node=45} / {when=function(before, after) ... end} -> id */
static int k_breakpoint(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    luaL_checktype(L, 2, LUA_TTABLE);
    check_option_keys(L, 2, "breakpoint", (const char *[]){"rule", "op", "node", "when", NULL});
    Breakpoint bp = {0};
    char text[256];
    int kinds = 0;
    if (lua_getfield(L, 2, "rule") != LUA_TNIL) {
        bp.kind = BREAK_RULE, kinds++;
        bp.rule = (char *)luaL_checkstring(L, -1);
        snprintf(text, sizeof text, "rule %s", bp.rule);
    }
    if (lua_getfield(L, 2, "op") != LUA_TNIL) {
        bp.kind = BREAK_OP, kinds++;
        const char *name = luaL_checkstring(L, -1);
        if (!op_from_name(name, &bp.op)) {
            /* op names are upper case: "add" names ADD */
            char upper[32];
            size_t n = 0;
            for (; name[n] && n + 1 < sizeof upper; n++) upper[n] = (char)toupper((unsigned char)name[n]);
            upper[n] = 0;
            Op guess;
            if (!name[n] && op_from_name(upper, &guess))
                return luaL_error(L, "breakpoint: unknown op '%s': did you mean %s?", luop_quote(L, name), op_name(guess));
            return luaL_error(L, "breakpoint: unknown op '%s'", luop_quote(L, name));
        }
        snprintf(text, sizeof text, "op %s", op_name(bp.op));
    }
    if (lua_getfield(L, 2, "node") != LUA_TNIL) {
        bp.kind = BREAK_NODE, kinds++;
        const UOp *u = luop_test(L, -1);
        lua_Integer id = u ? (lua_Integer)u->id : luaL_checkinteger(L, -1);
        if (id < 0 || id > UINT32_MAX) return luaL_error(L, "breakpoint: no node %I", (LUAI_UACINT)id);
        bp.node = (unsigned)id;
        snprintf(text, sizeof text, "node %%%u", bp.node);
    }
    if (lua_getfield(L, 2, "when") != LUA_TNIL) {
        bp.kind = BREAK_WHEN, kinds++;
        luaL_checktype(L, -1, LUA_TFUNCTION);
        lua_Debug ar;
        lua_pushvalue(L, -1);
        lua_getinfo(L, ">S", &ar);
        snprintf(text, sizeof text, "when (%s:%d)", ar.short_src, ar.linedefined);
    }
    if (kinds != 1) return luaL_error(L, "breakpoint: give exactly one of rule=, op=, node=, when=");
    if (bp.kind == BREAK_WHEN) {
        LuaWhen *w = malloc(sizeof *w);
        if (!w) return luaL_error(L, "out of memory");
        lua_getfield(L, 2, "when");
        w->L = L;
        w->ref = luaL_ref(L, LUA_REGISTRYINDEX);
        bp.when = lua_when, bp.ud = w, bp.ud_free = lua_when_free;
    }
    bp.text = text;
    int id = breaks_add(pipeline_breaks(kp), &bp);
    if (!id) {
        if (bp.ud_free) bp.ud_free(bp.ud);
        return luaL_error(L, "out of memory");
    }
    lua_pushinteger(L, id);
    /* a rule no stage runs may be a mistyped name (or one inserted later) */
    if (bp.kind != BREAK_RULE || pipeline_runs_rule(kp, bp.rule)) return 1;
    const char *near = pipeline_closest_rule(kp, bp.rule);
    if (near) lua_pushfstring(L, "no stage runs a rule named %s yet (did you mean %s?)", bp.rule, near);
    else lua_pushfstring(L, "no stage runs a rule named %s yet", bp.rule);
    return 2;
}

/* k:breakpoints() -> {{id=, what=}, ...}; prints as one line each */
static int k_breakpoints(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    const BreakList *bl = pipeline_breaks(kp);
    lua_createtable(L, bl->n, 0);
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < bl->n; i++) {
        lua_createtable(L, 0, 2);
        lua_pushinteger(L, bl->items[i].id);
        lua_setfield(L, -2, "id");
        lua_pushstring(L, bl->items[i].text);
        lua_setfield(L, -2, "what");
        lua_rawseti(L, -2, i + 1);
        sb_printf(&sb, "%s%d  %s", i ? "\n" : "", bl->items[i].id, bl->items[i].text);
    }
    set_text(L, "breakpoints", bl->n ? sb_str(&sb) : "no breakpoints");
    sb_free(&sb);
    return 1;
}

/* k:delete(id) -> true if there was such a breakpoint */
static int k_delete(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    lua_Integer id = luaL_checkinteger(L, 2);
    lua_pushboolean(L, id > 0 && id <= INT32_MAX && breaks_delete(pipeline_breaks(kp), (int)id));
    return 1;
}

/* k:continue(): moves to the next rewrite, across stages, that hits a
 * breakpoint; returns its summary line (nil when none is hit before the end) */
static int k_continue(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    Point p = current_point(kp);
    BreakHit hit;
    char err[1024];
    int r = dbg_continue(kp, pipeline_breaks(kp), p.stage, p.rewrite, &hit, err, sizeof err);
    if (r < 0) return luaL_error(L, "continue: %s", err);
    if (r == 0) {
        lua_pushnil(L);
        lua_pushliteral(L, "no breakpoint hit before the end of the pipeline");
        return 2;
    }
    move_to_rewrite(L, kp, hit.stage, hit.rewrite);
    lua_pushfstring(L, "breakpoint %d: %s", hit.id, lua_tostring(L, -1));
    return 1;
}

static Kernel *compiled(lua_State *L, KernelPipeline *kp) {
    char err[1024];
    Kernel *k = pipeline_kernel(kp, err, sizeof err);
    if (!k) luaL_error(L, "%s", err);
    return k;
}

/* k:llvm() -> the IR before and after optimisation as a text object;
 * k:llvm("before") or k:llvm("after") one of them */
static int k_llvm(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    const char *which = luaL_optstring(L, 2, NULL);
    Kernel *k = compiled(L, kp);
    if (which) {
        if (strcmp(which, "before") && strcmp(which, "after"))
            return luaL_argerror(L, 2, "\"before\" or \"after\" (optimisation)");
        push_text(L, "llvm", kernel_ir(k, !strcmp(which, "after")));
        return 1;
    }
    double r, o, j;
    kernel_compile_times(k, &r, &o, &j);
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "; ---- %s: LLVM IR as rendered ----\n%s", pipeline_name(kp), kernel_ir(k, false));
    sb_printf(&sb, "; ---- %s: after default<O2> for %s (render %.2f ms, optimise %.2f ms, JIT %.2f ms) ----\n%s",
              pipeline_name(kp), backend_host_cpu(), r, o, j, kernel_ir(k, true));
    push_text(L, "llvm", sb_str(&sb));
    sb_free(&sb);
    return 1;
}

/* k:asm() -> the host assembly as a text object; k:asm{target = "ptx"}: the
 * stage-22 program as PTX, through LLVM's NVPTX backend */
static int k_asm(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        lua_getfield(L, 2, "target");
        const char *t = lua_tostring(L, -1);
        if (!t || (strcmp(t, "ptx") && strcmp(t, "host")))
            return luaL_error(L, "asm: target must be \"ptx\" or \"host\", got %s", luop_describe(L, -1));
        if (!strcmp(t, "ptx")) {
            char err[1024];
            const UOp *lin = pipeline_root(kp, STAGE_COUNT, err, sizeof err);
            if (!lin) return luaL_error(L, "asm: %s", err);
            char *ptx = kernel_ptx(pipeline_name(kp), lin->src, lin->nsrc, err, sizeof err);
            if (!ptx) return luaL_error(L, "asm: %s: %s", pipeline_name(kp), err);
            push_text(L, "asm", ptx);
            free(ptx);
            return 1;
        }
    }
    const char *a = kernel_asm(compiled(L, kp));
    if (!a) return luaL_error(L, "%s: the host assembly could not be generated", pipeline_name(kp));
    push_text(L, "asm", a);
    return 1;
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

/* Runs the check of the kernel at point pt; pushes the report table {ok=,
 * mismatches=, stage=, rewrite=, text=} or, when the point cannot be run,
 * returns false with the reason in err. */
/* option `executor` of an options table: "auto" (the default),
 * "interpreter" or "compiled" */
static CheckExecutor opt_executor(lua_State *L, int t, const char *what, const KernelPipeline *kp) {
    if (!lua_istable(L, t)) return CHECK_AUTO;
    lua_getfield(L, t, "executor");
    CheckExecutor how = CHECK_AUTO;
    if (!lua_isnil(L, -1) && !(lua_type(L, -1) == LUA_TSTRING && check_executor_from_name(lua_tostring(L, -1), &how)))
        return luaL_error(L, "%s: executor must be \"auto\", \"interpreter\" or \"compiled\", got %s", what,
                          luop_describe(L, -1));
    lua_pop(L, 1);
    if (how == CHECK_COMPILED && pipeline_options(kp).target == TARGET_GPU)
        return luaL_error(L, "%s: executor \"compiled\" is for the cpu target; the gpu target's points run in the "
                          "GPU emulator", what);
    return how;
}

static bool check_point(lua_State *L, LProgram *p, int ki, Point pt, double atol, double rtol,
                        CheckExecutor how, char *err, size_t errlen) {
    ValidateReport rep;
    StrBuf sb;
    sb_init(&sb);
    KernelCheck *kc = kcheck_new(p->s, p->kps, ki, luop_buffer_lookup, L, atol, rtol, err, errlen);
    bool ok = kc != NULL;
    if (kc) kcheck_set_executor(kc, how);
    if (ok && pt.rewrite < 0) {
        ok = kcheck_point(kc, pt.stage, &rep, &sb, err, errlen);
    } else if (ok) {
        ok = kcheck_rewrite_point(kc, pt.stage, (size_t)pt.rewrite, &rep, &sb, err, errlen);
    }
    double work = 0;
    CheckExecutor ran_by = ok ? kcheck_ran_by(kc, &work) : CHECK_AUTO;
    kcheck_free(kc);
    if (ok) {
        push_report(L, &rep, pt.stage, sb_str(&sb));
        lua_pushstring(L, check_executor_name(ran_by));
        lua_setfield(L, -2, "executor");
        lua_pushnumber(L, work);
        lua_setfield(L, -2, "work");
        if (pt.rewrite >= 0) {
            lua_pushinteger(L, pt.rewrite);
            lua_setfield(L, -2, "rewrite");
        }
    }
    sb_free(&sb);
    return ok;
}

/* k:check([n [, {atol=, rtol=, quiet=, executor=}]]): runs the kernel at stage n
 * (default: the current point, a rewrite point included) on the program's
 * data and compares its output with the reference; returns the report */
static int k_check(lua_State *L) {
    LProgram *p;
    KernelPipeline *kp = check_kernel(L, 1, &p);
    Point pt = point_arg(L, 2, kp);
    if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    check_option_keys(L, 3, "check", (const char *[]){"atol", "rtol", "quiet", "executor", NULL});
    double atol = opt_number(L, 3, "atol", 1e-5), rtol = opt_number(L, 3, "rtol", 1e-4);
    CheckExecutor how = opt_executor(L, 3, "check", kp);
    char err[1024];
    if (!check_point(L, p, kernel_index(L, 1), pt, atol, rtol, how, err, sizeof err))
        return error_with_node(L, "check", err);
    /* it prints as "r_3_3_3 at stage 4 (initial symbolic): output0 ..." */
    lua_getfield(L, -1, "text");
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s at ", pipeline_name(kp));
    point_label(&sb, kp, pt);
    sb_printf(&sb, ": %s", lua_tostring(L, -1));
    lua_pop(L, 1);
    set_text(L, "check", sb_str(&sb));
    sb_free(&sb);
    return 1;
}

bool node_id_text(const char *s, lua_Integer *id) {
    const char *d = s[0] == '%' ? s + 1 : s;
    size_t n = strlen(d);
    bool digits = n > 0 && n <= 10;
    for (size_t i = 0; digits && i < n; i++) digits = isdigit((unsigned char)d[i]);
    if (digits) *id = strtoll(d, NULL, 10);
    return digits;
}

/* the node argument: a UOp, its id, or "%ID" */
const UOp *check_node_arg(lua_State *L, int idx, const char *what) {
    const UOp *u = luop_test(L, idx);
    if (u) return u;
    lua_Integer id = -1;
    if (lua_isinteger(L, idx)) {
        id = lua_tointeger(L, idx);
    } else if (lua_type(L, idx) == LUA_TSTRING) {
        const char *s = lua_tostring(L, idx);
        if (!node_id_text(s, &id))
            luaL_error(L, "%s: '%s' is not a node id (give a node, 331 or \"%%331\")", what, luop_quote(L, s));
    } else {
        luaL_error(L, "%s: takes a node, its id or \"%%ID\", got %s", what, luaL_typename(L, idx));
    }
    const UOp *found = id >= 0 && id <= UINT32_MAX ? uctx_node(luop_ctx(L), (uint32_t)id) : NULL;
    if (!found) luaL_error(L, "%s: no node %%%I", what, (lua_Integer)id);
    return found;
}

void add_node_line(lua_State *L, StrBuf *sb, const char *indent, const UOp *u) {
    push_node_line(L, u);
    sb_printf(sb, "%s%s", indent, lua_tostring(L, -1));
    lua_pop(L, 1);
}

void set_node_field(lua_State *L, const char *k, const UOp *u) {
    if (!u) return;
    luop_push(L, u);
    lua_setfield(L, -2, k);
}

void point_text(char *buf, size_t len, int stage, long r) {
    if (r < 0) snprintf(buf, len, "%d", stage);
    else snprintf(buf, len, "%d.%ld", stage, r);
}

void add_pattern_miss(StrBuf *sb, const PatternMiss *m) {
    sb_printf(sb, "%s fails on %%%u: %s", m->pattern, m->node->id, m->reason);
}

void push_node_line(lua_State *L, const UOp *u) {
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
    push_node_line(L, c->before);
    lua_setfield(L, -2, "before");
    push_node_line(L, c->after);
    lua_setfield(L, -2, "after");
    luop_push(L, c->before);
    lua_setfield(L, -2, "before_node");
    luop_push(L, c->after);
    lua_setfield(L, -2, "after_node");
    if (c->effect) {
        lua_pushstring(L, c->effect);
        lua_setfield(L, -2, "effect");
    }
    if (c->spec) {
        lua_pushstring(L, c->spec);
        lua_setfield(L, -2, "spec");
    }
}

/* The progress of k:bisect: a Lua function given as {progress = fn} is
 * called as fn(what, checked) before each check (an error in it stops the
 * bisect with that error); without one, on a terminal, a bisect running
 * longer than a second shows one line on stderr, rewritten in place, that
 * says what it checks, from the first second even when that one check
 * takes long (Ctrl-C stops it). */
typedef struct BisectShow {
    lua_State *L;
    int fn;                 /* stack index of the Lua function, 0: none */
    const char *name;       /* the kernel's */
    ProgressTicker *line;   /* the terminal's line, NULL: none */
    bool failed;            /* the Lua function raised; its message is on the stack */
} BisectShow;

static bool bisect_progress(void *ud, const char *what, int checked) {
    BisectShow *b = ud;
    if (b->fn) {
        lua_pushvalue(b->L, b->fn);
        lua_pushstring(b->L, what);
        lua_pushinteger(b->L, checked);
        if (lua_pcall(b->L, 2, 0, 0) != LUA_OK) {
            b->failed = true;
            return false;
        }
        return true;
    }
    char text[256];
    snprintf(text, sizeof text, "bisect %s: checking %s, %d checked", b->name, what, checked);
    progress_ticker_set(b->line, text);
    return true;
}

/* k:bisect([{quiet=, all=, progress=}]) -> stage, culprit, reports: the first stage whose
 * output differs from the reference, or that cannot be run and breaks its
 * spec (nil if none), the rewrite in it that made it wrong ({rule=, where=,
 * index=, of=, before=, after=, and effect= or spec= when the point after it
 * accesses memory outside a buffer or breaks its spec}, nil when it cannot
 * be named), and the reports of the points judged (by stage + 1, with
 * `unchecked`: how many points could not be checked); points are
 * bisected, or all checked in order with all=true */
static int k_bisect(lua_State *L) {
    LProgram *p;
    KernelPipeline *kp = check_kernel(L, 1, &p);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    check_option_keys(L, 2, "bisect", (const char *[]){"quiet", "all", "progress", "executor", NULL});
    CheckExecutor how = opt_executor(L, 2, "bisect", kp);
    BisectShow show = {L, 0, pipeline_name(kp), NULL, false};
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "progress");
        if (lua_isfunction(L, -1)) show.fn = lua_gettop(L);
        else if (!lua_isnil(L, -1)) return luaL_error(L, "bisect: progress must be a function, got %s", luaL_typename(L, -1));
        else lua_pop(L, 1);
    }
    BisectProgress progress = {bisect_progress, &show};
    if (!show.fn) show.line = progress_ticker_start(1.0);
    BisectResult r;
    char err[1024];
    bool ok = dbg_bisect(p->s, p->kps, kernel_index(L, 1), luop_buffer_lookup, L, 1e-5, 1e-4, opt_bool(L, 2, "all"),
                         how, show.fn || show.line ? &progress : NULL, &r, err, sizeof err);
    progress_ticker_stop(show.line);
    if (show.failed) return luaL_error(L, "bisect: progress: %s", lua_tostring(L, -1));
    if (!ok) return luaL_error(L, "bisect: %s", err);
    if (r.first_bad >= 0) lua_pushinteger(L, r.first_bad);
    else lua_pushnil(L);
    push_culprit(L, &r.culprit);
    lua_createtable(L, STAGE_COUNT + 1, 0);
    for (int n = 0; n <= STAGE_COUNT; n++)
        if (r.points[n].state == POINT_MATCHES || r.points[n].state == POINT_DIFFERS) {
            push_report(L, &r.points[n].rep, n, r.points[n].text);
            lua_rawseti(L, -2, n + 1);
        }
    /* the reports print as the verdict, the culprit as its line */
    StrBuf sb;
    sb_init(&sb);
    const char *before = NULL, *after = NULL;
    if (r.culprit.found) {
        lua_getfield(L, -2, "before");
        lua_getfield(L, -3, "after");
        before = lua_tostring(L, -2), after = lua_tostring(L, -1);
    }
    bisect_format(&r, pipeline_name(kp), before, after, &sb);
    if (r.culprit.found) lua_pop(L, 2);
    set_text(L, "bisect", sb_str(&sb));
    lua_pushinteger(L, r.unchecked);
    lua_setfield(L, -2, "unchecked");
    if (r.failed && r.points[r.first_bad].text) {
        lua_pushstring(L, r.points[r.first_bad].text);
        lua_setfield(L, -2, "failed");
    }
    if (r.culprit.found) {
        lua_pushvalue(L, -2);
        char line[512];
        snprintf(line, sizeof line, "rewrite %zu of %zu in stage %d: %s (%s:%d)", r.culprit.index, r.culprit.of,
                 r.first_bad, r.culprit.rule, r.culprit.file, r.culprit.line);
        set_text(L, "culprit", line);
        lua_pop(L, 1);
    }
    sb_free(&sb);
    bisect_result_free(&r);
    return 3;
}

/* two Kernel values are equal when they are the same kernel of the same program */
int luop_kernel_eq(lua_State *L) {
    LKernel *a = luaL_testudata(L, 1, KERNEL_MT), *b = luaL_testudata(L, 2, KERNEL_MT);
    if (!a || !b || a->index != b->index) {
        lua_pushboolean(L, 0);
        return 1;
    }
    lua_getiuservalue(L, 1, 1);
    lua_getiuservalue(L, 2, 1);
    lua_pushboolean(L, lua_rawequal(L, -1, -2));
    return 1;
}

/* k:select(): this kernel becomes the current one, the one the REPL's
 * colon commands act on; returns it */
static int k_select(lua_State *L) {
    check_kernel(L, 1, NULL);
    set_current(L, 1);
    lua_settop(L, 1);
    return 1;
}

static int k_program(lua_State *L) {
    check_kernel(L, 1, NULL);
    lua_getiuservalue(L, 1, 1);
    return 1;
}


const luaL_Reg luop_kernel_methods[] = {
    {"name", k_name},     {"seek", k_seek}, {"next", k_next}, {"prev", k_prev},         {"step", k_step},     {"back", k_back},   {"pos", k_pos},
    {"root", k_root},     {"listing", k_listing},   {"print", k_print},   {"diff", k_diff},   {"diff_text", k_diff_text},
    {"stages", k_stages}, {"rules", k_rules},       {"dot", k_dot},       {"opts", k_opts}, {"heuristic", k_heuristic}, {"beam", luop_kernel_beam},   {"llvm", k_llvm},
    {"asm", k_asm},       {"program", k_program}, {"compile_ms", k_compile_ms}, {"check", k_check}, {"rewrites", k_rewrites},
    {"bisect", k_bisect}, {"select", k_select}, {"insert", k_insert}, {"breakpoint", k_breakpoint}, {"breakpoints", k_breakpoints}, {"delete", k_delete}, {"continue", k_continue}, {"inserted", k_inserted}, {"remove", k_remove},   {"verify", luop_kernel_verify}, {"origin", luop_kernel_origin}, {"why", luop_kernel_why}, {"find", luop_kernel_find}, {NULL, NULL}};

const char *uopdb_lua_current_point(lua_State *L, char *buf, size_t len) {
    if (!len) return buf;
    buf[0] = 0;
    lua_getfield(L, LUA_REGISTRYINDEX, CURRENT_KEY);
    LKernel *k = luaL_testudata(L, -1, KERNEL_MT);
    if (k) {
        lua_getiuservalue(L, -1, 1);
        LProgram *p = lua_touserdata(L, -1);
        if (p && p->s && k->index >= 0 && k->index < p->nk) {
            KernelPipeline *kp = p->kps[k->index];
            long r = pipeline_rewrite_position(kp);
            if (r >= 0) snprintf(buf, len, "%s@%d.%ld", pipeline_name(kp), pipeline_position(kp), r);
            else snprintf(buf, len, "%s@%d", pipeline_name(kp), pipeline_position(kp));
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return buf;
}

int uopdb_lua_failed_validations(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, FAILED_KEY);
    int n = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    return n;
}
