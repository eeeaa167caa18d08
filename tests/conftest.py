"""Shared fixtures: build the test programs once, run them for real under
mpirun with the tracer (through the `iomodel trace` command), read the trace."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "programs"
EXAMPLES = ROOT / "examples"
SHARED = ROOT.parent / "shared"
IOMODEL = [sys.executable, "-m", "iomodel"]
# A run that keeps a trace file per rank (the tracer's fallback layout): for the
# tests that damage or count rank files; every other run leaves one job.iot.
RANK_FILES = {"IOMODEL_JOIN": "0"}

# Root may run mpirun here; 4 ranks on 2 cores need oversubscription.  pml ob1: the
# point-to-point layer Open MPI picks on one node anyway, named so that MPI_Init skips
# probing the cm layer's network transports (0.3 s a launch, bench/accuracy.py).
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
           "OMPI_MCA_pml": "ob1"}
os.environ.update(MPI_ENV)


# The MPIs the tests run under: Open MPI (the default mpicc and mpirun) and MPICH
# (Debian's mpicc.mpich, mpif90.mpich and Hydra's mpiexec.mpich); mpi4py for
# MPICH is built by scripts/setup.sh into its own folder.
MPIS = {"openmpi": ("mpicc", "mpif90"), "mpich": ("mpicc.mpich", "mpif90.mpich")}
MPI4PY_MPICH = ROOT / ".venv" / "mpi4py-mpich"
BOTH_MPIS = pytest.mark.parametrize("mpi", ["openmpi", "mpich"])


def mpirun(np_, *cmd, mca=(), mpi="openmpi"):
    if mpi == "mpich":
        assert not mca, "MCA parameters are Open MPI's"
        return ["mpiexec.mpich", "-n", str(np_), *map(str, cmd)]
    extra = [x for kv in mca for x in ("--mca", *kv)]
    return ["mpirun", "--oversubscribe", "-np", str(np_), *extra, *map(str, cmd)]


def compile_programs(out, mpi):
    """Every C and Fortran test program, compiled for `mpi` with warnings as errors."""
    cc, fc = MPIS[mpi]
    for src in sorted([*PROGRAMS.glob("*.c"), *EXAMPLES.glob("*.c")]):
        if src.name.startswith(LIBRARY_PREFIXES):       # built by library_build_dir
            continue
        subprocess.run([cc, "-O1", "-Wall", "-Wextra", "-Werror", "-o", out / src.stem, src],
                       check=True)
    for src in sorted(PROGRAMS.glob("*.f90")):
        subprocess.run([fc, "-O1", "-Wall", "-Werror", "-J", out, "-o", out / src.stem, src],
                       check=True, cwd=out)
    return out


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory):
    """The test programs built for Open MPI."""
    return compile_programs(tmp_path_factory.mktemp("bin"), "openmpi")


# test programs of an I/O library, each built with that library's compiler wrapper
LIBRARY_PREFIXES = ("h5_", "pnc_")
# prefix -> (compiler, what to link, the Debian package that has the library)
LIBRARY_COMPILERS = {"h5_": ("h5pcc.openmpi", [], "libhdf5-openmpi-dev"),
                     "pnc_": ("mpicc", ["-lpnetcdf"], "libpnetcdf-dev")}


@pytest.fixture(scope="session")
def library_build_dir(tmp_path_factory):
    """The test programs of the I/O libraries (HDF5's h5_*.c, PnetCDF's pnc_*.c), built for Open MPI."""
    out = tmp_path_factory.mktemp("bin-libraries")
    for src in sorted(PROGRAMS.glob("*.c")):
        prefix = next((p for p in LIBRARY_PREFIXES if src.name.startswith(p)), None)
        if prefix:
            cc, libs, package = LIBRARY_COMPILERS[prefix]
            if not shutil.which(cc):
                pytest.fail(f"{cc} not found: install {package} (scripts/test.sh does, as root)")
            p = subprocess.run([cc, "-O1", "-Wall", "-Wextra", "-Werror", "-o", out / src.stem, src, *libs],
                               cwd=out, capture_output=True, text=True)   # h5pcc leaves its object file where it runs
            if p.returncode:
                pytest.fail(f"{src.name} did not build (is {package} installed? scripts/test.sh installs "
                            f"it, as root):\n{p.stderr}")
    return out


@pytest.fixture(scope="session")
def mpich_build_dir(tmp_path_factory):
    """The test programs built for MPICH."""
    return compile_programs(tmp_path_factory.mktemp("bin-mpich"), "mpich")


@pytest.fixture
def mpi():
    """The MPI a test runs under; BOTH_MPIS runs it under each."""
    return "openmpi"


@pytest.fixture
def programs(mpi, request):
    """The test programs built for the test's MPI."""
    return request.getfixturevalue("mpich_build_dir" if mpi == "mpich" else "build_dir")


