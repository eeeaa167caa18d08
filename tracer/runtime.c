/* iomodel tracer runtime: trace file, buffers, open-file slots, nonblocking
 * requests, and the recording functions the generated wrappers call (MPI-IO,
 * and the application's own POSIX and stdio I/O).
 *
 * Every rank writes <dir>/rank-NNNNNN.iot: a header, then chunks of events
 * (fixed 32-byte records) and of metadata (opens, views, buffers, ...), each chunk
 * written whole when its fixed-size buffer fills, at MPI_Finalize, at
 * MPI_Abort, at exit and on a signal that stops the job (SIGTERM and the
 * like); at MPI_Finalize a large job copies them into one file (jobfile.c).
 * docs/trace-format.md is the reference. */
#define _GNU_SOURCE
#include "runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <link.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

__thread int iom_depth __attribute__((tls_model("initial-exec")));
int iom_on;
int iom_foreign;
int iom_pon;
int iom_under;
int *iom_fdslot;
int iom_nfd;
int iom_mt;
uint32_t iom_lclock;
int iom_npending;

/* Real functions the runtime itself calls (defined in wrappers.c). */

#define CHUNK_MAGIC 0x4b4e4843u /* "CHNK" */
enum { CHUNK_EVENTS = 1, CHUNK_META = 2, CHUNK_END = 3, CHUNK_STOP = 4 };
enum { META_ROUTINES = 1, META_OPEN = 2, META_VIEW = 3, META_PATH = 4, META_PROGRAM = 5, META_BUFFER = 6,
       META_LOST = 7, META_TYPE = 8, META_UNSEEN = 9 };
enum { PATH_DELETE = 1, PATH_FAILED_OPEN = 2 };   /* a path record's event, by what it did */
enum { END_FINALIZE = 0, END_ABORT = 1, END_EXIT = 2, END_SIGNAL = 3, END_NO_MPI = 4 }; /* END_SIGNAL | signo << 8 */

struct file_header {
    char magic[8];           /* "IOMTRACE" */
    uint32_t version, header_size;
    int32_t rank, nranks;
    uint32_t pid;
    int32_t thread_level;
    uint32_t clock_kind;     /* 1: x86 TSC ticks, 0: nanoseconds */
    uint32_t event_size;
    uint64_t tick_origin;    /* ticks at time zero (after a barrier in MPI_Init) */
    uint64_t mono_origin_ns; /* CLOCK_MONOTONIC at time zero */
    int64_t real_origin_ns;  /* CLOCK_REALTIME at time zero */
    uint64_t cal_ticks;      /* an earlier (ticks, monotonic ns) pair for the */
    uint64_t cal_ns;         /* tick rate, refined by every chunk's pair */
    char hostname[128];
    char reserved[48];
};
_Static_assert(sizeof(struct file_header) == 256, "header must stay 256 bytes");

struct chunk_header {
    uint32_t magic;
    uint16_t type, header_size;
    uint64_t payload_len;
    uint64_t count;        /* records in the chunk */
    uint64_t first_seq;    /* seq of the first event (events), events so far (others) */
    uint64_t ticks, ns;    /* clock pair at flush time */
    uint64_t checksum;     /* sum of the payload's 64-bit words and of the fields above */
};
_Static_assert(sizeof(struct chunk_header) == 56, "chunk header must stay 56 bytes");

struct meta_header { uint32_t type, len; uint64_t seq; };

/* The stop chunk: written with count 0 right after the header, so that its
 * blocks are the file's from the start; if a write fails (a full disk), it is
 * overwritten in place with where the trace's whole chunks end and why, and
 * again at the end with how the run ended. */
#define STILL_RUNNING 0xFFFFFFFFu
struct stop_record {
    uint64_t good_end;      /* bytes of the file that are whole chunks */
    uint64_t events_kept;   /* events in those chunks */
    uint64_t events_total;  /* events the rank made (so far, while running) */
    int32_t error;          /* errno of the failed write */
    uint32_t how;           /* how the run ended (END_*), STILL_RUNNING until it does */
    uint32_t lclock, pad;
};
_Static_assert(sizeof(struct stop_record) == 40, "stop record must stay 40 bytes");

/* ------------------------------------------------------------------ state */

/* One lock for the buffers, taken on every record: POSIX calls come from any
 * thread, whatever MPI's thread level.  A spinlock, for an uncontended one is
 * one atomic exchange; a waiter yields now and then (a holder may be writing a
 * chunk).  in_buffers: this thread is changing the buffers, so a signal handler
 * that interrupted it must not write them out (the fences keep the compiler
 * from moving buffer stores outside the mark); initial-exec, as iom_depth, so
 * that marking costs no __tls_get_addr call. */
static int lock;
static __thread volatile sig_atomic_t in_buffers __attribute__((tls_model("initial-exec")));

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

static int fd = -1;
static int my_rank;
static struct iom_event *ev_buf;
static size_t ev_n, ev_cap;          /* records in the buffer, its capacity */
static uint64_t ev_seq;              /* events recorded so far (extensions not counted) */
static uint64_t ev_first;            /* seq of the buffer's first event */
static unsigned char *meta_buf;
static size_t meta_n, meta_cap;
static uint64_t meta_count;
static size_t max_view_blocks;
static int view_types = 1;           /* IOMODEL_VIEWS: describe a view's filetype (types, both) */
static int view_pieces;              /*   flatten it into pieces (pieces, both, or not describable) */
static int write_failed, write_errno;
static int started;                  /* the file exists: MPI_Init (or a non-MPI process's exit) */
static int finalized;                /* MPI_Finalize passed: the file stays open for what follows */
static size_t ev_cap_max, meta_cap_max;   /* how far the buffers grow before the file exists */
static size_t ev_cap_run, meta_cap_run;   /* their size once it does (IOMODEL_BUFFER_BYTES) */
static int lost_before_start;        /* the buffers filled before the file existed */
static int nonmpi;                   /* a process `iomodel trace` started without a launcher */
static int posix_off;                /* IOMODEL_POSIX=0: MPI-IO only */
static uint64_t load_ticks, load_mono_ns; /* when the library was loaded (a non-MPI trace's zero) */
static uint64_t file_off;            /* bytes of whole chunks (and the header) in the file */
static uint64_t events_kept;         /* events in the chunks written whole */
static uint64_t stop_off;            /* where the stop chunk sits, 0: none */
static char trace_dir[4000];         /* IOMODEL_TRACE_DIR of an MPI rank */
static int job_ranks;                /* the job's size (MPI_COMM_WORLD) */
static size_t join_min = 1;          /* IOMODEL_JOIN: the fewest ranks that write one file per job */
static int joined;                   /* the rank's trace is in DIR/job.iot: more goes to rank-N.iot.after */

void *iom_dlsym_next(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

/* The tracer's own file I/O, straight to the kernel: the library defines open,
 * write and the rest for the application, and a call of its own would be one. */
static int sys_open(const char *path, int flags, mode_t mode)
{
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}
static int sys_close(int f) { return (int)syscall(SYS_close, f); }
static ssize_t sys_writev(int f, const struct iovec *v, int n) { return syscall(SYS_writev, f, v, n); }
static ssize_t sys_pwrite(int f, const void *b, size_t n, off_t o) { return syscall(SYS_pwrite64, f, b, n, o); }
static ssize_t sys_read(int f, void *b, size_t n) { return syscall(SYS_read, f, b, n); }
static int sys_ftruncate(int f, off_t n) { return (int)syscall(SYS_ftruncate, f, n); }
static int sys_mkdir(const char *path, mode_t mode) { return (int)syscall(SYS_mkdirat, AT_FDCWD, path, mode); }
static int sys_unlink(const char *path) { return (int)syscall(SYS_unlinkat, AT_FDCWD, path, 0); }
static off_t sys_lseek(int f, off_t o, int w) { return (off_t)syscall(SYS_lseek, f, o, w); }

static void posix_init(void);

static uint64_t mono_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A (ticks, monotonic ns) pair read as one moment: the clock read between two
 * tick reads, the tightest of a few tries.  A process preempted between the two
 * reads would otherwise skew every rate the reader derives from the pair (a
 * 300-us preemption is 0.3% of a 0.1-s run). */
static void clock_pair(uint64_t *ticks, uint64_t *ns)
{
#if defined(__x86_64__) || defined(__i386__)
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5 && best > 4000; i++) {
        uint64_t a = iom_ticks(), n = mono_ns(CLOCK_MONOTONIC), b = iom_ticks();
        if (b >= a && b - a < best) { best = b - a; *ticks = a + (b - a) / 2; *ns = n; }
    }
    if (best == UINT64_MAX) { *ticks = iom_ticks(); *ns = mono_ns(CLOCK_MONOTONIC); }
#else
    *ns = mono_ns(CLOCK_MONOTONIC);
    *ticks = *ns;
#endif
}

