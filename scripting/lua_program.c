/* lua_program.c - programs in Lua: uop.compile(t) schedules a tensor graph
 * into kernels and prepares each kernel's pipeline without running it; a
 * Program lists kernels and scheduler steps and runs through the JIT
 * (optionally validated against the reference).  The last kernel touched is
 * "current" for the REPL's colon commands (uop.current()); the Kernel
 * methods are in lua_kernel.c. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lua_compile.h"
#include "../viz/render.h"
#include "tensor_data.h"
#include "../core/debug/bisect.h"
#include "../core/debug/run_validation.h"
#include "../core/sched/schedule.h"
#include "../core/debug/pipeline.h"
#include "../core/backend/parallel.h"
#include "../viz/diff.h"
#include "../viz/dot.h"
#include "../viz/listing.h"
#include "../viz/render.h"



static LProgram *check_program(lua_State *L, int idx) { return luaL_checkudata(L, idx, PROGRAM_MT); }

LProgram *program_alive(lua_State *L, int idx) {
    LProgram *p = check_program(L, idx);
    if (!p->s) luaL_error(L, "this program was freed");
    return p;
}

/* The kernel at idx and its program (pushes nothing). */
KernelPipeline *check_kernel(lua_State *L, int idx, LProgram **prog_out) {
    LKernel *k = luaL_checkudata(L, idx, KERNEL_MT);
    lua_getiuservalue(L, idx, 1);
    LProgram *p = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (!p || !p->s || k->index < 0 || k->index >= p->nk) luaL_error(L, "this kernel's program was freed");
    if (prog_out) *prog_out = p;
    return p->kps[k->index];
}

void set_current(lua_State *L, int kernel_idx) {
    lua_pushvalue(L, kernel_idx);
    lua_setfield(L, LUA_REGISTRYINDEX, CURRENT_KEY);
}

/* Pushes kernel i of the program at prog_idx as a Kernel userdata. */
void push_kernel(lua_State *L, int prog_idx, int i) {
    prog_idx = lua_absindex(L, prog_idx);
    LKernel *k = lua_newuserdatauv(L, sizeof *k, 1);
    k->index = i;
    lua_pushvalue(L, prog_idx);
    lua_setiuservalue(L, -2, 1);
    luaL_setmetatable(L, KERNEL_MT);
}


/* ---- live programs, for a compaction ---- */

#define PROGRAMS_KEY "uopdb.programs"

/* the program at idx joins the weak table of programs */
static void track_program(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    if (lua_getfield(L, LUA_REGISTRYINDEX, PROGRAMS_KEY) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_createtable(L, 0, 1);
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, PROGRAMS_KEY);
    }
    lua_pushvalue(L, idx);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

void luop_mark_programs(lua_State *L, UCtxMarks *m) {
    if (lua_getfield(L, LUA_REGISTRYINDEX, PROGRAMS_KEY) != LUA_TTABLE) {
        lua_pop(L, 1);
        return;
    }
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        LProgram *p = lua_touserdata(L, -1);
        /* a program finalized in this collection is still a key until the next */
        if (!p || !p->s) continue;
        uctx_mark(m, p->sink);
        schedule_mark(p->s, m);
        for (int i = 0; i < p->nk; i++)
            if (p->kps[i]) pipeline_mark(p->kps[i], m);
    }
    lua_pop(L, 1);
}

/* Lua's collector sees a program as a small userdata; the C memory behind
 * it (schedule, pipelines, and once run its kernels' JIT code, a few hundred
 * kB each) is told to it as that much allocation, so dropped programs are
 * collected as often as their size calls for. */
#define PROGRAM_KB_PER_KERNEL 32
#define JIT_KB_PER_KERNEL 256

static void gc_debt(lua_State *L, int kb) {
    if (kb > 0) lua_gc(L, LUA_GCSTEP, kb);
}

/* ---- uop.compile ---- */

