/*
 * iomodel_replay: the project's own stand-in for IOR 4.x.
 *
 * An MPI program that takes the IOR options iomodel's generator emits, performs
 * IOR's access pattern (MPI-IO with explicit offsets, or POSIX pread/pwrite),
 * times open, transfer and close the way IOR does, and reports in IOR's formats:
 * the text "Results:" and "Summary of all tests:" tables on stdout, and IOR's
 * JSON summary (-O summaryFormat=JSON -O summaryFile=F), so that one parser
 * (replay/results.py) reads both.  Written from IOR's documented behaviour and
 * output formats; no IOR code.  See docs/commands/replay.md.
 *
 * Layout (IOR 4.x): transfer j < b/t of segment i < s of rank r is at
 *     j*t + (F ? i*b : i*N*b + r*b)
 * and with --iomodel.offsets=first,per_rank,stride at
 *     j*t + first + r*per_rank + i*stride
 * where r is the rank, or for reads with -C the rank whose data is read.
 * With --iomodel.piece=P (MPI-IO, one shared file) each task's data goes
 * through a file view of pieces of P bytes, the tasks' pieces in turn
 * (piece q of task r at D + q*N*P, D = r*P, or first + r*per_rank with
 * --iomodel.offsets), transfer j of segment i at byte (i*b + j*t) of the view:
 * the non-contiguous access of an application's file view, which MPI-IO
 * handles as it does the application's (collective buffering, data sieving).
 *
 * This file holds the I/O and main; the command line is in replayer_options.c,
 * the reports in replayer_report.c, what they share in replayer.h.
 *
 * Exit status: 0 done, 1 I/O error (one line on stderr, from the first failing
 * rank), 2 bad options (one line on stderr, printed once).
 */
#include "replayer.h"

#define PERM_ARRAY_MAX (1LL << 24) /* shuffle in an array up to this many transfers a block */
#define CALL_TIMES_MAX (1LL << 20) /* collective transfers timed call by call up to this many a rank */

/* The tasks taking part in the test: MPI_COMM_WORLD, or its first -N tasks;
 * and those that open its shared file: test_comm, or (--iomodel.idleOpen) all. */
static MPI_Comm test_comm, open_comm;

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The order of the transfers of one block: identity, a shuffled array (-z),
 * or for huge blocks an affine permutation j -> (a*j + c) mod n. */
typedef struct {
    long long n;
    long long *perm;
    uint64_t a, c;
    int affine;
} order_t;

static int order_init(order_t *o, const params_t *p, int who)
{
    memset(o, 0, sizeof *o);
    o->n = p->block / p->xfer;
    if (!p->random)
        return 0;
    uint64_t s = p->seed * 0x100000001b3ULL + (uint64_t)who + 1;
    if (o->n <= PERM_ARRAY_MAX) {
        o->perm = malloc(sizeof(long long) * (size_t)o->n);
        if (!o->perm)
            return -1;
        for (long long j = 0; j < o->n; j++)
            o->perm[j] = j;
        for (long long j = o->n - 1; j > 0; j--) { /* Fisher-Yates */
            long long r = (long long)(splitmix64(&s) % (uint64_t)(j + 1));
            long long t = o->perm[j];
            o->perm[j] = o->perm[r];
            o->perm[r] = t;
        }
    } else {
        o->affine = 1;
        do
            o->a = splitmix64(&s) % (uint64_t)o->n;
        while (o->a == 0 || gcd64(o->a, (uint64_t)o->n) != 1);
        o->c = splitmix64(&s) % (uint64_t)o->n;
    }
    return 0;
}

static long long order_at(const order_t *o, long long j)
{
    if (o->perm)
        return o->perm[j];
    if (o->affine)
        return (long long)(((unsigned __int128)o->a * (uint64_t)j + o->c) % (uint64_t)o->n);
    return j;
}

static long long segment_base(const params_t *p, const ctx_t *c, long long i, int who)
{
    if (p->has_offsets)
        return p->off_first + (long long)who * p->off_per_rank + i * p->off_stride;
    if (p->fpp)
        return i * p->block;
    return i * c->ntasks * p->block + (long long)who * p->block;
}

