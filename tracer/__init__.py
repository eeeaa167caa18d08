"""iomodel.tracer: finding the PMPI tracing library and running applications under it."""
import os
from pathlib import Path

LIBRARY_NAME = "libiomodel_trace.so"


class TracerNotFound(RuntimeError):
    pass


def library_path():
    """The tracer library: $IOMODEL_TRACER_LIB, else the copy installed beside this package."""
    env = os.environ.get("IOMODEL_TRACER_LIB")
    candidates = [Path(env)] if env else []
    here = Path(__file__).resolve().parent
    candidates += [here / "lib" / LIBRARY_NAME, here.parent / "build" / "tracer" / LIBRARY_NAME]
    for c in candidates:
        if c.is_file():
            return c
    raise TracerNotFound(
        f"cannot find {LIBRARY_NAME} (looked in: {', '.join(map(str, candidates))}); "
        "build it with the README's set-up command, or set IOMODEL_TRACER_LIB")
