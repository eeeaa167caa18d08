#!/bin/sh
# Build the MPI-IO test programs (no tracer involved).
#   usage: tests/programs/build.sh BUILD_DIR
# C: mpicc -O1 -Wall -Wextra; Fortran: mpif90 -O1 -Wall (gfortran's -Wextra
# only adds "unused parameter" noise from Open MPI's own mpif.h).  -Werror
# keeps the build warning-free.  basic_py.py is run from the source tree:
#   mpirun -np 4 .venv/bin/python tests/programs/basic_py.py OUTDIR
# Override the compilers with MPICC / MPIF90.
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
src=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
CC=${MPICC:-mpicc}
FC=${MPIF90:-mpif90}

for p in basic_c btio_like nonblocking pointers fpp killed plain_output; do
    $CC -O1 -Wall -Wextra -Werror -o "$out/$p" "$src/$p.c"
done
# compile from inside BUILD_DIR so nothing (e.g. .mod files) lands elsewhere
for p in basic_mpifh basic_usempi basic_f08; do
    (cd "$out" && $FC -O1 -Wall -Werror -o "$out/$p" "$src/$p.f90")
done
