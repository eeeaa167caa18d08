"""Expected I/O models of the test programs, worked out by hand.

Every fact below follows from a program's source (its header comment states
the sequence of calls) and the phase rule of docs/commands/analyze.md; the
fields are those of docs/model-format.md.  Nothing was copied from analyzer
output.  ``python expected_models.py`` runs internal consistency checks.

The rule, as applied here (per rank, data operations in call order):

* a burst is a maximal run of consecutive operations on the same file
  (group), with the same operation and MPI routine, at most max_comm_gap
  communication calls apart; any other data operation in between ends it;
* a burst's sizes split into the shortest repeating period: iop = period,
  rep = n / period;
* the k-th burst (file, operation, routine) of every rank forms phase k;
  phases are numbered by their first start.  In every program here all ranks
  run their phases in the same program order, so the ids follow program
  order: if rank q achieves the earliest start of phase Y and runs X before
  Y, then first_start(X) <= start_q(X) < start_q(Y) = first_start(Y);
* access mode per phase: strided if an operation covers several
  non-contiguous ranges (a file view) or a process's consecutive operations
  are a constant distance apart other than their size; sequential if each
  process's operations follow each other contiguously -- which includes a
  phase of ONE operation per process (nothing to compare: vacuously
  sequential); random otherwise;
* max_comm_gap (auto): the distinct communication counts between
  consecutive operations that could join a burst (same file, operation and
  routine, no data operation between); the widest break between sorted
  neighbours by (1 + hi) / (1 + lo); >= 4 -> lo, else (one group, or no
  counts at all) 8.  ``auto_max_comm_gap`` implements exactly this and is
  only used by the self-check, against the value written out by hand in
  each model function.

Facts of one model (``dict``):

    np              application.np
    max_comm_gap    analysis.max_comm_gap (threshold_rule starts with "auto")
    phases          list, in id order, of dicts of phase facts; keys:
                    file (basename of files[phase.file].name), operation,
                    routine, collective, np, ranks, iop, request_sizes, rs,
                    rs_min, rs_max, rs_groups (None: the field is absent),
                    rep, weight, access_mode, "offsets.contiguous",
                    "offsets.per_rank", "offsets.stride",
                    "logical_time.first", "logical_time.comm_between"
                    (dotted keys: nested fields).  A key that is not given
                    is not checked (e.g. per_rank of a one-rank phase,
                    stride of a phase with rep 1, comm_between of a phase
                    of one operation per process, where the format does not
                    say what to write).  When ranks move different amounts,
                    request_sizes is "one process's" (docs): the key is
                    replaced by request_sizes_one_of (the groups' lists).
    files           {basename of name: facts}: access_type, np, role,
                    iof_size, inf_size, size, extent, access_mode, paths
                    (sorted basenames)
    storage_capacity, weight, runs
    sequences       {rank: [phase ids in the rank's order]}: the order graph
                    must contain every edge between consecutive ids of a
                    rank, and nothing outside their transitive closure
    features        application.features, or None (not checked)

Programs: btio_like (examples/btio_like.c), s3d_like, ior_like, nonblocking,
pointers (tests/programs/).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expected  # noqa: E402  (btio layout, worked out by hand there)


# --------------------------------------------------------------------------
# helpers: definitions from docs/model-format.md, nothing program specific

def ranks_str(ranks):
    """[0, 1, 2, 3, 5] -> '0-3,5'."""
    ranks = sorted(ranks)
    out, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        out.append(str(ranks[i]) if i == j else "%d-%d" % (ranks[i], ranks[j]))
        i = j + 1
    return ",".join(out)


def affine_step(firsts):
    """offsets.per_rank: the common difference of the first offsets of
    consecutive ranks, or None when they are not affine in the rank."""
    d = {b - a for a, b in zip(firsts, firsts[1:])}
    return d.pop() if len(d) == 1 else None


def auto_max_comm_gap(counts):
    """The auto rule of docs/commands/analyze.md (self-check only)."""
    g = sorted(set(counts))
    best = None
    for lo, hi in zip(g, g[1:]):
        ratio = (1 + hi) / (1 + lo)
        if best is None or ratio > best[0]:
            best = (ratio, lo)
    return best[1] if best and best[0] >= 4 else 8


def phase(file, operation, routine, collective, ranks, request_sizes, rep, mode,
          *, lfirst, contiguous, per_rank="skip", stride="skip", comm_between="skip",
          groups=None, piece=None):
    """Facts of one phase.  groups: {rank: request_sizes} when ranks differ."""
    ranks = list(ranks)
    p = {"file": file, "operation": operation, "routine": routine,
         "collective": collective, "np": len(ranks), "ranks": ranks_str(ranks),
         "rep": rep, "access_mode": mode, "offsets.contiguous": contiguous,
         "logical_time.first": lfirst}
    if groups is None:
        p.update(iop=len(request_sizes), request_sizes=list(request_sizes),
                 rs=sum(request_sizes), rs_min=sum(request_sizes),
                 rs_max=sum(request_sizes), rs_groups=None,
                 weight=len(ranks) * sum(request_sizes) * rep)
    else:
        assert sorted(groups) == ranks
        iops = {len(s) for s in groups.values()}
        assert len(iops) == 1
        per = {r: sum(s) for r, s in groups.items()}
        total = sum(per.values())
        assert total % len(ranks) == 0, "choose sizes with an integer mean"
        by_sizes = {}
        for r in ranks:
            by_sizes.setdefault(tuple(groups[r]), []).append(r)
        p.update(iop=iops.pop(), rs=total // len(ranks), rs_min=min(per.values()),
                 rs_max=max(per.values()), weight=total * rep,
                 request_sizes_one_of=[list(s) for s in by_sizes],
                 rs_groups=[{"ranks": ranks_str(rs_), "rs": sum(s), "request_sizes": list(s)}
                            for s, rs_ in sorted(by_sizes.items(), key=lambda kv: kv[1][0])])
    for key, v in (("offsets.per_rank", per_rank), ("offsets.stride", stride),
                   ("logical_time.comm_between", comm_between)):
        if v != "skip":
            p[key] = v
    # offsets.piece: a non-contiguous phase's mean contiguous range, its weight
    # over the ranges all its operations cover; absent when contiguous
    assert (piece is None) == contiguous, "a non-contiguous phase needs its piece"
    p["offsets.piece"] = "<absent>" if contiguous else piece
    return p


def merged_runs(block, start, grid, cell):
    """How many contiguous byte ranges a C-order subarray covers: its rows of
    block[2] cells, adjacent rows (and planes) merged, as a view's pieces."""
    runs, end = 0, None
    for x in range(start[0], start[0] + block[0]):
        for y in range(start[1], start[1] + block[1]):
            off = ((x * grid[1] + y) * grid[2] + start[2]) * cell
            if off != end:
                runs += 1
            end = off + block[2] * cell
    return runs


