/* lua_rules.c - rewrite rules written in Lua and graph_rewrite from Lua:
 *
 *   rs = uop.rules{ {name="add0", pattern="(ADD x (CONST 0))",
 *                    rewrite=function(m) return m.x end}, ... }
 *   new_root, trace = uop.rewrite(root, rs [, {bottom_up=, max_rewrites=, ...}])
 *   new_root = uop.rewrite(root, rs, {trace = false})
 *
 * A Lua rewrite function gets a table of captures by name (and the matched
 * node as a second argument) and returns a UOp or nil (no rewrite).  A Lua
 * error inside it stops the rewrite with an error naming the rule.  Each
 * rule records where it is written: the line its rewrite/when function is
 * defined on when that function sits inside the uop.rules call, otherwise
 * the line of the call. */
#include "lua_internal.h"
#include "../core/rewrite/registry.h"
#include "../core/stages/stages.h"
#include "../core/rewrite/rewrite.h"
#include "lua_compile.h"
#include "progress_line.h"
#include <stdlib.h>
#include <string.h>

#define TRACE_MT "uopdb.TraceBox"

typedef struct RuleSetBox { RuleSet *rs; } RuleSetBox;

/* what a Lua rule keeps: references (in the registry) to its functions */
typedef struct LuaRule {
    lua_State *main;   /* the main thread: always there to unref on */
    int fn_ref, when_ref;
} LuaRule;

static void lua_rule_free(void *ud) {
    LuaRule *r = ud;
    if (!r) return;
    luaL_unref(r->main, LUA_REGISTRYINDEX, r->fn_ref);
    luaL_unref(r->main, LUA_REGISTRYINDEX, r->when_ref);
    free(r);
}

static RuleSet *check_rules(lua_State *L, int idx) {
    RuleSetBox *b = luaL_checkudata(L, idx, LUOP_RULES_MT);
    if (!b->rs) luaL_error(L, "rule set has been freed");
    return b->rs;
}

/* ---- calling Lua from a rewrite ---- */

/* protected body: (fnref, match) -> the first two results of fn(captures, root) */
static int call_rule_fn(lua_State *L) {
    int ref = (int)lua_tointeger(L, 1);
    const Match *m = lua_touserdata(L, 2);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    int ncap = rule_capture_count(m->rule);
    lua_createtable(L, 0, ncap);
    for (int i = 0; i < ncap && i < PAT_MAX_CAPTURES; i++) {
        const char *name = rule_capture_name(m->rule, i);
        if (!name || !m->cap[i]) continue;
        luop_push(L, m->cap[i]);
        lua_setfield(L, -2, name);
    }
    luop_push(L, m->root);
    lua_call(L, 2, 2);
    return 2;
}

/* Runs the function of ref on the match; leaves its first two results on
 * the stack (a second one, a string, says why it declined: `return nil,
 * "why"`, shown by k:why).  Returns false (after rewrite_fail) when it
 * raised an error. */
