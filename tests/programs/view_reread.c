/* view_reread.c -- reads through a noncontiguous view: which ones reread.
 *
 * With P = nprocs, B = 1024, N = 4, each rank r opens "vr.dat" (CREATE|RDWR,
 * WORLD) once and, through the view disp r*B, etype MPI_BYTE, filetype
 * vector(N blocks of B bytes, stride P*B) -- its pieces are r*B + j*P*B,
 * j < N, interleaved with the other ranks' --
 *   MPI_File_write_at_all(0, N*B bytes)        its N pieces
 *   MPI_Barrier
 *   A: MPI_File_read_at_all(0, N*B bytes)      the same N pieces: its own data
 *   MPI_Barrier
 *   MPI_File_set_view(disp ((r+1)%P)*B, same filetype)
 *   B: MPI_File_read_at_all(0, N*B bytes)      the next rank's N pieces
 *   MPI_Barrier
 *   MPI_File_set_view(disp 0, MPI_BYTE, MPI_BYTE)
 *   C: MPI_File_read_at(r*B, 2*B bytes)        one range: its piece 0, then
 *                                             the byte range (r+1)*B: rank
 *                                             r+1's piece 0 (rank 0's piece 1
 *                                             for r = P-1)
 *   MPI_File_close
 * Byte k of rank r's piece j is (r*31 + j*7 + k) % 251; every read is checked.
 *
 * usage: view_reread OUTDIR
 */
#include <mpi.h>
#include <stdio.h>

#define B 1024
#define N 4

static void die(const char *msg)
{
    fprintf(stderr, "view_reread: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char byte_of(int r, int j, int k)
{
    return (unsigned char)((r * 31 + j * 7 + k) % 251);
}

/* buf holds pieces first..first+n-1 of rank r, B bytes each */
static void check(const unsigned char *buf, int r, int first, int n)
{
    int j, k;
    for (j = 0; j < n; j++)
        for (k = 0; k < B; k++)
            if (buf[j * B + k] != byte_of(r, first + j, k))
                die("read data mismatch");
}

int main(int argc, char **argv)
{
    int rank, size, j, k;
    static unsigned char wbuf[N * B], rbuf[N * B];
    char path[4096];
    MPI_File fh;
    MPI_Datatype vec, ftype;

    MPI_Init(&argc, &argv);
    if (argc != 2)
        die("usage: view_reread OUTDIR");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    snprintf(path, sizeof path, "%s/vr.dat", argv[1]);
    for (j = 0; j < N; j++)
        for (k = 0; k < B; k++)
            wbuf[j * B + k] = byte_of(rank, j, k);

    MPI_Type_vector(N, B, size * B, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)N * size * B, &ftype);
    MPI_Type_commit(&ftype);

    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");
    if (MPI_File_set_view(fh, (MPI_Offset)rank * B, MPI_BYTE, ftype, "native",
                          MPI_INFO_NULL) != MPI_SUCCESS)
        die("MPI_File_set_view failed");
    if (MPI_File_write_at_all(fh, 0, wbuf, N * B, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        die("MPI_File_write_at_all failed");
    MPI_Barrier(MPI_COMM_WORLD);

    if (MPI_File_read_at_all(fh, 0, rbuf, N * B, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        die("read A failed");
    check(rbuf, rank, 0, N);
    MPI_Barrier(MPI_COMM_WORLD);

    if (MPI_File_set_view(fh, (MPI_Offset)((rank + 1) % size) * B, MPI_BYTE, ftype, "native",
                          MPI_INFO_NULL) != MPI_SUCCESS)
        die("MPI_File_set_view failed");
    if (MPI_File_read_at_all(fh, 0, rbuf, N * B, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        die("read B failed");
    check(rbuf, (rank + 1) % size, 0, N);
    MPI_Barrier(MPI_COMM_WORLD);

    if (MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL) != MPI_SUCCESS)
        die("MPI_File_set_view failed");
    if (MPI_File_read_at(fh, (MPI_Offset)rank * B, rbuf, 2 * B, MPI_BYTE,
                         MPI_STATUS_IGNORE) != MPI_SUCCESS)
        die("read C failed");
    check(rbuf, rank, 0, 1);
    check(rbuf + B, (rank + 1) % size, rank + 1 == size, 1);
    if (MPI_File_close(&fh) != MPI_SUCCESS)
        die("MPI_File_close failed");
    MPI_Type_free(&ftype);
    MPI_Type_free(&vec);
    MPI_Finalize();
    return 0;
}
