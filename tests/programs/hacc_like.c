/* hacc_like.c -- HACC-IO's checkpoint in its shared-file mode (GenericIO over MPI-IO).
 *
 * usage: hacc_like OUTDIR [NP_PER_RANK [job-open]]   (default 1000 particles a rank)
 *
 * One shared file OUTDIR/hacc.gio: a header of H = 65536 bytes at 0, then the
 * 9 variables of every particle, each variable a block of all ranks' values in
 * rank order: xx, yy, zz, vx, vy, vz, phi (float, 4 B), pid (int64, 8 B), mask
 * (uint16, 2 B).  With P ranks and n particles a rank, variable v of rank r is
 * at  H + P*n*(size of the variables before v) + r*n*size(v).
 *
 * write: MPI_Gather of each rank's count to rank 0, MPI_Scatter of each
 *        rank's start back; rank 0 alone opens the file (MPI_COMM_SELF),
 *        writes the header (MPI_File_write_at, H bytes at 0) and closes it;
 *        MPI_Barrier; all ranks open it (MPI_COMM_WORLD), each writes its 9
 *        variables with MPI_File_write_at, in that order; MPI_File_close.
 *        (GenericIO's order: rank 0's header through its own open first.)
 * read:  rank 0 alone opens the file (MPI_COMM_SELF), reads the header
 *        (MPI_File_read_at, H bytes at 0) and closes it; MPI_Bcast of the
 *        header's first 8 bytes; all ranks open it (MPI_COMM_WORLD), each reads
 *        its 9 variables with MPI_File_read_at and checks them; MPI_File_close.
 * job-open: rank 0 writes and reads the header through the job's open
 * (MPI_COMM_WORLD) instead of one of its own, and hands it out after the
 * read: write: all open; rank 0 writes the header; 10 MPI_Bcast of a
 * parameter; all write their variables.  read: all open; rank 0 reads the
 * header; 10 MPI_Bcast; all read their variables.
 * Content: byte k of variable v of rank r is (r*7 + v*13 + k) % 251; the
 * header's byte k is k % 251.  Any error or mismatch aborts.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H 65536
#define NVAR 9

static const int VSIZE[NVAR] = {4, 4, 4, 4, 4, 4, 4, 8, 2};

static void die(const char *msg)
{
    fprintf(stderr, "hacc_like: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_header(const unsigned char *got)
{
    for (long k = 0; k < H; k++)
        if (got[k] != (unsigned char)(k % 251))
            die("header verify");
}

/* rank 0 hands out what the header says: 10 parameters, one MPI_Bcast each */
static void hand_out(long value)
{
    for (int i = 0; i < 10; i++) {
        long x = value + i;
        MPI_Bcast(&x, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int rank, np;
    char path[4096];
    MPI_File fh;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2)
        die("usage: hacc_like OUTDIR [NP_PER_RANK [job-open]]");
    long n = argc > 2 ? atol(argv[2]) : 1000;
    int job_open = argc > 3 && !strcmp(argv[3], "job-open");
    snprintf(path, sizeof path, "%s/hacc.gio", argv[1]);
    unsigned char *buf = malloc(8 * n), *got = malloc(H > 8 * n ? H : 8 * n);
    if (!buf || !got)
        die("out of memory");
    MPI_Offset where[NVAR], at = H;
    for (int v = 0; v < NVAR; v++) {
        where[v] = at + (MPI_Offset)rank * n * VSIZE[v];
        at += (MPI_Offset)np * n * VSIZE[v];
    }

    /* the checkpoint */
    long *counts = malloc(np * sizeof *counts), start = 0;
    unsigned char *hdr = malloc(H);
    for (long k = 0; k < H; k++)
        hdr[k] = (unsigned char)(k % 251);
    MPI_Gather(&n, 1, MPI_LONG, counts, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Scatter(counts, 1, MPI_LONG, &start, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0 && !job_open) {
        MPI_File one;
        if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &one) ||
            MPI_File_write_at(one, 0, hdr, H, MPI_BYTE, MPI_STATUS_IGNORE) || MPI_File_close(&one))
            die("header write");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh))
        die("open for writing");
    if (job_open) {
        if (rank == 0 && MPI_File_write_at(fh, 0, hdr, H, MPI_BYTE, MPI_STATUS_IGNORE))
            die("header write");
        hand_out(counts[0]);
    }
    for (int v = 0; v < NVAR; v++) {
        long len = n * VSIZE[v];
        for (long k = 0; k < len; k++)
            buf[k] = (unsigned char)((rank * 7 + v * 13 + k) % 251);
        if (MPI_File_write_at(fh, where[v], buf, (int)len, MPI_BYTE, MPI_STATUS_IGNORE))
            die("write");
    }
    if (MPI_File_close(&fh))
        die("close");

    /* the restart */
    long long first = 0;
    if (rank == 0 && !job_open) {
        MPI_File one;
        if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &one) ||
            MPI_File_read_at(one, 0, got, H, MPI_BYTE, MPI_STATUS_IGNORE) || MPI_File_close(&one))
            die("header read");
        check_header(got);
        memcpy(&first, got, sizeof first);
    }
    if (!job_open)
        MPI_Bcast(&first, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh))
        die("open for reading");
    if (job_open) {
        if (rank == 0) {
            if (MPI_File_read_at(fh, 0, got, H, MPI_BYTE, MPI_STATUS_IGNORE))
                die("header read");
            check_header(got);
        }
        hand_out(1000);
    }
    for (int v = 0; v < NVAR; v++) {
        long len = n * VSIZE[v];
        if (MPI_File_read_at(fh, where[v], got, (int)len, MPI_BYTE, MPI_STATUS_IGNORE))
            die("read");
        for (long k = 0; k < len; k++)
            if (got[k] != (unsigned char)((rank * 7 + v * 13 + k) % 251))
                die("verify");
    }
    MPI_File_close(&fh);
    free(buf);
    free(got);
    free(counts);
    free(hdr);
    MPI_Finalize();
    return 0;
}
