/* stdio_rw.c -- one process's checkpoint through stdio: K records of R bytes
 * written with fwrite, then read back with fread, on a file of each rank's.
 *
 *   fopen(OUTDIR/rec.RANK.dat, "w"); K x fwrite(buf, 1, R); fclose
 *   fopen(OUTDIR/rec.RANK.dat, "r"); fseek(0, SEEK_SET); K x fread(buf, 1, R); fclose
 *
 * Record k's bytes are (rank*7 + k*13 + j) % 251, checked when read.
 *
 * usage: stdio_rw OUTDIR K R
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 4) {
        fprintf(stderr, "usage: stdio_rw OUTDIR K R\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int k = atoi(argv[2]);
    long r = atol(argv[3]);
    char path[4096];
    snprintf(path, sizeof path, "%s/rec.%d.dat", argv[1], rank);
    unsigned char *buf = malloc((size_t)r), *back = malloc((size_t)r);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < k; i++) {
        for (long j = 0; j < r; j++) buf[j] = (unsigned char)((rank * 7 + i * 13 + j) % 251);
        if (fwrite(buf, 1, (size_t)r, f) != (size_t)r) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fclose(f);
    f = fopen(path, "r");
    fseek(f, 0, SEEK_SET);
    for (int i = 0; i < k; i++) {
        for (long j = 0; j < r; j++) buf[j] = (unsigned char)((rank * 7 + i * 13 + j) % 251);
        if (fread(back, 1, (size_t)r, f) != (size_t)r || memcmp(buf, back, (size_t)r))
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fclose(f);
    free(buf);
    free(back);
    MPI_Finalize();
    return 0;
}
