#!/usr/bin/env bash
# Install what iomodel needs and build it; safe to run again (it only does what is missing).
#   system: Open MPI and MPICH, gfortran, CMake, a C compiler, zlib, zstd, Python venv (apt-get, when root);
#           Open MPI stays the default mpicc/mpirun (Debian's alternatives rank it first)
#   Python: .venv in the checkout with numpy, pyarrow, networkx, pyyaml, pytest, hypothesis, mpi4py,
#           darshan and matplotlib (optional for users: the `darshan` and `plot` extras; the tests use both)
#   build:  the tracer library and the replayer once per MPI (CMake, into build/<mpi>/, installed
#           into tracer/lib/<mpi>/: docs/mpi.md), iomodel itself
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v mpicc   >/dev/null || missing+=(libopenmpi-dev)
command -v mpirun  >/dev/null || missing+=(openmpi-bin)
# MPICH beside Open MPI (the tests run under both); without root, iomodel is built
# for what is there
mpich=()
command -v mpicc.mpich >/dev/null || mpich+=(mpich)
compgen -G '/usr/include/*/mpich/mpi.h' >/dev/null || mpich+=(libmpich-dev)
command -v gfortran >/dev/null || missing+=(gfortran)
command -v cmake   >/dev/null || missing+=(cmake)
command -v cc      >/dev/null || missing+=(gcc)
command -v make    >/dev/null || missing+=(make)
[[ -f /usr/include/zlib.h ]]     || missing+=(zlib1g-dev)
[[ -f /usr/include/zstd.h ]]     || missing+=(libzstd-dev)   # the job file's compressor (else deflate)
command -v python3 >/dev/null || missing+=(python3)
if command -v python3 >/dev/null; then
  python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
  python3 -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    || missing+=(python3-dev)
fi
if [[ $(id -u) == 0 ]]; then
  missing+=("${mpich[@]}")
elif ((${#mpich[@]})); then
  echo "setup: note: MPICH is not installed (${mpich[*]}): iomodel is built for Open MPI only" >&2
fi
if ((${#missing[@]})); then
  if [[ $(id -u) == 0 ]]; then
    echo "setup: installing ${missing[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "setup: missing system packages: ${missing[*]}; install them (as root: apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi

if [[ ! -x .venv/bin/python ]] || ! .venv/bin/python -c 'import sys' 2>/dev/null; then
  rm -rf .venv
  python3 -m venv .venv
fi
py=.venv/bin/python
if ! $py -c 'import numpy, pyarrow, networkx, yaml, pytest, hypothesis, mpi4py, scikit_build_core, darshan, matplotlib' 2>/dev/null; then
  echo "setup: installing Python packages into .venv"
  $py -m pip install -q --upgrade pip
  $py -m pip install -q numpy pyarrow networkx pyyaml pytest hypothesis mpi4py scikit-build-core darshan matplotlib
fi

# One build per MPI: Debian names each one's compiler wrapper mpicc.<mpi>; elsewhere, the
# mpicc on PATH (whatever MPI module is loaded).
rm -f tracer/lib/libiomodel_trace.so tracer/lib/iomodel_replay     # the layout before builds per MPI
compilers=()
for cc in mpicc.openmpi mpicc.mpich; do command -v $cc >/dev/null && compilers+=($cc); done
((${#compilers[@]})) || compilers=(mpicc)
for cc in "${compilers[@]}"; do
  dir=build/${cc#mpicc.}; [[ $cc == mpicc ]] && dir=build/mpi
  if ! log=$(cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DMPI_C_COMPILER="$cc" 2>&1 &&
             cmake --build "$dir" -j 2 2>&1 && cmake --install "$dir" --prefix tracer/lib 2>&1); then
    echo "$log" >&2
    echo "setup: building against $cc failed" >&2
    exit 1
  fi
done
# The Python part, editable (its files served from the checkout); CMake has run
# above, for every MPI, so pip does not run it (pyproject.toml).  Installed again
# when the set of Python files changes, as the editable install lists them.
sources=$(find iomodel analyzer models replay cluster tracer -name '*.py' -not -path '*/__pycache__/*' | sort | md5sum)
if [[ "$(cat .venv/iomodel-sources 2>/dev/null)" != "$sources" ]] || ! $py -c 'import iomodel.cli' 2>/dev/null; then
  if ! log=$($py -m pip install -q --no-build-isolation -e . -C wheel.cmake=false 2>&1); then
    echo "$log" >&2
    exit 1
  fi
  echo "$sources" > .venv/iomodel-sources
fi
echo "setup: ready (.venv/bin/iomodel; tracer and replayer for $(cd tracer/lib && echo */build.json | sed 's|/build.json||g') in $(pwd)/tracer/lib/)"
