"""iomodel.tracer: finding the PMPI tracing library and running applications under it."""
import os
from pathlib import Path

from iomodel import mpi

LIBRARY_NAME = mpi.TRACER_NAME


class TracerNotFound(mpi.NoBuild):
    pass


def library_path(family=None):
    """The tracer library: $IOMODEL_TRACER_LIB, else the build for `family`
    (openmpi or mpich; by default the Open MPI one, or the only one there is)."""
    env = os.environ.get("IOMODEL_TRACER_LIB")
    if env and family is None:
        if Path(env).is_file():
            return Path(env)
        raise TracerNotFound(f"IOMODEL_TRACER_LIB={env}: no such file")
    found = mpi.builds()
    build = found.get(family or "openmpi") or (None if family else next(iter(found.values()), None))
    if build is None or not build.tracer.is_file():
        raise TracerNotFound(
            f"cannot find {LIBRARY_NAME} built for {mpi.FAMILIES.get(family, family) if family else 'any MPI'} "
            f"in {mpi.lib_dir()}; build it with the README's set-up command (docs/mpi.md), "
            "or set IOMODEL_TRACER_LIB")
    return build.tracer
