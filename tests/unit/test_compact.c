/* test_compact.c - compaction of a UOp context: what is marked (and all
 * below it) stays where it was with its id, what is not is freed and its
 * memory reused, ids are never handed out twice, args go with their last
 * node, deep graphs are marked without recursion, and rewrites work on what
 * is left. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/ir/uop.h"
#include "core/rewrite/rewrite.h"
#include "core/rewrite/registry.h"
#include "core/sym/symbolic.h"

/* x*k + k for k = from..to-1, chained: each step adds a MUL, an ADD and a
 * CONST of a new value; returns the last ADD */
static const UOp *chain(UCtx *c, const UOp *x, int64_t from, int64_t to) {
    const UOp *acc = x;
    for (int64_t k = from; k < to; k++) {
        const UOp *kc = uop_const_int(c, DT_INDEX, k);
        acc = uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, acc, kc), kc);
        assert_non_null(acc);
    }
    return acc;
}

static size_t compact(UCtx *c, const UOp *const *roots, int n) {
    UCtxMarks *m = uctx_marks_new(c);
    assert_non_null(m);
    for (int i = 0; i < n; i++) uctx_mark(m, roots[i]);
    return uctx_sweep(c, m);
}

static void test_marked_nodes_stay_unmarked_go(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 9);
    const UOp *kept = chain(c, x, 1, 101);     /* 300 nodes above x */
    uint32_t kept_id = kept->id;
    const UOp *kept_src = kept->src[0];
    size_t live_before = uctx_live_nodes(c);
    const UOp *dropped = chain(c, x, 1001, 1101); /* 300 more, sharing only x */
    uint32_t dropped_id = dropped->id;
    size_t ids = uctx_node_count(c);
    assert_int_equal(uctx_live_nodes(c), live_before + 300);

    assert_int_equal(compact(c, &kept, 1), 300);
    assert_int_equal(uctx_live_nodes(c), live_before);
    assert_int_equal(uctx_node_count(c), ids); /* ids keep counting */
    /* the kept graph: same addresses, ids and fields */
    assert_ptr_equal(uctx_node(c, kept_id), kept);
    assert_int_equal(kept->id, kept_id);
    assert_int_equal(uop_op(kept), OP_ADD);
    assert_ptr_equal(kept->src[0], kept_src);
    assert_int_equal(uop_graph_size(kept), 301); /* x and 100 times (CONST, MUL, ADD) */
    /* the dropped one is gone from the id map */
    assert_null(uctx_node(c, dropped_id));
    /* hash-consing finds the kept nodes, not copies */
    assert_ptr_equal(chain(c, x, 1, 101), kept);
    assert_int_equal(uctx_node_count(c), ids);
    /* building a freed node again makes a new one, with a new id */
    const UOp *again = chain(c, x, 1001, 1101);
    assert_true(again->id >= ids);
    assert_int_equal(uctx_node_count(c), ids + 300);
    int64_t v;
    assert_true(uop_const_int_value(again->src[1], &v));
    assert_int_equal(v, 1100);
    assert_int_equal(uctx_compactions(c), 1);
    assert_int_equal(uctx_freed_nodes(c), 300);
    uctx_free(c);
}

static void test_nothing_marked_frees_everything(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    chain(c, uop_var(c, "x", 0, 9), 1, 1000);
    assert_int_equal(compact(c, NULL, 0), uctx_node_count(c));
    assert_int_equal(uctx_live_nodes(c), 0);
    assert_int_equal(uctx_live_args(c), 0);
    /* the context still works */
    const UOp *x = uop_var(c, "x", 0, 9);
    assert_non_null(x);
    assert_ptr_equal(uop_var(c, "x", 0, 9), x);
    uctx_free(c);
}

/* building and dropping the same amount again and again: the memory of
 * what was freed is used again, so the context stops growing */
