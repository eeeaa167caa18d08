/* clock_stamps.c -- each rank reads CLOCK_MONOTONIC right before each of its
 * 10 writes and keeps the readings, to check the trace's times against a clock
 * the ranks of one host share.
 *
 *   open "stamps.dat" (CREATE|WRONLY, MPI_COMM_WORLD)
 *   10 times: MPI_File_write_at(offset = (i*nprocs + rank)*8, 8 bytes)
 *   close
 *   OUTDIR/stamps-RANK.txt: the 10 readings, nanoseconds, one a line
 *
 * usage: clock_stamps OUTDIR */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define WRITES 10

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *dir = argc > 1 ? argv[1] : ".";
    char path[4096], buf[8];
    snprintf(path, sizeof path, "%s/stamps.dat", dir);
    memset(buf, 'a' + rank, sizeof buf);
    long long stamp[WRITES];
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    for (int i = 0; i < WRITES; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        stamp[i] = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
        MPI_File_write_at(fh, (MPI_Offset)(i * nprocs + rank) * 8, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    MPI_File_close(&fh);
    snprintf(path, sizeof path, "%s/stamps-%d.txt", dir, rank);
    FILE *f = fopen(path, "w");
    if (f) {
        for (int i = 0; i < WRITES; i++)
            fprintf(f, "%lld\n", stamp[i]);
        fclose(f);
    }
    MPI_Finalize();
    return 0;
}
