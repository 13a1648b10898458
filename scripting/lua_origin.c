/* lua_origin.c - k:origin(node [, {steps = N}]): where a node of the kernel
 * at its current point came from (core/debug/node_origin.h), as a text
 * object (kind "origin") that reads latest first, one step per rewrite
 * that made the node or the node it came from, with the fields node,
 * steps ({point, stage, rewrite, of, how, rule, where, node, from, before,
 * after} each), truncated and lost. */
#include <stdlib.h>
#include <string.h>

#include "lua_compile.h"
#include "../core/debug/node_origin.h"
#include "../core/stages/stages.h"
#include "../core/util/strbuf.h"

#define DEFAULT_STEPS 64
#define MAX_STEPS 100000

static void add_step_text(lua_State *L, StrBuf *sb, const OriginStep *st, bool first) {
    char at[32];
    point_text(at, sizeof at, st->stage, st->rewrite ? (long)st->rewrite : -1);
    sb_printf(sb, "  at %-6s", at);
    char who[32] = "";
    if (!first) snprintf(who, sizeof who, "%%%u ", st->node->id);
    const Stage *stg = stage_get(st->stage);
    switch (st->how) {
    case ORIGIN_SCHEDULED:
        sb_printf(sb, "%sis in the kernel as scheduled\n", who);
        break;
    case ORIGIN_RULE:
        sb_printf(sb, "%sis the result of rule %s (%s:%d), which rewrote %%%u\n", who, st->rule, st->file, st->line,
                  st->from->id);
        add_node_line(L, sb, "           ", st->from);
        sb_putc(sb, '\n');
        break;
    case ORIGIN_PART:
        sb_printf(sb, "%swas made by rule %s (%s:%d) inside its result %%%u, rewriting %%%u\n", who, st->rule, st->file,
                  st->line, st->after->id, st->from->id);
        add_node_line(L, sb, "           ", st->from);
        sb_putc(sb, '\n');
        break;
    case ORIGIN_REBUILT:
        sb_printf(sb, "%sis %%%u rebuilt: below it rule %s (%s:%d) rewrote %%%u into %%%u\n", who, st->from->id, st->rule,
                  st->file, st->line, st->before->id, st->after->id);
        add_node_line(L, sb, "           ", st->from);
        sb_putc(sb, '\n');
        break;
    case ORIGIN_STAGE:
        if (st->rewrite)
            sb_printf(sb, "%sfirst appears in stage %d (%s) after its rewrite %zu, which did not make it alone (the "
                          "stage's own code, or the engine rebuilding with several replacements at once)\n",
                      who, st->stage, stg ? stg->name : "?", st->rewrite);
        else
            sb_printf(sb, "%swas made by stage %d (%s), which is not a rewrite\n", who, st->stage, stg ? stg->name : "?");
        break;
    }
}

static void push_step(lua_State *L, const OriginStep *st) {
    lua_createtable(L, 0, 11);
    char at[32];
    point_text(at, sizeof at, st->stage, st->rewrite ? (long)st->rewrite : -1);
    lua_pushstring(L, at);
    lua_setfield(L, -2, "point");
    lua_pushinteger(L, st->stage);
    lua_setfield(L, -2, "stage");
    lua_pushinteger(L, (lua_Integer)st->rewrite);
    lua_setfield(L, -2, "rewrite");
    lua_pushinteger(L, (lua_Integer)st->of);
    lua_setfield(L, -2, "of");
    lua_pushstring(L, origin_how_name(st->how));
    lua_setfield(L, -2, "how");
    if (st->rule) {
        lua_pushstring(L, st->rule);
        lua_setfield(L, -2, "rule");
        lua_pushfstring(L, "%s:%d", st->file, st->line);
        lua_setfield(L, -2, "where");
    }
    set_node_field(L, "node", st->node);
    set_node_field(L, "from", st->from);
    set_node_field(L, "before", st->before);
    set_node_field(L, "after", st->after);
}

int luop_kernel_origin(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    const UOp *node = check_node_arg(L, 2, "origin");
    if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    check_option_keys(L, 3, "origin", (const char *[]){"steps", NULL});
    double steps = opt_number(L, 3, "steps", DEFAULT_STEPS);
    if (!(steps >= 1 && steps <= MAX_STEPS) || steps != (double)(long)steps)
        return luaL_error(L, "origin: steps must be a whole number from 1 to %d", MAX_STEPS);
    int stage = pipeline_position(kp);
    long rewrite = pipeline_rewrite_position(kp);
    OriginChain ch;
    char err[1024];
    if (!node_origin(kp, stage, rewrite, node, (int)steps, &ch, err, sizeof err)) {
        origin_chain_free(&ch);
        return luaL_error(L, "origin: %s", err);
    }
    StrBuf sb;
    sb_init(&sb);
    push_node_line(L, node);
    sb_printf(&sb, "origin of %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    for (int i = 0; i < ch.n; i++) add_step_text(L, &sb, &ch.steps[i], i == 0);
    const OriginStep *last = ch.n ? &ch.steps[ch.n - 1] : NULL;
    if (ch.truncated)
        sb_printf(&sb, "  ... stopped after %d step%s (k:origin(%%%u, {steps = %d}) goes further)\n", ch.n,
                  ch.n == 1 ? "" : "s", node->id, ch.n * 4);
    if (ch.lost && last)
        sb_printf(&sb, "  %%%u is not in the graph before that rewrite, so the walk ends there\n", last->from->id);
    if (sb.len && sb.data[sb.len - 1] == '\n') sb.data[--sb.len] = 0;
    push_text(L, "origin", sb_str(&sb));
    sb_free(&sb);
    luop_push(L, node);
    lua_setfield(L, -2, "node");
    lua_createtable(L, ch.n, 0);
    for (int i = 0; i < ch.n; i++) {
        push_step(L, &ch.steps[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "steps");
    lua_pushboolean(L, ch.truncated);
    lua_setfield(L, -2, "truncated");
    lua_pushboolean(L, ch.lost);
    lua_setfield(L, -2, "lost");
    origin_chain_free(&ch);
    return 1;
}
