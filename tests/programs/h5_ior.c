/* h5_ior.c -- what IOR's HDF5 backend does for `ior -a HDF5 -w -s S -b B -t T`
 * (aiori-HDF5.c): one file, one contiguous dataset of bytes of P*S*B elements;
 * rank r writes its block of each segment i, B bytes at element (i*P + r)*B,
 * in B/T transfers of T bytes (one H5Dwrite of a hyperslab each), then closes
 * the dataset and the file (where the library writes its metadata).
 * Transfers independent (H5FD_MPIO_INDEPENDENT, IOR's default) or, with
 * "collective", collective (IOR's -c).
 *
 * usage: h5_ior OUTDIR S B T [collective]
 *
 * File OUTDIR/ior.h5, dataset /data; byte k of rank r's block of segment i
 * holds (i + r + k) % 251. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 5) {
        if (rank == 0) fprintf(stderr, "usage: h5_ior OUTDIR S B T [collective]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    hsize_t segs = (hsize_t)atol(argv[2]), block = (hsize_t)atol(argv[3]), xfer = (hsize_t)atol(argv[4]);
    int collective = argc > 5 && !strcmp(argv[5], "collective");
    if (!xfer || block % xfer) {
        if (rank == 0) fprintf(stderr, "h5_ior: B must be a multiple of T\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/ior.h5", argv[1]);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t dims = (hsize_t)size * segs * block;
    hid_t space = H5Screate_simple(1, &dims, NULL);
    hid_t dset = H5Dcreate2(file, "data", H5T_NATIVE_UCHAR, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
    hid_t mem = H5Screate_simple(1, &xfer, NULL);
    unsigned char *buf = malloc(xfer);
    for (hsize_t i = 0; i < segs; i++)
        for (hsize_t j = 0; j < block / xfer; j++) {
            hsize_t start = (i * (hsize_t)size + (hsize_t)rank) * block + j * xfer;
            for (hsize_t k = 0; k < xfer; k++)
                buf[k] = (unsigned char)((i + (hsize_t)rank + j * xfer + k) % 251);
            H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &xfer, NULL);
            H5Dwrite(dset, H5T_NATIVE_UCHAR, mem, space, dxpl, buf);
        }
    free(buf);
    H5Sclose(mem);
    H5Pclose(dxpl);
    H5Dclose(dset);
    H5Sclose(space);
    H5Fclose(file);
    H5Pclose(fapl);
    MPI_Finalize();
    return 0;
}
