/* Tracer microbenchmark: time per call of MPI_File_write_at (0 bytes and
 * 4 KiB, on a file in /dev/shm), of POSIX pwrite (0 bytes and 4 KiB on a file
 * the tracer follows, in /dev/shm; 0 bytes on /dev/null, a path it leaves
 * out: what every other descriptor's calls pay), of stdio's fputc (1 byte)
 * and fwrite (4 KiB) on a stream it follows (rewound every 256 calls, so
 * that the file stays small), of a communication call with no I/O
 * (MPI_Barrier on MPI_COMM_SELF) and of MPI_File_set_view with S3D-IO's
 * filetype (one of 2 ranks' part of 16 arrays of 48^3 doubles: a subarray
 * {16,48,48,48} of {16,24,48,48}, 6.75 MiB in 16 runs), run once untraced and
 * once traced by bench/tracer_bench.py; the difference is the tracer's cost
 * per call.  It also times one read of the clock the tracer reads twice per
 * traced call (the time-stamp counter on x86), which bounds that cost from
 * below on the machine at hand.
 *
 * The same calls are also timed within the process, in alternating blocks of
 * BLOCK calls through the name the application calls (the tracer's wrapper
 * when it is preloaded) and through the real function (found in libc or the
 * MPI library itself); the median of the blocks' differences is the wrapper's
 * cost with the system's own drift, which moves a syscall's time by more than
 * that cost from one process to the next, cancelled.  Untraced, both names
 * reach the same function, and the difference is the method's own bias.
 *
 * usage: tracer_micro DIR CALLS          prints one line of JSON */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The tracer's clock: tracer/runtime.h, iom_ticks(). */
static inline unsigned long long ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000u + (unsigned long long)ts.tv_nsec;
#endif
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The real functions, whatever is preloaded: from the loaded MPI library and libc. */
static char mpi_lib[4096];
static int find_mpi(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    if (!strstr(info->dlpi_name, "/libmpi.so") && !strstr(info->dlpi_name, "/libmpich.so")) return 0;
    snprintf(mpi_lib, sizeof mpi_lib, "%s", info->dlpi_name);
    return 1;
}
typedef int write_at_fn(MPI_File, MPI_Offset, const void *, int, MPI_Datatype, MPI_Status *);
typedef ssize_t pwrite_fn(int, const void *, size_t, off_t);
typedef int fputc_fn(int, FILE *);
typedef size_t fwrite_fn(const void *, size_t, size_t, FILE *);
static write_at_fn *real_write_at;
static pwrite_fn *real_pwrite;
static fputc_fn *real_fputc;
static fwrite_fn *real_fwrite;

