/* no_finalize.c -- rank 0 returns from main without MPI_Finalize after two
 * writes, so only the tracer's exit handler can flush its trace.
 *
 *   open "nofin.dat" (CREATE|WRONLY, MPI_COMM_SELF)
 *   MPI_File_write_at(offset 0, 10 bytes); MPI_File_write_at(offset 10, 10 bytes)
 *   return 0 (no MPI_File_close, no MPI_Finalize)
 *
 * Run with 1 rank.  usage: no_finalize OUTDIR */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    char path[4096], buf[10] = "0123456789";
    snprintf(path, sizeof path, "%s/nofin.dat", argc > 1 ? argv[1] : ".");
    MPI_File fh;
    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_write_at(fh, 0, buf, 10, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_write_at(fh, 10, buf, 10, MPI_CHAR, MPI_STATUS_IGNORE);
    return 0;
}
