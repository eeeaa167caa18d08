/* Recording the MPI-IO calls the generated wrappers trace: data accesses,
 * their completion, opens, closes, deletes and file views. */
#define _GNU_SOURCE
#include "runtime_shared.h"

#include <stdlib.h>

/* ------------------------------------------------------------- recording */

int64_t iom_pos_individual(MPI_File fh)
{
    MPI_Offset pos;
    return iom_real_MPI_File_get_position(fh, &pos) == MPI_SUCCESS ? (int64_t)pos : -1;
}

int64_t iom_pos_shared(MPI_File fh)
{
    MPI_Offset pos;
    return iom_real_MPI_File_get_position_shared(fh, &pos) == MPI_SUCCESS ? (int64_t)pos : -1;
}

static inline int64_t nbytes(int64_t count, MPI_Datatype type)
{
    int size = 0;
    if (count && iom_real_MPI_Type_size(type, &size) != MPI_SUCCESS) return -1;
    return (int64_t)count * size;
}

size_t max_view_blocks;
int view_types = 1;                  /* IOMODEL_VIEWS: describe a view's filetype (types, both) */
int view_pieces;                     /*   flatten it into pieces (pieces, both, or not describable) */

/* One data call's event pushed and its buffer noted, under the lock; its
 * sequence number, and the file's slot in *slot. */
static uint64_t push_data(int op, unsigned flags, MPI_File fh, int64_t pos, const void *buf, int64_t b,
                          uint64_t t0, uint64_t t1, int *slot)
{
    if (pos < 0) flags |= IOM_F_NOPOS;
    *slot = slot_lookup(fh);
    uint64_t seq = push(op, flags, *slot, pos, b, t0, t1);
    note_buffer(buf, seq);
    return seq;
}

void iom_record_io(int op, unsigned flags, MPI_File fh, int64_t pos, const void *buf, int64_t count,
                   MPI_Datatype type, uint64_t t0, uint64_t t1)
{
    int64_t b = nbytes(count, type);
    int slot;
    LOCK();
    push_data(op, flags, fh, pos, buf, b, t0, t1, &slot);
    UNLOCK();
}

void iom_record_post(int op, unsigned flags, MPI_File fh, int64_t pos, const void *buf, int64_t count,
                     MPI_Datatype type, uint64_t t0, uint64_t t1, MPI_Request req)
{
    int64_t b = nbytes(count, type);
    int slot;
    LOCK();
    uint64_t seq = push_data(op, flags, fh, pos, buf, b, t0, t1, &slot);
    if (req != IOM_NO_REQUEST) {
        uint64_t old;
        if (!pm_get(&requests, (uintptr_t)req, &old)) iom_npending++;
        pm_put(&requests, (uintptr_t)req, seq << 16 | (uint64_t)slot);
    }
    UNLOCK();
}

void iom_record_begin(int op, unsigned flags, MPI_File fh, int64_t pos, const void *buf, int64_t count,
                      MPI_Datatype type, uint64_t t0, uint64_t t1)
{
    int64_t b = nbytes(count, type);
    int slot;
    LOCK();
    uint64_t seq = push_data(op, flags, fh, pos, buf, b, t0, t1, &slot);
    if (slot != (int)IOM_NO_SLOT) slots[slot].begin_seq = seq;
    UNLOCK();
}

void iom_record_end(int op, MPI_File fh, uint64_t t0, uint64_t t1)
{
    LOCK();
    int slot = slot_lookup(fh);
    uint64_t seq = UINT64_MAX;
    if (slot != (int)IOM_NO_SLOT) {
        seq = slots[slot].begin_seq;
        slots[slot].begin_seq = UINT64_MAX;
    }
    push(op, IOM_F_COMPLETE, slot, (int64_t)seq, 0, t0, t1);
    UNLOCK();
}

void iom_record_call(int op, unsigned flags, MPI_File fh, int64_t a, int64_t b,
                     uint64_t t0, uint64_t t1)
{
    LOCK();
    push(op, flags, slot_lookup(fh), a, b, t0, t1);
    UNLOCK();
}

MPI_Request *iom_save_requests(int n, const MPI_Request *reqs, MPI_Request *local, int nlocal)
{
    MPI_Request *s = n <= nlocal ? local : malloc(sizeof *s * (size_t)n);
    if (!s) return local; /* cannot save: iom_complete then sees nothing */
    memcpy(s, reqs, sizeof *s * (size_t)(n > 0 ? n : 0));
    return s;
}

/* Record a completion event for each completed request that was an I/O post:
 * all n saved requests, or those at the n indices in `which`. */
void iom_complete(int op, const MPI_Request *saved, int n, const int *which, uint64_t t0, uint64_t t1)
{
    unsigned same = 0;
    LOCK();
    for (int i = 0; i < n && iom_npending; i++) {
        MPI_Request r = saved[which ? which[i] : i];
        uint64_t v;
        if (!pm_del(&requests, (uintptr_t)r, &v)) continue;
        iom_npending--;
        push(op, IOM_F_COMPLETE | same, (int)(v & 0xFFFF), (int64_t)(v >> 16), 0, t0, t1);
        same = IOM_F_SAMECALL;
    }
    UNLOCK();
}

