/* lua_report.c - p:report(file) and p:export(file): a Program's session
 * written out as one self-contained HTML page (viz/report.h: stages,
 * listings, diffs, rules, graphs, LLVM IR, assembly, the validation of a
 * run) or as the JSON trace of docs/trace.schema.json.  Both run every
 * kernel's stages first; the report also compiles and runs the program
 * (p:run{validate=true}) on outputs of its own, so no tensor changes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua_compile.h"
#include "../core/backend/backend.h"
#include "../core/debug/pipeline.h"
#include "../core/debug/run_validation.h"
#include "tensor_data.h"
#include "../viz/report.h"

/* what the report owns while it is made: freed by report_free */
typedef struct ReportData {
    ReportProgram p;
    ReportKernel *kernels;
    char **owned;        /* strings to free */
    size_t nowned, cap_owned;
    StrBuf validation;
    char run_error[1024];
    char host[160];
} ReportData;

static const char *own(ReportData *d, char *s) {
    if (!s) return NULL;
    if (d->nowned == d->cap_owned) {
        size_t cap = d->cap_owned ? 2 * d->cap_owned : 16;
        char **grown = realloc(d->owned, cap * sizeof *grown);
        if (!grown) {
            free(s);
            return NULL;
        }
        d->owned = grown, d->cap_owned = cap;
    }
    return d->owned[d->nowned++] = s;
}

static void report_free(ReportData *d) {
    for (size_t i = 0; i < d->nowned; i++) free(d->owned[i]);
    free(d->owned);
    free(d->kernels);
    sb_free(&d->validation);
}

static char *dup_text(StrBuf *sb) {
    if (sb->len == 0) {
        sb_free(sb);
        return NULL;
    }
    return sb_take(sb);
}

/* Kernel i's stages (all run, as far as they go) and, when compile is
 * set, its LLVM IR and assembly. */
static void fill_kernel(ReportData *d, LProgram *lp, int i, bool compile) {
    KernelPipeline *kp = lp->kps[i];
    ReportKernel *k = &d->kernels[i];
    char err[1024];
    k->name = pipeline_name(kp);
    k->ast = pipeline_root(kp, 0, NULL, 0);
    k->native_transcendentals = pipeline_options(kp).native_transcendentals;
    if (!pipeline_root(kp, STAGE_COUNT, err, sizeof err)) k->error = own(d, strdup(err));
    for (int n = 1; n <= STAGE_COUNT; n++) {
        const StageResult *r = pipeline_result(kp, n);
        if (!r || !r->done) continue;
        k->stages[n] = (ReportStage){.ran = true, .root = r->root, .nodes_before = r->nodes_before,
                                     .nodes_after = r->nodes_after, .rewrites = r->rewrites, .ms = r->ms,
                                     .changed = r->changed, .trace = &r->trace};
    }
    StrBuf sb;
    sb_init(&sb);
    const KernelOpt *opts;
    int nopts = pipeline_opts(kp, &opts);
    for (int j = 0; j < nopts; j++)
        sb_printf(&sb, "%s%s axis %d by %d", j ? ", " : "", opt_op_name(opts[j].op), opts[j].axis, opts[j].amount);
    k->opts = own(d, dup_text(&sb));
    sb_init(&sb);
    for (int j = 0; j < pipeline_inserted_count(kp); j++) {
        const InsertedRules *ir = pipeline_inserted(kp, j);
        sb_printf(&sb, "%s%s into stage %d (%s its rules)", j ? ", " : "", ruleset_name(ir->rules), ir->stage,
                  ir->before ? "before" : "after");
    }
    k->inserted = own(d, dup_text(&sb));
    if (!compile) return;
    if (k->error) {
        k->compile_error = "the pipeline stopped before its last stage";
        return;
    }
    Kernel *kern = pipeline_kernel(kp, err, sizeof err);
    if (!kern) {
        k->compile_error = own(d, strdup(err));
        return;
    }
    k->ir_before = kernel_ir(kern, false);
    k->ir_after = kernel_ir(kern, true);
    k->assembly = kernel_asm(kern);
    k->compile_ms = kernel_compile_ms(kern);
}

/* p:run{validate=true} on outputs of the report's own */
static void run_and_validate(lua_State *L, ReportData *d, LProgram *lp) {
    const Schedule *s = lp->s;
    ReportProgram *p = &d->p;
    p->ran = true;
    void **outs = calloc((size_t)s->noutputs + 1, sizeof *outs);
    bool ok = outs != NULL;
    snprintf(d->run_error, sizeof d->run_error, "out of memory");
    for (int j = 0; ok && j < s->noutputs; j++) {
        const SchedBuffer *b = &s->bufs[s->outputs[j]];
        ok = (outs[j] = buffer_alloc(b->dtype, b->size)) != NULL;
        if (!ok) snprintf(d->run_error, sizeof d->run_error, "cannot allocate %s", b->name);
    }
    ProgramRunOpts ro = {.checked = false};
    if (ok) ok = program_run_opts(s, lp->kps, luop_buffer_lookup, L, outs, &ro, d->run_error, sizeof d->run_error);
    p->run_ok = ok;
    p->valid = ok;
    RunValidation v;
    char err[1024];
    if (ok && !program_validate_run(s, lp->kps, outs, luop_buffer_lookup, L, 1e-5, 1e-4, &v, &d->validation, err,
                                    sizeof err)) {
        sb_printf(&d->validation, "%s", err);
        p->valid = false;
    } else if (ok) {
        p->valid = v.ok;
        p->mismatches = v.mismatches;
    }
    for (int j = 0; outs && j < s->noutputs; j++) buffer_free(outs[j]);
    free(outs);
    p->validation = sb_str(&d->validation);
    p->run_error = ok ? NULL : d->run_error;
}

