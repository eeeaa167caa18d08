/* aborts.c -- a run that ends in MPI_Abort, to test the tracer's flush there.
 *
 * Each rank r:
 *   open "abort.<r>.dat" (CREATE|RDWR, MPI_COMM_SELF)
 *   3 x MPI_File_write_at of N = 100 bytes at offsets 0, 100, 200
 *   MPI_Barrier
 *   rank 1:      MPI_Abort(MPI_COMM_WORLD, 3)
 *   other ranks: MPI_Barrier (never returns: mpirun kills them)
 * Files are never closed.  Byte j of write i (0..2) holds (r*7 + i*13 + j) % 251.
 * The barrier guarantees every rank has finished its 3 writes before rank 1
 * aborts.  Expected values are in expected.py (aborts_*).
 *
 * usage: aborts OUTDIR   (needs at least 2 ranks)
 */
#include <mpi.h>
#include <stdio.h>

#define N 100

static void die(const char *msg)
{
    fprintf(stderr, "aborts: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int rank, nprocs, i, j;
    char path[4096];
    unsigned char buf[N];
    MPI_File fh;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2 || nprocs < 2)
        die("usage: mpirun -np N (N >= 2) aborts OUTDIR");
    snprintf(path, sizeof path, "%s/abort.%d.dat", argv[1], rank);

    if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");
    for (i = 0; i < 3; i++) {
        for (j = 0; j < N; j++)
            buf[j] = (unsigned char)((rank * 7 + i * 13 + j) % 251);
        if (MPI_File_write_at(fh, (MPI_Offset)i * N, buf, N, MPI_BYTE, &st) != MPI_SUCCESS)
            die("MPI_File_write_at failed");
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD); /* never completes: rank 1 aborts the job */

    MPI_Finalize();
    return 0;
}
