/* lua_beam.c - beam search from Lua: k:beam(N [, {budget=, cache=,
 * progress=}]) searches one kernel's opts (core/debug/beam_search.h), sets
 * them and returns what it found as a text object; uop.compile(t, {beam=N,
 * beam_budget=, beam_cache=, beam_progress=}) does it for every kernel
 * (cache: false turns the disk cache off, a string names its directory).
 * On a terminal a progress line on stderr says how far the search is.
 * Ctrl-C stops a search and keeps the best it found: the search returns
 * normally, with the interrupt consumed. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lua_compile.h"
#include "../core/backend/parallel.h"
#include "../core/debug/beam_search.h"
#include "../core/util/interrupt.h"
#include "progress_line.h"

typedef struct BeamLuaOpts {
    int width;
    double budget_s;   /* 0: none */
    bool cache;
    char cache_dir[1024]; /* "": the default (beam_cache.h) */
    int progress;      /* -1: on a terminal; 0: off; 1: on */
} BeamLuaOpts;

typedef struct BeamProgressState {
    ProgressLine line;
    const char *name;
} BeamProgressState;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void on_progress(const BeamProgress *p, void *ud) {
    BeamProgressState *ps = ud;
    if (!progress_line_due(&ps->line)) return;
    char opts[256] = "", best[64] = "none yet";
    if (isfinite(p->best_ms)) {
        beam_format_opts(p->best, p->nbest, opts, sizeof opts);
        beam_format_ms(p->best_ms, best, sizeof best);
    }
    progress_line_print(&ps->line, "beam %d %s: %d/%d candidates, best %s%s%s%s, %.1f s", p->width, ps->name, p->tried,
                        p->total, best, opts[0] ? " (" : "", opts, opts[0] ? ")" : "", p->elapsed_s);
}

/* Ctrl-C was handled by the search: the request is cleared and the REPL's
 * stop hook removed, so the caller gets the result */
static void interrupt_consumed(lua_State *L) {
    uopdb_interrupt_clear();
    luop_interrupt_handled(L);
}

/* Searches kernel kp and sets its opts; false + err when it cannot be
 * searched. */
static bool beam_kernel(KernelPipeline *kp, const BeamLuaOpts *lo, BeamResult *r, char *err, size_t errlen) {
    BeamProgressState ps = {.name = pipeline_name(kp)};
    progress_line_start(&ps.line, lo->progress, 0);
    BeamOptions o = {.width = lo->width, .budget_s = lo->budget_s, .threads = parallel_cores(), .cache = lo->cache,
                     .cache_dir = lo->cache_dir[0] ? lo->cache_dir : NULL, .progress = ps.line.on ? on_progress : NULL, .ud = &ps};
    bool ok = beam_search(kp, &o, r, err, errlen);
    progress_line_end(&ps.line);
    if (ok && !beam_apply(kp, lo->width, r)) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    return ok;
}

/* the width at idx: an integer 1..BEAM_MAX_WIDTH */
static int check_width(lua_State *L, int idx, const char *what) {
    if (!lua_isinteger(L, idx) || lua_tointeger(L, idx) < 1 || lua_tointeger(L, idx) > BEAM_MAX_WIDTH)
        return luaL_error(L, "%s: the beam width must be an integer from 1 to %d, got %s", what, BEAM_MAX_WIDTH,
                          lua_isnoneornil(L, idx) ? "nothing" : luop_describe(L, idx));
    return (int)lua_tointeger(L, idx);
}

/* a budget in seconds at idx (nil: none) */
static double check_budget(lua_State *L, int idx, const char *what) {
    if (lua_isnil(L, idx)) return 0;
    if (!lua_isnumber(L, idx) || !(lua_tonumber(L, idx) > 0) || !isfinite(lua_tonumber(L, idx)))
        return luaL_error(L, "%s: the budget must be a number of seconds above 0, got %s", what, luop_describe(L, idx));
    return lua_tonumber(L, idx);
}

/* the cache option at idx: nil or true (the default directory), false (no
 * cache) or a directory */
