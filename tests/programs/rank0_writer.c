/* rank0_writer.c -- a POP-like history writer: every few steps the ranks
 * gather their part of a field to rank 0, which writes it alone with stdio.
 *
 * Each rank has N doubles (argv[2]); S history steps (argv[3]).  At each step
 * the ranks compute (a stencil over their part), MPI_Gather the parts to rank
 * 0, and rank 0 writes OUTDIR/hist.SSSS.dat (SSSS: the step, four digits):
 *
 *   fopen("w"); fwrite(header, 64, 1); fwrite(field, 8, nprocs*N); fclose
 *
 * so each file is 64 + 8*nprocs*N bytes.  Then rank 0 reads the last file
 * back (fopen("r"), fread(header, 64, 1), fread(field, 8, nprocs*N), fclose).
 * Byte j of step s's field holds (s*13 + j) % 251 once gathered.
 *
 * usage: rank0_writer OUTDIR N S
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 4) {
        fprintf(stderr, "usage: rank0_writer OUTDIR N S\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = atol(argv[2]);
    int steps = atoi(argv[3]);
    double *part = malloc(sizeof(double) * (size_t)n);
    double *field = rank == 0 ? malloc(sizeof(double) * (size_t)(n * nprocs)) : NULL;
    unsigned char header[64];
    char path[4096];
    for (int s = 0; s < steps; s++) {
        unsigned char *p = (unsigned char *)part;
        for (long j = 0; j < n * 8; j++) p[j] = (unsigned char)((s * 13 + rank * n * 8 + j) % 251);
        volatile double x = 0;                /* a step of computing */
        for (long it = 0; it < 20 * n; it++) x += 1e-9 * (double)it;
        MPI_Gather(part, (int)n, MPI_DOUBLE, field, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            snprintf(path, sizeof path, "%s/hist.%04d.dat", argv[1], s);
            memset(header, 0, sizeof header);
            snprintf((char *)header, sizeof header, "history step %d of %d ranks", s, nprocs);
            FILE *f = fopen(path, "w");
            if (!f || fwrite(header, sizeof header, 1, f) != 1 ||
                fwrite(field, sizeof(double), (size_t)(n * nprocs), f) != (size_t)(n * nprocs) || fclose(f)) {
                perror("rank0_writer: write");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
    if (rank == 0) {
        FILE *f = fopen(path, "r");
        if (!f || fread(header, sizeof header, 1, f) != 1 ||
            fread(field, sizeof(double), (size_t)(n * nprocs), f) != (size_t)(n * nprocs)) {
            perror("rank0_writer: read");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fclose(f);
    }
    free(part);
    free(field);
    MPI_Finalize();
    return 0;
}
