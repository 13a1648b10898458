/* buffer.c - kernel buffers: zeroed, 64-byte aligned host memory sized
 * from a dtype and an element count (the kernel ABI promises alignment). */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

int64_t buffer_bytes(const DType *dt, int64_t count) {
    if (!dt || count < 0 || dt_is_ptr(dt)) return -1;
    int64_t item = dt_itemsize(dt);
    if (item <= 0) return -1;
    if (count > INT64_MAX / item) return -1;
    return item * count;
}

void *buffer_alloc(const DType *dt, int64_t count) {
    int64_t bytes = buffer_bytes(dt, count);
    if (bytes < 0 || bytes > INT64_MAX - BACKEND_BUFFER_ALIGN) return NULL;
    /* aligned_alloc wants a multiple of the alignment; never zero */
    size_t rounded = (size_t)((bytes + BACKEND_BUFFER_ALIGN) / BACKEND_BUFFER_ALIGN * BACKEND_BUFFER_ALIGN);
    void *p = aligned_alloc(BACKEND_BUFFER_ALIGN, rounded);
    if (p) memset(p, 0, rounded);
    return p;
}

void buffer_free(void *p) { free(p); }

double buffer_read_double(const DType *dt, const void *p, size_t k) {
    switch (dt->sk) {
    case SK_BOOL: return ((const unsigned char *)p)[k] != 0;
    case SK_INT8: return ((const int8_t *)p)[k];
    case SK_UINT8: return ((const uint8_t *)p)[k];
    case SK_INT16: return ((const int16_t *)p)[k];
    case SK_UINT16: return ((const uint16_t *)p)[k];
    case SK_INT32: return ((const int32_t *)p)[k];
    case SK_UINT32: return ((const uint32_t *)p)[k];
    case SK_INT64: case SK_INDEX: return (double)((const int64_t *)p)[k];
    case SK_UINT64: return (double)((const uint64_t *)p)[k];
    case SK_FLOAT16: return (double)((const _Float16 *)p)[k];
    case SK_FLOAT32: return ((const float *)p)[k];
    case SK_FLOAT64: return ((const double *)p)[k];
    default: return 0;
    }
}
