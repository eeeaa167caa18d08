"""IOR 4.x invocations from an I/O model: step 4 of the method (Table II).

Each run of identical phases (`model["runs"]`, Table V's "1 to 40") becomes
IOR runs, one per file the run touches (docs/commands/ior.md):

    strided     -s <total rep>     -b rs          -t rs
      nested    -s <total rep / m> -b m * rs      -t rs    (m contiguous transfers a block)
    sequential  -s <phases>        -b rep * rs    -t rs    (per process)
    random      -s <phases>        -b rep * rs    -t rs    -z (not with -c)
    unique files add -F; collective phases add -c (MPIIO)

so NAS BT-IO's 40 write phases of rep 1 are one IOR run with -s 40 (Table
VII) and each of S3D-IO's five checkpoint files is one IOR run with -s 1
(Table IX).  What IOR cannot express is said, one sentence each, in
`Invocation.approximations`; every size changed to satisfy IOR (t and b
multiples of 8, b a multiple of t) is in `Invocation.roundings`.

    ior_invocations(model, cluster=None) -> [Invocation]
    command(inv, ior="ior", summary_file=None) -> argv
    to_sh(model, invocations, launcher=["mpirun"]) -> shell script
    to_ior_script(invocations, np=None) -> IOR -f script (one np)
    ior_scripts(invocations) -> {np: IOR -f script}
    to_json(invocations) -> dict

Nothing here runs IOR (replay/runner.py does).
"""
import math
import os
import re
import shlex
from dataclasses import asdict, dataclass, field
from typing import Optional

import numpy as np

from iomodel.models import rereads, validate
from iomodel.outputs import comment_text, safe_name

FORMAT = "iomodel-ior"
VERSION = 1
ALIGN = 8                      # IOR: b and t are multiples of sizeof(IOR_size_t)
# IOR's MPIIO and iomodel_replay hand a transfer to MPI-IO as a count of 8-byte
# integers in an int, from one buffer of -t bytes
MAX_TRANSFER = 8 * (2**31 - 1)
MAX_OFFSET = 2**63 - 1         # a file offset (MPI_Offset, off_t) is signed 64-bit


@dataclass
class Invocation:
    """One IOR run: the options of Table II for a run of identical phases."""
    phase_ids: list            # the model's phases it stands for
    np: int
    api: str                   # "MPIIO" | "POSIX"                     -a
    segments: int              #                                       -s
    block: int                 # bytes per process per segment         -b
    transfer: int              # bytes per I/O call                    -t
    file_per_proc: bool        #                                       -F
    collective: bool           #                                       -c
    operation: str             # "write" | "read"
    test_file: str             #                                       -o
    flags: list = field(default_factory=list)   # -w/-r, -k, -E, -e, -C, -Z, -z
    setup: Optional["Invocation"] = None        # reads: the write that creates the file
    approximations: list = field(default_factory=list)   # sentences
    roundings: list = field(default_factory=list)        # {"what", "from", "to"}
    weight: int = 0            # bytes the phases moved in the application
    access_mode: str = ""      # of the phases
    reread: bool = False       # -w -r, the read through the write's open (builtin: --iomodel.reread)
    names: Optional[str] = None  # the application's file name(s), {rank} for -F (builtin: --iomodel.names)
    piece: Optional[int] = None  # the pieces of the application's file view (builtin: --iomodel.piece)
    # processes launched when more than np: the first np take part (IOR's -N), the
    # others wait, as the application's idle ones did (builtin: they open the file too)
    job_np: Optional[int] = None
    # where the application's buffers sat within 4 KiB (builtin: --iomodel.bufferOffset;
    # IOR's buffer is page-aligned)
    buffer_offset: int = 0

    @property
    def launch_np(self):
        """Processes the launcher starts."""
        return max(self.np, self.job_np or 0)

    @property
    def bytes(self):
        """Bytes IOR moves: every process, every segment, one block."""
        return self.np * self.segments * self.block

    @property
    def label(self):
        a, b = self.phase_ids[0], self.phase_ids[-1]
        return f"phase {a}" if a == b else f"phases {a} to {b}"