static size_t env_size(const char *name, size_t dflt, size_t min)
{
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    return (*end || v < min) ? dflt : (size_t)v;
}

/* ------------------------------------------------------------ file output */

static uint64_t checksum(const void *p, size_t len)
{
    const uint64_t *w = p;
    uint64_t s = 0;
    for (size_t i = 0; i < len / 8; i++) s += w[i];
    return s;
}

/* 0, or the errno of a write that failed (the trace then stops growing). */
static int write_all(const struct iovec *iov, int n)
{
    struct iovec v[2];
    memcpy(v, iov, sizeof(struct iovec) * (size_t)n);
    int saved = errno, err = 0;
    while (n > 0) {
        ssize_t w = sys_writev(fd, v, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            err = errno;
            break;
        }
        while (n > 0 && (size_t)w >= v[0].iov_len) { w -= (ssize_t)v[0].iov_len; v[0] = v[1]; n--; }
        if (n > 0) { v[0].iov_base = (char *)v[0].iov_base + w; v[0].iov_len -= (size_t)w; }
    }
    errno = saved;
    return err;
}

static void chunk_header(struct chunk_header *h, int type, const void *payload, size_t len,
                         uint64_t count, uint64_t first)
{
    *h = (struct chunk_header){CHUNK_MAGIC, (uint16_t)type, sizeof *h, len, count, first, 0, 0, 0};
    clock_pair(&h->ticks, &h->ns);
    h->checksum = checksum(payload, len) + (uint64_t)type + len + count + first + h->ticks + h->ns;
}

/* The stop chunk, in place: how far the trace got and, once known, how the run ended. */
static void write_stop(uint32_t how)
{
    if (!stop_off) return;
    struct stop_record r = {file_off, events_kept, ev_seq, write_errno, how, iom_lclock, 0};
    struct chunk_header h;
    chunk_header(&h, CHUNK_STOP, &r, sizeof r, 1, ev_seq);
    int saved = errno;
    if (sys_pwrite(fd, &h, sizeof h, (off_t)stop_off) == (ssize_t)sizeof h)
        (void)!sys_pwrite(fd, &r, sizeof r, (off_t)(stop_off + sizeof h));
    errno = saved;
}

/* After the join, what the process records goes to DIR/rank-N.iot.after: chunks
 * that continue the rank's trace in the job file. */
static void open_after(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%06d.iot.after", trace_dir, my_rank);
    fd = sys_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) { write_failed = 1; write_errno = errno; }
}

static void write_chunk(int type, const void *payload, size_t len, uint64_t count, uint64_t first)
{
    if (fd < 0 && joined && !write_failed) open_after();
    if (fd < 0 || write_failed) return;
    struct chunk_header h;
    chunk_header(&h, type, payload, len, count, first);
    struct iovec v[2] = {{&h, sizeof h}, {(void *)payload, len}};
    int err = write_all(v, len ? 2 : 1);
    if (!err) {
        file_off += sizeof h + len;
        if (type == CHUNK_EVENTS) events_kept = first + count;
        return;
    }
    /* A full disk (or any failed write): drop the chunk cut short, say in the
     * stop chunk how far the trace got, and let the run go on untraced. */
    write_failed = 1;
    write_errno = err;
    int saved = errno;
    (void)!sys_ftruncate(fd, (off_t)file_off);
    errno = saved;
    write_stop(STILL_RUNNING);
    fprintf(stderr, "iomodel: rank %d: trace write failed (%s) after %llu events; the run goes on "
            "untraced, and the trace says so\n", my_rank, strerror(err), (unsigned long long)events_kept);
}

static void flush_meta(void)
{
    if (meta_n) write_chunk(CHUNK_META, meta_buf, meta_n, meta_count, ev_seq);
    meta_n = 0;
    meta_count = 0;
}

/* Metadata first: an event never reaches the file before the open or view it refers to. */
static void flush_events(void)
{
    flush_meta();
    if (ev_n) write_chunk(CHUNK_EVENTS, ev_buf, ev_n * sizeof *ev_buf, ev_n, ev_first);
    ev_first = ev_seq;
    ev_n = 0;
}

/* Before the file exists (work before MPI_Init) the buffers grow instead of
 * being written, up to a limit; there the tracer stops recording until the
 * file exists, and says so in the trace (META_LOST).  Returns 0 if full. */
static int grow(void **buf, size_t *cap, size_t unit, size_t max)
{
    if (*cap >= max) return 0;
    size_t n = *cap * 2 > max ? max : *cap * 2;
    void *b = realloc(*buf, n * unit);
    if (!b) return 0;
    *buf = b;
    *cap = n;
    return 1;
}

static void stop_before_start(void)
{
    lost_before_start = 1;
    iom_pon = 0;
}

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

/* Append an event; returns its seq.  Byte counts and durations that do not
 * fit 32 bits are stored whole in an extension record right after it (in
 * the same chunk). */
static uint64_t push_any(int op, unsigned flags, int slot, int64_t a, int64_t b, uint64_t t0, uint64_t t1)
{
    uint64_t dt = t1 - t0;
    int ext = (uint64_t)b >= UINT32_MAX || dt >= UINT32_MAX;
    if (IOM_UNLIKELY(ev_n + 1 + (size_t)ext > ev_cap)) {
        if (started) flush_events();
        else if (!grow((void **)&ev_buf, &ev_cap, sizeof *ev_buf, ev_cap_max)) stop_before_start();
    }
    if (IOM_UNLIKELY(!started && ev_n + 4 > ev_cap) &&   /* room for this one and the next */
        !grow((void **)&ev_buf, &ev_cap, sizeof *ev_buf, ev_cap_max))
        stop_before_start();
    put_event(op, flags, slot, a, b, t0, dt);
    if (IOM_UNLIKELY(ext)) {
        struct iom_event *x = &ev_buf[ev_n++];
        memset(x, 0, sizeof *x);
        x->op = IOM_OP_EXTENSION;
        x->offset = b;
        x->t0 = t1;
    }
    return ev_seq++;
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

/* A metadata record of `len` payload bytes, 8-byte aligned, attached to event `seq`. */
static void *meta_begin(uint32_t type, size_t len, uint64_t seq, size_t *total)
{
    *total = (sizeof(struct meta_header) + len + 7) & ~(size_t)7;
    while (!started && meta_n + *total > meta_cap)
        if (!grow((void **)&meta_buf, &meta_cap, 1, meta_cap_max)) {
            stop_before_start();
            return NULL;
        }
    if (meta_n + *total > meta_cap) flush_meta();
    unsigned char *p = (*total > meta_cap) ? calloc(1, *total) : meta_buf + meta_n;
    if (!p) return NULL;
    memset(p, 0, *total);
    struct meta_header h = {type, (uint32_t)*total, seq};
    memcpy(p, &h, sizeof h);
    return p;
}

static void meta_end(void *p, size_t total)
{
    if ((unsigned char *)p == meta_buf + meta_n) {
        meta_n += total;
        meta_count++;
    } else { /* larger than the buffer: its own chunk */
        write_chunk(CHUNK_META, p, total, 1, ev_seq);
        free(p);
    }
}

static void meta_path(uint32_t type, uint64_t seq, const void *fixed, size_t flen, const char *path)
{
    size_t plen = strlen(path), total;
    unsigned char *p = meta_begin(type, flen + plen, seq, &total);
    if (!p) return;
    memcpy(p + sizeof(struct meta_header), fixed, flen);
    memcpy(p + sizeof(struct meta_header) + flen, path, plen);
    meta_end(p, total);
}

/* ------------------------------------------------- pointer -> value tables */

/* Open addressing keyed by MPI handle (a pointer in Open MPI): open files
 * (value: slot) and pending nonblocking requests (value: seq << 16 | slot). */
struct ptrmap { uintptr_t *key; uint64_t *val; size_t cap, used; };
#define TOMB ((uintptr_t)1)

static size_t pm_hash(uintptr_t k, size_t cap) { return (size_t)((k >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1); }

static int pm_get(const struct ptrmap *m, uintptr_t k, uint64_t *v)
{
    if (!m->cap || k <= TOMB) return 0;
    for (size_t i = pm_hash(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == k) { *v = m->val[i]; return 1; }
        if (!m->key[i]) return 0;
    }
}

static void pm_put(struct ptrmap *m, uintptr_t k, uint64_t v);

static void pm_grow(struct ptrmap *m)
{
    struct ptrmap n = {0};
    n.cap = m->cap ? m->cap * 2 : 64;
    n.key = calloc(n.cap, sizeof *n.key);
    n.val = calloc(n.cap, sizeof *n.val);
    if (!n.key || !n.val) { free(n.key); free(n.val); return; }
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i] > TOMB) pm_put(&n, m->key[i], m->val[i]);
    free(m->key);
    free(m->val);
    *m = n;
}