static void mpi_message(int err, char *buf, size_t n)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "MPI error %d", err);
    /* one line */
    for (char *q = s; *q; q++)
        if (*q == '\n')
            *q = ' ';
    snprintf(buf, n, "%s", s);
}

/* ------------------------------------------------------------------ I/O */

typedef struct {
    MPI_File fh;
    int fd;
    int open;
} file_t;

typedef struct {
    char msg[512];
    int failed;
} ioerr_t;

static void fail(ioerr_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(ioerr_t *e, const char *fmt, ...)
{
    if (e->failed)
        return;
    e->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
}

static void remove_file(const params_t *p, const char *name)
{
    if (p->api == API_MPIIO) {
        MPI_File_delete((char *)name, MPI_INFO_NULL); /* absent: nothing to do */
    } else {
        unlink(name);
    }
}

/* --iomodel.fresh: repetition rep's file(s) under the name NAME.iomodel-rep.REP */
static void aside_name(const char *name, int rep, char *buf, size_t n)
{
    if (snprintf(buf, n, "%s.iomodel-rep.%d", name, rep) >= (int)n)
        buf[n - 1] = 0; /* parse_args bounds the names' length well below n */
}

/* The repetition's files, at its end: removed as IOR does, or (--iomodel.fresh)
 * renamed aside so that the next repetition's writes take pages of their own.
 * Collective: every rank calls it. */
static void end_repetition(const params_t *p, const ctx_t *c, int rep)
{
    char name[4096], aside[4200];
    MPI_Barrier(test_comm);
    test_file_name(p, c->rank, name, sizeof name);
    if (p->fpp || c->rank == 0) {
        if (!p->fresh)
            remove_file(p, name);
        else {
            aside_name(name, rep, aside, sizeof aside);
            if (rename(name, aside) != 0 && errno != ENOENT) /* not renamed: do as IOR */
                remove_file(p, name);
        }
    }
    MPI_Barrier(test_comm);
}

/* --iomodel.fresh: remove the files the first `reps` repetitions set aside */
static void remove_aside(const params_t *p, const ctx_t *c, int reps)
{
    char name[4096], aside[4200];
    MPI_Barrier(test_comm);
    test_file_name(p, c->rank, name, sizeof name);
    if (p->fpp || c->rank == 0)
        for (int rep = 0; rep < reps; rep++) {
            aside_name(name, rep, aside, sizeof aside);
            unlink(aside);
        }
    MPI_Barrier(test_comm);
}

static void file_open(const params_t *p, const char *name, int access, file_t *f, ioerr_t *e)
{
    f->open = 0;
    if (p->api == API_MPIIO) {
        MPI_Comm comm = p->fpp ? MPI_COMM_SELF : open_comm;
        int mode = access == WRITE ? (MPI_MODE_CREATE | (p->reread ? MPI_MODE_RDWR : MPI_MODE_WRONLY))
                                   : MPI_MODE_RDONLY;
        int rc = MPI_File_open(comm, (char *)name, mode, MPI_INFO_NULL, &f->fh);
        if (rc != MPI_SUCCESS) {
            char m[MPI_MAX_ERROR_STRING];
            mpi_message(rc, m, sizeof m);
            fail(e, "cannot open %s for %s: %s", name, access == WRITE ? "writing" : "reading", m);
            return;
        }
        MPI_File_set_errhandler(f->fh, MPI_ERRORS_RETURN);
    } else {
        f->fd = access == WRITE ? open(name, (p->reread ? O_RDWR : O_WRONLY) | O_CREAT, 0664)
                                : open(name, O_RDONLY);
        if (f->fd < 0) {
            fail(e, "cannot open %s for %s: %s", name, access == WRITE ? "writing" : "reading",
                 strerror(errno));
            return;
        }
    }
    f->open = 1;
}

/* --iomodel.piece: the task's view, pieces of P bytes every N*P bytes from its first */
static void piece_view(const params_t *p, const ctx_t *c, file_t *f, int who, const char *name,
                       ioerr_t *e)
{
    if (!f->open)
        return;
    MPI_Datatype one, tiled;
    long long disp = p->has_offsets ? p->off_first + (long long)who * p->off_per_rank
                                    : (long long)who * p->piece;
    MPI_Type_contiguous((int)p->piece, MPI_BYTE, &one);
    MPI_Type_create_resized(one, 0, (MPI_Aint)c->ntasks * p->piece, &tiled);
    MPI_Type_commit(&tiled);
    int rc = MPI_File_set_view(f->fh, (MPI_Offset)disp, MPI_BYTE, tiled, "native", MPI_INFO_NULL);
    MPI_Type_free(&one);
    MPI_Type_free(&tiled);
    if (rc != MPI_SUCCESS) {
        char m[MPI_MAX_ERROR_STRING];
        mpi_message(rc, m, sizeof m);
        fail(e, "cannot set the view of pieces of %lld bytes on %s: %s", p->piece, name, m);
    }
}

static void file_sync(const params_t *p, file_t *f, const char *name, ioerr_t *e)
{
    if (!f->open)
        return;
    if (p->api == API_MPIIO) {
        int rc = MPI_File_sync(f->fh);
        if (rc != MPI_SUCCESS) {
            char m[MPI_MAX_ERROR_STRING];
            mpi_message(rc, m, sizeof m);
            fail(e, "cannot sync %s: %s", name, m);
        }
    } else if (fsync(f->fd) != 0) {
        fail(e, "cannot sync %s: %s", name, strerror(errno));
    }
}

static void file_close(const params_t *p, file_t *f, const char *name, ioerr_t *e)
{
    if (!f->open)
        return;
    f->open = 0;
    if (p->api == API_MPIIO) {
        int rc = MPI_File_close(&f->fh);
        if (rc != MPI_SUCCESS) {
            char m[MPI_MAX_ERROR_STRING];
            mpi_message(rc, m, sizeof m);
            fail(e, "cannot close %s: %s", name, m);
        }
    } else if (close(f->fd) != 0) {
        fail(e, "cannot close %s: %s", name, strerror(errno));
    }
}

/* One transfer of p->xfer bytes at `offset`; collective with -c under MPI-IO. */
static void transfer(const params_t *p, file_t *f, int access, void *buf, long long offset,
                     MPI_Datatype unit, int count, const char *name, ioerr_t *e)
{
    const char *what = access == WRITE ? "write" : "read";
    if (p->api == API_MPIIO) {
        MPI_Status st;
        int rc;
        if (access == WRITE)
            rc = p->coll ? MPI_File_write_at_all(f->fh, offset, buf, count, unit, &st)
                         : MPI_File_write_at(f->fh, offset, buf, count, unit, &st);
        else
            rc = p->coll ? MPI_File_read_at_all(f->fh, offset, buf, count, unit, &st)
                         : MPI_File_read_at(f->fh, offset, buf, count, unit, &st);
        if (rc != MPI_SUCCESS) {
            char m[MPI_MAX_ERROR_STRING];
            mpi_message(rc, m, sizeof m);
            fail(e, "cannot %s %lld bytes at offset %lld of %s: %s", what, p->xfer, offset, name, m);
            return;
        }
        int got = 0;
        MPI_Get_count(&st, unit, &got);
        if (got != count)
            fail(e, "short %s at offset %lld of %s: %lld of %lld bytes", what, offset, name,
                 (long long)got * (p->xfer / count), p->xfer);
    } else {
        long long done = 0;
        while (done < p->xfer) {
            ssize_t n = access == WRITE
                            ? pwrite(f->fd, (char *)buf + done, (size_t)(p->xfer - done), offset + done)
                            : pread(f->fd, (char *)buf + done, (size_t)(p->xfer - done), offset + done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                fail(e, "cannot %s %lld bytes at offset %lld of %s: %s", what, p->xfer, offset, name,
                     strerror(errno));
                return;
            }
            if (n == 0) {
                fail(e, "short %s at offset %lld of %s: %lld of %lld bytes", what, offset, name,
                     done, p->xfer);
                return;
            }
            done += n;
        }
    }
}

/* After a step every rank may have failed in: the lowest failing rank prints
 * its one-line message; everyone learns whether to stop. */
static int any_failed(const ctx_t *c, const ioerr_t *e)
{
    int mine = e->failed ? c->rank : INT_MAX, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, test_comm);
    if (first == INT_MAX)
        return 0;
    if (first == c->rank) {
        fprintf(stderr, PROG ": rank %d: %s\n", c->rank, e->msg);
        fflush(stderr);
    }
    return 1;
}

