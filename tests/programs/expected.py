"""Expected MPI behaviour of the test programs in tests/programs/.

Everything here was worked out by hand from the program sources (each
program's header comment states the same sequence).  Nothing was copied from
program or tracer output.  ``python expected.py`` runs internal consistency
checks (formulas vs. per-rank event lists vs. small literal tables computed
by hand for 4 ranks).

Conventions
-----------
* ``np`` is the number of ranks, ``rank`` is a rank in ``range(np)``.
* Routine names are the C names, also for the Fortran and Python programs
  (but see FORTRAN_SYMBOLS: Open MPI's Fortran bindings call the C
  ``PMPI_*`` functions directly, so a C-level ``MPI_*`` interposer does not
  see Fortran calls).
* An *event* is a 4-tuple ``(routine, file, offset, nbytes)``:
    - data-access calls (DATA_ACCESS): ``file`` is the basename, ``offset``
      the absolute byte offset in the file of the first byte accessed (for
      explicit-offset calls with the default view this is the offset
      argument; for individual/shared file pointer calls it is the pointer
      position in bytes; for btio_like see btio_call_args), ``nbytes`` the
      number of bytes moved (count * size of datatype).
    - MPI_File_seek / MPI_File_seek_shared: ``offset`` = new pointer
      position in bytes, ``nbytes`` None.
    - MPI_File_set_view: ``offset`` = displacement, ``nbytes`` None.
    - MPI_File_open / MPI_File_close and completions (COMPLETIONS): ``file``
      set, ``offset``/``nbytes`` None.
    - communication calls (COMMUNICATION): ``file``/``offset``/``nbytes``
      None.
  ``events(prog, np, rank, ...)`` lists, in program order, every call of
  those kinds that the rank makes.  Not listed (made by every program, not
  I/O or communication): MPI_Init (mpi4py: MPI_Init_thread), MPI_Finalize,
  MPI_Comm_rank, MPI_Comm_size, and in btio_like MPI_Dims_create,
  MPI_Type_contiguous, MPI_Type_create_subarray, MPI_Type_commit,
  MPI_Type_free; in plain_output MPI_Get_count.
* ``io_calls`` = the data-access events only (``_begin`` and nonblocking
  ``i`` calls are data-access calls; ``_end``, MPI_Wait, MPI_Waitall and
  MPI_Test are completions).
* ``completions`` = list of ``(completion_routine, (indices into io_calls))``
  in program order.
* ``comm_gaps`` = list of ``len(io_calls) + 1`` dicts ``{routine: count}``:
  element 0 = communication calls before the first data-access call (after
  MPI_Init), element k (1 <= k < len) = calls between io_calls[k-1] and
  io_calls[k], last element = calls after the last data-access call (up to
  MPI_Finalize).  Empty dict = none.
* ``routine_totals`` = number of calls per routine summed over all ranks.
  MPI_Test is special: the number of MPI_Test calls in nonblocking.c is
  timing dependent; the value given is the number of MPI_Test calls that
  return flag = true (exactly one per rank); the raw count is >= that.

Programs (PROGRAMS below): the five "basic" programs share one expectation
(prog name "basic"); btio_like takes parameters nx, ny, nz, nsteps.
"""

# --------------------------------------------------------------------------
# routine classes

DATA_ACCESS = frozenset(
    "MPI_File_" + n
    for n in (
        "read write read_at write_at read_all write_all read_at_all "
        "write_at_all read_shared write_shared read_ordered write_ordered "
        "iread iwrite iread_at iwrite_at iread_all iwrite_all iread_at_all "
        "iwrite_at_all iread_shared iwrite_shared "
        "read_all_begin write_all_begin read_at_all_begin write_at_all_begin "
        "read_ordered_begin write_ordered_begin"
    ).split()
)
COMPLETIONS = frozenset(
    ["MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test",
     "MPI_Testall", "MPI_Testany", "MPI_Testsome"]
    + ["MPI_File_" + n for n in (
        "read_all_end write_all_end read_at_all_end write_at_all_end "
        "read_ordered_end write_ordered_end").split()]
)
FILE_MGMT = frozenset(["MPI_File_open", "MPI_File_close", "MPI_File_set_view",
                       "MPI_File_seek", "MPI_File_seek_shared"])
COMMUNICATION = frozenset(["MPI_Allreduce", "MPI_Barrier", "MPI_Sendrecv",
                           "MPI_Gather"])

# Fortran entry points actually called by the Fortran programs (Open MPI
# 4.1, gfortran): mpif.h and "use mpi" call mpi_<name>_ (lower case,
# trailing underscore; libmpi_mpifh.so), "use mpi_f08" calls
# mpi_<name>_f08_ (libmpi_usempif08.so).  Both end in PMPI_<Name> directly.
FORTRAN_SYMBOLS = {
    "basic_mpifh": "mpi_{lower}_",
    "basic_usempi": "mpi_{lower}_",
    "basic_f08": "mpi_{lower}_f08_",
}

# --------------------------------------------------------------------------
# program registry

