"""`iomodel analyze` as an MPI job (mpi4py): under `mpirun -np P` or `srun`,
the trace's rank traces are split into P blocks balanced by bytes, as `-j P`
splits them (analyzer/parallel.py).  Process 0 reads the first block in a
thread of its own and runs the analysis; process r > 0 reads block r and
answers process 0's passes over MPI, the bursts it is asked for sent back
with its answer (it shares no memory with process 0, which may be on another
node).  The model is the one `-j 1` gives.  Process 0 writes it; the others
write nothing.

Any failure of a worker (a damaged share above all) sends process 0 to the
serial analysis, which reports it as it always does; process 0 first takes
every answer it is owed and tells every worker to stop, so no process waits
for ever.
"""
import os
import queue
import threading
import time

from .parallel import RankWorkers, Stopped, WorkerFailed, _serve, split_sources

__all__ = ["world", "analyze_in_job"]

# the count of processes a launcher gives each it starts: Open MPI's mpirun, Hydra
# (MPICH) and srun --mpi=pmi2; srun --mpi=pmix gives its step's tasks beside PMIx's rank
# (a batch script's own shell has SLURM_NTASKS, and no PMIX_RANK)
_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE")
_TAG = 7017        # the analysis's messages, apart from anything else on COMM_WORLD
# the analyzer's requests a worker answers (the others only tell it something)
_ASKS = {"wishes", "contest", "numbers", "busy", "columns"}


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


def _is_done(msg):
    """The analyzer's ("done",), told apart from messages of arrays."""
    return isinstance(msg, tuple) and len(msg) == 1 and isinstance(msg[0], str) and msg[0] == "done"


def _asks(msg):
    """Whether a message of the analyzer's wants an answer."""
    if isinstance(msg, tuple) and msg and isinstance(msg[0], str):
        return msg[0] in _ASKS
    return isinstance(msg, tuple) and len(msg) == 7      # the maps of pass 1: answered with its gaps


class _MPIConn:
    """Process 0's end of its link to a worker process: what it sends, and the
    answers it is owed (pending), so that closing takes them all first."""

    shares_memory = False

    def __init__(self, comm, peer):
        self.comm, self.peer, self.pending, self.gone = comm, peer, 1, False   # owed: the read

    def send(self, msg):
        if self.gone:           # told to stop, or stopped by its own failure
            return
        self.comm.send(msg, dest=self.peer, tag=_TAG)
        self.pending += _asks(msg)
        self.gone = _is_done(msg)

    def recv(self):
        msg = _wait(self.comm, self.peer)
        self.pending -= 1
        if msg[0] == "error":
            self.gone, self.pending = True, 0
        return msg

    def close(self):
        while self.pending > 0 and not self.gone:
            self.recv()
        self.send(("done",))


class _WorkerEnd:
    """A worker process's end of its link to process 0."""

    def __init__(self, comm):
        self.comm = comm

    def send(self, msg):
        self.comm.send(msg, dest=0, tag=_TAG)

    def recv(self):
        msg = _wait(self.comm, 0)
        if _is_done(msg):
            raise Stopped()
        return msg

    def close(self):
        pass


class _ThreadConn:
    """Process 0's link to the worker thread that reads its own block."""

    shares_memory = True

    def __init__(self, sources, fd):
        self.to, self.back = queue.Queue(), queue.Queue()
        end = _Pair(self.back, self.to)
        self.thread = threading.Thread(target=_serve, args=(end, sources, fd), daemon=True)
        self.thread.start()

    def send(self, msg):
        self.to.put(msg)

    def recv(self):
        return self.back.get()

    def close(self):
        self.to.put(("done",))
        self.thread.join()


class _Pair:
    def __init__(self, out, into):
        self.out, self.into = out, into

    def send(self, msg):
        self.out.put(msg)

    def recv(self):
        msg = self.into.get()
        if _is_done(msg):
            raise Stopped()
        return msg

    def close(self):
        pass


def analyze_in_job(comm, path, build, serial):
    """Process 0: the model by `build(ops, workers)`, or `serial()` where the
    workers cannot; the other processes: serve their block, return None."""
    from .trace import Trace
    rank, size = comm.Get_rank(), comm.Get_size()
    blocks = None
    if rank == 0:
        try:
            trace = Trace(path, lazy=True)
            if len(trace.rank_files) > 1 and hasattr(os, "memfd_create"):
                blocks = split_sources(trace.rank_files, size)
        except Exception:       # noqa: BLE001 - the serial analysis says what is wrong
            blocks = None
    blocks = comm.bcast(blocks, root=0)
    if rank:
        if blocks is not None and rank < len(blocks):
            _serve(_WorkerEnd(comm), blocks[rank], None)
        return None
    if blocks is None:
        return serial()
    fd = os.memfd_create("iomodel-bursts", os.MFD_CLOEXEC)
    conns = [_ThreadConn(blocks[0], fd)] + [_MPIConn(comm, r) for r in range(1, len(blocks))]
    workers = RankWorkers(None, None, conns=conns, fd=fd)
    try:
        try:
            return build(workers.read(path, empty=trace.empty_ranks), workers)
        except WorkerFailed:
            pass                # the serial analysis reports what stopped the workers
    finally:
        workers.close()
    return serial()