/* a kernel AST's name: tinygrad's KernelInfo name when the SINK has one */
static const char *kernel_ast_name(const UOp *sink) {
    const Arg *a = sink->arg;
    if (a && a->kind == ARG_STR) return a->v.s;
    if (a && a->kind == ARG_TUPLE && a->n > 0 && a->items[0]->kind == ARG_STR) return a->items[0]->v.s;
    return "kernel";
}

/* a small value of dt, exactly representable, from a seeded generator */
static void random_element(lua_State *L, const DType *dt, void *data, int64_t k, uint64_t *state) {
    *state ^= *state << 13, *state ^= *state >> 7, *state ^= *state << 17;
    uint64_t r = *state;
    if (dt_is_float(dt)) lua_pushnumber(L, (double)((int64_t)(r % 33) - 16) / 8.0);
    else if (dt->sk == SK_BOOL) lua_pushboolean(L, (int)(r & 1));
    else if (dt->sk == SK_UINT8 || dt->sk == SK_UINT16 || dt->sk == SK_UINT32 || dt->sk == SK_UINT64)
        lua_pushinteger(L, (lua_Integer)(r % 9));
    else lua_pushinteger(L, (lua_Integer)(r % 17) - 8);
    luop_buffer_write(L, dt, data, k, -1);
    lua_pop(L, 1);
}

/* Host data for the inputs of a program made from a kernel AST: the
 * option buffers = {[n] = {values}} by DEFINE_GLOBAL number, seeded random
 * values (seed = N, default 1) for the others. */
static bool fill_ast_buffers(lua_State *L, Schedule *s, int opts) {
    uint64_t state = 0x9e3779b97f4a7c15ull;
    if (lua_type(L, opts) == LUA_TTABLE && lua_getfield(L, opts, "seed") != LUA_TNIL) {
        if (!lua_isinteger(L, -1)) {
            schedule_free(s);
            luaL_error(L, "uop.compile: seed must be an integer");
        }
        state ^= (uint64_t)lua_tointeger(L, -1) * 0x2545f4914f6cdd1dull;
    }
    if (lua_type(L, opts) == LUA_TTABLE) lua_pop(L, 1);
    int given = 0;
    if (lua_type(L, opts) == LUA_TTABLE && lua_getfield(L, opts, "buffers") != LUA_TNIL) {
        if (!lua_istable(L, -1)) {
            schedule_free(s);
            luaL_error(L, "uop.compile: buffers must be a table {[n] = {values}} by DEFINE_GLOBAL number");
        }
        given = lua_gettop(L);
    } else if (lua_type(L, opts) == LUA_TTABLE) {
        lua_pop(L, 1);
    }
    for (int b = 0; b < s->nbufs; b++) {
        const SchedBuffer *sb = &s->bufs[b];
        if (sb->kind != SBUF_INPUT) continue;
        void *data = luop_buffer_attach(L, sb->source, sb->dtype, sb->size);
        if (given && lua_rawgeti(L, given, b) != LUA_TNIL) {
            if (!lua_istable(L, -1) || (int64_t)lua_rawlen(L, -1) != sb->size) {
                int64_t size = sb->size;
                schedule_free(s);
                luaL_error(L, "uop.compile: buffers[%d] must be a list of %I values (DEFINE_GLOBAL %d's size)", b,
                           (lua_Integer)size, b);
            }
            for (int64_t k = 0; k < sb->size; k++) {
                lua_rawgeti(L, -1, (lua_Integer)k + 1);
                luop_buffer_write(L, sb->dtype, data, k, -1);
                lua_pop(L, 1);
            }
        } else {
            for (int64_t k = 0; k < sb->size; k++) random_element(L, sb->dtype, data, k, &state);
        }
        if (given) lua_pop(L, 1);
    }
    if (given) lua_pop(L, 1);
    return true;
}