# kind: "c" -> build_dir/<name>; "fortran" -> build_dir/<name>;
# "python" -> <venv python> tests/programs/<source>
# args: extra arguments after OUTDIR.  expect: name of the expectation.
PROGRAMS = {
    "basic_c": dict(kind="c", source="basic_c.c", np=4, args=[],
                    expect="basic", files=["shared.dat"]),
    "basic_mpifh": dict(kind="fortran", source="basic_mpifh.f90", np=4,
                        args=[], expect="basic", files=["shared.dat"]),
    "basic_usempi": dict(kind="fortran", source="basic_usempi.f90", np=4,
                         args=[], expect="basic", files=["shared.dat"]),
    "basic_f08": dict(kind="fortran", source="basic_f08.f90", np=4, args=[],
                      expect="basic", files=["shared.dat"]),
    "basic_py": dict(kind="python", source="basic_py.py", np=4, args=[],
                     expect="basic", files=["shared.dat"]),
    "btio_like": dict(kind="c", source="../../examples/btio_like.c", np=4, args=[],
                      expect="btio_like", files=["btio.dat"]),
    "nonblocking": dict(kind="c", source="nonblocking.c", np=4, args=[],
                        expect="nonblocking", files=["nb.dat"]),
    "pointers": dict(kind="c", source="pointers.c", np=4, args=[],
                     expect="pointers", files=["ptr.dat"]),
    "fpp": dict(kind="c", source="fpp.c", np=4, args=[], expect="fpp",
                files=["fpp.%d.dat" % r for r in range(4)]),
    "killed": dict(kind="c", source="killed.c", np=4, args=[],
                   expect="killed",
                   files=["killed.%d.dat" % r for r in range(4)]),
    "plain_output": dict(kind="c", source="plain_output.c", np=4, args=[],
                         expect="plain_output", files=["plain.dat"]),
}

# btio_like configurations that were run (np, nx, ny, nz, nsteps); all sizes
# divisible by btio_dims(np).  Command line: btio_like OUTDIR NX NY NZ NSTEPS
BTIO_CONFIGS = [
    (4, 8, 8, 8, 40),   # defaults (no extra arguments needed)
    (4, 8, 8, 8, 5),
    (9, 12, 12, 6, 5),
    (4, 12, 12, 12, 40),
    (9, 12, 12, 6, 40),
    (9, 18, 18, 9, 40),
    (1, 8, 8, 8, 5),
    (8, 8, 8, 8, 5),
    (6, 6, 4, 2, 3),
]


def _ev(routine, fname=None, offset=None, nbytes=None):
    return (routine, fname, offset, nbytes)


# --------------------------------------------------------------------------
# 1. basic (basic_c, basic_mpifh, basic_usempi, basic_f08, basic_py)

BASIC_BLK = 1024
BASIC_IBLK = 512


def basic_events(np, rank):
    f = "shared.dat"
    ioff = 3 * np * 1024 + rank * 512
    return [
        _ev("MPI_File_open", f),
        _ev("MPI_File_write_at_all", f, (0 * np + rank) * 1024, 1024),
        _ev("MPI_Allreduce"),
        _ev("MPI_Allreduce"),
        _ev("MPI_File_write_at_all", f, (1 * np + rank) * 1024, 1024),
        _ev("MPI_Allreduce"),
        _ev("MPI_Allreduce"),
        _ev("MPI_File_write_at_all", f, (2 * np + rank) * 1024, 1024),
        _ev("MPI_File_write_at", f, ioff, 512),
        _ev("MPI_Barrier"),
        _ev("MPI_File_read_at_all", f, rank * 1024, 1024),
        _ev("MPI_File_read_at", f, ioff, 512),
        _ev("MPI_File_close", f),
    ]


def basic_completions(np, rank):
    return []


def basic_comm_gaps(np, rank):
    return [{}, {"MPI_Allreduce": 2}, {"MPI_Allreduce": 2}, {},
            {"MPI_Barrier": 1}, {}, {}]


def basic_totals(np):
    return {
        "MPI_File_open": np,
        "MPI_File_write_at_all": 3 * np,
        "MPI_File_write_at": np,
        "MPI_File_read_at_all": np,
        "MPI_File_read_at": np,
        "MPI_File_close": np,
        "MPI_Allreduce": 4 * np,
        "MPI_Barrier": np,
    }


def basic_file_size(np):
    return 3 * np * 1024 + np * 512


# --------------------------------------------------------------------------
# 2. btio_like

BTIO_CELL = 40  # 5 doubles
# Communication before each write (btio_like.c): WR_INTERVAL = 5 time steps
# of COMM_PER_STEP = 24 MPI_Sendrecv (copy_faces 6, x/y/z_solve 6 each).
BTIO_COMM_PER_WRITE = 5 * 24   # 120, as NAS BT-IO (about 120)


