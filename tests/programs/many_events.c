/* many_events.c -- N zero-byte writes, for traces larger than their disk.
 *
 *   open "OUTDIR/many.RANK.dat" (CREATE|WRONLY, MPI_COMM_SELF)
 *   N x write_at(0 bytes at 0)
 *   close
 *
 * Each rank's events: MPI_Init, MPI_File_open, N x MPI_File_write_at,
 * MPI_File_close, MPI_Finalize: N + 4.
 *
 * usage: many_events OUTDIR N
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank;
    char path[4096];
    char byte = 0;
    MPI_File fh;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) {
        fprintf(stderr, "usage: many_events OUTDIR N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = atol(argv[2]);
    snprintf(path, sizeof path, "%s/many.%d.dat", argv[1], rank);
    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    for (long i = 0; i < n; i++)
        MPI_File_write_at(fh, 0, &byte, 0, MPI_BYTE, &st);
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
