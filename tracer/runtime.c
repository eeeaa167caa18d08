/* iomodel tracer runtime: the process's life.  At the library's load POSIX
 * and stdio tracing starts in memory; at MPI_Init every rank's trace file is
 * opened (buffers.c), at MPI_Finalize ended and, in a large enough job,
 * copied into one file (jobfile.c), at exit ended again; a forked child stops
 * tracing, and a signal that stops the job ends the trace first.  The other
 * files: buffers.c (the buffers and the trace file), clock.c, tables.c (open
 * files, requests), paths.c (which files are followed), record_mpi.c and
 * record_posix.c (the recording functions the generated wrappers call),
 * typerecords.c (file views' types), mpilib.c (which MPI the process runs). */
#define _GNU_SOURCE
#include "runtime_shared.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

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

static int finalized;                /* MPI_Finalize passed: the file stays open for what follows */
int nonmpi;                          /* a process `iomodel trace` started without a launcher */
static int posix_off;                /* IOMODEL_POSIX=0: MPI-IO only */
static uint64_t load_ticks, load_mono_ns; /* when the library was loaded (a non-MPI trace's zero) */
static int job_ranks;                /* the job's size (MPI_COMM_WORLD) */
static size_t join_min = 1;          /* IOMODEL_JOIN: the fewest ranks that write one file per job */

void *iom_dlsym_next(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static void posix_init(void);

static size_t env_size(const char *name, size_t dflt, size_t min)
{
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    return (*end || v < min) ? dflt : (size_t)v;
}

/* ------------------------------------------------------------- life cycle */

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
    follow_init();
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

/* An earlier run traced into the same directory (a batch script run twice)
 * would have the reader mix its files with this run's: each rank removes its
 * own continuation file, rank 0 the job file and the rank files of ranks this
 * job does not have.  Its own rank files the ranks have just replaced. */
static void clear_earlier_run(const char *dir, int rank, int nranks)
{
    char path[4096];
    int d = iom_depth;
    iom_depth = 2;                   /* the tracer's own file work, never the application's */
    snprintf(path, sizeof path, "%s/rank-%06d.iot.after", dir, rank);
    sys_unlink(path);
    if (rank == 0) {
        snprintf(path, sizeof path, "%s/job.iot", dir);
        sys_unlink(path);
        DIR *dp = opendir(dir);
        struct dirent *e;
        while (dp && (e = readdir(dp)) != NULL) {
            int r, n = -1;
            if (sscanf(e->d_name, "rank-%d.iot%n", &r, &n) == 1 && n > 0 && r >= nranks &&
                (!e->d_name[n] || !strcmp(e->d_name + n, ".after"))) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                sys_unlink(path);
            }
        }
        if (dp) closedir(dp);
    }
    iom_depth = d;
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
    clear_earlier_run(dir, my_rank, nranks);
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
