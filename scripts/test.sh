#!/usr/bin/env bash
# The test command: set up (scripts/setup.sh), install what the testbed tests
# need (Slurm, munge, GlusterFS; as root), Debian's parallel HDF5 and PnetCDF and mpi4py for MPICH, then run every
# test under real mpirun (Open MPI's) and mpiexec (MPICH's).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
missing=()
command -v slurmctld >/dev/null || missing+=(slurm-wlm)
command -v munged >/dev/null || missing+=(munge)
command -v glusterd >/dev/null || missing+=(glusterfs-server)
command -v mount.glusterfs >/dev/null || missing+=(glusterfs-client)
command -v pkg-config >/dev/null || missing+=(pkg-config)
pkg-config --exists fuse3 2>/dev/null || missing+=(libfuse3-dev)
# the I/O libraries' test programs (issue 59): Debian's parallel HDF5 and PnetCDF
command -v h5pcc.openmpi >/dev/null || missing+=(libhdf5-openmpi-dev)
pkg-config --exists pnetcdf 2>/dev/null || missing+=(libpnetcdf-dev)
if ((${#missing[@]})); then
  if [[ $(id -u) == 0 ]]; then
    echo "test: installing ${missing[*]} with apt-get (the testbed's Slurm, GlusterFS and throttled disk)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "test: missing ${missing[*]} (the testbed tests start Slurm, GlusterFS and a FUSE-throttled disk as root); install them as root" >&2
    exit 1
  fi
fi
# mpi4py built for MPICH, beside the venv's own (Open MPI's): the Python tests under MPICH
# put it first on PYTHONPATH (tests/conftest.py)
py=.venv/bin/python
if command -v mpicc.mpich >/dev/null &&
   ! PYTHONPATH=.venv/mpi4py-mpich $py -c 'import sys, mpi4py; sys.exit("mpi4py-mpich" not in mpi4py.__file__)' 2>/dev/null; then
  echo "test: building mpi4py for MPICH into .venv/mpi4py-mpich"
  MPICC=mpicc.mpich CFLAGS="-O0 -g0" $py -m pip install -q --no-cache-dir --no-binary=mpi4py \
    --target .venv/mpi4py-mpich "mpi4py==$($py -c 'import mpi4py; print(mpi4py.__version__)')"
fi
exec $py -m pytest -q tests "$@"
