/* lua_why.c - k:why(rule, node [, {stage = N}]): why a rule does or does not
 * rewrite a node of the kernel at its current point (core/debug/rule_why.h),
 * as a text object (kind "why"): where the rule was tried, where its
 * pattern fails or what the rule gives, and what the stage itself did to
 * the node.  Fields: rule, where, pattern, stage, point, index, of, node,
 * verdict ("no match", "declined", "rewrites", "error"), miss {node,
 * pattern, reason}, captures {name = node}, matches, result, error,
 * rewrites ({point, rule, where, after, index} each: the stage's rewrites
 * of the node, index the rule's place in the set), fired, in_input,
 * in_output. */
#include <stdlib.h>
#include <string.h>

#include "lua_compile.h"
#include "../core/debug/rule_why.h"
#include "../core/stages/stages.h"
#include "../core/util/strbuf.h"

/* "15.7", "15.0" (the stage's input) or "15" (its end) */
static void point_name(char *buf, size_t len, int stage, long r) {
    if (r < 0) snprintf(buf, len, "%d", stage);
    else snprintf(buf, len, "%d.%ld", stage, r);
}

static void add_node_line(lua_State *L, StrBuf *sb, const UOp *u) {
    push_node_line(L, u);
    sb_printf(sb, "           %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
}

/* "x = %12, d = %13" */
static void add_captures(StrBuf *sb, const Rule *r, const RuleExplain *ex) {
    int shown = 0;
    for (int i = 0; i < rule_capture_count(r); i++) {
        if (!ex->cap[i]) continue;
        sb_printf(sb, "%s%s = %%%u", shown++ ? ", " : ": ", rule_capture_name(r, i), ex->cap[i]->id);
    }
}

static void add_rule_text(lua_State *L, StrBuf *sb, const RuleWhy *w, int k) {
    const Rule *r = w->rule[k];
    const RuleExplain *ex = &w->ex[k];
    if (w->nrules > 1) sb_printf(sb, "  rule %d of %d (%s:%d), %d of %d named %s:\n", w->index[k], w->set_size,
                                 rule_file(r), rule_line(r), k + 1, w->nrules, rule_name(r));
    switch (ex->verdict) {
    case RULE_NO_MATCH:
        sb_printf(sb, "  no match: %s fails on %%%u: %s\n", ex->miss_pattern, ex->miss_node->id, ex->miss_reason);
        if (ex->miss_node != w->node) add_node_line(L, sb, ex->miss_node);
        if (strcmp(ex->miss_pattern, rule_pattern_text(r)) != 0)
            sb_printf(sb, "           in the pattern %s\n", rule_pattern_text(r));
        break;
    case RULE_DECLINED:
        sb_printf(sb, "  the pattern %s matches (%d way%s)", rule_pattern_text(r), ex->matches, ex->matches == 1 ? "" : "s");
        add_captures(sb, r, ex);
        sb_printf(sb, "\n  declined: the rule's condition or function gives nothing for %s\n",
                  ex->matches == 1 ? "that match" : "any of them");
        break;
    case RULE_REWRITES:
        sb_printf(sb, "  the pattern %s matches", rule_pattern_text(r));
        add_captures(sb, r, ex);
        sb_printf(sb, "\n  rewrites %%%u into\n", w->node->id);
        add_node_line(L, sb, ex->result);
        break;
    case RULE_ERROR:
        sb_printf(sb, "  the pattern %s matches, and the rule fails: %s\n", rule_pattern_text(r), ex->error);
        break;
    }
}

/* what the stage itself did to the node */
static void add_stage_text(StrBuf *sb, const RuleWhy *w, const char *rule) {
    const UOp *n = w->node;
    for (int i = 0; i < w->ndone; i++) {
        const WhyRewrite *d = &w->done[i];
        sb_printf(sb, "  stage %d rewrote %%%u at %d.%zu by rule %s (%s:%d) into %%%u", w->stage, n->id, w->stage,
                  d->rewrite, d->rule, d->file, d->line, d->after->id);
        /* rules are offered a node in the set's order; the first that gives a result wins */
        if (d->index && strcmp(d->rule, rule) != 0)
            sb_printf(sb, ": rule %d of the set, %s\n", d->index,
                      d->index < w->index[0] ? "offered the node before this one, which never saw it"
                                             : "offered the node after this one, which gave nothing then");
        else
            sb_puts(sb, "\n");
    }
    if (!w->ndone) {
        if (w->in_output)
            sb_printf(sb, "  stage %d left %%%u as it is: no rule rewrote it, and it is in the stage's output\n",
                      w->stage, n->id);
        else
            sb_printf(sb, "  stage %d did not rewrite %%%u, and it is not in the stage's output (it was rebuilt with "
                          "new sources, or its users were rewritten)\n",
                      w->stage, n->id);
    }
    const RuleExplain *ex = &w->ex[0];
    if (ex->verdict == RULE_REWRITES && !w->ndone && w->in_output && w->rewrite < 0)
        sb_printf(sb, "  note: %s rewrites %%%u here, yet the pass left it: when the pass offered %%%u the rule gave "
                      "nothing (what the rule reads changed as the pass ran)\n",
                  rule, n->id, n->id);
    sb_printf(sb, "  %s fired %zu time%s in stage %d (of its %zu rewrites)\n", rule, w->fired, w->fired == 1 ? "" : "s",
              w->stage, w->of);
}

static void set_node(lua_State *L, const char *k, const UOp *u) {
    if (!u) return;
    luop_push(L, u);
    lua_setfield(L, -2, k);
}

static void set_string(lua_State *L, const char *k, const char *v) {
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

static void set_int(lua_State *L, const char *k, lua_Integer v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

static void set_bool(lua_State *L, const char *k, bool v) {
    lua_pushboolean(L, v);
    lua_setfield(L, -2, k);
}

static void set_fields(lua_State *L, const RuleWhy *w, const char *point) {
    const Rule *r = w->rule[0];
    const RuleExplain *ex = &w->ex[0];
    set_string(L, "rule", rule_name(r));
    lua_pushfstring(L, "%s:%d", rule_file(r), rule_line(r));
    lua_setfield(L, -2, "where");
    set_string(L, "pattern", rule_pattern_text(r));
    set_int(L, "stage", w->stage);
    set_string(L, "point", point);
    set_int(L, "index", w->index[0]);
    set_int(L, "of", w->set_size);
    set_node(L, "node", w->node);
    set_string(L, "verdict", rule_verdict_name(ex->verdict));
    if (ex->verdict == RULE_NO_MATCH) {
        lua_createtable(L, 0, 3);
        set_node(L, "node", ex->miss_node);
        set_string(L, "pattern", ex->miss_pattern);
        set_string(L, "reason", ex->miss_reason);
        lua_setfield(L, -2, "miss");
    } else {
        lua_createtable(L, 0, rule_capture_count(r));
        for (int i = 0; i < rule_capture_count(r); i++) set_node(L, rule_capture_name(r, i), ex->cap[i]);
        lua_setfield(L, -2, "captures");
        set_int(L, "matches", ex->matches);
    }
    set_node(L, "result", ex->result);
    if (ex->verdict == RULE_ERROR) set_string(L, "error", ex->error);
    lua_createtable(L, w->ndone, 0);
    for (int i = 0; i < w->ndone; i++) {
        const WhyRewrite *d = &w->done[i];
        lua_createtable(L, 0, 4);
        lua_pushfstring(L, "%d.%d", w->stage, (int)d->rewrite);
        lua_setfield(L, -2, "point");
        set_string(L, "rule", d->rule);
        lua_pushfstring(L, "%s:%d", d->file, d->line);
        lua_setfield(L, -2, "where");
        set_node(L, "after", d->after);
        set_int(L, "index", d->index);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "rewrites");
    set_int(L, "fired", (lua_Integer)w->fired);
    set_bool(L, "in_input", w->in_input);
    set_bool(L, "in_output", w->in_output);
}

int luop_kernel_why(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    const char *rule = luaL_checkstring(L, 2);
    const UOp *node = check_node_arg(L, 3, "why");
    if (!lua_isnoneornil(L, 4)) luaL_checktype(L, 4, LUA_TTABLE);
    check_option_keys(L, 4, "why", (const char *[]){"stage", NULL});
    double stage = opt_number(L, 4, "stage", 0);
    if (!(stage >= 0 && stage <= STAGE_COUNT) || stage != (double)(int)stage)
        return luaL_error(L, "why: stage must be a whole number from 1 to %d", STAGE_COUNT);
    RuleWhy w;
    char err[1024];
    if (!rule_why(kp, pipeline_position(kp), pipeline_rewrite_position(kp), rule, node, (int)stage, &w, err,
                  sizeof err)) {
        rule_why_free(&w);
        return luaL_error(L, "why: %s", err);
    }
    char point[32];
    point_name(point, sizeof point, w.stage, w.rewrite);
    const Stage *st = stage_get(w.stage);
    StrBuf sb;
    sb_init(&sb);
    push_node_line(L, node);
    sb_printf(&sb, "why rule %s (%s:%d) on %s\n", rule, rule_file(w.rule[0]), rule_line(w.rule[0]), lua_tostring(L, -1));
    lua_pop(L, 1);
    sb_printf(&sb, "  tried in stage %d (%s) at %s%s, rule %d of %d there\n", w.stage, st->name,
              w.rewrite < 0 ? "its end, point " : w.rewrite == 0 ? "its input, point " : "point ", point, w.index[0],
              w.set_size);
    int shown = w.nrules < RULE_WHY_MAX_RULES ? w.nrules : RULE_WHY_MAX_RULES;
    for (int k = 0; k < shown; k++) add_rule_text(L, &sb, &w, k);
    if (w.nrules > shown) sb_printf(&sb, "  ... and %d more rules named %s\n", w.nrules - shown, rule);
    add_stage_text(&sb, &w, rule);
    if (sb.len && sb.data[sb.len - 1] == '\n') sb.data[--sb.len] = 0;
    push_text(L, "why", sb_str(&sb));
    sb_free(&sb);
    set_fields(L, &w, point);
    rule_why_free(&w);
    return 1;
}
