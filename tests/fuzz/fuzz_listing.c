/* fuzz_listing.c - libFuzzer harness of the listing parser (viz/listing.c).
 * Any input must parse or fail with a "line L, column C: ..." message; a
 * listing that parses must print back to text that parses to the very same
 * node (hash-consing makes equal graphs the same pointer in one context). */
#include "fuzz_text.h"
#include "../../viz/listing.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_text_copy(data, size);
    if (!text) return 0;
    UCtx *c = uctx_new();
    char err[512];
    const UOp *root = uop_parse_listing(c, text, err, sizeof err);
    if (!root) {
        FUZZ_CHECK(strncmp(err, "line ", 5) == 0, "error without a position: '%s'", err);
    } else {
        StrBuf sb;
        sb_init(&sb);
        uop_listing(&sb, root, NULL);
        char err2[512];
        const UOp *again = uop_parse_listing(c, sb.data, err2, sizeof err2);
        FUZZ_CHECK(again == root, "printed listing does not parse back to the same node (%s):\n%s", again ? "another node" : err2,
                   sb.data);
        sb_free(&sb);
    }
    uctx_free(c);
    free(text);
    return 0;
}
