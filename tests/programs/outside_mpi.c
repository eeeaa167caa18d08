/* outside_mpi.c -- I/O before MPI_Init and after MPI_Finalize: a program that
 * reads its input deck before starting MPI and writes a summary after it.
 *
 *   before MPI_Init: open(OUTDIR/deck.RANKLESS.in...) -- no rank yet, so the
 *     deck is per process id: write(deck, 256 B) then lseek(0) and read(256 B),
 *     close, unlink
 *   MPI_Init; MPI_File_open(COMM_WORLD, OUTDIR/mid.dat); write_at(4096 at rank*4096);
 *     MPI_File_close; MPI_Finalize
 *   after MPI_Finalize: open(OUTDIR/summary.RANK.txt, O_CREAT|O_WRONLY|O_TRUNC),
 *     write(512 B), close
 *
 * usage: outside_mpi OUTDIR
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: outside_mpi OUTDIR\n");
        return 2;
    }
    char path[4096], deck[256], back[256];
    snprintf(path, sizeof path, "%s/deck.%d.in", argv[1], (int)getpid());
    memset(deck, 'd', sizeof deck);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0 || write(fd, deck, sizeof deck) != (ssize_t)sizeof deck || lseek(fd, 0, SEEK_SET) != 0 ||
        read(fd, back, sizeof back) != (ssize_t)sizeof back || memcmp(deck, back, sizeof deck)) {
        perror("outside_mpi: deck");
        return 1;
    }
    close(fd);
    unlink(path);
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char buf[4096];
    memset(buf, 'm', sizeof buf);
    MPI_File fh;
    snprintf(path, sizeof path, "%s/mid.dat", argv[1]);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_write_at(fh, (MPI_Offset)rank * 4096, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_Finalize();
    snprintf(path, sizeof path, "%s/summary.%d.txt", argv[1], rank);
    char summary[512];
    memset(summary, 's', sizeof summary);
    fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || write(fd, summary, sizeof summary) != (ssize_t)sizeof summary) {
        perror("outside_mpi: summary");
        return 1;
    }
    close(fd);
    return 0;
}