static void pm_put(struct ptrmap *m, uintptr_t k, uint64_t v)
{
    if (k <= TOMB) return;              /* 0 and 1 mark empty and deleted places */
    if ((m->used + 1) * 2 > m->cap) pm_grow(m);
    if (!m->cap) return;
    size_t i = pm_hash(k, m->cap), tomb = (size_t)-1;
    for (;; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == k) { m->val[i] = v; return; }
        if (m->key[i] == TOMB && tomb == (size_t)-1) tomb = i;
        if (!m->key[i]) break;
    }
    if (tomb != (size_t)-1) i = tomb; else m->used++;
    m->key[i] = k;
    m->val[i] = v;
}

static int pm_del(struct ptrmap *m, uintptr_t k, uint64_t *v)
{
    if (!m->cap || k <= TOMB) return 0;
    for (size_t i = pm_hash(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == k) { if (v) *v = m->val[i]; m->key[i] = TOMB; return 1; }
        if (!m->key[i]) return 0;
    }
}

/* --------------------------------------------------------- open-file slots */

/* An open file: MPI-IO's (keyed by handle in `files`) or a POSIX descriptor's
 * (iom_fdslot[fd] = slot + 1), whose position the tracer keeps. */
struct slot { uint64_t begin_seq; int busy; int append; int64_t pos; int refs; int64_t spos; };
static struct ptrmap files, requests;
static struct slot *slots;
static int nslots, *free_slots, nfree;
static MPI_File last_fh;                 /* 0: none (the lookup's cache) */
static int last_slot = IOM_NO_SLOT;

static int slot_lookup(MPI_File fh)
{
    if (fh == last_fh) return last_slot;
    uint64_t v;
    if (!pm_get(&files, (uintptr_t)fh, &v)) return IOM_NO_SLOT;
    last_fh = fh;
    last_slot = (int)v;
    return last_slot;
}

int iom_slot_of(MPI_File fh)
{
    LOCK();
    int s = slot_lookup(fh);
    UNLOCK();
    return s;
}

static int slot_new(void)
{
    int s;
    if (nfree) s = free_slots[--nfree];
    else if (nslots < (int)IOM_NO_SLOT) {
        struct slot *ns = realloc(slots, sizeof *slots * (size_t)(nslots + 1));
        int *nf = realloc(free_slots, sizeof *free_slots * (size_t)(nslots + 1));
        if (!ns || !nf) { if (ns) slots = ns; if (nf) free_slots = nf; return IOM_NO_SLOT; }
        slots = ns;
        free_slots = nf;
        s = nslots++;
    } else return IOM_NO_SLOT;
    slots[s] = (struct slot){UINT64_MAX, 1, 0, 0, 1, -1};
    return s;
}

static void slot_free(int s)
{
    slots[s].busy = 0;
    free_slots[nfree++] = s;
}

static int slot_alloc(MPI_File fh)
{
    int s = slot_new();
    if (s == (int)IOM_NO_SLOT) return s;
    pm_put(&files, (uintptr_t)fh, (uint64_t)s);
    last_fh = 0;
    return s;
}

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

/* Where a data access's buffer sits within 4 KiB: a copy between the page cache
 * and a buffer a few bytes past a 4 KiB boundary can run several times slower
 * (4K aliasing of its loads and stores), and malloc puts large buffers 16 bytes
 * past a page.  Recorded when it changes, so an application that reuses its
 * buffers costs one record per buffer, not one per call. */
static int64_t last_buffer_offset = -1;

static void note_new_buffer(uint32_t off, uint64_t seq)
{
    size_t total;
    unsigned char *p = meta_begin(META_BUFFER, 8, seq, &total);
    if (!p) return;
    last_buffer_offset = off;
    memcpy(p + sizeof(struct meta_header), &off, sizeof off);
    meta_end(p, total);
}

static inline void note_buffer(const void *buf, uint64_t seq)
{
    if (!buf) return;                /* a call with no buffer of the application's (fprintf) */
    uint32_t off = (uint32_t)((uintptr_t)buf & 4095u);
    if (IOM_UNLIKELY((int64_t)off != last_buffer_offset)) note_new_buffer(off, seq);
}

void iom_record_io(int op, unsigned flags, MPI_File fh, int64_t pos, const void *buf, int64_t count,
                   MPI_Datatype type, uint64_t t0, uint64_t t1)
{
    int64_t b = nbytes(count, type);
    if (pos < 0) flags |= IOM_F_NOPOS;
    LOCK();
    note_buffer(buf, push(op, flags, slot_lookup(fh), pos, b, t0, t1));
    UNLOCK();
}

void iom_record_post(int op, unsigned flags, MPI_File fh, int64_t pos, const void *buf, int64_t count,
                     MPI_Datatype type, uint64_t t0, uint64_t t1, MPI_Request req)
{
    int64_t b = nbytes(count, type);
    if (pos < 0) flags |= IOM_F_NOPOS;
    LOCK();
    int slot = slot_lookup(fh);
    uint64_t seq = push(op, flags, slot, pos, b, t0, t1);
    note_buffer(buf, seq);
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
    if (pos < 0) flags |= IOM_F_NOPOS;
    LOCK();
    int slot = slot_lookup(fh);
    uint64_t seq = push(op, flags, slot, pos, b, t0, t1);
    note_buffer(buf, seq);
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

/* Type records written so far, each distinct type once a rank: their payloads
 * but for the id, which is their index here. */
static struct seen_type { uint64_t hash; size_t len; unsigned char *bytes; } *types_seen;
static size_t ntypes_seen, types_cap;
static uint32_t *type_index;         /* open addressing by hash: index + 1, 0 empty */
static size_t index_cap;             /* a power of two, at least twice ntypes_seen */

static int index_grow(void)
{
    size_t cap = index_cap ? 2 * index_cap : 64;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < ntypes_seen; i++) {
        size_t k = types_seen[i].hash & (cap - 1);
        while (t[k]) k = (k + 1) & (cap - 1);
        t[k] = (uint32_t)i + 1;
    }
    free(type_index);
    type_index = t;
    index_cap = cap;
    return 0;
}

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The id of one node, its children's ids given: the type already written, or a
 * new record (META_TYPE, attached to event seq); UINT32_MAX if it cannot be. */
