/* fuzz_tinygrad_repr.c - libFuzzer harness of the tinygrad-repr importer
 * (viz/tinygrad_repr.c).  Any input must import or fail with a
 * "line L, column C: ..." message; a graph that imports must export to text
 * that imports back to the same node. */
#include "fuzz_text.h"
#include "../../viz/tinygrad_repr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_text_copy(data, size);
    if (!text) return 0;
    UCtx *c = uctx_new();
    char err[512];
    const UOp *root = uop_from_tinygrad(c, text, err, sizeof err);
    if (!root) {
        FUZZ_CHECK(strncmp(err, "line ", 5) == 0, "error without a position: '%s'", err);
    } else {
        StrBuf sb;
        sb_init(&sb);
        char err2[512];
        if (uop_to_tinygrad(&sb, root, err2, sizeof err2)) {
            const UOp *again = uop_from_tinygrad(c, sb.data, err2, sizeof err2);
            FUZZ_CHECK(again == root, "exported repr does not import back to the same node (%s):\n%s",
                       again ? "another node" : err2, sb.data);
        }
        sb_free(&sb);
    }
    uctx_free(c);
    free(text);
    return 0;
}