static void check_cache(lua_State *L, int idx, const char *what, const char *name, BeamLuaOpts *lo) {
    if (lua_type(L, idx) == LUA_TSTRING) {
        size_t n;
        const char *dir = lua_tolstring(L, idx, &n);
        if (!n || n >= sizeof lo->cache_dir)
            luaL_error(L, "%s: %s must be true, false or a directory name, got \"%s\"", what, name, luop_quote(L, dir));
        memcpy(lo->cache_dir, dir, n + 1);
        lo->cache = true;
    } else if (lua_isnil(L, idx) || lua_isboolean(L, idx)) {
        lo->cache = lua_isnil(L, idx) || lua_toboolean(L, idx);
    } else {
        luaL_error(L, "%s: %s must be true, false or a directory name, got %s", what, name, luop_describe(L, idx));
    }
}

/* k:beam's text: what was chosen, the times, what was tried, the cache */
static void push_result(lua_State *L, KernelPipeline *kp, int width, const BeamResult *r) {
    char opts[512];
    beam_format_opts(r->opts, r->nopts, opts, sizeof opts);
    StrBuf sb = {0};
    sb_printf(&sb, "beam %d %s: %s\n", width, pipeline_name(kp), opts);
    char best[32], before[32];
    beam_format_ms(r->best_ms, best, sizeof best);
    beam_format_ms(r->before_ms, before, sizeof before);
    if (r->cache_hit) {
        sb_printf(&sb, "  from the cache: %s when found; nothing timed (%.3f s)\n", best, r->elapsed_s);
    } else {
        if (isfinite(r->best_ms)) sb_printf(&sb, "  %s", best);
        else sb_printf(&sb, "  nothing timed");
        if (isfinite(r->before_ms) && isfinite(r->best_ms))
            sb_printf(&sb, ", before %s (%.2fx)", before, r->before_ms / r->best_ms);
        sb_printf(&sb, "; %d of %d candidates timed in %d round%s, %.1f s\n", r->timed, r->candidates, r->rounds,
                  r->rounds == 1 ? "" : "s", r->elapsed_s);
    }
    if (r->interrupted || r->budget_spent) {
        const char *stop = r->interrupted ? "interrupted" : "budget spent";
        if (r->kept_before) sb_printf(&sb, "  %s: nothing faster than the opts it had was found; kept them\n", stop);
        else if (isfinite(r->best_ms)) sb_printf(&sb, "  %s: kept the best found so far\n", stop);
        else sb_printf(&sb, "  %s before any timing: the opts stay as they were\n", stop);
    }
    if (r->cache_written) sb_printf(&sb, "  cache: written\n");
    else if (r->cache_note[0]) sb_printf(&sb, "  cache: %s\n", r->cache_note);
    lua_createtable(L, 0, 12);
    set_text(L, "beam", sb_str(&sb));
    sb_free(&sb);
    push_opts_table(L, r->opts, r->nopts);
    lua_setfield(L, -2, "opts");
    lua_pushnumber(L, r->best_ms);
    lua_setfield(L, -2, "ms");
    if (isfinite(r->before_ms)) {
        lua_pushnumber(L, r->before_ms);
        lua_setfield(L, -2, "before_ms");
    }
    lua_pushinteger(L, r->candidates);
    lua_setfield(L, -2, "candidates");
    lua_pushinteger(L, r->timed);
    lua_setfield(L, -2, "timed");
    lua_pushinteger(L, r->rounds);
    lua_setfield(L, -2, "rounds");
    lua_pushboolean(L, r->cache_hit);
    lua_setfield(L, -2, "cache_hit");
    lua_pushboolean(L, r->cache_written);
    lua_setfield(L, -2, "cache_written");
    lua_pushboolean(L, r->interrupted);
    lua_setfield(L, -2, "interrupted");
    lua_pushboolean(L, r->budget_spent);
    lua_setfield(L, -2, "budget_spent");
    lua_pushboolean(L, r->kept_before);
    lua_setfield(L, -2, "kept_before");
    lua_pushnumber(L, r->elapsed_s);
    lua_setfield(L, -2, "seconds");
}