static uint32_t emit_type(const struct iom_tnode *n, const uint32_t *kid_ids, uint64_t seq)
{
    struct { uint32_t comb; int32_t ni, na, nd; uint32_t pad; int64_t size, lb, extent; }
        __attribute__((packed)) head = {n->comb, n->ni, n->na, n->nd, 0, n->size, n->lb, n->extent};
    size_t li = pad8(4 * (size_t)n->ni), la = 8 * (size_t)n->na, lk = pad8(4 * (size_t)n->nd);
    size_t len = sizeof head + li + la + lk;
    unsigned char *b = calloc(1, len);
    if (!b) return UINT32_MAX;
    memcpy(b, &head, sizeof head);
    for (int i = 0; i < n->ni; i++) { int32_t v = n->iv[i]; memcpy(b + sizeof head + 4 * (size_t)i, &v, 4); }
    for (int i = 0; i < n->na; i++) { int64_t v = n->av[i]; memcpy(b + sizeof head + li + 8 * (size_t)i, &v, 8); }
    if (n->nd) memcpy(b + sizeof head + li + la, kid_ids, 4 * (size_t)n->nd);
    uint64_t h = fnv1a(b, len);
    if (2 * (ntypes_seen + 1) > index_cap && index_grow() != 0) { free(b); return UINT32_MAX; }
    size_t k = h & (index_cap - 1);
    for (; type_index[k]; k = (k + 1) & (index_cap - 1)) {
        const struct seen_type *t = &types_seen[type_index[k] - 1];
        if (t->hash == h && t->len == len && !memcmp(t->bytes, b, len)) {
            free(b);
            return type_index[k] - 1;
        }
    }
    if (ntypes_seen == types_cap) {
        size_t cap = types_cap ? 2 * types_cap : 16;
        struct seen_type *t = realloc(types_seen, cap * sizeof *t);
        if (!t) { free(b); return UINT32_MAX; }
        types_seen = t;
        types_cap = cap;
    }
    size_t total;
    unsigned char *p = meta_begin(META_TYPE, 4 + len, seq, &total);   /* the id, then b: 48 + ... */
    if (!p) { free(b); return UINT32_MAX; }
    uint32_t id = (uint32_t)ntypes_seen;
    memcpy(p + sizeof(struct meta_header), &id, 4);
    memcpy(p + sizeof(struct meta_header) + 4, b, len);
    meta_end(p, total);
    types_seen[ntypes_seen++] = (struct seen_type){h, len, b};
    type_index[k] = id + 1;          /* k: the empty slot the probe ended on */
    return id;
}

/* The records of a description not yet written; the root's id, or UINT32_MAX. */
static uint32_t emit_types(const struct iom_tdesc *d, uint64_t seq)
{
    uint32_t *ids = malloc((d->count + 1) * sizeof *ids), root = UINT32_MAX;
    size_t i = 0;
    for (; ids && i < d->count; i++) {
        const struct iom_tnode *n = &d->n[i];
        uint32_t *k = malloc(sizeof *k * (size_t)(n->nd + 1));
        if (!k) break;
        int missing = 0;
        for (int j = 0; j < n->nd; j++) missing |= (k[j] = ids[n->kids[j]]) == UINT32_MAX;
        ids[i] = missing ? UINT32_MAX : emit_type(n, k, seq);
        free(k);
    }
    if (ids && i == d->count && i) root = ids[i - 1];     /* the root is the last node */
    free(ids);
    return root;
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

/* ------------------------------------------------------ POSIX and stdio */

/* Which files are followed.  Left out by default: the system's directories and
 * what a loader or an interpreter reads (shared libraries, Python's modules),
 * and the trace itself; /dev/shm is a file system of the user's.  IOMODEL_EXCLUDE
 * and IOMODEL_INCLUDE add prefixes (colon-separated); an included prefix wins. */
static const char *const default_exclude[] = {"/proc/", "/sys/", "/dev/", "/etc/", "/usr/", "/lib/",
                                              "/lib32/", "/lib64/", "/libx32/", "/bin/", "/sbin/",
                                              "/boot/", "/run/", "/var/lib/", "/var/cache/", "/var/run/"};
static const char *const default_include[] = {"/dev/shm/"};
static const char *const excluded_suffix[] = {".so", ".py", ".pyc", ".pyo", ".pth", "._pth"};
/* an interpreter's packages and its environment's settings (mpi4py's mpi.cfg,
 * a virtual environment's pyvenv.cfg) */
static const char *const excluded_infix[] = {"/site-packages/", "/dist-packages/", "/__pycache__/",
                                             "/lib/python"};
static const char *const excluded_name[] = {"pyvenv.cfg"};
#define MAX_PREFIXES 64
static char *exclude[MAX_PREFIXES], *include[MAX_PREFIXES];
static int nexclude, ninclude;

/* `path` made absolute from `dir` (the current directory when NULL) and
 * cleaned of "." and ".." and repeated slashes, so that paths and prefixes
 * compare as strings; a trailing slash is kept.  0, or -1 if it does not fit
 * `size` or the current directory is unknown. */
static int full_path(const char *dir, const char *path, char *out, size_t size)
{
    char cwd[PATH_MAX], joined[2 * PATH_MAX + 2];
    if (path[0] != '/') {
        if (!dir && !(dir = getcwd(cwd, sizeof cwd))) return -1;
        if ((size_t)snprintf(joined, sizeof joined, "%s/%s", dir, path) >= sizeof joined) return -1;
        path = joined;
    }
    size_t n = 0;                          /* out[0, n): the components so far, each after a '/' */
    for (const char *p = path; *p;) {
        while (*p == '/') p++;
        size_t l = strcspn(p, "/");
        if (l == 2 && p[0] == '.' && p[1] == '.') {
            while (n > 0 && out[--n] != '/') {}   /* back to the last component's slash */
        } else if (l > 0 && !(l == 1 && p[0] == '.')) {
            if (n + l + 3 > size) return -1;
            out[n++] = '/';
            memcpy(out + n, p, l);
            n += l;
        }
        p += l;
    }
    if (n == 0 || path[strlen(path) - 1] == '/') out[n++] = '/';
    out[n] = '\0';
    return 0;
}

static void add_prefix(char **list, int *n, const char *path)
{
    char abs[PATH_MAX];
    if (*path && *n < MAX_PREFIXES && full_path(NULL, path, abs, sizeof abs) == 0)
        list[(*n)++] = strdup(abs);
}

/* A colon-separated list; a relative prefix is taken from the current
 * directory when the library is loaded. */
static void add_prefixes(char **list, int *n, const char *text)
{
    char *copy = text ? strdup(text) : NULL, *save = NULL;
    for (char *t = copy ? strtok_r(copy, ":", &save) : NULL; t; t = strtok_r(NULL, ":", &save))
        add_prefix(list, n, t);
    free(copy);
}

static int has_prefix(const char *path, char *const *list, int n)
{
    for (int i = 0; i < n; i++) {
        size_t l = strlen(list[i]);
        /* "/x/" matches /x/... and "/x" matches /x and /x/... but not /xy */
        if (strncmp(path, list[i], l) == 0 &&
            (list[i][l - 1] == '/' || path[l] == '/' || path[l] == '\0'))
            return 1;
    }
    return 0;
}

static int excluded(const char *path)
{
    char abs[PATH_MAX];
    if (full_path(NULL, path, abs, sizeof abs) != 0) return 0;   /* a relative path: from where it is opened */
    path = abs;
    if (has_prefix(path, include, ninclude)) return 0;
    if (has_prefix(path, exclude, nexclude)) return 1;
    for (size_t i = 0; i < sizeof excluded_infix / sizeof *excluded_infix; i++)
        if (strstr(path, excluded_infix[i])) return 1;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strstr(base, ".so.")) return 1;    /* libfoo.so.1.2 */
    for (size_t i = 0; i < sizeof excluded_name / sizeof *excluded_name; i++)
        if (strcmp(base, excluded_name[i]) == 0) return 1;
    size_t l = strlen(base);
    for (size_t i = 0; i < sizeof excluded_suffix / sizeof *excluded_suffix; i++) {
        size_t k = strlen(excluded_suffix[i]);
        if (l >= k && strcmp(base + l - k, excluded_suffix[i]) == 0) return 1;
    }
    return 0;
}

/* The path a descriptor has (an fdopen'd one, an openat's directory). */
static int fd_path(int f, char *out, size_t size)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", f);
    ssize_t n = readlink(link, out, size - 1);
    if (n < 0) return -1;
    out[n] = '\0';
    return 0;
}

