"""Which MPI: the builds of iomodel's C parts, and the MPI an application runs.

The tracer library and the replayer are built once per MPI ABI family, each
into tracer/lib/<family>/ with a build.json saying what it was built against
(CMakeLists.txt, docs/mpi.md).  A program built for Open MPI needs the Open
MPI build; one built for MPICH, Intel MPI, Cray MPICH or MVAPICH (one ABI)
needs the MPICH build.  `iomodel trace` picks the build from what the program
links, or else from what its launcher is; `iomodel replay` from the cluster
description's launcher.
"""
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

FAMILIES = {"openmpi": "Open MPI", "mpich": "MPICH"}
TRACER_NAME = "libiomodel_trace.so"
REPLAYER_NAME = "iomodel_replay"
# launchers that start the processes of any MPI: their name says nothing of it
NEUTRAL_LAUNCHERS = {"srun", "aprun", "jsrun", "flux", "prun"}

# a line of `ldd` output naming an MPI library: Open MPI's always comes with
# its libopen-pal; MPICH's family is libmpich, Cray's libmpi_cray, Intel's libmpi.so.12
_OPENMPI_LIB = re.compile(r"^\s*(libopen-pal\S*|libmpi\.so\.40\S*)")
_MPICH_LIB = re.compile(r"^\s*(libmpich\S*|libmpi_cray\S*|libmpi\.so\.12\S*|libmpi_intel\S*)")


class NoBuild(RuntimeError):
    """iomodel has no build of its C parts for the MPI asked for."""


class MpiMismatch(ValueError):
    """The application, its launcher and iomodel's builds do not agree on the MPI."""


@dataclass(frozen=True)
class Build:
    family: str
    dir: Path
    info: dict

    @property
    def tracer(self):
        return self.dir / TRACER_NAME

    @property
    def replayer(self):
        return self.dir / REPLAYER_NAME

    def describe(self):
        return self.info.get("library") or FAMILIES[self.family]


def lib_dir():
    """Where the builds are installed: tracer/lib/ of the installed package."""
    from iomodel import tracer
    return Path(tracer.__file__).resolve().parent / "lib"


def builds(where=None):
    """{family: Build} of the builds installed (those with a readable build.json)."""
    out = {}
    base = Path(where) if where else lib_dir()
    for family in FAMILIES:
        d = base / family
        try:
            info = json.loads((d / "build.json").read_text())
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and info.get("family") == family:
            out[family] = Build(family, d, info)
    return out


def family_of_text(text):
    """The family a version text names (a launcher's --version, MPI_Get_library_version)."""
    if re.search(r"Open MPI|OpenRTE|PRRTE|prterun", text):
        return "openmpi"
    if re.search(r"HYDRA|MPICH|Intel\(R\) MPI|MVAPICH", text):
        return "mpich"
    return None


def launcher_family(launcher):
    """The family of a launcher program (mpirun, mpiexec, mpiexec.hydra...), from
    its --version; None for srun and the like, or when it cannot tell."""
    if os.path.basename(launcher) in NEUTRAL_LAUNCHERS or not shutil.which(launcher):
        return None
    try:
        p = subprocess.run([launcher, "--version"], capture_output=True, text=True, timeout=20,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return family_of_text(p.stdout + p.stderr)


def _is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def find_program(cmd, launched):
    """The executable a command runs: the command itself, or after a launcher the
    first of its words that names an ELF file (options and their values do not)."""
    words = cmd[1:] if launched else cmd[:1]
    for w in words:
        if w.startswith("-"):
            continue
        path = w if os.sep in w else shutil.which(w)
        if path and os.path.isfile(path) and _is_elf(path):
            return Path(path)
    return None


def program_family(program):
    """(family, library) of the MPI an executable links (ldd), or (None, None)."""
    try:
        p = subprocess.run(["ldd", str(program)], capture_output=True, text=True, timeout=20,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None, None
    for family, pattern in (("openmpi", _OPENMPI_LIB), ("mpich", _MPICH_LIB)):
        for line in p.stdout.splitlines():
            m = pattern.match(line)
            if m:
                return family, m.group(1)
    return None, None


@dataclass(frozen=True)
class Choice:
    build: Build
    why: str            # how it was chosen, for the user
    launcher: str       # the launcher's family (or None): how to pass the environment


def how_to_build(family):
    return (f"build iomodel for {FAMILIES[family]} as docs/mpi.md says (cmake -S . -B build/{family} "
            f"-DMPI_C_COMPILER=<its mpicc> && cmake --install build/{family} --prefix tracer/lib)")


def choose(cmd, launched, requested=None, available=None):
    """The build to trace `cmd` with: `requested` (--mpi), else the MPI the
    program links, else its launcher's, else the one build there is."""
    available = builds() if available is None else available
    if not available:
        raise NoBuild(f"iomodel's tracer is not built (no {lib_dir()}/<mpi>/build.json): "
                      "run the README's set-up command, or build it as docs/mpi.md says")
    lfam = launcher_family(cmd[0]) if launched else None
    if requested:
        if requested not in available:
            raise NoBuild(f"--mpi {requested}: iomodel is built only for "
                          f"{', '.join(FAMILIES[f] for f in available)}; {how_to_build(requested)}")
        return Choice(available[requested], "as --mpi says", lfam)
    prog = find_program(cmd, launched)
    pfam, plib = program_family(prog) if prog else (None, None)
    if pfam and lfam and pfam != lfam:
        raise MpiMismatch(f"{prog} links {plib} ({FAMILIES[pfam]}), but {cmd[0]} is "
                          f"{FAMILIES[lfam]}'s launcher: it would start each rank as a "
                          f"single-process job; start it with {FAMILIES[pfam]}'s launcher")
    family = pfam or lfam
    if family:
        why = f"{prog.name} links {plib}" if pfam else f"{cmd[0]} is {FAMILIES[lfam]}'s launcher"
        if family not in available:
            raise NoBuild(f"{why} ({FAMILIES[family]}), and iomodel is built only for "
                          f"{', '.join(FAMILIES[f] for f in available)}: {how_to_build(family)}")
        return Choice(available[family], why, lfam)
    if len(available) == 1:
        (only,) = available.values()
        return Choice(only, "the only build", lfam)
    default = launcher_family("mpirun") or "openmpi"
    build = available.get(default) or next(iter(available.values()))
    return Choice(build, "the MPI of mpirun on PATH: neither the program nor the launcher "
                  "tells which MPI it runs (choose with --mpi)", lfam)


def for_launcher(launcher, requested=None, available=None):
    """The build whose replayer a cluster's launcher runs: `requested` (the
    description's run.mpi), else the launcher's MPI, else the only build, else
    Open MPI's.  None when nothing is built."""
    available = builds() if available is None else available
    if requested:
        if requested not in available:
            raise NoBuild(f"run.mpi {requested}: iomodel is built only for "
                          f"{', '.join(FAMILIES[f] for f in available) or 'no MPI'}; {how_to_build(requested)}")
        return available[requested]
    family = launcher_family(launcher)
    if family and family not in available:
        raise NoBuild(f"{launcher} is {FAMILIES[family]}'s launcher, and iomodel is built only for "
                      f"{', '.join(FAMILIES[f] for f in available) or 'no MPI'}: {how_to_build(family)}")
    if family:
        return available[family]
    if len(available) == 1:
        return next(iter(available.values()))
    return available.get("openmpi") or next(iter(available.values()), None)
