/* relative_paths.c -- files named by relative paths, for IOMODEL_EXCLUDE and
 * IOMODEL_INCLUDE given as relative prefixes (taken from the directory the
 * run starts in).
 *
 * usage: relative_paths OUTDIR   (run with OUTDIR as the current directory)
 *
 * Each rank r, every path relative, every file through open/write/close:
 *   write keep/r.dat     100 bytes
 *   write skip/r.dat     200 bytes
 *   chdir("skip")
 *   write later.r.dat    300 bytes  (OUTDIR/skip/later.r.dat)
 * then checks that OUTDIR/skip/later.r.dat holds 300 bytes (stat).  Byte j of
 * every file is j % 251.  Any error aborts.
 */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what)
{
    perror(what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void write_file(const char *path, int n)
{
    unsigned char buf[300];
    for (int j = 0; j < n; j++) buf[j] = (unsigned char)(j % 251);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) die(path);
    if (write(fd, buf, (size_t)n) != n) die("relative_paths: write");
    if (close(fd) != 0) die("relative_paths: close");
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
        fprintf(stderr, "usage: relative_paths OUTDIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if ((mkdir("keep", 0755) != 0 && errno != EEXIST) || (mkdir("skip", 0755) != 0 && errno != EEXIST))
        die("relative_paths: mkdir");
    char path[64];
    snprintf(path, sizeof path, "keep/%d.dat", rank);
    write_file(path, 100);
    snprintf(path, sizeof path, "skip/%d.dat", rank);
    write_file(path, 200);
    if (chdir("skip") != 0) die("relative_paths: chdir");
    snprintf(path, sizeof path, "later.%d.dat", rank);
    write_file(path, 300);
    char check[4096];
    struct stat st;
    snprintf(check, sizeof check, "%s/skip/later.%d.dat", argv[1], rank);
    if (stat(check, &st) != 0 || st.st_size != 300) die("relative_paths: later file not in OUTDIR/skip");
    MPI_Finalize();
    return 0;
}
