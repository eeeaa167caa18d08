/* Flatten an MPI datatype into its (offset, length) byte blocks, in type-map
 * order, by decoding it with MPI_Type_get_envelope/get_contents.  Adjacent
 * blocks are merged.  Stops at out->max blocks and marks the result capped;
 * a combiner it cannot decode (darray) marks it undecoded.  Used at
 * MPI_File_set_view, off the data path. */
#include "runtime.h"

#include <stdlib.h>
#include <string.h>

static void add(struct iom_blocks *o, int64_t off, int64_t len)
{
    if (len <= 0 || o->capped) return;
    if (o->n && o->b[o->n - 1].off + o->b[o->n - 1].len == off) {
        o->b[o->n - 1].len += len;
        return;
    }
    if (o->n == o->max) { o->capped = 1; return; }
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 16;
        struct iom_block *b = realloc(o->b, cap * sizeof *b);
        if (!b) { o->capped = 1; return; }
        o->b = b;
        o->cap = cap;
    }
    o->b[o->n].off = off;
    o->b[o->n].len = len;
    o->n++;
}

static void flatten_at(MPI_Datatype t, int64_t base, struct iom_blocks *o);

/* Append `count` copies of the blocks of `t`, copy i at base + disp(i). */
static void repeat(MPI_Datatype t, int64_t count, int64_t base, int64_t stride, struct iom_blocks *o)
{
    if (count <= 0 || o->capped) return;
    struct iom_blocks one = {0};
    one.max = o->max;
    flatten_at(t, 0, &one);
    if (one.undecoded) o->undecoded = 1;
    for (int64_t i = 0; i < count && !o->capped; i++)
        for (size_t j = 0; j < one.n; j++) add(o, base + i * stride + one.b[j].off, one.b[j].len);
    if (one.capped) o->capped = 1;
    free(one.b);
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* Blocks of a subarray: runs along the fastest dimension, recursively. */
static void subarray(int nd, const int *sizes, const int *subs, const int *starts, int order,
                     MPI_Datatype t, int64_t base, struct iom_blocks *o)
{
    int64_t ext = extent_of(t);
    int64_t stride[32];
    if (nd <= 0 || nd > 32) { o->undecoded = 1; return; }
    /* stride[d]: bytes between consecutive indices of dimension d */
    if (order == MPI_ORDER_C) {
        stride[nd - 1] = ext;
        for (int d = nd - 2; d >= 0; d--) stride[d] = stride[d + 1] * sizes[d + 1];
    } else {
        stride[0] = ext;
        for (int d = 1; d < nd; d++) stride[d] = stride[d - 1] * sizes[d - 1];
    }
    int fast = order == MPI_ORDER_C ? nd - 1 : 0;
    int64_t idx[32] = {0};
    for (;;) {
        int64_t off = base;
        for (int d = 0; d < nd; d++) off += (starts[d] + idx[d]) * stride[d];
        repeat(t, subs[fast], off, ext, o);
        if (o->capped) return;
        /* next index over the other dimensions, slowest last */
        int d;
        if (order == MPI_ORDER_C) {
            for (d = nd - 2; d >= 0 && ++idx[d] == subs[d]; d--) idx[d] = 0;
            if (d < 0) return;
        } else {
            for (d = 1; d < nd && ++idx[d] == subs[d]; d++) idx[d] = 0;
            if (d >= nd) return;
        }
    }
}

static void flatten_at(MPI_Datatype t, int64_t base, struct iom_blocks *o)
{
    int ni, na, nd, comb;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS) { o->undecoded = 1; return; }
    if (comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_REAL ||
        comb == MPI_COMBINER_F90_COMPLEX || comb == MPI_COMBINER_F90_INTEGER) {
        int size;
        PMPI_Type_size(t, &size);
        add(o, base, size);
        return;
    }
    int *iv = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *av = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *dv = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    if (!iv || !av || !dv || PMPI_Type_get_contents(t, ni, na, nd, iv, av, dv) != MPI_SUCCESS) {
        o->undecoded = 1;
        free(iv); free(av); free(dv);
        return;
    }
    int64_t ext = nd ? extent_of(dv[0]) : 0;
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* lb and extent only change how copies tile */
        flatten_at(dv[0], base, o);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        repeat(dv[0], iv[0], base, ext, o);
        break;
    case MPI_COMBINER_VECTOR:
        for (int i = 0; i < iv[0] && !o->capped; i++)
            repeat(dv[0], iv[1], base + (int64_t)i * iv[2] * ext, ext, o);
        break;
    case MPI_COMBINER_HVECTOR:
        for (int i = 0; i < iv[0] && !o->capped; i++)
            repeat(dv[0], iv[1], base + (int64_t)i * av[0], ext, o);
        break;
    case MPI_COMBINER_INDEXED:
        for (int i = 0; i < iv[0] && !o->capped; i++)
            repeat(dv[0], iv[1 + i], base + (int64_t)iv[1 + iv[0] + i] * ext, ext, o);
        break;
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < iv[0] && !o->capped; i++)
            repeat(dv[0], iv[1 + i], base + av[i], ext, o);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (int i = 0; i < iv[0] && !o->capped; i++)
            repeat(dv[0], iv[1], base + (int64_t)iv[2 + i] * ext, ext, o);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < iv[0] && !o->capped; i++)
            repeat(dv[0], iv[1], base + av[i], ext, o);
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < iv[0] && !o->capped; i++)
            repeat(dv[i], iv[1 + i], base + av[i], extent_of(dv[i]), o);
        break;
    case MPI_COMBINER_SUBARRAY: {
        int n = iv[0];
        subarray(n, iv + 1, iv + 1 + n, iv + 1 + 2 * n, iv[1 + 3 * n], dv[0], base, o);
        break;
    }
    default: /* darray and anything newer */
        o->undecoded = 1;
    }
    for (int i = 0; i < nd; i++) {
        int a, b, c, k;
        if (PMPI_Type_get_envelope(dv[i], &a, &b, &c, &k) == MPI_SUCCESS && k != MPI_COMBINER_NAMED &&
            k != MPI_COMBINER_F90_REAL && k != MPI_COMBINER_F90_COMPLEX && k != MPI_COMBINER_F90_INTEGER)
            PMPI_Type_free(&dv[i]);
    }
    free(iv); free(av); free(dv);
}

void iom_flatten(MPI_Datatype type, struct iom_blocks *out)
{
    int size;
    MPI_Aint lb, ext;
    PMPI_Type_size(type, &size);
    PMPI_Type_get_extent(type, &lb, &ext);
    if (lb == 0 && ext == size) { /* contiguous: one block, whatever its construction */
        add(out, 0, size);
        return;
    }
    flatten_at(type, 0, out);
}
