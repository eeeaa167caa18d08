/* long_call.c -- one collective write that lasts longer than 2^32 clock ticks
 * on the ranks that wait for a late one, so the tracer must store its end
 * time in an extension record.
 *
 *   open "long.dat" (CREATE|WRONLY, MPI_COMM_WORLD)
 *   rank 1 sleeps 2.5 s (longer than 2^32 ticks of any clock of 1.72 GHz or more)
 *   MPI_File_write_at_all(offset = rank*100, 100 bytes)
 *   close
 *
 * usage: long_call OUTDIR */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[4096], buf[100];
    snprintf(path, sizeof path, "%s/long.dat", argc > 1 ? argv[1] : ".");
    memset(buf, 'a' + rank, sizeof buf);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rank == 1) {
        struct timespec ts = {2, 500000000};
        nanosleep(&ts, NULL);
    }
    MPI_File_write_at_all(fh, (MPI_Offset)rank * 100, buf, 100, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
