/* ref_view.c - strided views for the tensor reference (see ref_view.h). */
#if defined(__GNUC__) && !defined(__clang__)
/* the block loops vectorise with GCC's cheap cost model, not with -O2's very cheap one */
#pragma GCC optimize("tree-vectorize", "vect-cost-model=cheap")
#endif
#include "ref_view.h"

#include <string.h>

static void check_empty(RefView *v) {
    for (int d = 0; d < v->ndim; d++)
        if (v->shape[d] == 0 || v->lo[d] >= v->hi[d]) v->empty = true;
}

void ref_view_init(RefView *v, const Shape *s) {
    v->ndim = s->ndim;
    v->offset = 0;
    v->empty = false;
    int64_t st = 1;
    for (int d = s->ndim - 1; d >= 0; d--) {
        v->shape[d] = s->d[d];
        v->stride[d] = st;
        v->lo[d] = 0;
        v->hi[d] = s->d[d];
        if (s->d[d] > 0) st *= s->d[d];
    }
    check_empty(v);
}

/* an empty view of a new shape: nothing in it is read */
static void set_empty(RefView *v, const Shape *out) {
    v->ndim = out->ndim;
    v->offset = 0;
    v->empty = true;
    for (int d = 0; d < out->ndim; d++) {
        v->shape[d] = out->d[d];
        v->stride[d] = 0;
        v->lo[d] = 0;
        v->hi[d] = 0;
    }
}

/* RESHAPE of a view with something valid in it: dims of size 1 are dropped
 * and added freely; each group of old dims whose product is that of a group
 * of new dims must be evenly spaced (stride[k] = stride[k+1] * shape[k+1])
 * and valid in whole except for a range of its outermost dim, and that
 * range must fall on the outermost new dim of the group. */
static bool reshape(RefView *v, const Shape *ns) {
    RefView r = {.ndim = ns->ndim, .offset = v->offset};
    int od[SHAPE_MAX_DIMS], nd[SHAPE_MAX_DIMS], no = 0, nn = 0;
    for (int d = 0; d < v->ndim; d++)
        if (v->shape[d] != 1) od[no++] = d;
    for (int d = 0; d < ns->ndim; d++) {
        r.shape[d] = ns->d[d];
        r.stride[d] = 0;
        r.lo[d] = 0;
        r.hi[d] = ns->d[d];
        if (ns->d[d] != 1) nd[nn++] = d;
    }
    int i = 0, j = 0;
    while (i < no && j < nn) {
        int i2 = i + 1, j2 = j + 1;
        int64_t po = v->shape[od[i]], pn = ns->d[nd[j]];
        while (po != pn) {
            if (po < pn) {
                if (i2 >= no) return false;
                po *= v->shape[od[i2++]];
            } else {
                if (j2 >= nn) return false;
                pn *= ns->d[nd[j2++]];
            }
        }
        /* the old group od[i..i2) as one dim: size po, a valid range [L, H) */
        int64_t inner = 1;
        for (int k = i2 - 1; k > i; k--) {
            int d = od[k], up = od[k - 1];
            if (v->lo[d] != 0 || v->hi[d] != v->shape[d]) return false;
            if (v->stride[up] != v->stride[d] * v->shape[d]) return false;
            inner *= v->shape[d];
        }
        int64_t L = v->lo[od[i]] * inner, H = v->hi[od[i]] * inner;
        /* split over the new group nd[j..j2) */
        int64_t ninner = po / ns->d[nd[j]];
        if (L % ninner || H % ninner) return false;
        int64_t s = v->stride[od[i2 - 1]];
        for (int k = j2 - 1; k >= j; k--) {
            r.stride[nd[k]] = s;
            s *= ns->d[nd[k]];
        }
        r.lo[nd[j]] = L / ninner;
        r.hi[nd[j]] = H / ninner;
        i = i2;
        j = j2;
    }
    if (i < no || j < nn) return false;
    *v = r;
    return true;
}

