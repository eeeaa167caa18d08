/* bt_simple.c -- NAS BT-IO's "simple" subtype on BT's multipartition, which
 * divides the grid unevenly where the cells do not divide it.
 *
 * usage: bt_simple OUTDIR [N [NSTEPS]]      (defaults 12 3; np a square, q^2)
 *
 * A grid of N^3 points of 40 bytes (5 doubles), X fastest in the
 * file: point (x,y,z) of dump s is at byte ((s*N + z)*N + y)*N*40 + x*40.
 * BT's multipartition: each axis is cut into q slabs, the first N % q of them
 * N/q + 1 points wide, the others N/q; process p = i + q*j owns q cells, cell
 * c (0..q-1) at slab coordinates ((i + c) % q, (j - c) mod q, c).  Each row of
 * a cell (its points along X) is one independent MPI_File_write_at.
 *
 *   open "bt.dat" (CREATE|RDWR, MPI_COMM_WORLD)
 *   for s < NSTEPS:
 *       MPI_Allreduce of one double, 10 times ("the solver's steps")
 *       for c < q: for z in cell c: for y in cell c:
 *           MPI_File_write_at(the row's offset, 40 * the cell's X width)
 *   MPI_Barrier
 *   for s < NSTEPS: the same rows in the same order, MPI_File_read_at, verify
 *   close
 *
 * Rows a process writes a dump: the sum over its cells of Y width x Z width.
 * N = 12: q = 2 (cells 6): 2 x 36 = 72 rows of 240 B; q = 3 (4): 3 x 16 = 48
 * rows of 160 B; q = 4 (3): 4 x 9 = 36 rows of 120 B; q = 5 (widths 3 3 2 2 2):
 * 28, 29 or 30 rows of 120 or 80 B, by j.  Every dump is the whole grid,
 * 69120 B, in 144 q rows in all.
 *
 * Content: byte k of a row is (x0*7 + y*13 + z*3 + s*5 + k) % 251, (x0, y, z)
 * its first point.  Any error or mismatch aborts.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PT 40
#define MAXQ 16

static void die(const char *msg)
{
    fprintf(stderr, "bt_simple: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* slab k of an axis of n points cut into q: its first point and width */
static void slab(int n, int q, int k, int *low, int *width)
{
    int size = n / q, excess = n % q;
    *width = size + (k < excess);
    *low = k < excess ? k * (size + 1) : excess * (size + 1) + (k - excess) * size;
}

static unsigned char pat(int x0, int y, int z, int s, int k)
{
    return (unsigned char)((x0 * 7 + y * 13 + z * 3 + s * 5 + k) % 251);
}

int main(int argc, char **argv)
{
    int rank, np, n = 12, nsteps = 3;
    char path[4096];
    unsigned char want[MAXQ * 64 * PT], got[sizeof want];
    MPI_File fh;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2)
        die("usage: bt_simple OUTDIR [N [NSTEPS]]");
    if (argc > 2)
        n = atoi(argv[2]);
    if (argc > 3)
        nsteps = atoi(argv[3]);
    int q = 1;
    while ((q + 1) * (q + 1) <= np)
        q++;
    if (q * q != np || q > MAXQ || n < q || (n + q - 1) / q * PT > (int)sizeof want || nsteps < 1)
        die("np must be a square q^2 (q <= 16) and N at least q, at most 64 q");
    int i = rank % q, j = rank / q;
    snprintf(path, sizeof path, "%s/bt.dat", argv[1]);
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                      &fh) != MPI_SUCCESS)
        die("open");
    for (int write = 1; write >= 0; write--) {
        for (int s = 0; s < nsteps; s++) {
            if (write)
                for (int k = 0; k < 10; k++) {
                    double x = s + k, sum;
                    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                }
            for (int c = 0; c < q; c++) {
                int x0, nx, y0, ny, z0, nz;
                slab(n, q, (i + c) % q, &x0, &nx);
                slab(n, q, ((j - c) % q + q) % q, &y0, &ny);
                slab(n, q, c, &z0, &nz);
                for (int z = z0; z < z0 + nz; z++)
                    for (int y = y0; y < y0 + ny; y++) {
                        MPI_Offset off = ((((MPI_Offset)s * n + z) * n + y) * n + x0) * PT;
                        int len = nx * PT;
                        for (int k = 0; k < len; k++)
                            want[k] = pat(x0, y, z, s, k);
                        if (write) {
                            if (MPI_File_write_at(fh, off, want, len, MPI_BYTE, MPI_STATUS_IGNORE) !=
                                MPI_SUCCESS)
                                die("write");
                        } else if (MPI_File_read_at(fh, off, got, len, MPI_BYTE, MPI_STATUS_IGNORE) !=
                                       MPI_SUCCESS || memcmp(got, want, len))
                            die("read or verify");
                    }
            }
        }
        if (write)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