static int stdio_flags(const char *mode)
{
    int plus = mode && strchr(mode, '+') != NULL;
    switch (mode ? mode[0] : 'r') {
    case 'w': return (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC;
    case 'a': return (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_APPEND;
    default: return plus ? O_RDWR : O_RDONLY;
    }
}

/* An open (fd >= 0) or a failed one (fd < 0) of a followed path: an event, and
 * the open's record with the descriptor's slot, or the path; spos: a stream's
 * position (-1: a descriptor's open). */
static void p_open(int op, int f, int dirfd, const char *path, int flags, int64_t spos,
                   uint64_t t0, uint64_t t1)
{
    if (!path || f >= iom_nfd) return;
    char dir[PATH_MAX], full[PATH_MAX];
    if (dirfd != AT_FDCWD && path[0] != '/') {      /* openat: from its directory */
        if (fd_path(dirfd, dir, sizeof dir) != 0 || full_path(dir, path, full, sizeof full) != 0)
            return;
        path = full;
    }
    if (excluded(path)) return;
    LOCK();
    int slot = f >= 0 ? slot_new() : (int)IOM_NO_SLOT;
    uint64_t seq = push(op, f >= 0 ? 0u : IOM_F_ERROR, slot, 0, 0, t0, t1);
    if (slot != (int)IOM_NO_SLOT) {
        slots[slot].append = (flags & O_APPEND) != 0;
        slots[slot].spos = spos;
        iom_fdslot[f] = slot + 1;
        struct { uint32_t slot; int32_t amode, comm_size, comm_rank; } fixed = {(uint32_t)slot, flags, 1, 0};
        meta_path(META_OPEN, seq, &fixed, sizeof fixed, path);
    } else if (f < 0) {
        struct { uint32_t kind; int32_t amode; } fixed = {PATH_FAILED_OPEN, flags};
        meta_path(META_PATH, seq, &fixed, sizeof fixed, path);
    }
    UNLOCK();
}

void iom_p_open(int op, int f, int dirfd, const char *path, int flags, int err, uint64_t t0, uint64_t t1)
{
    (void)err;
    p_open(op, f, dirfd, path, flags, -1, t0, t1);
}

/* A stream's open: its position from the start (the end of the file for "a",
 * where glibc puts it). */
void iom_s_open(int op, FILE *fp, const char *path, const char *mode, int err, uint64_t t0, uint64_t t1)
{
    (void)err;
    p_open(op, fp ? fileno(fp) : -1, AT_FDCWD, path, stdio_flags(mode), fp ? iom_s_position(fp) : -1,
           t0, t1);
}

void iom_s_fdopen(int op, FILE *fp, int f, const char *mode, int err, uint64_t t0, uint64_t t1)
{
    (void)err;
    if (!fp) return;
    int slot = iom_fd_slot(f);
    int64_t at = iom_s_position(fp);
    if (slot >= 0) {                                 /* a followed descriptor, now a stream */
        LOCK();
        push(op, 0, slot, 0, 0, t0, t1);
        slots[slot].spos = at;
        UNLOCK();
        return;
    }
    char path[PATH_MAX];
    if (fd_path(f, path, sizeof path) == 0 && path[0] == '/')
        p_open(op, f, AT_FDCWD, path, stdio_flags(mode), at, t0, t1);
}

/* freopen: the old file (oldfd, followed if oldslot >= 0) is closed whether or
 * not the new one opens; a NULL path changes the mode of the same file. */
void iom_s_reopen(int op, FILE *fp, int oldfd, int oldslot, const char *path, const char *mode, int err,
                  uint64_t t0, uint64_t t1)
{
    if (!path) {
        if (oldslot >= 0) iom_s_pos(op, fp ? 0u : IOM_F_ERROR, oldslot, -1, fp ? iom_s_position(fp) : -1,
                                    0, 0, t0, t1);
        return;
    }
    if (oldslot >= 0) iom_p_forget(oldfd, oldslot);
    iom_s_open(op, fp, path, mode, err, t0, t1);
}

/* A data access; pos: the offset the call gave, or IOM_CUR for the descriptor's
 * position, which the tracer advances (of an O_APPEND one: asked of the kernel,
 * where each write goes to the end).  rc: the bytes moved, or -1. */
void iom_p_io(int op, unsigned flags, int slot, int64_t pos, int64_t rc, int64_t asked,
              const void *buf, int f, uint64_t t0, uint64_t t1)
{
    LOCK();
    struct slot *s = &slots[slot];
    if (pos == IOM_CUR) {
        if (s->append && (flags & IOM_F_WRITE)) {
            off_t end = sys_lseek(f, 0, SEEK_CUR);
            pos = end >= 0 && rc >= 0 ? end - rc : -1;
            if (end >= 0) s->pos = end;
        } else {
            pos = s->pos;
            if (rc > 0) s->pos += rc;
        }
    }
    if (rc < 0) flags |= IOM_F_ERROR;
    if (pos < 0) flags |= IOM_F_NOPOS;
    note_buffer(buf, push(op, flags, slot, pos, rc >= 0 ? rc : asked, t0, t1));
    UNLOCK();
}

void iom_p_seek(int op, int slot, int64_t rc, int64_t offset, int whence, uint64_t t0, uint64_t t1)
{
    LOCK();
    if (rc >= 0) slots[slot].pos = rc;
    push(op, rc < 0 ? IOM_F_ERROR : 0u, slot, rc >= 0 ? rc : offset, whence, t0, t1);
    UNLOCK();
}

void iom_p_call(int op, unsigned flags, int slot, int64_t a, int64_t b, uint64_t t0, uint64_t t1)
{
    LOCK();
    push(op, flags, slot, a, b, t0, t1);
    UNLOCK();
}

static void forget(int f, int slot)
{
    if (f >= 0 && f < iom_nfd && iom_fdslot[f] == slot + 1) {
        iom_fdslot[f] = 0;
        if (--slots[slot].refs <= 0)          /* the last descriptor of its open (dup) */
            slot_free(slot);
    }
}

/* A dup of a followed descriptor (rc: the new one, or -1): the new one shares
 * the slot; one it replaced (dup2, dup3) is closed.  op < 0: no event (the call
 * was made while recording was off). */
void iom_p_dup(int op, int rc, int oldfd, int slot, uint64_t t0, uint64_t t1)
{
    LOCK();
    if (op >= 0)
        push(op, rc >= 0 ? 0u : IOM_F_ERROR, slot, rc, 0, t0, t1);
    if (rc >= 0 && rc < iom_nfd && rc != oldfd) {
        if (iom_fdslot[rc])
            forget(rc, iom_fdslot[rc] - 1);
        iom_fdslot[rc] = slot + 1;
        slots[slot].refs++;
    }
    UNLOCK();
}

/* The stream moved from `from` to `to` by calls no traced call accounts for
 * (getc_unlocked inlined by the compiler, putw...): the trace says so. */
static void note_unseen(int slot, int64_t from, int64_t to, uint64_t seq)
{
    struct { uint32_t slot, pad; int64_t from, to; } r = {(uint32_t)slot, 0, from, to};
    size_t total;
    unsigned char *p = meta_begin(META_UNSEEN, sizeof r, seq, &total);
    if (!p) return;
    memcpy(p + sizeof(struct meta_header), &r, sizeof r);
    meta_end(p, total);
}

/* A stream's position as ftello gave it (seen, -1: not asked) checked against
 * the tracer's, at the call `seq`; the tracer's follows it. */
static void check_position(int slot, int64_t seen, uint64_t seq)
{
    struct slot *s = &slots[slot];
    if (seen < 0) return;
    if (s->spos >= 0 && seen != s->spos) note_unseen(slot, s->spos, seen, seq);
    s->spos = seen;
}

/* A data access on a stream, at its position (which the tracer keeps); bytes:
 * what it moved (-1: the move of the position); after: the position it left,
 * asked where the bytes do not tell it (-1: they do), which gives the position
 * it started from, checked against the tracer's. */
void iom_s_io(int op, unsigned flags, int slot, int64_t bytes, int64_t after, const void *buf,
              uint64_t t0, uint64_t t1)
{
    LOCK();
    struct slot *s = &slots[slot];
    int64_t pos = s->spos, seen = -1;
    if (after >= 0 && bytes < 0) bytes = pos >= 0 && after > pos ? after - pos : 0;
    else if (after >= 0) pos = seen = after - bytes;
    uint64_t seq = push(op, flags | (pos < 0 ? IOM_F_NOPOS : 0u), slot, pos, bytes, t0, t1);
    note_buffer(buf, seq);
    check_position(slot, seen, seq);
    s->spos = after >= 0 ? after : pos >= 0 ? pos + bytes : -1;
    UNLOCK();
}

/* A call that reads or sets a stream's position: seen, the position before it
 * (ftello; -1: not asked), checked against the tracer's; after, the position
 * it left (-1: unchanged).  a, b: the event's offset and bytes fields. */
void iom_s_pos(int op, unsigned flags, int slot, int64_t seen, int64_t after, int64_t a, int64_t b,
               uint64_t t0, uint64_t t1)
{
    LOCK();
    check_position(slot, seen, push(op, flags, slot, a, b, t0, t1));
    if (after >= 0) slots[slot].spos = after;
    UNLOCK();
}

/* A close (seen: a stream's position before it, -1 for a descriptor). */
void iom_s_close(int op, int rc, int f, int slot, int64_t seen, uint64_t t0, uint64_t t1)
{
    LOCK();
    check_position(slot, seen, push(op, rc == 0 ? 0u : IOM_F_ERROR, slot, 0, 0, t0, t1));
    if (rc == 0) forget(f, slot);
    UNLOCK();
}

void iom_p_close(int op, int rc, int f, int slot, uint64_t t0, uint64_t t1)
{
    iom_s_close(op, rc, f, slot, -1, t0, t1);
}

void iom_p_forget(int f, int slot)
{
    LOCK();
    forget(f, slot);
    UNLOCK();
}

void iom_p_unlink(int op, int rc, const char *path, uint64_t t0, uint64_t t1)
{
    if (!path || excluded(path)) return;
    LOCK();
    uint64_t seq = push(op, rc == 0 ? 0u : IOM_F_ERROR, IOM_NO_SLOT, 0, 0, t0, t1);
    struct { uint32_t kind; int32_t pad; } fixed = {PATH_DELETE, 0};
    meta_path(META_PATH, seq, &fixed, sizeof fixed, path);
    UNLOCK();
}

/* A stream's position, as the application would read it (the real ftello). */
extern off_t (*iom_real_ftello)(FILE *) IOM_HIDDEN;
int64_t iom_s_position(FILE *fp)
{
    if (!iom_real_ftello) iom_real_ftello = (__typeof__(iom_real_ftello))iom_dlsym_next("ftello");
    int saved = errno;
    int64_t pos = iom_real_ftello(fp);
    errno = saved;
    return pos;
}

/* ------------------------------------------------------------- life cycle */

static void end_chunk(int how)
{
    flush_events();
    struct { uint64_t events; uint32_t how, lclock; } end = {ev_seq, (uint32_t)how, iom_lclock};
    write_chunk(CHUNK_END, &end, sizeof end, 0, ev_seq);
    if (write_failed) write_stop((uint32_t)how);
}

/* The end of the trace: what the buffers hold, the end chunk, the file closed. */
static void finish(int how)
{
    end_chunk(how);
    sys_close(fd);
    fd = -1;
    iom_on = 0;
    iom_pon = 0;
}

/* A job stopped from outside (mpirun killing the other ranks after an
 * MPI_Abort or a failed rank, Slurm at the time limit, Ctrl-C)
 * gets one of these, then SIGKILL a while later (Slurm: KillWait, 30 s by
 * default; Open MPI 4.1: as soon as the first rank has died of it, its
 * SIGCHLD cutting a one-second wait short).  On the first, the rank writes out what its
 * buffers hold and ends its trace, then dies of the signal as it would have
 * untraced: the exit status is the same.  Only signals whose action was the
 * default are caught, so an application's own handler is left alone. */
static const int stop_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGXCPU};
static pid_t owner_pid;               /* the process that traces (not a forked child) */

static void on_stop_signal(int sig)
{
    int saved = errno;
    /* not if this thread was changing the buffers; another thread that holds
     * the lock gives it back within a record (bounded wait) */
    if (getpid() == owner_pid && (fd >= 0 || joined) && !in_buffers) {
        int got = 0;
        for (long n = 0; n < 1000000 && !(got = !__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE)); n++)
            ;
        if (got)   /* the lock stays held: other threads wait in it while the process ends */
            finish(finalized ? END_FINALIZE : END_SIGNAL | sig << 8);
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig); /* pending until the handler returns, then the default action */
    errno = saved;
}