def btio_dims(np):
    """What MPI_Dims_create(np, 3, {0,0,0}) returns (Open MPI 4.1.4).

    Checked by running a tiny C program for np = 1..16:
    1:(1,1,1) 2:(2,1,1) 3:(3,1,1) 4:(2,2,1) 5:(5,1,1) 6:(3,2,1) 7:(7,1,1)
    8:(2,2,2) 9:(3,3,1) 10:(5,2,1) 11:(11,1,1) 12:(3,2,2) 13:(13,1,1)
    14:(7,2,1) 15:(5,3,1) 16:(4,2,2)
    The MPI standard asks for dims as close to each other as possible, in
    non-increasing order.
    """
    table = {1: (1, 1, 1), 2: (2, 1, 1), 3: (3, 1, 1), 4: (2, 2, 1),
             5: (5, 1, 1), 6: (3, 2, 1), 7: (7, 1, 1), 8: (2, 2, 2),
             9: (3, 3, 1), 10: (5, 2, 1), 11: (11, 1, 1), 12: (3, 2, 2),
             13: (13, 1, 1), 14: (7, 2, 1), 15: (5, 3, 1), 16: (4, 2, 2)}
    return table[np]


def btio_block(np, nx, ny, nz, rank):
    """(start, local size) of rank's block, each a 3-tuple (x, y, z)."""
    d = btio_dims(np)
    if nx % d[0] or ny % d[1] or nz % d[2]:
        raise ValueError("sizes not divisible by dims %r" % (d,))
    coord = (rank // (d[1] * d[2]), (rank // d[2]) % d[1], rank % d[2])
    lsz = (nx // d[0], ny // d[1], nz // d[2])
    start = tuple(c * l for c, l in zip(coord, lsz))
    return start, lsz


def btio_local_cells(np, nx, ny, nz):
    d = btio_dims(np)
    return (nx // d[0]) * (ny // d[1]) * (nz // d[2])


def btio_step_bytes(nx, ny, nz):
    """Bytes of one step (the whole global array) = file stride per step."""
    return nx * ny * nz * BTIO_CELL


def btio_expected_ranges(np, nx, ny, nz, nsteps, rank, step=0):
    """Sorted, merged (offset, length) byte ranges that rank writes (and
    later reads) in step ``step`` (default 0; step s = step 0 shifted by
    s * btio_step_bytes).

    C order with sizes {NX,NY,NZ}: cell (gx,gy,gz) is at byte
    ((gx*NY + gy)*NZ + gz) * 40 within a step, so the Z dimension is
    contiguous; each (x, y) row of the local block is one run of lz cells.
    """
    if not 0 <= step < nsteps:
        raise ValueError("step out of range")
    (x0, y0, z0), (lx, ly, lz) = btio_block(np, nx, ny, nz, rank)
    base = step * btio_step_bytes(nx, ny, nz)
    runs = []
    for gx in range(x0, x0 + lx):
        for gy in range(y0, y0 + ly):
            off = base + ((gx * ny + gy) * nz + z0) * BTIO_CELL
            length = lz * BTIO_CELL
            if runs and runs[-1][0] + runs[-1][1] == off:
                runs[-1] = (runs[-1][0], runs[-1][1] + length)
            else:
                runs.append((off, length))
    return runs


def btio_call_args(np, nx, ny, nz, nsteps, rank):
    """Arguments of the data-access calls, in order: list of
    (routine, offset_argument_in_etypes, count_in_etypes).  The etype is
    MPI_Type_contiguous(5, MPI_DOUBLE) (size 40), the view displacement 0,
    so the view-relative byte offset is offset_argument * 40."""
    lc = btio_local_cells(np, nx, ny, nz)
    return ([("MPI_File_write_at_all", s * lc, lc) for s in range(nsteps)]
            + [("MPI_File_read_at_all", s * lc, lc) for s in range(nsteps)])


def btio_events(np, rank, nx=8, ny=8, nz=8, nsteps=40):
    f = "btio.dat"
    lc = btio_local_cells(np, nx, ny, nz)
    nbytes = lc * BTIO_CELL
    ev = [_ev("MPI_File_open", f), _ev("MPI_File_set_view", f, 0)]
    for s in range(nsteps):
        ev += [_ev("MPI_Sendrecv")] * BTIO_COMM_PER_WRITE
        first = btio_expected_ranges(np, nx, ny, nz, nsteps, rank, s)[0][0]
        ev.append(_ev("MPI_File_write_at_all", f, first, nbytes))
    for s in range(nsteps):
        if s > 0:
            ev.append(_ev("MPI_Allreduce"))
        first = btio_expected_ranges(np, nx, ny, nz, nsteps, rank, s)[0][0]
        ev.append(_ev("MPI_File_read_at_all", f, first, nbytes))
    ev.append(_ev("MPI_File_close", f))
    return ev


def btio_completions(np, rank, **kw):
    return []


def btio_comm_gaps(np, rank, nx=8, ny=8, nz=8, nsteps=40):
    return ([{"MPI_Sendrecv": BTIO_COMM_PER_WRITE}] * nsteps  # before each write
            + [{}]                              # last write -> first read
            + [{"MPI_Allreduce": 1}] * (nsteps - 1)  # between reads
            + [{}])                             # after last read


def btio_totals(np, nx=8, ny=8, nz=8, nsteps=40):
    return {
        "MPI_File_open": np,
        "MPI_File_set_view": np,
        "MPI_File_write_at_all": np * nsteps,
        "MPI_File_read_at_all": np * nsteps,
        "MPI_File_close": np,
        "MPI_Sendrecv": BTIO_COMM_PER_WRITE * np * nsteps,
        "MPI_Allreduce": np * (nsteps - 1),
    }


def btio_file_size(nx, ny, nz, nsteps):
    return nsteps * btio_step_bytes(nx, ny, nz)


def btio_value(step, gx, gy, gz, comp):
    """Value of every double of cell (gx,gy,gz), component comp."""
    return step * 1e6 + gx * 10000.0 + gy * 100.0 + gz + comp * 0.1


# --------------------------------------------------------------------------
# 3. nonblocking


def nonblocking_events(np, rank):
    f = "nb.dat"
    return [
        _ev("MPI_File_open", f),
        _ev("MPI_File_iwrite_at", f, rank * 2048, 2048),               # io 0
        _ev("MPI_File_iwrite_at_all", f, np * 2048 + rank * 1024, 1024),  # 1
        _ev("MPI_Waitall", f),
        _ev("MPI_File_iread_at", f, rank * 2048, 2048),                # io 2
        _ev("MPI_Wait", f),
        _ev("MPI_File_write_at_all_begin", f,
            np * 2048 + np * 1024 + rank * 512, 512),                  # io 3
        _ev("MPI_File_write_at_all_end", f),
        _ev("MPI_File_seek", f, rank * 2048),
        _ev("MPI_File_read_all_begin", f, rank * 2048, 256),           # io 4
        _ev("MPI_File_read_all_end", f),
        _ev("MPI_File_iread", f, rank * 2048 + 256, 256),              # io 5
        _ev("MPI_Test", f),   # one or more MPI_Test; only the last has flag
        _ev("MPI_File_close", f),
        _ev("MPI_Barrier"),   # after close, before rank 0's stdio check
    ]


def nonblocking_completions(np, rank):
    return [
        ("MPI_Waitall", (0, 1)),
        ("MPI_Wait", (2,)),
        ("MPI_File_write_at_all_end", (3,)),
        ("MPI_File_read_all_end", (4,)),
        ("MPI_Test", (5,)),
    ]


def nonblocking_comm_gaps(np, rank):
    return [{}, {}, {}, {}, {}, {}, {"MPI_Barrier": 1}]


def nonblocking_totals(np):
    return {
        "MPI_File_open": np,
        "MPI_File_iwrite_at": np,
        "MPI_File_iwrite_at_all": np,
        "MPI_Waitall": np,
        "MPI_File_iread_at": np,
        "MPI_Wait": np,
        "MPI_File_write_at_all_begin": np,
        "MPI_File_write_at_all_end": np,
        "MPI_File_seek": np,
        "MPI_File_read_all_begin": np,
        "MPI_File_read_all_end": np,
        "MPI_File_iread": np,
        "MPI_Test": np,  # successful ones; raw count >= np
        "MPI_File_close": np,
        "MPI_Barrier": np,
    }


def nonblocking_file_size(np):
    return np * (2048 + 1024 + 512)


# --------------------------------------------------------------------------
# 4. pointers


def pointers_events(np, rank):
    f = "ptr.dat"
    base = np * 4096                    # 16384 for np = 4
    ordered = base + 50 * rank * (rank + 1)   # sum_{q<rank} (q+1)*100
    ev = [
        _ev("MPI_File_open", f),
        _ev("MPI_File_seek", f, rank * 4096),
        _ev("MPI_File_write", f, rank * 4096, 1000),
        _ev("MPI_File_write", f, rank * 4096 + 1000, 1000),
        _ev("MPI_File_write_all", f, rank * 4096 + 2000, 96),
        _ev("MPI_Barrier"),
        _ev("MPI_File_seek_shared", f, base),
        _ev("MPI_File_write_ordered", f, ordered, (rank + 1) * 100),
        _ev("MPI_Barrier"),
    ]
    if rank == 0:
        # total ordered bytes = 100 * np*(np+1)/2 (1000 for np = 4)
        ev.append(_ev("MPI_File_write_shared", f,
                      base + 50 * np * (np + 1), 50))
    ev += [_ev("MPI_File_close", f), _ev("MPI_Barrier")]
    return ev


def pointers_completions(np, rank):
    return []


def pointers_comm_gaps(np, rank):
    if rank == 0:
        return [{}, {}, {}, {"MPI_Barrier": 1}, {"MPI_Barrier": 1},
                {"MPI_Barrier": 1}]
    return [{}, {}, {}, {"MPI_Barrier": 1},
            {"MPI_Barrier": 2}]  # after ordered: barrier; close; barrier


def pointers_totals(np):
    return {
        "MPI_File_open": np,
        "MPI_File_seek": np,
        "MPI_File_write": 2 * np,
        "MPI_File_write_all": np,
        "MPI_File_seek_shared": np,
        "MPI_File_write_ordered": np,
        "MPI_File_write_shared": 1,
        "MPI_File_close": np,
        "MPI_Barrier": 3 * np,
    }


def pointers_file_size(np):
    return np * 4096 + 50 * np * (np + 1) + 50


# --------------------------------------------------------------------------
# 5. fpp (file per process, MPI_COMM_SELF)


def fpp_events(np, rank):
    f = "fpp.%d.dat" % rank
    return ([_ev("MPI_File_open", f)]
            + [_ev("MPI_File_write_at", f, i * 4096, 4096) for i in range(4)]
            + [_ev("MPI_File_read_at", f, 0, 16384),
               _ev("MPI_File_close", f)])


def fpp_completions(np, rank):
    return []


def fpp_comm_gaps(np, rank):
    return [{}] * 6


def fpp_totals(np):
    return {
        "MPI_File_open": np,
        "MPI_File_write_at": 4 * np,
        "MPI_File_read_at": np,
        "MPI_File_close": np,
    }


def fpp_file_size(np):
    return 16384  # each file


# --------------------------------------------------------------------------
# 6. killed (rank 0 raises SIGKILL; mpirun then kills the others and exits
#    non-zero, 137 observed).  The lists below are what each rank has done
#    before it dies; a partial trace may be cut anywhere in them.  Ranks
#    != 0 enter a second MPI_Barrier that never returns (included below as
#    the last event: a tracer may or may not record a call that never
#    completes).


KILLED_N = 1000


def killed_events(np, rank):
    f = "killed.%d.dat" % rank
    ev = [_ev("MPI_File_open", f)]
    ev += [_ev("MPI_File_write_at", f, i * 8, 8) for i in range(KILLED_N)]
    if rank != 0:
        ev.append(_ev("MPI_File_close", f))
    ev.append(_ev("MPI_Barrier"))
    if rank != 0:
        ev.append(_ev("MPI_Barrier"))  # never returns
    return ev


def killed_completions(np, rank):
    return []


def killed_comm_gaps(np, rank):
    return [{}] * KILLED_N + [{"MPI_Barrier": 1 if rank == 0 else 2}]


def killed_totals(np):
    """Calls entered before the kill (the second barrier on ranks != 0
    never completes)."""
    return {
        "MPI_File_open": np,
        "MPI_File_write_at": KILLED_N * np,
        "MPI_File_close": np - 1,
        "MPI_Barrier": np + (np - 1),
    }


def killed_file_size(np):
    return KILLED_N * 8  # each file; 8-byte little-endian uint64 i at i*8


# --------------------------------------------------------------------------
# 7. plain_output


def plain_output_events(np, rank):
    f = "plain.dat"
    return [
        _ev("MPI_File_open", f),
        _ev("MPI_File_write_at_all", f, 128 * rank * (rank + 1),
            (rank + 1) * 256),
        _ev("MPI_Gather"),
        _ev("MPI_File_close", f),
        _ev("MPI_Barrier"),
    ]


def plain_output_completions(np, rank):
    return []


def plain_output_comm_gaps(np, rank):
    return [{}, {"MPI_Gather": 1, "MPI_Barrier": 1}]


def plain_output_totals(np):
    return {
        "MPI_File_open": np,
        "MPI_File_write_at_all": np,
        "MPI_Gather": np,
        "MPI_File_close": np,
        "MPI_Barrier": np,
    }


def plain_output_file_size(np):
    return 128 * np * (np + 1)


def plain_output_stdout(np):
    """Exact stdout of the program (all printed by rank 0)."""
    lines = ["rank %d of %d wrote %d bytes\n" % (r, np, (r + 1) * 256)
             for r in range(np)]
    lines.append("total %d bytes in plain.dat\n" % (128 * np * (np + 1)))
    return "".join(lines)


# --------------------------------------------------------------------------
# generic accessors

_TABLE = {
    "basic": (basic_events, basic_completions, basic_comm_gaps,
              basic_totals),
    "btio_like": (btio_events, btio_completions, btio_comm_gaps,
                  btio_totals),
    "nonblocking": (nonblocking_events, nonblocking_completions,
                    nonblocking_comm_gaps, nonblocking_totals),
    "pointers": (pointers_events, pointers_completions, pointers_comm_gaps,
                 pointers_totals),
    "fpp": (fpp_events, fpp_completions, fpp_comm_gaps, fpp_totals),
    "killed": (killed_events, killed_completions, killed_comm_gaps,
               killed_totals),
    "plain_output": (plain_output_events, plain_output_completions,
                     plain_output_comm_gaps, plain_output_totals),
}


def _key(prog):
    return PROGRAMS[prog]["expect"] if prog in PROGRAMS else prog


def events(prog, np, rank, **kw):
    """Every I/O, completion and communication call of ``rank``, in order.
    ``prog`` is a program name (e.g. "basic_f08") or expectation name
    ("basic").  kw: nx, ny, nz, nsteps for btio_like."""
    return _TABLE[_key(prog)][0](np, rank, **kw)


def io_calls(prog, np, rank, **kw):
    """Ordered (routine, file_basename, absolute_byte_offset, nbytes)."""
    return [e for e in events(prog, np, rank, **kw) if e[0] in DATA_ACCESS]


def completions(prog, np, rank, **kw):
    return _TABLE[_key(prog)][1](np, rank, **kw)


def comm_gaps(prog, np, rank, **kw):
    return _TABLE[_key(prog)][2](np, rank, **kw)


def routine_totals(prog, np, **kw):
    return _TABLE[_key(prog)][3](np, **kw)


# --------------------------------------------------------------------------
# literal tables worked out by hand for np = 4 (used by _selfcheck)

_HAND_NP4 = {
    "basic": {
        0: [("MPI_File_write_at_all", 0, 1024),
            ("MPI_File_write_at_all", 4096, 1024),
            ("MPI_File_write_at_all", 8192, 1024),
            ("MPI_File_write_at", 12288, 512),
            ("MPI_File_read_at_all", 0, 1024),
            ("MPI_File_read_at", 12288, 512)],
        1: [("MPI_File_write_at_all", 1024, 1024),
            ("MPI_File_write_at_all", 5120, 1024),
            ("MPI_File_write_at_all", 9216, 1024),
            ("MPI_File_write_at", 12800, 512),
            ("MPI_File_read_at_all", 1024, 1024),
            ("MPI_File_read_at", 12800, 512)],
        2: [("MPI_File_write_at_all", 2048, 1024),
            ("MPI_File_write_at_all", 6144, 1024),
            ("MPI_File_write_at_all", 10240, 1024),
            ("MPI_File_write_at", 13312, 512),
            ("MPI_File_read_at_all", 2048, 1024),
            ("MPI_File_read_at", 13312, 512)],
        3: [("MPI_File_write_at_all", 3072, 1024),
            ("MPI_File_write_at_all", 7168, 1024),
            ("MPI_File_write_at_all", 11264, 1024),
            ("MPI_File_write_at", 13824, 512),
            ("MPI_File_read_at_all", 3072, 1024),
            ("MPI_File_read_at", 13824, 512)],
    },
    "nonblocking": {
        r: [("MPI_File_iwrite_at", 2048 * r, 2048),
            ("MPI_File_iwrite_at_all", (8192, 9216, 10240, 11264)[r], 1024),
            ("MPI_File_iread_at", 2048 * r, 2048),
            ("MPI_File_write_at_all_begin",
             (12288, 12800, 13312, 13824)[r], 512),
            ("MPI_File_read_all_begin", (0, 2048, 4096, 6144)[r], 256),
            ("MPI_File_iread", (256, 2304, 4352, 6400)[r], 256)]
        for r in range(4)
    },
    "pointers": {
        0: [("MPI_File_write", 0, 1000), ("MPI_File_write", 1000, 1000),
            ("MPI_File_write_all", 2000, 96),
            ("MPI_File_write_ordered", 16384, 100),
            ("MPI_File_write_shared", 17384, 50)],
        1: [("MPI_File_write", 4096, 1000), ("MPI_File_write", 5096, 1000),
            ("MPI_File_write_all", 6096, 96),
            ("MPI_File_write_ordered", 16484, 200)],
        2: [("MPI_File_write", 8192, 1000), ("MPI_File_write", 9192, 1000),
            ("MPI_File_write_all", 10192, 96),
            ("MPI_File_write_ordered", 16684, 300)],
        3: [("MPI_File_write", 12288, 1000), ("MPI_File_write", 13288, 1000),
            ("MPI_File_write_all", 14288, 96),
            ("MPI_File_write_ordered", 16984, 400)],
    },
    "plain_output": {0: [("MPI_File_write_at_all", 0, 256)],
                     1: [("MPI_File_write_at_all", 256, 512)],
                     2: [("MPI_File_write_at_all", 768, 768)],
                     3: [("MPI_File_write_at_all", 1536, 1024)]},
}

# btio_like, np=4, 8x8x8: dims (2,2,1), local block 4x4x8 = 128 cells =
# 5120 bytes, step stride 20480; each x-plane of the block is one run of
# 4 rows * 8 cells = 1280 bytes at (x*64 + y0*8)*40.
_HAND_BTIO_NP4_STEP0 = {
    0: [(0, 1280), (2560, 1280), (5120, 1280), (7680, 1280)],
    1: [(1280, 1280), (3840, 1280), (6400, 1280), (8960, 1280)],
    2: [(10240, 1280), (12800, 1280), (15360, 1280), (17920, 1280)],
    3: [(11520, 1280), (14080, 1280), (16640, 1280), (19200, 1280)],
}
# btio_like, np=9, 12x12x6: dims (3,3,1), block 4x4x6 = 96 cells = 3840
# bytes, step stride 34560; runs of 4*6 cells = 960 bytes at
# x*2880 + y0*240.  Rank 4 = coords (1,1,0), start (4,4,0); step 2 adds
# 69120.
_HAND_BTIO_NP9_RANK4_STEP2 = [(81600, 960), (84480, 960), (87360, 960),
                              (90240, 960)]
# np=1: the whole step is one range; np=8 8x8x8: dims (2,2,2), block 4x4x4,
# runs of 4 cells (160 bytes), rank 7 = coords (1,1,1) start (4,4,4):
# first run at ((4*8+4)*8+4)*40 = 11680.


def _selfcheck():
    from collections import Counter

    progs = ["basic", "btio_like", "nonblocking", "pointers", "fpp",
             "killed", "plain_output"]
    cfgs = {p: [(n, {}) for n in (1, 2, 4, 9)] for p in progs}
    cfgs["btio_like"] = [(c[0], dict(nx=c[1], ny=c[2], nz=c[3],
                                     nsteps=c[4])) for c in BTIO_CONFIGS]
    for p in progs:
        for n, kw in cfgs[p]:
            total = Counter()
            for r in range(n):
                ev = events(p, n, r, **kw)
                io = io_calls(p, n, r, **kw)
                for e in ev:
                    assert e[0] in DATA_ACCESS | COMPLETIONS | FILE_MGMT \
                        | COMMUNICATION, e
                total.update(e[0] for e in ev)
                # comm gaps derived from the event list
                gaps, cur = [], Counter()
                for e in ev:
                    if e[0] in DATA_ACCESS:
                        gaps.append(dict(cur))
                        cur = Counter()
                    elif e[0] in COMMUNICATION:
                        cur[e[0]] += 1
                gaps.append(dict(cur))
                assert gaps == comm_gaps(p, n, r, **kw), (p, n, r, gaps)
                # completions refer to earlier io calls, each completed once
                done = [i for _, ix in completions(p, n, r, **kw) for i in ix]
                assert len(done) == len(set(done)), (p, n, r)
                comp_ev = [e[0] for e in ev if e[0] in COMPLETIONS]
                assert comp_ev == [c for c, _ in completions(p, n, r, **kw)]
                if p == "killed":
                    continue
                # nonblocking / split calls are exactly the completed ones
                need = [i for i, e in enumerate(io)
                        if e[0].startswith("MPI_File_i")
                        or e[0].endswith("_begin")]
                assert sorted(done) == need, (p, n, r)
            want = {k: v for k, v in routine_totals(p, n, **kw).items() if v}
            assert dict(total) == want, (p, n, total)
    # literal np=4 tables
    for p, table in _HAND_NP4.items():
        for r, calls in table.items():
            got = [(e[0], e[2], e[3]) for e in io_calls(p, 4, r)]
            assert got == calls, (p, r, got)
    for r, ranges in _HAND_BTIO_NP4_STEP0.items():
        assert btio_expected_ranges(4, 8, 8, 8, 5, r) == ranges
        assert io_calls("btio_like", 4, r)[0][2:] == (ranges[0][0], 5120)
    assert btio_expected_ranges(9, 12, 12, 6, 5, 4, 2) == \
        _HAND_BTIO_NP9_RANK4_STEP2
    assert btio_expected_ranges(1, 8, 8, 8, 5, 0, 3) == [(61440, 20480)]
    assert btio_expected_ranges(8, 8, 8, 8, 5, 7)[0] == (11680, 160)
    # the ranges of all ranks tile each step exactly
    for n, nx, ny, nz, ns in BTIO_CONFIGS:
        for s in range(ns):
            allr = sorted(x for r in range(n)
                          for x in btio_expected_ranges(n, nx, ny, nz, ns,
                                                        r, s))
            pos = s * btio_step_bytes(nx, ny, nz)
            for off, ln in allr:
                assert off == pos
                pos += ln
            assert pos == (s + 1) * btio_step_bytes(nx, ny, nz)
    assert basic_file_size(4) == 14336
    assert nonblocking_file_size(4) == 14336
    assert pointers_file_size(4) == 17434
    assert plain_output_file_size(4) == 2560
    assert btio_file_size(8, 8, 8, 5) == 102400
    assert btio_file_size(12, 12, 6, 5) == 172800
    assert plain_output_stdout(4) == (
        "rank 0 of 4 wrote 256 bytes\nrank 1 of 4 wrote 512 bytes\n"
        "rank 2 of 4 wrote 768 bytes\nrank 3 of 4 wrote 1024 bytes\n"
        "total 2560 bytes in plain.dat\n")


if __name__ == "__main__":
    _selfcheck()
    print("expected.py self-check OK")


# --------------------------------------------------------------------------
# 8. threads (MPI_THREAD_MULTIPLE; 4 pthreads per rank write concurrently).
#    Not in PROGRAMS/_TABLE: the order of the writes of different threads is
#    not deterministic, only the set of writes and each thread's own order.
#    Worked out from threads.c: thread t of rank r writes block
#    b = (r*T + t)*K + k at b*64, k = 0..K-1, in that order.  Recorded events
#    of every rank, in seq order: MPI_Init_thread, MPI_File_open, the
#    T*K = 200 writes (interleaved between threads), MPI_File_close,
#    MPI_Finalize = 204 events.  The only communication call is the
#    MPI_Barrier after the join (MPI_File_open/close communicate inside MPI,
#    which is not counted), so the logical clock is 0 up to and including
#    the last write and 1 at the close, at MPI_Finalize and at the end.

THREADS_T = 4
THREADS_K = 50
THREADS_BLK = 64


def threads_block(rank, t, k):
    return (rank * THREADS_T + t) * THREADS_K + k


def threads_writes_by_thread(np, rank):
    """{thread: [(offset, nbytes) for k = 0..K-1]} in the thread's order."""
    return {t: [(threads_block(rank, t, k) * THREADS_BLK, THREADS_BLK)
                for k in range(THREADS_K)] for t in range(THREADS_T)}


def threads_write_set(np, rank):
    """Sorted (offset, nbytes) of all writes of the rank: one contiguous run
    of T*K*64 = 12800 bytes starting at rank*12800."""
    return sorted(w for ws in threads_writes_by_thread(np, rank).values()
                  for w in ws)


def threads_recorded(np, rank):
    """(routine, lclock) of the non-write events, and how many writes, in
    seq order: first two, then T*K writes with lclock 0, then last two."""
    return ([("MPI_Init_thread", 0), ("MPI_File_open", 0)],
            THREADS_T * THREADS_K,
            [("MPI_File_close", 1), ("MPI_Finalize", 1)])


def threads_final_lclock(np, rank):
    return 1


def threads_file_size(np):
    return np * THREADS_T * THREADS_K * THREADS_BLK  # 51200 for np = 4


def threads_byte(block, j):
    return (block * 13 + j) % 251


# --------------------------------------------------------------------------
# 9. aborts (rank 1 calls MPI_Abort(MPI_COMM_WORLD, 3) after a barrier; the
#    other ranks are killed by mpirun inside their second barrier).
#    Recorded events (routine, file, offset, nbytes, lclock) in seq order,
#    from aborts.c: MPI_Init (0), MPI_File_open of abort.<r>.dat (0), writes
#    of 100 bytes at 0, 100, 200 (lclock 0: no communication before them),
#    then the first MPI_Barrier (counted, not recorded: lclock becomes 1).
#    Rank 1 then records MPI_Abort with lclock 1 and flushes everything
#    (end record "MPI_Abort", final logical clock 1).  The other ranks
#    never record another event (the second barrier is counted only) and
#    are killed without flushing: their traces hold a prefix of the first
#    five events (with 1 MiB buffers, in practice none).

ABORTS_N = 100
ABORTS_RANK = 1
ABORTS_CODE = 3


def aborts_recorded(np, rank):
    f = "abort.%d.dat" % rank
    ev = [("MPI_Init", None, None, None, 0), ("MPI_File_open", f, None, None, 0)]
    ev += [("MPI_File_write_at", f, i * ABORTS_N, ABORTS_N, 0) for i in range(3)]
    if rank == ABORTS_RANK:
        ev.append(("MPI_Abort", None, None, None, 1))
    return ev


KILLED_N = 1000


def killed_recorded(rank, closed):
    """(routine, file, offset, bytes) of killed.c's events on `rank`: MPI_Init,
    the open, N writes of 8 bytes at 8 i, and the close if the rank `closed`
    its file (every rank but 0) before the barrier where the run stops."""
    f = "killed.%d.dat" % rank
    ev = [("MPI_Init", None, None, None), ("MPI_File_open", f, None, None)]
    ev += [("MPI_File_write_at", f, 8 * i, 8) for i in range(KILLED_N)]
    return ev + ([("MPI_File_close", f, None, None)] if closed else [])


def aborts_file_bytes(rank):
    """Content of abort.<rank>.dat: 3 writes of 100 bytes, byte j of write i
    is (rank*7 + i*13 + j) % 251."""
    return bytes((rank * 7 + i * 13 + j) % 251
                 for i in range(3) for j in range(ABORTS_N))


def _selfcheck_appended():
    # threads, np = 4: rank 2 thread 3 writes blocks (2*4+3)*50 + k =
    # 550..599, i.e. offsets 35200 .. 38336; rank r covers [12800r, 12800(r+1))
    assert threads_writes_by_thread(4, 2)[3][0] == (35200, 64)
    assert threads_writes_by_thread(4, 2)[3][-1] == (38336, 64)
    for r in range(4):
        ws = threads_write_set(4, r)
        assert len(ws) == 200 and ws[0][0] == 12800 * r
        assert all(b[0] == a[0] + 64 for a, b in zip(ws, ws[1:]))
    assert threads_file_size(4) == 51200
    assert [e[0] for e in aborts_recorded(4, 1)] == [
        "MPI_Init", "MPI_File_open", "MPI_File_write_at",
        "MPI_File_write_at", "MPI_File_write_at", "MPI_Abort"]
    assert len(aborts_recorded(4, 0)) == 5
    assert aborts_file_bytes(1)[100] == 20  # 1*7 + 1*13 + 0


if __name__ == "__main__":
    _selfcheck_appended()
    print("expected.py appended self-check OK")
