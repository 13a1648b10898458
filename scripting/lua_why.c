/* lua_why.c - k:why(rule, node [, {stage = N}]): why a rule does or does not
 * rewrite a node of the kernel at its current point, and k:why(node [,
 * {stage = N}]): what every rule of the stage that can match the node's op
 * says of it (core/debug/rule_why.h).  Both return a text object (kind
 * "why"): where the rules were tried, where each pattern fails or what each
 * rule gives, then what the stage itself did to the node.
 *
 * Fields: node, stage, point, of (the rules in the stage's set), rules (each
 * rule tried: {rule, where, pattern, index, verdict, miss {node, pattern,
 * reason}, captures {name = node}, matches, result, error, declined (what
 * the rule said of its decline)}; verdict is "no
 * match", "declined", "rewrites" or "error"), rewrites ({point, rule, where,
 * after, index} each: the stage's rewrites of the node, index the rule's
 * place in the set), in_input, in_output, failed (the stage's error when it
 * failed: the rules are asked before the failure); with a rule named, also the first
 * rule's own fields at the top and fired (its rewrites in the stage). */
#include <stdlib.h>
#include <string.h>

#include "lua_compile.h"
#include "../core/debug/rule_why.h"
#include "../core/stages/stages.h"
#include "../core/util/strbuf.h"

/* a node under the line that names it */
static void add_node_below(lua_State *L, StrBuf *sb, const UOp *u) {
    add_node_line(L, sb, "           ", u);
    sb_putc(sb, '\n');
}

/* "x = %12, d = %13" */
static void add_captures(StrBuf *sb, const Rule *r, const RuleExplain *ex) {
    int shown = 0;
    for (int i = 0; i < rule_capture_count(r); i++) {
        if (!ex->cap[i]) continue;
        sb_printf(sb, "%s%s = %%%u", shown++ ? ", " : ": ", rule_capture_name(r, i), ex->cap[i]->id);
    }
}

/* one rule asked for by name: its verdict over a few lines */
static void add_rule_text(lua_State *L, StrBuf *sb, const RuleWhy *w, const WhyRule *t, bool several) {
    const Rule *r = t->rule;
    const RuleExplain *ex = &t->ex;
    if (several)
        sb_printf(sb, "  rule %d of %d (%s:%d):\n", t->index, w->set_size, rule_file(r), rule_line(r));
    switch (ex->verdict) {
    case RULE_NO_MATCH:
        sb_puts(sb, "  no match: ");
        add_pattern_miss(sb, &ex->miss);
        sb_putc(sb, '\n');
        if (ex->miss.node != w->node) add_node_below(L, sb, ex->miss.node);
        if (strcmp(ex->miss.pattern, rule_pattern_text(r)) != 0)
            sb_printf(sb, "           in the pattern %s\n", rule_pattern_text(r));
        break;
    case RULE_DECLINED:
        sb_printf(sb, "  the pattern %s matches (%d way%s)", rule_pattern_text(r), ex->matches, ex->matches == 1 ? "" : "s");
        add_captures(sb, r, ex);
        if (ex->declined[0]) sb_printf(sb, "\n  declined: %s\n", ex->declined);
        else
            sb_printf(sb, "\n  declined: the rule's condition or function gives nothing for %s\n",
                      ex->matches == 1 ? "that match" : "any of them");
        break;
    case RULE_REWRITES:
        sb_printf(sb, "  the pattern %s matches", rule_pattern_text(r));
        add_captures(sb, r, ex);
        sb_printf(sb, "\n  rewrites %%%u into\n", w->node->id);
        add_node_below(L, sb, ex->result);
        break;
    case RULE_ERROR:
        sb_printf(sb, "  the pattern %s matches, and the rule fails: %s\n", rule_pattern_text(r), ex->error);
        break;
    }
}

