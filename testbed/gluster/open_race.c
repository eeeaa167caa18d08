/* How often does a rank's open of a file another rank just created get the page cache?
 *
 *   mpicc -Wall -Wextra -O2 -o /tmp/open_race testbed/gluster/open_race.c
 *   for i in $(seq 20); do mpirun -np 2 /tmp/open_race MOUNT/DIR/file 1 [DELAY_US]; done
 *
 * Each round opens the file the way Open MPI's OMPIO opens a shared file: rank 0
 * removes and creates it, a broadcast, then the other ranks open it (after DELAY_US
 * microseconds, default 0), a barrier. ROUNDS (default 1) repeats that in the same
 * processes; later rounds lose the race less often than a fresh run's first, which is
 * what an application meets, so run it fresh several times. Each rank writes 2 MiB to
 * its own block and reads it back through its descriptor; a read ten times faster than
 * rank 0's came from the kernel's page cache. Gluster 10.3's FUSE client answers a
 * CREATE with direct I/O but does not record it on the new descriptor; an OPEN while
 * that descriptor is bound to the inode inherits "no direct I/O" from it, an OPEN that
 * comes before the client has bound it (it binds after replying) keeps direct I/O. So
 * the outcome is a race, which a delay settles. Prints one summary line on rank 0;
 * exits 1 on an I/O error. */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (2 << 20)

static void fail(const char *path, const char *what)
{
    fprintf(stderr, "open_race: %s: %s: %s\n", path, what, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rank, nprocs, rounds, delay_us, r, cached = 0;
    char *buf;
    double *t0, *t1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2 || argc > 4 || nprocs < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 open_race FILE [ROUNDS [DELAY_US]]\n");
        MPI_Finalize();
        return 2;
    }
    rounds = argc > 2 ? atoi(argv[2]) : 1;
    delay_us = argc > 3 ? atoi(argv[3]) : 0;
    buf = malloc(BLOCK);
    t0 = calloc(rounds, sizeof *t0);
    t1 = calloc(rounds, sizeof *t1);
    if (!buf || !t0 || !t1 || rounds < 1) {
        fprintf(stderr, "open_race: out of memory or ROUNDS < 1\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 'a' + rank % 26, BLOCK);

    for (r = 0; r < rounds; r++) {
        int fd = -1, token = 0;
        double t, mine, theirs = 0.0;

        if (rank == 0) {
            if (unlink(argv[1]) != 0 && errno != ENOENT)
                fail(argv[1], "unlink");
            if ((fd = open(argv[1], O_CREAT | O_RDWR, 0644)) < 0)
                fail(argv[1], "create");
        }
        MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank != 0) {
            if (delay_us > 0)
                usleep(delay_us);
            if ((fd = open(argv[1], O_RDWR)) < 0)
                fail(argv[1], "open");
        }
        /* OMPIO's open goes on with collectives: the ranks wait for each other */
        MPI_Barrier(MPI_COMM_WORLD);
        if (pwrite(fd, buf, BLOCK, (off_t)rank * BLOCK) != BLOCK)
            fail(argv[1], "write");
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        if (pread(fd, buf, BLOCK, (off_t)rank * BLOCK) != BLOCK)
            fail(argv[1], "read");
        mine = MPI_Wtime() - t;
        close(fd);
        /* rank 1's time to rank 0, which keeps the tally */
        if (rank == 1)
            MPI_Send(&mine, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
        else if (rank == 0)
            MPI_Recv(&theirs, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 0) {
            t0[r] = mine;
            t1[r] = theirs;
            cached += theirs * 10 < mine;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0) {
        unlink(argv[1]);
        qsort(t0, rounds, sizeof *t0, by_value);
        qsort(t1, rounds, sizeof *t1, by_value);
        printf("delay %d us: rank 1 read its 2 MiB from the page cache in %d of %d rounds "
               "(rank 1 median %.1f ms, fastest %.1f, slowest %.1f; rank 0 median %.1f ms)\n",
               delay_us, cached, rounds, t1[rounds / 2] * 1e3, t1[0] * 1e3,
               t1[rounds - 1] * 1e3, t0[rounds / 2] * 1e3);
    }
    free(buf);
    free(t0);
    free(t1);
    MPI_Finalize();
    return 0;
}
