"""`iomodel analyze` as an MPI job (mpi4py): under `mpirun -np P` or `srun`,
the trace's rank traces are split into P blocks balanced by bytes, as `-j P`
splits them (analyzer/parallel.py).  Process 0 reads the first block in a
thread of its own and runs the analysis; process r > 0 reads block r and
answers process 0's passes over MPI, the bursts it is asked for sent back
with its answer (it shares no memory with process 0, which may be on another
node).  Under a memory bound each process takes its block in pieces where it
does not fit (analyzer/parallel.py).  The model is the one `-j 1` gives.
Process 0 writes it; the others write nothing.

Any failure of a worker (a damaged share above all) sends process 0 to the
serial analysis, which reports it as it always does; process 0 first takes
every answer it is owed and tells every worker to stop, so no process waits
for ever.
"""
import os
import time

from . import memory_bound
from .parallel import RankWorkers, ThreadLink, WorkerFailed, piece_conns, serve, split_pieces, split_sources

__all__ = ["world", "analyze_in_job"]

# the count of processes a launcher gives each it starts: Open MPI's mpirun, Hydra
# (MPICH) and srun --mpi=pmi2; srun --mpi=pmix gives its step's tasks beside PMIx's rank
# (a batch script's own shell has SLURM_NTASKS, and no PMIX_RANK)
_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE")
_TAG = 7017        # the analysis's messages, apart from anything else on COMM_WORLD


def launched_size():
    """How many processes the launcher started this one among (1: not launched so)."""
    names = _SIZE_VARS + (("SLURM_STEP_NUM_TASKS",) if "PMIX_RANK" in os.environ else ())
    for v in names:
        try:
            return int(os.environ[v])
        except (KeyError, ValueError):
            continue
    return 1


def launched_rank():
    for v in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"):
        try:
            return int(os.environ[v])
        except (KeyError, ValueError):
            continue
    return 0


def _refuse(msg):
    """One message for the whole launch: process 0 says it, the others only fail."""
    if launched_rank():
        raise SystemExit(2)
    raise RuntimeError(msg)


def world():
    """MPI_COMM_WORLD where this process is one of several a launcher started,
    else None."""
    n = launched_size()
    if n < 2:
        return None
    try:
        from mpi4py import MPI
    except ImportError:
        _refuse(f"analyze was started as one of {n} MPI processes: that needs mpi4py "
                "(.venv/bin/pip install mpi4py, built for the launcher's MPI; docs/mpi.md), "
                "or run it without the launcher")
    if MPI.COMM_WORLD.Get_size() != n:     # each process alone: all would write the model
        lib = MPI.Get_library_version().strip().splitlines()[0].split(",")[0].strip()[:60]
        _refuse(f"analyze was started as one of {n} MPI processes, but mpi4py's MPI ({lib}) sees "
                f"{MPI.COMM_WORLD.Get_size()}: run it under the launcher of mpi4py's MPI, or give mpi4py "
                f"built for this one (docs/mpi.md)")
    return MPI.COMM_WORLD


def _wait(comm, source):
    """The next message from `source`, waited for without spinning: a blocking
    receive busy-polls in Open MPI and MPICH, and a process waiting on this
    node would take the core of one working (process 0's reading thread, or
    process 0 itself while the workers wait for its next pass)."""
    while not comm.Iprobe(source=source, tag=_TAG):
        time.sleep(_POLL_S)
    return comm.recv(source=source, tag=_TAG)


_POLL_S = 0.001


class _MPILink:
    """Process 0's link to a worker process, whose sends do not wait for the
    worker to receive (isend): a send to a worker waits, past MPI's eager
    size, until that worker has worked through the pieces before it, and the
    next worker would wait for its own."""

    def __init__(self, comm, peer):
        self.comm, self.peer, self.sent = comm, peer, []

    def send(self, msg):
        self.sent = [r for r in self.sent if not r.Test()]
        self.sent.append(self.comm.isend(msg, dest=self.peer, tag=_TAG))

    def recv(self):
        return _wait(self.comm, self.peer)

    def close(self):
        for r in self.sent:     # the worker takes every message until it is told it is done
            r.wait()


class _WorkerEnd:
    """A worker process's end of its link to process 0, whose sends do not wait
    for process 0 to receive (isend): process 0, sending the next piece's
    message, would wait for this process to receive it."""

    def __init__(self, comm):
        self.comm, self.sent = comm, []

    def send(self, msg):
        self.sent = [r for r in self.sent if not r.Test()]
        self.sent.append(self.comm.isend(msg, dest=0, tag=_TAG))

    def recv(self):
        return _wait(self.comm, 0)

    def close(self):
        for r in self.sent:     # process 0 takes every answer it is owed before it says done
            r.wait()


def analyze_in_job(comm, path, build, serial, max_memory=None):
    """Process 0: the model by `build(ops, workers)`, or `serial()` where the
    workers cannot; the other processes: serve their block, return None.
    Each process holds its block whole where it fits in `max_memory` (None:
    memory_bound's default for the processes on its node), else reads it in
    pieces (analyzer/parallel.py)."""
    from .trace import Trace
    rank, size = comm.Get_rank(), comm.Get_size()
    from mpi4py import MPI
    here = comm.Split_type(MPI.COMM_TYPE_SHARED)
    budgets = comm.gather(memory_bound.budget(max_memory, here.Get_size()), root=0)
    here.Free()
    pieces = None
    if rank == 0:
        try:
            trace = Trace(path, lazy=True)
            if len(trace.rank_files) > 1 and hasattr(os, "memfd_create"):
                pieces = [split_pieces(b, memory_bound.piece_bytes(budgets[r], analyzer=r == 0))
                          for r, b in enumerate(split_sources(trace.rank_files, size))]
        except Exception:       # noqa: BLE001 - the serial analysis says what is wrong
            pieces = None
    pieces = comm.bcast(pieces, root=0)
    if rank:
        if pieces is not None and rank < len(pieces):
            serve(_WorkerEnd(comm), pieces[rank], None, len(pieces[rank]) == 1)
        return None
    if pieces is None:
        return serial()
    fd = os.memfd_create("iomodel-bursts", os.MFD_CLOEXEC)
    links = [ThreadLink(pieces[0], fd)] + [_MPILink(comm, r) for r in range(1, len(pieces))]
    conns = [c for link, p in zip(links, pieces) for c in piece_conns(link, len(p))]
    workers = RankWorkers(None, None, links=links, conns=conns, fd=fd)
    try:
        try:
            return build(workers.read(path, empty=trace.empty_ranks), workers)
        except WorkerFailed:
            pass                # the serial analysis reports what stopped the workers
    finally:
        workers.close()
    return serial()