static void catch_stop_signals(void)
{
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_stop_signal;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
        sigaddset(&act.sa_mask, stop_signals[i]); /* one handler at a time */
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++) {
        struct sigaction old;
        if (sigaction(stop_signals[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_DFL)
            sigaction(stop_signals[i], &act, NULL);
    }
}

/* A process that runs untraced after all gets the default actions back. */
static void release_stop_signals(void)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++) {
        struct sigaction old;
        if (sigaction(stop_signals[i], NULL, &old) == 0 && old.sa_handler == on_stop_signal)
            sigaction(stop_signals[i], &dfl, NULL);
    }
}

/* A process the application forks is no rank: it stops tracing and never
 * touches the rank's file (its copies of the buffers and of the descriptor
 * would land in the parent's trace). A lock another thread held at the fork
 * is held by no one in the child: it starts afresh. */
static void at_fork_child(void)
{
    lock = 0;
    in_buffers = 0;
    iom_on = 0;
    iom_pon = 0;
    iom_mt = 0;
    ev_n = meta_n = 0;
    if (fd >= 0) sys_close(fd);
    fd = -1;
}

/* Open the trace file and write its header, the stop chunk it reserves, the
 * routine table and the command line; then what was recorded before, which
 * the first flush writes.  Returns 0, or the errno of the open. */
static int open_trace(const char *dir, int rank, int nranks, int thread_level, int exclusive,
                      uint64_t tick0, uint64_t mono0, uint64_t cal_ticks, uint64_t cal_ns)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%06d.iot", dir, rank);
    if (sys_mkdir(dir, 0777) != 0 && errno != EEXIST) { /* the open below reports it */ }
    fd = sys_open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC), 0666);
    if (fd < 0) return errno;
    struct file_header h = {{'I', 'O', 'M', 'T', 'R', 'A', 'C', 'E'}, IOM_TRACE_VERSION, sizeof h,
                            rank, nranks, (uint32_t)getpid(), thread_level,
#if defined(__x86_64__) || defined(__i386__)
                            1,
#else
                            0,
#endif
                            sizeof(struct iom_event), tick0, mono0,
                            (int64_t)mono_ns(CLOCK_REALTIME), cal_ticks, cal_ns, {0}, {0}};
    gethostname(h.hostname, sizeof h.hostname - 1);
    write_failed = write_errno = 0;
    file_off = events_kept = stop_off = 0;
    struct iovec v = {&h, sizeof h};
    if ((write_errno = write_all(&v, 1)) != 0) write_failed = 1;
    else file_off = sizeof h;
    struct stop_record none = {0};
    started = 1;                     /* from here on, full buffers are written */
    write_chunk(CHUNK_STOP, &none, sizeof none, 0, 0);
    if (!write_failed) stop_off = sizeof h;
    /* The routine table: event op ids index it. */
    size_t nlen = 0;
    for (int i = 0; i < iom_nops; i++) nlen += strlen(iom_op_names[i]) + 1;
    size_t total;
    unsigned char *p = meta_begin(META_ROUTINES, 8 + nlen, 0, &total);
    if (p) {
        unsigned char *q = p + sizeof(struct meta_header);
        uint32_t n = (uint32_t)iom_nops;
        memcpy(q, &n, 4);
        q += 8;
        for (int i = 0; i < iom_nops; i++) {
            size_t l = strlen(iom_op_names[i]) + 1;
            memcpy(q, iom_op_names[i], l);
            q += l;
        }
        meta_end(p, total);
    }
    /* The command line, from /proc (argv is not passed to MPI_Init_thread by mpi4py). */
    char cmd[4096];
    int cfd = sys_open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC, 0);
    ssize_t clen = cfd >= 0 ? sys_read(cfd, cmd, sizeof cmd) : -1;
    if (cfd >= 0) sys_close(cfd);
    if (clen > 0) {
        uint32_t n = (uint32_t)clen;
        p = meta_begin(META_PROGRAM, 8 + n, 0, &total);
        if (p) {
            memcpy(p + sizeof(struct meta_header), &n, 4);
            memcpy(p + sizeof(struct meta_header) + 8, cmd, n);
            meta_end(p, total);
        }
    }
    if (lost_before_start) {         /* the buffers filled before the file existed */
        p = meta_begin(META_LOST, 8, ev_seq, &total);
        if (p) {
            uint64_t kept = ev_seq;
            memcpy(p + sizeof(struct meta_header), &kept, 8);
            meta_end(p, total);
        }
    }
    return 0;
}

