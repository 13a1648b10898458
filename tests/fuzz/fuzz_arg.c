/* fuzz_arg.c - libFuzzer harness of the arg parser (core/ir/arg_parse.c).
 * Any input must parse a prefix or fail with a message; an arg that parses
 * must read back, from both of its spellings (uopdb's and Python's), as the
 * same interned arg. */
#include "fuzz_text.h"
#include "../../core/ir/uop.h"

static void check_spelling(UCtx *c, const Arg *a, void (*format)(StrBuf *, const Arg *), const char *which) {
    StrBuf sb;
    sb_init(&sb);
    format(&sb, a);
    const Arg *again = NULL;
    char err[512];
    int n = arg_parse(c, sb.data, &again, err, sizeof err);
    FUZZ_CHECK(n == (int)sb.len, "%s spelling '%s' does not read back whole (%d of %zu chars: %s)", which, sb.data, n,
               sb.len, n ? "" : err);
    FUZZ_CHECK(again == a || arg_equal(again, a), "%s spelling '%s' reads back as another arg", which, sb.data);
    sb_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_text_copy(data, size);
    if (!text) return 0;
    UCtx *c = uctx_new();
    const Arg *a = NULL;
    char err[512];
    int n = arg_parse(c, text, &a, err, sizeof err);
    if (n == 0) {
        FUZZ_CHECK(err[0] != 0, "an error without a message");
    } else {
        FUZZ_CHECK(n > 0 && (size_t)n <= strlen(text), "consumed %d of %zu chars", n, strlen(text));
        if (a) {
            check_spelling(c, a, arg_format, "uopdb");
            check_spelling(c, a, arg_format_python, "python");
        }
    }
    uctx_free(c);
    free(text);
    return 0;
}