bool ref_view_apply(RefView *v, const UOp *m, const Shape *out) {
    int n = v->ndim;
    int64_t a[SHAPE_MAX_DIMS], b[SHAPE_MAX_DIMS];
    int na = 0, nb = 0;
    switch (uop_op(m)) {
    case OP_RESHAPE:
        if (v->empty) { set_empty(v, out); return true; }
        return reshape(v, out);
    case OP_EXPAND:
        for (int d = 0; d < n; d++) {
            if (v->shape[d] == out->d[d]) continue;
            v->shape[d] = out->d[d];
            v->stride[d] = 0;
            v->lo[d] = 0;
            v->hi[d] = out->d[d];
        }
        check_empty(v);
        return true;
    case OP_PERMUTE: {
        RefView r = *v;
        for (int d = 0; d < n; d++) {
            int from = (int)m->arg->items[d]->v.i;
            r.shape[d] = v->shape[from];
            r.stride[d] = v->stride[from];
            r.lo[d] = v->lo[from];
            r.hi[d] = v->hi[from];
        }
        *v = r;
        return true;
    }
    case OP_FLIP:
        for (int d = 0; d < n; d++) {
            const Arg *f = m->arg->items[d];
            if (!(f->kind == ARG_BOOL ? f->v.b : f->v.i != 0)) continue;
            int64_t lo = v->lo[d];
            v->offset += (v->shape[d] - 1) * v->stride[d];
            v->stride[d] = -v->stride[d];
            v->lo[d] = v->shape[d] - v->hi[d];
            v->hi[d] = v->shape[d] - lo;
        }
        return true;
    case OP_PAD:
    case OP_SHRINK:
        uop_int_vector(m->src[1], a, SHAPE_MAX_DIMS, &na);
        uop_int_vector(m->src[2], b, SHAPE_MAX_DIMS, &nb);
        for (int d = 0; d < n; d++) {
            if (uop_op(m) == OP_PAD) {
                v->offset -= a[d] * v->stride[d];
                v->lo[d] += a[d];
                v->hi[d] += a[d];
            } else {
                v->offset += a[d] * v->stride[d];
                v->lo[d] = v->lo[d] - a[d] > 0 ? v->lo[d] - a[d] : 0;
                v->hi[d] = v->hi[d] - a[d] < b[d] - a[d] ? v->hi[d] - a[d] : b[d] - a[d];
            }
            v->shape[d] = out->d[d];
        }
        check_empty(v);
        return true;
    default: return false;
    }
}

/* the element of v at index ix, or false where it is not valid */
static bool view_at(const RefView *v, const int64_t *ix, int64_t *off) {
    if (v->empty) return false;
    int64_t o = v->offset;
    for (int d = 0; d < v->ndim; d++) {
        if (ix[d] < v->lo[d] || ix[d] >= v->hi[d]) return false;
        o += ix[d] * v->stride[d];
    }
    *off = o;
    return true;
}

/* ix = offset o unravelled in shape (row-major) */
static void unravel(const RefView *w, int64_t o, int64_t *ix) {
    for (int d = w->ndim - 1; d >= 0; d--) {
        ix[d] = w->shape[d] ? o % w->shape[d] : 0;
        o = w->shape[d] ? o / w->shape[d] : 0;
    }
}

/* A chain of views, for the valid part [tlo, thi) of the outer one, whose
 * offsets base + t sb are elements of the next view's shape: that view's
 * index is carried along by adding sb in mixed radix (no division per
 * element); views further in (rare) unravel each offset. */
