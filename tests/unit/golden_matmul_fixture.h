/* golden_matmul_fixture.h - the cmocka group fixture of the unit tests that
 * step tinygrad's golden 3x3 matmul AST: a context of its own, the AST read
 * into it by the group's setup, both freed (with the rule sets registered
 * meanwhile) by its teardown.  Include after cmocka.h. */
#ifndef UOPDB_GOLDEN_MATMUL_FIXTURE_H
#define UOPDB_GOLDEN_MATMUL_FIXTURE_H
#include "core/rewrite/registry.h"
#include "test_files.h"

static UCtx *c;
static const UOp *ast;

static int setup(void **state) {
    (void)state;
    c = uctx_new();
    char err[256];
    ast = read_golden_ast(c, GOLDEN_MATMUL_AST, err, sizeof err);
    return ast ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    uctx_free(c);
    ruleset_registry_free();
    return 0;
}

#endif
