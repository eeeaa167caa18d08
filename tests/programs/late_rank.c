/* late_rank.c -- one collective write phase whose processes wait for a late
 * one twice: before its first call and between its two calls.
 *
 *   open "late.dat" (CREATE|WRONLY, MPI_COMM_WORLD)
 *   rank 1 sleeps 0.5 s
 *   MPI_File_write_at_all(offset = rank*100, 100 bytes)
 *   rank 1 sleeps 0.5 s
 *   MPI_File_write_at_all(offset = (nprocs + rank)*100, 100 bytes)
 *   close
 *
 * No communication call between the two writes: one phase, rep 2, rs 100.
 * The other ranks spend about 0.5 s in each call waiting for rank 1.
 *
 * usage: late_rank OUTDIR */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void late(int rank)
{
    struct timespec ts = {0, 500000000};
    if (rank == 1)
        nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    char path[4096], buf[100];
    snprintf(path, sizeof path, "%s/late.dat", argc > 1 ? argv[1] : ".");
    memset(buf, 'a' + rank, sizeof buf);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    late(rank);
    MPI_File_write_at_all(fh, (MPI_Offset)rank * 100, buf, 100, MPI_BYTE, MPI_STATUS_IGNORE);
    late(rank);
    MPI_File_write_at_all(fh, (MPI_Offset)(nprocs + rank) * 100, buf, 100, MPI_BYTE,
                          MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