static void test_memory_is_reused(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 9);
    size_t after_first = 0;
    for (int round = 0; round < 20; round++) {
        chain(c, x, round * 100000, round * 100000 + 50000);
        compact(c, &x, 1);
        if (round == 0) after_first = uctx_bytes(c);
        assert_int_equal(uctx_live_nodes(c), 1);
    }
    /* 3M nodes and 1M args were made; a context keeping them holds over 200 MB */
    assert_true(uctx_node_count(c) >= 3000000);
    assert_true(uctx_bytes(c) < after_first + after_first / 4);
    assert_true(uctx_bytes(c) < (size_t)40 << 20);
    uctx_free(c);
}

static void test_args_go_with_their_last_node(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 9);
    const UOp *k = uop_const_int(c, DT_INDEX, 777);
    const Arg *k_arg = k->arg;
    const Arg *tuple_items[2] = {arg_str(c, "inner"), arg_int(c, 5)};
    const Arg *items[2] = {arg_tuple(c, tuple_items, 2), arg_float(c, 2.5)};
    const UOp *tagged = uop_new_tagged(c, OP_NOOP, DT_VOID, NULL, 0, NULL, arg_tuple(c, items, 2));
    size_t args_kept = uctx_live_args(c);
    for (int i = 0; i < 1000; i++) uop_const_int(c, DT_INDEX, 100000 + i);
    arg_str(c, "no node uses this");
    assert_int_equal(uctx_live_args(c), args_kept + 1001);
    const UOp *roots[3] = {x, k, tagged};
    compact(c, roots, 3);
    assert_int_equal(uctx_live_args(c), args_kept);
    assert_int_equal(uctx_freed_args(c), 1001);
    /* the kept args are the same interned values */
    assert_ptr_equal(arg_int(c, 777), k_arg);
    assert_ptr_equal(arg_tuple(c, items, 2), tagged->tag);
    assert_string_equal(tagged->tag->items[0]->items[0]->v.s, "inner");
    assert_ptr_equal(arg_str(c, "inner"), tuple_items[0]);
    assert_int_equal(uctx_live_args(c), args_kept);
    /* a freed value interned again is a fresh arg holding the value */
    const Arg *again = arg_int(c, 100500);
    assert_int_equal(again->v.i, 100500);
    assert_int_equal(uctx_live_args(c), args_kept + 1);
    uctx_free(c);
}

/* a chain of a million nodes is marked from its root with no recursion */
static void test_deep_graph(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *one = uop_const_int(c, DT_INT32, 1);
    const UOp *acc = uop_var(c, "x", 0, 9);
    acc = uop_cast(c, acc, DT_INT32);
    for (int i = 0; i < 1000000; i++) acc = uop_binary(c, OP_ADD, acc, one);
    chain(c, uop_var(c, "y", 0, 9), 1, 1000); /* dropped */
    size_t live = uctx_live_nodes(c);
    assert_int_equal(compact(c, &acc, 1), 1 + 3 * 999);
    assert_int_equal(uctx_live_nodes(c), live - (1 + 3 * 999));
    assert_int_equal(uop_graph_size(acc), 1000003); /* x, its cast, 1 and the ADDs */
    uctx_free(c);
}

/* a rewrite after a compaction gives what it gave before (its per-node
 * records are released with the context's freed ids) */
