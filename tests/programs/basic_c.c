/* basic_c.c -- the "basic" MPI-IO sequence (C version).
 *
 * Same sequence as basic_mpifh.f90, basic_usempi.f90, basic_f08.f90 and
 * basic_py.py; expected calls are in expected.py (basic_io_calls etc.).
 *
 *   open "shared.dat" (CREATE|RDWR, MPI_COMM_WORLD)
 *   write_at_all(b=0)  Allreduce Allreduce
 *   write_at_all(b=1)  Allreduce Allreduce
 *   write_at_all(b=2)
 *   write_at  (512 bytes, independent)
 *   Barrier
 *   read_at_all (1024 bytes at rank*1024 == this rank's block 0)
 *   read_at     (512 bytes at this rank's independent offset)
 *   close
 *
 * Block b (0..2) of 1024 bytes goes to offset (b*nprocs + rank)*1024; the
 * independent block (b=3) of 512 bytes goes to 3*nprocs*1024 + rank*512.
 * Byte j of block b holds (rank*7 + b*13 + j) % 251.
 *
 * usage: basic_c OUTDIR
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define BLK 1024
#define IBLK 512

static unsigned char fill(int rank, int b, int j)
{
    return (unsigned char)((rank * 7 + b * 13 + j) % 251);
}

static void die(const char *msg)
{
    fprintf(stderr, "basic_c: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_sum(int rank, int nprocs)
{
    int in = rank, out = -1;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (out != nprocs * (nprocs - 1) / 2)
        die("Allreduce result mismatch");
}

int main(int argc, char **argv)
{
    int rank, nprocs, b, j;
    char path[4096];
    unsigned char buf[BLK], rbuf[BLK];
    MPI_File fh;
    MPI_Offset off;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2)
        die("usage: basic_c OUTDIR");
    snprintf(path, sizeof path, "%s/shared.dat", argv[1]);

    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");

    for (b = 0; b < 3; b++) {
        for (j = 0; j < BLK; j++)
            buf[j] = fill(rank, b, j);
        off = ((MPI_Offset)b * nprocs + rank) * BLK;
        if (MPI_File_write_at_all(fh, off, buf, BLK, MPI_BYTE, &st) != MPI_SUCCESS)
            die("MPI_File_write_at_all failed");
        if (b < 2) {
            check_sum(rank, nprocs);
            check_sum(rank, nprocs);
        }
    }

    for (j = 0; j < IBLK; j++)
        buf[j] = fill(rank, 3, j);
    off = (MPI_Offset)3 * nprocs * BLK + (MPI_Offset)rank * IBLK;
    if (MPI_File_write_at(fh, off, buf, IBLK, MPI_BYTE, &st) != MPI_SUCCESS)
        die("MPI_File_write_at failed");

    MPI_Barrier(MPI_COMM_WORLD);

    memset(rbuf, 0, sizeof rbuf);
    if (MPI_File_read_at_all(fh, (MPI_Offset)rank * BLK, rbuf, BLK, MPI_BYTE,
                             &st) != MPI_SUCCESS)
        die("MPI_File_read_at_all failed");
    for (j = 0; j < BLK; j++)
        if (rbuf[j] != fill(rank, 0, j))
            die("read_at_all data mismatch");

    memset(rbuf, 0, sizeof rbuf);
    if (MPI_File_read_at(fh, off, rbuf, IBLK, MPI_BYTE, &st) != MPI_SUCCESS)
        die("MPI_File_read_at failed");
    for (j = 0; j < IBLK; j++)
        if (rbuf[j] != fill(rank, 3, j))
            die("read_at data mismatch");

    if (MPI_File_close(&fh) != MPI_SUCCESS)
        die("MPI_File_close failed");
    MPI_Finalize();
    return 0;
}
