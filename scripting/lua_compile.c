/* lua_compile.c - programs and kernels in Lua: uop.compile(t) schedules a
 * tensor graph into kernels and prepares each kernel's pipeline without
 * running it; a Program lists kernels and scheduler steps and runs through
 * the JIT (optionally validated against the reference); a Kernel steps
 * through the 22 stages and shows the IR, diffs, rules, DOT, LLVM IR and
 * assembly.  The last program or kernel touched is "current" for the REPL's
 * colon commands (uop.current()). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lua_internal.h"
#include "tensor_data.h"
#include "../core/backend/program_run.h"
#include "../core/sched/schedule.h"
#include "../core/stages/pipeline.h"
#include "../viz/diff.h"
#include "../viz/dot.h"
#include "../viz/listing.h"
#include "../viz/render.h"

#define PROGRAM_MT "uopdb.Program"
#define KERNEL_MT "uopdb.Kernel"
#define CURRENT_KEY "uopdb.current_kernel"

typedef struct LProgram {
    Schedule *s;
    KernelPipeline **kps;
    int nk;
    const UOp *sink;
} LProgram;

typedef struct LKernel {
    int index; /* 0-based; the program is the userdata's user value */
} LKernel;

static LProgram *check_program(lua_State *L, int idx) { return luaL_checkudata(L, idx, PROGRAM_MT); }

static LProgram *program_alive(lua_State *L, int idx) {
    LProgram *p = check_program(L, idx);
    if (!p->s) luaL_error(L, "this program was freed");
    return p;
}

/* The kernel at idx and its program (pushes nothing). */
static KernelPipeline *check_kernel(lua_State *L, int idx, LProgram **prog_out) {
    LKernel *k = luaL_checkudata(L, idx, KERNEL_MT);
    lua_getiuservalue(L, idx, 1);
    LProgram *p = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (!p || !p->s || k->index < 0 || k->index >= p->nk) luaL_error(L, "this kernel's program was freed");
    if (prog_out) *prog_out = p;
    return p->kps[k->index];
}

static void set_current(lua_State *L, int kernel_idx) {
    lua_pushvalue(L, kernel_idx);
    lua_setfield(L, LUA_REGISTRYINDEX, CURRENT_KEY);
}

/* Pushes kernel i of the program at prog_idx as a Kernel userdata. */
static void push_kernel(lua_State *L, int prog_idx, int i) {
    prog_idx = lua_absindex(L, prog_idx);
    LKernel *k = lua_newuserdatauv(L, sizeof *k, 1);
    k->index = i;
    lua_pushvalue(L, prog_idx);
    lua_setiuservalue(L, -2, 1);
    luaL_setmetatable(L, KERNEL_MT);
}

static int parse_opts(lua_State *L, int idx, KernelOpt *out);

/* ---- uop.compile ---- */

