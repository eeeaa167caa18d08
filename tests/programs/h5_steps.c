/* h5_steps.c -- a simulation's HDF5 output, as parallel codes write it: each
 * of STEPS dumps is one dataset of an N x N grid of doubles in one shared
 * file, the rows split in blocks over the ranks, written collectively
 * (H5FD_MPIO_COLLECTIVE); after the last dump every dataset is read back the
 * same way, and checked; with "reopen", through the file closed and opened
 * again (a restart), when the library reads its metadata back; with
 * "independent", every transfer independent (H5FD_MPIO_INDEPENDENT); with
 * "chunked", each dataset in chunks of N/P rows (one a rank) rather than
 * contiguous.
 *
 * usage: h5_steps OUTDIR [N [STEPS [reopen] [independent] [chunked]]]
 *        (defaults: 256 5; N % nprocs == 0)
 *
 * File OUTDIR/steps.h5, contiguous datasets /step0 ... /step<STEPS-1>; rank r
 * writes rows r*N/P .. (r+1)*N/P - 1 of each: N*N*8/P bytes a rank a dump,
 * value (s*N*N + i*N + j) at row i, column j of step s.  The library adds its
 * own metadata (superblock, object headers, the root group's entries). */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: h5_steps OUTDIR [N [STEPS]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    hsize_t n = argc > 2 ? (hsize_t)atol(argv[2]) : 256;
    int steps = argc > 3 ? atoi(argv[3]) : 5;
    int reopen = 0, independent = 0, chunked = 0;
    for (int a = 4; a < argc; a++) {
        reopen |= !strcmp(argv[a], "reopen");
        independent |= !strcmp(argv[a], "independent");
        chunked |= !strcmp(argv[a], "chunked");
    }
    if (n % (hsize_t)size) {
        if (rank == 0) fprintf(stderr, "h5_steps: N must be a multiple of the number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    hsize_t rows = n / (hsize_t)size, start[2] = {rank * rows, 0}, count[2] = {rows, n}, dims[2] = {n, n};
    double *buf = malloc(rows * n * sizeof *buf);
    char path[4096], name[32];
    snprintf(path, sizeof path, "%s/steps.h5", argv[1]);

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, independent ? H5FD_MPIO_INDEPENDENT : H5FD_MPIO_COLLECTIVE);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (chunked)              /* one chunk a rank: its rows */
        H5Pset_chunk(dcpl, 2, count);
    hid_t mem = H5Screate_simple(2, count, NULL);
    for (int s = 0; s < steps; s++) {
        for (hsize_t i = 0; i < rows; i++)
            for (hsize_t j = 0; j < n; j++)
                buf[i * n + j] = (double)(s * n * n + (start[0] + i) * n + j);
        hid_t space = H5Screate_simple(2, dims, NULL);
        snprintf(name, sizeof name, "step%d", s);
        hid_t dset = H5Dcreate2(file, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
        H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, space, dxpl, buf);
        H5Dclose(dset);
        H5Sclose(space);
    }
    if (reopen) {             /* a restart: the file closed, then opened again */
        H5Fclose(file);
        MPI_Barrier(MPI_COMM_WORLD);
        file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    }
    for (int s = 0; s < steps; s++) {
        snprintf(name, sizeof name, "step%d", s);
        hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
        hid_t space = H5Dget_space(dset);
        H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
        H5Dread(dset, H5T_NATIVE_DOUBLE, mem, space, dxpl, buf);
        for (hsize_t i = 0; i < rows; i++)
            for (hsize_t j = 0; j < n; j++)
                bad += buf[i * n + j] != (double)(s * n * n + (start[0] + i) * n + j);
        H5Sclose(space);
        H5Dclose(dset);
    }
    H5Sclose(mem);
    H5Pclose(dxpl);
    H5Pclose(dcpl);
    H5Fclose(file);
    H5Pclose(fapl);
    free(buf);
    if (bad) fprintf(stderr, "h5_steps: rank %d read %d wrong values\n", rank, bad);
    MPI_Finalize();
    return bad != 0;
}
