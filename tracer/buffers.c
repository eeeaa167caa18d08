/* The buffers every traced call is recorded into, and the trace file they go
 * to: <dir>/rank-NNNNNN.iot, a header, then chunks of events (fixed 32-byte
 * records) and of metadata (opens, views, buffers, ...), each chunk written
 * whole when its fixed-size buffer fills, at MPI_Finalize, at MPI_Abort, at
 * exit and on a signal that stops the job (runtime.c).  Before the file exists
 * (work before MPI_Init) the buffers grow in memory.  docs/trace-format.md is
 * the reference. */
#define _GNU_SOURCE
#include "runtime_shared.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#define CHUNK_MAGIC 0x4b4e4843u /* "CHNK" */
enum { CHUNK_EVENTS = 1, CHUNK_META = 2, CHUNK_END = 3, CHUNK_STOP = 4 };

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

int lock;
__thread volatile sig_atomic_t in_buffers __attribute__((tls_model("initial-exec")));

int fd = -1;
int my_rank;
struct iom_event *ev_buf;
size_t ev_n, ev_cap;                 /* records in the buffer, its capacity */
uint64_t ev_seq;                     /* events recorded so far (extensions not counted) */
static uint64_t ev_first;            /* seq of the buffer's first event */
unsigned char *meta_buf;
size_t meta_n, meta_cap;
static uint64_t meta_count;
static int write_failed, write_errno;
int started;                         /* the file exists: MPI_Init (or a non-MPI process's exit) */
size_t ev_cap_max, meta_cap_max;          /* how far the buffers grow before the file exists */
size_t ev_cap_run, meta_cap_run;          /* their size once it does (IOMODEL_BUFFER_BYTES) */
static int lost_before_start;        /* the buffers filled before the file existed */
uint64_t file_off;                   /* bytes of whole chunks (and the header) in the file */
static uint64_t events_kept;         /* events in the chunks written whole */
uint64_t stop_off;                   /* where the stop chunk sits, 0: none */
char trace_dir[4000];                /* IOMODEL_TRACE_DIR of an MPI rank */
int joined;                          /* the rank's trace is in DIR/job.iot: more goes to rank-N.iot.after */

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
void flush_events(void)
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

/* Append an event; returns its seq.  Byte counts and durations that do not
 * fit 32 bits are stored whole in an extension record right after it (in
 * the same chunk). */
uint64_t push_any(int op, unsigned flags, int slot, int64_t a, int64_t b, uint64_t t0, uint64_t t1)
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

/* A metadata record of `len` payload bytes, 8-byte aligned, attached to event `seq`. */
void *meta_begin(uint32_t type, size_t len, uint64_t seq, size_t *total)
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

void meta_end(void *p, size_t total)
{
    if ((unsigned char *)p == meta_buf + meta_n) {
        meta_n += total;
        meta_count++;
    } else { /* larger than the buffer: its own chunk */
        write_chunk(CHUNK_META, p, total, 1, ev_seq);
        free(p);
    }
}

void meta_path(uint32_t type, uint64_t seq, const void *fixed, size_t flen, const char *path)
{
    size_t plen = strlen(path), total;
    unsigned char *p = meta_begin(type, flen + plen, seq, &total);
    if (!p) return;
    memcpy(p + sizeof(struct meta_header), fixed, flen);
    memcpy(p + sizeof(struct meta_header) + flen, path, plen);
    meta_end(p, total);
}

/* The offset of the last buffer record (note_buffer, runtime_shared.h). */
int64_t last_buffer_offset = -1;

void note_new_buffer(uint32_t off, uint64_t seq)
{
    size_t total;
    unsigned char *p = meta_begin(META_BUFFER, 8, seq, &total);
    if (!p) return;
    last_buffer_offset = off;
    memcpy(p + sizeof(struct meta_header), &off, sizeof off);
    meta_end(p, total);
}

void end_chunk(int how)
{
    flush_events();
    struct { uint64_t events; uint32_t how, lclock; } end = {ev_seq, (uint32_t)how, iom_lclock};
    write_chunk(CHUNK_END, &end, sizeof end, 0, ev_seq);
    if (write_failed) write_stop((uint32_t)how);
}

/* The end of the trace: what the buffers hold, the end chunk, the file closed. */
void finish(int how)
{
    end_chunk(how);
    sys_close(fd);
    fd = -1;
    iom_on = 0;
    iom_pon = 0;
}

/* Open the trace file and write its header, the stop chunk it reserves, the
 * routine table and the command line; then what was recorded before, which
 * the first flush writes.  Returns 0, or the errno of the open. */
int open_trace(const char *dir, int rank, int nranks, int thread_level, int exclusive,
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
void set_time_zero(uint64_t tick0, uint64_t mono0)
{
    struct { uint64_t tick0, mono0; int64_t real0; } z = {tick0, mono0, (int64_t)mono_ns(CLOCK_REALTIME)};
    _Static_assert(offsetof(struct file_header, real_origin_ns) - offsetof(struct file_header, tick_origin)
                   == 2 * sizeof(uint64_t), "time zero's three fields must follow one another");
    if (fd >= 0 && !write_failed)
        (void)!sys_pwrite(fd, &z, sizeof z, (off_t)offsetof(struct file_header, tick_origin));
}

/* Once the file exists the buffers have the run's size: what was recorded
 * before, if more, is written now. */
void run_buffers(void)
{
    if (ev_n > ev_cap_run || meta_n > meta_cap_run) flush_events();
    struct iom_event *e = realloc(ev_buf, ev_cap_run * sizeof *ev_buf);
    unsigned char *m = realloc(meta_buf, meta_cap_run);
    if (e) { ev_buf = e; ev_cap = ev_cap_run; }
    if (m) { meta_buf = m; meta_cap = meta_cap_run; }
}
