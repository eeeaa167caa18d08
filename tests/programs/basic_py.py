"""basic_py.py -- the "basic" MPI-IO sequence (mpi4py version).

Same sequence as basic_c.c (see its header and expected.py):
  open "shared.dat"; Write_at_all(b=0); Allreduce x2; Write_at_all(b=1);
  Allreduce x2; Write_at_all(b=2); Write_at; Barrier; Read_at_all;
  Read_at; Close.
Block b (0..2, 1024 bytes) at offset (b*nprocs + rank)*1024; independent
block (b=3, 512 bytes) at 3*nprocs*1024 + rank*512.
Byte j of block b holds (rank*7 + b*13 + j) % 251.

Only uppercase (buffer) mpi4py methods are used, with explicit MPI.BYTE /
MPI.INT datatypes, so each call maps to exactly one C MPI call.

usage: mpirun -np 4 python basic_py.py OUTDIR
"""
import os
import sys

import numpy as np
from mpi4py import MPI

BLK = 1024
IBLK = 512


def fill(rank, b, n):
    return ((rank * 7 + b * 13 + np.arange(n)) % 251).astype(np.uint8)


def die(msg):
    sys.stderr.write("basic_py: %s\n" % msg)
    sys.stderr.flush()
    MPI.COMM_WORLD.Abort(1)


def check_sum(comm, rank, nprocs):
    sbuf = np.array([rank], dtype=np.intc)
    rbuf = np.array([-1], dtype=np.intc)
    comm.Allreduce([sbuf, MPI.INT], [rbuf, MPI.INT], op=MPI.SUM)
    if rbuf[0] != nprocs * (nprocs - 1) // 2:
        die("Allreduce result mismatch")


def main():
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    nprocs = comm.Get_size()
    if len(sys.argv) < 2:
        die("usage: basic_py.py OUTDIR")
    path = os.path.join(sys.argv[1], "shared.dat")

    fh = MPI.File.Open(comm, path, MPI.MODE_CREATE | MPI.MODE_RDWR)

    for b in range(3):
        buf = fill(rank, b, BLK)
        off = (b * nprocs + rank) * BLK
        fh.Write_at_all(off, [buf, MPI.BYTE])
        if b < 2:
            check_sum(comm, rank, nprocs)
            check_sum(comm, rank, nprocs)

    ioff = 3 * nprocs * BLK + rank * IBLK
    fh.Write_at(ioff, [fill(rank, 3, IBLK), MPI.BYTE])

    comm.Barrier()

    rbuf = bytearray(BLK)
    fh.Read_at_all(rank * BLK, [rbuf, MPI.BYTE])
    if bytes(rbuf) != fill(rank, 0, BLK).tobytes():
        die("Read_at_all data mismatch")

    rbuf = bytearray(IBLK)
    fh.Read_at(ioff, [rbuf, MPI.BYTE])
    if bytes(rbuf) != fill(rank, 3, IBLK).tobytes():
        die("Read_at data mismatch")

    fh.Close()


if __name__ == "__main__":
    try:
        main()
    except Exception as exc:  # an uncaught exception would hang the other ranks
        die("exception: %r" % (exc,))