def program_command(build_dir, name):
    """How to start a test program: a binary, or the venv's python for .py."""
    py = PROGRAMS / f"{name}.py"
    if py.exists():
        return [sys.executable, py]
    return [build_dir / name]


def mpi_env(mpi):
    """What a run under `mpi` needs in its environment: mpi4py built for it."""
    return {"PYTHONPATH": str(MPI4PY_MPICH)} if mpi == "mpich" else {}


class Run:
    """One traced run of a test program."""

    def __init__(self, trace_dir, data_dir, proc):
        self.trace_dir, self.data_dir, self.proc = trace_dir, data_dir, proc

    def trace(self, partial=False):
        from iomodel.analyzer import Trace
        return Trace(self.trace_dir, partial=partial)


@pytest.fixture
def traced(programs, mpi, tmp_path):
    """traced(name, np, *args, mca=(), check=True, env=None, posix=False, cwd=None) -> Run,
    under the test's MPI (the `mpi` fixture), started in `cwd` ("data": the run's data folder).
    Most tests are of MPI-IO and worked out for its calls alone: the programs'
    own POSIX and stdio I/O (their checks of what they wrote, the replayer's
    summary file) is traced only with posix=True (IOMODEL_POSIX=0 otherwise)."""
    def run(name, np_, *args, mca=(), check=True, env=None, posix=False, cwd=None):
        data = tmp_path / f"{name}-data"
        data.mkdir(exist_ok=True)
        trace = tmp_path / f"{name}-trace"
        cmd = IOMODEL + ["trace", "-o", str(trace), "--",
                         *mpirun(np_, *program_command(programs, name), data, *args, mca=mca, mpi=mpi)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                              cwd=data if cwd == "data" else cwd, env={**os.environ, **({} if posix else {"IOMODEL_POSIX": "0"}),
                                   **mpi_env(mpi), **(env or {})})
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
                                 f"{proc.stdout}\n{proc.stderr}")
        return Run(trace, data, proc)
    return run


@pytest.fixture
def local_vc(tmp_path):
    """cluster/shipped/local.yaml (this machine) with its work directory in the test's tmp dir."""
    vc = tmp_path / "local.yaml"
    vc.write_text((ROOT / "cluster" / "shipped" / "local.yaml").read_text()
                  .replace("/tmp/iomodel-replay", str(tmp_path / "work")))
    return vc


def rank_events(trace):
    """Per rank: the events table rows as dicts (plus the file's basename), by seq."""
    paths = trace.paths
    out = {}
    for e in trace.events.to_pylist():
        e["file"] = os.path.basename(paths[e["file_id"]]) if e["file_id"] >= 0 else None
        out.setdefault(e["rank"], []).append(e)
    for v in out.values():
        v.sort(key=lambda e: e["seq"])
    return out


def running(pids):
    """Those of the PIDs still running (zombies waiting for their parent do not count)."""
    out = []
    for pid in pids:
        try:
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[0] != "Z":
            out.append(pid)
    return out


def recorded(e):
    """(routine, file, absolute offset, bytes) of an event; offset and bytes
    only for data accesses."""
    return (e["routine"], e["file"], e["abs_offset"] if e["data"] else None,
            e["bytes"] if e["data"] else None)


def stopped_by_mpirun(rank_row, got, want, flushed):
    """A rank mpirun stopped after another rank died: SIGTERM, then SIGKILL.
    Open MPI 4.1 sends the SIGKILL as soon as the first rank has died of the
    SIGTERM (its SIGCHLD cuts the one-second wait short), a few milliseconds
    later, so a rank the scheduler did not run in between keeps only the
    buffers it had flushed.  Either the whole trace, ended by the signal, or
    the first `flushed` events of it without an end."""
    if rank_row["ended_by"] == "signal SIGTERM":
        return got == want
    return rank_row["ended_by"] is None and got == want[:len(got)] and len(got) >= flushed


def final_lclocks(trace):
    """Per rank: the logical clock at the end of the run."""
    return dict(zip(trace.ranks["rank"].to_pylist(), trace.ranks["final_lclock"].to_pylist()))
