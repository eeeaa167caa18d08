/* init_exit.c -- a job whose ranks exit right after MPI_Init, as IOR does when
 * given an option it does not know: every rank exits with status 3, without
 * MPI_Finalize, and makes no I/O of its own through MPI.
 *
 * Before MPI_Init, each rank writes its process id into OUTDIR/pid.R (R, the
 * rank its launcher gives it: OMPI_COMM_WORLD_RANK or PMI_RANK), then, if
 * WAIT is given, waits until OUTDIR/go exists: a test can then set up what
 * the ranks meet in MPI_Init, and stop one of them while MPI_Init runs.
 *
 * usage: init_exit OUTDIR [WAIT]
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: init_exit OUTDIR [WAIT]\n");
        return 2;
    }
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r) r = getenv("PMI_RANK");
    char path[4096];
    snprintf(path, sizeof path, "%s/pid.%s", argv[1], r ? r : "unknown");
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) {
        perror(path);
        return 1;
    }
    snprintf(path, sizeof path, "%s/go", argv[1]);
    struct timespec tick = {0, 10000000};
    while (argc > 2 && access(path, F_OK) != 0) nanosleep(&tick, NULL);
    MPI_Init(&argc, &argv);
    exit(3);
}
