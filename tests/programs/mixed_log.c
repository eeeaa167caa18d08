/* mixed_log.c -- MPI-IO collective output, and a POSIX log written by rank 0.
 *
 * S steps (argv[2]).  Each step: the ranks exchange halos (120 MPI_Sendrecv
 * with their neighbours, as NAS BT-IO's solver does between dumps), write 64 KiB
 * each to OUTDIR/out.dat with MPI_File_write_at_all (rank r's block of step s
 * at (s*nprocs + r)*65536), and rank 0 appends a 100-byte line to
 * OUTDIR/run.log with write() (opened once with open(O_CREAT|O_WRONLY|O_TRUNC)
 * before the first step, closed after the last).
 *
 * usage: mixed_log OUTDIR S
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 65536
#define LINE 100

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 3) {
        fprintf(stderr, "usage: mixed_log OUTDIR S\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int steps = atoi(argv[2]);
    char path[4096];
    snprintf(path, sizeof path, "%s/out.dat", argv[1]);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    int log = -1;
    if (rank == 0) {
        snprintf(path, sizeof path, "%s/run.log", argv[1]);
        log = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (log < 0) {
            perror("mixed_log: open");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    char *buf = malloc(BLOCK), line[LINE + 1];
    int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;
    double halo = rank, got;
    for (int s = 0; s < steps; s++) {
        for (int k = 0; k < 120; k++)
            MPI_Sendrecv(&halo, 1, MPI_DOUBLE, right, 0, &got, 1, MPI_DOUBLE, left, 0,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        memset(buf, 'a' + s % 26, BLOCK);
        MPI_File_write_at_all(fh, (MPI_Offset)(s * nprocs + rank) * BLOCK, buf, BLOCK, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        if (rank == 0) {
            memset(line, ' ', LINE);
            int n = snprintf(line, sizeof line, "step %6d written: %d blocks of %d bytes", s, nprocs, BLOCK);
            line[n] = ' ';
            line[LINE - 1] = '\n';
            if (write(log, line, LINE) != LINE) {
                perror("mixed_log: write");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
    if (rank == 0) close(log);
    MPI_File_close(&fh);
    free(buf);
    MPI_Finalize();
    return 0;
}
