/* plain_output.c -- deterministic stdout, for checking that tracing does
 * not change the application's own output.
 *
 * Each rank r writes (r+1)*256 bytes with MPI_File_write_at_all to
 * "plain.dat" at offset sum_{q<r} (q+1)*256 = 128*r*(r+1), takes the byte
 * count from the status (MPI_Get_count), MPI_Gather's the counts to rank 0,
 * closes the file, does one MPI_Barrier; rank 0 then checks the file with
 * stdio and prints, for P ranks, exactly:
 *     rank 0 of P wrote 256 bytes
 *     rank 1 of P wrote 512 bytes
 *     ...
 *     rank P-1 of P wrote P*256 bytes
 *     total 128*P*(P+1) bytes in plain.dat
 * Byte j written by rank r is (r*7 + j) % 251.  Nothing goes to stderr.
 *
 * usage: plain_output OUTDIR
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define UNIT 256

static void die(const char *msg)
{
    fprintf(stderr, "plain_output: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int rank, nprocs, n, j, r, cnt = -1;
    int *counts = NULL;
    long total = 0;
    char path[4096];
    unsigned char *buf;
    MPI_File fh;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2)
        die("usage: plain_output OUTDIR");
    snprintf(path, sizeof path, "%s/plain.dat", argv[1]);

    n = (rank + 1) * UNIT;
    buf = malloc((size_t)nprocs * UNIT);
    counts = malloc(sizeof(int) * nprocs);
    if (!buf || !counts)
        die("out of memory");
    for (j = 0; j < n; j++)
        buf[j] = (unsigned char)((rank * 7 + j) % 251);

    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");
    if (MPI_File_write_at_all(fh, (MPI_Offset)UNIT / 2 * rank * (rank + 1),
                              buf, n, MPI_BYTE, &st) != MPI_SUCCESS)
        die("MPI_File_write_at_all failed");
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    if (cnt != n)
        die("MPI_Get_count mismatch");
    MPI_Gather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (MPI_File_close(&fh) != MPI_SUCCESS)
        die("MPI_File_close failed");
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        FILE *f = fopen(path, "rb");
        if (!f)
            die("cannot reopen plain.dat with stdio");
        for (r = 0; r < nprocs; r++) {
            n = (r + 1) * UNIT;
            if (counts[r] != n)
                die("gathered count mismatch");
            if (fseek(f, (long)UNIT / 2 * r * (r + 1), SEEK_SET) ||
                fread(buf, 1, n, f) != (size_t)n)
                die("short stdio read");
            for (j = 0; j < n; j++)
                if (buf[j] != (unsigned char)((r * 7 + j) % 251))
                    die("file content mismatch");
            total += counts[r];
        }
        fclose(f);
        for (r = 0; r < nprocs; r++)
            printf("rank %d of %d wrote %d bytes\n", r, nprocs, counts[r]);
        printf("total %ld bytes in plain.dat\n", total);
        fflush(stdout);
    }
    free(buf);
    free(counts);
    MPI_Finalize();
    return 0;
}
