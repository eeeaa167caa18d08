"""`iomodel trace`: run an MPI launch command with the tracer preloaded in its ranks."""
import os
import shutil
import struct
import subprocess
from pathlib import Path

from iomodel import mpi

# Anything that starts MPI processes: without one, the command is one process,
# traced on its own (as rank 0 of 1, whether it calls MPI_Init or not).
LAUNCHERS = {"mpirun", "mpiexec", "orterun", "mpirun.openmpi", "mpiexec.openmpi", "mpirun.mpich",
             "mpiexec.mpich", "mpiexec.hydra", "mpiexec.gforker", "srun", "aprun", "jsrun", "flux", "prun"}
MISMATCH_NOTE = "mpi-mismatch.txt"


def is_launcher(cmd):
    return bool(cmd) and os.path.basename(cmd[0]) in LAUNCHERS


def traced_command(cmd, env_names, env, family):
    """The command, with the launcher told to pass the tracer's variables on to
    ranks on other nodes: Open MPI's -x NAME, Hydra's -genv NAME VALUE.  Slurm's
    srun (and the others) pass the whole environment on by themselves."""
    if not is_launcher(cmd) or os.path.basename(cmd[0]) in mpi.NEUTRAL_LAUNCHERS:
        return list(cmd)
    if family == "mpich":
        extra = [w for n in env_names for w in ("-genv", n, env[n])]
    else:
        extra = [w for n in env_names for w in ("-x", n)]
    return [cmd[0], *extra, *cmd[1:]]


def choose_build(cmd, requested=None):
    """The tracer library for `cmd`, and a line saying which and why (None
    when $IOMODEL_TRACER_LIB names it)."""
    lib = os.environ.get("IOMODEL_TRACER_LIB")
    launched = is_launcher(cmd)
    if lib and not requested:
        if not Path(lib).is_file():
            raise mpi.NoBuild(f"IOMODEL_TRACER_LIB={lib}: no such file")
        return Path(lib), mpi.launcher_family(cmd[0]) if launched else None, None
    choice = mpi.choose(cmd, launched, requested)
    if not choice.build.tracer.is_file():
        raise mpi.NoBuild(f"{choice.build.tracer} is missing: rebuild iomodel (docs/mpi.md)")
    return choice.build.tracer, choice.launcher or choice.build.family, \
        f"tracing with the {choice.build.describe()} build ({choice.why})"


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


def job_nranks(out):
    """The ranks in OUT/job.iot (one trace file per job), 0 when there is none."""
    try:
        with open(Path(out) / "job.iot", "rb") as f:
            magic, _, _, nranks = struct.unpack("<8sIII", f.read(20))
        return nranks if magic == b"IOMJOB\0\0" else 0
    except (OSError, struct.error):
        return 0


def run_traced(outdir, cmd, extra_env=None, requested=None, say=None):
    """Run `cmd` with the tracer; returns (exit code, trace directory).
    `requested`: the MPI family (--mpi); `say`: called with the line telling
    which build traces the run."""
    if shutil.which(cmd[0]) is None and not Path(cmd[0]).exists():
        raise FileNotFoundError(f"command not found: {cmd[0]}")
    lib, family, which = choose_build(cmd, requested)
    if which and say:
        say(which)
    out = Path(outdir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    # a previous run's ranks would mix with this one's
    for stale in [*out.glob("rank-*.iot"), *out.glob("rank-*.iot.after"), out / "job.iot", out / MISMATCH_NOTE]:
        if stale.exists():
            stale.unlink()
    env = dict(os.environ)
    env.update(extra_env or {})
    env["IOMODEL_TRACE_DIR"] = str(out)
    if not is_launcher(cmd):
        env["IOMODEL_NONMPI"] = "1"     # the tracer writes a process that never calls MPI_Init too
    env["LD_PRELOAD"] = ":".join(x for x in (str(lib), env.get("LD_PRELOAD", "")) if x)
    names = ["LD_PRELOAD"] + sorted(n for n in env if n.startswith("IOMODEL_") and n != "IOMODEL_NONMPI")
    rc = subprocess.call(traced_command(cmd, names, env, family), env=env)
    # a command killed by signal N: 128 + N, as a shell reports it (Python gives -N)
    return (128 - rc if rc < 0 else rc), out


def mismatch(out):
    """What the tracer wrote when the application ran an MPI of the other family, or None."""
    try:
        return " ".join((Path(out) / MISMATCH_NOTE).read_text(errors="replace").split()) or None
    except OSError:
        return None
