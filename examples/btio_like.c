/* btio_like.c -- a small NAS BT-IO-like MPI-IO program.
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
 *   for s in 0..NSTEPS-1:                      (NAS BT-IO: 40 writes)
 *       WR_INTERVAL = 5 "time steps", each making 24 MPI_Sendrecv:
 *           copy_faces: 6 (shifts +1, -1, +2, -2, +3, -3 around the ring
 *                          of ranks, mod nprocs)
 *           x_solve, y_solve, z_solve: 6 each (3 pipeline stages forward,
 *                          shift +1, then 3 back, shift -1)
 *       so exactly 5 * 24 = 120 communication calls (all MPI_Sendrecv)
 *       before each write, and none elsewhere in the write loop;
 *       compute (fill the local block)
 *       MPI_File_write_at_all(offset = s*local_cells etypes, local_cells cells)
 *   for s in 0..NSTEPS-1:
 *       (s > 0: exactly 1 x MPI_Allreduce)
 *       MPI_File_read_at_all(offset = s*local_cells etypes) and verify
 *   close
 *
 * Step s occupies file bytes [s*G, (s+1)*G) with G = NX*NY*NZ*40, holding
 * the whole global array in C order (Z fastest).  Every double of cell
 * (gx,gy,gz), component c (0..4), at step s equals
 *     s*1e6 + gx*10000 + gy*100 + gz + c*0.1
 * Every received message is checked (it carries the sender's rank, the
 * step and the call index), and every read-back value too; any mismatch
 * aborts.
 *
 * usage: btio_like OUTDIR [NX NY NZ [NSTEPS]]   (defaults 8 8 8 40)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCOMP 5
#define WR_INTERVAL 5      /* time steps between writes (NAS BT-IO: 5) */
#define COMM_PER_STEP 24   /* MPI_Sendrecv per time step */

static void die(const char *msg)
{
    fprintf(stderr, "btio_like: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* One MPI_Sendrecv: send {rank, step, k} to rank + shift, receive the same
 * from rank - shift, and check what arrived. */
static void exchange(int rank, int nprocs, int shift, int step, int k)
{
    int out[3], in[3] = {-1, -1, -1};
    int to = ((rank + shift) % nprocs + nprocs) % nprocs;
    int from = ((rank - shift) % nprocs + nprocs) % nprocs;
    MPI_Status st;
    out[0] = rank;
    out[1] = step;
    out[2] = k;
    MPI_Sendrecv(out, 3, MPI_INT, to, k, in, 3, MPI_INT, from, k,
                 MPI_COMM_WORLD, &st);
    if (in[0] != from || in[1] != step || in[2] != k)
        die("message mismatch");
}

/* The communication of one BT time step: exactly COMM_PER_STEP calls. */
static void time_step(int rank, int nprocs, int step)
{
    static const int face_shift[6] = {1, -1, 2, -2, 3, -3};
    int k = 0, i, solve;
    for (i = 0; i < 6; i++)                 /* copy_faces */
        exchange(rank, nprocs, face_shift[i], step, k++);
    for (solve = 0; solve < 3; solve++) {   /* x_solve, y_solve, z_solve */
        for (i = 0; i < 3; i++)
            exchange(rank, nprocs, 1, step, k++);
        for (i = 0; i < 3; i++)
            exchange(rank, nprocs, -1, step, k++);
    }
    if (k != COMM_PER_STEP)
        die("wrong number of communication calls");
}

static double cellval(int s, int gx, int gy, int gz, int c)
{
    return s * 1e6 + gx * 10000.0 + gy * 100.0 + gz + c * 0.1;
}

int main(int argc, char **argv)
{
    int rank, nprocs, s, k, x, y, z, c;
    int gsz[3] = {8, 8, 8}, dims[3] = {0, 0, 0}, lsz[3], start[3], coord[3];
    int nsteps = 40;
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
        /* "communication": WR_INTERVAL time steps of COMM_PER_STEP calls */
        for (k = 0; k < WR_INTERVAL; k++)
            time_step(rank, nprocs, s * WR_INTERVAL + k);

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