static bool run_lua(lua_State *L, int ref, const Match *m, const char *what) {
    lua_pushcfunction(L, call_rule_fn);
    lua_pushinteger(L, ref);
    lua_pushlightuserdata(L, (void *)m);
    /* the rewrite holds nodes Lua does not: no compaction meanwhile */
    LuaMemory *mem = luop_memory(L);
    mem->busy++;
    int status = lua_pcall(L, 2, 2, 0);
    mem->busy--;
    if (status == LUA_OK) {
        if (lua_type(L, -1) == LUA_TSTRING && !lua_toboolean(L, -2)) match_decline(m, "%s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return true;
    }
    const char *msg = lua_tostring(L, -1);
    rewrite_fail(m, "%s: %s", what, msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
    return false;
}

static const UOp *lua_rewrite_fn(const Match *m, void *ud) {
    LuaRule *r = ud;
    lua_State *L = luop_active_state(r->main);
    if (!lua_checkstack(L, 8)) { rewrite_fail(m, "Lua stack overflow"); return NULL; }
    if (!run_lua(L, r->fn_ref, m, "rewrite")) return NULL;
    const UOp *out = NULL;
    if (!lua_isnil(L, -1)) {
        out = luop_test(L, -1);
        if (!out) rewrite_fail(m, "rewrite must return a UOp or nil, got %s", luaL_typename(L, -1));
        else if (out->dtype != m->root->dtype) {
            /* another dtype would leave the parents ill-typed */
            char got[64], want[64];
            rewrite_fail(m, "rewrite returned a %s node for the %s node %%%u (a rule must keep the dtype)",
                         dt_str(out->dtype, got, sizeof got), dt_str(m->root->dtype, want, sizeof want), m->root->id);
            out = NULL;
        }
    }
    lua_pop(L, 1);
    return out;
}

static bool lua_when_fn(const Match *m, void *ud) {
    LuaRule *r = ud;
    lua_State *L = luop_active_state(r->main);
    if (!lua_checkstack(L, 8)) { rewrite_fail(m, "Lua stack overflow"); return false; }
    if (!run_lua(L, r->when_ref, m, "when")) return false;
    bool ok = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return ok;
}

/* ---- building rule sets ---- */

typedef struct Where { char file[256]; int line; } Where;

/* the innermost Lua function calling us: chunk name and current line */
static Where caller_where(lua_State *L) {
    Where w = {"?", 0};
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar)) break;
        if (ar.currentline > 0) {
            snprintf(w.file, sizeof w.file, "%s", ar.short_src);
            w.line = ar.currentline;
            break;
        }
    }
    return w;
}

/* A function defined inside the uop.rules call (same chunk, at or after
 * the call's line) tells the line of the rule it belongs to. */
static void refine_where(lua_State *L, int fn_idx, const Where *call, Where *rule) {
    if (lua_type(L, fn_idx) != LUA_TFUNCTION) return;
    lua_Debug ar;
    lua_pushvalue(L, fn_idx);
    if (!lua_getinfo(L, ">S", &ar)) return;
    if (ar.linedefined >= call->line && strcmp(ar.short_src, call->file) == 0) rule->line = ar.linedefined;
}

static int rs_gc(lua_State *L) {
    RuleSetBox *b = luaL_checkudata(L, 1, LUOP_RULES_MT);
    ruleset_free(b->rs);
    b->rs = NULL;
    return 0;
}

static RuleSetBox *new_ruleset_box(lua_State *L, const char *name) {
    RuleSetBox *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->rs = NULL;
    luaL_setmetatable(L, LUOP_RULES_MT);
    b->rs = ruleset_new(name);
    if (!b->rs) luaL_error(L, "rules: out of memory");
    return b;
}

/* field of the rule table at t, which must be of type want (or nil) */
static int rule_field(lua_State *L, int t, const char *field, int n, int want1, int want2) {
    int ty = lua_getfield(L, t, field);
    if (ty != LUA_TNIL && ty != want1 && ty != want2)
        luaL_error(L, "rules: rule %d: '%s' must be a %s%s%s, got %s", n, field, lua_typename(L, want1),
                   want2 != LUA_TNONE ? " or a " : "", want2 != LUA_TNONE ? lua_typename(L, want2) : "",
                   luaL_typename(L, -1));
    return ty;
}

