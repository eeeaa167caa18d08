/* ior_like.c -- IOR-like access patterns, one per run.
 *
 * usage: ior_like OUTDIR PATTERN [WCOMM [RCOMM]]
 *
 * P = nprocs, r = rank, T = 4096 bytes (the transfer size).  Block content:
 * byte j of the piece with index k written by rank q is (q*7 + k*13 + j) % 251
 * (k as given below).  Communication calls are listed explicitly: between
 * two consecutive data operations of a write loop below ("for ...") the
 * rank makes exactly WCOMM MPI_Barrier calls, of a read loop RCOMM (both
 * default 0: none); in "alternate" the WCOMM barriers come before each
 * write to A but the first.
 *
 * segmented   (IOR -c, segments; block = transfer)  file ior.dat, WORLD
 *     for i < S = 6:  MPI_File_write_at_all(i*P*T + r*T, T)        k = i
 *     MPI_Barrier
 *     for i < S:      MPI_File_read_at_all(i*P*T + r*T, T), verify
 * contiguous  (one block of N transfers per rank)   file ior.dat, WORLD
 *     for j < N = 8:  MPI_File_write_at(r*N*T + j*T, T)            k = j
 *     MPI_Barrier
 *     MPI_File_read_at(r*N*T, N*T), verify                 (one read)
 * neighbour   (IOR -C: read another rank's block)   file ior.dat, WORLD
 *     as contiguous, but the one read is of rank (r+1)%P's block:
 *     MPI_File_read_at(((r+1)%P)*N*T, N*T), verify
 * fpp         (IOR -F, file per process)            file ior.<r>.dat, SELF
 *     for j < N = 8:  MPI_File_write_at(j*T, T)                    k = j
 *     MPI_Barrier
 *     for j < N:      MPI_File_read_at(j*T, T), verify
 * random      (IOR -z)                              file ior.dat, WORLD
 *     perm = the rank's permutation of 0..N-1 (N = 8, see below)
 *     for j < N:      MPI_File_write_at(r*N*T + perm[j]*T, T)      k = perm[j]
 * alternate   (two files, in turn)        files ior_a.dat, ior_b.dat, WORLD
 *     for k < N = 4:  MPI_File_write_at(A, (k*P + r)*T, T)         k
 *                     MPI_File_write_at(B, (r*N + k)*T, T)         k + 100
 * varsize     (ranks move different amounts)        file ior.dat, WORLD
 *     U = 1000, W = U*P*(P+1)/2, rank r moves (r+1)*U bytes at
 *     U*r*(r+1)/2 (the running sum) in each of R = 3 repetitions:
 *     for i < R:      MPI_File_write_at_all(i*W + U*r*(r+1)/2, (r+1)*U)  k = i
 *     MPI_Barrier
 *     for i < R:      MPI_File_read_at_all(same), verify
 *
 * Every pattern then closes its file(s), makes one MPI_Barrier, and rank 0
 * checks the whole content of every file with stdio (and its size); any
 * mismatch aborts.
 *
 * The random permutation (identical in tests/programs/expected_models.py):
 *     x = 12345 + 1000*r (uint32); next() { x = x*1103515245 + 12345;
 *     return (x >> 16) & 0x7fff; }  perm[j] = j;  for j = N-1 down to 1:
 *     swap(perm[j], perm[next() % (j+1)])
 * The program aborts if a rank's consecutive offsets are a constant distance
 * apart (that would be a strided or sequential pattern, not a random one).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T 4096
#define S 6
#define N 8
#define NALT 4
#define U 1000
#define R 3
#define MAXP 64

static void die(const char *msg)
{
    fprintf(stderr, "ior_like: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char pat(int q, int k, long j)
{
    return (unsigned char)((q * 7 + k * 13 + j) % 251);
}

static void fill(unsigned char *b, long n, int q, int k)
{
    long j;
    for (j = 0; j < n; j++)
        b[j] = pat(q, k, j);
}

static void verify(const unsigned char *b, long n, int q, int k)
{
    long j;
    for (j = 0; j < n; j++)
        if (b[j] != pat(q, k, j))
            die("read-back data mismatch");
}

static void random_perm(int r, int *perm)
{
    uint32_t x = 12345u + 1000u * (uint32_t)r;
    int j, k, t;
    for (j = 0; j < N; j++)
        perm[j] = j;
    for (j = N - 1; j >= 1; j--) {
        x = x * 1103515245u + 12345u;
        k = (int)(((x >> 16) & 0x7fff) % (uint32_t)(j + 1));
        t = perm[j];
        perm[j] = perm[k];
        perm[k] = t;
    }
    for (j = 2; j < N; j++)
        if (perm[j] - perm[j - 1] != perm[1] - perm[0])
            return;
    die("the permutation is not random (constant distance)");
}

static MPI_File open_file(MPI_Comm comm, const char *dir, const char *name)
{
    char path[4096];
    MPI_File fh;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");
    return fh;
}

static void close_file(MPI_File *fh)
{
    if (MPI_File_close(fh) != MPI_SUCCESS)
        die("MPI_File_close failed");
}

/* the communication between two operations of a loop (i > 0) */
static void between(int i, int n)
{
    if (i > 0)
        while (n-- > 0)
            MPI_Barrier(MPI_COMM_WORLD);
}

