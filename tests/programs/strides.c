/* strides.c -- access patterns in order that are neither contiguous nor one stride.
 *
 * usage: strides OUTDIR PATTERN      (4 ranks)
 *
 * simple  (NAS BT-IO's "simple" subtype: each row of its subdomain with its
 *          own independent MPI_File_write_at)          file simple.dat, WORLD
 *     A grid of N^3 points (N = 16) of 40 bytes (5 doubles), split over a 2 x 2
 *     process grid in x and y: rank r owns x0 = (r % 2)*8 .. +8, y0 = (r / 2)*8 .. +8,
 *     all z.  A row is its 8 points along x: R = 320 bytes, contiguous in the file.
 *     for step < 2:
 *         MPI_Allreduce of one double ("the solver's step"), 10 times
 *         for z < N: for j < 8:
 *             MPI_File_write_at(step*N^3*40 + ((z*N + y0 + j)*N + x0)*40, R)
 *     MPI_Barrier
 *     for step < 2: for z < N: for j < 8: MPI_File_read_at(the same), verify
 *   per rank and step: 128 writes, nested strides [[16, 10240], [8, 640]]
 *   (16 planes 10240 B apart, each 8 rows 640 B apart); the read: 256 reads,
 *   [[32, 10240], [8, 640]] (a step is N^3*40 = 16 planes: the second step's
 *   planes follow the first's).  First offsets: 0, 320, 5120, 5440.
 *
 * jumps   (records at offsets that only grow, by irregular amounts) file jumps.dat
 *     for i < 6: MPI_File_write_at(r*100000 + J[i], 1000),
 *                J = {0, 1000, 5000, 6000, 20000, 50000}
 *     MPI_Barrier
 *     for i < 6: MPI_File_read_at(the same), verify
 *
 * Content: byte k of operation n of rank r is (r*7 + n*13 + k) % 251.  Then
 * every file is closed.  Any error or mismatch aborts.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 16
#define PT 40
#define R (8 * PT)
#define REC 1000

static void die(const char *msg)
{
    fprintf(stderr, "strides: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void fill(unsigned char *b, int n, int r, long k)
{
    for (int j = 0; j < n; j++)
        b[j] = (unsigned char)((r * 7 + k * 13 + j) % 251);
}

static void io(MPI_File fh, int write, MPI_Offset off, int len, int rank, long n)
{
    unsigned char want[REC], got[REC];
    fill(want, len, rank, n);
    if (write) {
        if (MPI_File_write_at(fh, off, want, len, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            die("write");
    } else if (MPI_File_read_at(fh, off, got, len, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
               memcmp(got, want, len))
        die("read or verify");
}

int main(int argc, char **argv)
{
    int rank, np;
    char path[4096];
    MPI_File fh;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc != 3 || np != 4)
        die("usage: strides OUTDIR simple|jumps, on 4 ranks");
    int simple = !strcmp(argv[2], "simple");
    if (!simple && strcmp(argv[2], "jumps"))
        die("unknown pattern");
    snprintf(path, sizeof path, "%s/%s.dat", argv[1], argv[2]);
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                      &fh) != MPI_SUCCESS)
        die("open");
    for (int write = 1; write >= 0; write--) {
        long n = 0;
        if (simple) {
            long x0 = (rank % 2) * 8, y0 = (rank / 2) * 8;
            for (int step = 0; step < 2; step++) {
                if (write)
                    for (int i = 0; i < 10; i++) {
                        double x = step + i, sum;
                        MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                    }
                for (long z = 0; z < N; z++)
                    for (long j = 0; j < 8; j++)
                        io(fh, write, (MPI_Offset)step * N * N * N * PT +
                           ((z * N + y0 + j) * N + x0) * PT, R, rank, n++);
            }
        } else {
            static const long J[6] = {0, 1000, 5000, 6000, 20000, 50000};
            for (int i = 0; i < 6; i++)
                io(fh, write, rank * 100000L + J[i], REC, rank, n++);
        }
        if (write)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
