/* file_names.c -- calls that name a file without opening it: an open that
 * fails and a delete.
 *
 *   open "OUTDIR/missing/none.dat" (RDONLY, MPI_COMM_SELF): fails, the
 *       folder does not exist (errors return: MPI_ERRORS_RETURN on MPI_FILE_NULL)
 *   rank 0: open "OUTDIR/scratch.dat" (CREATE|WRONLY, MPI_COMM_SELF), close,
 *           then MPI_File_delete("OUTDIR/scratch.dat")
 *
 * Rank 0's events: MPI_Init, MPI_File_open (error, none.dat), MPI_File_open
 * (scratch.dat), MPI_File_close, MPI_File_delete (scratch.dat), MPI_Finalize;
 * the others': MPI_Init, MPI_File_open (error, none.dat), MPI_Finalize.
 *
 * usage: file_names OUTDIR
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank;
    char missing[4096], scratch[4096];
    MPI_File fh;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
        fprintf(stderr, "usage: file_names OUTDIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    snprintf(missing, sizeof missing, "%s/missing/none.dat", argv[1]);
    snprintf(scratch, sizeof scratch, "%s/scratch.dat", argv[1]);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    if (MPI_File_open(MPI_COMM_SELF, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) == MPI_SUCCESS) {
        fprintf(stderr, "file_names: %s opened, but it should not exist\n", missing);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
        MPI_File_open(MPI_COMM_SELF, scratch, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        MPI_File_close(&fh);
        MPI_File_delete(scratch, MPI_INFO_NULL);
    }
    MPI_Finalize();
    return 0;
}
