/* test_name_distance.c - the edit distance behind "did you mean": each
 * kind of edit counts 1, a swap of neighbours too, and over-long names are
 * out of reach. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include "core/util/name_distance.h"

static void test_each_edit_counts_one(void **s) {
    (void)s;
    assert_int_equal(name_distance("bisect", "bisect"), 0);
    assert_int_equal(name_distance("bisct", "bisect"), 1);   /* a letter left out */
    assert_int_equal(name_distance("bisectt", "bisect"), 1); /* one too many */
    assert_int_equal(name_distance("bisekt", "bisect"), 1);  /* one changed */
    assert_int_equal(name_distance("bisetc", "bisect"), 1);  /* two neighbours swapped */
    assert_int_equal(name_distance("smu", "sum"), 1);
    assert_int_equal(name_distance("", "abc"), 3);
    assert_int_equal(name_distance("abc", ""), 3);
    assert_int_equal(name_distance("kitten", "sitting"), 3);
    /* a swap and a change elsewhere: two edits */
    assert_int_equal(name_distance("fodl_add_zeor", "fold_add_zero"), 2);
    assert_int_equal(name_distance("ab", "ba"), 1);
    assert_int_equal(name_distance("abc", "ca"), 3);
}

static void test_long_names_are_out_of_reach(void **s) {
    (void)s;
    char a[NAME_DISTANCE_MAX_LEN + 2], b[NAME_DISTANCE_MAX_LEN + 1];
    memset(a, 'x', sizeof a - 1);
    a[sizeof a - 1] = 0;
    memset(b, 'x', sizeof b - 1);
    b[sizeof b - 1] = 0;
    /* b is as long as may be measured: it is 0 from itself */
    assert_int_equal(name_distance(b, b), 0);
    assert_int_equal(name_distance(a, b), NAME_DISTANCE_MAX_LEN + 1);
    assert_int_equal(name_distance(b, a), NAME_DISTANCE_MAX_LEN + 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_edit_counts_one),
        cmocka_unit_test(test_long_names_are_out_of_reach),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
