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

/* Append `count` copies of the blocks `one`, copy i at base + i * stride.  Copies
 * that tile without a hole (one block as long as the stride) are one block. */
static void repeat_blocks(const struct iom_blocks *one, int64_t count, int64_t base, int64_t stride,
                          struct iom_blocks *o)
{
    if (one->n == 1 && one->b[0].off == 0 && one->b[0].len == stride) {
        add(o, base, count * stride);
        return;
    }
    for (int64_t i = 0; i < count && !o->capped; i++)
        for (size_t j = 0; j < one->n; j++) add(o, base + i * stride + one->b[j].off, one->b[j].len);
}

/* Append `count` copies of the blocks of `t`, copy i at base + i * stride. */
static void repeat(MPI_Datatype t, int64_t count, int64_t base, int64_t stride, struct iom_blocks *o)
{
    if (count <= 0 || o->capped) return;
    struct iom_blocks one = {0};
    one.max = o->max;
    flatten_at(t, 0, &one);
    if (one.undecoded) o->undecoded = 1;
    repeat_blocks(&one, count, base, stride, o);
    if (one.capped) o->capped = 1;
    free(one.b);
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    iom_real_MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* Blocks of a subarray, in type-map order.  The element is flattened once.  When it
 * is contiguous, the run along the fastest dimension grows over every dimension the
 * subarray covers whole (and the next one), so a checkpoint's slab of a 3-D array
 * is a few long runs, not one add() per element: MPI_File_set_view stays cheap
 * (it ran 1.2 ms for S3D-IO's 2 MiB views, one element at a time). */
static void subarray(int nd, const int *sizes, const int *subs, const int *starts, int order,
                     MPI_Datatype t, int64_t base, struct iom_blocks *o)
{
    int64_t ext = extent_of(t);
    int64_t stride[32];
    int dim[32]; /* dimensions, fastest first */
    if (nd <= 0 || nd > 32) { o->undecoded = 1; return; }
    for (int i = 0; i < nd; i++) dim[i] = order == MPI_ORDER_C ? nd - 1 - i : i;
    /* stride[d]: bytes between consecutive indices of dimension d */
    stride[dim[0]] = ext;
    for (int i = 1; i < nd; i++) stride[dim[i]] = stride[dim[i - 1]] * sizes[dim[i - 1]];
    struct iom_blocks one = {0};
    one.max = o->max;
    flatten_at(t, 0, &one);
    if (one.undecoded) o->undecoded = 1;
    /* dimensions dim[0..k] form one run of `count` copies of the element */
    int k = 0;
    int64_t count = subs[dim[0]];
    if (one.n == 1 && one.b[0].off == 0 && one.b[0].len == ext) {
        while (k + 1 < nd && subs[dim[k]] == sizes[dim[k]]) {
            k++;
            count *= subs[dim[k]];
        }
    }
    int64_t idx[32] = {0};
    for (;;) {
        int64_t off = base;
        for (int d = 0; d < nd; d++) off += (starts[d] + idx[d]) * stride[d];
        repeat_blocks(&one, count, off, ext, o);
        if (o->capped) break;
        /* next index over the dimensions outside the run, fastest first */
        int i;
        for (i = k + 1; i < nd && ++idx[dim[i]] == subs[dim[i]]; i++) idx[dim[i]] = 0;
        if (i >= nd) break;
    }
    if (one.capped) o->capped = 1; /* the element alone is over the cap: its first blocks are kept */
    free(one.b);
}

static void flatten_at(MPI_Datatype t, int64_t base, struct iom_blocks *o)
{
    int ni, na, nd, comb;
    if (iom_real_MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS) { o->undecoded = 1; return; }
    if (comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_REAL ||
        comb == MPI_COMBINER_F90_COMPLEX || comb == MPI_COMBINER_F90_INTEGER) {
        int size;
        iom_real_MPI_Type_size(t, &size);
        add(o, base, size);
        return;
    }
    int *iv = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *av = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *dv = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    if (!iv || !av || !dv || iom_real_MPI_Type_get_contents(t, ni, na, nd, iv, av, dv) != MPI_SUCCESS) {
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
        if (iom_real_MPI_Type_get_envelope(dv[i], &a, &b, &c, &k) == MPI_SUCCESS && k != MPI_COMBINER_NAMED &&
            k != MPI_COMBINER_F90_REAL && k != MPI_COMBINER_F90_COMPLEX && k != MPI_COMBINER_F90_INTEGER)
            iom_real_MPI_Type_free(&dv[i]);
    }
    free(iv); free(av); free(dv);
}

void iom_flatten(MPI_Datatype type, struct iom_blocks *out)
{
    int size;
    MPI_Aint lb, ext;
    iom_real_MPI_Type_size(type, &size);
    iom_real_MPI_Type_get_extent(type, &lb, &ext);
    if (lb == 0 && ext == size) { /* contiguous: one block, whatever its construction */
        add(out, 0, size);
        return;
    }
    flatten_at(type, 0, out);
}
