/* posix_fpp.c -- a HACC-IO-like checkpoint through POSIX: every rank writes
 * its particles to a file of its own with pwrite, syncs it, and reads it back.
 *
 * N particles a rank (argv[2]); each rank's file OUTDIR/ckpt.RANK.dat holds
 * a 32-byte header, then 9 arrays one after another, as HACC-IO's POSIX mode
 * writes them: xx yy zz vx vy vz phi (float, 4 bytes a particle), pid
 * (int64, 8 bytes), mask (uint16, 2 bytes).  Between the checkpoint and the
 * restart the ranks compute (an MPI_Allreduce of a sum over the particles).
 *
 *   open(ckpt.RANK.dat, O_CREAT|O_WRONLY|O_TRUNC)
 *   pwrite(header, 32, 0)
 *   pwrite(array a, size_a, offset_a) for the 9 arrays, offset_a = 32 + sizes before
 *   fsync, close
 *   MPI_Allreduce
 *   open(ckpt.RANK.dat, O_RDONLY); pread each array at its offset; close
 *
 * File size: 32 + N*(7*4 + 8 + 2) = 32 + 38 N bytes.  Byte j of array a of rank r
 * holds (r*7 + a*13 + j) % 251; the read back is checked.
 *
 * usage: posix_fpp OUTDIR N
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const int elem[9] = {4, 4, 4, 4, 4, 4, 4, 8, 2};

static void die(const char *what)
{
    perror(what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) {
        fprintf(stderr, "usage: posix_fpp OUTDIR N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = atol(argv[2]);
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt.%d.dat", argv[1], rank);
    unsigned char header[32];
    memset(header, 0, sizeof header);
    memcpy(header, "HACCLIKE", 8);
    memcpy(header + 8, &n, sizeof n);
    unsigned char *a[9];
    for (int k = 0; k < 9; k++) {
        a[k] = malloc((size_t)(n * elem[k]));
        for (long j = 0; j < n * elem[k]; j++) a[k][j] = (unsigned char)((rank * 7 + k * 13 + j) % 251);
    }
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) die("posix_fpp: open");
    off_t off = 0;
    if (pwrite(fd, header, sizeof header, off) != (ssize_t)sizeof header) die("posix_fpp: pwrite");
    off += sizeof header;
    for (int k = 0; k < 9; k++) {
        if (pwrite(fd, a[k], (size_t)(n * elem[k]), off) != n * elem[k]) die("posix_fpp: pwrite");
        off += n * elem[k];
    }
    if (fsync(fd) != 0) die("posix_fpp: fsync");
    close(fd);
    double local = 0, sum = 0;
    for (long j = 0; j < n; j++) local += a[0][j];
    MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    fd = open(path, O_RDONLY);
    if (fd < 0) die("posix_fpp: open for reading");
    off = sizeof header;
    for (int k = 0; k < 9; k++) {
        unsigned char *b = malloc((size_t)(n * elem[k]));
        if (pread(fd, b, (size_t)(n * elem[k]), off) != n * elem[k] || memcmp(a[k], b, (size_t)(n * elem[k])))
            die("posix_fpp: pread");
        off += n * elem[k];
        free(b);
    }
    close(fd);
    for (int k = 0; k < 9; k++) free(a[k]);
    MPI_Finalize();
    return 0;
}
