/* rank0_writer.c -- a POP-like history writer: every few steps the ranks
 * gather their part of a field to rank 0, which writes it alone with stdio.
 *
 * Each rank has N doubles (argv[2]); S history steps (argv[3]).  At each step
 * the ranks compute (a stencil over their part), MPI_Gather the parts to rank
 * 0, and rank 0 writes OUTDIR/hist.SSSS.dat (SSSS: the step, four digits):
 *
 *   fopen("w"); fwrite(header, 64, 1); fwrite(field, 8, nprocs*N); fclose
 *
 * so each file is 64 + 8*nprocs*N bytes.  Then rank 0 reads the last file
 * back (fopen("r"), fread(header, 64, 1), fread(field, 8, nprocs*N), fclose).
 * Byte j of step s's field holds (s*13 + j) % 251 once gathered.
 *
 * With a fourth argument "posix", rank 0 makes the same writes and reads with
 * POSIX calls instead: open(O_CREAT|O_WRONLY|O_TRUNC), write(header, 64),
 * write(field, 8*nprocs*N), close; then open(O_RDONLY), read 64, read the
 * field, close (Darshan's DXT traces these, not stdio's).
 *
 * usage: rank0_writer OUTDIR N S [posix]
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* write (or read) the header, then the field, of one file: stdio or POSIX */
static int move(const char *path, int writing, int posix, unsigned char *header, double *field, size_t n)
{
    if (posix) {
        int fd = writing ? open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644) : open(path, O_RDONLY);
        if (fd < 0)
            return -1;
        ssize_t a = writing ? write(fd, header, 64) : read(fd, header, 64);
        ssize_t b = writing ? write(fd, field, 8 * n) : read(fd, field, 8 * n);
        return (close(fd) != 0 || a != 64 || b != (ssize_t)(8 * n)) ? -1 : 0;
    }
    FILE *f = fopen(path, writing ? "w" : "r");
    if (!f)
        return -1;
    size_t a = writing ? fwrite(header, 64, 1, f) : fread(header, 64, 1, f);
    size_t b = writing ? fwrite(field, sizeof(double), n, f) : fread(field, sizeof(double), n, f);
    return (fclose(f) != 0 || a != 1 || b != n) ? -1 : 0;
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 4) {
        fprintf(stderr, "usage: rank0_writer OUTDIR N S [posix]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = atol(argv[2]);
    int steps = atoi(argv[3]);
    int posix = argc > 4 && !strcmp(argv[4], "posix");
    double *part = malloc(sizeof(double) * (size_t)n);
    double *field = rank == 0 ? malloc(sizeof(double) * (size_t)(n * nprocs)) : NULL;
    unsigned char header[64];
    char path[4096];
    for (int s = 0; s < steps; s++) {
        unsigned char *p = (unsigned char *)part;
        for (long j = 0; j < n * 8; j++) p[j] = (unsigned char)((s * 13 + rank * n * 8 + j) % 251);
        volatile double x = 0;                /* a step of computing */
        for (long it = 0; it < 20 * n; it++) x += 1e-9 * (double)it;
        MPI_Gather(part, (int)n, MPI_DOUBLE, field, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            snprintf(path, sizeof path, "%s/hist.%04d.dat", argv[1], s);
            memset(header, 0, sizeof header);
            snprintf((char *)header, sizeof header, "history step %d of %d ranks", s, nprocs);
            if (move(path, 1, posix, header, field, (size_t)(n * nprocs))) {
                perror("rank0_writer: write");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
    if (rank == 0 && move(path, 0, posix, header, field, (size_t)(n * nprocs))) {
        perror("rank0_writer: read");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(part);
    free(field);
    MPI_Finalize();
    return 0;
}
