/* access_fault.c - the words for an access outside a buffer (access_fault.h). */
#include "access_fault.h"
#include <stdio.h>
#include "../ir/range_arg.h"

void access_fault_add_loop(AccessFault *f, unsigned id, const char *name, int64_t value) {
    if (f->nranges >= ACCESS_FAULT_LOOPS) return;
    f->range_id[f->nranges] = id;
    snprintf(f->range_name[f->nranges], sizeof f->range_name[f->nranges], "%s", name);
    f->range_value[f->nranges++] = value;
}

void access_fault_add_node(AccessFault *f, const UOp *loop, int64_t value) {
    char name[sizeof f->range_name[0]];
    loop_label(loop, name, sizeof name);
    access_fault_add_loop(f, loop->id, name, value);
}

void access_fault_message(const AccessFault *f, const char *buffer_name, char *out, size_t outlen) {
    if (!out || !outlen) return;
    if (!f || !f->failed) {
        snprintf(out, outlen, "every access was inside its buffer");
        return;
    }
    char what[96], count[48] = "";
    if (f->buffer_op == OP_DEFINE_GLOBAL)
        snprintf(what, sizeof what, "buffer %lld%s%s%s", (long long)f->buffer, buffer_name ? " (" : "",
                 buffer_name ? buffer_name : "", buffer_name ? ")" : "");
    else if (f->buffer_op == OP_DEFINE_REG || f->buffer_op == OP_DEFINE_LOCAL)
        snprintf(what, sizeof what, "%s %%%lld", op_name(f->buffer_op), (long long)f->buffer);
    else
        snprintf(what, sizeof what, "the buffer behind its pointer");
    if (f->width > 1) snprintf(count, sizeof count, "%d elements of ", f->width);
    size_t off = 0;
#define PUT(...) \
    do { \
        if (off < outlen) { \
            int w_ = snprintf(out + off, outlen - off, __VA_ARGS__); \
            if (w_ > 0) off += (size_t)w_; \
        } \
    } while (0)
    PUT("%s %%%u %s %s%s at %lld", op_name(f->node_op), f->index_id,
        f->both ? "accesses" : f->store ? "writes" : "reads", count, what, (long long)f->index);
    if (f->index < 0) PUT(", before the start of its %lld element%s", (long long)f->size, f->size == 1 ? "" : "s");
    else PUT(", past its %lld element%s", (long long)f->size, f->size == 1 ? "" : "s");
    for (int i = 0; i < f->nranges; i++)
        PUT("%s%s=%lld", i ? ", " : " (", f->range_name[i], (long long)f->range_value[i]);
    if (f->nranges) PUT(")");
#undef PUT
}
