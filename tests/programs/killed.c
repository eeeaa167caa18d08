/* killed.c -- a run that dies in the middle, to test partial traces.
 *
 * Each rank r opens "killed.<r>.dat" on MPI_COMM_SELF (CREATE|RDWR) and
 * makes N = 1000 MPI_File_write_at calls of 8 bytes (one uint64_t holding
 * i) at offsets i*8, i = 0..999.  Then:
 *   ranks != 0: MPI_File_close, MPI_Barrier, MPI_Barrier (never returns)
 *   rank 0:     (file left open) MPI_Barrier, raise(SIG)
 * The first barrier guarantees every rank has finished its 1000 writes
 * (and ranks != 0 have closed their files) before rank 0 dies; mpirun then
 * stops the other ranks (SIGTERM) while they wait in the second barrier.
 * mpirun exits non-zero.  Nothing is read back.
 *
 * MODE picks SIG: "kill" (the default) SIGKILL; "term" SIGTERM; "own"
 * SIGTERM with a handler of the program's own on every rank, installed
 * before MPI_Init, that creates OUTDIR/killed.<rank>.handled and calls
 * _exit(5).
 *
 * usage: killed OUTDIR [kill|term|own]
 */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define N 1000

static void die(const char *msg)
{
    fprintf(stderr, "killed: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static char handled[4096];

static void own_handler(int sig)
{
    (void)sig;
    int fd = open(handled, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
    _exit(5);
}

int main(int argc, char **argv)
{
    int rank, i, sig = SIGKILL;
    char path[4096];
    uint64_t v;
    MPI_File fh;
    MPI_Status st;

    if (argc > 2 && strcmp(argv[2], "own") == 0) {
        struct sigaction act;
        memset(&act, 0, sizeof act);
        act.sa_handler = own_handler;
        sigemptyset(&act.sa_mask);
        sigaction(SIGTERM, &act, NULL);
    }
    if (argc > 2 && strcmp(argv[2], "kill") != 0)
        sig = SIGTERM;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2)
        die("usage: killed OUTDIR");
    snprintf(path, sizeof path, "%s/killed.%d.dat", argv[1], rank);
    snprintf(handled, sizeof handled, "%s/killed.%d.handled", argv[1], rank);

    if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");
    for (i = 0; i < N; i++) {
        v = (uint64_t)i;
        if (MPI_File_write_at(fh, (MPI_Offset)i * 8, &v, 8, MPI_BYTE,
                              &st) != MPI_SUCCESS)
            die("MPI_File_write_at failed");
    }
    if (rank != 0 && MPI_File_close(&fh) != MPI_SUCCESS)
        die("MPI_File_close failed");

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        raise(sig);
    MPI_Barrier(MPI_COMM_WORLD); /* never completes: rank 0 is gone */

    MPI_Finalize();
    return 0;
}
