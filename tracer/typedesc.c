/* Describe an MPI datatype as its constructor tree (MPI_Type_get_envelope and
 * MPI_Type_get_contents), children first, for the trace's type records: the
 * description of a view's filetype is the same size whatever the grid, where
 * its flattened pieces grow with it.  The combiners are given iomodel's own
 * codes (each MPI numbers them its own way).  A type with a combiner the
 * analyzer cannot flatten (darray, the deprecated _INTEGER forms, anything
 * newer) is not described: the caller falls back to pieces (typeflat.c).
 * Used at MPI_File_set_view, off the data path. */
#include "runtime.h"

#include <stdlib.h>
#include <string.h>

static int our_combiner(int comb)
{
    switch (comb) {
    case MPI_COMBINER_DUP: return IOM_T_DUP;
    case MPI_COMBINER_CONTIGUOUS: return IOM_T_CONTIGUOUS;
    case MPI_COMBINER_VECTOR: return IOM_T_VECTOR;
    case MPI_COMBINER_HVECTOR: return IOM_T_HVECTOR;
    case MPI_COMBINER_INDEXED: return IOM_T_INDEXED;
    case MPI_COMBINER_HINDEXED: return IOM_T_HINDEXED;
    case MPI_COMBINER_INDEXED_BLOCK: return IOM_T_INDEXED_BLOCK;
    case MPI_COMBINER_HINDEXED_BLOCK: return IOM_T_HINDEXED_BLOCK;
    case MPI_COMBINER_STRUCT: return IOM_T_STRUCT;
    case MPI_COMBINER_SUBARRAY: return IOM_T_SUBARRAY;
    case MPI_COMBINER_RESIZED: return IOM_T_RESIZED;
    default: return -1;
    }
}

static int is_named(int comb)
{
    return comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_REAL ||
           comb == MPI_COMBINER_F90_COMPLEX || comb == MPI_COMBINER_F90_INTEGER;
}

static int push_node(struct iom_tdesc *d, struct iom_tnode *n)
{
    if (d->count == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 8;
        struct iom_tnode *p = realloc(d->n, cap * sizeof *p);
        if (!p) return -1;
        d->n = p;
        d->cap = cap;
    }
    d->n[d->count] = *n;
    return (int)d->count++;
}

/* The node of t and, before it, its children's; its index, or -1. */
static int describe(MPI_Datatype t, struct iom_tdesc *d, int depth)
{
    int ni, na, nd, comb, size = 0;
    MPI_Aint lb = 0, ext = 0;
    if (depth > 64 || iom_real_MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS ||
        iom_real_MPI_Type_size(t, &size) != MPI_SUCCESS ||
        iom_real_MPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS)
        return -1;
    struct iom_tnode n = {0};
    n.size = size;
    n.lb = lb;
    n.extent = ext;
    if (is_named(comb)) {
        n.comb = IOM_T_NAMED;
        return push_node(d, &n);
    }
    int ours = our_combiner(comb);
    if (ours < 0 || ni < 0 || na < 0 || nd < 0) return -1;
    n.comb = (uint32_t)ours;
    n.ni = ni;
    n.na = na;
    n.nd = nd;
    n.iv = malloc(sizeof(int) * (size_t)(ni + 1));
    n.av = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    n.kids = malloc(sizeof(int32_t) * (size_t)(nd + 1));
    MPI_Datatype *dv = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    int got = n.iv && n.av && n.kids && dv &&
              iom_real_MPI_Type_get_contents(t, ni, na, nd, n.iv, n.av, dv) == MPI_SUCCESS;
    int ok = got;
    if (ok && ours == IOM_T_SUBARRAY) {        /* the order as the trace codes it: 0 C, 1 Fortran */
        int nd_ = n.iv[0];
        ok = nd_ >= 1 && ni >= 3 * nd_ + 2;
        if (ok) n.iv[1 + 3 * nd_] = n.iv[1 + 3 * nd_] == MPI_ORDER_C ? 0 : 1;
    }
    for (int i = 0; ok && i < nd; i++) {
        n.kids[i] = describe(dv[i], d, depth + 1);
        ok = n.kids[i] >= 0;
    }
    for (int i = 0; got && i < nd; i++) {     /* get_contents' derived types are the caller's to free */
        int a, b, c, k;
        if (iom_real_MPI_Type_get_envelope(dv[i], &a, &b, &c, &k) == MPI_SUCCESS && !is_named(k))
            iom_real_MPI_Type_free(&dv[i]);
    }
    free(dv);
    int at = ok ? push_node(d, &n) : -1;
    if (at < 0) {
        free(n.iv);
        free(n.av);
        free(n.kids);
    }
    return at;
}

int iom_describe(MPI_Datatype type, struct iom_tdesc *d)
{
    if (describe(type, d, 0) < 0) {
        iom_tdesc_free(d);
        return -1;
    }
    return 0;
}

void iom_tdesc_free(struct iom_tdesc *d)
{
    for (size_t i = 0; i < d->count; i++) {
        free(d->n[i].iv);
        free(d->n[i].av);
        free(d->n[i].kids);
    }
    free(d->n);
    memset(d, 0, sizeof *d);
}
