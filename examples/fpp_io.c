/* fpp_io.c -- file per process (IOR -F like): every rank writes, then reads
 * back, a file of its own with independent explicit-offset calls.
 *
 * usage: fpp_io OUTDIR [TSIZE [COUNT]]          (defaults 65536 16)
 *
 * P = nprocs, r = rank, T = TSIZE bytes (the transfer size), N = COUNT.
 * Each rank makes exactly these MPI calls (besides MPI_Init, MPI_Comm_rank,
 * MPI_Comm_size, MPI_Get_count and MPI_Finalize):
 *
 *   MPI_File_open(MPI_COMM_SELF, "OUTDIR/fpp.<r>.dat", CREATE|RDWR)
 *   for j in 0..N-1:  MPI_File_write_at(offset j*T, T x MPI_BYTE)
 *   MPI_Barrier(MPI_COMM_WORLD)
 *   for j in 0..N-1:  MPI_File_read_at(offset j*T, T x MPI_BYTE), verify
 *   MPI_File_close
 *
 * Content: byte i of piece j of rank r is (r*7 + j*13 + i) % 251, so file
 * fpp.<r>.dat holds N*T bytes (the file is not truncated: use an empty
 * OUTDIR).  Every read is checked (byte count and content); a mismatch, an
 * MPI error or a failed allocation prints a message on stderr and calls
 * MPI_Abort.  Bad arguments (not positive integers, TSIZE > INT_MAX) print
 * the usage on rank 0 and every rank exits with status 2.
 *
 * The model iomodel builds from a trace (docs/commands/analyze.md):
 *   files: one group of unique files "fpp.{rank}.dat" (each opened on
 *       MPI_COMM_SELF by one rank), np P, role inout,
 *       iof_size = inf_size = size = P*N*T, extent N*T (per file).
 *   threshold: 0 communication calls between consecutive writes and
 *       between consecutive reads -> one group {0} -> max_comm_gap 8.
 *   phase 1: write, MPI_File_write_at (independent), np P, iop 1, rs T,
 *       rep N, weight P*N*T, sequential, offsets first 0, per_rank 0,
 *       stride T; logical time first 0, comm_between 0.
 *   phase 2: read, MPI_File_read_at, np P, iop 1, rs T, rep N,
 *       weight P*N*T, sequential, first 0, per_rank 0, stride T;
 *       logical time first 1 (the barrier), comm_between 0.
 *   model weight 2*P*N*T, storage_capacity P*N*T; runs [1,1], [2,2].
 * At the defaults and 4 ranks: 2 phases of rs 64 KiB, rep 16, weight 4 MiB.
 * (COUNT 1: no consecutive operations, still max_comm_gap 8, rep 1, no
 * stride.)
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage = "usage: fpp_io OUTDIR [TSIZE [COUNT]]  "
                           "(positive integers, defaults 65536 16)";

static void die(const char *msg)
{
    fprintf(stderr, "fpp_io: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* an MPI call's return code: abort with the routine and MPI's message */
static void ck(int rc, const char *what)
{
    char err[MPI_MAX_ERROR_STRING], msg[MPI_MAX_ERROR_STRING + 128];
    int len = 0;
    if (rc == MPI_SUCCESS)
        return;
    if (MPI_Error_string(rc, err, &len) != MPI_SUCCESS)
        len = 0;
    err[len] = '\0';
    snprintf(msg, sizeof msg, "%s failed: %s", what, err);
    die(msg);
}

/* a positive integer <= max, or -1 */
static long parse_pos(const char *s, long max)
{
    char *end;
    long v;
    if (!*s)
        return -1;
    v = strtol(s, &end, 10);
    if (*end || v < 1 || v > max)
        return -1;
    return v;
}

static unsigned char pat(int r, int j, long i)
{
    return (unsigned char)((r * 7L + j * 13L + i) % 251);
}

int main(int argc, char **argv)
{
    int rank, nprocs, j, got;
    long tsize = 65536, count = 16, i;
    char path[4096];
    unsigned char *buf, *rbuf;
    MPI_File fh;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc >= 3)
        tsize = parse_pos(argv[2], INT_MAX);
    if (argc >= 4)
        count = parse_pos(argv[3], INT_MAX);
    if (argc < 2 || argc > 4 || !*argv[1] || tsize < 0 || count < 0) {
        if (rank == 0)
            fprintf(stderr, "fpp_io: %s\n", usage);
        MPI_Finalize();
        return 2;
    }
    if (snprintf(path, sizeof path, "%s/fpp.%d.dat", argv[1], rank) >=
        (int)sizeof path)
        die("OUTDIR too long");

    buf = malloc(tsize);
    rbuf = malloc(tsize);
    if (!buf || !rbuf)
        die("out of memory");

    ck(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                     MPI_INFO_NULL, &fh), "MPI_File_open");
    for (j = 0; j < count; j++) {
        for (i = 0; i < tsize; i++)
            buf[i] = pat(rank, j, i);
        ck(MPI_File_write_at(fh, (MPI_Offset)j * tsize, buf, (int)tsize,
                             MPI_BYTE, &st), "MPI_File_write_at");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (j = 0; j < count; j++) {
        memset(rbuf, 0, tsize);
        ck(MPI_File_read_at(fh, (MPI_Offset)j * tsize, rbuf, (int)tsize,
                            MPI_BYTE, &st), "MPI_File_read_at");
        if (MPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS || got != tsize)
            die("short read");
        for (i = 0; i < tsize; i++)
            if (rbuf[i] != pat(rank, j, i))
                die("read-back data mismatch");
    }
    ck(MPI_File_close(&fh), "MPI_File_close");

    free(buf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
