/* fork_exit.c -- a rank that forks a child which exits at once (as a program
 * does that runs a helper with fork and exec, when the exec fails, or that
 * forks to write a checkpoint in the background and exits in the child).
 *
 *   open "forked.dat" (CREATE|WRONLY, MPI_COMM_WORLD)
 *   write_at (1024 bytes at rank*1024)
 *   fork(): the child calls exit(0) (its atexit handlers run: the tracer's too)
 *   waitpid(child)
 *   write_at (1024 bytes at (nprocs + rank)*1024)
 *   close
 *
 * Each rank's trace is then MPI_Init, MPI_File_open, MPI_File_write_at,
 * MPI_File_write_at, MPI_File_close, MPI_Finalize: 6 events, whatever the
 * child did (it neither adds to the rank's file nor ends it).
 *
 * usage: fork_exit OUTDIR
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLK 1024

int main(int argc, char **argv)
{
    int rank, nprocs;
    char path[4096];
    unsigned char buf[BLK];
    MPI_File fh;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2) {
        fprintf(stderr, "usage: fork_exit OUTDIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    snprintf(path, sizeof path, "%s/forked.dat", argv[1]);
    memset(buf, rank + 1, sizeof buf);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_write_at(fh, (MPI_Offset)rank * BLK, buf, BLK, MPI_BYTE, &st);
    fflush(NULL);
    pid_t child = fork();
    if (child == 0)
        exit(0);
    if (child < 0) {
        perror("fork_exit: fork");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    MPI_File_write_at(fh, (MPI_Offset)(nprocs + rank) * BLK, buf, BLK, MPI_BYTE, &st);
    MPI_File_close(&fh);
    MPI_Finalize();
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
