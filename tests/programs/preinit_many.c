/* preinit_many.c -- a lot of I/O before MPI_Init (a code that reads a large
 * input deck record by record before starting MPI).
 *
 *   before MPI_Init: open(OUTDIR/deck.RANKLESS, O_CREAT|O_WRONLY|O_TRUNC) with
 *     the process id in its name, N x write(0 bytes), close
 *   MPI_Init; MPI_Finalize
 *
 * usage: preinit_many OUTDIR N
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: preinit_many OUTDIR N\n");
        return 2;
    }
    char path[4096], c = 0;
    snprintf(path, sizeof path, "%s/deck.%d", argv[1], (int)getpid());
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return 1;
    for (long i = 0, n = atol(argv[2]); i < n; i++)
        if (write(fd, &c, 0) != 0) return 1;
    close(fd);
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