# ------------------------------------------------------------------ helpers

def _cluster_settings(cluster):
    workdir = getattr(cluster, "workdir", None) or "."
    return str(workdir), bool(getattr(cluster, "defeat_page_cache", False))


def sanitize(name):
    """A model name as a file name part (iomodel.outputs.safe_name)."""
    return safe_name(name, fallback="model")


def _nearest_multiple(x, m):
    """The multiple of m nearest x (ties up), at least m."""
    q, r = divmod(int(x), m)
    return max(m, (q + (1 if 2 * r >= m else 0)) * m)


def _ids(phases):
    a, b = phases[0]["id"], phases[-1]["id"]
    return f"phase {a}" if a == b else f"phases {a} to {b}"


def _posix_only(model):
    """The source says the operations are POSIX ones (a Darshan log with DXT_POSIX only)."""
    src = model.get("source", {})
    return src.get("kind") == "darshan" and any(
        "DXT_POSIX" in s and "no DXT_MPIIO" in s for s in src.get("inferred", []))


def _api(model, phase, notes):
    if phase.get("interface") == "STDIO":
        notes.append("The application wrote through stdio (fread/fwrite): IOR's POSIX API makes "
                     "each transfer one system call, where stdio's buffer may have joined or split "
                     "them.")
        return "POSIX"
    if phase.get("interface") in ("MPI-IO", "POSIX"):
        return "MPIIO" if phase["interface"] == "MPI-IO" else "POSIX"
    routine = phase.get("routine")
    if routine:
        return "MPIIO" if routine.startswith("MPI_") else "POSIX"
    if _posix_only(model):
        notes.append("The MPI routine is unknown, and the Darshan log has only POSIX "
                     "operations (DXT_POSIX): IOR's POSIX API was used.")
        return "POSIX"
    notes.append("The MPI routine is unknown (the source does not record it): IOR's MPIIO API "
                 "was used.")
    return "MPIIO"


def _chunks(model):
    """Runs of identical phases, cut where the file changes: each chunk is one
    IOR run (S3D-IO's run "1 to 5" over five files gives five chunks)."""
    phases = model["phases"]
    covered = set()
    runs = []
    for a, b in model["runs"]:
        runs.append(phases[a - 1: b])
        covered.update(range(a, b + 1))
    runs += [[p] for p in phases if p["id"] not in covered]
    runs.sort(key=lambda r: r[0]["id"])
    for run in runs:
        chunk = [run[0]]
        for p in run[1:]:
            if p["file"] == chunk[-1]["file"]:
                chunk.append(p)
            else:
                yield chunk
                chunk = [p]
        yield chunk


def _transfer_wanted(phase, notes):
    """The transfer size before rounding: the request size when every
    operation of every process has the same one, else rs (merged)."""
    groups = phase.get("rs_groups") or [{"request_sizes": phase["request_sizes"]}]
    sizes = {s for g in groups for s in g["request_sizes"]}
    if len(sizes) == 1:
        return sizes.pop()
    several = [g["request_sizes"] for g in groups if len(g["request_sizes"]) > 1]
    if several:                  # operations of a repetition merged into one transfer
        mixed = [s for s in several if len(set(s)) > 1]
        sizes = (mixed or several)[0]
        shown = ", ".join(str(s) for s in sizes[:6]) + (", ..." if len(sizes) > 6 else "")
        why = "a repetition mixes request sizes" if mixed else \
            "the processes' request sizes differ"
        notes.append(f"IOR has one transfer size and {why} (iop {len(sizes)}: {shown} B): the "
                     f"operations of a repetition were merged into one transfer of "
                     f"rs = {phase['rs']} B.")
    return phase["rs"]


def _block_run(chunk):
    """Transfers of one IOR block for a strided run of phases: a nest of
    strides whose innermost level is contiguous (IOR's segmented layout: -b / -t
    transfers one after the other, then the other processes' blocks) gives
    that level's count; else 1 (a block of one transfer)."""
    p = chunk[0]
    nested = p["offsets"].get("nested")
    if p["access_mode"] != "strided" or not nested or p["iop"] != 1 or nested[-1][1] != p["rs"]:
        return 1
    run = nested[-1][0]
    return run if all(q["rep"] % run == 0 for q in chunk) else 1


