/* random_io.c -- random access to one shared file (IOR -z like): each rank
 * writes the pieces of its own block in a random order, then reads them
 * back in another random order, with independent explicit-offset calls.
 *
 * usage: random_io OUTDIR [TSIZE [COUNT]]       (defaults 16384 64)
 *
 * P = nprocs, r = rank, T = TSIZE bytes (the transfer size), N = COUNT.
 * Rank r owns the block [r*N*T, (r+1)*N*T) of "OUTDIR/random.dat"; piece k
 * of the block (k = 0..N-1) is the T bytes at r*N*T + k*T.  Each rank makes
 * exactly these MPI calls (besides MPI_Init, MPI_Comm_rank, MPI_Comm_size,
 * MPI_Get_count and MPI_Finalize):
 *
 *   MPI_File_open(MPI_COMM_WORLD, "OUTDIR/random.dat", CREATE|RDWR)
 *   for j in 0..N-1:  MPI_File_write_at(r*N*T + perm_w[j]*T, T x MPI_BYTE)
 *   MPI_Barrier(MPI_COMM_WORLD)
 *   for j in 0..N-1:  MPI_File_read_at(r*N*T + perm_r[j]*T, T x MPI_BYTE),
 *                     verify
 *   MPI_File_close
 *
 * perm_w and perm_r are permutations of 0..N-1 drawn with the LCG and the
 * Fisher-Yates shuffle of tests/programs/ior_like.c, from the seeds
 * 12345 + 1000*r (writes) and 54321 + 1000*r (reads):
 *     x = seed (uint32); next() { x = x*1103515245 + 12345;
 *                                 return (x >> 16) & 0x7fff; }
 *     perm[j] = j;  for j = N-1 down to 1: swap(perm[j], perm[next() % (j+1)])
 *
 * Content: byte i of piece k of rank r is (r*7 + k*13 + i) % 251, so the
 * file holds P*N*T bytes (it is not truncated: use an empty OUTDIR).  Every
 * read is checked (byte count and content); a mismatch, an MPI error or a
 * failed allocation prints a message on stderr and calls MPI_Abort.  Bad
 * arguments (not positive integers, TSIZE > INT_MAX, P*N*T beyond
 * MPI_Offset) print the usage on rank 0 and every rank exits with status 2.
 *
 * The model iomodel builds from a trace (docs/commands/analyze.md), P > 1:
 *   files: "random.dat", shared (opened on MPI_COMM_WORLD), np P, role
 *       inout, iof_size = inf_size = size = extent = P*N*T.
 *   threshold: 0 communication calls between consecutive writes and
 *       between consecutive reads -> one group {0} -> max_comm_gap 8.
 *   phase 1: write, MPI_File_write_at (independent), np P, iop 1, rs T,
 *       rep N, weight P*N*T, random (a rank's consecutive offsets are
 *       neither contiguous nor a constant distance apart), stride null,
 *       offsets first = min over r of (r*N + perm_w_r[0])*T, per_rank only
 *       when those firsts happen to be affine in r; logical time first 0,
 *       comm_between 0.
 *   phase 2: read, MPI_File_read_at, the same with perm_r; logical time
 *       first 1 (the barrier).
 *   model weight 2*P*N*T, storage_capacity P*N*T; runs [1,1], [2,2].
 * "random" needs N >= 3 and a permutation other than the identity
 * (sequential) and its reverse (strided, stride -T); the seeds above give
 * random ones at N = 8 and N = 64 on ranks 0..15 (tests/test_examples.py
 * checks N = 8).  At the defaults and 4 ranks: 2 phases of rs 16 KiB,
 * rep 64, weight 4 MiB.  (With one rank, MPI_COMM_WORLD has one process and
 * the analyzer classes the file unique.)
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage = "usage: random_io OUTDIR [TSIZE [COUNT]]  "
                           "(positive integers, defaults 16384 64)";

static void die(const char *msg)
{
    fprintf(stderr, "random_io: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* an MPI call's return code: abort with the routine and MPI's message */
