/* btio_simple.c -- NAS BT-IO's "simple" subtype in small: each dump is many
 * small independent MPI_File_write_at calls, one per row of the process's
 * cells, and the processes compute and communicate between dumps.
 *
 * usage: btio_simple OUTDIR [N [DUMPS [STEPS [WORK]]]]   (defaults 8 4 5 200000)
 *
 * A global N x N x N array of cells of 5 doubles (40 B), cell (x, y, z) at
 * index (z*N + y)*N + x.  Rank r of P owns the L = N/P cells x in
 * [r*L, (r+1)*L) of every row (N divisible by P): a row of the file holds
 * the P ranks' parts in turn, as BT-IO simple's cells do.
 *
 *   open OUTDIR/btio.simple (CREATE|RDWR, MPI_COMM_WORLD)
 *   for d in 0..DUMPS-1:
 *       STEPS time steps, each: compute (WORK multiply-adds on the rank's
 *       cells) and exactly one MPI_Sendrecv around the ring (to r+1, from
 *       r-1), so STEPS communication calls come before each dump and none
 *       inside it
 *       for z, for y: MPI_File_write_at(offset d*G + ((z*N + y)*N + r*L)*40,
 *                                        40*L bytes)
 *       -> N*N writes of 40*L B, each rank's 40*N B apart (G = N^3 * 40)
 *   MPI_Barrier
 *   for d, z, y (the same order): MPI_File_read_at of the same rows, checked
 *   close
 *
 * Double c (0..4) of cell (x, y, z) in dump d holds d*1e6 + x*1e4 + y*100 + z
 * + c*0.1.  Every message carries {sender, dump, step} and is checked, and
 * every value read back; any mismatch aborts.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NCOMP 5

static void die(const char *msg)
{
    fprintf(stderr, "btio_simple: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static double value(int d, int x, int y, int z, int c)
{
    return d * 1e6 + x * 1e4 + y * 100 + z + c * 0.1;
}

/* One time step: WORK multiply-adds over the rank's cells, then one ring exchange. */
static double step(double *work, int ncells, long iters, int rank, int np, int d, int s)
{
    double acc = 0.0;
    for (long i = 0; i < iters; i++) {
        double *w = &work[i % ncells];
        *w = *w * 0.999999 + 1e-6;
        acc += *w;
    }
    int out[3] = {rank, d, s}, in[3] = {-1, -1, -1};
    int to = (rank + 1) % np, from = (rank + np - 1) % np;
    MPI_Sendrecv(out, 3, MPI_INT, to, s, in, 3, MPI_INT, from, s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (in[0] != from || in[1] != d || in[2] != s)
        die("bad message");
    return acc;
}

int main(int argc, char **argv)
{
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2)
        die("usage: btio_simple OUTDIR [N [DUMPS [STEPS [WORK]]]]");
    int n = argc > 2 ? atoi(argv[2]) : 8, dumps = argc > 3 ? atoi(argv[3]) : 4;
    int steps = argc > 4 ? atoi(argv[4]) : 5;
    long iters = argc > 5 ? atol(argv[5]) : 200000;
    if (n < 1 || n % np || dumps < 1 || steps < 0 || iters < 0)
        die("N must be a positive multiple of the process count, DUMPS >= 1, STEPS and WORK >= 0");
    int l = n / np;
    long long g = (long long)n * n * n * NCOMP * 8, row = (long long)l * NCOMP * 8;
    double *buf = malloc((size_t)row), *got = malloc((size_t)row), *work = malloc((size_t)row);
    if (!buf || !got || !work)
        die("out of memory");
    for (int i = 0; i < l * NCOMP; i++)
        work[i] = i;
    char path[4096];
    snprintf(path, sizeof path, "%s/btio.simple", argv[1]);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh))
        die("open");
    double sink = 0.0;
    for (int d = 0; d < dumps; d++) {
        for (int s = 0; s < steps; s++)
            sink += step(work, l * NCOMP, iters, rank, np, d, s);
        for (int z = 0; z < n; z++)
            for (int y = 0; y < n; y++) {
                for (int x = 0; x < l; x++)
                    for (int c = 0; c < NCOMP; c++)
                        buf[x * NCOMP + c] = value(d, rank * l + x, y, z, c);
                MPI_Offset off = d * g + ((long long)(z * n + y) * n + rank * l) * NCOMP * 8;
                if (MPI_File_write_at(fh, off, buf, (int)row, MPI_BYTE, MPI_STATUS_IGNORE))
                    die("write");
            }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int d = 0; d < dumps; d++)
        for (int z = 0; z < n; z++)
            for (int y = 0; y < n; y++) {
                MPI_Offset off = d * g + ((long long)(z * n + y) * n + rank * l) * NCOMP * 8;
                if (MPI_File_read_at(fh, off, got, (int)row, MPI_BYTE, MPI_STATUS_IGNORE))
                    die("read");
                for (int x = 0; x < l; x++)
                    for (int c = 0; c < NCOMP; c++)
                        if (got[x * NCOMP + c] != value(d, rank * l + x, y, z, c))
                            die("verify");
            }
    MPI_File_close(&fh);
    if (sink < 0)           /* keeps the computation */
        printf("%g\n", sink);
    free(buf);
    free(got);
    free(work);
    MPI_Finalize();
    return 0;
}