def ior_share(np_, k):
    """The share of IOR's writes that extend the file when its processes go in
    lockstep (round j: each process's j-th transfer, in rank order), with
    blocks of k transfers a process and segment: in each segment every
    process's first transfer, then only the last process's."""
    return (np_ + k - 1) / (np_ * k)


def _divisors(n):
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _extending_run(chunk, run, shared, notes):
    """Transfers a block that give IOR's writes the application's share of
    writes that extend the file in lockstep (the phases' extending_writes),
    where it has one (independent writes of one size by several processes
    to a shared file): the block of the nearest share among those that
    divide each phase's transfers a process, the nest's own block on a tie.  On
    storage that commits a file's new size before such a write returns (a
    journal mounted sync), the share sets what small writes cost."""
    p = chunk[0]
    n = p["np"]
    if not shared or n < 2 or p["operation"] != "write" or p.get("collective") or p.get("rs_groups") \
            or any(q["iop"] != 1 or "extending_writes" not in q for q in chunk):
        return run
    total = sum(q["rep"] for q in chunk)
    share = sum(q["extending_writes"] for q in chunk) / (n * total)
    # a block within one phase: the phases' boundaries stay between segments (--iomodel.gapEvery)
    k = min(_divisors(math.gcd(*(q["rep"] for q in chunk))),
            key=lambda d: (abs(ior_share(n, d) - share), abs(d - run)))
    if k != run:
        notes.append(f"The application's writes extend the file with {share:.1%} of them when its processes "
                     f"go in lockstep (extending_writes), IOR's blocks of {run} transfer{'s' if run > 1 else ''} "
                     f"with {ior_share(n, run):.1%}: blocks of {k} transfers a process and segment, which "
                     f"extend it with {ior_share(n, k):.1%}.")
    return k


def write_block(inv):
    """Transfers a block of an invocation that writes a shared file in blocks
    of several, its processes independent (so that its writes extend the
    file as the application's did, `_extending_run`): its point in a profile
    is measured in such blocks (characterize --for); else None."""
    if inv.operation == "write" and not inv.file_per_proc and not inv.collective and inv.np > 1 \
            and inv.block > inv.transfer and "-z" not in inv.flags:
        return inv.block // inv.transfer
    return None


def write_blocks(model):
    """{phase id: transfers a block} of the phases with extending_writes that
    the replay writes in blocks of several (write_block)."""
    if not any("extending_writes" in p for p in model["phases"]):
        return {}
    out = {}
    for inv in ior_invocations(model):
        k = write_block(inv)
        if k:
            out.update({i: k for i in inv.phase_ids})
    return out


