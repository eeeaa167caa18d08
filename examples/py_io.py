"""py_io.py -- collective I/O to one shared file from Python (mpi4py).

usage: mpirun -np P python py_io.py OUTDIR [KIB_PER_RANK [STEPS]]
       (defaults 1024 8)

r = rank, B = KIB_PER_RANK*1024 bytes (what a rank moves per step),
S = STEPS.  Block (s, r) of "OUTDIR/py_io.dat" is the B bytes at offset
(s*P + r)*B: step s fills the file's s-th slice of P*B bytes, rank by rank.
Each rank makes exactly these MPI calls (besides initialization, rank and
size queries, MPI_Get_count and finalization):

    MPI_File_open(MPI_COMM_WORLD, "OUTDIR/py_io.dat", CREATE|RDWR)
    for s in 0..S-1:
        MPI_File_write_at_all(offset (s*P + r)*B, B x MPI_BYTE)
        (s < S-1: "compute": exactly 4 x MPI_Allreduce of one MPI_INT)
    MPI_Barrier(MPI_COMM_WORLD)
    for s in 0..S-1:
        MPI_File_read_at_all(offset (s*P + r)*B, B x MPI_BYTE), verify
        (no communication between the reads)
    MPI_File_close

Content (numpy uint8): byte i of step s of rank r is (r*7 + s*13 + i) % 251;
the file holds S*P*B bytes (it is not truncated: use an empty OUTDIR).
Every read is checked (byte count and content), and every Allreduce result;
a mismatch or an MPI error (an exception) prints a message on stderr and
calls MPI_Abort.  Bad arguments (not positive integers, B > INT_MAX) print
the usage on rank 0 and every rank exits with status 2.

Only uppercase (buffer) mpi4py methods are used, with explicit MPI.BYTE /
MPI.INT datatypes, so each call maps to exactly one C MPI call.

The model iomodel builds from a trace (docs/commands/analyze.md), P > 1,
S > 1:
  files: "py_io.dat", shared (opened on MPI_COMM_WORLD), np P, role inout,
      iof_size = inf_size = size = extent = S*P*B.
  threshold: the communication calls between consecutive writes are 4, between
      consecutive reads 0 (write -> read is not a candidate pair: another
      operation and routine).  Distinct {0, 4}: ratio (1+4)/(1+0) = 5 >= 4 ->
      two groups -> max_comm_gap 0.  So, as the 120 MPI_Sendrecv of
      btio_like.c, the 4 Allreduce split the writes: each write is a burst
      of its own.  (With even 1 call between the reads, {1, 4} would be one
      group, 5/2 < 4, the default 8 would apply and the writes would merge
      into one phase of rep S.)
  phases 1..S (step s = id - 1): write, MPI_File_write_at_all, collective,
      np P, iop 1, rs B, rep 1, weight P*B, sequential (one operation per
      process), offsets first s*P*B, per_rank B; logical time first 4*s.
  phase S+1: read, MPI_File_read_at_all, collective, np P, iop 1, rs B,
      rep S, weight S*P*B, strided (a rank's reads are P*B apart, not B),
      offsets first 0, per_rank B, stride P*B; logical time first
      4*(S-1) + 1 (the barrier), comm_between 0.
  runs [1, S], [S+1, S+1] (the writes differ only in offsets.first and
  logical time); model weight 2*S*P*B, storage_capacity S*P*B.
At the defaults and 4 ranks: 8 write phases of rs 1 MiB (weight 4 MiB each)
and 1 read phase of rs 1 MiB, rep 8 (weight 32 MiB).  (S = 1: no candidate
pairs, max_comm_gap 8, one write and one read phase of rep 1; P = 1: the
file is unique and the reads sequential.)
"""
import os
import sys

import numpy as np
from mpi4py import MPI

USAGE = ("usage: mpirun -np P python py_io.py OUTDIR [KIB_PER_RANK [STEPS]]  "
         "(positive integers, defaults 1024 8)")
INT_MAX = 2**31 - 1
COMPUTE_CALLS = 4       # MPI_Allreduce between two writes


def die(msg):
    sys.stderr.write("py_io: %s\n" % msg)
    sys.stderr.flush()
    MPI.COMM_WORLD.Abort(1)


def pattern(rank, step, n):
    """Byte i: (rank*7 + step*13 + i) % 251 (one period of 251, repeated)."""
    period = np.roll(np.arange(251, dtype=np.uint8), -((rank * 7 + step * 13) % 251))
    return np.resize(period, n)


def positive(text, limit):
    """A positive integer <= limit, or None."""
    try:
        v = int(text, 10)
    except ValueError:
        return None
    return v if 1 <= v <= limit else None


def parse(argv):
    """(outdir, bytes per rank and step, steps), or None on a usage error."""
    if not 2 <= len(argv) <= 4 or not argv[1]:
        return None
    kib = positive(argv[2], INT_MAX // 1024) if len(argv) >= 3 else 1024
    steps = positive(argv[3], INT_MAX) if len(argv) >= 4 else 8
    if kib is None or steps is None:
        return None
    return argv[1], kib * 1024, steps


def compute(comm, nprocs, rank, step):
    """The communication between two steps: exactly COMPUTE_CALLS Allreduce."""
    sbuf = np.zeros(1, dtype=np.intc)
    rbuf = np.zeros(1, dtype=np.intc)
    for k in range(COMPUTE_CALLS):
        sbuf[0] = rank + step + k
        rbuf[0] = -1
        comm.Allreduce([sbuf, MPI.INT], [rbuf, MPI.INT], op=MPI.SUM)
        if rbuf[0] != nprocs * (nprocs - 1) // 2 + nprocs * (step + k):
            die("Allreduce result mismatch")


def main():
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    nprocs = comm.Get_size()
    args = parse(sys.argv)
    if args is None:
        if rank == 0:
            sys.stderr.write("py_io: %s\n" % USAGE)
            sys.stderr.flush()
        sys.exit(2)          # every rank: mpi4py finalizes at exit
    outdir, blk, steps = args
    path = os.path.join(outdir, "py_io.dat")

    fh = MPI.File.Open(comm, path, MPI.MODE_CREATE | MPI.MODE_RDWR)
    for s in range(steps):
        fh.Write_at_all((s * nprocs + rank) * blk, [pattern(rank, s, blk), MPI.BYTE])
        if s < steps - 1:
            compute(comm, nprocs, rank, s)

    comm.Barrier()

    rbuf = np.empty(blk, dtype=np.uint8)
    status = MPI.Status()
    for s in range(steps):
        rbuf[:] = 0
        fh.Read_at_all((s * nprocs + rank) * blk, [rbuf, MPI.BYTE], status)
        if status.Get_count(MPI.BYTE) != blk:
            die("short read")
        if not np.array_equal(rbuf, pattern(rank, s, blk)):
            die("read-back data mismatch")
    fh.Close()


if __name__ == "__main__":
    try:
        main()
    except Exception as exc:  # an uncaught exception would hang the other ranks
        die("%s: %s" % (type(exc).__name__, exc))
