/* dot.h - Graphviz output.  DOT text is written here; turning it into SVG or
 * PNG shells out to the `dot` program (Graphviz's library leaks, and the
 * program is what users have). */
#ifndef UOPDB_DOT_H
#define UOPDB_DOT_H
#include <stdbool.h>
#include "../core/ir/uop.h"
#include "../core/util/strbuf.h"

typedef struct DotOpts {
    const UOp *focus;     /* cut the graph to the neighbourhood of this node */
    int radius;           /* edges away from focus to keep (default 2) */
    bool keep_consts;     /* draw CONSTs as nodes (default: fold them into their users' labels) */
    const char *title;
} DotOpts;

void uop_dot(StrBuf *sb, const UOp *root, const DotOpts *opts);
/* Runs `dot -T<format>` on dot_text into out_path.  Returns false with a
 * clear message in err (dot not installed, dot failed, bad format). */
bool dot_render(const char *dot_text, const char *format, const char *out_path, char *err, size_t errlen);
/* Whether the dot program can be run. */
bool dot_available(void);

#endif