/* {rules = {[stage] = rules, ...}}: inserts each set into that stage of every kernel */
static void insert_rules_option(lua_State *L, int opts, LProgram *p) {
    if (lua_getfield(L, opts, "rules") == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    if (!lua_istable(L, -1)) luaL_error(L, "uop.compile: rules must be a table {[stage] = rules}, got %s", luaL_typename(L, -1));
    int t = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 || lua_tointeger(L, -2) > STAGE_COUNT)
            luaL_error(L, "uop.compile: rules: no stage %s (rules go into stages 1 to %d)", luop_describe(L, -2),
                       STAGE_COUNT);
        RuleSet *rs = luop_to_rules(L, -1);
        int n = (int)lua_tointeger(L, -2);
        char err[256];
        for (int i = 0; i < p->nk; i++)
            if (!pipeline_insert(p->kps[i], n, rs, false, err, sizeof err)) luaL_error(L, "uop.compile: rules: %s", err);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

static int l_compile(lua_State *L) {
    luop_safe_point(L);
    UCtx *c = luop_ctx(L);
    const UOp *outs[64];
    int n = 0;
    const UOp *one = luop_test_tensor(L, 1);
    if (one) {
        outs[n++] = one;
    } else if (lua_type(L, 1) == LUA_TTABLE) {
        lua_Integer len = luaL_len(L, 1);
        if (len < 1) return luaL_argerror(L, 1, "an empty list: give a tensor or a list of tensors");
        if (len > 64) return luaL_error(L, "uop.compile: at most 64 outputs, got %d", (int)len);
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
    /* options: {kernel_opts = {[i] = {{"UPCAST", axis, amount}, ...}}, rules = {[stage] = rules}}; for a
     * kernel AST also buffers = {[n] = values} (by DEFINE_GLOBAL number) and seed = N */
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    bool is_ast = n == 1 && uop_op(outs[0]) == OP_SINK;
    if (is_ast)
        check_option_keys(L, 2, "uop.compile",
                          (const char *[]){"kernel_opts", "opts", "rules", "buffers", "seed", "select", "transcendentals", "beam",
                                           "beam_budget", "beam_cache", "beam_progress", "target", NULL});
    else check_option_keys(L, 2, "uop.compile", (const char *[]){"kernel_opts", "opts", "rules", "select", "transcendentals",
                                                                  "beam", "beam_budget", "beam_cache", "beam_progress", "target", NULL});
    /* transcendentals = "native": stages 18-19 keep EXP2/LOG2/SIN/SQRT/MAX as LLVM intrinsics;
     * "decomposed" (the default) decomposes them as tinygrad's CPU LLVM renderer needs */
    PipelineOptions popts = {0};
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_getfield(L, 2, "transcendentals");
        const char *tr = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!lua_isnil(L, -1) && (!tr || (strcmp(tr, "native") && strcmp(tr, "decomposed"))))
            return luaL_error(L, "uop.compile: transcendentals must be \"native\" or \"decomposed\", got %s",
                              luop_describe(L, -1));
        popts.native_transcendentals = tr && !strcmp(tr, "native");
        lua_pop(L, 1);
        /* target = "gpu": a generic GPU (workgroups, local memory, barriers), run in the emulator */
        lua_getfield(L, 2, "target");
        const char *tg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!lua_isnil(L, -1) && (!tg || (strcmp(tg, "cpu") && strcmp(tg, "gpu"))))
            return luaL_error(L, "uop.compile: target must be \"cpu\" or \"gpu\", got %s", luop_describe(L, -1));
        popts.target = tg && !strcmp(tg, "gpu") ? TARGET_GPU : TARGET_CPU;
        lua_pop(L, 1);
    }
    /* select = false: the program's first kernel does not become the current one */
    bool select = true;
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_getfield(L, 2, "select");
        select = lua_isnil(L, -1) || lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    const UOp *sink = is_ast ? outs[0] : uop_sink(c, outs, n);
    if (!sink) return luop_ctx_error(L);
    char err[1024];
    Schedule *s = is_ast ? schedule_from_kernel(c, sink, kernel_ast_name(sink), err, sizeof err)
                         : schedule_build(c, sink, err, sizeof err);
    if (!s) return luaL_error(L, "uop.compile: %s", err);
    if (is_ast && !fill_ast_buffers(L, s, 2)) return 0; /* raised */
    LProgram *p = lua_newuserdatauv(L, sizeof *p, 0);
    memset(p, 0, sizeof *p);
    luaL_setmetatable(L, PROGRAM_MT);
    p->s = s;
    p->sink = sink;
    track_program(L, -1);
    p->kps = calloc((size_t)s->nkernels + 1, sizeof *p->kps);
    if (!p->kps) return luaL_error(L, "out of memory");
    p->nk = s->nkernels;
    for (int i = 0; i < s->nkernels; i++) {
        p->kps[i] = pipeline_new(c, s->kernels[i].name, s->kernels[i].ast);
        if (!p->kps[i]) return luaL_error(L, "out of memory");
        pipeline_set_options(p->kps[i], &popts);
    }
    /* opts = "heuristic" (the default, for a Tensor program and for a kernel AST alike): every
     * kernel gets the opts tinygrad v0.12.0's heuristic chooses for the CPU (with the machine's
     * cores for THREAD), recorded with one line per decision (k:opts()'s second value);
     * "none": no opts.  kernel_opts, given for a kernel, replaces its heuristic opts. */
    bool heuristic = true;
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_getfield(L, 2, "opts");
        const char *mode = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!lua_isnil(L, -1) && (!mode || (strcmp(mode, "heuristic") && strcmp(mode, "none"))))
            return luaL_error(L, "uop.compile: opts must be \"heuristic\" or \"none\", got %s",
                              luop_describe(L, -1));
        if (mode) heuristic = !strcmp(mode, "heuristic");
        lua_pop(L, 1);
    }
    for (int i = 0; heuristic && i < p->nk; i++) {
        char herr[512];
        const UOp *root = pipeline_root(p->kps[i], 6, herr, sizeof herr);
        KernelOpt opts[32];
        StrBuf why = {0};
        int no = root ? heuristic_opts_for(c, root, popts.target, parallel_cores(), opts, 32, &why, herr, sizeof herr) : -1;
        if (no < 0) {
            /* a kernel the heuristic cannot handle compiles without opts; k:opts() says why */
            sb_free(&why);
            why = (StrBuf){0};
            sb_printf(&why, "no opts: the heuristic failed: %s\n", herr);
            no = 0;
        }
        pipeline_set_opts(p->kps[i], opts, no);
        bool ok = pipeline_set_opts_why(p->kps[i], sb_str(&why));
        sb_free(&why);
        if (!ok) return luaL_error(L, "out of memory");
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
                                  luop_describe(L, -2), p->nk);
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
    /* beam = N: every kernel not given kernel_opts gets the opts a beam search finds (lua_beam.c) */
    luop_compile_beam(L, 2, p);
    if (lua_type(L, 2) == LUA_TTABLE) insert_rules_option(L, 2, p);
    if (p->nk > 0 && select) {
        push_kernel(L, -1, 0);
        set_current(L, lua_gettop(L));
        lua_pop(L, 1);
    }
    gc_debt(L, PROGRAM_KB_PER_KERNEL * p->nk);
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

