/* s3d_like.c -- S3D-IO-like checkpointing (PnetCDF methods, as in the paper).
 *
 * usage: s3d_like OUTDIR blocking|nonblocking [GX GY GZ [PX PY PZ]]   (default 16 16 16)
 *
 * The grid GX x GY x GZ of doubles is block-decomposed over a process grid
 * dims = PX x PY x PZ (as S3D-IO takes it; PX*PY*PZ = nprocs), by default
 * MPI_Dims_create(nprocs, 3, dims) exactly as btio_like.c does (rank r at
 * coordinates (r / (dims[1]*dims[2]), (r / dims[2]) % dims[1], r % dims[2]),
 * every dimension divisible by its dims[] entry).  L = local cells * 8 bytes,
 * G8 = GX*GY*GZ * 8 bytes (one global array).
 *
 * S3D checkpoints 16 arrays: 11 species (variable 0, "yspecies"),
 * temperature (1), pressure (2), 3 velocity components (3, "u").  In the
 * file, array c (0..15) is a whole global array in C order (Z fastest) at
 * bytes [512 + c*G8, 512 + (c+1)*G8), after a 512-byte header: variable v
 * holds NV = {11, 1, 1, 3} arrays starting at array FIRST = {0, 11, 12, 13}.
 *
 * For f = 0..4, one file after the other:
 *   MPI_File_open "s3d.<f>.nc" (CREATE|RDWR, MPI_COMM_WORLD)
 *   rank 0 only: MPI_File_write_at(offset 0, 512 bytes)     (the header)
 *   MPI_Barrier                                    (PnetCDF's enddef: 1 call)
 *   blocking:    for v = 0..3:
 *                    MPI_File_set_view(disp 512 + FIRST[v]*G8, MPI_DOUBLE,
 *                        subarray({NV[v],GX,GY,GZ}, {NV[v],lx,ly,lz},
 *                                 {0,x0,y0,z0}, C order, MPI_DOUBLE))
 *                    MPI_File_write_all(NV[v]*lcells doubles)
 *                -> 4 writes of NV[v]*L bytes = 11L, L, L, 3L, no
 *                   communication between them
 *   nonblocking: MPI_File_set_view(disp 512, MPI_DOUBLE,
 *                        subarray({16,GX,GY,GZ}, {16,lx,ly,lz}, ...))
 *                MPI_File_write_all(16*lcells doubles)  -> 1 write of 16L
 *                (PnetCDF's nonblocking method: the 4 iput requests are
 *                 combined into one collective write at wait_all)
 *   MPI_File_close
 *   NSOLVE = 20 MPI_Sendrecv around the ring of ranks ("time steps"
 *   between checkpoints)
 * Then MPI_Barrier, and rank 0 checks all five files with stdio: header
 * byte j of file f is (f*31 + j) % 251, and every double of array c, cell
 * (gx,gy,gz), file f equals f*1e7 + c*1e5 + (gx*GY + gy)*GZ + gz.  Any
 * mismatch aborts.
 *
 * Communication calls: per file 1 (barrier) + 20 (ring); then 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NFILES 5
#define HEADER 512
#define NARRAYS 16
#define NVARS 4
#define NSOLVE 20

static const int NV[NVARS] = {11, 1, 1, 3};
static const int FIRST[NVARS] = {0, 11, 12, 13};

static void die(const char *msg)
{
    fprintf(stderr, "s3d_like: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static double val(int f, int c, long cell)
{
    return f * 1e7 + c * 1e5 + (double)cell;
}

static unsigned char hdr(int f, int j)
{
    return (unsigned char)((f * 31 + j) % 251);
}

/* rank 0, after every file is closed */
static void check_files(const char *dir, const int *gsz)
{
    long gcells = (long)gsz[0] * gsz[1] * gsz[2], cell;
    double *a = malloc(gcells * sizeof(double));
    unsigned char h[HEADER];
    char path[4096];
    int f, c, j;
    if (!a)
        die("out of memory");
    for (f = 0; f < NFILES; f++) {
        FILE *fp;
        snprintf(path, sizeof path, "%s/s3d.%d.nc", dir, f);
        fp = fopen(path, "rb");
        if (!fp)
            die("cannot reopen a checkpoint file with stdio");
        if (fread(h, 1, HEADER, fp) != HEADER)
            die("short header");
        for (j = 0; j < HEADER; j++)
            if (h[j] != hdr(f, j))
                die("header mismatch");
        for (c = 0; c < NARRAYS; c++) {
            if (fread(a, sizeof(double), gcells, fp) != (size_t)gcells)
                die("short array");
            for (cell = 0; cell < gcells; cell++)
                if (a[cell] != val(f, c, cell))
                    die("array content mismatch");
        }
        if (fgetc(fp) != EOF)
            die("file longer than header + 16 arrays");
        fclose(fp);
    }
    free(a);
}

