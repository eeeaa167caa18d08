/* failed_opens.c -- opens that fail, through POSIX, stdio and MPI-IO, as a
 * code that looks for an optional input file does (NAS BT-IO's epio checks
 * for its files with open before it writes them).
 *
 * usage: failed_opens OUTDIR [mpi]
 *
 * Each rank r, none of the files existing:
 *   open(OUTDIR/none.r, O_RDONLY)                     fails: ENOENT
 *   fopen(OUTDIR/none.r, "r")                         fails: NULL
 * and with "mpi":
 *   MPI_File_open(MPI_COMM_WORLD, OUTDIR/none.dat, MPI_MODE_RDONLY)   returns an error
 *     (files' default error handler: MPI_ERRORS_RETURN)
 * Then each writes 100 bytes to OUTDIR/out.r with open/write/close.  A call
 * that succeeds where it should fail aborts.
 */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void die(const char *what)
{
    fprintf(stderr, "failed_opens: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
        fprintf(stderr, "usage: failed_opens OUTDIR [mpi]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096], buf[100];
    snprintf(path, sizeof path, "%s/none.%d", argv[1], rank);
    if (open(path, O_RDONLY) >= 0 || errno != ENOENT) die("open of a missing file");
    if (fopen(path, "r") != NULL) die("fopen of a missing file");
    if (argc > 2 && strcmp(argv[2], "mpi") == 0) {
        MPI_File fh;
        snprintf(path, sizeof path, "%s/none.dat", argv[1]);
        if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) == MPI_SUCCESS)
            die("MPI_File_open of a missing file");
    }
    snprintf(path, sizeof path, "%s/out.%d", argv[1], rank);
    memset(buf, 'a' + rank, sizeof buf);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t)sizeof buf || close(fd) != 0) die("out");
    MPI_Finalize();
    return 0;
}