/* p:outputs() -> by output, the node of the compiled graph its buffer
 * holds (Schedule.output_held): the tensor compiled, or the work under its
 * movement ops when the tensor is a view of that work, SHRINKed to index 0
 * on the axes the work does not use when it is stored once along them
 * (for a kernel AST: its DEFINE_GLOBAL) */
static int p_outputs(lua_State *L) {
    LProgram *p = program_alive(L, 1);
    const Schedule *s = p->s;
    lua_createtable(L, s->noutputs, 0);
    for (int j = 0; j < s->noutputs; j++) {
        luop_push(L, s->output_held ? s->output_held[j] : s->bufs[s->outputs[j]].source);
        lua_rawseti(L, -2, j + 1);
    }
    return 1;
}

#define OPT_NAME_LEN 80

/* Each kernel's name once its opts are applied, numbered as a fresh
 * tinygrad process numbers the names it gives again: the first kernel of a
 * name has it, the next ones have n1, n2... appended, in schedule order
 * (NULL for a kernel whose stages up to 7 fail).  The array and the names
 * live in a userdata left on the stack. */
static const char **opt_names_numbered(lua_State *L, LProgram *p) {
    size_t nk = (size_t)(p->nk ? p->nk : 1);
    const char **names = lua_newuserdatauv(L, nk * (sizeof *names + OPT_NAME_LEN), 0);
    char *text = (char *)(names + nk);
    for (int i = 0; i < p->nk; i++) {
        char err[256];
        const char *name = pipeline_opt_name(p->kps[i], err, sizeof err);
        int repeat = 0;
        for (int j = 0; name && j < i; j++) {
            const char *other = pipeline_opt_name(p->kps[j], err, sizeof err);
            repeat += other && !strcmp(other, name);
        }
        char *out = text + (size_t)i * OPT_NAME_LEN;
        if (name && repeat) snprintf(out, OPT_NAME_LEN, "%sn%d", name, repeat);
        else if (name) snprintf(out, OPT_NAME_LEN, "%s", name);
        names[i] = name ? out : NULL;
    }
    return names;
}

