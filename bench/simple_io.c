/* simple_io.c -- NAS BT-IO's "simple" subtype at a chosen size: every row of a
 * rank's subdomain written with its own independent MPI_File_write_at, the
 * pattern that gives BT-IO class A simple on 4 ranks its 655,393 events.
 *
 * A grid of N^3 cells of 40 bytes (5 doubles), split over a P x P process grid
 * in x and y (np = P^2); rank r owns x0 = (r % P)*N/P, y0 = (r / P)*N/P, all z.
 * A row is its N/P cells along x, contiguous in the file.
 *   for step < STEPS:
 *       the solver's step: 5 x MPI_Allreduce of one double, and a sweep over the
 *       subdomain (the values written)
 *       for z < N: for j < N/P: MPI_File_write_at(step*N^3*40 + ((z*N + y0 + j)*N + x0)*40, row)
 *   for step < STEPS: the same rows read back with MPI_File_read_at, checked
 *
 * usage: simple_io OUTDIR [N [STEPS]]      (defaults 64 10; np a square dividing N)
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long n = argc > 2 ? atol(argv[2]) : 64, steps = argc > 3 ? atol(argv[3]) : 10;
    int p = (int)lround(sqrt((double)np));
    if (argc < 2 || p * p != np || n % p || n <= 0 || steps <= 0) {
        if (rank == 0) fprintf(stderr, "usage: simple_io OUTDIR [N [STEPS]] (np a square dividing N)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long side = n / p, x0 = (rank % p) * side, y0 = (rank / p) * side, row = side * 5;
    double *buf = malloc((size_t)(n * side * row) * sizeof *buf);
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/simple.dat", argv[1]);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    for (long s = 0; s < steps; s++) {
        double r = 0, sum = 0;
        for (int k = 0; k < 5; k++) {
            r += 1.0;
            MPI_Allreduce(&r, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
        for (long i = 0; i < n * side * row; i++) buf[i] = (double)s * 1e6 + (double)i;
        (void)sum;
        for (long z = 0; z < n; z++)
            for (long j = 0; j < side; j++)
                MPI_File_write_at(fh, (MPI_Offset)((s * n * n * n + (z * n + y0 + j) * n + x0) * 40),
                                  buf + (z * side + j) * row, (int)row, MPI_DOUBLE, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double *back = malloc((size_t)row * sizeof *back);
    for (long s = 0; s < steps && back; s++)
        for (long z = 0; z < n; z++)
            for (long j = 0; j < side; j++) {
                MPI_File_read_at(fh, (MPI_Offset)((s * n * n * n + (z * n + y0 + j) * n + x0) * 40), back,
                                 (int)row, MPI_DOUBLE, MPI_STATUS_IGNORE);
                for (long i = 0; i < row; i++)
                    if (back[i] != (double)s * 1e6 + (double)((z * side + j) * row + i)) {
                        fprintf(stderr, "simple_io: rank %d: wrong value read back\n", rank);
                        MPI_Abort(MPI_COMM_WORLD, 1);
                    }
            }
    MPI_File_close(&fh);
    free(back);
    free(buf);
    MPI_Finalize();
    return 0;
}
