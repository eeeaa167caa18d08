/* rank_files.c -- each rank writes files of its own, named as real codes name
 * them, through MPI-IO on MPI_COMM_SELF.
 *
 * usage: rank_files OUTDIR
 *
 * P = nprocs, r = rank, T = 4096 bytes.  In this order, each file written with
 * two MPI_File_write_at of T bytes at 0 and T, then closed:
 *     part-Part<r>-of-<P in 8 digits>.data    (HACC-IO's "Part r of P")
 *     out.<r+1 in 4 digits>.dat               (numbered from 1, as Fortran codes do)
 *     step10.<r>.dat, then step20.<r>.dat     (a checkpoint per step)
 * Between two files the rank makes one MPI_Barrier. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static void write_file(const char *dir, const char *name, int rank)
{
    char path[4096], buf[4096];
    MPI_File fh;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    memset(buf, 'a' + rank % 26, sizeof buf);
    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_write_at(fh, 0, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_write_at(fh, 4096, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, size;
    char name[256];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: rank_files OUTDIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    snprintf(name, sizeof name, "part-Part%d-of-%08d.data", rank, size);
    write_file(argv[1], name, rank);
    snprintf(name, sizeof name, "out.%04d.dat", rank + 1);
    write_file(argv[1], name, rank);
    snprintf(name, sizeof name, "step10.%d.dat", rank);
    write_file(argv[1], name, rank);
    snprintf(name, sizeof name, "step20.%d.dat", rank);
    write_file(argv[1], name, rank);
    MPI_Finalize();
    return 0;
}