def _blocks_read(p, block, shared):
    """The block of its segment each process of a shared file's phase reads,
    counted in blocks from the phase's first byte, where some read a block
    other than their own (IOR's -Z, -C read back another task's data); else None."""
    off, n = p["offsets"], p["np"]
    starts = off.get("starts")
    if not shared or n < 2 or off.get("per_rank") is not None or not starts or len(starts) != n \
            or block <= 0 or any(x % block or not 0 <= x // block < n for x in starts):
        return None
    whose = [x // block for x in starts]
    return whose if whose != list(range(n)) else None


def _layout_notes(model, chunk, shared, notes, others=False, run=None):
    """Sentences for what IOR's segmented layout does not reproduce (`run`:
    its transfers a block of a strided run, when not the nest's)."""
    p = chunk[0]
    off = p["offsets"]
    n, rs, rep, mode = p["np"], p["rs"], p["rep"], p["access_mode"]
    if off.get("contiguous") is None and off.get("first") is None:
        notes.append("The file offsets are unknown (the source does not give them): IOR's "
                     + ("sequential layout (one block of rep * rs a process and phase)"
                        if mode == "unknown" else f"layout for {mode} access") + " was assumed.")
        return
    if off.get("first") not in (None, 0):
        notes.append(f"The phase starts at byte {off['first']} of the file; IOR starts at byte 0.")
    if off.get("contiguous") is False:
        piece = f" of {off['piece']} B on average" if off.get("piece") else ""
        notes.append(f"Each operation of a process covers non-contiguous ranges{piece} of the file "
                     "(a file view): IOR's segmented layout, one contiguous block of -b bytes per "
                     "process and segment, stands in for the view.")
    if mode == "random":
        return
    # file bytes of one IOR segment: what separates a process's consecutive segments
    run = _block_run(chunk) if run is None else run
    block = run * rs if mode == "strided" else rep * rs
    per_seg = block * (n if shared else 1)
    if shared and n > 1:
        want = block
        if others:
            pass                    # said with -Z
        elif off.get("per_rank") is None and "starts" in off:
            starts = off["starts"]
            shown = ", ".join(map(str, starts[:6])) + (", ..." if len(starts) > 6 else "")
            notes.append(f"The processes' first offsets are not affine in the rank (starts "
                         f"{shown} B from the phase's first byte): IOR places rank r's block at "
                         f"r * b in each segment.")
        elif off.get("per_rank") is not None and off["per_rank"] != want:
            notes.append(f"Consecutive ranks start {off['per_rank']} B apart; in IOR they start "
                         f"one block (-b) apart.")
    nested = off.get("nested")
    if mode == "strided" and nested:
        if not (run > 1 and len(nested) == 2 and nested[0][1] == per_seg):
            shown = ", ".join(f"{c} x {s} B" for c, s in nested)
            notes.append(f"A process's offsets are nested strides ({shown}, outermost first): "
                         f"IOR walks them in order as {sum(q['rep'] for q in chunk) // run} evenly "
                         f"spaced segments of "
                         f"{run} transfer{'s' if run > 1 else ''}, {per_seg} B apart.")
    elif mode == "strided" and rep > 1:
        if off.get("stride") is None:
            notes.append("The distance between a process's repetitions is not constant; IOR's "
                         "segments are evenly spaced.")
        elif off["stride"] != per_seg:
            notes.append(f"A process's repetitions are {off['stride']} B apart; IOR's segments "
                         f"are {'np * b' if shared else 'b'} = {per_seg} B apart.")
    firsts = [q["offsets"].get("first") for q in chunk]
    if len(chunk) > 1 and None not in firsts:
        want, at = [], firsts[0]
        for q in chunk:
            want.append(at)
            at += (q["rep"] // run if mode == "strided" else 1) * per_seg
        if firsts != want:
            shown = ", ".join(map(str, firsts[:4])) + (", ..." if len(firsts) > 4 else "")
            notes.append(f"{_ids(chunk)} start at bytes {shown}, not one after the other; IOR "
                         f"writes them as consecutive segments of one file.")


# -------------------------------------------------------------- generation

RANK_FIELD = re.compile(r"\{rank(?::0(\d+))?\}")


def app_names(model, phase):
    """The application's name of the phase's file as a pattern for
    iomodel_replay's --iomodel.names: its basename for a shared file; for
    unique files, their common basename with the one run of digits that tells
    them apart as {rank} ({rank:0N} when zero-padded to N digits).  None when
    the names do not fit that (or are not known)."""
    f = model["files"][phase["file"]]
    paths = f.get("paths") or []
    bases = [os.path.basename(x) for x in paths]
    # a name that is no file of the work directory (".", "..") or no argument (NUL)
    if not bases or any(not b or b in (".", "..") or set(b) & set("{}\0") for b in bases):
        return None
    if f["access_type"] == "shared":
        return bases[0] if len(set(bases)) == 1 else None
    parts = [re.split(r"(\d+)", b) for b in bases]
    if len(parts) < 2 or len({len(x) for x in parts}) != 1:
        return None
    varying = [i for i in range(len(parts[0])) if len({x[i] for x in parts}) > 1]
    if len(varying) != 1 or varying[0] % 2 == 0:          # odd tokens are the digit runs
        return None
    i = varying[0]
    digits = [x[i] for x in parts]
    widths = {len(d) for d in digits}
    padded = len(widths) == 1 and any(d.startswith("0") and len(d) > 1 for d in digits)
    field = f"{{rank:0{widths.pop()}}}" if padded else "{rank}"
    return "".join(parts[0][:i]) + field + "".join(parts[0][i + 1:])


def _invocation(model, chunk, workdir, defeat):
    p = chunk[0]
    files = model["files"]
    f = files[p["file"]]
    shared = f["access_type"] == "shared"
    notes, roundings = [], []
    api = _api(model, p, notes)
    mode = p["access_mode"]
    rs, rep, n = p["rs"], p["rep"], p["np"]
    total_rep = sum(q["rep"] for q in chunk)

    if p.get("rs_groups"):
        groups = "; ".join(f"rank{'s' if re.search('[-,]', g['ranks']) else ''} {g['ranks']}: "
                           f"{g['rs']} B" for g in p["rs_groups"][:4])
        more = "; ..." if len(p["rs_groups"]) > 4 else ""
        notes.append(f"The processes move different amounts per repetition ({groups}{more}); "
                     f"IOR moves the same on every process: rs = {rs} B, their mean, was used.")

    t0 = _transfer_wanted(p, notes)
    if mode == "strided":                   # in order: one block of `run` transfers a segment
        run = _extending_run(chunk, _block_run(chunk), shared, notes)
        segments, b0 = total_rep // run, run * rs
    else:                                   # sequential, random: one segment per phase
        segments, b0 = len(chunk), rep * rs

    t = t0
    if t0 <= 0 or t0 % ALIGN:
        t = _nearest_multiple(t0, ALIGN)
        roundings.append({"what": "transfer size (-t)", "from": t0, "to": t})
    b = b0
    if b0 < t or b0 % t:
        b = _nearest_multiple(b0, t)
        roundings.append({"what": "block size (-b)", "from": b0, "to": b})
    _check_sizes(chunk, t, segments * b * (n if shared else 1))

    collective = bool(p.get("collective")) and api == "MPIIO"
    if p.get("collective") is None and api == "MPIIO":
        notes.append("Whether the operations were collective is unknown: IOR's independent I/O "
                     "(no -c) was used.")

    op = p["operation"]
    reread = op == "read" and all(rereads(q) for q in chunk)
    flags = ["-w"] if op == "write" else (["-w", "-r"] if reread else ["-r", "-k", "-E"])
    if reread:
        notes.append("The application reads back, through the same open, what each process "
                     "wrote: the file is written and read in one run (the write not counted). "
                     "IOR closes and reopens it between the two, which can empty the client's "
                     "cache; the builtin backend keeps it open (--iomodel.reread).")
    if mode == "random":
        if collective:
            # the collective layer (two-phase I/O) sorts each call's offsets before it
            # reaches the file: collectivity moves the time more than the order
            notes.append("Irregular offsets in collective operations: IOR cannot combine its random "
                         "offsets (-z) with collective MPI-IO, so the operations stay collective (-c) "
                         "in IOR's in-order layout, not at the application's offsets.")
        elif b > t:
            flags.append("-z")
            notes.append("Random access: IOR's -z shuffles the transfers within each segment "
                         "(on a shared file it also deals them to the processes at random, so "
                         "they move unequal amounts), not the application's offsets.")
        else:
            notes.append("Random access with one transfer per segment: IOR's -z needs -b > -t, "
                         "so the access is sequential.")
    if op == "write" and all(q.get("synced") for q in chunk):
        flags.append("-e")          # the application synced its writes (fsync, MPI_File_sync)
    others = _blocks_read(p, b0, shared) if op == "read" and not reread and mode != "random" else None
    if others is not None:
        flags.append("-Z")
        shown = ", ".join(map(str, others[:8])) + (", ..." if len(others) > 8 else "")
        notes.append(f"The processes read blocks other processes wrote (the blocks of {b0} B from "
                     f"the phase's first byte that ranks 0, 1, ... read: {shown}): IOR's -Z has "
                     f"each read the block of a process it picks at random (as IOR 4 picks it: "
                     f"the same blocks only where the application was IOR -Z itself).")
    if defeat and not reread and others is None:   # a reread is meant to meet the client's cache
        if op == "write":
            if "-e" not in flags:
                flags.append("-e")
        elif "-z" in flags and shared:
            notes.append("IOR refuses -C with -z on a shared file: the read is not reordered "
                         "and may be served from the page cache of the nodes that wrote it.")
        else:
            flags.append("-C")

    _layout_notes(model, chunk, shared, notes, others is not None, run if mode == "strided" else None)

    weight = sum(q["weight"] for q in chunk)
    moved = n * segments * b
    if roundings:
        what = ", ".join(f"{r['what']} {r['from']} -> {r['to']} B" for r in roundings)
        notes.append(f"Sizes rounded for IOR (-t and -b multiples of {ALIGN} B, -b a multiple of "
                     f"-t): {what}.")
    if moved != weight:
        notes.append(f"IOR moves {moved} B where the phases moved {weight} B "
                     f"({(moved - weight) / weight * 100 if weight else 0:+.4f}%).")

    piece = view_piece(p["offsets"].get("piece"), t) if shared and api == "MPIIO" else None
    if piece is not None:
        notes.append(f"The builtin backend moves each transfer through a view of pieces of {piece} B, "
                     "the processes' in turn (--iomodel.piece)"
                     + (f": the divisor of -t nearest the application's mean piece of "
                        f"{p['offsets']['piece']} B." if piece != p["offsets"]["piece"] else "."))

    # a phase of fewer processes than used the file (a header written by rank 0)
    # (not when the phase's processes opened the file on their own, as rank 0 its header)
    job_np = None if p.get("own_open") else \
        idle_openers_job(n, f.get("np"), shared, api, collective, piece, reread, "-e" in flags)
    if job_np:
        notes.append(f"{f['np']} processes used the file and {n} move this phase's data: "
                     f"{f['np']} are launched, the first {n} take part (-N {n}); the builtin "
                     f"backend has the others open and close the file with them "
                     f"(--iomodel.idleOpen).")

    buffer_offset = p.get("buffer_offset") or 0
    if buffer_offset:
        notes.append(f"The application's buffers sat {buffer_offset} B past a 4 KiB boundary: the "
                     "builtin backend places its buffer so (--iomodel.bufferOffset); IOR's is "
                     "page-aligned, and a copy between the page cache and a buffer a few bytes "
                     "past a boundary can be several times slower than from an aligned one.")

    test_file = os.path.join(workdir, f"iomodel.{sanitize(model['application']['name'])}"
                                      f".{p['id']}")
    ids = [q["id"] for q in chunk]
    inv = Invocation(phase_ids=ids, np=n, api=api, segments=segments, block=b, transfer=t,
                     file_per_proc=not shared, collective=collective, operation=op,
                     test_file=test_file, flags=flags, approximations=notes,
                     roundings=roundings, weight=weight, access_mode=mode, reread=reread,
                     names=app_names(model, p), piece=piece, job_np=job_np,
                     buffer_offset=buffer_offset)
    if op == "read" and not reread:
        inv.setup = Invocation(phase_ids=ids, np=n, api=api, segments=segments, block=b,
                               transfer=t, file_per_proc=not shared, collective=collective,
                               operation="write", test_file=test_file,
                               flags=["-w", "-k"] + (["-e"] if defeat else []),
                               weight=0, access_mode=mode, names=inv.names, piece=piece)
    return inv


def idle_openers_job(np, job_np, shared=True, api="MPIIO", collective=False, piece=None,
                     reread=False, synced=False):
    """The processes to launch for a run of `np` processes out of a job of
    `job_np` that used its file, or None: the others hold the file open with
    them (the builtin backend's --iomodel.idleOpen), as the application's did
    around its phase of so few (a header written by rank 0).  Two processes
    holding a Gluster file open make one's 512-byte write slower than when it
    alone holds it (medians of 0.47-0.72 against 0.37-0.44 ms).  Only for a
    shared file through MPI-IO, independent transfers without a view, no
    reread and no sync (-e): the idle processes call no collective on the file
    but its open and close."""
    if not job_np or np >= job_np or not shared or api != "MPIIO" or collective or \
            piece is not None or reread or synced:
        return None
    return job_np


def _check_sizes(chunk, transfer, extent):
    """A run no replay can make is refused, saying which phases (a hand-edited or
    extrapolated model's request of 2^60 bytes): a transfer beyond MAX_TRANSFER,
    or a file that would end past the largest offset."""
    if transfer > MAX_TRANSFER:
        raise ValueError(f"{_ids(chunk)}: a transfer (-t) of {transfer} B, more than IOR's MPIIO or "
                         f"the built-in replayer can move in one call ({MAX_TRANSFER} B: 8-byte "
                         f"integers counted in an int)")
    if extent > MAX_OFFSET:
        raise ValueError(f"{_ids(chunk)}: the replay's file would be {extent} B, past the largest "
                         f"file offset (2^63 - 1)")


def view_piece(piece, transfer):
    """The piece size of a view replaying a phase whose operations cover pieces of
    `piece` bytes on average: the divisor of the transfer nearest it (a transfer
    is a whole number of pieces: the count of pieces nearest transfer / piece,
    the smaller of two as near), or None when there is no piece or it is the
    whole transfer (a contiguous transfer).  Work and memory in sqrt(transfer):
    the divisors are found in pairs, up to sqrt(MAX_TRANSFER) = 131071."""
    if not piece or piece >= transfer:
        return None
    if transfer > MAX_TRANSFER:
        raise ValueError(f"a transfer of {transfer} B: more than {MAX_TRANSFER} B (see _check_sizes)")
    want = max(1, round(transfer / piece))
    low = np.arange(1, math.isqrt(transfer) + 1, dtype=np.int64)
    low = low[transfer % low == 0]
    counts = np.union1d(low, transfer // low)          # every divisor, ascending
    k = int(counts[np.argmin(np.abs(counts - want))])  # the first of two as near: the smaller
    return transfer // k if k > 1 else None


def ior_invocations(model, cluster=None):
    """The IOR runs of a model, in phase order: one per run of identical
    phases and file.  `cluster` (duck-typed) gives `workdir` (default ".")
    and `defeat_page_cache` (default False: no -e/-C)."""
    validate(model)
    workdir, defeat = _cluster_settings(cluster)
    return [_invocation(model, chunk, workdir, defeat) for chunk in _chunks(model)]


# ----------------------------------------------------------------- output

def _safe_directive(value, what):
    """IOR's -O and script directives stop at whitespace and split at ',' and '#'."""
    if re.search(r"[\s,#]", value):
        raise ValueError(f"{what} {value!r}: IOR cannot take a path with spaces, ',' or '#' in "
                         f"a directive; choose another directory")
    return value


def command(inv, ior="ior", summary_file=None):
    """The IOR argv of one invocation (without the launcher)."""
    argv = [ior, "-a", inv.api, "-s", str(inv.segments), "-b", str(inv.block),
            "-t", str(inv.transfer)]
    if inv.file_per_proc:
        argv.append("-F")
    if inv.collective:
        argv.append("-c")
    if inv.launch_np > inv.np:
        argv += ["-N", str(inv.np)]
    argv += list(inv.flags)
    argv += ["-o", inv.test_file]
    if summary_file is not None:
        argv += ["-O", "summaryFormat=JSON",
                 "-O", f"summaryFile={_safe_directive(str(summary_file), 'summary file')}"]
    return argv


def _launch(launcher, np_):
    launcher = list(launcher)
    flag = "-n" if launcher and os.path.basename(launcher[0]) == "srun" else "-np"
    return launcher + [flag, str(np_)]


def _removal(inv):
    return f"rm -f {shlex.quote(inv.test_file)}" + \
        (f" {shlex.quote(inv.test_file)}.*" if inv.file_per_proc else "")


def to_sh(model, invocations, launcher=("mpirun",), ior="ior"):
    """A shell script: one launcher line per invocation, preceded by comments
    naming its phases and what IOR could not reproduce; a read is preceded by
    the write that creates its file (not measured) and followed by its removal."""
    app = model["application"]
    lines = ["#!/bin/sh",
             f"# IOR 4.x runs for the I/O model of {comment_text(app['name'])} (np {app['np']}): one per run",
             "# of identical phases and file (Table II of the PAS2P-IO method; docs/commands/ior.md).",
             "set -e"]
    for inv in invocations:
        lines.append("")
        lines.append(comment_text(f"# {inv.label}: {inv.operation}, {inv.access_mode}, np {inv.np}, "
                                  f"{inv.weight} B in the application"))
        for note in inv.approximations:
            lines.append(f"#   approximation: {comment_text(note)}")
        if inv.setup is not None:
            lines.append("# setup (not measured): write the file the read reads")
            lines.append(shlex.join(_launch(launcher, inv.setup.np) + command(inv.setup, ior)))
        lines.append(shlex.join(_launch(launcher, inv.launch_np) + command(inv, ior)))
        if inv.setup is not None:
            lines.append(_removal(inv))
    return "\n".join(lines) + "\n"


def _script_test(inv, comment):
    d = {
        "api": inv.api,
        "numTasks": inv.np,
        "testFile": _safe_directive(inv.test_file, "test file"),
        "segmentCount": inv.segments,
        "blockSize": inv.block,
        "transferSize": inv.transfer,
        "filePerProc": int(inv.file_per_proc),
        "collective": int(inv.collective),
        "writeFile": int("-w" in inv.flags),
        "readFile": int("-r" in inv.flags),
        "keepFile": int("-k" in inv.flags),
        "useExistingTestFile": int("-E" in inv.flags),
        "reorderTasks": int("-C" in inv.flags),
        "reorderTasksRandom": int("-Z" in inv.flags),
        "fsync": int("-e" in inv.flags),
        "randomOffset": int("-z" in inv.flags),
    }
    return [f"# {comment_text(comment)}"] + [f"{k}={v}" for k, v in d.items()] + ["RUN"]


def to_ior_script(invocations, np=None, summary_file=None):
    """An IOR script (`ior -f FILE`). One script runs all its tests with the
    processes it was launched with, so it holds the invocations of one np:
    `np`, or the only one the invocations have (see ior_scripts()).  Every
    test sets every option, since a test inherits the previous one's."""
    nps = sorted({inv.launch_np for inv in invocations})
    if np is None:
        if len(nps) > 1:
            raise ValueError(f"these invocations use np {', '.join(map(str, nps))}; an IOR "
                             f"script runs all its tests with one np: give np, or use "
                             f"ior_scripts() for one script per np")
        np = nps[0] if nps else 1
    chosen = [inv for inv in invocations if inv.launch_np == np]
    lines = [f"# IOR 4.x script: run with `mpirun -np {np} ior -f FILE`.",
             "# All its tests run with the same processes; invocations with another np are "
             "in other scripts.",
             "IOR START"]
    if summary_file is not None:
        lines += ["summaryFormat=JSON",
                  f"summaryFile={_safe_directive(str(summary_file), 'summary file')}"]
    for inv in chosen:
        if inv.setup is not None:
            lines += _script_test(inv.setup, f"{inv.label}: setup (not measured), writes the "
                                             f"file the read reads")
        lines += _script_test(inv, f"{inv.label}: {inv.operation}")
    lines.append("IOR STOP")
    return "\n".join(lines) + "\n"


def ior_scripts(invocations, summary_file=None):
    """{np: IOR script} for every np of the invocations."""
    return {n: to_ior_script(invocations, n, summary_file)
            for n in sorted({inv.launch_np for inv in invocations})}


def to_json(invocations):
    """The invocations as one JSON-ready object (with each one's argv)."""
    def one(inv):
        d = asdict(inv)
        d["command"] = command(inv)
        d["bytes"] = inv.bytes
        if inv.setup is not None:
            d["setup"]["command"] = command(inv.setup)
            d["setup"]["bytes"] = inv.setup.bytes
        return d
    return {"format": FORMAT, "version": VERSION, "invocations": [one(i) for i in invocations]}