/* Time zero, the same moment on every rank (after MPI_Init's barrier), into
 * the header open_trace wrote before it. */
static void set_time_zero(uint64_t tick0, uint64_t mono0)
{
    struct { uint64_t tick0, mono0; int64_t real0; } z = {tick0, mono0, (int64_t)mono_ns(CLOCK_REALTIME)};
    _Static_assert(offsetof(struct file_header, real_origin_ns) - offsetof(struct file_header, tick_origin)
                   == 2 * sizeof(uint64_t), "time zero's three fields must follow one another");
    if (fd >= 0 && !write_failed)
        (void)!sys_pwrite(fd, &z, sizeof z, (off_t)offsetof(struct file_header, tick_origin));
}

/* Once the file exists the buffers have the run's size: what was recorded
 * before, if more, is written now. */
static void run_buffers(void)
{
    if (ev_n > ev_cap_run || meta_n > meta_cap_run) flush_events();
    struct iom_event *e = realloc(ev_buf, ev_cap_run * sizeof *ev_buf);
    unsigned char *m = realloc(meta_buf, meta_cap_run);
    if (e) { ev_buf = e; ev_cap = ev_cap_run; }
    if (m) { meta_buf = m; meta_cap = meta_cap_run; }
}

/* A process that never called MPI_Init writes its trace at exit, as rank 0 of
 * 1, if `iomodel trace` ran it directly (IOMODEL_NONMPI=1, claimed by the
 * first process that loads the tracer, so that its children do not; an MPI
 * rank file already there is not overwritten). */
static void at_exit(void)
{
    LOCK();
    if (fd >= 0 && finalized && !ev_n && !meta_n) {
        sys_close(fd);                /* nothing after MPI_Finalize: its end chunk ends the file */
        fd = -1;
    } else if (fd >= 0 || (joined && (ev_n || meta_n))) {
        finish(finalized ? END_FINALIZE : END_EXIT);
    } else if (!started && nonmpi && getpid() == owner_pid && ev_seq > 0) {
        const char *dir = getenv("IOMODEL_TRACE_DIR");
        if (open_trace(dir && *dir ? dir : "iomodel-trace", 0, 1, 0, 1, load_ticks, load_mono_ns,
                       load_ticks, load_mono_ns) == 0)
            finish(END_NO_MPI);
    }
    UNLOCK();
}

/* When the library is loaded: POSIX and stdio tracing starts (in memory; the
 * file comes with MPI_Init), unless IOMODEL_DISABLE. */
__attribute__((constructor)) static void iom_load(void)
{
    iom_resolve_reals();
    posix_init();
}

static void posix_init(void)
{
    const char *off = getenv("IOMODEL_DISABLE");
    if (off && *off && strcmp(off, "0")) return;
    owner_pid = getpid();
    clock_pair(&load_ticks, &load_mono_ns);
    size_t buf_bytes = env_size("IOMODEL_BUFFER_BYTES", 1u << 20, 4096);
    ev_cap = 4096 / sizeof(struct iom_event);
    ev_cap_run = buf_bytes / sizeof(struct iom_event);
    ev_cap_max = 4 * ev_cap_run;                 /* before MPI_Init: at most 4 buffers */
    meta_cap = 4096;
    meta_cap_run = buf_bytes / 4 < 4096 ? 4096 : buf_bytes / 4;
    meta_cap_max = 4 * meta_cap_run;
    max_view_blocks = env_size("IOMODEL_MAX_VIEW_BLOCKS", 1u << 16, 1);
    const char *views = getenv("IOMODEL_VIEWS");       /* types (the default), pieces, both */
    if (views && !strcmp(views, "pieces")) view_types = 0;
    view_pieces = views && (!strcmp(views, "pieces") || !strcmp(views, "both"));
    ev_buf = malloc(ev_cap * sizeof *ev_buf);
    meta_buf = malloc(meta_cap);
    struct rlimit rl;
    iom_nfd = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (1u << 20) ? (int)rl.rlim_cur : 1 << 20;
    iom_fdslot = calloc((size_t)iom_nfd, sizeof *iom_fdslot);
    if (!ev_buf || !meta_buf || !iom_fdslot) {
        free(ev_buf);
        free(meta_buf);
        free(iom_fdslot);
        ev_buf = NULL;
        meta_buf = NULL;
        iom_fdslot = NULL;
        iom_nfd = 0;
        return;
    }
    for (size_t i = 0; i < sizeof default_exclude / sizeof *default_exclude; i++)
        exclude[nexclude++] = (char *)default_exclude[i];
    for (size_t i = 0; i < sizeof default_include / sizeof *default_include; i++)
        include[ninclude++] = (char *)default_include[i];
    add_prefixes(exclude, &nexclude, getenv("IOMODEL_EXCLUDE"));
    add_prefixes(include, &ninclude, getenv("IOMODEL_INCLUDE"));
    const char *dir = getenv("IOMODEL_TRACE_DIR");     /* the trace itself */
    add_prefix(exclude, &nexclude, dir && *dir ? dir : "iomodel-trace");
    const char *under = getenv("IOMODEL_UNDER_MPI");
    iom_under = under && *under && strcmp(under, "0");
    const char *claim = getenv("IOMODEL_NONMPI");
    if (claim && strcmp(claim, "1") == 0) {
        nonmpi = 1;
        setenv("IOMODEL_NONMPI", "claimed", 1);
    }
    atexit(at_exit);
    pthread_atfork(NULL, NULL, at_fork_child);
    const char *posix = getenv("IOMODEL_POSIX");          /* 0: MPI-IO only */
    posix_off = posix && strcmp(posix, "0") == 0;
    iom_pon = !posix_off;
}

/* The ABI family the tracer was built for, and those of the MPI libraries in
 * the process: told apart by MPI_Get_library_version, which every MPI lets be
 * called before MPI_Init and whose arguments every MPI passes alike.  The
 * tracer brings its own MPI library along; an application of the other family
 * brings its own too, and must get its own calls, untouched. */
#if defined(OPEN_MPI)
#define BUILT_FOR "Open MPI"
#else
#define BUILT_FOR "MPICH"
#endif
static const char *family_of(const char *version)
{
    if (strstr(version, "Open MPI")) return "Open MPI";
    if (strstr(version, "MPICH") || strstr(version, "Intel(R) MPI") || strstr(version, "MVAPICH"))
        return "MPICH";
    return NULL;                        /* an MPI we cannot name: trusted to be the one built for */
}

#define MAX_MPI_LIBS 4
struct mpi_libs { void *fn[MAX_MPI_LIBS]; int n; };

/* dl_iterate_phdr: each loaded object's MPI_Get_library_version, once */
static int find_mpi_lib(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct mpi_libs *libs = data;
    if (!info->dlpi_name || !*info->dlpi_name) return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    void *fn = dlsym(h, "PMPI_Get_library_version");
    dlclose(h);
    for (int i = 0; fn && i < libs->n; i++)
        if (libs->fn[i] == fn) return 0;
    if (fn && libs->n < MAX_MPI_LIBS) libs->fn[libs->n++] = fn;
    return 0;
}

static void *mpi_lib;                   /* the application's MPI library */
static int mpi_unusable;                /* what the tracer needs of it is missing */
static void *find_in_mpi_lib(const char *name) { return dlsym(mpi_lib, name); }
#ifdef OPEN_MPI
MPI_Comm iom_comm_world;
MPI_Datatype iom_int;
MPI_Op iom_sum;
MPI_Datatype iom_byte;
MPI_Info iom_info_null;

