/* What the tracer's runtime files share with one another (the generated
 * wrappers see runtime.h alone): the lock and the buffers every record goes
 * into, the record types of the trace file, the open-file tables, the
 * tracer's own system calls, and the functions one file calls in another.
 * docs/trace-format.md is the reference for what the records hold. */
#ifndef IOMODEL_RUNTIME_SHARED_H
#define IOMODEL_RUNTIME_SHARED_H

#include "runtime.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum { META_ROUTINES = 1, META_OPEN = 2, META_VIEW = 3, META_PATH = 4, META_PROGRAM = 5, META_BUFFER = 6,
       META_LOST = 7, META_TYPE = 8, META_UNSEEN = 9 };
enum { PATH_DELETE = 1, PATH_FAILED_OPEN = 2 };   /* a path record's event, by what it did */
enum { END_FINALIZE = 0, END_ABORT = 1, END_EXIT = 2, END_SIGNAL = 3, END_NO_MPI = 4 }; /* END_SIGNAL | signo << 8 */
struct meta_header { uint32_t type, len; uint64_t seq; };

/* One lock for the buffers, taken on every record: POSIX calls come from any
 * thread, whatever MPI's thread level.  A spinlock, for an uncontended one is
 * one atomic exchange; a waiter yields now and then (a holder may be writing a
 * chunk).  in_buffers: this thread is changing the buffers, so a signal handler
 * that interrupted it must not write them out (the fences keep the compiler
 * from moving buffer stores outside the mark); initial-exec, as iom_depth, so
 * that marking costs no __tls_get_addr call. */
extern IOM_HIDDEN int lock;
extern __thread volatile sig_atomic_t in_buffers __attribute__((tls_model("initial-exec"))) IOM_HIDDEN;

static inline void spin_lock(void)
{
    for (unsigned n = 0; __atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE); n++) {
        if (n % 256 == 255) sched_yield();
#if defined(__x86_64__) || defined(__i386__)
        else __builtin_ia32_pause();
#endif
    }
}

#define LOCK()   do { spin_lock(); in_buffers = 1; __atomic_signal_fence(__ATOMIC_SEQ_CST); } while (0)
#define UNLOCK() do { __atomic_signal_fence(__ATOMIC_SEQ_CST); in_buffers = 0; \
                      __atomic_store_n(&lock, 0, __ATOMIC_RELEASE); } while (0)

/* buffers.c: the buffers, and the trace file they go to */
extern IOM_HIDDEN int fd;
extern IOM_HIDDEN int my_rank;
extern IOM_HIDDEN struct iom_event *ev_buf;
extern IOM_HIDDEN size_t ev_n, ev_cap;
extern IOM_HIDDEN uint64_t ev_seq;
extern IOM_HIDDEN unsigned char *meta_buf;
extern IOM_HIDDEN size_t meta_n, meta_cap;
extern IOM_HIDDEN int started;
extern IOM_HIDDEN size_t ev_cap_max, meta_cap_max;
extern IOM_HIDDEN size_t ev_cap_run, meta_cap_run;
extern IOM_HIDDEN uint64_t file_off;
extern IOM_HIDDEN uint64_t stop_off;
extern IOM_HIDDEN char trace_dir[4000];
extern IOM_HIDDEN int joined;
extern IOM_HIDDEN int64_t last_buffer_offset;
uint64_t push_any(int op, unsigned flags, int slot, int64_t a, int64_t b, uint64_t t0, uint64_t t1) IOM_HIDDEN;
void flush_events(void) IOM_HIDDEN;
void *meta_begin(uint32_t type, size_t len, uint64_t seq, size_t *total) IOM_HIDDEN;
void meta_end(void *p, size_t total) IOM_HIDDEN;
void meta_path(uint32_t type, uint64_t seq, const void *fixed, size_t flen, const char *path) IOM_HIDDEN;
void note_new_buffer(uint32_t off, uint64_t seq) IOM_HIDDEN;
void end_chunk(int how) IOM_HIDDEN;
void finish(int how) IOM_HIDDEN;
int open_trace(const char *dir, int rank, int nranks, int thread_level, int exclusive,
               uint64_t tick0, uint64_t mono0, uint64_t cal_ticks, uint64_t cal_ns) IOM_HIDDEN;
void set_time_zero(uint64_t tick0, uint64_t mono0) IOM_HIDDEN;
void run_buffers(void) IOM_HIDDEN;

/* The event record at the buffer's end (room checked by the caller); a byte
 * count or duration past 32 bits saturates (push_any adds its extension). */
static inline __attribute__((always_inline)) void put_event(int op, unsigned flags, int slot, int64_t a,
                                                            int64_t b, uint64_t t0, uint64_t dt)
{
    struct iom_event *e = &ev_buf[ev_n++];
    e->op = (uint8_t)op;
    e->flags = (uint8_t)flags;
    e->slot = (uint16_t)slot;
    e->lclock = iom_lclock;
    e->offset = a;
    e->t0 = t0;
    e->dt = dt >= UINT32_MAX ? UINT32_MAX : (uint32_t)dt;
    e->bytes = (uint64_t)b >= UINT32_MAX ? UINT32_MAX : (uint32_t)b;
}

/* push() inlined where there is room and nothing needs an extension: the
 * common case of every recorded call. */