/* the module's version, from package.loaded.uopdb */
static const char *module_version(lua_State *L, char *buf, size_t len) {
    int top = lua_gettop(L);
    buf[0] = 0;
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    if (lua_getfield(L, -1, "uopdb") == LUA_TTABLE && lua_getfield(L, -1, "version") == LUA_TSTRING)
        snprintf(buf, len, "%s", lua_tostring(L, -1));
    lua_settop(L, top);
    return buf[0] ? buf : NULL;
}

/* the name is quoted on one line in err (luop_quote pushes it) */
static bool write_file(lua_State *L, const char *path, const StrBuf *sb, char *err, size_t errlen) {
    FILE *f = fopen(path, "wb");
    if (!f) {
        int e = errno;
        snprintf(err, errlen, "cannot write %s: %s", luop_quote(L, path), strerror(e));
        return false;
    }
    size_t w = fwrite(sb_str(sb), 1, sb->len, f);
    int e = errno;
    if (fclose(f) != 0 || w != sb->len) {
        int e2 = errno;
        snprintf(err, errlen, "cannot write %s: %s", luop_quote(L, path), strerror(w != sb->len ? e : e2));
        return false;
    }
    return true;
}

/* builds the page or the trace into out; false + err */
static bool make(lua_State *L, LProgram *lp, bool html, const ReportOpts *ro, bool run, StrBuf *out, char *err,
                 size_t errlen) {
    ReportData d;
    memset(&d, 0, sizeof d);
    sb_init(&d.validation);
    d.kernels = calloc((size_t)lp->nk + 1, sizeof *d.kernels);
    if (!d.kernels) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    for (int i = 0; i < lp->nk; i++) fill_kernel(&d, lp, i, html);
    char version[32];
    d.p.s = lp->s;
    d.p.kernels = d.kernels;
    d.p.version = module_version(L, version, sizeof version);
    snprintf(d.host, sizeof d.host, "%s (%s)", backend_host_triple(), backend_host_cpu());
    d.p.host = d.host;
    if (html && run) run_and_validate(L, &d, lp);
    bool ok = true;
    if (html) ok = report_html(out, &d.p, ro, err, errlen);
    else report_json(out, &d.p);
    if (out->oom) {
        snprintf(err, errlen, "out of memory");
        ok = false;
    }
    report_free(&d);
    return ok;
}

/* raises "report: unknown option 'x' (known: ...)" for a key of the table at t not known */
static void check_keys(lua_State *L, int t) {
    static const char *const known[] = {"graphs", "max_nodes", "radius", "run"};
    if (!lua_istable(L, t)) return;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        bool ok = false;
        for (size_t i = 0; i < sizeof known / sizeof *known && lua_type(L, -1) == LUA_TSTRING; i++)
            ok = ok || !strcmp(lua_tostring(L, -1), known[i]);
        if (!ok)
            luaL_error(L, "report: unknown option '%s' (known: graphs, max_nodes, radius, run)", luop_describe(L, -1));
    }
}

/* p:report(file [, {graphs=true, max_nodes=300, radius=3, run=true}]) -> file */
static int p_report(lua_State *L) {
    LProgram *lp = program_alive(L, 1);
    const char *path = luaL_checkstring(L, 2);
    if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    check_keys(L, 3);
    ReportOpts ro = {0};
    double max_nodes = opt_number(L, 3, "max_nodes", 300), radius = opt_number(L, 3, "radius", 3);
    if (max_nodes < 1 || max_nodes > 1e6) return luaL_error(L, "report: max_nodes must be 1 to 1000000");
    if (radius < 1 || radius > 100) return luaL_error(L, "report: radius must be 1 to 100");
    ro.max_graph_nodes = (size_t)max_nodes;
    ro.graph_radius = (int)radius;
    bool graphs = true, run = true;
    if (lua_istable(L, 3)) {
        lua_getfield(L, 3, "graphs");
        graphs = lua_isnil(L, -1) || lua_toboolean(L, -1);
        lua_getfield(L, 3, "run");
        run = lua_isnil(L, -1) || lua_toboolean(L, -1);
        lua_pop(L, 2);
    }
    ro.no_graphs = !graphs;
    StrBuf sb;
    sb_init(&sb);
    char err[1200];
    bool ok = make(L, lp, true, &ro, run, &sb, err, sizeof err) && write_file(L, path, &sb, err, sizeof err);
    sb_free(&sb);
    if (!ok) return luaL_error(L, "report: %s", err);
    lua_pushstring(L, path);
    return 1;
}

/* p:export(file) -> file: the JSON trace */
static int p_export(lua_State *L) {
    LProgram *lp = program_alive(L, 1);
    const char *path = luaL_checkstring(L, 2);
    StrBuf sb;
    sb_init(&sb);
    char err[1200];
    bool ok = make(L, lp, false, NULL, false, &sb, err, sizeof err) && write_file(L, path, &sb, err, sizeof err);
    sb_free(&sb);
    if (!ok) return luaL_error(L, "export: %s", err);
    lua_pushstring(L, path);
    return 1;
}

/* adds report and export to the Program methods (luop_open_compile made them) */
void luop_open_report(lua_State *L) {
    luaL_getmetatable(L, PROGRAM_MT);
    if (lua_getfield(L, -1, "__index") != LUA_TTABLE) luaL_error(L, "uopdb: the Program methods are not open yet");
    lua_pushcfunction(L, p_report);
    lua_setfield(L, -2, "report");
    lua_pushcfunction(L, p_export);
    lua_setfield(L, -2, "export");
    lua_pop(L, 2);
}