/* the kernel called name: as scheduled, else with its opts, numbered as
 * opt_names_numbered numbers them; -1 with a one-line error in err */
static int kernel_named(lua_State *L, LProgram *p, const char *name, char *err, size_t errlen) {
    for (int i = 0; i < p->nk; i++)
        if (!strcmp(pipeline_name(p->kps[i]), name)) return i;
    const char **numbered = opt_names_numbered(L, p);
    for (int i = 0; i < p->nk; i++)
        if (numbered[i] && !strcmp(numbered[i], name)) return i;
    /* base n<repeat> past the last repeat of base: say how many there are */
    size_t len = strlen(name), digits = len;
    while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') digits--;
    int count = 0;
    if (digits < len && digits >= 2 && name[digits - 1] == 'n')
        for (int i = 0; i < p->nk; i++) {
            const char *plain = pipeline_opt_name(p->kps[i], err, errlen);
            count += plain && strlen(plain) == digits - 1 && !strncmp(plain, name, digits - 1);
        }
    const char *shown = luop_quote(L, name); /* one line, however long or odd the name */
    if (count)
        snprintf(err, errlen, "%d kernel%s named %.*s with %s opts, so none is %s", count, count == 1 ? " is" : "s are",
                 (int)(digits - 1), name, count == 1 ? "its" : "their", shown);
    else
        snprintf(err, errlen, "no kernel named '%s' in this program, as scheduled or with its opts (p:text() lists them)",
                 shown);
    lua_pop(L, 1);
    return -1;
}

/* p:names() -> for each kernel {scheduled = its name as scheduled,
 * with_opts = tinygrad's name for it with its opts, numbered as a fresh
 * tinygrad process numbers repeats (nil when a stage up to 7 fails)} */