static inline __attribute__((always_inline)) uint64_t push(int op, unsigned flags, int slot, int64_t a,
                                                           int64_t b, uint64_t t0, uint64_t t1)
{
    uint64_t dt = t1 - t0;
    if (IOM_UNLIKELY((uint64_t)b >= UINT32_MAX || dt >= UINT32_MAX || ev_n + 4 > ev_cap))
        return push_any(op, flags, slot, a, b, t0, t1);
    put_event(op, flags, slot, a, b, t0, dt);
    return ev_seq++;
}

/* Where a data access's buffer sits within 4 KiB: a copy between the page cache
 * and a buffer a few bytes past a 4 KiB boundary can run several times slower
 * (4K aliasing of its loads and stores), and malloc puts large buffers 16 bytes
 * past a page.  Recorded when it changes, so an application that reuses its
 * buffers costs one record per buffer, not one per call. */
static inline void note_buffer(const void *buf, uint64_t seq)
{
    if (!buf) return;                /* a call with no buffer of the application's (fprintf) */
    uint32_t off = (uint32_t)((uintptr_t)buf & 4095u);
    if (IOM_UNLIKELY((int64_t)off != last_buffer_offset)) note_new_buffer(off, seq);
}

/* clock.c */
uint64_t mono_ns(clockid_t id) IOM_HIDDEN;
void clock_pair(uint64_t *ticks, uint64_t *ns) IOM_HIDDEN;

/* The tracer's own file I/O, straight to the kernel: the library defines open,
 * write and the rest for the application, and a call of its own would be one. */
static inline int sys_open(const char *path, int flags, mode_t mode)
{
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}
static inline int sys_close(int f) { return (int)syscall(SYS_close, f); }
static inline ssize_t sys_writev(int f, const struct iovec *v, int n) { return syscall(SYS_writev, f, v, n); }
static inline ssize_t sys_pwrite(int f, const void *b, size_t n, off_t o) { return syscall(SYS_pwrite64, f, b, n, o); }
static inline ssize_t sys_read(int f, void *b, size_t n) { return syscall(SYS_read, f, b, n); }
static inline int sys_ftruncate(int f, off_t n) { return (int)syscall(SYS_ftruncate, f, n); }
static inline int sys_mkdir(const char *path, mode_t mode) { return (int)syscall(SYS_mkdirat, AT_FDCWD, path, mode); }
static inline int sys_unlink(const char *path) { return (int)syscall(SYS_unlinkat, AT_FDCWD, path, 0); }
static inline off_t sys_lseek(int f, off_t o, int w) { return (off_t)syscall(SYS_lseek, f, o, w); }

/* tables.c: open files and pending requests */
/* Open addressing keyed by MPI handle (a pointer in Open MPI): open files
 * (value: slot) and pending nonblocking requests (value: seq << 16 | slot). */
struct ptrmap { uintptr_t *key; uint64_t *val; size_t cap, used; };
#define TOMB ((uintptr_t)1)
/* An open file: MPI-IO's (keyed by handle in `files`) or a POSIX descriptor's
 * (iom_fdslot[fd] = slot + 1), whose position the tracer keeps. */
struct slot { uint64_t begin_seq; int busy; int append; int64_t pos; int refs; int64_t spos; };
extern IOM_HIDDEN struct ptrmap files, requests;
extern IOM_HIDDEN struct slot *slots;
extern IOM_HIDDEN int nslots, *free_slots, nfree;
extern IOM_HIDDEN MPI_File last_fh;      /* 0: none (the lookup's cache) */
extern IOM_HIDDEN int last_slot;
int pm_get(const struct ptrmap *m, uintptr_t k, uint64_t *v) IOM_HIDDEN;
void pm_put(struct ptrmap *m, uintptr_t k, uint64_t v) IOM_HIDDEN;
int pm_del(struct ptrmap *m, uintptr_t k, uint64_t *v) IOM_HIDDEN;
int slot_new(void) IOM_HIDDEN;
void slot_free(int s) IOM_HIDDEN;
int slot_alloc(MPI_File fh) IOM_HIDDEN;
void forget(int f, int slot) IOM_HIDDEN;

static inline int slot_lookup(MPI_File fh)
{
    if (fh == last_fh) return last_slot;
    uint64_t v;
    if (!pm_get(&files, (uintptr_t)fh, &v)) return IOM_NO_SLOT;
    last_fh = fh;
    last_slot = (int)v;
    return last_slot;
}

/* typerecords.c */
uint32_t emit_types(const struct iom_tdesc *d, uint64_t seq) IOM_HIDDEN;

/* paths.c: which files are followed */
void follow_init(void) IOM_HIDDEN;
int full_path(const char *dir, const char *path, char *out, size_t size) IOM_HIDDEN;
int excluded(const char *path) IOM_HIDDEN;
int fd_path(int f, char *out, size_t size) IOM_HIDDEN;

/* record_mpi.c: how file views are kept (IOMODEL_VIEWS, IOMODEL_MAX_VIEW_BLOCKS) */
extern IOM_HIDDEN size_t max_view_blocks;
extern IOM_HIDDEN int view_types, view_pieces;

/* mpilib.c, runtime.c */
extern IOM_HIDDEN int mpi_unusable;
extern IOM_HIDDEN int nonmpi;

#endif