void iom_forget_request(MPI_Request req)
{
    LOCK();
    if (pm_del(&requests, (uintptr_t)req, NULL)) iom_npending--;
    UNLOCK();
}

void iom_record_open(int op, int rc, MPI_Comm comm, const char *path, int amode,
                     MPI_File fh, uint64_t t0, uint64_t t1)
{
    int csize = 0, crank = 0;
    if (rc == MPI_SUCCESS) {
        iom_real_MPI_Comm_size(comm, &csize);
        iom_real_MPI_Comm_rank(comm, &crank);
    }
    LOCK();
    int slot = rc == MPI_SUCCESS ? slot_alloc(fh) : (int)IOM_NO_SLOT;
    uint64_t seq = push(op, rc == MPI_SUCCESS ? 0 : IOM_F_ERROR, slot, 0, 0, t0, t1);
    if (slot != (int)IOM_NO_SLOT) {
        struct { uint32_t slot; int32_t amode, comm_size, comm_rank; } fixed = {(uint32_t)slot, amode, csize, crank};
        meta_path(META_OPEN, seq, &fixed, sizeof fixed, path ? path : "");
    } else { /* a failed open (or one past the slots): the file it named, no open */
        struct { uint32_t kind; int32_t amode; } fixed = {PATH_FAILED_OPEN, amode};
        meta_path(META_PATH, seq, &fixed, sizeof fixed, path ? path : "");
    }
    UNLOCK();
}

void iom_record_close(int op, int rc, int slot, uint64_t t0, uint64_t t1)
{
    LOCK();
    push(op, rc == MPI_SUCCESS ? 0 : IOM_F_ERROR, slot, 0, 0, t0, t1);
    if (rc == MPI_SUCCESS && slot != (int)IOM_NO_SLOT && slots[slot].busy) {
        uintptr_t k = 0;
        for (size_t i = 0; i < files.cap && !k; i++) /* closes are rare: a scan is fine */
            if (files.key[i] > TOMB && files.val[i] == (uint64_t)slot) k = files.key[i];
        if (k) pm_del(&files, k, NULL);
        slots[slot].busy = 0;
        free_slots[nfree++] = slot;
        last_fh = 0;
    }
    UNLOCK();
}

void iom_record_delete(int op, int rc, const char *path, uint64_t t0, uint64_t t1)
{
    LOCK();
    uint64_t seq = push(op, rc == MPI_SUCCESS ? 0 : IOM_F_ERROR, IOM_NO_SLOT, 0, 0, t0, t1);
    struct { uint32_t kind; int32_t pad; } fixed = {PATH_DELETE, 0};
    meta_path(META_PATH, seq, &fixed, sizeof fixed, path ? path : "");
    UNLOCK();
}

void iom_record_view(int op, int rc, MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                     MPI_Datatype filetype, const char *datarep, uint64_t t0, uint64_t t1)
{
    struct iom_blocks bl = {0};
    bl.max = max_view_blocks;
    struct iom_tdesc desc = {0};
    int esize = 0, fsize = 0, described = 0;
    MPI_Aint lb = 0, extent = 0;
    if (rc == MPI_SUCCESS) {
        iom_real_MPI_Type_size(etype, &esize);
        iom_real_MPI_Type_size(filetype, &fsize);
        iom_real_MPI_Type_get_extent(filetype, &lb, &extent);
        described = view_types && iom_describe(filetype, &desc) == 0;
        if (!described || view_pieces) iom_flatten(filetype, &bl);
    }
    size_t rlen = datarep ? strlen(datarep) : 0;
    LOCK();
    int slot = slot_lookup(fh);
    uint64_t seq = push(op, rc == MPI_SUCCESS ? 0 : IOM_F_ERROR, slot, (int64_t)disp, 0, t0, t1);
    /* the filetype's description: its id + 1 in the record (0: pieces alone) */
    uint32_t type_ref = described ? emit_types(&desc, seq) + 1 : 0;
    if (described && !type_ref && !bl.n) bl.undecoded = 1;   /* out of memory: neither */
    if (rc == MPI_SUCCESS) {
        struct {
            uint32_t slot, flags;
            int64_t disp, etype_size, ftype_size, ftype_lb, ftype_extent;
            uint64_t nblocks;
            uint32_t datarep_len, type_ref;
        } fixed = {(uint32_t)slot, (uint32_t)(bl.capped | bl.undecoded << 1), disp, esize,
                   fsize, lb, extent, bl.n, (uint32_t)rlen, type_ref};
        size_t blen = bl.n * sizeof(struct iom_block), total;
        unsigned char *p = meta_begin(META_VIEW, sizeof fixed + blen + rlen, seq, &total);
        if (p) {
            unsigned char *q = p + sizeof(struct meta_header);
            memcpy(q, &fixed, sizeof fixed);
            if (blen) memcpy(q + sizeof fixed, bl.b, blen);
            if (rlen) memcpy(q + sizeof fixed + blen, datarep, rlen);
            meta_end(p, total);
        }
    }
    UNLOCK();
    free(bl.b);
    iom_tdesc_free(&desc);
}
