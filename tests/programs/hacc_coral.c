/* hacc_coral.c -- the CORAL HACC-IO benchmark's checkpoint and restart in its
 * single-shared-file MPI-IO mode (testhacc_io with restartio_glean's order).
 *
 * usage: hacc_coral OUTDIR [N [H]]   (N particles a rank, default 1000;
 *                                     H header bytes, default 65536)
 *
 * One shared file OUTDIR/ckpt-Part00000000-of-00000001.data: a header of H
 * bytes at 0, then every rank's record block in rank order, rank r's at
 * H + r*N*38: its 9 variables one after the other, xx, yy, zz, vx, vy, vz, phi
 * (float, 4 B each particle), pid (int64, 8 B), mask (uint16, 2 B).
 *
 * write: rank 0 alone opens the file (MPI_COMM_SELF), sets its size to
 *        H + P*N*38 (MPI_File_set_size: preallocation) and closes it;
 *        MPI_Barrier; all ranks open it (MPI_COMM_WORLD); each writes its 9
 *        variables with MPI_File_write_at; then rank 0 writes the header
 *        (MPI_File_write_at, H bytes at 0: back to the file's start);
 *        MPI_File_close; MPI_Barrier.
 * read:  rank 0 alone opens the file (MPI_COMM_SELF), reads the header
 *        (MPI_File_read_at, H bytes at 0) and closes it; MPI_Barrier;
 *        MPI_Scatter of each rank's count; all ranks open it (MPI_COMM_WORLD),
 *        each reads its 9 variables (MPI_File_read_at) and checks them;
 *        MPI_File_close; MPI_Barrier.
 * Content: byte k of variable v of rank r is (r*7 + v*13 + k) % 251; the
 * header's byte k is k % 251.  Any error or mismatch aborts.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVAR 9

static const int VSIZE[NVAR] = {4, 4, 4, 4, 4, 4, 4, 8, 2};

static void die(const char *msg)
{
    fprintf(stderr, "hacc_coral: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void fill(unsigned char *b, long n, int r, int v)
{
    for (long k = 0; k < n; k++)
        b[k] = (unsigned char)((r * 7 + v * 13 + k) % 251);
}

int main(int argc, char **argv)
{
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2)
        die("usage: hacc_coral OUTDIR [N [H]]");
    long n = argc > 2 ? atol(argv[2]) : 1000, h = argc > 3 ? atol(argv[3]) : 65536;
    if (n < 1 || h < 8)
        die("N must be at least 1 and H at least 8");
    long record = 0;
    for (int v = 0; v < NVAR; v++)
        record += VSIZE[v];
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt-Part00000000-of-00000001.data", argv[1]);
    unsigned char *buf = malloc((size_t)(n * 8 > h ? n * 8 : h)), *want = malloc((size_t)(n * 8));
    if (!buf || !want)
        die("out of memory");
    MPI_File fh;

    /* checkpoint */
    if (rank == 0) {
        if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                          &fh) != MPI_SUCCESS)
            die("open for preallocation");
        MPI_File_set_size(fh, (MPI_Offset)(h + (long)np * n * record));
        MPI_File_close(&fh);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("open for writing");
    MPI_Offset off = h + (MPI_Offset)rank * n * record;
    for (int v = 0; v < NVAR; v++) {
        fill(buf, n * VSIZE[v], rank, v);
        if (MPI_File_write_at(fh, off, buf, (int)(n * VSIZE[v]), MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            die("write");
        off += n * VSIZE[v];
    }
    if (rank == 0) {
        for (long k = 0; k < h; k++)
            buf[k] = (unsigned char)(k % 251);
        if (MPI_File_write_at(fh, 0, buf, (int)h, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            die("header write");
    }
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);

    /* restart */
    long counts[1024] = {0}, mine = 0;
    if (np > 1024)
        die("at most 1024 ranks");
    if (rank == 0) {
        if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
            die("open for the header");
        if (MPI_File_read_at(fh, 0, buf, (int)h, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            die("header read");
        for (long k = 0; k < h; k++)
            if (buf[k] != (unsigned char)(k % 251))
                die("header verify");
        MPI_File_close(&fh);
        for (int r = 0; r < np; r++)
            counts[r] = n;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Scatter(counts, 1, MPI_LONG, &mine, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (mine != n)
        die("scatter");
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("open for reading");
    off = h + (MPI_Offset)rank * n * record;
    for (int v = 0; v < NVAR; v++) {
        if (MPI_File_read_at(fh, off, buf, (int)(n * VSIZE[v]), MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            die("read");
        fill(want, n * VSIZE[v], rank, v);
        if (memcmp(buf, want, (size_t)(n * VSIZE[v])))
            die("verify");
        off += n * VSIZE[v];
    }
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
    free(want);
    MPI_Finalize();
    return 0;
}