/* adds rule n (its table at t) to the set */
static void add_rule(lua_State *L, RuleSet *rs, int t, int n, const Where *call) {
    int base = lua_gettop(L);
    if (rule_field(L, t, "name", n, LUA_TSTRING, LUA_TNONE) == LUA_TNIL) {
        lua_pop(L, 1);
        lua_pushfstring(L, "rule%d", n);
    }
    const char *name = lua_tostring(L, -1);
    if (rule_field(L, t, "pattern", n, LUA_TSTRING, LUA_TNONE) == LUA_TNIL)
        luaL_error(L, "rules: rule %d ('%s') has no pattern", n, luop_quote(L, name));
    const char *pattern = lua_tostring(L, -1);
    int rty = rule_field(L, t, "rewrite", n, LUA_TFUNCTION, LUA_TSTRING);
    if (rty == LUA_TNIL) luaL_error(L, "rules: rule %d ('%s') has no rewrite (a function or a template)", n, luop_quote(L, name));
    int rewrite_idx = lua_gettop(L);
    int wty = rule_field(L, t, "when", n, LUA_TFUNCTION, LUA_TNONE);
    int when_idx = lua_gettop(L);

    Where w = *call;
    refine_where(L, rewrite_idx, call, &w);
    if (w.line == call->line) refine_where(L, when_idx, call, &w);

    RuleSpec spec = {.name = name, .pattern = pattern, .file = w.file, .line = w.line};
    LuaRule *lr = NULL;
    if (rty == LUA_TSTRING) spec.template_text = lua_tostring(L, rewrite_idx);
    if (rty == LUA_TFUNCTION || wty == LUA_TFUNCTION) {
        lr = malloc(sizeof *lr);
        if (!lr) luaL_error(L, "rules: out of memory");
        lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
        lr->main = lua_tothread(L, -1);
        lua_pop(L, 1);
        lr->fn_ref = lr->when_ref = LUA_NOREF;
        /* luaL_ref can only fail on memory; the refs are made last */
        if (rty == LUA_TFUNCTION) {
            lua_pushvalue(L, rewrite_idx);
            lr->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
            spec.fn = lua_rewrite_fn;
        }
        if (wty == LUA_TFUNCTION) {
            lua_pushvalue(L, when_idx);
            lr->when_ref = luaL_ref(L, LUA_REGISTRYINDEX);
            spec.when = lua_when_fn;
        }
        spec.ud = lr;
        spec.ud_free = lua_rule_free;
    }
    char err[640];
    Rule *r = rule_new(&spec, err, sizeof err);
    if (!r) {
        lua_rule_free(lr);
        luaL_error(L, "rules: %s (rule %d, %s:%d)", err, n, w.file, w.line);
    }
    bool ok = ruleset_add(rs, r);
    rule_unref(r);
    if (!ok) luaL_error(L, "rules: cannot add rule '%s'", luop_quote(L, name));
    lua_settop(L, base);
}

/* uop.rules{ {name=, pattern=, rewrite=, when=}, ..., name="set name" } */
static int r_rules(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    const char *set_name = luaL_optstring(L, 2, "rules");
    lua_settop(L, 2);
    Where call = caller_where(L);
    if (lua_getfield(L, 1, "name") == LUA_TSTRING) set_name = lua_tostring(L, -1);
    RuleSetBox *b = new_ruleset_box(L, set_name);
    int n = (int)luaL_len(L, 1);
    for (int i = 1; i <= n; i++) {
        if (lua_rawgeti(L, 1, i) != LUA_TTABLE) luaL_error(L, "rules: rule %d must be a table, got %s", i, luaL_typename(L, -1));
        add_rule(L, b->rs, lua_gettop(L), i, &call);
        lua_pop(L, 1);
    }
    return 1;
}

RuleSet *luop_to_rules(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TTABLE && !luaL_testudata(L, idx, LUOP_RULES_MT)) {
        lua_pushcfunction(L, r_rules);
        lua_pushvalue(L, idx);
        lua_call(L, 1, 1);
        lua_replace(L, idx);
    }
    return check_rules(L, idx);
}

/* Pushes the registered rule set `name` ("sym", "pm_add_loads", or "a + b"
 * as tinygrad composes them) as a rule set of its own that shares the
 * built-in rules; an unknown name is an error at the Lua caller's line (so
 * a C function calls this directly, not through lua_call). */