static int p_names(lua_State *L) {
    LProgram *p = program_alive(L, 1);
    const char **numbered = opt_names_numbered(L, p);
    lua_createtable(L, p->nk, 0);
    for (int i = 0; i < p->nk; i++) {
        lua_createtable(L, 0, 2);
        lua_pushstring(L, pipeline_name(p->kps[i]));
        lua_setfield(L, -2, "scheduled");
        if (numbered[i]) {
            lua_pushstring(L, numbered[i]);
            lua_setfield(L, -2, "with_opts");
        }
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* p:kernel([i]) / p:kernel(name) -> the i-th kernel, or the one with that
 * name as scheduled or with its opts (kernel_named) */
static int p_kernel(lua_State *L) {
    LProgram *p = program_alive(L, 1);
    if (lua_type(L, 2) == LUA_TSTRING) {
        char err[512];
        int i = kernel_named(L, p, lua_tostring(L, 2), err, sizeof err);
        if (i < 0) return luaL_error(L, "%s", err);
        push_kernel(L, 1, i);
        return 1;
    }
    lua_Integer i = luaL_optinteger(L, 2, 1);
    if (i < 1 || i > p->nk)
        return luaL_error(L, "no kernel %I: this program has %d (numbered from 1)", (LUAI_UACINT)i, p->nk);
    push_kernel(L, 1, (int)i - 1);
    return 1;
}

static int text_tostring(lua_State *L) {
    lua_getfield(L, 1, "text");
    if (!lua_isstring(L, -1)) lua_pushliteral(L, "(text)");
    return 1;
}

void set_text(lua_State *L, const char *kind, const char *text) {
    lua_pushstring(L, text);
    lua_setfield(L, -2, "text");
    lua_pushstring(L, kind);
    lua_setfield(L, -2, "kind");
    if (luaL_newmetatable(L, TEXT_MT)) {
        lua_pushcfunction(L, text_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_setmetatable(L, -2);
}

void push_text(lua_State *L, const char *kind, const char *text) {
    lua_createtable(L, 0, 2);
    set_text(L, kind, text);
}

void count_failed_validation(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, FAILED_KEY);
    lua_Integer n = lua_tointeger(L, -1);
    lua_pop(L, 1);
    lua_pushinteger(L, n + 1);
    lua_setfield(L, LUA_REGISTRYINDEX, FAILED_KEY);
}

void print_text(const char *s) {
    fputs(s, stdout);
    size_t n = strlen(s);
    if (n && s[n - 1] != '\n') fputc('\n', stdout);
    fflush(stdout);
}

int error_with_node(lua_State *L, const char *what, const char *msg) {
    const char *at = strstr(msg, "INDEX %");
    char *end = NULL;
    unsigned long id = at ? strtoul(at + 7, &end, 10) : 0;
    const UOp *u = at && end != at + 7 ? uctx_node(luop_ctx(L), (uint32_t)id) : NULL;
    if (!u || uop_op(u) != OP_INDEX) return luaL_error(L, "%s: %s", what, msg);
    StrBuf sb;
    sb_init(&sb);
    uop_render_expr(&sb, u);
    luaL_where(L, 1);
    lua_pushfstring(L, "%s: %s\n    INDEX %%%d is %s", what, msg, (int)u->id, sb_str(&sb));
    lua_concat(L, 2);
    sb_free(&sb);
    return lua_error(L);
}

/* a boolean option at idx; nil gives dflt */
int check_flag(lua_State *L, int idx, const char *what, const char *name, int dflt) {
    if (lua_isnil(L, idx)) return dflt;
    if (!lua_isboolean(L, idx))
        return luaL_error(L, "%s: %s must be true or false, got %s", what, name, luop_describe(L, idx));
    return lua_toboolean(L, idx);
}

void check_option_keys(lua_State *L, int t, const char *what, const char *const *known) {
    if (lua_type(L, t) != LUA_TTABLE) return;
    t = lua_absindex(L, t);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        bool ok = false;
        if (lua_type(L, -1) == LUA_TSTRING)
            for (const char *const *k = known; *k && !ok; k++) ok = !strcmp(lua_tostring(L, -1), *k);
        if (!ok) {
            const char *key = luop_describe(L, -1); /* the key, as text, quoted */
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            for (const char *const *k = known; *k; k++) {
                if (k != known) luaL_addstring(&b, ", ");
                luaL_addstring(&b, *k);
            }
            luaL_pushresult(&b);
            luaL_error(L, "%s: unknown option '%s' (known: %s)", what, key, lua_tostring(L, -1));
        }
    }
}

double opt_number(lua_State *L, int t, const char *k, double dflt) {
    if (lua_type(L, t) != LUA_TTABLE) return dflt;
    lua_getfield(L, t, k);
    if (!lua_isnil(L, -1) && !lua_isnumber(L, -1))
        luaL_error(L, "option %s: a number expected, got %s", k, luaL_typename(L, -1));
    double v = lua_isnil(L, -1) ? dflt : lua_tonumber(L, -1);
    lua_pop(L, 1);
    return v;
}

bool opt_bool(lua_State *L, int t, const char *k) {
    if (lua_type(L, t) != LUA_TTABLE) return false;
    lua_getfield(L, t, k);
    bool v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

/* p:steps() -> the scheduler's steps: name, purpose, before, after, rewrites
 * (a count), ms and trace (each rewrite: rule, where, before, after) */
static int p_steps(lua_State *L) {
    LProgram *p = program_alive(L, 1);
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%-3s %-20s %7s %7s %8s %8s  %s\n", "#", "step", "before", "after", "rewrites", "ms", "purpose");
    lua_createtable(L, p->s->nsteps, 0);
    for (int i = 0; i < p->s->nsteps; i++) {
        const SchedStep *st = &p->s->steps[i];
        size_t nb = st->before ? uop_graph_size(st->before) : 0, na = st->after ? uop_graph_size(st->after) : 0;
        sb_printf(&sb, "%-3d %-20s %7zu %7zu %8zu %8.3f  %s\n", i + 1, st->name, nb, na, st->trace.nrewrites, st->ms,
                  st->purpose ? st->purpose : "");
        lua_createtable(L, 0, 8);
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
        /* trace: each rewrite of the step, as k:rewrites lists a stage's */
        lua_createtable(L, (int)(st->trace.nrewrites < 1u << 20 ? st->trace.nrewrites : 0), 0);
        for (size_t k = 0; k < st->trace.nrewrites; k++) {
            luop_push_rewrite(L, &st->trace.rewrites[k]);
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        lua_setfield(L, -2, "trace");
        lua_rawseti(L, -2, i + 1);
    }
    set_text(L, "steps", sb_str(&sb));
    sb_free(&sb);
    return 1;
}

/* p:text() -> the program: buffers, then each generation's kernel calls,
 * each with tinygrad's name for it once its opts are applied where that
 * differs (a kernel whose stages fail before the opts has none) */
static int p_text(lua_State *L) {
    LProgram *p = program_alive(L, 1);
    const char *const *opt_names = opt_names_numbered(L, p);
    StrBuf sb;
    sb_init(&sb);
    schedule_format(&sb, p->s, opt_names);
    lua_pushstring(L, sb_str(&sb));
    sb_free(&sb);
    return 1;
}

static int p_print(lua_State *L) {
    p_text(L);
    print_text(lua_tostring(L, -1));
    return 0;
}

/* p:run([{validate=true, atol=, rtol=, quiet=, checked=true}]) -> list of
 * output BUFFER UOps [, report]; checked runs the kernels compiled with
 * bounds checks, an access outside its buffer being the run's error; the
 * report has ok, mismatches and, when an output differs, the first kernel
 * wrong on its own as first_wrong_kernel (run_validation.h) */
static int p_run(lua_State *L) {
    luop_safe_point(L);
    LProgram *p = program_alive(L, 1);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    check_option_keys(L, 2, "run", (const char *[]){"validate", "atol", "rtol", "quiet", "checked", NULL});
    bool validate = opt_bool(L, 2, "validate"); /* quiet: accepted, nothing prints anyway */
    ProgramRunOpts ro = {.checked = opt_bool(L, 2, "checked")};
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
    if (!program_run_opts(s, p->kps, luop_buffer_lookup, L, outs, &ro, err, sizeof err))
        return error_with_node(L, "run", err);
    if (!p->ran) {
        p->ran = true;
        gc_debt(L, JIT_KB_PER_KERNEL * p->nk);
    }
    if (!validate) {
        lua_pushvalue(L, list_idx);
        return 1;
    }
    lua_createtable(L, 0, 4);
    int rep_idx = lua_gettop(L);
    StrBuf sb;
    sb_init(&sb);
    RunValidation v;
    if (!program_validate_run(s, p->kps, outs, luop_buffer_lookup, L, atol, rtol, &v, &sb, err, sizeof err)) {
        sb_free(&sb);
        return luaL_error(L, "validate: %s", err);
    }
    lua_pushboolean(L, v.ok);
    lua_setfield(L, rep_idx, "ok");
    lua_pushinteger(L, (lua_Integer)v.mismatches);
    lua_setfield(L, rep_idx, "mismatches");
    if (v.first_wrong >= 0) {
        lua_pushinteger(L, v.first_wrong + 1);
        lua_setfield(L, rep_idx, "first_wrong_kernel");
    }
    lua_pushvalue(L, rep_idx);
    set_text(L, "validate", sb_str(&sb));
    lua_pop(L, 1);
    if (!v.ok) count_failed_validation(L);
    sb_free(&sb);
    (void)outs_idx;
    lua_pushvalue(L, list_idx);
    lua_pushvalue(L, rep_idx);
    return 2;
}

/* p:time([n]) -> best wall-clock ms of n runs (default 3, at most
 * TIME_MAX_RUNS) of the whole program on outputs allocated once, after a first
 * run that compiles; Ctrl-C stops it between kernels (program_run checks) */
#define TIME_MAX_RUNS 100000
static int p_time(lua_State *L) {
    LProgram *p = program_alive(L, 1);
    lua_Integer n = luaL_optinteger(L, 2, 3);
    if (n < 1) return luaL_argerror(L, 2, "at least one run");
    if (n > TIME_MAX_RUNS) return luaL_error(L, "time: n is %I runs, at most %d", n, TIME_MAX_RUNS);
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

/* uop.clock(): a monotonic clock in milliseconds, for timing from Lua */
static int l_clock(lua_State *L) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6);
    return 1;
}

/* uop.stages() -> the 22 rows of the stage table, as the pipeline runs them:
 * {number, name, phase, kind, runs, rules, bottom_up, pass, context, hook,
 * purpose, status, note} */
static int l_stages(lua_State *L) {
    lua_createtable(L, STAGE_COUNT, 0);
    for (int n = 1; n <= STAGE_COUNT; n++) {
        const Stage *st = stage_get(n);
        char runs[256];
        lua_createtable(L, 0, 13);
        lua_pushinteger(L, n);
        lua_setfield(L, -2, "number");
        const char *fields[][2] = {{"name", st->name},
                                   {"phase", st->phase},
                                   {"kind", stage_kind_name(st->kind)},
                                   {"runs", stage_runs(st, runs, sizeof runs)},
                                   {"rules", st->rules},
                                   {"pass", st->pass_name},
                                   {"context", st->ctx ? st->ctx->name : NULL},
                                   {"hook", st->hook_name},
                                   {"purpose", st->purpose},
                                   {"status", stage_status_name(st->status)},
                                   {"note", st->note}};
        for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
            if (fields[i][1]) {
                lua_pushstring(L, fields[i][1]);
                lua_setfield(L, -2, fields[i][0]);
            }
        lua_pushboolean(L, st->bottom_up);
        lua_setfield(L, -2, "bottom_up");
        lua_rawseti(L, -2, n);
    }
    return 1;
}

static int l_current(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, CURRENT_KEY);
    return 1;
}

static const luaL_Reg program_methods[] = {
    {"kernels", p_kernels}, {"kernel", p_kernel}, {"names", p_names}, {"steps", p_steps}, {"print", p_print},
    {"text", p_text},       {"run", p_run},       {"time", p_time},     {"outputs", p_outputs},
    {NULL, NULL}};

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
    lua_pushcfunction(L, luop_kernel_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, luop_kernel_eq);
    lua_setfield(L, -2, "__eq");
    lua_newtable(L);
    luaL_setfuncs(L, luop_kernel_methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);

    lua_pushcfunction(L, l_compile);
    lua_setfield(L, -2, "compile");
    lua_pushcfunction(L, l_current);
    lua_setfield(L, -2, "current");
    lua_pushcfunction(L, l_stages);
    lua_setfield(L, -2, "stages");
    lua_pushcfunction(L, l_clock);
    lua_setfield(L, -2, "clock");
}

