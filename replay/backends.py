"""Replay backends: one table of functions per backend, as IOR's aiori.h has
one per I/O interface.  Both backends take the same invocations (the IOR
options of replay/ior.py) and report in one result format (replay/results.py).

    ior      IOR 4.x, found on PATH or where the cluster description says;
             never shipped, downloaded or built by iomodel (it is GPLv2)
    builtin  iomodel_replay, the project's own MPI-IO replayer (replay/replayer*.c),
             which accepts the same options and writes the same JSON summary
"""
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional


@dataclass(frozen=True)
class Backend:
    name: str
    describe: str
    # the program to run on the cluster, or None with the reason it cannot run
    find: Callable[[object], tuple]
    # argv of one invocation (without the launcher), writing its summary to `summary`:
    # (inv, prog, summary, repeat, fresh_files=True); fresh_files is the cluster's
    # run.fresh_files, for backends that can write each repetition into new files
    argv: Callable[..., list]
    # results of a finished run: (stdout, summary path) -> list of operation dicts
    parse: Callable[[str, Optional[Path]], list]


def _find_ior(cluster):
    prog = getattr(cluster, "ior", None) or "ior"
    found = shutil.which(prog) if os.sep not in prog else (prog if os.access(prog, os.X_OK) else None)
    if found:
        return found, None
    where = f"at {prog} (the cluster description's run.ior)" if os.sep in prog else "on PATH"
    return None, (f"IOR not found {where}: install IOR 4.x (e.g. `spack install ior`, or build "
                  f"it from github.com/hpc/ior) and put it on PATH or set run.ior in "
                  f"{getattr(cluster, 'path', 'the cluster description')}; or use --backend builtin")


def _find_builtin(cluster):
    from .results import replayer_path
    try:
        return str(replayer_path(getattr(cluster, "mpi", None), getattr(cluster, "launcher", None))), None
    except (FileNotFoundError, RuntimeError) as e:
        return None, str(e)


def _argv(inv, prog, summary, repeat, fresh_files=True):
    from .ior import command
    argv = command(inv, ior=prog, summary_file=str(summary))
    if repeat > 1:
        argv += ["-i", str(repeat)]
    return argv


def _argv_builtin(inv, prog, summary, repeat, fresh_files=True):
    # the extensions IOR lacks: a reread through the open its write used, and
    # the application's file names (where names place files, as Gluster's DHT
    # hashes them onto its servers, IOR's testFile.00000000 ... are placed
    # otherwise); -o is then their directory
    # the application's file view, as pieces (MPI-IO aggregates or sieves them as it
    # does the application's; IOR's contiguous blocks meet none of that)
    # and repetitions that each write into newly allocated pages, as the application's
    # one run did: IOR's removal of a repetition's file hands the next one the pages
    # just freed, still in the CPU's cache (tmpfs: 16 x 64 KiB per process in 340 us
    # into fresh pages, 290 us into recycled ones); and the processes beyond -N
    # holding the file open with the others, as the application's did; and the
    # application's buffer placement within 4 KiB (IOR's buffer is page-aligned).
    # New files per repetition are the cluster's choice (run.fresh_files): on a disk
    # a new file's blocks cost more than those the previous file freed, where the
    # application's run wrote (testbed disk: 0.317-0.331 s against 0.289-0.295 s)
    argv = _argv(inv, prog, summary, repeat)
    fresh = fresh_files and repeat > 1 and "-w" in argv and not {"-k", "-E"} & set(argv)
    return argv + (["--iomodel.fresh"] if fresh else []) + \
        (["--iomodel.reread"] if inv.reread else []) + \
        ([f"--iomodel.names={inv.names}"] if inv.names else []) + \
        ([f"--iomodel.piece={inv.piece}"] if inv.piece else []) + \
        (["--iomodel.idleOpen"] if inv.launch_np > inv.np else []) + \
        ([f"--iomodel.bufferOffset={inv.buffer_offset}"] if inv.buffer_offset else [])


def _parse(stdout, summary):
    from .results import parse_ior_output
    return parse_ior_output(stdout, summary_file=summary)


BACKENDS = {
    "ior": Backend("ior", "IOR 4.x from the cluster", _find_ior, _argv, _parse),
    "builtin": Backend("builtin", "iomodel's own MPI-IO replayer", _find_builtin, _argv_builtin,
                       _parse),
}


def get_backend(name):
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}: choose one of {', '.join(BACKENDS)}") from None
