/* nonblocking.c -- nonblocking and split-collective MPI-IO.
 *
 * With P = nprocs, each rank r does, on "nb.dat" (CREATE|RDWR, WORLD):
 *   A  MPI_File_iwrite_at      2048 bytes at r*2048                  -> req[0]
 *   B  MPI_File_iwrite_at_all  1024 bytes at P*2048 + r*1024         -> req[1]
 *      MPI_Waitall(2, req)                      completes A and B
 *   C  MPI_File_iread_at       2048 bytes at r*2048                  -> req[2]
 *      MPI_Wait(&req[2])                        completes C; verify == A
 *   D  MPI_File_write_at_all_begin  512 bytes at P*3072 + r*512
 *      MPI_File_write_at_all_end                completes D
 *      MPI_File_seek(r*2048, MPI_SEEK_SET)      (individual pointer)
 *   E  MPI_File_read_all_begin  256 bytes (at r*2048)
 *      MPI_File_read_all_end                    completes E; verify == A[0:256]
 *   F  MPI_File_iread           256 bytes (at r*2048 + 256)          -> req[3]
 *      MPI_Test loop until flag                 the last Test completes F;
 *                                               verify == A[256:512]
 *   close
 * Default file view (bytes).  No communication calls at all.
 * Byte j of block A is (r*7 + j) % 251, of B (r*7 + 50 + j) % 251, of D
 * (r*7 + 100 + j) % 251.  B and D are not read back through MPI; they are
 * checked by rank 0 with stdio after MPI_File_close and one MPI_Barrier.
 *
 * usage: nonblocking OUTDIR
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define LA 2048
#define LB 1024
#define LD 512
#define LE 256
#define LF 256

static void die(const char *msg)
{
    fprintf(stderr, "nonblocking: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char pat(int r, int base, int j)
{
    return (unsigned char)((r * 7 + base + j) % 251);
}

/* rank 0, after close: check every block of every rank in the file */
static void check_file(const char *path, int nprocs)
{
    static unsigned char b[LA];
    FILE *f = fopen(path, "rb");
    int r, j;
    if (!f)
        die("cannot reopen nb.dat with stdio");
    for (r = 0; r < nprocs; r++) {
        if (fseek(f, (long)r * LA, SEEK_SET) || fread(b, 1, LA, f) != LA)
            die("short stdio read (A)");
        for (j = 0; j < LA; j++)
            if (b[j] != pat(r, 0, j))
                die("file content mismatch in iwrite_at block");
        if (fseek(f, (long)nprocs * LA + (long)r * LB, SEEK_SET) ||
            fread(b, 1, LB, f) != LB)
            die("short stdio read (B)");
        for (j = 0; j < LB; j++)
            if (b[j] != pat(r, 50, j))
                die("file content mismatch in iwrite_at_all block");
        if (fseek(f, (long)nprocs * (LA + LB) + (long)r * LD, SEEK_SET) ||
            fread(b, 1, LD, f) != LD)
            die("short stdio read (D)");
        for (j = 0; j < LD; j++)
            if (b[j] != pat(r, 100, j))
                die("file content mismatch in write_at_all_begin block");
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    int rank, nprocs, j, flag = 0;
    char path[4096];
    unsigned char a[LA], bb[LB], d[LD], rc[LA], re[LE], rf[LF];
    MPI_File fh;
    MPI_Request req[4];
    MPI_Status sts[2], st;
    MPI_Offset P;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2)
        die("usage: nonblocking OUTDIR");
    snprintf(path, sizeof path, "%s/nb.dat", argv[1]);
    P = nprocs;
    for (j = 0; j < LA; j++)
        a[j] = pat(rank, 0, j);
    for (j = 0; j < LB; j++)
        bb[j] = pat(rank, 50, j);
    for (j = 0; j < LD; j++)
        d[j] = pat(rank, 100, j);

    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");

    /* A, B, Waitall */
    if (MPI_File_iwrite_at(fh, (MPI_Offset)rank * LA, a, LA, MPI_BYTE,
                           &req[0]) != MPI_SUCCESS)
        die("MPI_File_iwrite_at failed");
    if (MPI_File_iwrite_at_all(fh, P * LA + (MPI_Offset)rank * LB, bb, LB,
                               MPI_BYTE, &req[1]) != MPI_SUCCESS)
        die("MPI_File_iwrite_at_all failed");
    if (MPI_Waitall(2, req, sts) != MPI_SUCCESS)
        die("MPI_Waitall failed");

    /* C, Wait */
    memset(rc, 0, sizeof rc);
    if (MPI_File_iread_at(fh, (MPI_Offset)rank * LA, rc, LA, MPI_BYTE,
                          &req[2]) != MPI_SUCCESS)
        die("MPI_File_iread_at failed");
    if (MPI_Wait(&req[2], &st) != MPI_SUCCESS)
        die("MPI_Wait failed");
    if (memcmp(rc, a, LA) != 0)
        die("iread_at data mismatch");

    /* D: split collective with explicit offset */
    if (MPI_File_write_at_all_begin(fh, P * (LA + LB) + (MPI_Offset)rank * LD,
                                    d, LD, MPI_BYTE) != MPI_SUCCESS)
        die("MPI_File_write_at_all_begin failed");
    if (MPI_File_write_at_all_end(fh, d, &st) != MPI_SUCCESS)
        die("MPI_File_write_at_all_end failed");

    /* E: split collective with the individual file pointer */
    if (MPI_File_seek(fh, (MPI_Offset)rank * LA, MPI_SEEK_SET) != MPI_SUCCESS)
        die("MPI_File_seek failed");
    memset(re, 0, sizeof re);
    if (MPI_File_read_all_begin(fh, re, LE, MPI_BYTE) != MPI_SUCCESS)
        die("MPI_File_read_all_begin failed");
    if (MPI_File_read_all_end(fh, re, &st) != MPI_SUCCESS)
        die("MPI_File_read_all_end failed");
    if (memcmp(re, a, LE) != 0)
        die("read_all_begin/end data mismatch");

    /* F: nonblocking with the individual file pointer, completed by Test */
    memset(rf, 0, sizeof rf);
    if (MPI_File_iread(fh, rf, LF, MPI_BYTE, &req[3]) != MPI_SUCCESS)
        die("MPI_File_iread failed");
    while (!flag) {
        if (MPI_Test(&req[3], &flag, &st) != MPI_SUCCESS)
            die("MPI_Test failed");
    }
    if (memcmp(rf, a + LE, LF) != 0)
        die("iread data mismatch");

    if (MPI_File_close(&fh) != MPI_SUCCESS)
        die("MPI_File_close failed");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        check_file(path, nprocs);
    MPI_Finalize();
    return 0;
}