/* Times compared across ranks need one clock.  MPI_Wtime is not one: Open
 * MPI counts it from each process's first call, and ranks leave a barrier up
 * to hundreds of microseconds apart when they outnumber the cores.  Ranks on
 * one node share CLOCK_MONOTONIC; across nodes, each rank counts from its own
 * exit from a barrier (as the tracer's time zero), microseconds apart. */
static int clock_shared;     /* every rank on this node: CLOCK_MONOTONIC */
static double clock_origin;  /* otherwise MPI_Wtime at the barrier's exit */

static double now(void)
{
    if (clock_shared) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    }
    return MPI_Wtime() - clock_origin;
}

static void clock_init(const ctx_t *c)
{
    MPI_Comm node;
    int size = 0;
    MPI_Comm_split_type(test_comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &size);
    MPI_Comm_free(&node);
    int shared = size == c->ntasks, all_shared;
    MPI_Allreduce(&shared, &all_shared, 1, MPI_INT, MPI_MIN, test_comm);
    clock_shared = all_shared;
    MPI_Barrier(test_comm);
    clock_origin = MPI_Wtime();
}

/* The time of a phase's collective transfers (rank 0; -1 elsewhere, or when a
 * rank could not time them): per call, from the last rank's entry to the last
 * rank's exit, summed.  A rank's own time in its calls falls short when the
 * last to leave is not the same rank in every call (two ranks' 1 MiB
 * collective writes to tmpfs, after a barrier each: 0.28 and 0.60 ms in turn,
 * 0.44 ms a call by either rank's own calls, 0.60 ms so); the model reckons a
 * traced collective phase the same way.  Collective: every rank calls it. */
