/* ior_cmd.c -- the calls IOR 4 makes for one command line, for the IOR round trip.
 *
 * usage: ior_cmd OUTDIR [-a MPIIO|POSIX] [-c] [-F] [-e] [-i N] [-D] [-s S] [-b B] [-t T] [-w] [-r] [-Z]
 *        [-X SEED]
 *        (sizes as IOR takes them: a number with an optional k, m or g suffix)
 *
 * What IOR's default (segmented, in-order) layout does, P processes, rank r:
 *   transfer j of segment i is at  i*P*B + r*B + j*T   in the shared file ior.dat,
 *                                  i*B + j*T           in ior.dat.<r as %08d> with -F,
 *   for i < S, j < B/T, segment by segment.
 *   -a MPIIO: MPI_File_open on MPI_COMM_WORLD (-F: MPI_COMM_SELF), each transfer
 *             one MPI_File_write_at (-c: MPI_File_write_at_all), MPI_File_close;
 *   -a POSIX: open(2), each transfer one pwrite(2), close(2); -c is refused.
 *   -w writes (content: byte k of transfer n of rank r is (r*7 + n*13 + k) % 251),
 *   then MPI_Barrier; -r reopens, reads every transfer back in the same order
 *   (MPI_File_read_at[_all] / pread) and checks it, then closes.  Both: the
 *   write, a barrier, the read, as IOR's -w -r does (the file is reopened).
 *   -Z (IOR's reorderTasksRandom): rank r reads what rank (r + o) % P wrote, o
 *   the first rand() % P after srand(r + SEED) (-X SEED, default 0), as IOR 4
 *   picks it; several ranks may read the same block.
 *   -e: after the writes, before the close, fsync(2) (-a POSIX) or
 *   MPI_File_sync (-a MPIIO), as IOR's -e does.  -i N: all of that N times
 *   (IOR's repetitions; the files are kept, as with IOR's -k).  -D: the files
 *   are deleted before each repetition after the first, as IOR without -k
 *   removes them after each: rank 0 deletes the shared file (-F: each rank
 *   its own), MPI_File_delete (-a MPIIO) or unlink(2) (-a POSIX), then
 *   MPI_Barrier.
 * Nothing else touches the files.  Any error or mismatch aborts.
 */
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die(const char *msg)
{
    fprintf(stderr, "ior_cmd: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static long long size_arg(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    switch (*end) {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    case '\0': break;
    default: die("bad size");
    }
    return v;
}

static void fill(unsigned char *b, long long n, int r, long long k)
{
    for (long long j = 0; j < n; j++)
        b[j] = (unsigned char)((r * 7 + k * 13 + j) % 251);
}

int main(int argc, char **argv)
{
    int rank, np, posix = 0, coll = 0, fpp = 0, wr = 0, rd = 0, sync = 0, shuffle = 0, seed = 0, del = 0;
    long long S = 1, reps = 1, B = 1 << 20, T = 256 << 10;
    char path[4096];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2)
        die("usage: ior_cmd OUTDIR [-a MPIIO|POSIX] [-c] [-F] [-e] [-i N] [-D] [-s S] [-b B] [-t T] [-w] [-r] "
            "[-Z] [-X SEED]");
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-a") && i + 1 < argc) posix = !strcmp(argv[++i], "POSIX");
        else if (!strcmp(a, "-c")) coll = 1;
        else if (!strcmp(a, "-F")) fpp = 1;
        else if (!strcmp(a, "-e")) sync = 1;
        else if (!strcmp(a, "-i") && i + 1 < argc) reps = size_arg(argv[++i]);
        else if (!strcmp(a, "-D")) del = 1;
        else if (!strcmp(a, "-w")) wr = 1;
        else if (!strcmp(a, "-r")) rd = 1;
        else if (!strcmp(a, "-Z")) shuffle = 1;
        else if (!strcmp(a, "-X") && i + 1 < argc) seed = atoi(argv[++i]);
        else if (!strcmp(a, "-s") && i + 1 < argc) S = size_arg(argv[++i]);
        else if (!strcmp(a, "-b") && i + 1 < argc) B = size_arg(argv[++i]);
        else if (!strcmp(a, "-t") && i + 1 < argc) T = size_arg(argv[++i]);
        else die("unknown option");
    }
    if (T <= 0 || B % T || reps < 1 || (posix && coll) || !(wr || rd))
        die("IOR would refuse these options");
    if (fpp)
        snprintf(path, sizeof path, "%s/ior.dat.%08d", argv[1], rank);
    else
        snprintf(path, sizeof path, "%s/ior.dat", argv[1]);
    unsigned char *buf = malloc(T), *want = malloc(T);
    if (!buf || !want)
        die("out of memory");
    long long per = B / T;
    int from = rank;                  /* whose data this rank reads back */
    if (shuffle) {
        srand((unsigned)(rank + seed));
        from = (rank + rand() % np) % np;
    }
    for (int pass = 0; pass < 2 * reps; pass++) {
        int writing = pass % 2 == 0;
        if (del && writing && pass > 0) {
            if ((fpp || rank == 0) &&
                (posix ? unlink(path) != 0 : MPI_File_delete(path, MPI_INFO_NULL) != MPI_SUCCESS))
                die("delete");
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if ((writing && !wr) || (!writing && !rd))
            continue;
        MPI_File fh = MPI_FILE_NULL;
        int fd = -1;
        if (posix) {
            fd = open(path, writing ? O_CREAT | O_WRONLY : O_RDONLY, 0644);
            if (fd < 0)
                die("open");
        } else if (MPI_File_open(fpp ? MPI_COMM_SELF : MPI_COMM_WORLD, path,
                                 writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY,
                                 MPI_INFO_NULL, &fh) != MPI_SUCCESS)
            die("MPI_File_open");
        for (long long i = 0; i < S; i++)
            for (long long j = 0; j < per; j++) {
                int who = writing ? rank : from;
                long long off = fpp ? i * B + j * T : i * np * B + who * B + j * T;
                long long n = i * per + j;
                fill(want, T, who, n);
                int ok;
                if (writing) {
                    if (posix)
                        ok = pwrite(fd, want, T, off) == T;
                    else if (coll)
                        ok = MPI_File_write_at_all(fh, off, want, (int)T, MPI_BYTE,
                                                   MPI_STATUS_IGNORE) == MPI_SUCCESS;
                    else
                        ok = MPI_File_write_at(fh, off, want, (int)T, MPI_BYTE,
                                               MPI_STATUS_IGNORE) == MPI_SUCCESS;
                } else {
                    if (posix)
                        ok = pread(fd, buf, T, off) == T;
                    else if (coll)
                        ok = MPI_File_read_at_all(fh, off, buf, (int)T, MPI_BYTE,
                                                  MPI_STATUS_IGNORE) == MPI_SUCCESS;
                    else
                        ok = MPI_File_read_at(fh, off, buf, (int)T, MPI_BYTE,
                                              MPI_STATUS_IGNORE) == MPI_SUCCESS;
                    ok = ok && !memcmp(buf, want, T);
                }
                if (!ok)
                    die(writing ? "write" : "read or verify");
            }
        if (writing && sync && (posix ? fsync(fd) != 0 : MPI_File_sync(fh) != MPI_SUCCESS))
            die("sync");
        if (posix ? close(fd) != 0 : MPI_File_close(&fh) != MPI_SUCCESS)
            die("close");
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(buf);
    free(want);
    MPI_Finalize();
    return 0;
}