/* An MPI object's address as the application sees it: the global lookup
 * first, since a program that names MPI_COMM_WORLD holds the copy of it its
 * MPI library uses too; the library itself when an interpreter loaded it
 * privately. */
static void *find_data(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    return p || !mpi_lib ? p : dlsym(mpi_lib, name);
}
#endif

/* At MPI_Init, before the real one: every real MPI routine is taken from the
 * application's MPI library, loaded by now even when an interpreter loaded it
 * late (mpi4py).  If that MPI is of the other ABI family, every MPI call goes
 * to it untouched (iom_foreign), the process runs untraced, and
 * DIR/mpi-mismatch.txt says why, for `iomodel trace` to report. */
void iom_check_mpi(void)
{
    static int checked;
    if (checked) return;
    checked = 1;
    struct mpi_libs libs = {{0}, 0};
    dl_iterate_phdr(find_mpi_lib, &libs);
    Dl_info where = {0};
    if (libs.n && dladdr(libs.fn[0], &where) && where.dli_fname &&
        (mpi_lib = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
        iom_resolve_mpi(find_in_mpi_lib);
    static char version[16384];         /* MPICH's MPI_MAX_LIBRARY_VERSION_STRING is 8192 */
    int len = 0;
    if (!iom_real_MPI_Get_library_version || iom_real_MPI_Get_library_version(version, &len) != MPI_SUCCESS)
        version[0] = 0;
    version[sizeof version - 1] = 0;
    const char *family = family_of(version);
    if (family && strcmp(family, BUILT_FOR) != 0) {
        iom_foreign = 1;
        LOCK();
        iom_pon = 0;
        nonmpi = 0;
        ev_n = meta_n = 0;
        ev_seq = 0;
        UNLOCK();
        if (!ev_buf) return;            /* IOMODEL_DISABLE: nothing to say */
        char note[1024];
        int n = snprintf(note, sizeof note, "built for %s; the application runs %.*s (%s)\n", BUILT_FOR,
                         (int)strcspn(version, "\n,"), version,
                         where.dli_fname ? where.dli_fname : "its MPI library");
        const char *dir = getenv("IOMODEL_TRACE_DIR");
        char path[4096];
        snprintf(path, sizeof path, "%s/mpi-mismatch.txt", dir && *dir ? dir : "iomodel-trace");
        sys_mkdir(dir && *dir ? dir : "iomodel-trace", 0777);
        int f = sys_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (f >= 0) {
            struct iovec v = {note, n < (int)sizeof note ? (size_t)n : sizeof note - 1};
            sys_writev(f, &v, 1);
            sys_close(f);
        }
        return;
    }
#ifdef OPEN_MPI
    iom_comm_world = (MPI_Comm)find_data("ompi_mpi_comm_world");
    iom_int = (MPI_Datatype)find_data("ompi_mpi_int");
    iom_sum = (MPI_Op)find_data("ompi_mpi_op_sum");
    iom_byte = (MPI_Datatype)find_data("ompi_mpi_byte");
    iom_info_null = (MPI_Info)find_data("ompi_mpi_info_null");
    mpi_unusable = !iom_comm_world || !iom_int || !iom_sum;
#endif
    mpi_unusable |= !iom_real_MPI_Comm_rank || !iom_real_MPI_Comm_size || !iom_real_MPI_Allreduce ||
                    !iom_real_MPI_Barrier;
}

void iom_start(int op, uint64_t t_init, int thread_level)
{
    iom_depth = 1;
    if (!ev_buf || mpi_unusable) { iom_depth = 0; return; } /* IOMODEL_DISABLE, no memory at load */
    uint64_t cal_ticks, cal_ns;
    clock_pair(&cal_ticks, &cal_ns);
    int nranks = 1;
    iom_real_MPI_Comm_rank(IOM_COMM_WORLD, &my_rank);
    iom_real_MPI_Comm_size(IOM_COMM_WORLD, &nranks);
    const char *dir = getenv("IOMODEL_TRACE_DIR");
    if (!dir || !*dir) dir = "iomodel-trace";
    snprintf(trace_dir, sizeof trace_dir, "%s", dir);
    job_ranks = nranks;
    join_min = env_size("IOMODEL_JOIN", join_min, 0);
    /* The file and its header now, before the checks that every rank can
     * write one: a rank stopped from here on (a job whose other ranks exit
     * right after MPI_Init, mpirun then stopping the rest) leaves a readable
     * trace, ended by the signal where its handler runs.  Time zero is set
     * in the header after the barrier below. */
    catch_stop_signals();
    LOCK();
    int err = open_trace(dir, my_rank, nranks, thread_level, 0, cal_ticks, cal_ns, cal_ticks, cal_ns);
    UNLOCK();
    /* All ranks trace or none does; rank 0 says why not. */
    int failed = err != 0, nfailed = 0;
    iom_real_MPI_Allreduce(&failed, &nfailed, 1, IOM_INT, IOM_SUM, IOM_COMM_WORLD);
    if (nfailed) {
        if (my_rank == 0)
            fprintf(stderr, "iomodel: cannot write the trace in %s (%d of %d ranks failed%s%s); "
                    "running untraced\n", dir, nfailed, nranks, err ? ": " : "",
                    err ? strerror(err) : "");
        LOCK();
        if (fd >= 0) {
            char path[4096];
            snprintf(path, sizeof path, "%s/rank-%06d.iot", dir, my_rank);
            sys_close(fd);
            sys_unlink(path);
            fd = -1;
        }
        iom_pon = 0;
        ev_n = meta_n = 0;
        UNLOCK();
        release_stop_signals();
        iom_depth = 0;
        return;
    }
    /* the join is collective: rank 0's IOMODEL_JOIN holds for every rank */
    uint64_t jm = join_min;
    if (iom_real_MPI_Bcast && IOM_BYTE) iom_real_MPI_Bcast(&jm, sizeof jm, IOM_BYTE, 0, IOM_COMM_WORLD);
    else jm = 0;
    join_min = (size_t)jm;
    iom_real_MPI_Barrier(IOM_COMM_WORLD); /* time zero is the same moment on every rank */
    uint64_t tick0, mono0;
    clock_pair(&tick0, &mono0);
    LOCK();
    set_time_zero(tick0, mono0);
    run_buffers();
    iom_mt = thread_level == MPI_THREAD_MULTIPLE;
    iom_lclock = 0;
    push(op, 0, IOM_NO_SLOT, 0, 0, t_init, tick0);
    iom_on = 1;
    iom_pon = !posix_off;
    UNLOCK();
    iom_depth = 0;
}

/* MPI_Finalize: the trace is ended (so that a kill after it still leaves a
 * whole one), but stays open: what the process does after MPI_Finalize is
 * recorded too, and the end written again at exit. */
/* At MPI_Finalize, a job of IOMODEL_JOIN ranks or more (default 1: every job; 0: never)
 * puts its traces into one file (jobfile.c); the rank files go once every
 * rank's copy is written, and stay if any rank's cannot be.  The lock stays
 * held: a thread's flush must not write into a file being copied. */
static void join_job(void)
{
    if (!join_min || (size_t)job_ranks < join_min) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%06d.iot", trace_dir, my_rank);
    int d = iom_depth;
    iom_depth = 2;                   /* the copy's own I/O is not the application's: not even under MPI */
    if (iom_join(trace_dir, path, file_off, my_rank, job_ranks) == 0) {
        sys_close(fd);
        sys_unlink(path);
        fd = -1;
        stop_off = 0;
        joined = 1;
    }
    iom_depth = d;
}

void iom_stop(int op, uint64_t t0)
{
    LOCK();
    if (iom_on) {
        push(op, 0, IOM_NO_SLOT, 0, 0, t0, iom_ticks());
        end_chunk(END_FINALIZE);
        finalized = 1;
        iom_on = 0;
        join_job();
    }
    UNLOCK();
}

void iom_abort(int op, uint64_t t0)
{
    LOCK();
    if (iom_on) {
        push(op, 0, IOM_NO_SLOT, 0, 0, t0, t0);
        finish(END_ABORT);
    }
    UNLOCK();
}