def file_facts(name, access_type, np, role, iof_size, inf_size, extent, mode, paths=None):
    """mode None: not checked."""
    size = inf_size if role == "input" else iof_size   # expression 4's size
    f = {"access_type": access_type, "np": np, "role": role, "iof_size": iof_size,
         "inf_size": inf_size, "size": size, "extent": extent, "access_mode": mode,
         "paths": sorted(paths or [name])}
    if mode is None:
        del f["access_mode"]
    return f


def singletons(n):
    return [[i, i] for i in range(1, n + 1)]


def model(np, max_comm_gap, phases, files, runs, sequences, features=None, counts=None):
    """counts: the communication counts the threshold is chosen from (for
    the self-check of max_comm_gap)."""
    return {"np": np, "max_comm_gap": max_comm_gap, "phases": phases, "files": files,
            "storage_capacity": sum(f["size"] for f in files.values()),
            "weight": sum(p["weight"] for p in phases), "runs": runs,
            "sequences": sequences, "features": features, "_counts": counts}


def features(explicit=False, individual=False, shared=False, blocking=False,
             nonblocking=False, collective=False, independent=False):
    return {"explicit_offsets": explicit, "individual_pointers": individual,
            "shared_pointers": shared, "blocking": blocking, "nonblocking": nonblocking,
            "collective": collective, "independent": independent}


# --------------------------------------------------------------------------
# btio_like (examples/btio_like.c): NSTEPS collective writes, each after 120
# MPI_Sendrecv; then NSTEPS collective reads, 1 MPI_Allreduce apart.
#
# Threshold: counts between consecutive writes 120 (same file, routine
# MPI_File_write_at_all), between consecutive reads 1 (MPI_File_read_at_all);
# the last write -> first read pair is not a candidate (other operation and
# routine).  Distinct {1, 120}: ratio 121 / 2 = 60.5 >= 4 -> max_comm_gap 1.
# So every write is a burst of its own (120 > 1): NSTEPS phases of iop 1,
# rep 1, weight = the whole step G = NX*NY*NZ*40; the reads are one burst
# (1 <= 1) of NSTEPS equal sizes: period 1, rep NSTEPS, weight NSTEPS*G.
# Every access goes through the subarray view and covers several ranges
# (the rank's block is split in Y at 4 and 9 ranks) -> strided.
# The file is written then read back: inout, size = iof_size = NSTEPS*G.
# Write phases 1..NSTEPS differ only in offsets.first and logical time ->
# runs [[1, NSTEPS], [NSTEPS+1, NSTEPS+1]] (the paper's "1 to 40").

