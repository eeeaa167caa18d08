/* no_io.c -- an MPI program that reads and writes no file: a reduction, then
 * rank 0 prints the sum on its standard output (not a file the tracer follows).
 *
 * usage: no_io OUTDIR   (OUTDIR unused, as the other test programs take one)
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("no_io: %d ranks' sum %d (%s)\n", size, sum, argc > 1 ? argv[1] : "-");
    MPI_Finalize();
    return 0;
}
