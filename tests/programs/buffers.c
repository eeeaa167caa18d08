/* buffers.c -- data accesses from buffers at known places within 4 KiB.
 *
 * One page-aligned region pg of 4 pages; each rank r, on "buf.dat"
 * (CREATE|RDWR, WORLD), default view, no communication calls:
 *   A  MPI_File_write_at        1024 B at r*4096         from pg + 16
 *   B  MPI_File_write_at        1024 B at r*4096 + 1024  from pg + 16
 *   C  MPI_File_read_at         1024 B at r*4096         into pg + 4096 + 100
 *   D  MPI_File_iwrite_at        512 B at r*4096 + 2048  from pg + 8192, MPI_Wait
 *   E  MPI_File_write_at_all_begin 512 B at r*4096 + 2560 from pg + 8192 + 2048, _end
 *   F  MPI_File_read_at         1024 B at r*4096         into pg + 4096 + 100
 *   G  MPI_File_read_at         1024 B at r*4096 + 1024  into pg + 12288 + 16
 *   close
 * So the buffers sit 16, 16, 100, 0, 2048, 100 and 16 bytes past a 4 KiB
 * boundary.  Byte j of A and B is (r*7 + j) % 251, byte j of page pg + 8192
 * (D's and E's data) (r*7 + 100 + j) % 251; C, F and G are checked against
 * A's pattern.
 *
 * usage: buffers OUTDIR
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096
#define L 1024
#define S 512

static void die(const char *msg)
{
    fprintf(stderr, "buffers: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void ck(int rc, const char *what)
{
    if (rc != MPI_SUCCESS)
        die(what);
}

static void check(const unsigned char *b, int r)
{
    for (int j = 0; j < L; j++)
        if (b[j] != (unsigned char)((r * 7 + j) % 251))
            die("read-back data mismatch");
}

int main(int argc, char **argv)
{
    int rank;
    char path[4096];
    void *region = NULL;
    MPI_File fh;
    MPI_Status st;
    MPI_Request req;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: buffers OUTDIR\n");
        MPI_Finalize();
        return 2;
    }
    if (snprintf(path, sizeof path, "%s/buf.dat", argv[1]) >= (int)sizeof path)
        die("OUTDIR too long");
    if (posix_memalign(&region, PAGE, 4 * PAGE) != 0)
        die("out of memory");
    unsigned char *pg = region;
    memset(pg, 0, 4 * PAGE);
    for (int j = 0; j < L; j++)
        pg[16 + j] = (unsigned char)((rank * 7 + j) % 251);
    for (int j = 0; j < PAGE; j++)
        pg[2 * PAGE + j] = (unsigned char)((rank * 7 + 100 + j) % 251);
    MPI_Offset base = (MPI_Offset)rank * PAGE;

    ck(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
       "MPI_File_open");
    ck(MPI_File_write_at(fh, base, pg + 16, L, MPI_BYTE, &st), "A");
    ck(MPI_File_write_at(fh, base + L, pg + 16, L, MPI_BYTE, &st), "B");
    ck(MPI_File_read_at(fh, base, pg + PAGE + 100, L, MPI_BYTE, &st), "C");
    check(pg + PAGE + 100, rank);
    ck(MPI_File_iwrite_at(fh, base + 2048, pg + 2 * PAGE, S, MPI_BYTE, &req), "D");
    ck(MPI_Wait(&req, &st), "MPI_Wait");
    ck(MPI_File_write_at_all_begin(fh, base + 2560, pg + 2 * PAGE + 2048, S, MPI_BYTE), "E");
    ck(MPI_File_write_at_all_end(fh, pg + 2 * PAGE + 2048, &st), "E end");
    memset(pg + PAGE, 0, PAGE);
    ck(MPI_File_read_at(fh, base, pg + PAGE + 100, L, MPI_BYTE, &st), "F");
    check(pg + PAGE + 100, rank);
    ck(MPI_File_read_at(fh, base + L, pg + 3 * PAGE + 16, L, MPI_BYTE, &st), "G");
    check(pg + 3 * PAGE + 16, rank);
    ck(MPI_File_close(&fh), "MPI_File_close");
    free(region);
    MPI_Finalize();
    return 0;
}
