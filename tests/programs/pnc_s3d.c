/* pnc_s3d.c -- S3D-IO's checkpoints through PnetCDF (Debian's libpnetcdf-dev).
 *
 * usage: pnc_s3d OUTDIR blocking|nonblocking [N [CHECKPOINTS [record]]]
 *        (defaults: N = 16, 5 checkpoints; 4 ranks, a 2 x 2 x 1 process grid)
 *
 * As the S3D-IO benchmark: a global N x N x N grid split in x and y over the
 * 2 x 2 process grid (rank r: x0 = (r % 2)*N/2, y0 = (r / 2)*N/2, all z); each
 * checkpoint is one new file OUTDIR/s3d.<i>.nc (CDF-5) with four fixed-size
 * double variables, in this order:
 *     yspecies[z][y][x][11], u[z][y][x][3], pressure[z][y][x], temperature[z][y][x]
 * Between checkpoints the solver computes (10 MPI_Allreduce).  Each process
 * writes its subarray (start {0, y0, x0[, 0]}, count {N, N/2, N/2[, k]}) of
 * every variable:
 *     blocking:    ncmpi_put_vara_double_all, once per variable (4 calls);
 *     nonblocking: ncmpi_iput_vara_double per variable, then one ncmpi_wait_all.
 * A process's part of a variable with k values a point: N*(N/2)*(N/2)*k*8 B,
 * in N*(N/2) pieces of (N/2)*k*8 B.  At N = 16: 90112 + 24576 + 8192 + 8192 =
 * 131072 B a process and a checkpoint.  ncmpi_create and ncmpi_enddef are
 * collective; the library's rank 0 writes the header.  Value: rank*1000 + v.
 * Then the last checkpoint is opened again and read back the same way (the
 * blocking get_vara_all, or iget + wait_all), and checked.
 *
 * "record": as netCDF time series are written, one file OUTDIR/s3d.nc whose
 * four variables are record variables (a first, unlimited dimension "time"):
 * checkpoint i writes record i (start {i, 0, y0, x0[, 0]}, count {1, N, N/2,
 * N/2[, k]}).  In the file a record holds one record of each variable in
 * turn, so a variable's record i lies i records past its record 0.
 */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVAR 4

static const int K[NVAR] = {11, 3, 1, 1};
static const char *NAME[NVAR] = {"yspecies", "u", "pressure", "temperature"};

static void check(int err, const char *what)
{
    if (err != NC_NOERR) {
        fprintf(stderr, "pnc_s3d: %s: %s\n", what, ncmpi_strerror(err));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* A checkpoint file and its four variables, defined (a first dimension
 * "time", unlimited, if record). */
static void create(const char *path, MPI_Offset n, int record, int *ncid, int *var)
{
    int t = -1, z, y, x, nsp, three;
    check(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, ncid), "create");
    if (record)
        check(ncmpi_def_dim(*ncid, "time", NC_UNLIMITED, &t), "def_dim");
    check(ncmpi_def_dim(*ncid, "z", n, &z), "def_dim");
    check(ncmpi_def_dim(*ncid, "y", n, &y), "def_dim");
    check(ncmpi_def_dim(*ncid, "x", n, &x), "def_dim");
    check(ncmpi_def_dim(*ncid, "nsp", 11, &nsp), "def_dim");
    check(ncmpi_def_dim(*ncid, "three", 3, &three), "def_dim");
    int r = record != 0, d[NVAR][5] = {{t, z, y, x, nsp}, {t, z, y, x, three}, {t, z, y, x}, {t, z, y, x}};
    for (int v = 0; v < NVAR; v++)
        check(ncmpi_def_var(*ncid, NAME[v], NC_DOUBLE, (v < 2 ? 4 : 3) + r, d[v] + !r, &var[v]), "def_var");
    check(ncmpi_enddef(*ncid), "enddef");
}

int main(int argc, char **argv)
{
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3 || np != 4) {
        if (rank == 0) fprintf(stderr, "usage: pnc_s3d OUTDIR blocking|nonblocking [N [CHECKPOINTS]], on 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int nonblocking = !strcmp(argv[2], "nonblocking");
    MPI_Offset n = argc > 3 ? atol(argv[3]) : 16;
    int checkpoints = argc > 4 ? atoi(argv[4]) : 5;
    int record = argc > 5 && !strcmp(argv[5], "record"), r0 = record;   /* r0: the record dimension's slot */
    MPI_Offset h = n / 2, x0 = (rank % 2) * h, y0 = (rank / 2) * h;
    double *buf[NVAR];
    for (int v = 0; v < NVAR; v++) {
        MPI_Offset len = n * h * h * K[v];
        buf[v] = malloc(len * sizeof(double));
        for (MPI_Offset i = 0; i < len; i++)
            buf[v][i] = rank * 1000 + v;
    }
    char path[4096];
    int ncid, var[NVAR], req[NVAR], st[NVAR];
    for (int c = 0; c < checkpoints; c++) {
        for (int i = 0; i < 10; i++) {          /* the solver's step */
            double x = c + i, sum;
            MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
        if (!record || c == 0) {
            if (record)
                snprintf(path, sizeof path, "%s/s3d.nc", argv[1]);
            else
                snprintf(path, sizeof path, "%s/s3d.%d.nc", argv[1], c);
            create(path, n, record, &ncid, var);
        }
        for (int v = 0; v < NVAR; v++) {
            MPI_Offset start[5] = {c, 0, y0, x0, 0}, count[5] = {1, n, h, h, K[v]};
            if (nonblocking)
                check(ncmpi_iput_vara_double(ncid, var[v], start + !r0, count + !r0, buf[v], &req[v]), "iput_vara");
            else
                check(ncmpi_put_vara_double_all(ncid, var[v], start + !r0, count + !r0, buf[v]), "put_vara_all");
        }
        if (nonblocking)
            check(ncmpi_wait_all(ncid, NVAR, req, st), "wait_all");
        if (!record || c == checkpoints - 1)
            check(ncmpi_close(ncid), "close");
    }
    /* the restart: the last checkpoint read back */
    check(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &ncid), "open");
    int bad = 0;
    for (int v = 0; v < NVAR; v++) {
        MPI_Offset start[5] = {checkpoints - 1, 0, y0, x0, 0}, count[5] = {1, n, h, h, K[v]};
        memset(buf[v], 0, n * h * h * K[v] * sizeof(double));
        check(ncmpi_inq_varid(ncid, NAME[v], &var[v]), "inq_varid");
        if (nonblocking)
            check(ncmpi_iget_vara_double(ncid, var[v], start + !r0, count + !r0, buf[v], &req[v]), "iget_vara");
        else
            check(ncmpi_get_vara_double_all(ncid, var[v], start + !r0, count + !r0, buf[v]), "get_vara_all");
    }
    if (nonblocking)
        check(ncmpi_wait_all(ncid, NVAR, req, st), "wait_all");
    for (int v = 0; v < NVAR; v++)
        for (MPI_Offset i = 0; i < n * h * h * K[v]; i++)
            bad += buf[v][i] != rank * 1000 + v;
    check(ncmpi_close(ncid), "close");
    for (int v = 0; v < NVAR; v++)
        free(buf[v]);
    if (bad) fprintf(stderr, "pnc_s3d: rank %d read %d wrong values\n", rank, bad);
    MPI_Finalize();
    return bad != 0;
}
