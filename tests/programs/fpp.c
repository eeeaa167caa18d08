/* fpp.c -- file per process.
 *
 * Each rank r opens "fpp.<r>.dat" on MPI_COMM_SELF (CREATE|RDWR), writes
 * 4 blocks of 4096 bytes with MPI_File_write_at at offsets i*4096
 * (i = 0..3), reads all 16384 bytes back with one MPI_File_read_at at
 * offset 0, verifies them, and closes.  No communication calls.
 * Byte j of block i is (r*7 + i*13 + j) % 251.
 *
 * usage: fpp OUTDIR
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define BLK 4096
#define NBLK 4

static void die(const char *msg)
{
    fprintf(stderr, "fpp: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int rank, i, j;
    char path[4096];
    static unsigned char buf[BLK], rbuf[NBLK * BLK];
    MPI_File fh;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2)
        die("usage: fpp OUTDIR");
    snprintf(path, sizeof path, "%s/fpp.%d.dat", argv[1], rank);

    if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");
    for (i = 0; i < NBLK; i++) {
        for (j = 0; j < BLK; j++)
            buf[j] = (unsigned char)((rank * 7 + i * 13 + j) % 251);
        if (MPI_File_write_at(fh, (MPI_Offset)i * BLK, buf, BLK, MPI_BYTE,
                              &st) != MPI_SUCCESS)
            die("MPI_File_write_at failed");
    }
    memset(rbuf, 0, sizeof rbuf);
    if (MPI_File_read_at(fh, 0, rbuf, NBLK * BLK, MPI_BYTE, &st) != MPI_SUCCESS)
        die("MPI_File_read_at failed");
    for (i = 0; i < NBLK; i++)
        for (j = 0; j < BLK; j++)
            if (rbuf[i * BLK + j] != (unsigned char)((rank * 7 + i * 13 + j) % 251))
                die("read-back data mismatch");
    if (MPI_File_close(&fh) != MPI_SUCCESS)
        die("MPI_File_close failed");
    MPI_Finalize();
    return 0;
}
