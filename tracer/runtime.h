/* iomodel tracer runtime: state and recording functions shared by the
 * generated wrappers (wrappers.c), the runtime (runtime.c) and the datatype
 * flattener (typeflat.c).  The on-disk format is described in
 * docs/trace-format.md; keep the two in step. */
#ifndef IOMODEL_RUNTIME_H
#define IOMODEL_RUNTIME_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define IOM_HIDDEN __attribute__((visibility("hidden")))
#define IOM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define IOM_LIKELY(x) __builtin_expect(!!(x), 1)

#define IOM_TRACE_VERSION 3
#define IOM_NO_SLOT 0xFFFFu

/* Event flags (struct iom_event.flags). */
#define IOM_F_COLL 0x01u
#define IOM_F_WRITE 0x02u
#define IOM_F_READ 0x04u
#define IOM_F_POST 0x08u      /* nonblocking post or split-collective begin */
#define IOM_F_COMPLETE 0x10u  /* completes the post whose seq is in offset */
#define IOM_F_ERROR 0x20u     /* the MPI routine returned an error */
#define IOM_F_NOPOS 0x40u     /* the file pointer position was not available */
#define IOM_F_SAMECALL 0x80u  /* another completion made by the same Wait/Test call */

/* One traced call: 32 bytes, written as is (little-endian hosts).  When
 * bytes or dt is UINT32_MAX, the next record is an extension (op
 * IOM_OP_EXTENSION) whose offset holds the bytes and t0 the return time. */
struct iom_event {
    uint8_t op;       /* index into the routine table */
    uint8_t flags;
    uint16_t slot;    /* open-file slot, IOM_NO_SLOT if none */
    uint32_t lclock;  /* application communication calls so far (mod 2^32) */
    int64_t offset;   /* etype offset in the view, or a routine argument */
    uint64_t t0;      /* clock ticks at entry */
    uint32_t dt;      /* ticks from entry to return */
    uint32_t bytes;   /* count * type size, or a routine argument */
};
_Static_assert(sizeof(struct iom_event) == 32, "event record must stay 32 bytes");
#define IOM_OP_EXTENSION 0xFF

/* Tracing state read by the wrappers on every call: iom_depth is 1 inside a
 * traced MPI call, 2 inside a recorded POSIX one; iom_on: MPI tracing (MPI_Init
 * to MPI_Finalize); iom_pon: POSIX and stdio tracing (from the library's load);
 * iom_under: record POSIX calls made inside MPI calls (IOMODEL_UNDER_MPI);
 * iom_fdslot[fd]: the followed descriptor's slot + 1, 0 if not followed. */
extern __thread int iom_depth __attribute__((tls_model("initial-exec")));
extern IOM_HIDDEN int iom_on;
extern IOM_HIDDEN int iom_pon;
extern IOM_HIDDEN int iom_under;
extern IOM_HIDDEN int *iom_fdslot;
extern IOM_HIDDEN int iom_nfd;
extern IOM_HIDDEN int iom_mt;
extern IOM_HIDDEN uint32_t iom_lclock;
extern IOM_HIDDEN int iom_npending;

extern const int iom_nops;
extern const char *const iom_op_names[];
void iom_resolve_reals(void) IOM_HIDDEN;
void *iom_dlsym_next(const char *name) IOM_HIDDEN;

static inline uint64_t iom_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static inline void iom_count_comm(void)
{
    if (iom_mt)
        __atomic_fetch_add(&iom_lclock, 1, __ATOMIC_RELAXED);
    else
        iom_lclock++;
}

/* Life cycle. */
void iom_start(int op, uint64_t t0, int thread_level) IOM_HIDDEN;
void iom_stop(int op, uint64_t t0) IOM_HIDDEN;
void iom_abort(int op, uint64_t t0) IOM_HIDDEN;

/* Recording, called with iom_depth set. */
int64_t iom_pos_individual(MPI_File fh) IOM_HIDDEN;
int64_t iom_pos_shared(MPI_File fh) IOM_HIDDEN;
void iom_record_io(int op, unsigned flags, MPI_File fh, int64_t pos, const void *buf, int count,
                   MPI_Datatype type, uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_record_post(int op, unsigned flags, MPI_File fh, int64_t pos, const void *buf, int count,
                     MPI_Datatype type, uint64_t t0, uint64_t t1,
                     MPI_Request req) IOM_HIDDEN;
void iom_record_begin(int op, unsigned flags, MPI_File fh, int64_t pos, const void *buf, int count,
                      MPI_Datatype type, uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_record_end(int op, MPI_File fh, uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_record_call(int op, unsigned flags, MPI_File fh, int64_t a, int64_t b,
                     uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_record_open(int op, int rc, MPI_Comm comm, const char *path, int amode,
                     MPI_File fh, uint64_t t0, uint64_t t1) IOM_HIDDEN;
int iom_slot_of(MPI_File fh) IOM_HIDDEN;
void iom_record_close(int op, int rc, int slot, uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_record_delete(int op, int rc, const char *path, uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_record_view(int op, int rc, MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                     MPI_Datatype filetype, const char *datarep, uint64_t t0,
                     uint64_t t1) IOM_HIDDEN;

/* Completion of nonblocking I/O: the requests are copied before the MPI call
 * (which nulls them) and the completed ones looked up afterwards. */
MPI_Request *iom_save_requests(int n, const MPI_Request *reqs, MPI_Request *local,
                               int nlocal) IOM_HIDDEN;
void iom_complete(int op, const MPI_Request *saved, int n, const int *which,
                  uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_forget_request(MPI_Request req) IOM_HIDDEN;

#define IOM_CUR (-1)       /* a POSIX access at the descriptor's position, kept by the tracer */

/* POSIX and stdio (posix_macros.h): 0 pass the call through, 1 record it as the
 * application's, 2 as the layer under an MPI call. */
static inline int iom_p_mode(void)
{
    if (IOM_LIKELY(iom_depth == 0)) return iom_pon;
    return iom_depth == 1 && iom_under ? 2 * iom_pon : 0;
}

static inline int iom_fd_slot(int fd)
{
    return (unsigned)fd < (unsigned)iom_nfd ? iom_fdslot[fd] - 1 : -1;
}

void iom_p_open(int op, int fd, int dirfd, const char *path, int flags, int err,
                uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_s_open(int op, FILE *fp, const char *path, const char *mode, int err,
                uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_s_fdopen(int op, FILE *fp, int fd, const char *mode, int err,
                  uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_p_io(int op, unsigned flags, int slot, int64_t pos, int64_t rc, int64_t asked,
              const void *buf, int fd, uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_p_seek(int op, int slot, int64_t rc, int64_t offset, int whence,
                uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_p_call(int op, unsigned flags, int slot, int64_t a, int64_t b,
                uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_p_close(int op, int rc, int fd, int slot, uint64_t t0, uint64_t t1) IOM_HIDDEN;
void iom_p_forget(int fd, int slot) IOM_HIDDEN;
void iom_p_unlink(int op, int rc, const char *path, uint64_t t0, uint64_t t1) IOM_HIDDEN;
int64_t iom_s_tell(FILE *fp) IOM_HIDDEN;

/* Filetype flattening (typeflat.c). */
struct iom_block { int64_t off, len; };
struct iom_blocks {
    struct iom_block *b;
    size_t n, cap, max;
    int capped;      /* stopped at max blocks */
    int undecoded;   /* a combiner could not be decoded */
};
void iom_flatten(MPI_Datatype type, struct iom_blocks *out) IOM_HIDDEN;

#endif
