/* huge_view.c -- a file view of more pieces than the analyzer flattens.
 *
 * A pencil decomposition of a G^3 grid of doubles, G = 4096 (a 512 GiB array):
 * rank r of P holds the pencil x = r, every (z, y) -- the subarray {G, G, G},
 * subs {G, G, 1}, starts {0, 0, r}, C order -- G*G = 16,777,216 pieces of 8
 * bytes, 32 KiB apart (one row of G doubles), twice the analyzer's
 * typemap.MAX_BLOCKS.  Each rank opens "hv.dat" (CREATE|RDWR, WORLD), sets
 * that view (disp 0, etype MPI_DOUBLE) and, as a solver checkpointing its
 * first rows of cells:
 *   MPI_File_write_at_all(0, N = 64 doubles)   pieces r*8 + k*32768, k < 64
 *   MPI_Barrier
 *   MPI_File_read_at_all(0, N doubles)         the same 64 pieces: a reread
 *   MPI_File_close
 * so each access's first byte is 8r, its end 8r + 63*32768 + 8, 64 pieces.
 * Cell k of rank r holds r * 1000 + k; the read is checked.
 *
 * usage: huge_view OUTDIR
 */
#include <mpi.h>
#include <stdio.h>

#define G 4096
#define N 64

static void die(const char *msg)
{
    fprintf(stderr, "huge_view: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    char path[4096];
    int rank, nprocs;
    double out[N], in[N];
    MPI_File fh;
    MPI_Datatype pencil;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2)
        die("usage: huge_view OUTDIR");
    if (nprocs > G)
        die("more processes than pencils");
    snprintf(path, sizeof path, "%s/hv.dat", argv[1]);
    const int sizes[3] = {G, G, G}, subs[3] = {G, G, 1}, starts[3] = {0, 0, rank};
    if (MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &pencil) !=
            MPI_SUCCESS || MPI_Type_commit(&pencil) != MPI_SUCCESS)
        die("subarray type failed");
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                      &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");
    if (MPI_File_set_view(fh, 0, MPI_DOUBLE, pencil, "native", MPI_INFO_NULL) != MPI_SUCCESS)
        die("MPI_File_set_view failed");
    for (int k = 0; k < N; k++)
        out[k] = rank * 1000.0 + k;
    if (MPI_File_write_at_all(fh, 0, out, N, MPI_DOUBLE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        die("MPI_File_write_at_all failed");
    MPI_Barrier(MPI_COMM_WORLD);
    if (MPI_File_read_at_all(fh, 0, in, N, MPI_DOUBLE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        die("MPI_File_read_at_all failed");
    for (int k = 0; k < N; k++)
        if (in[k] != out[k])
            die("read back other data than written");
    if (MPI_File_close(&fh) != MPI_SUCCESS)
        die("MPI_File_close failed");
    MPI_Type_free(&pencil);
    MPI_Finalize();
    return 0;
}
