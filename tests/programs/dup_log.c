/* dup_log.c -- a rank's log written through a duplicated descriptor, as codes
 * that redirect a stream with dup2 do (the new descriptor shares the old one's
 * file position).
 *
 * usage: dup_log OUTDIR
 *
 * Each rank r:
 *   fd = open(OUTDIR/log.r, O_CREAT|O_WRONLY|O_TRUNC)
 *   write(fd, 100 bytes)                    at 0
 *   d = dup(fd);   write(d, 200 bytes)      at 100 (the shared position)
 *   e = dup2(fd, 100 + r);  write(e, 300 bytes)   at 300
 *   close(fd); write(d, 400 bytes)          at 600 (d still open)
 *   close(d); close(e)
 *   MPI_Barrier
 *   fd = open(same, O_RDONLY); e = dup3(fd, 200 + r, 0); read(e, 1000 bytes) at 0;
 *   close(fd); close(e)
 * File: 1000 bytes, byte j = (r + j) % 251, checked.  Any error aborts.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void die(const char *what)
{
    perror(what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int rank;
    unsigned char buf[1000], got[1000];
    char path[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 2)
        die("usage: dup_log OUTDIR");
    snprintf(path, sizeof path, "%s/log.%d", argv[1], rank);
    for (int j = 0; j < 1000; j++)
        buf[j] = (unsigned char)((rank + j) % 251);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buf, 100) != 100) die("open, write");
    int d = dup(fd);
    if (d < 0 || write(d, buf + 100, 200) != 200) die("dup, write");
    int e = dup2(fd, 100 + rank);
    if (e != 100 + rank || write(e, buf + 300, 300) != 300) die("dup2, write");
    if (close(fd) || write(d, buf + 600, 400) != 400) die("close, write");
    if (close(d) || close(e)) die("close");
    MPI_Barrier(MPI_COMM_WORLD);
    fd = open(path, O_RDONLY);
    e = fd < 0 ? -1 : dup3(fd, 200 + rank, 0);
    if (e != 200 + rank || read(e, got, 1000) != 1000 || memcmp(got, buf, 1000)) die("dup3, read");
    if (close(fd) || close(e)) die("close");
    MPI_Finalize();
    return 0;
}
