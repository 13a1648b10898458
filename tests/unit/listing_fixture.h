/* listing_fixture.h - the fixture of the stage tests that start from a
 * listing: one node context per test (cmocka setup/teardown, which also
 * frees the rule-set registry the stages fill), an error buffer, and parse(),
 * which fails the test, showing the text, when the listing does not parse.
 * Include after cmocka.h. */
#ifndef UOPDB_LISTING_FIXTURE_H
#define UOPDB_LISTING_FIXTURE_H
#include "core/ir/uop.h"
#include "core/rewrite/registry.h"
#include "viz/listing.h"

static UCtx *c;
static char err[1024];

static int setup(void **state) {
    (void)state;
    c = uctx_new();
    return c ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    ruleset_registry_free();
    uctx_free(c);
    return 0;
}

static const UOp *parse(const char *text) {
    const UOp *u = uop_parse_listing(c, text, err, sizeof err);
    if (!u) fail_msg("listing: %s\n%s", err, text);
    return u;
}
#endif
