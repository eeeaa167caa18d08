/* threads.c -- concurrent MPI-IO from several threads of each rank.
 *
 *   MPI_Init_thread(MPI_THREAD_MULTIPLE)  (abort unless provided)
 *   open "threads.dat" (CREATE|RDWR, MPI_COMM_WORLD)
 *   T = 4 pthreads per rank; thread t of rank r makes K = 50
 *   MPI_File_write_at calls of B = 64 bytes, k = 0..K-1, at offset
 *       ((r*T + t)*K + k) * B
 *   all threads of a rank write at the same time; join
 *   MPI_Barrier, close
 *   rank 0 reads the file back with stdio and checks every byte
 *
 * Block number b = (r*T + t)*K + k (0 .. nprocs*T*K - 1) sits at b*B; byte j
 * of block b holds (b*13 + j) % 251.  The blocks tile the file exactly:
 * its size is nprocs*T*K*B (51200 bytes for 4 ranks).  Expected values are
 * in expected.py (threads_*).
 *
 * usage: threads OUTDIR
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T 4
#define K 50
#define B 64

static MPI_File fh;
static int rank;

static unsigned char fill(long b, int j)
{
    return (unsigned char)((b * 13 + j) % 251);
}

static void die(const char *msg)
{
    fprintf(stderr, "threads: rank %d: %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *writer(void *arg)
{
    int t = *(const int *)arg, k, j;
    unsigned char buf[B];
    MPI_Status st;

    for (k = 0; k < K; k++) {
        long b = ((long)rank * T + t) * K + k;
        for (j = 0; j < B; j++)
            buf[j] = fill(b, j);
        if (MPI_File_write_at(fh, (MPI_Offset)b * B, buf, B, MPI_BYTE, &st) != MPI_SUCCESS)
            die("MPI_File_write_at failed");
    }
    return NULL;
}

static void verify(const char *path, int nprocs)
{
    FILE *f = fopen(path, "rb");
    unsigned char buf[B];
    long b, nblocks = (long)nprocs * T * K;
    int j;

    if (!f)
        die("cannot reopen threads.dat with stdio");
    for (b = 0; b < nblocks; b++) {
        if (fread(buf, 1, B, f) != B)
            die("threads.dat is too short");
        for (j = 0; j < B; j++)
            if (buf[j] != fill(b, j))
                die("threads.dat content mismatch");
    }
    if (fgetc(f) != EOF)
        die("threads.dat is too long");
    fclose(f);
}

int main(int argc, char **argv)
{
    int provided = -1, nprocs, t, ids[T];
    char path[4096];
    pthread_t th[T];

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (provided != MPI_THREAD_MULTIPLE)
        die("MPI_THREAD_MULTIPLE is not provided");
    if (argc < 2)
        die("usage: threads OUTDIR");
    snprintf(path, sizeof path, "%s/threads.dat", argv[1]);

    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");

    for (t = 0; t < T; t++) {
        ids[t] = t;
        if (pthread_create(&th[t], NULL, writer, &ids[t]) != 0)
            die("pthread_create failed");
    }
    for (t = 0; t < T; t++)
        if (pthread_join(th[t], NULL) != 0)
            die("pthread_join failed");

    MPI_Barrier(MPI_COMM_WORLD);
    if (MPI_File_close(&fh) != MPI_SUCCESS)
        die("MPI_File_close failed");

    if (rank == 0)
        verify(path, nprocs);

    MPI_Finalize();
    return 0;
}
