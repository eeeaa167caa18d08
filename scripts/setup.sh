#!/usr/bin/env bash
# Install what iomodel needs and build it; safe to run again (it only does what is missing).
#   system: Open MPI, gfortran, CMake, a C compiler, Python venv (apt-get, when root)
#   Python: .venv in the checkout with numpy, pyarrow, networkx, pyyaml, pytest, hypothesis, mpi4py,
#           darshan and matplotlib (optional for users: the `darshan` and `plot` extras; the tests use both)
#   build:  the tracer library (CMake, into build/, installed into tracer/lib/), iomodel itself
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v mpicc   >/dev/null || missing+=(libopenmpi-dev)
command -v mpirun  >/dev/null || missing+=(openmpi-bin)
command -v gfortran >/dev/null || missing+=(gfortran)
command -v cmake   >/dev/null || missing+=(cmake)
command -v cc      >/dev/null || missing+=(gcc)
command -v make    >/dev/null || missing+=(make)
command -v python3 >/dev/null || missing+=(python3)
if command -v python3 >/dev/null; then
  python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
  python3 -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    || missing+=(python3-dev)
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
if ! $py -c 'import numpy, pyarrow, networkx, yaml, pytest, hypothesis, mpi4py, setuptools, darshan, matplotlib' 2>/dev/null; then
  echo "setup: installing Python packages into .venv"
  $py -m pip install -q --upgrade pip setuptools wheel
  $py -m pip install -q numpy pyarrow networkx pyyaml pytest hypothesis mpi4py darshan matplotlib
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j 2 >/dev/null
cmake --install build --prefix tracer/lib >/dev/null
if ! $py -c 'import iomodel.cli, iomodel.analyzer' 2>/dev/null; then
  if ! log=$($py -m pip install -q --no-build-isolation -e . 2>&1); then
    echo "$log" >&2
    exit 1
  fi
fi
echo "setup: ready (.venv/bin/iomodel, tracer $(pwd)/tracer/lib/libiomodel_trace.so)"