static void push_ruleset(lua_State *L, const char *name) {
    char err[300];
    stages_register_rulesets();
    const RuleSet *shared = ruleset_get(name, err, sizeof err);
    if (!shared) luaL_error(L, "%s", err);
    RuleSetBox *b = new_ruleset_box(L, name);
    RuleSet *copy = ruleset_concat(name, shared, b->rs);
    if (!copy) luaL_error(L, "rules: out of memory");
    ruleset_free(b->rs);
    b->rs = copy;
}

/* uop.ruleset(name) -> push_ruleset's rule set */
static int r_ruleset(lua_State *L) {
    push_ruleset(L, luaL_checkstring(L, 1));
    return 1;
}

/* uop.rulesets() -> every registered rule set's name, in registration order */
static int r_rulesets(lua_State *L) {
    stages_register_rulesets();
    int n = ruleset_def_count();
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushstring(L, ruleset_def(i)->name);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int rs_names(lua_State *L) {
    RuleSet *rs = check_rules(L, 1);
    int n = ruleset_count(rs);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushstring(L, rule_name(ruleset_rule(rs, i)));
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static void push_stats(lua_State *L, const RuleStats *s, const char *file, int line) {
    lua_createtable(L, 0, 5);
    lua_pushinteger(L, (lua_Integer)s->attempts);
    lua_setfield(L, -2, "attempts");
    lua_pushinteger(L, (lua_Integer)s->matches);
    lua_setfield(L, -2, "matches");
    lua_pushinteger(L, (lua_Integer)s->rewrites);
    lua_setfield(L, -2, "rewrites");
    lua_pushnumber(L, (double)s->ns / 1e6);
    lua_setfield(L, -2, "ms");
    if (file) {
        lua_pushfstring(L, "%s:%d", file, line);
        lua_setfield(L, -2, "where");
    }
}

/* rs:stats() -> { [name] = {attempts=, matches=, rewrites=, ms=, where=} } (totals) */
static int rs_stats(lua_State *L) {
    RuleSet *rs = check_rules(L, 1);
    int n = ruleset_count(rs);
    lua_createtable(L, 0, n);
    for (int i = 0; i < n; i++) {
        Rule *r = ruleset_rule(rs, i);
        push_stats(L, rule_stats(r), rule_file(r), rule_line(r));
        lua_setfield(L, -2, rule_name(r));
    }
    return 1;
}

static int rs_len(lua_State *L) {
    lua_pushinteger(L, ruleset_count(check_rules(L, 1)));
    return 1;
}

static int rs_tostring(lua_State *L) {
    RuleSet *rs = check_rules(L, 1);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    int n = ruleset_count(rs);
    lua_pushfstring(L, "RuleSet %s (%d rule%s", ruleset_name(rs), n, n == 1 ? "" : "s");
    luaL_addvalue(&b);
    for (int i = 0; i < n; i++) {
        luaL_addstring(&b, i ? ", " : ": ");
        luaL_addstring(&b, rule_name(ruleset_rule(rs, i)));
    }
    luaL_addchar(&b, ')');
    luaL_pushresult(&b);
    return 1;
}

/* ---- uop.rewrite ---- */

typedef struct TraceBox { Trace t; bool live; } TraceBox;

static int trace_gc(lua_State *L) {
    TraceBox *b = luaL_checkudata(L, 1, TRACE_MT);
    if (b->live) trace_free(&b->t);
    b->live = false;
    return 0;
}

void luop_push_rewrite(lua_State *L, const TraceRewrite *w) {
    lua_createtable(L, 0, 6);
    lua_pushstring(L, w->rule);
    lua_setfield(L, -2, "rule");
    lua_pushfstring(L, "%s:%d", w->file ? w->file : "?", w->line);
    lua_setfield(L, -2, "where");
    luop_push(L, w->before);
    lua_setfield(L, -2, "before");
    luop_push(L, w->after);
    lua_setfield(L, -2, "after");
}

static void push_trace(lua_State *L, const Trace *t, RuleSet *rs, const RuleStats *before) {
    lua_createtable(L, 0, 3);
    lua_createtable(L, (int)(t->nrewrites < 1u << 20 ? t->nrewrites : 0), 0);
    for (size_t i = 0; i < t->nrewrites; i++) {
        const TraceRewrite *r = &t->rewrites[i];
        luop_push_rewrite(L, r);
        lua_pushnumber(L, (double)r->ns / 1e6);
        lua_setfield(L, -2, "ms");
        lua_pushinteger(L, (lua_Integer)r->pass + 1);
        lua_setfield(L, -2, "pass");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "rewrites");
    lua_createtable(L, (int)t->npasses, 0);
    for (size_t i = 0; i < t->npasses; i++) {
        const TracePass *p = &t->passes[i];
        lua_createtable(L, 0, 5);
        lua_pushstring(L, p->name);
        lua_setfield(L, -2, "name");
        luop_push(L, p->root_before);
        lua_setfield(L, -2, "before");
        luop_push(L, p->root_after);
        lua_setfield(L, -2, "after");
        lua_pushinteger(L, (lua_Integer)p->nrewrites);
        lua_setfield(L, -2, "rewrites");
        lua_pushnumber(L, (double)p->ns / 1e6);
        lua_setfield(L, -2, "ms");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "passes");
    /* per-rule counts of this call only (rule statistics are cumulative) */
    int n = ruleset_count(rs);
    lua_createtable(L, 0, n);
    for (int i = 0; i < n; i++) {
        Rule *r = ruleset_rule(rs, i);
        const RuleStats *now = rule_stats(r);
        RuleStats d = {now->attempts - before[i].attempts, now->matches - before[i].matches,
                       now->rewrites - before[i].rewrites, now->ns - before[i].ns};
        if (lua_getfield(L, -1, rule_name(r)) == LUA_TTABLE) {
            /* two rules with one name: add up */
            const char *keys[] = {"attempts", "matches", "rewrites"};
            uint64_t add[] = {d.attempts, d.matches, d.rewrites};
            for (int k = 0; k < 3; k++) {
                lua_getfield(L, -1, keys[k]);
                lua_Integer v = lua_tointeger(L, -1) + (lua_Integer)add[k];
                lua_pop(L, 1);
                lua_pushinteger(L, v);
                lua_setfield(L, -2, keys[k]);
            }
            lua_pop(L, 1);
            continue;
        }
        lua_pop(L, 1);
        push_stats(L, &d, NULL, 0);
        lua_setfield(L, -2, rule_name(r));
    }
    lua_setfield(L, -2, "rules");
}

static size_t opt_size(lua_State *L, int t, const char *field) {
    if (lua_type(L, t) != LUA_TTABLE) return 0;
    lua_getfield(L, t, field);
    lua_Integer v = 0;
    if (!lua_isnil(L, -1)) {
        int ok;
        v = lua_tointegerx(L, -1, &ok);
        if (!ok || v < 0) luaL_error(L, "rewrite: option '%s' must be a non-negative integer", field);
    }
    lua_pop(L, 1);
    return (size_t)v;
}

/* the progress line of a rewrite */
static void on_rewrite_progress(const RewriteProgress *p, void *ud) {
    ProgressLine *pl = ud;
    if (!progress_line_due(pl)) return;
    progress_line_print(pl, "%s: %zu nodes visited, %zu rewrites, %zu nodes made, %.1f s", p->pass, p->visits,
                        p->rewrites, p->nodes_made, p->elapsed_s);
}

/* uop.rewrite(root, rules [, opts]) -> new_root, trace
 * rules: a rule set, a table of rule tables (as for uop.rules), or the name
 * of a built-in set ("sym", "symbolic", "symbolic_simple", ...)
 * opts: bottom_up, max_rewrites, stop_after, name;
 *   trace = false: no trace and no rule times (new_root alone is returned),
 *     for large graphs, where the trace costs more than the rewrite;
 *   progress: nil shows a progress line on a terminal once the rewrite has
 *     run a second, true shows one from the start (a line a second when
 *     stderr is not a terminal), false none */
static int r_rewrite(lua_State *L) {
    const UOp *root = luop_check(L, 1);
    if (lua_type(L, 2) == LUA_TSTRING) {
        push_ruleset(L, lua_tostring(L, 2));
        lua_replace(L, 2);
    } else if (lua_type(L, 2) == LUA_TTABLE && !luaL_testudata(L, 2, LUOP_RULES_MT)) {
        lua_pushcfunction(L, r_rules);
        lua_pushvalue(L, 2);
        lua_call(L, 1, 1);
        lua_replace(L, 2);
    }
    RuleSet *rs = check_rules(L, 2);
    if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    RewriteOpts o = {.user = L};
    bool want_trace = true;
    int progress = -1;
    if (lua_type(L, 3) == LUA_TTABLE) {
        check_option_keys(L, 3, "uop.rewrite",
                          (const char *[]){"bottom_up", "max_rewrites", "stop_after", "name", "trace", "progress", NULL});
        lua_getfield(L, 3, "bottom_up");
        o.bottom_up = lua_toboolean(L, -1);
        lua_pop(L, 1);
        o.max_rewrites = opt_size(L, 3, "max_rewrites");
        o.stop_after = opt_size(L, 3, "stop_after");
        lua_getfield(L, 3, "trace");
        want_trace = check_flag(L, -1, "uop.rewrite", "trace", 1);
        lua_pop(L, 1);
        lua_getfield(L, 3, "progress");
        progress = check_flag(L, -1, "uop.rewrite", "progress", -1);
        lua_pop(L, 1);
        lua_getfield(L, 3, "name");
        if (lua_isstring(L, -1)) o.name = lua_tostring(L, -1); /* stays on the stack */
    }
    int n = ruleset_count(rs);
    RuleStats *before = NULL;
    TraceBox *tb = NULL;
    if (want_trace) {
        before = lua_newuserdatauv(L, sizeof *before * (size_t)(n ? n : 1), 0);
        for (int i = 0; i < n; i++) before[i] = *rule_stats(ruleset_rule(rs, i));
        tb = lua_newuserdatauv(L, sizeof *tb, 0);
        tb->live = false;
        luaL_setmetatable(L, TRACE_MT);
        trace_init(&tb->t);
        tb->live = true;
        o.trace = &tb->t;
    }
    o.timing = want_trace; /* rule times are part of what the trace reports */
    ProgressLine line;
    progress_line_start(&line, progress, 1.0);
    if (line.on) {
        o.progress = on_rewrite_progress;
        o.progress_ud = &line;
    }

    UCtx *c = luop_ctx(L);
    uctx_clear_error(c);
    lua_State *prev = luop_set_active_state(L);
    const UOp *res = graph_rewrite(c, root, rs, &o);
    luop_set_active_state(prev);
    progress_line_end(&line);
    if (!res) return luop_ctx_error(L);
    luop_push(L, res);
    if (!want_trace) return 1;
    push_trace(L, &tb->t, rs, before);
    return 2;
}

static const luaL_Reg rs_methods[] = {{"names", rs_names}, {"stats", rs_stats}, {NULL, NULL}};

void luop_open_rules(lua_State *L) {
    luaL_newmetatable(L, LUOP_RULES_MT);
    lua_pushcfunction(L, rs_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, rs_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, rs_len);
    lua_setfield(L, -2, "__len");
    luaL_newlib(L, rs_methods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);

    luaL_newmetatable(L, TRACE_MT);
    lua_pushcfunction(L, trace_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);

    lua_pushcfunction(L, r_rules);
    lua_setfield(L, -2, "rules");
    lua_pushcfunction(L, r_rewrite);
    lua_setfield(L, -2, "rewrite");
    lua_pushcfunction(L, r_ruleset);
    lua_setfield(L, -2, "ruleset");
    lua_pushcfunction(L, r_rulesets);
    lua_setfield(L, -2, "rulesets");
}