BTIO_COMM = expected.BTIO_COMM_PER_WRITE  # 120 = 5 time steps * 24 MPI_Sendrecv


def btio_model(np, nx, ny, nz, nsteps=40):
    G = nx * ny * nz * expected.BTIO_CELL
    rs = expected.btio_local_cells(np, nx, ny, nz) * expected.BTIO_CELL
    ranges = [expected.btio_expected_ranges(np, nx, ny, nz, nsteps, r, 0) for r in range(np)]
    if any(len(x) < 2 for x in ranges):
        raise ValueError("sizes where a block is one contiguous range are not worked out here")
    per_rank = affine_step([x[0][0] for x in ranges])
    piece = round(np * rs / sum(len(x) for x in ranges))   # every step covers the same ranges
    ranks = range(np)
    phases = [phase("btio.dat", "write", "MPI_File_write_at_all", True, ranks, [rs], 1,
                    "strided", lfirst=BTIO_COMM * k, contiguous=False, per_rank=per_rank,
                    piece=piece)
              for k in range(1, nsteps + 1)]
    phases.append(phase("btio.dat", "read", "MPI_File_read_at_all", True, ranks, [rs], nsteps,
                        "strided", lfirst=BTIO_COMM * nsteps, contiguous=False,
                        per_rank=per_rank, stride=G, comm_between=1, piece=piece))
    files = {"btio.dat": file_facts("btio.dat", "shared", np, "inout", nsteps * G, nsteps * G,
                                    nsteps * G, "strided")}
    return model(np, 1, phases, files, [[1, nsteps], [nsteps + 1, nsteps + 1]],
                 {r: list(range(1, nsteps + 2)) for r in ranks},
                 features(explicit=True, blocking=True, collective=True),
                 counts=[BTIO_COMM] * (nsteps - 1) + [1] * (nsteps - 1))


# --------------------------------------------------------------------------
# s3d_like (tests/programs/s3d_like.c): 5 files one after the other; in each
# rank 0 writes a 512-byte header (MPI_File_write_at), one MPI_Barrier, then
# every rank writes the 16 arrays with MPI_File_write_all through subarray
# views: blocking 4 writes of 11L, L, L, 3L bytes (L = local cells * 8),
# nonblocking 1 write of 16L; then close and 20 MPI_Sendrecv.
#
# Threshold: blocking: the 3 pairs of consecutive write_all of a file, 0
# calls apart (MPI_File_set_view is not communication); the header write is
# followed by another routine (write_all) and the next header is on another
# file: no pair.  {0}: one group -> 8.  Nonblocking: no pair at all -> 8.
# Phases per file: the header (np 1, rank 0, one contiguous op: sequential)
# then the data: blocking one burst [11L, L, L, 3L] -> shortest period 4
# (11L, L, L, 3L is no repetition of a shorter prefix): iop 4, rep 1;
# nonblocking iop 1, rep 1; strided (subarray views, several ranges each);
# weight 16 * G8 (Table VIII: 16 arrays * 8 bytes * grid cells).
# Ids: header f = 2f+1 (rank 0 writes it before the barrier, everyone else
# writes file f's data after it), data f = 2f+2; all 10 differ from their
# neighbours (other file) -> 10 runs of one.  Rank 0 runs 1, 2, 3, ..., 10,
# the others 2, 4, ..., 10.
# Logical clock: before file f every rank made 21f calls (barrier + 20
# MPI_Sendrecv per file): header f at 21f, data f at 21f + 1.
# Features: write_at (explicit offsets, independent), write_all (individual
# file pointer, reset to 0 by each set_view; collective).

S3D_HEADER = 512
S3D_NV = (11, 1, 1, 3)      # yspecies, temperature, pressure, velocity
S3D_FILES = 5