static int l_compile(lua_State *L) {
    UCtx *c = luop_ctx(L);
    const UOp *outs[64];
    int n = 0;
    const UOp *one = luop_test_tensor(L, 1);
    if (one) {
        outs[n++] = one;
    } else if (lua_type(L, 1) == LUA_TTABLE) {
        lua_Integer len = luaL_len(L, 1);
        if (len < 1) return luaL_argerror(L, 1, "an empty list: give a tensor or a list of tensors");
        if (len > 64) return luaL_argerror(L, 1, "at most 64 outputs");
        for (lua_Integer i = 1; i <= len; i++) {
            lua_geti(L, 1, i);
            const UOp *u = luop_test_tensor(L, -1);
            lua_pop(L, 1);
            if (!u) return luaL_error(L, "uop.compile: item %d of the list is not a tensor or UOp", (int)i);
            outs[n++] = u;
        }
    } else {
        return luaL_argerror(L, 1, "a tensor, a UOp, or a list of them expected");
    }
    /* options: {kernel_opts = {[i] = {{"UPCAST", axis, amount}, ...}}} */
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        lua_pushnil(L);
        while (lua_next(L, 2)) {
            lua_pop(L, 1);
            if (lua_type(L, -1) != LUA_TSTRING || strcmp(lua_tostring(L, -1), "kernel_opts"))
                return luaL_error(L, "uop.compile: unknown option %s (known: kernel_opts)", luaL_tolstring(L, -1, NULL));
        }
    }
    const UOp *sink = uop_sink(c, outs, n);
    if (!sink) return luop_ctx_error(L);
    char err[1024];
    Schedule *s = schedule_build(c, sink, err, sizeof err);
    if (!s) return luaL_error(L, "uop.compile: %s", err);
    LProgram *p = lua_newuserdatauv(L, sizeof *p, 0);
    memset(p, 0, sizeof *p);
    luaL_setmetatable(L, PROGRAM_MT);
    p->s = s;
    p->sink = sink;
    p->kps = calloc((size_t)s->nkernels + 1, sizeof *p->kps);
    if (!p->kps) return luaL_error(L, "out of memory");
    p->nk = s->nkernels;
    for (int i = 0; i < s->nkernels; i++) {
        p->kps[i] = pipeline_new(c, s->kernels[i].name, s->kernels[i].ast);
        if (!p->kps[i]) return luaL_error(L, "out of memory");
    }
    if (lua_type(L, 2) == LUA_TTABLE && lua_getfield(L, 2, "kernel_opts") != LUA_TNIL) {
        if (!lua_istable(L, -1))
            return luaL_error(L, "uop.compile: kernel_opts must be a table {[kernel] = {{op, axis, amount}, ...}}, got %s",
                              luaL_typename(L, -1));
        int t = lua_gettop(L);
        lua_pushnil(L);
        while (lua_next(L, t)) {
            if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 || lua_tointeger(L, -2) > p->nk)
                return luaL_error(L, "uop.compile: kernel_opts: no kernel %s (the program has %d)",
                                  luaL_tolstring(L, -2, NULL), p->nk);
            if (!lua_istable(L, -1))
                return luaL_error(L, "uop.compile: kernel_opts[%I]: a list of opts expected, got %s",
                                  (LUAI_UACINT)lua_tointeger(L, -2), luaL_typename(L, -1));
            KernelOpt opts[32];
            int no = parse_opts(L, -1, opts);
            pipeline_set_opts(p->kps[lua_tointeger(L, -2) - 1], opts, no);
            lua_pop(L, 1);
        }
    }
    lua_settop(L, lua_gettop(L) - (lua_type(L, 2) == LUA_TTABLE ? 1 : 0));
    if (p->nk > 0) {
        push_kernel(L, -1, 0);
        set_current(L, lua_gettop(L));
        lua_pop(L, 1);
    }
    return 1;
}

/* ---- Program ---- */

static int p_gc(lua_State *L) {
    LProgram *p = check_program(L, 1);
    for (int i = 0; i < p->nk; i++) pipeline_free(p->kps[i]);
    free(p->kps);
    p->kps = NULL;
    p->nk = 0;
    schedule_free(p->s);
    p->s = NULL;
    return 0;
}

static int p_tostring(lua_State *L) {
    LProgram *p = program_alive(L, 1);
    lua_pushfstring(L, "Program: %d kernel%s in %d generation%s, %d buffers", p->nk, p->nk == 1 ? "" : "s",
                    p->s->ngenerations, p->s->ngenerations == 1 ? "" : "s", p->s->nbufs);
    return 1;
}

