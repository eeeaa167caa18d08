/* coll_log.c -- collective MPI-IO output, with one rank's POSIX log between.
 *
 * S steps (argv[2]).  Each step: every rank writes 64 KiB of out.dat with
 * MPI_File_write_at_all (rank r's block of step s at (s*nprocs + r)*65536),
 * then one MPI_Allreduce (a residual, as a solver computes between dumps),
 * then each of the first L ranks (argv[3], default 1: rank 0 alone) write()s
 * a 24-byte line to its log, run.R.log (opened with open(O_CREAT|O_WRONLY|O_TRUNC)
 * before the first step, closed after the last).  A logging rank's log
 * writes sit between its collective writes; the other ranks have nothing there.
 *
 * usage: coll_log OUTDIR S [L]
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 65536
#define LINE 24

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 3) {
        fprintf(stderr, "usage: coll_log OUTDIR S [L]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int steps = atoi(argv[2]), loggers = argc > 3 ? atoi(argv[3]) : 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/out.dat", argv[1]);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    int log = -1;
    if (rank < loggers) {
        snprintf(path, sizeof path, "%s/run.%d.log", argv[1], rank);
        log = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (log < 0) {
            perror("coll_log: open");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    char *buf = malloc(BLOCK), line[64];   /* 24 characters with the newline */
    double residual = 1.0 + rank, sum;
    for (int s = 0; s < steps; s++) {
        memset(buf, 'a' + s % 26, BLOCK);
        MPI_File_write_at_all(fh, (MPI_Offset)(s * nprocs + rank) * BLOCK, buf, BLOCK, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        MPI_Allreduce(&residual, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        residual = sum / nprocs;
        if (rank < loggers) {
            snprintf(line, sizeof line, "step %4u residual %4u\n", (unsigned)s % 1000u, (unsigned)sum % 1000u);
            if (write(log, line, LINE) != LINE) {
                perror("coll_log: write");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
    if (rank < loggers) close(log);
    MPI_File_close(&fh);
    free(buf);
    MPI_Finalize();
    return 0;
}