/* k:beam(N [, {budget = SECONDS, cache = true|false|DIR, progress = nil}]): searches
 * this kernel's opts with a beam of width N, sets them (k:opts() then says
 * "beam N: ...") and returns a text object with fields opts, ms, before_ms,
 * candidates, timed, rounds, cache_hit, cache_written, interrupted,
 * budget_spent, kept_before (stopped early with nothing faster than the
 * opts the kernel had, which it keeps), seconds */
int luop_kernel_beam(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    BeamLuaOpts lo = {.width = check_width(L, 2, "beam"), .cache = true, .progress = -1};
    if (!lua_isnoneornil(L, 3)) {
        if (!lua_istable(L, 3)) return luaL_error(L, "beam: options must be a table {budget=, cache=, progress=}, got %s",
                                                  luaL_typename(L, 3));
        check_option_keys(L, 3, "beam", (const char *[]){"budget", "cache", "progress", NULL});
        lua_getfield(L, 3, "budget");
        lo.budget_s = check_budget(L, -1, "beam");
        lua_getfield(L, 3, "cache");
        check_cache(L, -1, "beam", "cache", &lo);
        lua_getfield(L, 3, "progress");
        lo.progress = check_flag(L, -1, "beam", "progress", -1);
        lua_pop(L, 3);
    }
    BeamResult r;
    char err[1024];
    if (!beam_kernel(kp, &lo, &r, err, sizeof err)) return luaL_error(L, "beam: %s", err);
    if (r.interrupted) interrupt_consumed(L);
    push_result(L, kp, lo.width, &r);
    return 1;
}

/* uop.compile's beam options, from the options table at t: beam = N,
 * beam_budget = SECONDS (for the whole program), beam_cache = false or DIR,
 * beam_progress = true/false.  Every kernel not given kernel_opts is
 * searched in turn, each with an equal share of what is left of the
 * budget.  Ctrl-C stops the search (the kernel keeps the best found, the
 * later ones their default opts) and says so in one line on stderr. */
void luop_compile_beam(lua_State *L, int t, LProgram *p) {
    if (lua_type(L, t) != LUA_TTABLE) return;
    t = lua_absindex(L, t);
    lua_getfield(L, t, "beam");
    bool wanted = !lua_isnil(L, -1);
    BeamLuaOpts lo = {.cache = true, .progress = -1};
    if (wanted) lo.width = check_width(L, -1, "uop.compile: beam");
    lua_getfield(L, t, "beam_budget");
    lua_getfield(L, t, "beam_cache");
    lua_getfield(L, t, "beam_progress");
    if (!wanted) {
        if (!lua_isnil(L, -1) || !lua_isnil(L, -2) || !lua_isnil(L, -3))
            luaL_error(L, "uop.compile: beam_budget, beam_cache and beam_progress need beam = N");
        lua_pop(L, 4);
        return;
    }
    double budget = check_budget(L, -3, "uop.compile: beam_budget");
    check_cache(L, -2, "uop.compile", "beam_cache", &lo);
    lo.progress = check_flag(L, -1, "uop.compile", "beam_progress", -1);
    lua_pop(L, 4);
    lua_getfield(L, t, "kernel_opts");
    int hand = lua_istable(L, -1) ? lua_gettop(L) : 0;
    double start = now_s();
    for (int i = 0; i < p->nk; i++) {
        if (hand) {
            bool given = lua_rawgeti(L, hand, i + 1) != LUA_TNIL;
            lua_pop(L, 1);
            if (given) continue;
        }
        lo.budget_s = 0;
        if (budget > 0) {
            double left = budget - (now_s() - start);
            lo.budget_s = left > 1e-3 ? left / (p->nk - i) : 1e-3;
        }
        BeamResult r;
        char err[1024];
        if (!beam_kernel(p->kps[i], &lo, &r, err, sizeof err))
            luaL_error(L, "uop.compile: beam, kernel %d (%s): %s", i + 1, pipeline_name(p->kps[i]), err);
        if (r.interrupted) {
            interrupt_consumed(L);
            fprintf(stderr, "uop.compile: beam interrupted at kernel %d of %d (%s): it keeps the best found so far%s\n",
                    i + 1, p->nk, pipeline_name(p->kps[i]),
                    i + 1 < p->nk ? ", the kernels after it their default opts" : "");
            break;
        }
    }
    lua_pop(L, 1);
}