static void test_rewrite_after_compaction(void **state) {
    (void)state;
    sym_register_rulesets();
    char err[256];
    const RuleSet *rs = ruleset_get("symbolic", err, sizeof err);
    assert_non_null(rs);
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 9);
    const UOp *e = uop_binary(c, OP_ADD, uop_binary(c, OP_MUL, uop_binary(c, OP_ADD, x, uop_const_int(c, DT_INDEX, 0)),
                                                   uop_const_int(c, DT_INDEX, 1)),
                              uop_const_int(c, DT_INDEX, 0));
    chain(c, x, 5, 20000); /* dropped */
    const UOp *before = graph_rewrite(c, e, rs, NULL);
    assert_ptr_equal(before, x);
    compact(c, &e, 1);
    rewrite_release_buffers();
    chain(c, x, 30000, 40000);
    assert_ptr_equal(graph_rewrite(c, e, rs, NULL), x);
    const UOp *f = uop_binary(c, OP_MUL, uop_binary(c, OP_ADD, x, x), uop_const_int(c, DT_INDEX, 1));
    const UOp *r = graph_rewrite(c, f, rs, NULL);
    assert_non_null(r);
    assert_int_equal(uop_op(r), OP_MUL); /* x + x is x*2 */
    uctx_free(c);
}

/* A constant freed by a compaction is made again as a new node: nothing
 * kept from before the compaction hands back the freed one, even once its
 * memory holds another node. */
static void test_constant_made_again_after_compaction(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 9);
    const UOp *seven = uop_const_int(c, DT_INDEX, 7);
    uint32_t old_id = seven->id;
    assert_ptr_equal(uop_const_int(c, DT_INDEX, 7), seven);
    compact(c, &x, 1);
    assert_null(uctx_node(c, old_id));
    /* the freed line is handed out again, to a node that is not a constant */
    const UOp *other = uop_binary(c, OP_ADD, x, x);
    assert_non_null(other);
    const UOp *again = uop_const_int(c, DT_INDEX, 7);
    assert_non_null(again);
    assert_int_equal(uop_op(again), OP_CONST);
    assert_int_equal(again->arg->v.i, 7);
    assert_true(again->id > old_id);
    assert_ptr_equal(uctx_node(c, again->id), again);
    assert_ptr_equal(uop_const_int(c, DT_INDEX, 7), again);
    uctx_free(c);
}

/* A node looked up again soon is answered by the recent-node table, not the
 * node set. */
static void test_recent_table_answers_repeats(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 9);
    const UOp *sum = uop_binary(c, OP_ADD, x, x);
    size_t lookups = uctx_lookups(c), hits = uctx_recent_hits(c);
    assert_ptr_equal(uop_binary(c, OP_ADD, x, x), sum);
    assert_int_equal(uctx_lookups(c), lookups + 1);
    assert_int_equal(uctx_recent_hits(c), hits + 1);
    uctx_free(c);
}

/* The context remembers the nodes it found or made last; a compaction
 * forgets them, so a freed node is never handed out again. */
static void test_node_made_again_after_compaction(void **state) {
    (void)state;
    UCtx *c = uctx_new();
    const UOp *x = uop_var(c, "x", 0, 9);
    const UOp *sum = uop_binary(c, OP_ADD, x, x);
    uint32_t old_id = sum->id;
    assert_ptr_equal(uop_binary(c, OP_ADD, x, x), sum);
    compact(c, &x, 1);
    assert_null(uctx_node(c, old_id));
    const UOp *again = uop_binary(c, OP_ADD, x, x);
    assert_non_null(again);
    assert_true(again->id > old_id);
    assert_ptr_equal(uctx_node(c, again->id), again);
    assert_int_equal(uop_op(again), OP_ADD);
    assert_ptr_equal(again->src[0], x);
    uctx_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_marked_nodes_stay_unmarked_go), cmocka_unit_test(test_nothing_marked_frees_everything),
        cmocka_unit_test(test_memory_is_reused),              cmocka_unit_test(test_args_go_with_their_last_node),
        cmocka_unit_test(test_deep_graph),                    cmocka_unit_test(test_rewrite_after_compaction),
        cmocka_unit_test(test_constant_made_again_after_compaction),
        cmocka_unit_test(test_node_made_again_after_compaction),
        cmocka_unit_test(test_recent_table_answers_repeats),
    };
    int rc = cmocka_run_group_tests_name("compact", tests, NULL, NULL);
    ruleset_registry_free();
    return rc;
}
