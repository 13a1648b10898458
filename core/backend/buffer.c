/* buffer.c - kernel buffers: zeroed, 64-byte aligned host memory sized
 * from a dtype and an element count (the kernel ABI promises alignment). */
#include "backend.h"

#include <math.h>
#include <stdint.h>
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
    if (bytes < 0 || bytes > BUFFER_HOST_LIMIT_BYTES) return NULL;
    /* a multiple of the alignment, never zero */
    size_t rounded = (size_t)((bytes + BACKEND_BUFFER_ALIGN) / BACKEND_BUFFER_ALIGN * BACKEND_BUFFER_ALIGN);
    /* calloc zeroes lazily (fresh pages of a large block are already zero);
     * the extra room aligns the start and keeps calloc's pointer just before it */
    unsigned char *raw = calloc(1, rounded + 2 * BACKEND_BUFFER_ALIGN);
    if (!raw) return NULL;
    uintptr_t start = ((uintptr_t)raw + sizeof(void *) + BACKEND_BUFFER_ALIGN - 1) & ~(uintptr_t)(BACKEND_BUFFER_ALIGN - 1);
    ((void **)start)[-1] = raw;
    return (void *)start;
}

void buffer_free(void *p) {
    if (p) free(((void **)p)[-1]);
}

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
    case SK_BFLOAT16: return bf16_to_double(((const uint16_t *)p)[k]);
    case SK_FLOAT32: return ((const float *)p)[k];
    case SK_FLOAT64: return ((const double *)p)[k];
    default: return 0;
    }
}

uint16_t bf16_from_double(double v) {
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, 4);
    if (isnan(f)) return (uint16_t)((b >> 16) | 0x40); /* a quiet NaN, sign kept */
    return (uint16_t)((b + 0x7FFF + ((b >> 16) & 1)) >> 16);
}

double bf16_to_double(uint16_t bits) {
    uint32_t b = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &b, 4);
    return (double)f;
}
