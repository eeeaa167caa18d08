/* solver_like.c -- a solver that computes between its checkpoints, as NAS BT
 * does: an ADI (alternating direction implicit) sweep of a 3-D heat equation
 * over each rank's subdomain at every time step, a dump through MPI-IO every
 * STEPS steps, and the dumps read back at the end (BT-IO's verification).
 *
 * A global NX x NY x NZ grid of cells, each cell 5 doubles (40 bytes, BT's
 * five unknowns), stored in the file in C order (Z fastest).  The ranks split
 * Z into slabs: rank r holds z in [r*NZ/np, (r+1)*NZ/np) (NZ divisible by np),
 * all x and y, periodic in z (a ring of ranks).  A time step:
 *     2 x MPI_Sendrecv    the slab's two z faces to the ring neighbours
 *                         (its ghost planes)
 *     x, y and z sweeps   for every line of the subdomain along that axis and
 *                         each of the 5 components, a tridiagonal solve
 *                         (-r, 1 + 2r, -r; Thomas' algorithm), the z lines
 *                         using the ghost planes as their boundary
 *     1 x MPI_Allreduce   the step's change (sum of squares), as a solver
 *                         checks its residual
 * so 3 communication calls a step and 3 * STEPS between dumps.  Dump d (d =
 * 0..DUMPS-1) writes the whole grid at file bytes [d * G, (d + 1) * G), G =
 * NX*NY*NZ*40, with one MPI_File_write_at_all a rank through a subarray view
 * (etype 5 doubles; the offset d * NX*NY*NZ/np etypes, a rank's cells): NX*NY
 * pieces of (NZ/np)*40 bytes a rank, the first at r*(NZ/np)*40 past d * G,
 * (NX*NY*NZ/np)*40 bytes in all.
 * After the last step, the DUMPS dumps are read back with one
 * MPI_File_read_at_all each, one after another with nothing between them,
 * and each is checked against the checksum taken when it was written (the
 * same doubles summed in the same order: exact).
 *
 * A step costs about 3 * 5 * 8 flops a cell plus the memory traffic of three
 * passes: 64^3 cells on 2 ranks, about 20 to 40 ms a step on one core of a
 * current server, so STEPS 10 puts a few hundred milliseconds between dumps.
 *
 * usage: solver_like OUTDIR [NX NY NZ [DUMPS [STEPS]]]   (defaults 32 32 32 5 10)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NC 5               /* doubles a cell */
#define R 0.1              /* diffusion number of the implicit step */

static int nx, ny, nz, nzl;   /* the global grid, the slab's z extent */
static double *u;              /* [nx][ny][nzl + 2][NC]: ghost planes at z = 0 and nzl + 1 */

#define U(x, y, z, c) u[((((size_t)(x) * ny + (y)) * (nzl + 2) + (z)) * NC) + (c)]