static void ck(int rc, const char *what)
{
    if (rc != MPI_SUCCESS)
        die(what);
}

/* rank 0, after close: the piece at byte off of file name is rank q's
 * piece k, n bytes */
static void expect(const char *dir, const char *name, long off, long n,
                   int q, int k)
{
    static unsigned char b[N * T];
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (!f)
        die("cannot reopen a file with stdio");
    if (n > (long)sizeof b || fseek(f, off, SEEK_SET) ||
        fread(b, 1, n, f) != (size_t)n)
        die("short stdio read");
    fclose(f);
    verify(b, n, q, k);
}

static void expect_size(const char *dir, const char *name, long size)
{
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) || ftell(f) != size)
        die("file size mismatch");
    fclose(f);
}

int main(int argc, char **argv)
{
    int rank, P, i, j, k, q, wcomm = 0, rcomm = 0;
    const char *dir, *pattern;
    static unsigned char buf[N * T], rbuf[N * T];
    char name[64];
    MPI_File fh, fa, fb;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (argc < 3)
        die("usage: ior_like OUTDIR segmented|contiguous|neighbour|fpp|random|alternate|varsize"
            " [WCOMM [RCOMM]]");
    if (argc >= 4)
        wcomm = atoi(argv[3]);
    if (argc >= 5)
        rcomm = atoi(argv[4]);
    if (wcomm < 0 || rcomm < 0)
        die("bad communication counts");
    if (P > MAXP)
        die("too many ranks");
    dir = argv[1];
    pattern = argv[2];

    if (strcmp(pattern, "segmented") == 0) {
        fh = open_file(MPI_COMM_WORLD, dir, "ior.dat");
        for (i = 0; i < S; i++) {
            between(i, wcomm);
            fill(buf, T, rank, i);
            ck(MPI_File_write_at_all(fh, ((MPI_Offset)i * P + rank) * T, buf, T,
                                     MPI_BYTE, &st), "write_at_all failed");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (i = 0; i < S; i++) {
            between(i, rcomm);
            memset(rbuf, 0, T);
            ck(MPI_File_read_at_all(fh, ((MPI_Offset)i * P + rank) * T, rbuf, T,
                                    MPI_BYTE, &st), "read_at_all failed");
            verify(rbuf, T, rank, i);
        }
        close_file(&fh);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (i = 0; i < S; i++)
                for (q = 0; q < P; q++)
                    expect(dir, "ior.dat", ((long)i * P + q) * T, T, q, i);
            expect_size(dir, "ior.dat", (long)S * P * T);
        }
    } else if (strcmp(pattern, "contiguous") == 0 || strcmp(pattern, "neighbour") == 0) {
        int src = strcmp(pattern, "neighbour") == 0 ? (rank + 1) % P : rank;
        fh = open_file(MPI_COMM_WORLD, dir, "ior.dat");
        for (j = 0; j < N; j++) {
            between(j, wcomm);
            fill(buf, T, rank, j);
            ck(MPI_File_write_at(fh, ((MPI_Offset)rank * N + j) * T, buf, T,
                                 MPI_BYTE, &st), "write_at failed");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        memset(rbuf, 0, N * T);
        ck(MPI_File_read_at(fh, (MPI_Offset)src * N * T, rbuf, N * T, MPI_BYTE,
                            &st), "read_at failed");
        for (j = 0; j < N; j++)
            verify(rbuf + j * T, T, src, j);
        close_file(&fh);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (q = 0; q < P; q++)
                for (j = 0; j < N; j++)
                    expect(dir, "ior.dat", ((long)q * N + j) * T, T, q, j);
            expect_size(dir, "ior.dat", (long)P * N * T);
        }
    } else if (strcmp(pattern, "fpp") == 0) {
        snprintf(name, sizeof name, "ior.%d.dat", rank);
        fh = open_file(MPI_COMM_SELF, dir, name);
        for (j = 0; j < N; j++) {
            between(j, wcomm);
            fill(buf, T, rank, j);
            ck(MPI_File_write_at(fh, (MPI_Offset)j * T, buf, T, MPI_BYTE, &st),
               "write_at failed");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (j = 0; j < N; j++) {
            between(j, rcomm);
            memset(rbuf, 0, T);
            ck(MPI_File_read_at(fh, (MPI_Offset)j * T, rbuf, T, MPI_BYTE, &st),
               "read_at failed");
            verify(rbuf, T, rank, j);
        }
        close_file(&fh);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            for (q = 0; q < P; q++) {
                snprintf(name, sizeof name, "ior.%d.dat", q);
                for (j = 0; j < N; j++)
                    expect(dir, name, (long)j * T, T, q, j);
                expect_size(dir, name, (long)N * T);
            }
    } else if (strcmp(pattern, "random") == 0) {
        int perm[N];
        random_perm(rank, perm);
        fh = open_file(MPI_COMM_WORLD, dir, "ior.dat");
        for (j = 0; j < N; j++) {
            between(j, wcomm);
            fill(buf, T, rank, perm[j]);
            ck(MPI_File_write_at(fh, ((MPI_Offset)rank * N + perm[j]) * T, buf,
                                 T, MPI_BYTE, &st), "write_at failed");
        }
        close_file(&fh);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (q = 0; q < P; q++)
                for (k = 0; k < N; k++)
                    expect(dir, "ior.dat", ((long)q * N + k) * T, T, q, k);
            expect_size(dir, "ior.dat", (long)P * N * T);
        }
    } else if (strcmp(pattern, "alternate") == 0) {
        fa = open_file(MPI_COMM_WORLD, dir, "ior_a.dat");
        fb = open_file(MPI_COMM_WORLD, dir, "ior_b.dat");
        for (k = 0; k < NALT; k++) {
            between(k, wcomm);
            fill(buf, T, rank, k);
            ck(MPI_File_write_at(fa, ((MPI_Offset)k * P + rank) * T, buf, T,
                                 MPI_BYTE, &st), "write_at (A) failed");
            fill(buf, T, rank, k + 100);
            ck(MPI_File_write_at(fb, ((MPI_Offset)rank * NALT + k) * T, buf, T,
                                 MPI_BYTE, &st), "write_at (B) failed");
        }
        close_file(&fa);
        close_file(&fb);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (q = 0; q < P; q++)
                for (k = 0; k < NALT; k++) {
                    expect(dir, "ior_a.dat", ((long)k * P + q) * T, T, q, k);
                    expect(dir, "ior_b.dat", ((long)q * NALT + k) * T, T, q,
                           k + 100);
                }
            expect_size(dir, "ior_a.dat", (long)NALT * P * T);
            expect_size(dir, "ior_b.dat", (long)NALT * P * T);
        }
    } else if (strcmp(pattern, "varsize") == 0) {
        long w = (long)U * P * (P + 1) / 2, mine = (long)(rank + 1) * U;
        long at = (long)U * rank * (rank + 1) / 2;
        if ((long)P * U > N * T)
            die("too many ranks for varsize");
        fh = open_file(MPI_COMM_WORLD, dir, "ior.dat");
        for (i = 0; i < R; i++) {
            between(i, wcomm);
            fill(buf, mine, rank, i);
            ck(MPI_File_write_at_all(fh, i * w + at, buf, (int)mine, MPI_BYTE,
                                     &st), "write_at_all failed");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (i = 0; i < R; i++) {
            between(i, rcomm);
            memset(rbuf, 0, mine);
            ck(MPI_File_read_at_all(fh, i * w + at, rbuf, (int)mine, MPI_BYTE,
                                    &st), "read_at_all failed");
            verify(rbuf, mine, rank, i);
        }
        close_file(&fh);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (i = 0; i < R; i++)
                for (q = 0; q < P; q++)
                    expect(dir, "ior.dat", i * w + (long)U * q * (q + 1) / 2,
                           (long)(q + 1) * U, q, i);
            expect_size(dir, "ior.dat", R * w);
        }
    } else {
        die("unknown pattern");
    }

    MPI_Finalize();
    return 0;
}