static void ck(int rc, const char *what)
{
    char err[MPI_MAX_ERROR_STRING], msg[MPI_MAX_ERROR_STRING + 128];
    int len = 0;
    if (rc == MPI_SUCCESS)
        return;
    if (MPI_Error_string(rc, err, &len) != MPI_SUCCESS)
        len = 0;
    err[len] = '\0';
    snprintf(msg, sizeof msg, "%s failed: %s", what, err);
    die(msg);
}

/* a positive integer <= max, or -1 */
static long parse_pos(const char *s, long max)
{
    char *end;
    long v;
    if (!*s)
        return -1;
    v = strtol(s, &end, 10);
    if (*end || v < 1 || v > max)
        return -1;
    return v;
}

static unsigned char pat(int r, long k, long i)
{
    return (unsigned char)((r * 7L + k * 13L + i) % 251);
}

/* Fisher-Yates permutation of 0..n-1 with ior_like.c's LCG */
static void random_perm(uint32_t seed, long n, long *perm)
{
    uint32_t x = seed;
    long j, k, t;
    for (j = 0; j < n; j++)
        perm[j] = j;
    for (j = n - 1; j >= 1; j--) {
        x = x * 1103515245u + 12345u;
        k = (long)(((x >> 16) & 0x7fff) % (uint32_t)(j + 1));
        t = perm[j];
        perm[j] = perm[k];
        perm[k] = t;
    }
}

int main(int argc, char **argv)
{
    int rank, nprocs, got;
    long tsize = 16384, count = 64, i, j, *perm_w, *perm_r;
    MPI_Offset base;
    char path[4096];
    unsigned char *buf, *rbuf;
    MPI_File fh;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc >= 3)
        tsize = parse_pos(argv[2], INT_MAX);
    if (argc >= 4)
        count = parse_pos(argv[3], INT_MAX);
    if (argc < 2 || argc > 4 || !*argv[1] || tsize < 0 || count < 0 ||
        count > INT64_MAX / tsize / nprocs) {
        if (rank == 0)
            fprintf(stderr, "random_io: %s\n", usage);
        MPI_Finalize();
        return 2;
    }
    if (snprintf(path, sizeof path, "%s/random.dat", argv[1]) >=
        (int)sizeof path)
        die("OUTDIR too long");

    buf = malloc(tsize);
    rbuf = malloc(tsize);
    perm_w = malloc(count * sizeof *perm_w);
    perm_r = malloc(count * sizeof *perm_r);
    if (!buf || !rbuf || !perm_w || !perm_r)
        die("out of memory");
    random_perm(12345u + 1000u * (uint32_t)rank, count, perm_w);
    random_perm(54321u + 1000u * (uint32_t)rank, count, perm_r);
    base = (MPI_Offset)rank * count * tsize;

    ck(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                     MPI_INFO_NULL, &fh), "MPI_File_open");
    for (j = 0; j < count; j++) {
        for (i = 0; i < tsize; i++)
            buf[i] = pat(rank, perm_w[j], i);
        ck(MPI_File_write_at(fh, base + (MPI_Offset)perm_w[j] * tsize, buf,
                             (int)tsize, MPI_BYTE, &st), "MPI_File_write_at");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (j = 0; j < count; j++) {
        memset(rbuf, 0, tsize);
        ck(MPI_File_read_at(fh, base + (MPI_Offset)perm_r[j] * tsize, rbuf,
                            (int)tsize, MPI_BYTE, &st), "MPI_File_read_at");
        if (MPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS || got != tsize)
            die("short read");
        for (i = 0; i < tsize; i++)
            if (rbuf[i] != pat(rank, perm_r[j], i))
                die("read-back data mismatch");
    }
    ck(MPI_File_close(&fh), "MPI_File_close");

    free(buf);
    free(rbuf);
    free(perm_w);
    free(perm_r);
    MPI_Finalize();
    return 0;
}