static double call_time(const ctx_t *c, const double *calls, long long ops)
{
    long long mine[3] = {calls != NULL, ops, -ops}, all[3];
    MPI_Allreduce(mine, all, 3, MPI_LONG_LONG, MPI_MIN, test_comm);
    if (!all[0] || all[1] != -all[2] || ops == 0)
        return -1.0; /* a rank without the times, or ranks of different counts */
    double *last = c->rank == 0 ? malloc((size_t)(2 * ops) * sizeof *last) : NULL;
    int ok = c->rank != 0 || last != NULL, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, test_comm);
    if (!all_ok)
        return -1.0;
    MPI_Reduce(calls, last, (int)(2 * ops), MPI_DOUBLE, MPI_MAX, 0, test_comm);
    double sum = -1.0;
    if (c->rank == 0) {
        sum = 0.0;
        for (long long j = 0; j < ops; j++)
            if (last[2 * j + 1] > last[2 * j])
                sum += last[2 * j + 1] - last[2 * j];
        free(last);
    }
    return sum;
}

/* One write or read phase of one repetition, timed as IOR does: a barrier, then
 * per rank open start/stop, transfer start/stop, close start/stop; rank 0 gets
 * the earliest starts and the latest stops.  Returns 0, or 1 after an error. */
static int run_phase(const params_t *p, const ctx_t *c, int access, void *buf, point_t *out,
                     file_t *held)
{
    int who = access == READ ? (c->rank + c->rank_offset) % c->ntasks : c->rank;
    char name[4096];
    test_file_name(p, who, name, sizeof name);
    ioerr_t e = {{0}, 0};
    file_t local = {0};
    /* --iomodel.reread: the write leaves its open file in *held for the read */
    file_t *fp = held ? held : &local;
    int opens = !(held && access == READ), closes = !(held && access == WRITE);
    order_t order;
    if (order_init(&order, p, who) != 0)
        fail(&e, "out of memory for the -z order of %lld transfers", p->block / p->xfer);

    MPI_Datatype unit = MPI_BYTE;
    int count = (int)p->xfer;
    if (p->xfer > INT_MAX) { /* count in 8-byte units */
        MPI_Type_contiguous(8, MPI_BYTE, &unit);
        MPI_Type_commit(&unit);
        count = (int)(p->xfer / 8);
    }

    if (access == WRITE && !p->existing) {
        if (p->fpp)
            remove_file(p, name);
        else if (c->rank == 0)
            remove_file(p, name);
    }
    if (p->inter_delay)
        sleep((unsigned)p->inter_delay);
    MPI_Barrier(test_comm);

    double t[6];
    long long ops = 0;
    t[0] = now();
    if (!e.failed && opens) {
        file_open(p, name, access, fp, &e);
        if (p->piece)
            piece_view(p, c, fp, who, name, &e);
    }
    else if (!e.failed && !fp->open)
        fail(&e, "%s is not open for the reread", name);
    t[1] = now();
    /* every rank must hold the file before collective transfers (acts as -g here) */
    if (any_failed(c, &e)) {
        file_close(p, fp, name, &e);
        free(order.perm);
        if (unit != MPI_BYTE)
            MPI_Type_free(&unit);
        return 1;
    }
    if (p->intra_barriers)
        MPI_Barrier(test_comm);
    t[2] = now();
    long long per_block = p->block / p->xfer;
    /* collective calls on a shared file: write/read_at_all, and MPI_File_sync for -Y */
    int keep_going = p->api == API_MPIIO && !p->fpp && (p->coll || p->fsync_per_write);
    double idle = 0.0;
    /* collective transfers: each one's entry and exit, for call_time() */
    long long nops = p->segments * per_block;
    double *calls = p->api == API_MPIIO && !p->fpp && p->coll && nops <= CALL_TIMES_MAX
                        ? malloc((size_t)(2 * nops) * sizeof *calls) : NULL;
    for (long long i = 0; i < p->segments; i++) {
        /* with pieces, the view places the data: offsets are in the task's own bytes */
        long long base = p->piece ? i * p->block : segment_base(p, c, i, who);
        /* the application's time between phases: a phase is gap_every segments */
        int phase_start = i > 0 && i % p->gap_every == 0;
        if (phase_start && (p->gap > 0 || p->gap_barrier)) {
            double s0 = now();
            struct timespec ts = {(time_t)p->gap, (long)((p->gap - (time_t)p->gap) * 1e9)};
            while (p->gap > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR) {
            }
            /* every rank runs every segment, failed or not, so all meet here */
            if (p->gap_barrier)
                MPI_Barrier(test_comm);
            idle += now() - s0;
        }
        for (long long j = 0; j < per_block; j++) {
            /* after an error keep issuing collective calls so that no rank waits forever */
            if (e.failed && !keep_going)
                break;
            /* the computing between a phase's operations: spin, as the application computes
             * (a sleep would free the core and wake late); a gap replaces it between phases */
            if (p->think > 0 && (j > 0 || (i > 0 && !(phase_start && p->gap > 0)))) {
                double s0 = now();
                while (now() - s0 < p->think)
                    if (c->crowded)
                        sched_yield();
                idle += now() - s0;
            }
            double a = now();
            transfer(p, fp, access, buf, base + order_at(&order, j) * p->xfer, unit, count, name, &e);
            if (calls && ops < nops) {
                calls[2 * ops] = a;
                calls[2 * ops + 1] = now();
            }
            ops++;
            if (access == WRITE && p->fsync_per_write)
                file_sync(p, fp, name, &e);
        }
    }
    if (access == WRITE && p->fsync)
        file_sync(p, fp, name, &e);
    t[3] = now();
    t[2] += idle; /* the transfer time leaves the idle gaps and the computing out */
    if (p->intra_barriers)
        MPI_Barrier(test_comm);
    t[4] = now();
    if (closes || e.failed)
        file_close(p, fp, name, &e);
    t[5] = now();
    free(order.perm);
    if (unit != MPI_BYTE)
        MPI_Type_free(&unit);
    if (any_failed(c, &e)) {
        file_close(p, fp, name, &e);
        free(calls);
        return 1;
    }
    double per_call = call_time(c, calls, ops);
    free(calls);

    double starts[3] = {t[0], t[2], t[4]}, stops[3] = {t[1], t[3], t[5]}, first[3], last[3];
    double latency = ops ? (t[3] - t[2]) / ops : 0.0, min_latency = 0.0;
    /* wr/rd is IOR's span (first start to last end over ranks), which counts the
     * ranks' skew leaving the barrier; a traced application's phase time is the
     * slowest process's time inside its own calls, so report that too */
    double busy = t[3] - t[2], max_busy = 0.0;
    MPI_Reduce(starts, first, 3, MPI_DOUBLE, MPI_MIN, 0, test_comm);
    MPI_Reduce(stops, last, 3, MPI_DOUBLE, MPI_MAX, 0, test_comm);
    MPI_Reduce(&latency, &min_latency, 1, MPI_DOUBLE, MPI_MIN, 0, test_comm);
    MPI_Reduce(&busy, &max_busy, 1, MPI_DOUBLE, MPI_MAX, 0, test_comm);
    if (c->rank == 0) {
        double agg = (double)c->ntasks * p->segments * p->block;
        out->open = last[0] - first[0];
        out->wrrd = last[1] - first[1];
        out->close = last[2] - first[2];
        out->total = last[2] - first[0];
        if (out->total <= 0)
            out->total = 1e-9;
        double access_time = out->wrrd > 0 ? out->wrrd : 1e-9;
        out->bw = agg / out->total;
        out->iops = agg / p->xfer / access_time;
        out->latency = min_latency;
        out->io_time = per_call >= 0 ? per_call : max_busy;
    }
    return 0;
}

