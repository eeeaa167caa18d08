/* view_types.c -- file views of subarray filetypes, for the tracer's flattening.
 *
 * One rank opens "vt.dat" (CREATE|RDWR, MPI_COMM_SELF) and sets five views in
 * turn, each with displacement 0 and etype MPI_BYTE, then closes the file.  No
 * data moves: the test reads the views' blocks from the trace.  The filetypes
 * (offsets and lengths in bytes, the blocks the tracer must record):
 *   A  C order,       sizes {4,6,8} subs {2,6,8} starts {1,0,0}, MPI_INT:
 *      the two inner dimensions whole, one run  -> (192, 384)
 *   B  C order,       sizes {4,6,8} subs {2,3,8} starts {1,2,0}, MPI_INT:
 *      rows of 3*8 ints at x*192 + 2*32        -> (256, 96) (448, 96)
 *   C  Fortran order, sizes {8,6,4} subs {8,3,2} starts {0,2,1}, MPI_INT:
 *      B with the dimensions reversed          -> (256, 96) (448, 96)
 *   D  C order,       sizes {3,4} subs {2,4} starts {1,0}, of an element that
 *      is not contiguous: vector(2 blocks of 1 int, stride 2) resized to an
 *      extent of 16 bytes (an int at 0 and one at 8): elements at 64 + 16*i,
 *      i < 8                                   -> 16 blocks (64 + 8*k, 4)
 *   E  C order,       sizes {3,5} subs {2,2} starts {1,3}, MPI_DOUBLE:
 *      the fastest dimension in part           -> (64, 16) (104, 16)
 * and then one view of each other constructor the trace describes:
 *   F  vector(3, 2, stride 4) of MPI_DOUBLE    -> (0,16) (32,16) (64,16), extent 80
 *   G  hvector(2, 3, stride 100 B) of MPI_INT  -> (0,12) (100,12), extent 112
 *   H  indexed({1,2,1} at {0,3,7}) of MPI_INT  -> (0,4) (12,8) (28,4), extent 32
 *   I  hindexed({2,1} at {4,40} B) of MPI_INT  -> (4,8) (40,4), lb 4, extent 40
 *   J  indexed_block(2 at {0,4,10}) of MPI_SHORT -> (0,4) (8,4) (20,4), extent 24
 *   K  hindexed_block(3 at {0,50} B) of MPI_CHAR -> (0,3) (50,3), extent 53
 *   L  struct(MPI_INT at 0, MPI_DOUBLE at 8)   -> (0,4) (8,8), extent 16
 *   M  dup of F                                -> as F
 *   N  contiguous(2) of MPI_INT resized to 12  -> (0,4) (12,4), extent 24
 *   O  darray of 8 ints over 1 process, which the trace does not describe:
 *      flattened by the tracer instead, one block as its size is its extent
 *                                              -> (0,32), stored as pieces
 *
 * usage: view_types OUTDIR
 */
#include <mpi.h>
#include <stdio.h>

static void die(const char *msg)
{
    fprintf(stderr, "view_types: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void view(MPI_File fh, int nd, const int *sizes, const int *subs, const int *starts,
                 int order, MPI_Datatype elem)
{
    MPI_Datatype t;
    if (MPI_Type_create_subarray(nd, sizes, subs, starts, order, elem, &t) != MPI_SUCCESS ||
        MPI_Type_commit(&t) != MPI_SUCCESS)
        die("subarray type failed");
    if (MPI_File_set_view(fh, 0, MPI_BYTE, t, "native", MPI_INFO_NULL) != MPI_SUCCESS)
        die("MPI_File_set_view failed");
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    char path[4096];
    MPI_File fh;
    MPI_Datatype vec, pair;
    MPI_Init(&argc, &argv);
    if (argc < 2)
        die("usage: view_types OUTDIR");
    snprintf(path, sizeof path, "%s/vt.dat", argv[1]);
    if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                      &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");

    const int s3[3] = {4, 6, 8}, a_sub[3] = {2, 6, 8}, a_start[3] = {1, 0, 0};
    view(fh, 3, s3, a_sub, a_start, MPI_ORDER_C, MPI_INT);
    const int b_sub[3] = {2, 3, 8}, b_start[3] = {1, 2, 0};
    view(fh, 3, s3, b_sub, b_start, MPI_ORDER_C, MPI_INT);
    const int c_size[3] = {8, 6, 4}, c_sub[3] = {8, 3, 2}, c_start[3] = {0, 2, 1};
    view(fh, 3, c_size, c_sub, c_start, MPI_ORDER_FORTRAN, MPI_INT);

    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 16, &pair);
    MPI_Type_commit(&pair);
    const int d_size[2] = {3, 4}, d_sub[2] = {2, 4}, d_start[2] = {1, 0};
    view(fh, 2, d_size, d_sub, d_start, MPI_ORDER_C, pair);
    MPI_Type_free(&pair);
    MPI_Type_free(&vec);

    const int e_size[2] = {3, 5}, e_sub[2] = {2, 2}, e_start[2] = {1, 3};
    view(fh, 2, e_size, e_sub, e_start, MPI_ORDER_C, MPI_DOUBLE);

    MPI_Datatype t[10], tmp;
    MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &t[0]);
    MPI_Type_create_hvector(2, 3, 100, MPI_INT, &t[1]);
    const int h_len[3] = {1, 2, 1}, h_at[3] = {0, 3, 7};
    MPI_Type_indexed(3, h_len, h_at, MPI_INT, &t[2]);
    const int i_len[2] = {2, 1};
    const MPI_Aint i_at[2] = {4, 40};
    MPI_Type_create_hindexed(2, i_len, i_at, MPI_INT, &t[3]);
    const int j_at[3] = {0, 4, 10};
    MPI_Type_create_indexed_block(3, 2, j_at, MPI_SHORT, &t[4]);
    const MPI_Aint k_at[2] = {0, 50};
    MPI_Type_create_hindexed_block(2, 3, k_at, MPI_CHAR, &t[5]);
    const int l_len[2] = {1, 1};
    const MPI_Aint l_at[2] = {0, 8};
    const MPI_Datatype l_types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, l_len, l_at, l_types, &t[6]);
    MPI_Type_dup(t[0], &t[7]);
    MPI_Type_create_resized(MPI_INT, 0, 12, &tmp);
    MPI_Type_contiguous(2, tmp, &t[8]);
    MPI_Type_free(&tmp);
    const int o_g[1] = {8}, o_dist[1] = {MPI_DISTRIBUTE_BLOCK}, o_arg[1] = {MPI_DISTRIBUTE_DFLT_DARG},
              o_p[1] = {1};
    MPI_Type_create_darray(1, 0, 1, o_g, o_dist, o_arg, o_p, MPI_ORDER_C, MPI_INT, &t[9]);
    for (int i = 0; i < 10; i++) {
        if (MPI_Type_commit(&t[i]) != MPI_SUCCESS ||
            MPI_File_set_view(fh, 0, MPI_BYTE, t[i], "native", MPI_INFO_NULL) != MPI_SUCCESS)
            die("a view of the other constructors failed");
        MPI_Type_free(&t[i]);
    }

    if (MPI_File_close(&fh) != MPI_SUCCESS)
        die("MPI_File_close failed");
    MPI_Finalize();
    return 0;
}