def s3d_model(np, variant, gx=16, gy=16, gz=16):
    dims = expected.btio_dims(np)
    if np < 2 or gx % dims[0] or gy % dims[1] or gz % dims[2]:
        raise ValueError("not worked out for these sizes")
    l = (gx // dims[0], gy // dims[1], gz // dims[2])
    L = l[0] * l[1] * l[2] * 8
    G8 = gx * gy * gz * 8
    firsts = []
    for r in range(np):
        c = (r // (dims[1] * dims[2]), (r // dims[2]) % dims[1], r % dims[2])
        x0, y0, z0 = (c[i] * l[i] for i in range(3))
        firsts.append(S3D_HEADER + ((x0 * gy + y0) * gz + z0) * 8)   # array 0's first cell
    sizes = [nv * L for nv in S3D_NV] if variant == "blocking" else [16 * L]
    # every rank's part of an array: the same number of ranges, none joining the
    # next array's (another rank's cells lie between, np >= 2)
    piece = L // merged_runs(l, (0, 0, 0), (gx, gy, gz), 8)
    extra = {"comm_between": 0} if variant == "blocking" else {}
    phases, files = [], {}
    for f in range(S3D_FILES):
        name = "s3d.%d.nc" % f
        phases.append(phase(name, "write", "MPI_File_write_at", False, [0], [S3D_HEADER], 1,
                            "sequential", lfirst=21 * f, contiguous=True))
        phases.append(phase(name, "write", "MPI_File_write_all", True, range(np), sizes, 1,
                            "strided", lfirst=21 * f + 1, contiguous=False,
                            per_rank=affine_step(firsts), piece=piece, **extra))
        size = S3D_HEADER + 16 * G8
        files[name] = file_facts(name, "shared", np, "output", size, 0, size, "strided")
    assert phases[1]["weight"] == 16 * G8
    seq = {r: [2 * f + 2 for f in range(S3D_FILES)] for r in range(1, np)}
    seq[0] = list(range(1, 2 * S3D_FILES + 1))
    counts = [0] * (3 * np * S3D_FILES) if variant == "blocking" else []
    return model(np, 8, phases, files, singletons(2 * S3D_FILES), seq,
                 features(explicit=True, individual=True, blocking=True, collective=True,
                          independent=True), counts=counts)


# --------------------------------------------------------------------------
# ior_like (tests/programs/ior_like.c).  ior_like OUTDIR PATTERN [WCOMM [RCOMM]]
# makes WCOMM (RCOMM) MPI_Barrier calls between consecutive data operations
# of its write (read) loops (default 0).

IOR_T = 4096
IOR_S = 6       # segments
IOR_N = 8       # transfers per rank (contiguous, fpp, random)
IOR_NALT = 4    # writes per file (alternate)
IOR_U = 1000    # varsize unit
IOR_R = 3       # varsize repetitions


def _loop_phases(n, comm, gap, make, lfirst0):
    """A loop of n equal operations with `comm` calls between consecutive
    ones: one burst of rep n when comm <= gap, else n bursts of rep 1 (each
    one operation per process: sequential, no stride)."""
    if comm <= gap:
        return [make(n, lfirst0, True)]
    return [make(1, lfirst0 + comm * i, False) for i in range(n)]


def ior_segmented_model(np, wcomm=0, rcomm=0):
    """Write S segments (rank r at (i*P + r)*T, MPI_File_write_at_all), one
    barrier, read them back (MPI_File_read_at_all).  Counts: wcomm between
    writes, rcomm between reads.  Examples (P = 4):
      0, 0: {0} -> 8: 2 phases of rep S, strided (distance P*T != T).
      12, 12: {12} one group -> 8 < 12: 2*S phases of rep 1, each one op
          per process -> sequential; runs [1, S], [S+1, 2S].
      0, 3: {0, 3}: ratio 4/1 = 4 >= 4 -> 0: writes rep S (0 <= 0), reads
          split into S phases of rep 1; runs [1,1], [2, S+1].
      0, 2: {0, 2}: ratio 3 < 4 -> one group -> 8: as 0, 0."""
    P, T, S = np, IOR_T, IOR_S
    gap = {(0, 0): 8, (12, 12): 8, (0, 3): 0, (0, 2): 8}[(wcomm, rcomm)]

    def mk(op, routine, comm):
        def make(rep, lfirst, joined):
            extra = {"stride": P * T, "comm_between": comm} if joined else {}
            return phase("ior.dat", op, routine, True, range(P), [T], rep,
                         "strided" if joined else "sequential", lfirst=lfirst,
                         contiguous=True, per_rank=T, **extra)
        return make
    phases = _loop_phases(S, wcomm, gap, mk("write", "MPI_File_write_at_all", wcomm), 0)
    nw = len(phases)
    phases += _loop_phases(S, rcomm, gap, mk("read", "MPI_File_read_at_all", rcomm),
                           wcomm * (S - 1) + 1)
    nr = len(phases) - nw
    runs = ([[1, nw]] if nw > 1 else [[1, 1]]) + ([[nw + 1, nw + nr]])
    # the file's mode: that of its heaviest phases; when strided and
    # sequential phases move the same bytes (0, 3: 6PT each) it is not
    # defined by the docs, and not checked
    modes = {p["access_mode"] for p in phases}
    size = S * P * T
    files = {"ior.dat": file_facts("ior.dat", "shared", P, "inout", size, size, size,
                                   modes.pop() if len(modes) == 1 else None)}
    return model(P, gap, phases, files, runs, {r: list(range(1, nw + nr + 1)) for r in range(P)},
                 features(explicit=True, blocking=True, collective=True),
                 counts=[wcomm] * (S - 1) * P + [rcomm] * (S - 1) * P)


def ior_contiguous_model(np, neighbour=False):
    """Rank r writes N transfers at r*N*T + j*T (MPI_File_write_at, no calls
    between): one burst, rep N, sequential (each write starts where the
    previous ended); one barrier; one read of N*T (MPI_File_read_at):
    iop 1, rep 1.  Counts {0} -> 8.  The read is of the rank's own block,
    wholly inside the union of its N writes through the same open:
    reread_bytes = P*N*T.  neighbour: the read is of rank (r+1)%P's block,
    written by another rank: reread_bytes 0; first offsets N*T*(1, 2, ...,
    P-1, 0) are not affine in the rank (per_rank null)."""
    P, T, N = np, IOR_T, IOR_N
    phases = [phase("ior.dat", "write", "MPI_File_write_at", False, range(P), [T], N,
                    "sequential", lfirst=0, contiguous=True, per_rank=N * T, stride=T,
                    comm_between=0),
              phase("ior.dat", "read", "MPI_File_read_at", False, range(P), [N * T], 1,
                    "sequential", lfirst=1, contiguous=True,
                    per_rank=None if neighbour else N * T)]
    phases[1]["reread_bytes"] = 0 if neighbour else P * N * T
    size = P * N * T
    files = {"ior.dat": file_facts("ior.dat", "shared", P, "inout", size, size, size,
                                   "sequential")}
    return model(P, 8, phases, files, singletons(2), {r: [1, 2] for r in range(P)},
                 features(explicit=True, blocking=True, independent=True),
                 counts=[0] * (N - 1) * P)


def ior_fpp_model(np):
    """ior.<r>.dat on MPI_COMM_SELF: a group of unique files "ior.{rank}.dat".
    N writes of T at j*T, barrier, N reads of T at j*T: two phases of all
    ranks, rep N, sequential; every rank's first offset is 0 (per_rank 0).
    Sizes of the group: iof_size = inf_size = P*N*T (sum of the phases'
    weights), extent N*T (per file).  Counts {0} -> 8."""
    P, T, N = np, IOR_T, IOR_N
    name = "ior.{rank}.dat"
    phases = [phase(name, op, routine, False, range(P), [T], N, "sequential",
                    lfirst=lf, contiguous=True, per_rank=0, stride=T, comm_between=0)
              for op, routine, lf in (("write", "MPI_File_write_at", 0),
                                      ("read", "MPI_File_read_at", 1))]
    files = {name: file_facts(name, "unique", P, "inout", P * N * T, P * N * T, N * T,
                              "sequential", paths=["ior.%d.dat" % r for r in range(P)])}
    return model(P, 8, phases, files, singletons(2), {r: [1, 2] for r in range(P)},
                 features(explicit=True, blocking=True, independent=True),
                 counts=[0] * (N - 1) * 2 * P)


def ior_random_perm(rank, n=IOR_N):
    """The permutation of ior_like.c (same LCG, same Fisher-Yates)."""
    x = (12345 + 1000 * rank) & 0xFFFFFFFF
    perm = list(range(n))
    for j in range(n - 1, 0, -1):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
        k = ((x >> 16) & 0x7FFF) % (j + 1)
        perm[j], perm[k] = perm[k], perm[j]
    return perm


def ior_random_model(np):
    """N writes of T at r*N*T + perm_r[j]*T, no calls between: one burst,
    rep N; the distances perm_r[j+1] - perm_r[j] (times T) are not constant
    (ior_like.c aborts otherwise) and not all T -> random, stride null."""
    P, T, N = np, IOR_T, IOR_N
    firsts = []
    for r in range(P):
        perm = ior_random_perm(r)
        assert len({b - a for a, b in zip(perm, perm[1:])}) > 1
        firsts.append((r * N + perm[0]) * T)
    phases = [phase("ior.dat", "write", "MPI_File_write_at", False, range(P), [T], N, "random",
                    lfirst=0, contiguous=True, per_rank=affine_step(firsts), stride=None,
                    comm_between=0)]
    size = P * N * T
    files = {"ior.dat": file_facts("ior.dat", "shared", P, "output", size, 0, size, "random")}
    return model(P, 8, phases, files, singletons(1), {r: [1] for r in range(P)},
                 features(explicit=True, blocking=True, independent=True),
                 counts=[0] * (N - 1) * P)


def ior_alternate_model(np):
    """write A, write B, write A, ... (MPI_File_write_at on two shared files):
    every operation is followed by one on the other file, which ends the
    burst -> each write is a burst of its own; the k-th A burst of every
    rank is phase A_k: 2*NALT phases A1, B1, A2, B2, ... of one op per
    process (sequential), iop 1, rep 1.  No pair of consecutive operations
    on the same file -> no counts -> 8.  Neighbouring phases are on other
    files: runs of one."""
    P, T, n = np, IOR_T, IOR_NALT
    phases = []
    for k in range(n):
        phases.append(phase("ior_a.dat", "write", "MPI_File_write_at", False, range(P), [T], 1,
                            "sequential", lfirst=0, contiguous=True, per_rank=T))
        phases.append(phase("ior_b.dat", "write", "MPI_File_write_at", False, range(P), [T], 1,
                            "sequential", lfirst=0, contiguous=True, per_rank=n * T))
    size = n * P * T
    files = {f: file_facts(f, "shared", P, "output", size, 0, size, "sequential")
             for f in ("ior_a.dat", "ior_b.dat")}
    return model(P, 8, phases, files, singletons(2 * n),
                 {r: list(range(1, 2 * n + 1)) for r in range(P)},
                 features(explicit=True, blocking=True, independent=True), counts=[])


def ior_varsize_model(np):
    """Rank r moves (r+1)*U bytes at i*W + U*r*(r+1)/2 (MPI_File_write_at_all),
    R times, no calls between; barrier; reads the same (read_at_all).
    Per rank one burst, rep R; the ranks differ: rs = mean = W/P
    (U*(P+1)/2 = 2500 at P = 4), rs_min U, rs_max P*U, one rs_group per rank,
    weight R*W exactly.  Consecutive operations W apart != their size ->
    strided; first offsets U*r*(r+1)/2 are not affine (differences U, 2U,
    3U) -> per_rank null.  Counts {0} -> 8."""
    P, U, R = np, IOR_U, IOR_R
    W = U * P * (P + 1) // 2
    groups = {r: [(r + 1) * U] for r in range(P)}
    firsts = [U * r * (r + 1) // 2 for r in range(P)]
    phases = [phase("ior.dat", op, routine, True, range(P), None, R, "strided",
                    lfirst=lf, contiguous=True, per_rank=affine_step(firsts), stride=W,
                    comm_between=0, groups=groups)
              for op, routine, lf in (("write", "MPI_File_write_at_all", 0),
                                      ("read", "MPI_File_read_at_all", 1))]
    files = {"ior.dat": file_facts("ior.dat", "shared", P, "inout", R * W, R * W, R * W,
                                   "strided")}
    return model(P, 8, phases, files, singletons(2), {r: [1, 2] for r in range(P)},
                 features(explicit=True, blocking=True, collective=True),
                 counts=[0] * (R - 1) * 2 * P)


def ior_model(np, pattern, wcomm=0, rcomm=0):
    if pattern == "segmented":
        return ior_segmented_model(np, wcomm, rcomm)
    assert wcomm == rcomm == 0
    return {"contiguous": ior_contiguous_model, "fpp": ior_fpp_model,
            "neighbour": lambda n: ior_contiguous_model(n, neighbour=True),
            "random": ior_random_model, "alternate": ior_alternate_model,
            "varsize": ior_varsize_model}[pattern](np)


# --------------------------------------------------------------------------
# nonblocking (tests/programs/nonblocking.c): per rank, on nb.dat, no
# communication at all before the close:
#   iwrite_at 2048 @ r*2048, iwrite_at_all 1024 @ P*2048 + r*1024,
#   iread_at 2048 @ r*2048, write_at_all_begin 512 @ P*3072 + r*512,
#   read_all_begin 256 @ r*2048, iread 256 @ r*2048 + 256.
# Six routines one after the other: the routine changes at every operation
# so every operation is a burst of its own (even read_all_begin and iread,
# contiguous, 0 calls apart, same file and operation: other routine).  Six
# phases of all ranks, iop 1, rep 1, one op each: sequential.  No candidate
# pair -> 8.  iof = P*(2048+1024+512), inf = P*(2048+256+256); inout, size
# = iof_size; extent = P*3072 + P*512.


def nonblocking_model(np):
    P = np
    spec = [("write", "MPI_File_iwrite_at", False, 2048, 2048),
            ("write", "MPI_File_iwrite_at_all", True, 1024, 1024),
            ("read", "MPI_File_iread_at", False, 2048, 2048),
            ("write", "MPI_File_write_at_all_begin", True, 512, 512),
            ("read", "MPI_File_read_all_begin", True, 256, 2048),
            ("read", "MPI_File_iread", False, 256, 2048)]
    phases = [phase("nb.dat", op, routine, coll, range(P), [size], 1, "sequential",
                    lfirst=0, contiguous=True, per_rank=step)
              for op, routine, coll, size, step in spec]
    files = {"nb.dat": file_facts("nb.dat", "shared", P, "inout", P * (2048 + 1024 + 512),
                                  P * (2048 + 256 + 256), P * (3072 + 512), "sequential")}
    # every data call is nonblocking or split (the _end calls and waits move no data):
    # explicit offsets and the individual pointer, collective and independent
    return model(P, 8, phases, files, singletons(6), {r: list(range(1, 7)) for r in range(P)},
                 features(explicit=True, individual=True, nonblocking=True, collective=True,
                          independent=True), counts=[])


# --------------------------------------------------------------------------
# pointers (tests/programs/pointers.c):
#   write 1000 @ r*4096, write 1000 @ r*4096 + 1000, write_all 96 @ r*4096 + 2000,
#   barrier, seek_shared, write_ordered (r+1)*100 @ P*4096 + 50r(r+1), barrier,
#   rank 0: write_shared 50 @ P*4096 + 50P(P+1).
# Bursts: the two MPI_File_write (0 calls apart, contiguous) are one burst,
# rep 2, sequential; MPI_File_write_all is another routine: a burst of its
# own (not a third repetition, nor a period [1000, 1000, 96]); the ordered
# write: sizes differ by rank -> rs = mean 100*(P+1)/2 = 250, weight
# 100*P*(P+1)/2; the shared write: rank 0 alone.  The only candidate pair
# is write -> write, 0 calls -> {0} -> 8.
# Logical clock: 0 for the first two phases, 1 (after the first barrier)
# for the ordered write, 2 for the shared write.
# ptr.dat is only written: output, size = iof_size = P*2000 + P*96 +
# 100*P*(P+1)/2 + 50 (9434 at P = 4), while its extent is P*4096 +
# 50*P*(P+1) + 50 (17434): expression 4 counts bytes moved, not holes.


def pointers_model(np):
    P = np
    phases = [
        phase("ptr.dat", "write", "MPI_File_write", False, range(P), [1000], 2, "sequential",
              lfirst=0, contiguous=True, per_rank=4096, stride=1000, comm_between=0),
        phase("ptr.dat", "write", "MPI_File_write_all", True, range(P), [96], 1, "sequential",
              lfirst=0, contiguous=True, per_rank=4096),
        phase("ptr.dat", "write", "MPI_File_write_ordered", True, range(P), None, 1,
              "sequential", lfirst=1, contiguous=True,
              per_rank=affine_step([P * 4096 + 50 * r * (r + 1) for r in range(P)]),
              groups={r: [(r + 1) * 100] for r in range(P)}),
        phase("ptr.dat", "write", "MPI_File_write_shared", False, [0], [50], 1, "sequential",
              lfirst=2, contiguous=True),
    ]
    iof = P * 2000 + P * 96 + 100 * P * (P + 1) // 2 + 50
    files = {"ptr.dat": file_facts("ptr.dat", "shared", P, "output", iof, 0,
                                   P * 4096 + 50 * P * (P + 1) + 50, "sequential")}
    seq = {r: [1, 2, 3] for r in range(1, P)}
    seq[0] = [1, 2, 3, 4]
    return model(P, 8, phases, files, singletons(4), seq,
                 features(individual=True, shared=True, blocking=True, collective=True,
                          independent=True), counts=[0] * P)


# --------------------------------------------------------------------------
# the cases the tests run: id -> (program, np, args, mca, expected model)

BTIO_SIZES = {4: [(8, 8, 8), (12, 12, 12)], 9: [(12, 12, 6), (18, 18, 9)]}
IOR_CASES = [("segmented", 0, 0), ("segmented", 12, 12), ("segmented", 0, 3),
             ("segmented", 0, 2), ("contiguous", 0, 0), ("neighbour", 0, 0), ("fpp", 0, 0), ("random", 0, 0),
             ("alternate", 0, 0), ("varsize", 0, 0)]


def cases():
    out = {}
    for np_, sizes in BTIO_SIZES.items():
        for s in sizes:
            out["btio-np%d-%dx%dx%d" % (np_, *s)] = (
                "btio_like", np_, [*s, 40], (), btio_model(np_, *s, 40))
    out["btio-np4-8x8x8-romio"] = ("btio_like", 4, [8, 8, 8, 40], (("io", "romio321"),),
                                   btio_model(4, 8, 8, 8, 40))
    for np_ in (4, 8):
        for v in ("blocking", "nonblocking"):
            out["s3d-%s-np%d" % (v, np_)] = ("s3d_like", np_, [v], (), s3d_model(np_, v))
    for pat, w, r in IOR_CASES:
        key = "ior-%s" % pat + ("-w%d-r%d" % (w, r) if pat == "segmented" else "")
        args = [pat] + ([w, r] if pat == "segmented" else [])
        out[key] = ("ior_like", 4, args, (), ior_model(4, pat, w, r))
    out["nonblocking"] = ("nonblocking", 4, [], (), nonblocking_model(4))
    out["pointers"] = ("pointers", 4, [], (), pointers_model(4))
    # reread_bytes (analyzer/reread.py): in every ior_like pattern but
    # neighbour, and in nonblocking (C, E, F read inside A, written before the
    # first read), each rank reads back through the same open only bytes it
    # wrote itself: the read phases' whole weight.  So does btio_like: step
    # s's read_at_all covers, piece by piece through the subarray view, the
    # very cells the rank's write_at_all of step s wrote.
    for key, (_, _, _, _, m) in out.items():
        for p in m["phases"]:
            if p["operation"] == "read" and "reread_bytes" not in p:
                p["reread_bytes"] = p["weight"]
    return out


# --------------------------------------------------------------------------
# self-check: literal numbers for P = 4 and internal consistency

def _selfcheck():
    cs = cases()
    for key, (_, np_, _, _, m) in cs.items():
        if m["_counts"] is not None:
            assert auto_max_comm_gap(m["_counts"]) == m["max_comm_gap"], key
        ids = list(range(1, len(m["phases"]) + 1))
        assert [i for run in m["runs"] for i in range(run[0], run[1] + 1)] == ids, key
        for fname, f in m["files"].items():
            ph = [p for p in m["phases"] if p["file"] == fname]
            assert f["iof_size"] == sum(p["weight"] for p in ph if p["operation"] == "write")
            assert f["inf_size"] == sum(p["weight"] for p in ph if p["operation"] == "read")
            assert f["role"] == {(True, True): "inout", (True, False): "output",
                                 (False, True): "input"}[(f["iof_size"] > 0, f["inf_size"] > 0)]
        for r, seq in m["sequences"].items():
            assert seq == sorted(seq) and all(r in _expand(m["phases"][i - 1]["ranks"])
                                              for i in seq), key
    # literal values, P = 4
    b = btio_model(4, 8, 8, 8)
    assert len(b["phases"]) == 41 and b["runs"] == [[1, 40], [41, 41]]
    assert b["phases"][0]["request_sizes"] == [5120] and b["phases"][0]["weight"] == 20480
    assert b["phases"][40]["rep"] == 40 and b["phases"][40]["weight"] == 819200
    assert b["storage_capacity"] == 819200 and b["weight"] == 1638400
    assert b["phases"][0]["offsets.per_rank"] is None   # firsts 0, 1280, 10240, 11520
    assert btio_model(9, 12, 12, 6)["phases"][0]["request_sizes"] == [3840]
    s = s3d_model(4, "blocking")
    assert s["phases"][1]["request_sizes"] == [90112, 8192, 8192, 24576]
    assert s["phases"][1]["rs"] == 131072 and s["phases"][1]["weight"] == 524288
    assert s["files"]["s3d.0.nc"]["size"] == 524800 and s["storage_capacity"] == 2624000
    assert s3d_model(4, "nonblocking")["phases"][1]["request_sizes"] == [131072]
    assert s3d_model(8, "blocking")["phases"][1]["request_sizes"] == [45056, 4096, 4096, 12288]
    # pieces: np 4, 16^3: rows of 16 cells (z whole) 8 rows (y half) apart -> 8 * 16 * 8 B;
    # np 8: z halved -> rows of 8 cells, 64 B; BT-IO np 4, 8^3: 4 rows of 8 cells -> 1280 B
    assert s["phases"][1]["offsets.piece"] == 1024 and s["phases"][0]["offsets.piece"] == "<absent>"
    assert s3d_model(8, "blocking")["phases"][1]["offsets.piece"] == 64
    assert b["phases"][0]["offsets.piece"] == 1280 and b["phases"][40]["offsets.piece"] == 1280
    v = ior_varsize_model(4)["phases"][0]
    assert (v["rs"], v["rs_min"], v["rs_max"], v["weight"]) == (2500, 1000, 4000, 30000)
    sg = ior_segmented_model(4, 0, 3)
    assert [p["rep"] for p in sg["phases"]] == [6, 1, 1, 1, 1, 1, 1]
    assert sg["runs"] == [[1, 1], [2, 7]] and sg["max_comm_gap"] == 0
    sg = ior_segmented_model(4, 12, 12)
    assert sg["runs"] == [[1, 6], [7, 12]]
    assert [p["logical_time.first"] for p in sg["phases"]] == \
        [0, 12, 24, 36, 48, 60, 61, 73, 85, 97, 109, 121]
    assert ior_random_perm(0) != list(range(8))
    p = pointers_model(4)
    assert p["files"]["ptr.dat"]["size"] == 9434 and p["files"]["ptr.dat"]["extent"] == 17434
    assert p["phases"][2]["rs"] == 250 and p["phases"][2]["weight"] == 1000
    n = nonblocking_model(4)
    assert n["files"]["nb.dat"]["iof_size"] == 14336 and n["files"]["nb.dat"]["inf_size"] == 10240
    assert n["weight"] == 24576


def _expand(text):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


if __name__ == "__main__":
    _selfcheck()
    print("expected_models.py self-check OK (%d cases)" % len(cases()))