/* ------------------------------------------------------------------ main */

static void describe_placement(const params_t *p, ctx_t *c)
{
    MPI_Comm node;
    int nrank, nsize, leader, lowest, block = 1;
    MPI_Comm_split_type(test_comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    leader = nrank == 0;
    MPI_Allreduce(&leader, &c->nodes, 1, MPI_INT, MPI_SUM, test_comm);
    c->tpn = nsize;
    MPI_Bcast(&c->tpn, 1, MPI_INT, 0, test_comm);
    MPI_Allreduce(&c->rank, &lowest, 1, MPI_INT, MPI_MIN, node);
    if (c->ntasks > 1) { /* block (by slot) mapping: rank 1 shares rank 0's node */
        int v = c->rank == 1 ? lowest == 0 : 0;
        MPI_Allreduce(&v, &block, 1, MPI_INT, MPI_MAX, test_comm);
    }
    MPI_Comm_free(&node);
    if (p->tpn_override) {
        c->tpn = p->tpn_override;
        c->nodes = (c->ntasks + c->tpn - 1) / c->tpn;
        block = 1;
    }
    /* more tasks on the node than cores it lets us use: a task computing between
     * transfers yields, as on a cluster each task would compute on a core of its
     * own, not on the core a task finishing its transfer needs (4 tasks of 3 ms
     * computing between collective 80 KiB writes on 2 cores: 10 to 15 ms a write
     * from the last entry spinning, 0.5 to 0.65 ms yielding, 0.23 to 0.34 back to back) */
    cpu_set_t cpus;
    c->crowded = sched_getaffinity(0, sizeof cpus, &cpus) == 0 && nsize > CPU_COUNT(&cpus);
    /* IOR 4: -C moves task_offset nodes away; by slot that is tasks-per-node ranks */
    int shift = block ? c->tpn : 1;
    c->rank_offset = p->reorder ? (int)(((long long)p->task_offset * shift) % c->ntasks) : 0;
}

/* IOR 4's -Z, picked as it does at each repetition: the first rand() % ntasks,
 * after srand(rank + seed), at least task_offset nodes away (but within the
 * nodes there are); a negative -X seed is offset by the repetition */
static void random_reorder(const params_t *p, ctx_t *c, int rep)
{
    if (!p->reorder_random)
        return;
    int nodes = p->task_offset < c->nodes ? p->task_offset : c->nodes - 1;
    unsigned seed = p->reorder_seed < 0 ? (unsigned)(-p->reorder_seed + rep) : (unsigned)p->reorder_seed;
    srand((unsigned)c->rank + seed);
    do
        c->rank_offset = rand() % c->ntasks;
    while (c->rank_offset < nodes * c->tpn);
}

/* --iomodel.idleOpen: rank 0 tells the idle tasks the next phase (WRITE + 1 or
 * READ + 1), or 0 when there is none (a failure ends the test early) */
static int announce(const params_t *p, int next)
{
    if (p->idle_open && test_comm != MPI_COMM_WORLD)
        MPI_Bcast(&next, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return next;
}

/* --iomodel.idleOpen, a task beyond -N: open the shared file with the others at
 * each phase and close it with them, as an application's processes that opened
 * a file one of them writes alone (two processes holding a Gluster file open
 * make one's 512-byte write slower than when it alone holds it: medians of 0.47
 * to 0.72 against 0.37 to 0.44 ms); they wait in MPI_File_close meanwhile */
static void idle_tasks(const params_t *p)
{
    char name[4096];
    int next;
    test_file_name(p, 0, name, sizeof name);
    while ((next = announce(p, 0)) != 0) {
        MPI_File fh;
        int mode = next - 1 == WRITE ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
        if (MPI_File_open(MPI_COMM_WORLD, name, mode, MPI_INFO_NULL, &fh) == MPI_SUCCESS)
            MPI_File_close(&fh);
    }
}

/* -N: the tasks taking part let the idle ones (in their barrier) go */
static void release_idle(void)
{
    if (test_comm != MPI_COMM_WORLD) {
        MPI_Comm_free(&test_comm);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    params_t p;
    ctx_t c;
    parse_args(&p, argc, argv);

    MPI_Init(&argc, &argv);
    memset(&c, 0, sizeof c);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.ntasks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* -N, as IOR: the first N tasks take part, the others wait in a barrier
     * until they are done (an application's phase of fewer processes than it
     * has: its idle processes wait in MPI, on the same cores) */
    int world = c.ntasks;
    if (p.num_tasks > world) {
        if (c.rank == 0)
            fprintf(stderr, PROG ": warning: -N %d: only %d tasks were launched; all take part\n",
                    p.num_tasks, world);
        p.num_tasks = 0;
    }
    test_comm = MPI_COMM_WORLD;
    open_comm = MPI_COMM_WORLD;
    if (p.num_tasks > 0 && p.num_tasks < world) {
        MPI_Comm_split(MPI_COMM_WORLD, c.rank < p.num_tasks ? 0 : MPI_UNDEFINED, c.rank, &test_comm);
        if (test_comm == MPI_COMM_NULL) {
            if (p.idle_open)
                idle_tasks(&p);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Finalize();
            return 0;
        }
        MPI_Comm_size(test_comm, &c.ntasks);
        if (!p.idle_open)
            open_comm = test_comm;
    }
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    clock_init(&c);
    describe_placement(&p, &c);
    if (c.rank == 0) {
        print_warnings(stderr);
        now_string(c.began, sizeof c.began);
        struct utsname u;
        if (uname(&u) == 0) {
            snprintf(c.machine, sizeof c.machine, "%s %s", u.sysname, u.nodename);
            snprintf(c.platform, sizeof c.platform, "%s(%s)", u.nodename, u.sysname);
        } else {
            snprintf(c.machine, sizeof c.machine, "Unknown");
            snprintf(c.platform, sizeof c.platform, "Unknown");
        }
        if (p.api == API_MPIIO) {
            int v, sv;
            MPI_Get_version(&v, &sv);
            snprintf(c.api_version, sizeof c.api_version, "(%d.%d)", v, sv);
        }
    }

    if (p.names) { /* -o is the directory of the application-named files */
        int failed = 0;
        if (c.rank == 0 && mkdir(p.path, 0775) != 0 && errno != EEXIST) {
            fprintf(stderr, PROG ": cannot make the directory %s (-o, for --iomodel.names): %s\n",
                    p.path, strerror(errno));
            failed = 1;
        }
        MPI_Bcast(&failed, 1, MPI_INT, 0, test_comm);
        if (failed) {
            announce(&p, 0);
            release_idle();
            MPI_Finalize();
            return 1;
        }
    }

    /* text on stdout, unless the JSON summary goes there (JSON without a file) */
    int text = !(p.format == FMT_JSON && !p.summary_file);
    if (c.rank == 0 && text)
        text_header(stdout, &p, &c);

    void *base = NULL;
    int status = 0;
    if (posix_memalign(&base, 4096, (size_t)(p.xfer + p.buffer_offset)) != 0) {
        fprintf(stderr, PROG ": rank %d: cannot allocate a transfer buffer of %lld bytes\n", c.rank,
                p.xfer);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    void *buf = (char *)base + p.buffer_offset;
    for (long long i = 0; i < p.xfer / 8; i++) { /* a pattern that names the rank and the word */
        uint64_t v = ((uint64_t)c.rank << 48) ^ (uint64_t)i ^ 0x5a5a5a5a00000000ULL;
        memcpy((char *)buf + 8 * i, &v, sizeof v); /* buf may be unaligned */
    }

    point_t *res[2] = {calloc((size_t)p.reps, sizeof(point_t)), calloc((size_t)p.reps, sizeof(point_t))};
    int rep = 0;
    for (; rep < p.reps && !status; rep++) {
        file_t held = {0};
        random_reorder(&p, &c, rep);
        if (p.do_write) {
            announce(&p, WRITE + 1);
            status = run_phase(&p, &c, WRITE, buf, &res[WRITE][rep], p.reread ? &held : NULL);
            if (!status && c.rank == 0 && text)
                text_result(stdout, &p, WRITE, &res[WRITE][rep], rep);
        }
        if (!status && p.do_read) {
            announce(&p, READ + 1);
            status = run_phase(&p, &c, READ, buf, &res[READ][rep], p.reread ? &held : NULL);
            if (!status && c.rank == 0 && text)
                text_result(stdout, &p, READ, &res[READ][rep], rep);
        }
        if (!p.keep) /* as IOR: remove the file(s) after each repetition (or set them aside) */
            end_repetition(&p, &c, rep);
    }
    announce(&p, 0);
    if (p.fresh)
        remove_aside(&p, &c, rep);

    if (!p.keep && p.names && c.rank == 0)
        rmdir(p.path); /* the replay's directory, when nothing else is in it */

    if (!status && c.rank == 0) {
        if (text)
            text_summary(stdout, &p, &c, res);
        if (p.format == FMT_JSON || p.summary_file) {
            FILE *o = stdout;
            if (p.summary_file && !(o = fopen(p.summary_file, "w"))) {
                fprintf(stderr, PROG ": cannot write the summary file %s: %s\n", p.summary_file,
                        strerror(errno));
                status = 1;
            } else {
                if (p.format == FMT_JSON)
                    json_summary(o, &p, &c, res);
                else
                    text_summary(o, &p, &c, res);
                if (o != stdout && fclose(o) != 0) {
                    fprintf(stderr, PROG ": cannot write the summary file %s: %s\n", p.summary_file,
                            strerror(errno));
                    status = 1;
                }
            }
        }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, test_comm);
    release_idle();
    free(base);
    free(res[0]);
    free(res[1]);
    MPI_Finalize();
    return status;
}