static void find_reals(void)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    dl_iterate_phdr(find_mpi, NULL);
    void *mpi = mpi_lib[0] ? dlopen(mpi_lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    real_pwrite = libc ? (pwrite_fn *)dlsym(libc, "pwrite") : NULL;
    real_fputc = libc ? (fputc_fn *)dlsym(libc, "fputc") : NULL;
    real_fwrite = libc ? (fwrite_fn *)dlsym(libc, "fwrite") : NULL;
    real_write_at = mpi ? (write_at_fn *)dlsym(mpi, "PMPI_File_write_at") : NULL;
    if (!real_pwrite || !real_fputc || !real_fwrite || !real_write_at) {
        fprintf(stderr, "tracer_micro: cannot find the real pwrite, fputc, fwrite and PMPI_File_write_at\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The stdio calls measured: fputc of 1 byte (s 0) or fwrite of 4 KiB (s 1),
 * through the wrapper (named) or the real function; the stream rewound every
 * 256 calls (i). */
static void stdio_call(int s, int named, long i, FILE *sf, const char *buf)
{
    if (i % 256 == 0) rewind(sf);
    if (s == 0 ? (named ? fputc('x', sf) : real_fputc('x', sf)) == EOF
               : (named ? fwrite(buf, 1, 4096, sf) : real_fwrite(buf, 1, 4096, sf)) != 4096)
        MPI_Abort(MPI_COMM_WORLD, 1);
}

#define BLOCK 100
/* Median over NB pairs of blocks of (named - real) ns per call: case 0-1
 * MPI_File_write_at of 0 B and 4 KiB, 2-3 pwrite of 0 B and 4 KiB on the
 * followed file, 4 pwrite of 0 B on the left-out one, 5-6 fputc and fwrite
 * 4 KiB on the followed stream. */
static double in_process(int c, long nb, MPI_File fh, int pfd, int nfd, FILE *sf, const char *buf)
{
    static const int bytes[5] = {0, 4096, 0, 4096, 0};
    double *d = malloc(sizeof *d * (size_t)nb);
    for (long b = 0; b < nb; b++) {
        double t[2];
        for (int k = 0; k < 2; k++) {
            int named = (int)((b + k) % 2);   /* which goes first alternates */
            double t0 = now();
            for (int i = 0; i < BLOCK; i++) {
                MPI_Offset o = (MPI_Offset)(i % 256) * 4096;
                int f = c == 4 ? nfd : pfd;
                if (c >= 5) stdio_call(c - 5, named, i, sf, buf);
                else if (c < 2 && named) MPI_File_write_at(fh, o, buf, bytes[c], MPI_BYTE, MPI_STATUS_IGNORE);
                else if (c < 2) real_write_at(fh, o, buf, bytes[c], MPI_BYTE, MPI_STATUS_IGNORE);
                else if ((named ? pwrite(f, buf, (size_t)bytes[c], o) : real_pwrite(f, buf, (size_t)bytes[c], o)) < 0)
                    MPI_Abort(MPI_COMM_WORLD, 1);
            }
            t[named] = (now() - t0) / BLOCK * 1e9;
        }
        d[b] = t[1] - t[0];
    }
    qsort(d, (size_t)nb, sizeof *d, by_value);
    double m = d[nb / 2];
    free(d);
    return m;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: %s DIR CALLS\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = atol(argv[2]);
    char path[4096], buf[4096];
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(path, sizeof path, "%s/micro.%d.dat", argv[1], rank);
    memset(buf, 7, sizeof buf);
    MPI_File fh;
    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    double t[4];
    const int sizes[2] = {0, 4096};
    for (int s = 0; s < 2; s++) {
        for (long i = 0; i < n / 10; i++) /* warm up: page cache, file size */
            MPI_File_write_at(fh, (MPI_Offset)(i % 256) * 4096, buf, sizes[s], MPI_BYTE, MPI_STATUS_IGNORE);
        double t0 = now();
        for (long i = 0; i < n; i++)
            MPI_File_write_at(fh, (MPI_Offset)(i % 256) * 4096, buf, sizes[s], MPI_BYTE, MPI_STATUS_IGNORE);
        t[s] = (now() - t0) / n;
    }
    double t0 = now();
    for (long i = 0; i < n; i++) MPI_Barrier(MPI_COMM_SELF);
    t[2] = (now() - t0) / n;
    const int gsz[4] = {16, 48, 48, 48}, sub[4] = {16, 24, 48, 48}, start[4] = {0, 0, 0, 0};
    MPI_Datatype slab;
    MPI_Type_create_subarray(4, gsz, sub, start, MPI_ORDER_C, MPI_DOUBLE, &slab);
    MPI_Type_commit(&slab);
    long nv = n / 2000 > 20 ? n / 2000 : 20;
    t0 = now();
    for (long i = 0; i < nv; i++)
        MPI_File_set_view(fh, 512, MPI_DOUBLE, slab, "native", MPI_INFO_NULL);
    t[3] = (now() - t0) / nv;
    MPI_Type_free(&slab);
    /* POSIX: a file the tracer follows (in /dev/shm), and one it leaves out */
    char ppath[4096];
    snprintf(ppath, sizeof ppath, "%s/posix.%d.dat", argv[1], rank);
    int pfd = open(ppath, O_CREAT | O_RDWR | O_TRUNC, 0644), nfd = open("/dev/null", O_WRONLY);
    double tp[3];
    const int psizes[3] = {0, 4096, 0};
    for (int s = 0; s < 3; s++) {
        int f = s == 2 ? nfd : pfd;
        for (long i = 0; i < n / 10; i++)
            if (pwrite(f, buf, (size_t)psizes[s], (off_t)(i % 256) * 4096) < 0) MPI_Abort(MPI_COMM_WORLD, 1);
        double t1 = now();
        for (long i = 0; i < n; i++)
            if (pwrite(f, buf, (size_t)psizes[s], (off_t)(i % 256) * 4096) < 0) MPI_Abort(MPI_COMM_WORLD, 1);
        tp[s] = (now() - t1) / n;
    }
    find_reals();
    /* stdio: a stream the tracer follows (in /dev/shm) */
    char spath[4096];
    snprintf(spath, sizeof spath, "%s/stdio.%d.dat", argv[1], rank);
    FILE *sf = fopen(spath, "w");
    if (!sf) MPI_Abort(MPI_COMM_WORLD, 1);
    double ts[2];
    for (int s = 0; s < 2; s++) {
        for (long i = 0; i < n / 10; i++) stdio_call(s, 1, i, sf, buf);
        double t1 = now();
        for (long i = 0; i < n; i++) stdio_call(s, 1, i, sf, buf);
        ts[s] = (now() - t1) / n;
    }
    double ip[7];
    long nb = n / (2 * BLOCK) / 4 > 0 ? n / (2 * BLOCK) / 4 : 1;   /* a quarter of CALLS a measure */
    for (int c = 0; c < 7; c++) ip[c] = in_process(c, nb, fh, pfd, nfd, sf, buf);
    fclose(sf);
    unlink(spath);
    close(pfd);
    close(nfd);
    unlink(ppath);
    volatile unsigned long long sink = 0;   /* keeps the reads in the loop */
    t0 = now();
    for (long i = 0; i < n; i++) sink += ticks();
    double clock_s = (now() - t0) / n;
    (void)sink;
    MPI_File_close(&fh);
    unlink(path);
    if (rank == 0)
        printf("{\"write0_ns\": %.2f, \"write4k_ns\": %.2f, \"comm_ns\": %.2f, \"view_ns\": %.1f, "
               "\"clock_ns\": %.2f, \"pwrite0_ns\": %.2f, \"pwrite4k_ns\": %.2f, \"pwrite_excluded_ns\": %.2f, "
               "\"fputc_ns\": %.2f, \"fwrite4k_ns\": %.2f, "
               "\"in_process\": {\"write0_ns\": %.2f, \"write4k_ns\": %.2f, \"pwrite0_ns\": %.2f, "
               "\"pwrite4k_ns\": %.2f, \"pwrite_excluded_ns\": %.2f, \"fputc_ns\": %.2f, \"fwrite4k_ns\": %.2f}}\n",
               t[0] * 1e9, t[1] * 1e9, t[2] * 1e9, t[3] * 1e9, clock_s * 1e9, tp[0] * 1e9, tp[1] * 1e9,
               tp[2] * 1e9, ts[0] * 1e9, ts[1] * 1e9, ip[0], ip[1], ip[2], ip[3], ip[4], ip[5], ip[6]);
    MPI_Finalize();
    return 0;
}