static void die(const char *msg)
{
    fprintf(stderr, "solver_like: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Thomas' algorithm for (-R, 1 + 2R, -R) x = d on n unknowns, d overwritten by x;
 * lo and hi are the boundary values beyond the line's two ends. */
static void tridiag(double *d, int n, size_t stride, double lo, double hi, double *cp)
{
    double b = 1 + 2 * R, m;
    d[0] += R * lo;
    d[(size_t)(n - 1) * stride] += R * hi;
    cp[0] = -R / b;
    d[0] /= b;
    for (int i = 1; i < n; i++) {
        m = b + R * cp[i - 1];
        cp[i] = -R / m;
        d[(size_t)i * stride] = (d[(size_t)i * stride] + R * d[(size_t)(i - 1) * stride]) / m;
    }
    for (int i = n - 2; i >= 0; i--)
        d[(size_t)i * stride] -= cp[i] * d[(size_t)(i + 1) * stride];
}

/* The slab's z faces to its ring neighbours, into their ghost planes. */
static void exchange_faces(int rank, int np, double *sbuf, double *rbuf)
{
    int up = (rank + 1) % np, down = (rank + np - 1) % np;
    size_t plane = (size_t)nx * ny * NC;
    for (int side = 0; side < 2; side++) {
        int zs = side ? nzl : 1, zr = side ? 0 : nzl + 1;     /* send top, fill bottom ghost; and back */
        for (int x = 0; x < nx; x++)
            for (int y = 0; y < ny; y++)
                memcpy(sbuf + ((size_t)x * ny + y) * NC, &U(x, y, zs, 0), NC * sizeof(double));
        MPI_Sendrecv(sbuf, (int)plane, MPI_DOUBLE, side ? up : down, side,
                     rbuf, (int)plane, MPI_DOUBLE, side ? down : up, side, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int x = 0; x < nx; x++)
            for (int y = 0; y < ny; y++)
                memcpy(&U(x, y, zr, 0), rbuf + ((size_t)x * ny + y) * NC, NC * sizeof(double));
    }
}

/* One ADI step over the slab: x, y, z sweeps; returns the local sum of squared changes. */
static double adi_step(double *line, double *cp)
{
    double change = 0;
    for (int c = 0; c < NC; c++) {
        for (int y = 0; y < ny; y++)                       /* x lines: insulated ends */
            for (int z = 1; z <= nzl; z++) {
                for (int x = 0; x < nx; x++)
                    line[x] = U(x, y, z, c);
                tridiag(line, nx, 1, line[0], line[nx - 1], cp);
                for (int x = 0; x < nx; x++)
                    U(x, y, z, c) = line[x];
            }
        for (int x = 0; x < nx; x++)                       /* y lines */
            for (int z = 1; z <= nzl; z++) {
                for (int y = 0; y < ny; y++)
                    line[y] = U(x, y, z, c);
                tridiag(line, ny, 1, line[0], line[ny - 1], cp);
                for (int y = 0; y < ny; y++)
                    U(x, y, z, c) = line[y];
            }
        for (int x = 0; x < nx; x++)                       /* z lines: the ghosts bound them */
            for (int y = 0; y < ny; y++) {
                for (int z = 1; z <= nzl; z++)
                    line[z - 1] = U(x, y, z, c);
                tridiag(line, nzl, 1, U(x, y, 0, c), U(x, y, nzl + 1, c), cp);
                for (int z = 1; z <= nzl; z++) {
                    double d = line[z - 1] - U(x, y, z, c);
                    change += d * d;
                    U(x, y, z, c) = line[z - 1];
                }
            }
    }
    return change;
}

/* The slab's cells without ghosts, in file order, into out; their sum. */
static double pack(double *out)
{
    double sum = 0;
    size_t k = 0;
    for (int x = 0; x < nx; x++)
        for (int y = 0; y < ny; y++)
            for (int z = 1; z <= nzl; z++)
                for (int c = 0; c < NC; c++) {
                    out[k] = U(x, y, z, c);
                    sum += out[k++];
                }
    return sum;
}

int main(int argc, char **argv)
{
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: solver_like OUTDIR [NX NY NZ [DUMPS [STEPS]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    nx = argc > 2 ? atoi(argv[2]) : 32;
    ny = argc > 3 ? atoi(argv[3]) : 32;
    nz = argc > 4 ? atoi(argv[4]) : 32;
    int dumps = argc > 5 ? atoi(argv[5]) : 5, steps = argc > 6 ? atoi(argv[6]) : 10;
    if (nx < 2 || ny < 2 || nz < np || nz % np || dumps < 1 || steps < 1)
        die("NX, NY >= 2, NZ a multiple of the ranks, DUMPS and STEPS >= 1");
    nzl = nz / np;
    int z0 = rank * nzl;
    size_t cells = (size_t)nx * ny * nzl, plane = (size_t)nx * ny * NC;
    u = malloc((size_t)nx * ny * (nzl + 2) * NC * sizeof(double));
    double *out = malloc(cells * NC * sizeof(double)), *back = malloc(cells * NC * sizeof(double));
    double *sbuf = malloc(plane * sizeof(double)), *rbuf = malloc(plane * sizeof(double));
    int longest = nx > ny ? nx : ny;
    longest = longest > nzl ? longest : nzl;
    double *line = malloc(longest * sizeof(double)), *cp = malloc(longest * sizeof(double));
    double *sums = malloc(dumps * sizeof(double));
    if (!u || !out || !back || !sbuf || !rbuf || !line || !cp || !sums)
        die("out of memory");
    for (int x = 0; x < nx; x++)                /* a deterministic lumpy start */
        for (int y = 0; y < ny; y++)
            for (int z = 1; z <= nzl; z++)
                for (int c = 0; c < NC; c++)
                    U(x, y, z, c) = ((x * 7 + y * 13 + (z0 + z - 1) * 17) % 101) / 101.0 + c;

    char path[4096];
    snprintf(path, sizeof path, "%s/solver.dat", argv[1]);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("cannot open OUTDIR/solver.dat");
    MPI_Datatype cell, slab;
    int gsize[3] = {nx, ny, nz}, lsize[3] = {nx, ny, nzl}, start[3] = {0, 0, z0};
    MPI_Type_contiguous(NC, MPI_DOUBLE, &cell);
    MPI_Type_commit(&cell);
    MPI_Type_create_subarray(3, gsize, lsize, start, MPI_ORDER_C, cell, &slab);
    MPI_Type_commit(&slab);
    MPI_File_set_view(fh, 0, cell, slab, "native", MPI_INFO_NULL);
    MPI_Offset mine = (MPI_Offset)cells;     /* a dump, in etypes of the view: the rank's cells */

    for (int d = 0; d < dumps; d++) {
        for (int s = 0; s < steps; s++) {
            exchange_faces(rank, np, sbuf, rbuf);
            double change = adi_step(line, cp), all;
            MPI_Allreduce(&change, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
        sums[d] = pack(out);
        if (MPI_File_write_at_all(fh, d * mine, out, (int)cells, cell, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            die("write failed");
    }
    int bad = 0;
    for (int d = 0; d < dumps; d++) {           /* the restart's check: every dump back */
        if (MPI_File_read_at_all(fh, d * mine, back, (int)cells, cell, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            die("read failed");
        double sum = 0;
        for (size_t k = 0; k < cells * NC; k++)
            sum += back[k];
        bad += sum != sums[d];
    }
    MPI_File_close(&fh);
    if (bad)
        fprintf(stderr, "solver_like: rank %d: %d dumps read back differ\n", rank, bad);
    MPI_Type_free(&slab);
    MPI_Type_free(&cell);
    free(u); free(out); free(back); free(sbuf); free(rbuf); free(line); free(cp); free(sums);
    MPI_Finalize();
    return bad != 0;
}
