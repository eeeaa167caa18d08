/* pointers.c -- individual and shared file pointers.
 *
 * With P = nprocs, each rank r does, on "ptr.dat" (CREATE|RDWR, WORLD),
 * default file view (so pointers count bytes):
 *   MPI_File_seek(r*4096, MPI_SEEK_SET)
 *   MPI_File_write      1000 bytes  -> at r*4096
 *   MPI_File_write      1000 bytes  -> at r*4096 + 1000
 *   MPI_File_write_all    96 bytes  -> at r*4096 + 2000 (ends at r*4096 + 2096)
 *   MPI_Barrier
 *   MPI_File_seek_shared(P*4096, MPI_SEEK_SET)        (collective; 16384 for P=4)
 *   MPI_File_write_ordered (r+1)*100 bytes
 *                       -> at P*4096 + sum_{q<r} (q+1)*100 = P*4096 + 50*r*(r+1)
 *   MPI_Barrier
 *   rank 0 only: MPI_File_write_shared 50 bytes
 *                       -> at P*4096 + 50*P*(P+1)       (17384 for P=4)
 *   MPI_File_close
 *   MPI_Barrier; rank 0 then checks the whole file with stdio.
 * Byte j of each piece is (r*7 + base + j) % 251 with base 0, 30, 60, 90,
 * 120 for the five writes above.
 *
 * usage: pointers OUTDIR
 */
#include <mpi.h>
#include <stdio.h>

#define W1 1000
#define W2 1000
#define WA 96
#define STRIDE 4096
#define WO 100
#define WS 50
#define MAXB 4096

static void die(const char *msg)
{
    fprintf(stderr, "pointers: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void fill(unsigned char *b, int n, int r, int base)
{
    int j;
    for (j = 0; j < n; j++)
        b[j] = (unsigned char)((r * 7 + base + j) % 251);
}

static void expect(FILE *f, long off, int n, int r, int base)
{
    static unsigned char got[MAXB], want[MAXB];
    int j;
    if (fseek(f, off, SEEK_SET) || fread(got, 1, n, f) != (size_t)n)
        die("short stdio read");
    fill(want, n, r, base);
    for (j = 0; j < n; j++)
        if (got[j] != want[j])
            die("file content mismatch");
}

int main(int argc, char **argv)
{
    int rank, nprocs, r;
    char path[4096];
    static unsigned char buf[MAXB];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset shbase;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2)
        die("usage: pointers OUTDIR");
    if ((nprocs + 1) * WO > MAXB)
        die("too many ranks");
    snprintf(path, sizeof path, "%s/ptr.dat", argv[1]);
    shbase = (MPI_Offset)nprocs * STRIDE;

    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");

    /* individual file pointer */
    if (MPI_File_seek(fh, (MPI_Offset)rank * STRIDE, MPI_SEEK_SET) != MPI_SUCCESS)
        die("MPI_File_seek failed");
    fill(buf, W1, rank, 0);
    if (MPI_File_write(fh, buf, W1, MPI_BYTE, &st) != MPI_SUCCESS)
        die("MPI_File_write failed");
    fill(buf, W2, rank, 30);
    if (MPI_File_write(fh, buf, W2, MPI_BYTE, &st) != MPI_SUCCESS)
        die("MPI_File_write failed");
    fill(buf, WA, rank, 60);
    if (MPI_File_write_all(fh, buf, WA, MPI_BYTE, &st) != MPI_SUCCESS)
        die("MPI_File_write_all failed");

    MPI_Barrier(MPI_COMM_WORLD);

    /* shared file pointer */
    if (MPI_File_seek_shared(fh, shbase, MPI_SEEK_SET) != MPI_SUCCESS)
        die("MPI_File_seek_shared failed");
    fill(buf, (rank + 1) * WO, rank, 90);
    if (MPI_File_write_ordered(fh, buf, (rank + 1) * WO, MPI_BYTE,
                               &st) != MPI_SUCCESS)
        die("MPI_File_write_ordered failed");

    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        fill(buf, WS, rank, 120);
        if (MPI_File_write_shared(fh, buf, WS, MPI_BYTE, &st) != MPI_SUCCESS)
            die("MPI_File_write_shared failed");
    }

    if (MPI_File_close(&fh) != MPI_SUCCESS)
        die("MPI_File_close failed");
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        FILE *f = fopen(path, "rb");
        if (!f)
            die("cannot reopen ptr.dat with stdio");
        for (r = 0; r < nprocs; r++) {
            expect(f, (long)r * STRIDE, W1, r, 0);
            expect(f, (long)r * STRIDE + W1, W2, r, 30);
            expect(f, (long)r * STRIDE + W1 + W2, WA, r, 60);
            expect(f, (long)shbase + 50L * r * (r + 1), (r + 1) * WO, r, 90);
        }
        expect(f, (long)shbase + 50L * nprocs * (nprocs + 1), WS, 0, 120);
        fclose(f);
    }
    MPI_Finalize();
    return 0;
}