int main(int argc, char **argv)
{
    int rank, nprocs, f, v, c, k, x, y, z, nonblocking = 0;
    int gsz[3] = {16, 16, 16}, dims[3] = {0, 0, 0}, lsz[3], start[3], coord[3];
    long lcells, n;
    char path[4096];
    unsigned char header[HEADER];
    double *buf;
    MPI_Datatype vartype[NVARS], alltype;
    MPI_File fh;
    MPI_Status st;
    MPI_Offset g8;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 3)
        die("usage: s3d_like OUTDIR blocking|nonblocking [GX GY GZ [PX PY PZ]]");
    if (strcmp(argv[2], "blocking") == 0)
        nonblocking = 0;
    else if (strcmp(argv[2], "nonblocking") == 0)
        nonblocking = 1;
    else
        die("the method is blocking or nonblocking");
    if (argc >= 6)
        for (k = 0; k < 3; k++)
            gsz[k] = atoi(argv[3 + k]);
    if (argc >= 9)
        for (k = 0; k < 3; k++)
            dims[k] = atoi(argv[6 + k]);
    if (gsz[0] < 1 || gsz[1] < 1 || gsz[2] < 1 || dims[0] < 0 || dims[1] < 0 || dims[2] < 0)
        die("bad sizes");
    if (argc >= 9 && dims[0] * dims[1] * dims[2] != nprocs)
        die("PX * PY * PZ is not the number of processes");

    MPI_Dims_create(nprocs, 3, dims);      /* given dims (none 0) are kept */
    coord[0] = rank / (dims[1] * dims[2]);
    coord[1] = (rank / dims[2]) % dims[1];
    coord[2] = rank % dims[2];
    for (k = 0; k < 3; k++) {
        if (gsz[k] % dims[k] != 0)
            die("global size not divisible by MPI_Dims_create result");
        lsz[k] = gsz[k] / dims[k];
        start[k] = coord[k] * lsz[k];
    }
    lcells = (long)lsz[0] * lsz[1] * lsz[2];
    g8 = (MPI_Offset)gsz[0] * gsz[1] * gsz[2] * 8;

    /* file types: {nv, GX, GY, GZ} arrays of doubles, all of nv, our block */
    for (v = 0; v <= NVARS; v++) {
        int nv = v < NVARS ? NV[v] : NARRAYS;
        int s4[4] = {nv, gsz[0], gsz[1], gsz[2]};
        int l4[4] = {nv, lsz[0], lsz[1], lsz[2]};
        int o4[4] = {0, start[0], start[1], start[2]};
        MPI_Datatype *t = v < NVARS ? &vartype[v] : &alltype;
        MPI_Type_create_subarray(4, s4, l4, o4, MPI_ORDER_C, MPI_DOUBLE, t);
        MPI_Type_commit(t);
    }

    buf = malloc(NARRAYS * lcells * sizeof(double));
    if (!buf)
        die("out of memory");

    for (f = 0; f < NFILES; f++) {
        /* compute: the 16 local arrays, array-major, local C order */
        n = 0;
        for (c = 0; c < NARRAYS; c++)
            for (x = 0; x < lsz[0]; x++)
                for (y = 0; y < lsz[1]; y++)
                    for (z = 0; z < lsz[2]; z++)
                        buf[n++] = val(f, c, ((long)(start[0] + x) * gsz[1] +
                                              start[1] + y) * gsz[2] + start[2] + z);

        snprintf(path, sizeof path, "%s/s3d.%d.nc", argv[1], f);
        if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &fh) != MPI_SUCCESS)
            die("MPI_File_open failed");
        if (rank == 0) {
            for (k = 0; k < HEADER; k++)
                header[k] = hdr(f, k);
            if (MPI_File_write_at(fh, 0, header, HEADER, MPI_BYTE,
                                  &st) != MPI_SUCCESS)
                die("header write failed");
        }
        MPI_Barrier(MPI_COMM_WORLD);    /* enddef */

        if (!nonblocking) {
            for (v = 0; v < NVARS; v++) {
                if (MPI_File_set_view(fh, HEADER + FIRST[v] * g8, MPI_DOUBLE,
                                      vartype[v], "native",
                                      MPI_INFO_NULL) != MPI_SUCCESS)
                    die("MPI_File_set_view failed");
                if (MPI_File_write_all(fh, buf + FIRST[v] * lcells,
                                       (int)(NV[v] * lcells), MPI_DOUBLE,
                                       &st) != MPI_SUCCESS)
                    die("MPI_File_write_all failed");
            }
        } else {
            if (MPI_File_set_view(fh, HEADER, MPI_DOUBLE, alltype, "native",
                                  MPI_INFO_NULL) != MPI_SUCCESS)
                die("MPI_File_set_view failed");
            if (MPI_File_write_all(fh, buf, (int)(NARRAYS * lcells), MPI_DOUBLE,
                                   &st) != MPI_SUCCESS)
                die("MPI_File_write_all failed");
        }
        if (MPI_File_close(&fh) != MPI_SUCCESS)
            die("MPI_File_close failed");

        /* time steps until the next checkpoint */
        for (k = 0; k < NSOLVE; k++) {
            int out[2] = {rank, k}, in[2] = {-1, -1};
            int to = (rank + 1) % nprocs, from = (rank - 1 + nprocs) % nprocs;
            MPI_Sendrecv(out, 2, MPI_INT, to, k, in, 2, MPI_INT, from, k,
                         MPI_COMM_WORLD, &st);
            if (in[0] != from || in[1] != k)
                die("message mismatch");
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        check_files(argv[1], gsz);
    for (v = 0; v < NVARS; v++)
        MPI_Type_free(&vartype[v]);
    MPI_Type_free(&alltype);
    free(buf);
    MPI_Finalize();
    return 0;
}