/* every rule that can match the node's op: one line each */
static void add_rule_line(lua_State *L, StrBuf *sb, const WhyRule *t, int width) {
    const RuleExplain *ex = &t->ex;
    sb_printf(sb, "  %4d  %-*s  ", t->index, width, rule_name(t->rule));
    switch (ex->verdict) {
    case RULE_NO_MATCH:
        sb_puts(sb, "no match: ");
        add_pattern_miss(sb, &ex->miss);
        sb_putc(sb, '\n');
        break;
    case RULE_DECLINED:
        sb_printf(sb, "declined (%d match%s", ex->matches, ex->matches == 1 ? "" : "es");
        add_captures(sb, t->rule, ex);
        sb_puts(sb, ")");
        if (ex->declined[0]) sb_printf(sb, ": %s", ex->declined);
        sb_putc(sb, '\n');
        break;
    case RULE_REWRITES:
        add_node_line(L, sb, "rewrites it into ", ex->result);
        sb_putc(sb, '\n');
        break;
    case RULE_ERROR:
        sb_printf(sb, "error: %s\n", ex->error);
        break;
    }
}

/* what the stage itself did to the node; rule NULL when every rule was asked */
static void add_stage_text(StrBuf *sb, const RuleWhy *w, const char *rule) {
    const UOp *n = w->node;
    int asked = rule && w->nrules ? w->rules[0].index : 0;
    for (int i = 0; i < w->ndone; i++) {
        const WhyRewrite *d = &w->done[i];
        sb_printf(sb, "  stage %d rewrote %%%u at %d.%zu by rule %s (%s:%d) into %%%u", w->stage, n->id, w->stage,
                  d->rewrite, d->rule, d->file, d->line, d->after->id);
        /* rules are offered a node in the set's order; the first that gives a result wins */
        if (asked && d->index && strcmp(d->rule, rule) != 0)
            sb_printf(sb, ": rule %d of the set, %s\n", d->index,
                      d->index < asked ? "offered the node before this one, which never saw it"
                                       : "offered the node after this one, which gave nothing then");
        else
            sb_puts(sb, "\n");
    }
    if (w->failed) {
        sb_printf(sb, "  stage %d failed after %zu rewrite%s: %s\n", w->stage, w->of, w->of == 1 ? "" : "s", w->failed);
    } else if (!w->ndone) {
        if (w->in_output)
            sb_printf(sb, "  stage %d left %%%u as it is: no rule rewrote it, and it is in the stage's output\n",
                      w->stage, n->id);
        else
            sb_printf(sb, "  stage %d did not rewrite %%%u, and it is not in the stage's output (it was rebuilt with "
                          "new sources, or its users were rewritten)\n",
                      w->stage, n->id);
    }
    bool rewrites = false;
    for (int i = 0; i < w->nrules; i++) rewrites |= w->rules[i].ex.verdict == RULE_REWRITES;
    if (rewrites && !w->ndone && w->in_output && w->rewrite < 0)
        sb_printf(sb, "  note: a rule rewrites %%%u here, yet the pass left it: when the pass offered %%%u the rule "
                      "gave nothing (what the rule reads changed as the pass ran)\n",
                  n->id, n->id);
    if (rule)
        sb_printf(sb, "  %s fired %zu time%s in stage %d (of its %zu rewrites)\n", rule, w->fired,
                  w->fired == 1 ? "" : "s", w->stage, w->of);
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

/* one rule's fields into the table on top */
static void set_rule_fields(lua_State *L, const WhyRule *t) {
    const Rule *r = t->rule;
    const RuleExplain *ex = &t->ex;
    set_string(L, "rule", rule_name(r));
    lua_pushfstring(L, "%s:%d", rule_file(r), rule_line(r));
    lua_setfield(L, -2, "where");
    set_string(L, "pattern", rule_pattern_text(r));
    set_int(L, "index", t->index);
    set_string(L, "verdict", rule_verdict_name(ex->verdict));
    if (ex->verdict == RULE_NO_MATCH) {
        lua_createtable(L, 0, 3);
        set_node_field(L, "node", ex->miss.node);
        set_string(L, "pattern", ex->miss.pattern);
        set_string(L, "reason", ex->miss.reason);
        lua_setfield(L, -2, "miss");
    } else {
        lua_createtable(L, 0, rule_capture_count(r));
        for (int i = 0; i < rule_capture_count(r); i++) set_node_field(L, rule_capture_name(r, i), ex->cap[i]);
        lua_setfield(L, -2, "captures");
        set_int(L, "matches", ex->matches);
    }
    set_node_field(L, "result", ex->result);
    if (ex->verdict == RULE_ERROR) set_string(L, "error", ex->error);
    if (ex->verdict == RULE_DECLINED && ex->declined[0]) set_string(L, "declined", ex->declined);
}

static void set_fields(lua_State *L, const RuleWhy *w, const char *point, const char *rule) {
    if (rule) {
        set_rule_fields(L, &w->rules[0]);
        set_int(L, "fired", (lua_Integer)w->fired);
    }
    set_int(L, "stage", w->stage);
    set_string(L, "point", point);
    set_int(L, "of", w->set_size);
    set_node_field(L, "node", w->node);
    lua_createtable(L, w->nrules, 0);
    for (int i = 0; i < w->nrules; i++) {
        lua_createtable(L, 0, 10);
        set_rule_fields(L, &w->rules[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "rules");
    lua_createtable(L, w->ndone, 0);
    for (int i = 0; i < w->ndone; i++) {
        const WhyRewrite *d = &w->done[i];
        lua_createtable(L, 0, 5);
        lua_pushfstring(L, "%d.%d", w->stage, (int)d->rewrite);
        lua_setfield(L, -2, "point");
        set_string(L, "rule", d->rule);
        lua_pushfstring(L, "%s:%d", d->file, d->line);
        lua_setfield(L, -2, "where");
        set_node_field(L, "after", d->after);
        set_int(L, "index", d->index);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "rewrites");
    set_bool(L, "in_input", w->in_input);
    set_bool(L, "in_output", w->in_output);
    if (w->failed) set_string(L, "failed", w->failed);
}

/* whether the argument at idx names a node rather than a rule: a UOp, an
 * integer, or a node id as typed */
static bool is_node_arg(lua_State *L, int idx) {
    lua_Integer id;
    if (luop_test(L, idx) || lua_isinteger(L, idx)) return true;
    return lua_type(L, idx) == LUA_TSTRING && node_id_text(lua_tostring(L, idx), &id);
}

int luop_kernel_why(lua_State *L) {
    KernelPipeline *kp = check_kernel(L, 1, NULL);
    /* k:why(node [, opts]) asks every rule; k:why(rule, node [, opts]) one */
    bool every = is_node_arg(L, 2) && (lua_isnoneornil(L, 3) || lua_istable(L, 3));
    const char *rule = every ? NULL : luaL_checkstring(L, 2);
    const UOp *node = check_node_arg(L, every ? 2 : 3, "why");
    int opts = every ? 3 : 4;
    if (!lua_isnoneornil(L, opts)) luaL_checktype(L, opts, LUA_TTABLE);
    check_option_keys(L, opts, "why", (const char *[]){"stage", NULL});
    double stage = opt_number(L, opts, "stage", 0);
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
    point_text(point, sizeof point, w.stage, w.rewrite);
    const Stage *st = stage_get(w.stage);
    const char *where = w.rewrite < 0 ? "its end, point " : w.rewrite == 0 ? "its input, point " : "point ";
    StrBuf sb;
    sb_init(&sb);
    push_node_line(L, node);
    if (rule) {
        const Rule *first = w.rules[0].rule;
        sb_printf(&sb, "why rule %s (%s:%d) on %s\n", rule, rule_file(first), rule_line(first), lua_tostring(L, -1));
        sb_printf(&sb, "  tried in stage %d (%s) at %s%s, rule %d of %d there\n", w.stage, st->name, where, point,
                  w.rules[0].index, w.set_size);
        for (int k = 0; k < w.nrules; k++) add_rule_text(L, &sb, &w, &w.rules[k], w.nrules > 1);
    } else {
        sb_printf(&sb, "why on %s\n", lua_tostring(L, -1));
        sb_printf(&sb, "  the rules of stage %d (%s) that can match %s, tried at %s%s: %d of %d\n", w.stage, st->name,
                  op_name(uop_op(node)), where, point, w.nrules, w.set_size);
        int width = 0;
        for (int k = 0; k < w.nrules; k++) {
            int len = (int)strlen(rule_name(w.rules[k].rule));
            if (len > width) width = len < 32 ? len : 32;
        }
        for (int k = 0; k < w.nrules; k++) add_rule_line(L, &sb, &w.rules[k], width);
    }
    lua_pop(L, 1);
    add_stage_text(&sb, &w, rule);
    if (sb.len && sb.data[sb.len - 1] == '\n') sb.data[--sb.len] = 0;
    push_text(L, "why", sb_str(&sb));
    sb_free(&sb);
    set_fields(L, &w, point, rule);
    rule_why_free(&w);
    return 1;
}
