/* nb_window.c -- several nonblocking MPI-IO calls of one routine in flight at once.
 *
 * With P = nprocs, each rank r does, on "window.dat" (CREATE|RDWR, WORLD):
 *   N = 4 MPI_File_iwrite_at of B = 1024 bytes, call i at (r*N + i)*B,
 *     all posted before one MPI_Waitall completes them
 *   N = 4 MPI_File_iread_at of the same blocks, likewise; verify
 *   close
 * Each call's interval runs from its post to the MPI_Waitall that completes
 * it, so the four calls of a window overlap in time: their durations add up
 * to more than the window's span.  No communication calls between the calls.
 * Byte j of rank r's block i is (r*N + i + j) % 251.
 *
 * usage: nb_window OUTDIR
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define N 4
#define B 1024

static void die(const char *msg)
{
    fprintf(stderr, "nb_window: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    static unsigned char out[N][B], in[N][B];
    char path[4096];
    int rank, i, j;
    MPI_File fh;
    MPI_Request req[N];
    MPI_Status st[N];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2)
        die("usage: nb_window OUTDIR");
    snprintf(path, sizeof path, "%s/window.dat", argv[1]);
    for (i = 0; i < N; i++)
        for (j = 0; j < B; j++)
            out[i][j] = (unsigned char)((rank * N + i + j) % 251);
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");
    for (i = 0; i < N; i++)
        if (MPI_File_iwrite_at(fh, (MPI_Offset)(rank * N + i) * B, out[i], B, MPI_BYTE,
                               &req[i]) != MPI_SUCCESS)
            die("MPI_File_iwrite_at failed");
    if (MPI_Waitall(N, req, st) != MPI_SUCCESS)
        die("MPI_Waitall (writes) failed");
    for (i = 0; i < N; i++)
        if (MPI_File_iread_at(fh, (MPI_Offset)(rank * N + i) * B, in[i], B, MPI_BYTE,
                              &req[i]) != MPI_SUCCESS)
            die("MPI_File_iread_at failed");
    if (MPI_Waitall(N, req, st) != MPI_SUCCESS)
        die("MPI_Waitall (reads) failed");
    if (memcmp(in, out, sizeof in) != 0)
        die("read back differs from what was written");
    if (MPI_File_close(&fh) != MPI_SUCCESS)
        die("MPI_File_close failed");
    MPI_Finalize();
    return 0;
}
