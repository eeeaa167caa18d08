/* many_views.c -- a run of file views whose filetypes hold millions of pieces.
 *
 * Each rank opens OUTDIR/mv.dat (CREATE|RDWR, WORLD) and, for v = 0 .. K-1
 * (argv[2], default 40), sets the view (disp 0, etype MPI_BYTE) of the struct
 * {vector(2^20 blocks of 1 byte, stride 4+v) at 0, vector(2^20 of 1 byte,
 * stride 5+v) at 2^20 * (6+v)}: 2 MiB of data in 2^21 one-byte pieces (not a
 * regular nest: the two vectors' strides differ), then writes B bytes
 * (argv[3], default 64) from the view's start with MPI_File_write_at_all and
 * reads them back with MPI_File_read_at_all: the first B pieces, 4+v bytes
 * apart (B <= 2^20).  The type records are a few hundred bytes a view; the
 * filetypes flattened whole, 2^21 pieces each, would be 32 MiB a view.
 *
 * usage: many_views OUTDIR [K [B]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int k = argc > 2 ? atoi(argv[2]) : 40, bytes = argc > 3 ? atoi(argv[3]) : 64;
    if (argc < 2 || k < 1 || bytes < 1 || bytes > 1 << 21) {
        fprintf(stderr, "usage: many_views OUTDIR [K [B <= 2097152]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096], *buf = calloc((size_t)bytes, 1);
    snprintf(path, sizeof path, "%s/mv.dat", argv[1]);
    MPI_File fh;
    if (!buf || MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh))
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int v = 0; v < k; v++) {
        MPI_Datatype a, b, t, kinds[2];
        MPI_Type_vector(1 << 20, 1, 4 + v, MPI_BYTE, &a);
        MPI_Type_vector(1 << 20, 1, 5 + v, MPI_BYTE, &b);
        int bl[2] = {1, 1};
        MPI_Aint disp[2] = {0, (MPI_Aint)(1 << 20) * (6 + v)};
        kinds[0] = a;
        kinds[1] = b;
        MPI_Type_create_struct(2, bl, disp, kinds, &t);
        MPI_Type_commit(&t);
        MPI_File_set_view(fh, 0, MPI_BYTE, t, "native", MPI_INFO_NULL);
        MPI_File_write_at_all(fh, 0, buf, bytes, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_read_at_all(fh, 0, buf, bytes, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_Type_free(&t);
        MPI_Type_free(&a);
        MPI_Type_free(&b);
    }
    MPI_File_close(&fh);
    free(buf);
    MPI_Finalize();
    return 0;
}