static int p_kernels(lua_State *L) {
    LProgram *p = program_alive(L, 1);
    lua_createtable(L, p->nk, 0);
    for (int i = 0; i < p->nk; i++) {
        push_kernel(L, 1, i);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int p_kernel(lua_State *L) {
    LProgram *p = program_alive(L, 1);
    lua_Integer i = luaL_optinteger(L, 2, 1);
    if (i < 1 || i > p->nk)
        return luaL_error(L, "no kernel %I: this program has %d (numbered from 1)", (LUAI_UACINT)i, p->nk);
    push_kernel(L, 1, (int)i - 1);
    set_current(L, lua_gettop(L));
    return 1;
}

static int text_tostring(lua_State *L) {
    lua_getfield(L, 1, "summary");
    if (lua_isnil(L, -1)) lua_pushliteral(L, "(table)");
    return 1;
}

/* Gives the table on top a metatable whose __tostring is its summary field,
 * so the REPL prints one line for a table that was already printed in full. */
static void set_summary(lua_State *L, const char *summary) {
    lua_pushstring(L, summary);
    lua_setfield(L, -2, "summary");
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, text_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_setmetatable(L, -2);
}

static void print_text(const char *s) {
    fputs(s, stdout);
    size_t n = strlen(s);
    if (n && s[n - 1] != '\n') fputc('\n', stdout);
    fflush(stdout);
}

static double opt_number(lua_State *L, int t, const char *k, double dflt) {
    if (lua_type(L, t) != LUA_TTABLE) return dflt;
    lua_getfield(L, t, k);
    if (!lua_isnil(L, -1) && !lua_isnumber(L, -1))
        luaL_error(L, "option %s: a number expected, got %s", k, luaL_typename(L, -1));
    double v = lua_isnil(L, -1) ? dflt : lua_tonumber(L, -1);
    lua_pop(L, 1);
    return v;
}

static bool opt_bool(lua_State *L, int t, const char *k) {
    if (lua_type(L, t) != LUA_TTABLE) return false;
    lua_getfield(L, t, k);
    bool v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

static int p_steps(lua_State *L) {
    LProgram *p = program_alive(L, 1);
    bool quiet = opt_bool(L, 2, "quiet");
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%-3s %-20s %7s %7s %8s %8s  %s\n", "#", "step", "before", "after", "rewrites", "ms", "purpose");
    lua_createtable(L, p->s->nsteps, 0);
    for (int i = 0; i < p->s->nsteps; i++) {
        const SchedStep *st = &p->s->steps[i];
        size_t nb = st->before ? uop_graph_size(st->before) : 0, na = st->after ? uop_graph_size(st->after) : 0;
        sb_printf(&sb, "%-3d %-20s %7zu %7zu %8zu %8.3f  %s\n", i + 1, st->name, nb, na, st->trace.nrewrites, st->ms,
                  st->purpose ? st->purpose : "");
        lua_createtable(L, 0, 7);
        lua_pushstring(L, st->name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, st->purpose ? st->purpose : "");
        lua_setfield(L, -2, "purpose");
        luop_push(L, st->before);
        lua_setfield(L, -2, "before");
        luop_push(L, st->after);
        lua_setfield(L, -2, "after");
        lua_pushinteger(L, (lua_Integer)st->trace.nrewrites);
        lua_setfield(L, -2, "rewrites");
        lua_pushnumber(L, st->ms);
        lua_setfield(L, -2, "ms");
        lua_rawseti(L, -2, i + 1);
    }
    if (!quiet) print_text(sb_str(&sb));
    sb_free(&sb);
    char summary[64];
    snprintf(summary, sizeof summary, "(%d scheduler steps)", p->s->nsteps);
    set_summary(L, summary);
    return 1;
}

static int p_text(lua_State *L) {
    LProgram *p = program_alive(L, 1);
    StrBuf sb;
    sb_init(&sb);
    schedule_format(&sb, p->s);
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    return 1;
}

static int p_print(lua_State *L) {
    p_text(L);
    print_text(lua_tostring(L, -1));
    return 0;
}

/* p:run([{validate=true, atol=, rtol=, quiet=}]) -> list of output BUFFER
 * UOps [, report] */
static int p_run(lua_State *L) {
    LProgram *p = program_alive(L, 1);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    bool validate = opt_bool(L, 2, "validate"), quiet = opt_bool(L, 2, "quiet");
    double atol = opt_number(L, 2, "atol", 1e-5), rtol = opt_number(L, 2, "rtol", 1e-4);
    const Schedule *s = p->s;
    int no = s->noutputs;
    void **outs = lua_newuserdatauv(L, sizeof(void *) * (size_t)(no + 1), 0);
    int outs_idx = lua_gettop(L);
    lua_createtable(L, no, 0);
    int list_idx = lua_gettop(L);
    for (int j = 0; j < no; j++) {
        const SchedBuffer *b = &s->bufs[s->outputs[j]];
        const UOp *buf = luop_buffer_new(L, b->dtype, b->size, &outs[j]);
        if (!buf) return luaL_error(L, "cannot allocate %s", b->name);
        luop_push(L, buf);
        lua_rawseti(L, list_idx, j + 1);
    }
    char err[1024];
    if (!program_run(s, p->kps, luop_buffer_lookup, L, outs, err, sizeof err))
        return luaL_error(L, "run: %s", err);
    if (!validate) {
        lua_pushvalue(L, list_idx);
        return 1;
    }
    lua_createtable(L, 0, 4);
    int rep_idx = lua_gettop(L);
    StrBuf sb;
    sb_init(&sb);
    bool all_ok = true;
    size_t mismatches = 0;
    for (int j = 0; j < no; j++) {
        ValidateReport rep;
        if (j) sb_putc(&sb, '\n');
        sb_puts(&sb, "validate: ");
        if (!program_validate(s, j, outs[j], luop_buffer_lookup, L, atol, rtol, &rep, &sb, err, sizeof err)) {
            sb_free(&sb);
            return luaL_error(L, "validate: %s", err);
        }
        all_ok = all_ok && rep.ok;
        mismatches += rep.mismatches;
    }
    lua_pushboolean(L, all_ok);
    lua_setfield(L, rep_idx, "ok");
    lua_pushinteger(L, (lua_Integer)mismatches);
    lua_setfield(L, rep_idx, "mismatches");
    lua_pushstring(L, sb_str(&sb));
    lua_setfield(L, rep_idx, "text");
    if (!quiet) print_text(sb_str(&sb));
    sb_free(&sb);
    (void)outs_idx;
    lua_pushvalue(L, list_idx);
    lua_pushvalue(L, rep_idx);
    return 2;
}

/* p:time([n]) -> best wall-clock ms of n runs (default 3) of the whole
 * program on outputs allocated once, after a first run that compiles */
static int p_time(lua_State *L) {
    LProgram *p = program_alive(L, 1);
    lua_Integer n = luaL_optinteger(L, 2, 3);
    if (n < 1) return luaL_argerror(L, 2, "at least one run");
    const Schedule *s = p->s;
    void **outs = lua_newuserdatauv(L, sizeof(void *) * (size_t)(s->noutputs + 1), 0);
    memset(outs, 0, sizeof(void *) * (size_t)(s->noutputs + 1));
    bool ok = true;
    for (int j = 0; j < s->noutputs && ok; j++) {
        const SchedBuffer *b = &s->bufs[s->outputs[j]];
        outs[j] = buffer_alloc(b->dtype, b->size);
        ok = outs[j] != NULL;
    }
    char err[1024] = "cannot allocate the outputs";
    double best = -1;
    for (lua_Integer i = 0; ok && i <= n; i++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ok = program_run(s, p->kps, luop_buffer_lookup, L, outs, err, sizeof err);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        if (i > 0 && (best < 0 || ms < best)) best = ms;
    }
    for (int j = 0; j < s->noutputs; j++) buffer_free(outs[j]);
    if (!ok) return luaL_error(L, "time: %s", err);
    lua_pushnumber(L, best);
    return 1;
}

/* ---- Kernel ---- */

static int k_tostring(lua_State *L) {
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
static int parse_opts(lua_State *L, int idx, KernelOpt *out) {
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

/* Runs the check of kernel at point n; pushes the report table {ok=,
 * mismatches=, text=} or, when the point cannot be run, returns false with
 * the reason in err. */
static bool check_point(lua_State *L, LProgram *p, int ki, int n, double atol, double rtol, char *err, size_t errlen) {
    ValidateReport rep;
    StrBuf sb;
    sb_init(&sb);
    bool ok = program_check_kernel(p->s, p->kps, ki, n, luop_buffer_lookup, L, atol, rtol, &rep, &sb, err, errlen);
    if (ok) {
        lua_createtable(L, 0, 4);
        lua_pushboolean(L, rep.ok);
        lua_setfield(L, -2, "ok");
        lua_pushinteger(L, (lua_Integer)rep.mismatches);
        lua_setfield(L, -2, "mismatches");
        lua_pushinteger(L, n);
        lua_setfield(L, -2, "stage");
        lua_pushstring(L, sb_str(&sb));
        lua_setfield(L, -2, "text");
    }
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
 * none), and the per-stage reports */
static int k_bisect(lua_State *L) {
    LProgram *p;
    KernelPipeline *kp = check_kernel(L, 1, &p);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    bool quiet = opt_bool(L, 2, "quiet");
    int ki = kernel_index(L, 1);
    lua_createtable(L, STAGE_COUNT + 1, 0);
    int reports = lua_gettop(L);
    int first_bad = -1;
    StrBuf sb;
    sb_init(&sb);
    for (int n = 0; n <= STAGE_COUNT; n++) {
        char err[1024];
        const Stage *st = stage_get(n);
        sb_printf(&sb, "  %2d  %-20s ", n, st ? st->name : "as scheduled");
        if (!check_point(L, p, ki, n, 1e-5, 1e-4, err, sizeof err)) {
            /* a stage the interpreter cannot run, or a stage that fails */
            const char *why = strstr(err, "interp: ");
            sb_printf(&sb, "not checked: %s\n", why ? why + 8 : err);
            if (!pipeline_result(kp, n) && n > 0) break; /* the stage itself failed: later ones cannot run */
            continue;
        }
        lua_getfield(L, -1, "ok");
        bool ok = lua_toboolean(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, -1, "mismatches");
        sb_printf(&sb, "%s\n", ok ? "matches the reference" : "DIFFERS from the reference");
        lua_pop(L, 1);
        lua_rawseti(L, reports, n + 1);
        if (!ok && first_bad < 0) first_bad = n;
    }
    StrBuf head;
    sb_init(&head);
    sb_printf(&head, "bisect %s: ", pipeline_name(kp));
    if (first_bad >= 0) sb_printf(&head, "first wrong at stage %d (%s)\n", first_bad, stage_get(first_bad) ? stage_get(first_bad)->name : "as scheduled");
    else sb_puts(&head, "no checked stage differs from the reference\n");
    if (!quiet) {
        fputs(sb_str(&head), stdout);
        fputs(sb_str(&sb), stdout);
        fflush(stdout);
    }
    sb_free(&head);
    sb_free(&sb);
    if (first_bad >= 0) lua_pushinteger(L, first_bad);
    else lua_pushnil(L);
    lua_pushvalue(L, reports);
    return 2;
}

static int k_program(lua_State *L) {
    check_kernel(L, 1, NULL);
    lua_getiuservalue(L, 1, 1);
    return 1;
}

/* uop.clock(): a monotonic clock in milliseconds, for timing from Lua */
static int l_clock(lua_State *L) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6);
    return 1;
}

static int l_current(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, CURRENT_KEY);
    return 1;
}

static const luaL_Reg program_methods[] = {
    {"kernels", p_kernels}, {"kernel", p_kernel}, {"steps", p_steps}, {"print", p_print},
    {"text", p_text},       {"run", p_run},       {"time", p_time},     {NULL, NULL}};

static const luaL_Reg kernel_methods[] = {
    {"name", k_name},     {"seek", k_seek},         {"step", k_step},     {"back", k_back},   {"pos", k_pos},
    {"root", k_root},     {"listing", k_listing},   {"print", k_print},   {"diff", k_diff},   {"diff_text", k_diff_text},
    {"stages", k_stages}, {"rules", k_rules},       {"dot", k_dot},       {"opts", k_opts},   {"llvm", k_llvm},
    {"asm", k_asm},       {"program", k_program}, {"compile_ms", k_compile_ms}, {"check", k_check}, {"rewrites", k_rewrites},
    {"bisect", k_bisect},   {NULL, NULL}};

void luop_open_compile(lua_State *L) {
    luaL_newmetatable(L, PROGRAM_MT);
    lua_pushcfunction(L, p_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, p_tostring);
    lua_setfield(L, -2, "__tostring");
    luaL_newlib(L, program_methods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);

    luaL_newmetatable(L, KERNEL_MT);
    lua_pushcfunction(L, k_tostring);
    lua_setfield(L, -2, "__tostring");
    luaL_newlib(L, kernel_methods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);

    lua_pushcfunction(L, l_compile);
    lua_setfield(L, -2, "compile");
    lua_pushcfunction(L, l_current);
    lua_setfield(L, -2, "current");
    lua_pushcfunction(L, l_clock);
    lua_setfield(L, -2, "clock");
}
