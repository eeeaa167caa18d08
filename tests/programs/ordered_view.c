/* ordered_view.c -- MPI_File_write_ordered through a noncontiguous view, one
 * rank with nothing to write (as a rank of an uneven decomposition has).
 *
 * usage: ordered_view OUTDIR
 *
 * File ordered.dat, every rank's view: displacement 0, etype MPI_BYTE, filetype
 * 4 bytes of every 8 (MPI_Type_vector(2, 4, 8) resized to extent 16).  Then one
 * MPI_File_write_ordered of 16 bytes by each rank but rank 1, which writes 0:
 * rank r's data follows the lower ranks' in the view, so rank 0 covers view
 * bytes 0..15 (file 0-3, 8-11, 16-19, 24-27), rank 1 sits at view byte 16
 * (file 32), rank 2 covers view bytes 16..31 (file 32-35, ..., 56-59). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank;
    char path[4096], buf[16];
    MPI_File fh;
    MPI_Datatype vec, ftype;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: ordered_view OUTDIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    snprintf(path, sizeof path, "%s/ordered.dat", argv[1]);
    MPI_Type_vector(2, 4, 8, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, 16, &ftype);
    MPI_Type_commit(&ftype);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_set_view(fh, 0, MPI_BYTE, ftype, "native", MPI_INFO_NULL);
    memset(buf, 'a' + rank, sizeof buf);
    MPI_File_write_ordered(fh, buf, rank == 1 ? 0 : 16, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_Type_free(&ftype);
    MPI_Type_free(&vec);
    MPI_Finalize();
    return 0;
}
