"""`iomodel trace`: run an MPI launch command with the tracer preloaded in its ranks."""
import os
import shutil
import struct
import subprocess
from pathlib import Path

from . import library_path

# Launchers that forward only the variables named with -x to remote nodes.
OPENMPI_LAUNCHERS = {"mpirun", "mpiexec", "orterun"}
# Anything that starts MPI processes: without one, the command is one process,
# traced on its own (as rank 0 of 1, whether it calls MPI_Init or not).
LAUNCHERS = OPENMPI_LAUNCHERS | {"mpirun.openmpi", "mpiexec.openmpi", "mpirun.mpich", "mpiexec.mpich",
                                 "mpiexec.hydra", "srun", "aprun", "jsrun", "flux", "prun"}


def traced_command(cmd):
    """The command, with Open MPI's -x added so remote ranks get the tracer too."""
    if cmd and os.path.basename(cmd[0]) in OPENMPI_LAUNCHERS:
        return [cmd[0], "-x", "LD_PRELOAD", "-x", "IOMODEL_TRACE_DIR", *cmd[1:]]
    return list(cmd)


def header_nranks(path):
    """The number of ranks a rank file's header gives (0 if it cannot tell), read
    without the analyzer: `iomodel trace` does not load numpy."""
    try:
        with open(path, "rb") as f:
            head = f.read(24)
        magic, _, _, rank, nranks = struct.unpack("<8sIIii", head)
        return nranks if magic == b"IOMTRACE" and 0 <= rank < nranks else 0
    except (OSError, struct.error):
        return 0


def run_traced(outdir, cmd, extra_env=None):
    """Run `cmd` with the tracer; returns (exit code, trace directory)."""
    lib = library_path()
    out = Path(outdir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("rank-*.iot"):  # a previous run's ranks would mix with this one's
        stale.unlink()
    env = dict(os.environ)
    env.update(extra_env or {})
    env["IOMODEL_TRACE_DIR"] = str(out)
    if cmd and os.path.basename(cmd[0]) not in LAUNCHERS:
        env["IOMODEL_NONMPI"] = "1"     # the tracer writes a process that never calls MPI_Init too
    env["LD_PRELOAD"] = ":".join(x for x in (str(lib), env.get("LD_PRELOAD", "")) if x)
    if shutil.which(cmd[0]) is None and not Path(cmd[0]).exists():
        raise FileNotFoundError(f"command not found: {cmd[0]}")
    rc = subprocess.call(traced_command(cmd), env=env)
    # a command killed by signal N: 128 + N, as a shell reports it (Python gives -N)
    return (128 - rc if rc < 0 else rc), out
