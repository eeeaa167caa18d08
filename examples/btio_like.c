/* btio_like.c -- a small BT-IO-like MPI-IO program.
 *
 * A global NX x NY x NZ array of cells, each cell 5 doubles (40 bytes), is
 * block-decomposed over the ranks with MPI_Dims_create(nprocs, 3, dims):
 * dims[0] splits X, dims[1] splits Y, dims[2] splits Z, and rank r has
 * coordinates (r / (dims[1]*dims[2]), (r / dims[2]) % dims[1], r % dims[2])
 * (row-major, as MPI_Cart_create would number them; no Cart call is made).
 * Every dimension must be divisible by its dims[] entry.
 *
 *   open "btio.dat" (CREATE|RDWR, MPI_COMM_WORLD)
 *   set_view(disp 0, etype = contiguous(5, MPI_DOUBLE),
 *            filetype = subarray({NX,NY,NZ}, local block, MPI_ORDER_C))
 *   for s in 0..NSTEPS-1:
 *       10 x MPI_Sendrecv (ring: send right, receive from left) + compute
 *       MPI_File_write_at_all(offset = s*local_cells etypes, local_cells cells)
 *   for s in 0..NSTEPS-1:
 *       (s > 0: 1 x MPI_Allreduce)
 *       MPI_File_read_at_all(offset = s*local_cells etypes) and verify
 *   close
 *
 * Step s occupies file bytes [s*G, (s+1)*G) with G = NX*NY*NZ*40, holding
 * the whole global array in C order (Z fastest).  Every double of cell
 * (gx,gy,gz), component c (0..4), at step s equals
 *     s*1e6 + gx*10000 + gy*100 + gz + c*0.1
 *
 * usage: btio_like OUTDIR [NX NY NZ [NSTEPS]]   (defaults 8 8 8 5)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCOMP 5
#define NRING 10

static void die(const char *msg)
{
    fprintf(stderr, "btio_like: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static double cellval(int s, int gx, int gy, int gz, int c)
{
    return s * 1e6 + gx * 10000.0 + gy * 100.0 + gz + c * 0.1;
}

int main(int argc, char **argv)
{
    int rank, nprocs, s, k, x, y, z, c;
    int gsz[3] = {8, 8, 8}, dims[3] = {0, 0, 0}, lsz[3], start[3], coord[3];
    int nsteps = 5;
    long local_cells;
    char path[4096];
    double *buf, *rbuf;
    MPI_Datatype celltype, filetype;
    MPI_File fh;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2)
        die("usage: btio_like OUTDIR [NX NY NZ [NSTEPS]]");
    if (argc >= 5)
        for (k = 0; k < 3; k++)
            gsz[k] = atoi(argv[2 + k]);
    if (argc >= 6)
        nsteps = atoi(argv[5]);
    if (gsz[0] < 1 || gsz[1] < 1 || gsz[2] < 1 || nsteps < 1)
        die("bad sizes");
    snprintf(path, sizeof path, "%s/btio.dat", argv[1]);

    MPI_Dims_create(nprocs, 3, dims);
    coord[0] = rank / (dims[1] * dims[2]);
    coord[1] = (rank / dims[2]) % dims[1];
    coord[2] = rank % dims[2];
    for (k = 0; k < 3; k++) {
        if (gsz[k] % dims[k] != 0)
            die("global size not divisible by MPI_Dims_create result");
        lsz[k] = gsz[k] / dims[k];
        start[k] = coord[k] * lsz[k];
    }
    local_cells = (long)lsz[0] * lsz[1] * lsz[2];

    MPI_Type_contiguous(NCOMP, MPI_DOUBLE, &celltype);
    MPI_Type_commit(&celltype);
    MPI_Type_create_subarray(3, gsz, lsz, start, MPI_ORDER_C, celltype,
                             &filetype);
    MPI_Type_commit(&filetype);

    buf = malloc(local_cells * NCOMP * sizeof(double));
    rbuf = malloc(local_cells * NCOMP * sizeof(double));
    if (!buf || !rbuf)
        die("out of memory");

    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open failed");
    if (MPI_File_set_view(fh, 0, celltype, filetype, "native",
                          MPI_INFO_NULL) != MPI_SUCCESS)
        die("MPI_File_set_view failed");

    for (s = 0; s < nsteps; s++) {
        /* "communication": a token goes NRING hops around the ring */
        int token = rank, left = (rank - 1 + nprocs) % nprocs;
        int right = (rank + 1) % nprocs;
        for (k = 0; k < NRING; k++) {
            int in = -1;
            MPI_Sendrecv(&token, 1, MPI_INT, right, s, &in, 1, MPI_INT, left,
                         s, MPI_COMM_WORLD, &st);
            token = in;
        }
        if (token != ((rank - NRING) % nprocs + nprocs) % nprocs)
            die("ring token mismatch");

        /* "computation": fill the local block (C order, Z fastest) */
        k = 0;
        for (x = 0; x < lsz[0]; x++)
            for (y = 0; y < lsz[1]; y++)
                for (z = 0; z < lsz[2]; z++)
                    for (c = 0; c < NCOMP; c++)
                        buf[k++] = cellval(s, start[0] + x, start[1] + y,
                                           start[2] + z, c);

        if (MPI_File_write_at_all(fh, (MPI_Offset)s * local_cells, buf,
                                  (int)local_cells, celltype,
                                  &st) != MPI_SUCCESS)
            die("MPI_File_write_at_all failed");
    }

    for (s = 0; s < nsteps; s++) {
        if (s > 0) {
            int one = 1, n = 0;
            MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            if (n != nprocs)
                die("Allreduce result mismatch");
        }
        memset(rbuf, 0, local_cells * NCOMP * sizeof(double));
        if (MPI_File_read_at_all(fh, (MPI_Offset)s * local_cells, rbuf,
                                 (int)local_cells, celltype,
                                 &st) != MPI_SUCCESS)
            die("MPI_File_read_at_all failed");
        k = 0;
        for (x = 0; x < lsz[0]; x++)
            for (y = 0; y < lsz[1]; y++)
                for (z = 0; z < lsz[2]; z++)
                    for (c = 0; c < NCOMP; c++, k++)
                        if (rbuf[k] != cellval(s, start[0] + x, start[1] + y,
                                               start[2] + z, c))
                            die("read-back data mismatch");
    }

    if (MPI_File_close(&fh) != MPI_SUCCESS)
        die("MPI_File_close failed");
    MPI_Type_free(&filetype);
    MPI_Type_free(&celltype);
    free(buf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