static void chain_block(const RefAccess *a, int64_t base, int64_t sb, int64_t tlo, int64_t thi, RefWord *out) {
    const RefView *w = &a->views[a->nviews - 2];
    int64_t jx[SHAPE_MAX_DIMS], dj[SHAPE_MAX_DIMS], kx[SHAPE_MAX_DIMS];
    unravel(w, base + tlo * sb, jx);
    unravel(w, sb < 0 ? -sb : sb, dj);
    for (int64_t t = tlo; t < thi; t++) {
        if (t > tlo) {
            int carry = 0;
            for (int d = w->ndim - 1; d >= 0; d--) {
                if (sb >= 0) {
                    jx[d] += dj[d] + carry;
                    carry = jx[d] >= w->shape[d];
                    if (carry) jx[d] -= w->shape[d];
                } else {
                    jx[d] -= dj[d] + carry;
                    carry = jx[d] < 0;
                    if (carry) jx[d] += w->shape[d];
                }
            }
        }
        int64_t off = 0;
        bool ok = view_at(w, jx, &off);
        for (int k = a->nviews - 3; ok && k >= 0; k--) {
            unravel(&a->views[k], off, kx);
            ok = view_at(&a->views[k], kx, &off);
        }
        if (!ok) out[t].i = 0;
        else if (a->data) out[t] = a->data[off];
    }
}

/* Where the block idx + t e_b (t < len) starts in the outermost view: its
 * offset *base, step *sb, and valid part [*tlo, *thi); false when no
 * element is valid along the other dims. */
static bool block_start(const RefView *v, const int64_t *idx, int b, int64_t len, int64_t *base, int64_t *sb,
                        int64_t *tlo, int64_t *thi) {
    bool valid = !v->empty;
    *base = v->offset, *tlo = 0, *thi = len, *sb = 0;
    for (int d = 0; d < v->ndim && valid; d++) {
        if (d == b) continue;
        valid = idx[d] >= v->lo[d] && idx[d] < v->hi[d];
        *base += idx[d] * v->stride[d];
    }
    if (!valid || b < 0) return valid;
    int64_t t0 = idx[b];
    *tlo = v->lo[b] - t0 < 0 ? 0 : v->lo[b] - t0 > len ? len : v->lo[b] - t0;
    *thi = v->hi[b] - t0 < *tlo ? *tlo : v->hi[b] - t0 > len ? len : v->hi[b] - t0;
    *base += t0 * v->stride[b];
    *sb = v->stride[b];
    return true;
}

/* ref_access_block into out, where the block is known to start at base
 * with step sb and valid part [tlo, thi) */
static void read_block(const RefAccess *a, int64_t base, int64_t sb, int64_t tlo, int64_t thi, int64_t len,
                       RefWord *out) {
    int64_t *o = &out->i;
    for (int64_t t = 0; t < tlo; t++) o[t] = 0;
    for (int64_t t = thi; t < len; t++) o[t] = 0;
    if (thi <= tlo) return;
    if (a->nviews > 1) {
        chain_block(a, base, sb, tlo, thi, out);
        return;
    }
    if (!a->data) return;
    const int64_t *p = &a->data->i;
    if (sb == 1) {
        memcpy(o + tlo, p + base + tlo, (size_t)(thi - tlo) * sizeof *o);
    } else if (sb == 0) {
        int64_t x = p[base];
        for (int64_t t = tlo; t < thi; t++) o[t] = x;
    } else {
        for (int64_t t = tlo; t < thi; t++) o[t] = p[base + t * sb];
    }
}

void ref_access_block(const RefAccess *a, const int64_t *idx, int b, int64_t len, RefWord *out) {
    int64_t base, sb, tlo, thi;
    if (!block_start(&a->views[a->nviews - 1], idx, b, len, &base, &sb, &tlo, &thi)) tlo = thi = len;
    read_block(a, base, sb, tlo, thi, len, out);
}

const RefWord *ref_access_read(const RefAccess *a, const int64_t *idx, int b, int64_t len, RefWord *out,
                               bool *uniform) {
    int64_t base, sb, tlo, thi;
    if (!block_start(&a->views[a->nviews - 1], idx, b, len, &base, &sb, &tlo, &thi)) tlo = thi = len;
    *uniform = false;
    if (a->nviews == 1 && a->data && tlo == 0 && thi == len && len > 0) {
        if (sb == 1) return a->data + base;
        if (sb == 0) {
            out[0] = a->data[base];
            *uniform = len > 1;
            return out;
        }
    }
    read_block(a, base, sb, tlo, thi, len, out);
    return out;
}
