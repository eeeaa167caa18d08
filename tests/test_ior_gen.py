"""IOR invocations from I/O models (replay/ior.py, docs/commands/ior.md).

The paper's example models must give the IOR parameters of Tables VII (NAS
BT-IO) and IX (S3D-IO), read from ../shared/reference/paper-tables.json; small
hand-written models check each rule of Table II and each approximation.
IOR itself is not run (it is not installed here)."""
import json
import shlex
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest

from iomodel.models import ModelError, find_runs, validate
from iomodel.models import paper
from iomodel.replay.backends import get_backend
from iomodel.replay.ior import (Invocation, command, ior_invocations, ior_scripts, sanitize,
                                to_ior_script, to_json, to_sh)

MIB = 2 ** 20
BT = [(c, n) for c in "BC" for n in (4, 9, 16, 25, 36)]
S3D = [(g, n) for g in (200, 400) for n in (8, 16, 32)]


def check_ior_rules(inv):
    """What IOR 4.x's ValidateTests and MPIIO check_params require."""
    assert inv.transfer > 0 and inv.transfer % 8 == 0
    assert inv.block % 8 == 0 and inv.block % inv.transfer == 0 and inv.block >= inv.transfer
    assert inv.segments >= 1 and inv.np >= 1
    if "-z" in inv.flags:
        assert inv.block > inv.transfer
        assert not (inv.api == "MPIIO" and inv.collective)
        assert not ("-C" in inv.flags and not inv.file_per_proc)
    if inv.api == "POSIX":
        assert not inv.collective
    if inv.reread:      # written and read back in one run, the read measured
        assert inv.operation == "read" and inv.setup is None
        assert "-w" in inv.flags and "-r" in inv.flags
        assert not {"-C", "-E", "-k"} & set(inv.flags)
        return
    assert ("-w" in inv.flags) != ("-r" in inv.flags)
    assert ("-w" in inv.flags) == (inv.operation == "write")
    if inv.operation == "read":
        assert inv.setup is not None
        check_ior_rules(inv.setup)
    else:
        assert inv.setup is None or inv.setup.setup is None


def nearest8(x):
    q, r = divmod(x, 8)
    return max(8, (q + (r >= 4)) * 8)


# ------------------------------------------------------------ the paper

@pytest.fixture(scope="module")
def tables():
    if not paper.TABLES.is_file():
        pytest.skip(f"no paper tables at {paper.TABLES}")
    return json.loads(paper.TABLES.read_text(), parse_float=Decimal)


def mib_close(nbytes, printed):
    """The table's MB (MiB) value, within its printed rounding. The paper rounds
    Table V's already rounded rs again (10.12 MiB is Table V's 10 MB, printed
    10.0; 40.546 is 40.55, printed 40.6), hence 0.1 MiB on top of half a unit."""
    printed = Decimal(str(printed))          # 122 is an int in the JSON, 30.5 a Decimal
    digits = -printed.as_tuple().exponent
    return abs(nbytes / MIB - float(printed)) <= 0.5 * 10 ** -digits + 0.1


@pytest.mark.parametrize("cls,np_", BT)
def test_btio_table_vii(tables, cls, np_):
    row = next(r for r in tables["table_VII_btio_ior_on_vc3"]["rows"]
               if r["class"] == cls and r["np"] == np_)
    model = paper.load_example(f"btio-{cls}-{np_}")
    rs = model["phases"][0]["rs"]
    invs = ior_invocations(model)
    assert [inv.phase_ids for inv in invs] == [list(range(1, 41)), [41]]
    write, read = invs
    for inv, op in ((write, "write"), (read, "read")):
        check_ior_rules(inv)
        assert inv.operation == op
        assert inv.np == np_
        assert inv.segments == 40                       # s = rep = 40
        assert inv.block == inv.transfer == nearest8(rs)  # b = t = rs
        assert mib_close(inv.block, row["b_t_MB"]), (inv.block / MIB, row["b_t_MB"])
        assert inv.collective and "-c" in command(inv)
        assert not inv.file_per_proc and "-F" not in command(inv)
        assert inv.api == "MPIIO"
    assert write.flags == ["-w"] and write.setup is None
    assert read.flags == ["-r", "-k", "-E"]
    s = read.setup
    assert (s.operation, s.np, s.segments, s.block, s.transfer, s.collective, s.file_per_proc,
            s.test_file) == ("write", np_, 40, read.block, read.transfer, True, False,
                             read.test_file)
    assert "-k" in s.flags and "-w" in s.flags
    # Table VII's time is the 40 writes' bytes at BW_CH: what the write invocation moves
    t = write.bytes / MIB / float(row["bw_ch_MBps"])
    assert t == pytest.approx(float(row["time_s"]), rel=0.03)
    # the paper's layout is not IOR's: the approximations say so, and the roundings are exact
    assert any("not affine" in a for a in write.approximations)
    assert any("non-contiguous" in a for a in write.approximations)
    assert bool(write.roundings) == (rs % 8 != 0)
    assert bool(model["phases"][0].get("rs_groups")) == any("mean" in a
                                                             for a in write.approximations)


@pytest.mark.parametrize("grid,np_", S3D)
def test_s3d_table_ix(tables, grid, np_):
    row = next(r for r in tables["table_IX_s3dio_ior_on_vc4"]["rows"]
               if r["workload"] == f"{grid}x3" and r["np"] == np_)
    model = paper.load_example(f"s3d-{grid}-{np_}")
    assert model["runs"] == [[1, 5]]
    rs = model["phases"][0]["rs"]
    invs = ior_invocations(model)
    # the run "1 to 5" covers five files: five IOR runs, one file each
    assert [inv.phase_ids for inv in invs] == [[1], [2], [3], [4], [5]]
    assert len({inv.test_file for inv in invs}) == 5
    for inv in invs:
        check_ior_rules(inv)
        assert (inv.operation, inv.np, inv.segments) == ("write", np_, 1)   # s = rep = 1
        assert inv.block == inv.transfer == rs                               # b = t = rs
        assert mib_close(inv.block, row["b_t_MB"])
        assert inv.collective and not inv.file_per_proc
        assert inv.bytes == inv.weight == np_ * rs       # each file as big as the application's
        assert inv.roundings == []
        assert inv.approximations == ["The file offsets are unknown (the source does not give "
                                      "them): IOR's layout for strided access was assumed."]
    # Table IX's time is the five files' bytes at BW_CH
    total = sum(inv.bytes for inv in invs)
    assert total == 5 * np_ * rs == model["weight"]
    assert total / MIB / float(row["bw_ch_MBps"]) == pytest.approx(float(row["time_s"]), rel=0.02)


def test_every_example_is_valid_for_ior():
    for name in paper.example_names():
        for inv in ior_invocations(paper.load_example(name)):
            check_ior_rules(inv)
            json.dumps(to_json([inv]))


# ------------------------------------------------- hand-written models

def make_phase(id, file=0, op="write", np=4, rs=MIB, rep=1, sizes=None, mode="strided",
               first=0, per_rank="auto", stride="auto", contiguous=True, routine="auto",
               collective=True, rs_groups=None, starts=None):
    sizes = sizes or [rs]
    assert sum(sizes) == rs or rs_groups
    if routine == "auto":
        routine = "MPI_File_write_at_all" if op == "write" else "MPI_File_read_at_all"
    if per_rank == "auto":
        per_rank = rs if mode == "strided" else rep * rs
    if stride == "auto":
        stride = (np * rs if mode == "strided" else rs) if rep > 1 else None
    if rs_groups:
        from iomodel.models import parse_ranks
        weight = sum(len(parse_ranks(g["ranks"])) * g["rs"] for g in rs_groups) * rep
    else:
        weight = np * rs * rep
    offsets = {"first": first, "per_rank": per_rank, "stride": stride, "contiguous": contiguous}
    if starts is not None:
        offsets["starts"] = starts
    p = {"id": id, "file": file, "operation": op, "routine": routine, "collective": collective,
         "np": np, "ranks": f"0-{np - 1}" if np > 1 else "0", "iop": len(sizes),
         "request_sizes": sizes, "rs": rs, "rs_min": rs, "rs_max": rs, "rep": rep,
         "weight": weight, "access_mode": mode, "offsets": offsets,
         "logical_time": {"first": None, "comm_between": None}, "start_s": float(id),
         "end_s": id + 0.5, "duration_s": 0.5, "bandwidth_Bps": weight / 0.5, "gap_s": 0.5,
         "gap_comm": None}
    if rs_groups:
        p["rs_groups"] = rs_groups
        p["rs_min"] = min(g["rs"] for g in rs_groups)
        p["rs_max"] = max(g["rs"] for g in rs_groups)
    return p


def make_model(phases, files=(("shared", "strided"),), np=4, name="unit app", kind="trace",
               inferred=()):
    files = [{"id": i, "name": f"f{i}", "paths": [f"f{i}"], "access_type": t, "np": np,
              "access_mode": m, "role": "inout", "iof_size": 0, "inf_size": 0, "size": 0,
              "extent": None} for i, (t, m) in enumerate(files)]
    model = {
        "format": "iomodel-model", "version": 1,
        "application": {"name": name, "command": [], "np": np, "hosts": {}, "run_time_s": None,
                        "io_time_s": None,
                        "features": {k: False for k in ("explicit_offsets", "individual_pointers",
                                                        "shared_pointers", "blocking",
                                                        "nonblocking", "collective",
                                                        "independent")}},
        "source": {"kind": kind, "path": None, "unavailable": [], "inferred": list(inferred)},
        "analysis": {"max_comm_gap": None, "max_idle_s": None, "threshold_rule": "given"},
        "files": files, "phases": phases, "runs": find_runs(phases),
        "order": [[p["id"], p["id"] + 1] for p in phases[:-1]],
        "weight": sum(p["weight"] for p in phases), "storage_capacity": 0,
    }
    return validate(model)


def only(model, cluster=None):
    invs = ior_invocations(model, cluster)
    assert len(invs) == 1
    check_ior_rules(invs[0])
    return invs[0]


def test_strided_shared_exact():
    inv = only(make_model([make_phase(1, rep=10)]))
    assert (inv.segments, inv.block, inv.transfer) == (10, MIB, MIB)
    assert (inv.file_per_proc, inv.collective, inv.api) == (False, True, "MPIIO")
    assert inv.approximations == [] and inv.roundings == []
    assert inv.bytes == inv.weight


def test_sequential_per_process_block():
    # Table II: -s 1, -b = weight / np = rep * rs (IOR's -b is per process), -t rs
    inv = only(make_model([make_phase(1, rs=MIB, rep=8, mode="sequential")],
                          files=[("shared", "sequential")]))
    assert (inv.segments, inv.block, inv.transfer) == (1, 8 * MIB, MIB)
    assert inv.bytes == inv.weight == 4 * 8 * MIB
    assert inv.approximations == [] and inv.roundings == []


def test_sequential_run_one_segment_per_phase():
    phases = [make_phase(i, rep=2, mode="sequential", first=(i - 1) * 4 * 2 * MIB)
              for i in (1, 2, 3)]
    inv = only(make_model(phases, files=[("shared", "sequential")]))
    assert inv.phase_ids == [1, 2, 3]
    assert (inv.segments, inv.block, inv.transfer) == (3, 2 * MIB, MIB)
    assert inv.approximations == []


def test_unknown_offsets_take_the_sequential_layout():
    # a Darshan log whose offsets it cannot give: mode unknown, IOR's sequential layout
    phase = make_phase(1, rs=MIB, rep=4, mode="unknown", first=None, per_rank=None, stride=None,
                       contiguous=None)
    inv = only(make_model([phase], files=[("shared", "unknown")]))
    assert (inv.segments, inv.block, inv.transfer, inv.flags) == (1, 4 * MIB, MIB, ["-w"])
    assert inv.approximations == ["The file offsets are unknown (the source does not give them): IOR's "
                                  "sequential layout (one block of rep * rs a process and phase) was assumed."]


def test_nested_strides_with_a_contiguous_innermost_level_are_iors_blocks():
    # IOR's -s 10 -b 256k -t 64k at 4 processes: 4 contiguous transfers, then the others' blocks
    phase = make_phase(1, rs=64 * 1024, rep=40, stride=None, per_rank=256 * 1024)
    phase["offsets"]["nested"] = [[10, 4 * 256 * 1024], [4, 64 * 1024]]
    inv = only(make_model([phase]))
    assert (inv.segments, inv.block, inv.transfer, inv.flags) == (10, 256 * 1024, 64 * 1024, ["-w"])
    assert inv.approximations == [] and inv.bytes == inv.weight
    # a nest whose blocks are not np * b apart: in order, said
    phase["offsets"]["nested"] = [[10, 5 * 256 * 1024], [4, 64 * 1024]]
    inv = only(make_model([phase]))
    assert (inv.segments, inv.block, "-z" in inv.flags) == (10, 256 * 1024, False)
    assert inv.approximations == ["A process's offsets are nested strides (10 x 1310720 B, 4 x 65536 B, "
                                  "outermost first): IOR walks them in order as 10 evenly spaced segments "
                                  "of 4 transfers, 1048576 B apart."]


def test_blocks_that_extend_the_file_as_the_application_did():
    # BT-IO simple S's dumps (tests/programs/bt_simple.c at 4 processes): 3 phases of 72
    # independent 240-byte writes a process, 120 of each dump's 288 extending the file in
    # lockstep (41.7%).  216 transfers a process: blocks of 4 extend it with (4 + 3) / 16 =
    # 43.75%, the nearest of the divisors' shares (6: 9 / 24 = 37.5%; 3: 6 / 12 = 50%)
    phases = [make_phase(i, rs=240, rep=72, stride=None, per_rank=None, collective=False,
                         routine="MPI_File_write_at", starts=[0, 240, 2880, 3120], first=(i - 1) * 69120)
              for i in (1, 2, 3)]
    for p in phases:
        p["extending_writes"] = 120
    inv = only(make_model(phases))
    assert (inv.segments, inv.block, inv.transfer, inv.collective) == (54, 960, 240, False)
    assert inv.bytes == inv.weight == 3 * 4 * 72 * 240
    assert "The application's writes extend the file with 41.7% of them when its processes go in lockstep " \
           "(extending_writes), IOR's blocks of 1 transfer with 100.0%: blocks of 4 transfers a process and " \
           "segment, which extend it with 43.8%." in inv.approximations
    # every write extending the file: IOR's own layout, one transfer a block, nothing said
    for p in phases:
        p["extending_writes"] = 288
    inv = only(make_model(phases))
    assert (inv.segments, inv.block) == (216, 240)
    assert not any("lockstep" in a for a in inv.approximations)
    # collective writes (two-phase I/O writes whole stripes): the share is not used
    for p in phases:
        p["extending_writes"], p["collective"], p["routine"] = 120, True, "MPI_File_write_at_all"
    assert (only(make_model(phases)).block) == 240


def test_strided_run_total_repetitions():
    # BT-IO's shape: identical phases of rep 1, one dump after the other
    phases = [make_phase(i, first=(i - 1) * 4 * MIB) for i in range(1, 6)]
    inv = only(make_model(phases))
    assert (inv.phase_ids, inv.segments, inv.block, inv.transfer) == ([1, 2, 3, 4, 5], 5, MIB, MIB)
    assert inv.approximations == []


def test_run_with_gaps_between_phases_is_said():
    phases = [make_phase(i, first=(i - 1) * 8 * MIB) for i in range(1, 4)]
    inv = only(make_model(phases))
    assert inv.segments == 3
    assert inv.approximations == ["phases 1 to 3 start at bytes 0, 8388608, 16777216, not one "
                                  "after the other; IOR writes them as consecutive segments of "
                                  "one file."]


def test_unique_files_file_per_proc():
    inv = only(make_model([make_phase(1, rep=4, per_rank=0, stride=MIB)],
                          files=[("unique", "strided")]))
    assert inv.file_per_proc and "-F" in command(inv)
    assert (inv.segments, inv.block, inv.transfer) == (4, MIB, MIB)
    assert inv.approximations == []
    seq = only(make_model([make_phase(1, rep=4, mode="sequential", per_rank=0)],
                          files=[("unique", "sequential")]))
    assert seq.file_per_proc and (seq.segments, seq.block, seq.transfer) == (1, 4 * MIB, MIB)


@pytest.mark.parametrize("access, paths, want", [
    ("unique", ["/o/fpp.0.dat", "/o/fpp.1.dat", "/o/fpp.2.dat", "/o/fpp.3.dat"], "fpp.{rank}.dat"),
    ("unique", [f"/o/ck_{r:04d}.h5" for r in range(4)], "ck_{rank:04}.h5"),
    ("unique", [f"/o/run7/out_{r}_2024.dat" for r in range(4)], "out_{rank}_2024.dat"),
    ("unique", [f"/o/a.{r}.b.{r}" for r in range(4)], None),       # two runs of digits vary
    ("unique", ["/o/x.0", "/o/y.1"], None),                          # the names differ
    ("unique", ["/o/x.0"], None),                                    # one file: no rank to find
    ("shared", ["/o/ior.dat"], "ior.dat"),
    ("shared", ["/o/{weird}.dat"], None),
])
def test_application_names_for_the_builtin_replayer(access, paths, want):
    """The pattern of --iomodel.names: where names place files (Gluster's DHT hashes
    them onto its servers), the application's names place them alike."""
    unique = {"per_rank": 0, "stride": MIB} if access == "unique" else {}
    m = make_model([make_phase(1, rep=4, **unique)], files=[(access, "strided")])
    m["files"][0]["paths"] = paths
    inv = only(m)
    assert inv.names == want
    argv = get_backend("builtin").argv(inv, "iomodel_replay", Path("s.json"), 1)
    assert (f"--iomodel.names={want}" in argv) == (want is not None)
    assert not any(a.startswith("--iomodel.names") for a in get_backend("ior").argv(
        inv, "ior", Path("s.json"), 1))


def test_rounding_to_multiples_of_8():
    inv = only(make_model([make_phase(1, rs=1000003, rep=2, stride=4 * 1000003,
                                      per_rank=1000003)]))
    assert (inv.block, inv.transfer) == (1000000, 1000000)
    assert inv.roundings == [{"what": "transfer size (-t)", "from": 1000003, "to": 1000000},
                             {"what": "block size (-b)", "from": 1000003, "to": 1000000}]
    assert any("rounded" in a and "1000003 -> 1000000" in a for a in inv.approximations)
    assert any(a.startswith("IOR moves 8000000 B where the phases moved 8000024 B")
               for a in inv.approximations)
    # sequential: t to the nearest multiple of 8 (ties up), then b to the nearest multiple of t
    seq = only(make_model([make_phase(1, rs=1000005, rep=3, mode="sequential")],
                          files=[("shared", "sequential")]))
    assert (seq.transfer, seq.block) == (1000008, 3000024)
    assert seq.roundings == [{"what": "transfer size (-t)", "from": 1000005, "to": 1000008},
                             {"what": "block size (-b)", "from": 3000015, "to": 3000024}]
    # tiny requests: t > 0 and a multiple of 8
    tiny = only(make_model([make_phase(1, rs=3, rep=1)]))
    assert (tiny.transfer, tiny.block) == (8, 8)
    # nothing is rounded that need not be
    assert only(make_model([make_phase(1, rs=4096, rep=3)])).roundings == []


def test_rs_groups_use_the_mean():
    groups = [{"ranks": "0-1", "rs": 1000, "request_sizes": [1000]},
              {"ranks": "2-3", "rs": 1016, "request_sizes": [1016]}]
    inv = only(make_model([make_phase(1, rs=1008, rep=3, rs_groups=groups, per_rank=None,
                                      stride=4 * 1008, starts=[0, 1000, 2000, 3016])]))
    assert (inv.segments, inv.block, inv.transfer) == (3, 1008, 1008)
    assert inv.bytes == inv.weight
    assert ("The processes move different amounts per repetition (ranks 0-1: 1000 B; ranks 2-3: "
            "1016 B); IOR moves the same on every process: rs = 1008 B, their mean, was used."
            in inv.approximations)
    assert any("not affine" in a and "0, 1000, 2000, 3016" in a for a in inv.approximations)


def test_mixed_request_sizes_are_merged():
    sizes = [8, 4096, 1048576]
    inv = only(make_model([make_phase(1, rs=sum(sizes), sizes=sizes, rep=5)]))
    assert (inv.segments, inv.block, inv.transfer) == (5, sum(sizes), sum(sizes))
    assert ("IOR has one transfer size and a repetition mixes request sizes (iop 3: 8, 4096, "
            "1048576 B): the operations of a repetition were merged into one transfer of "
            "rs = 1052680 B." in inv.approximations)
    # equal sizes: -t is the request size, -b holds the iop transfers; nothing approximated
    same = only(make_model([make_phase(1, rs=4 * 4096, sizes=[4096] * 4, rep=5)]))
    assert (same.segments, same.block, same.transfer) == (5, 4 * 4096, 4096)
    assert same.approximations == []
    # equal sizes within a process, different between processes: merged too, and said
    groups = [{"ranks": "0-1", "rs": 8192, "request_sizes": [4096, 4096]},
              {"ranks": "2-3", "rs": 16384, "request_sizes": [8192, 8192]}]
    grp = only(make_model([make_phase(1, rs=12288, sizes=[4096, 4096], rep=2, rs_groups=groups,
                                      per_rank=None, stride=None, starts=[0, 8192, 16384,
                                                                          32768])]))
    assert (grp.block, grp.transfer) == (12288, 12288)
    assert any("request sizes differ (iop 2: 4096, 4096 B)" in a and "merged" in a
               for a in grp.approximations)


def test_nonzero_first_offset():
    inv = only(make_model([make_phase(1, first=4096)]))
    assert inv.approximations == ["The phase starts at byte 4096 of the file; IOR starts at "
                                  "byte 0."]


def test_non_contiguous_view():
    inv = only(make_model([make_phase(1, contiguous=False)]))
    assert len(inv.approximations) == 1 and "file view" in inv.approximations[0]
    assert inv.piece is None


@pytest.mark.parametrize("piece, want", [
    (131072, 131072),       # S3D-like at 2 ranks: 16 pieces of 128 KiB in 2 MiB
    # 2 MiB / 100000 B = 21 pieces, which does not divide 2 MiB (2^21); the nearest
    # count that does is 16: pieces of 128 KiB
    (100000, 131072),
])
def test_view_pieces_for_the_builtin_replayer(piece, want):
    """A non-contiguous phase of a shared file with offsets.piece: the builtin
    backend moves each transfer through pieces (--iomodel.piece) of the divisor
    of -t nearest the mean piece; IOR's argv has no such option."""
    ph = make_phase(1, rs=2 * MIB, contiguous=False)
    ph["offsets"]["piece"] = piece
    inv = only(make_model([ph]))
    assert inv.transfer == 2 * MIB
    assert inv.piece == want and (2 * MIB) % inv.piece == 0
    argv = get_backend("builtin").argv(inv, "iomodel_replay", Path("s.json"), 1)
    assert argv[-1] == f"--iomodel.piece={want}"
    assert not any("piece" in a for a in get_backend("ior").argv(inv, "ior", Path("s.json"), 1))
    assert any(f"of {piece} B on average" in a for a in inv.approximations)
    said = [a for a in inv.approximations if "--iomodel.piece" in a]
    assert len(said) == 1 and f"pieces of {want} B" in said[0]
    assert ("divisor of -t" in said[0]) == (want != piece)


def test_view_pieces_not_for_unique_files_nor_whole_transfers():
    from iomodel.replay.ior import view_piece
    uniq = make_phase(1, rs=MIB, rep=2, contiguous=False, per_rank=0, stride=MIB)
    uniq["offsets"]["piece"] = 4096
    inv = only(make_model([uniq], files=[("unique", "strided")]))
    assert inv.piece is None and not any("--iomodel.piece" in a for a in inv.approximations)
    # a piece as long as the transfer, or longer: a contiguous transfer
    assert view_piece(MIB, MIB) is None and view_piece(2 * MIB, MIB) is None
    assert view_piece(None, MIB) is None
    # 3 pieces of a 48 KiB transfer; 7 pieces of 56 B (t = 56: 7 * 8)
    assert view_piece(16 * 1024, 48 * 1024) == 16 * 1024 and view_piece(8, 56) == 8


def test_view_pieces_of_a_large_transfer_are_found_at_once():
    """The divisor search once walked the counts of pieces one by one from
    transfer / piece: 2^60 B in pieces of 480 B ran for half an hour.  Now in
    sqrt(transfer) steps.  8 * (2^31 - 1) B (the largest transfer: 2^31 - 1 is
    prime, so its divisors are 1, 2, 4, 8 and those times 2^31 - 1) in pieces
    of 480 B: 35791394 pieces wanted, the nearest count that divides is 8,
    pieces of 2^31 - 1 B.  48 B in pieces of 9.6 B: 5 wanted, 4 and 6 as
    near, the smaller count: pieces of 12 B."""
    from iomodel.replay.ior import MAX_TRANSFER, view_piece
    assert MAX_TRANSFER == 8 * (2**31 - 1)
    assert view_piece(480, MAX_TRANSFER) == 2**31 - 1
    assert view_piece(9.6, 48) == 12
    with pytest.raises(ValueError, match="more than 17179869176 B"):
        view_piece(480, 2**60)


@pytest.mark.parametrize("rs, rep, want", [
    # a request of 2^60 B (pieces of 480): more than one MPI-IO call of IOR or the replayer moves
    (2**60, 1, "phase 1: a transfer (-t) of 1152921504606846976 B, more than IOR's MPIIO or the "
               "built-in replayer can move in one call (17179869176 B: 8-byte integers counted in an int)"),
    # 2^30 repetitions of 8 GiB - 1 B at one process: 2^63 - 2^30 B, but IOR's transfers are
    # multiples of 8 B: 2^30 of 8 GiB make a file of 2^63 B, one byte past the largest offset
    (2**33 - 1, 2**30, "phase 1: the replay's file would be 9223372036854775808 B, past the largest file "
                   "offset (2^63 - 1)"),
])
def test_a_phase_no_replay_can_make_is_refused(rs, rep, want):
    ph = make_phase(1, np=1, rs=rs, rep=rep, contiguous=False, per_rank=None, stride=rs)
    ph["offsets"]["piece"] = 480
    ph["bandwidth_Bps"] = None          # (make_phase's weight over 0.5 s is past the schema's numbers)
    with pytest.raises(ValueError) as e:
        ior_invocations(make_model([ph], np=1))
    assert str(e.value) == want


def test_phase_of_fewer_processes_than_used_the_file():
    """S3D-IO's header: rank 0 alone writes 512 B into a file the 4 processes then
    write together.  The header's run launches the 4 (job_np), the first takes
    part (-N 1) and the builtin backend has the other 3 open the file too; the
    collective phase needs no such thing; nor does a read of the header, whose
    setup (not measured) runs on its own process.  With -e (a write synced to
    defeat the page cache) the idle processes would have to sync with it: none."""
    m = make_model([make_phase(1, np=1, rs=512, routine="MPI_File_write_at", collective=False),
                    make_phase(2, np=4, rs=MIB, first=512),
                    make_phase(3, op="read", np=1, rs=512, routine="MPI_File_read_at",
                               collective=False)])
    head, data, back = ior_invocations(m)
    assert (head.np, head.job_np, head.launch_np) == (1, 4, 4)
    assert (data.np, data.job_np, data.launch_np) == (4, None, 4)
    assert (back.np, back.launch_np, back.setup.launch_np) == (1, 4, 1)
    assert command(head) == ["ior", "-a", "MPIIO", "-s", "1", "-b", "512", "-t", "512", "-N", "1",
                             "-w", "-o", "./iomodel.unit_app.1"]
    assert "-N" not in command(data) and "-N" not in command(back.setup)
    assert any("4 processes used the file and 1 move this phase's data" in a
               for a in head.approximations)
    sh = to_sh(m, [head]).splitlines()
    assert sh[-1] == "mpirun -np 4 ior -a MPIIO -s 1 -b 512 -t 512 -N 1 -w -o ./iomodel.unit_app.1"
    builtin = get_backend("builtin").argv(head, "iomodel_replay", Path("/tmp/s.json"), 1)
    assert builtin[-1] == "--iomodel.idleOpen"
    assert "--iomodel.idleOpen" not in get_backend("builtin").argv(data, "iomodel_replay",
                                                                 Path("/tmp/s.json"), 1)
    assert ior_scripts([head, data]).keys() == {4}
    synced = ior_invocations(m, SimpleNamespace(workdir=".", defeat_page_cache=True))[0]
    assert (synced.job_np, synced.launch_np, "-e" in synced.flags) == (None, 1, True)


def test_random_uses_z():
    inv = only(make_model([make_phase(1, rs=4096, rep=16, mode="random", per_rank=None,
                                      stride=None)], files=[("shared", "random")]))
    assert (inv.segments, inv.block, inv.transfer) == (1, 16 * 4096, 4096)
    # IOR 4.x refuses -z with collective MPI-IO: a collective phase stays collective, in order, and says so
    assert inv.collective and "-c" in command(inv) and "-z" not in command(inv)
    assert any("stay collective (-c)" in a and "-z" in a for a in inv.approximations)
    # independent: shuffled
    ind = only(make_model([make_phase(1, rs=4096, rep=16, mode="random", per_rank=None, stride=None,
                                      collective=False)], files=[("shared", "random")]))
    assert "-z" in ind.flags and "-z" in command(ind) and "-c" not in command(ind)
    # one transfer per segment: -z needs b > t, so it is left out and said
    one = only(make_model([make_phase(1, rs=4096, rep=1, mode="random", per_rank=None,
                                      stride=None, collective=False)],
                          files=[("shared", "random")]))
    assert "-z" not in one.flags and any("-b > -t" in a for a in one.approximations)


def test_defeat_page_cache_flags_and_workdir():
    phases = [make_phase(1), make_phase(2, op="read")]
    cluster = SimpleNamespace(workdir="/scratch/run", defeat_page_cache=True, name="vc")
    w, r = ior_invocations(make_model(phases), cluster)
    assert w.flags == ["-w", "-e"]
    assert r.flags == ["-r", "-k", "-E", "-C"]
    assert r.setup.flags == ["-w", "-k", "-e"]
    assert w.test_file == "/scratch/run/iomodel.unit_app.1"
    assert r.test_file == r.setup.test_file == "/scratch/run/iomodel.unit_app.2"
    # no cluster: the current directory, no page-cache flags
    w0, r0 = ior_invocations(make_model(phases))
    assert (w0.flags, r0.flags, r0.setup.flags) == (["-w"], ["-r", "-k", "-E"], ["-w", "-k"])
    assert w0.test_file == "./iomodel.unit_app.1"
    # -C with -z on a shared file is refused by IOR: left out, and said
    rnd = make_phase(1, op="read", rs=4096, rep=8, mode="random", per_rank=None, stride=None,
                     collective=False)
    inv = only(make_model([rnd], files=[("shared", "random")]), cluster)
    assert "-z" in inv.flags and "-C" not in inv.flags
    assert any("-C" in a for a in inv.approximations)


def test_reread_is_written_and_read_in_one_run():
    """A read phase whose every byte was written by its own process through
    the same open (reread_bytes = weight, 4 * 1 MiB * 2) is one run of -w -r,
    without setup, -C or -e even where the page cache is defeated; the
    builtin backend adds --iomodel.reread, IOR's argv does not have it.  A
    partly reread phase is replayed as a plain read."""
    from iomodel.replay.backends import get_backend
    rr = make_phase(2, op="read", rep=2)
    rr["reread_bytes"] = 4 * MIB * 2
    cluster = SimpleNamespace(workdir="/scratch/run", defeat_page_cache=True, name="vc")
    w, r = ior_invocations(make_model([make_phase(1, rep=2), rr]), cluster)
    check_ior_rules(r)
    assert (r.reread, r.flags, r.setup, w.flags) == (True, ["-w", "-r"], None, ["-w", "-e"])
    assert any("--iomodel.reread" in a for a in r.approximations)
    argv = get_backend("builtin").argv(r, "iomodel_replay", "s.json", 1)
    assert argv[-2:] == ["--iomodel.reread", "--iomodel.names=f0"]
    assert argv.count("--iomodel.reread") == 1
    assert "--iomodel.reread" not in get_backend("ior").argv(r, "ior", "s.json", 1)
    # repeated, a write sets each repetition's files aside (fresh pages); IOR cannot
    assert get_backend("builtin").argv(r, "iomodel_replay", "s.json", 3)[-5:] == \
        ["-i", "3", "--iomodel.fresh", "--iomodel.reread", "--iomodel.names=f0"]
    assert get_backend("builtin").argv(w, "iomodel_replay", "s.json", 3)[-2:] == \
        ["--iomodel.fresh", "--iomodel.names=f0"]
    assert "--iomodel.fresh" not in get_backend("builtin").argv(w, "iomodel_replay", "s.json", 1)
    # unless the cluster says run.fresh_files: false (a disk): IOR's removal between them
    assert get_backend("builtin").argv(w, "iomodel_replay", "s.json", 3, False)[-3:] == \
        ["-i", "3", "--iomodel.names=f0"]
    assert "--iomodel.fresh" not in get_backend("ior").argv(w, "ior", "s.json", 3)
    rr["reread_bytes"] = 4 * MIB * 2 - 1
    _, r2 = ior_invocations(make_model([make_phase(1, rep=2), rr]), cluster)
    assert (r2.reread, r2.flags, r2.setup.flags) == (False, ["-r", "-k", "-E", "-C"],
                                                     ["-w", "-k", "-e"])
    # a read of a file its setup wrote, kept (-k -E): nothing to set aside
    assert "--iomodel.fresh" not in get_backend("builtin").argv(r2, "iomodel_replay", "s.json", 3)


def test_api_from_routine_and_source():
    assert only(make_model([make_phase(1, routine="MPI_File_write_all")])).api == "MPIIO"
    posix = only(make_model([make_phase(1, routine="pwrite", collective=False)]))
    assert posix.api == "POSIX" and not posix.collective
    # Darshan: no routine, no collective flag: MPI-IO, independent, both said
    dar = only(make_model([make_phase(1, routine=None, collective=None)], kind="darshan"))
    assert dar.api == "MPIIO" and not dar.collective
    assert any("routine is unknown" in a for a in dar.approximations)
    assert any("collective is unknown" in a for a in dar.approximations)
    # ... unless the log has only POSIX operations
    only_posix = ["operations from Darshan's DXT_POSIX trace (the log has no DXT_MPIIO "
                  "operations): one per POSIX read or write"]
    px = only(make_model([make_phase(1, routine=None, collective=None)], kind="darshan",
                         inferred=only_posix))
    assert px.api == "POSIX" and "-a" in command(px) and "POSIX" in command(px)


def test_run_over_files_gives_one_invocation_per_file():
    phases = [make_phase(i, file=i - 1) for i in (1, 2, 3)]
    model = make_model(phases, files=[("shared", "strided")] * 3)
    assert model["runs"] == [[1, 3]]
    invs = ior_invocations(model)
    assert [i.phase_ids for i in invs] == [[1], [2], [3]]
    assert [i.test_file for i in invs] == [f"./iomodel.unit_app.{k}" for k in (1, 2, 3)]


def test_test_file_name_is_sanitized():
    inv = only(make_model([make_phase(1)], name="my app/v2 (test)"))
    assert inv.test_file == "./iomodel.my_app_v2_test.1"
    assert sanitize("///") == "model"


def test_invalid_model_is_refused():
    model = make_model([make_phase(1)])
    model["phases"][0]["rep"] = 0
    with pytest.raises(ModelError, match=r"phases\[0\]\.rep"):
        ior_invocations(model)


# ------------------------------------------------------------- outputs

def small():
    """A write of 2 repetitions and its read-back, np 4, 1 MiB requests."""
    return make_model([make_phase(1, rep=2), make_phase(2, op="read", rep=2)], name="small")


def test_command_argv():
    w, r = ior_invocations(small())
    assert command(w) == ["ior", "-a", "MPIIO", "-s", "2", "-b", "1048576", "-t", "1048576",
                          "-c", "-w", "-o", "./iomodel.small.1"]
    assert command(r, ior="/opt/ior/bin/ior", summary_file="/tmp/out/r.json") == [
        "/opt/ior/bin/ior", "-a", "MPIIO", "-s", "2", "-b", "1048576", "-t", "1048576", "-c",
        "-r", "-k", "-E", "-o", "./iomodel.small.2",
        "-O", "summaryFormat=JSON", "-O", "summaryFile=/tmp/out/r.json"]
    with pytest.raises(ValueError, match="spaces"):
        command(w, summary_file="/tmp/my results/w.json")


def test_sh_lines():
    model = small()
    text = to_sh(model, ior_invocations(model))
    assert text.splitlines() == [
        "#!/bin/sh",
        "# IOR 4.x runs for the I/O model of small (np 4): one per run",
        "# of identical phases and file (Table II of the PAS2P-IO method; docs/commands/ior.md).",
        "set -e",
        "",
        "# phase 1: write, strided, np 4, 8388608 B in the application",
        "mpirun -np 4 ior -a MPIIO -s 2 -b 1048576 -t 1048576 -c -w -o ./iomodel.small.1",
        "",
        "# phase 2: read, strided, np 4, 8388608 B in the application",
        "# setup (not measured): write the file the read reads",
        "mpirun -np 4 ior -a MPIIO -s 2 -b 1048576 -t 1048576 -c -w -k -o ./iomodel.small.2",
        "mpirun -np 4 ior -a MPIIO -s 2 -b 1048576 -t 1048576 -c -r -k -E -o ./iomodel.small.2",
        "rm -f ./iomodel.small.2",
    ]
    # approximations become comments; srun takes -n; unique files are removed per process
    m = make_model([make_phase(1, op="read", first=64, per_rank=0)], files=[("unique", "strided")],
                   name="u")
    lines = to_sh(m, ior_invocations(m), launcher=["srun", "--mpi=pmix"]).splitlines()
    assert "#   approximation: The phase starts at byte 64 of the file; IOR starts at byte 0." \
        in lines
    assert lines[-2] == ("srun --mpi=pmix -n 4 ior -a MPIIO -s 1 -b 1048576 -t 1048576 -F -c "
                         "-r -k -E -o ./iomodel.u.1")
    assert lines[-1] == "rm -f ./iomodel.u.1 ./iomodel.u.1.*"
    # every command line parses back to the argv of the invocations (setup before its read)
    w, r = ior_invocations(model)
    runs = [shlex.split(l) for l in text.splitlines() if l.startswith("mpirun")]
    assert [a[:3] for a in runs] == [["mpirun", "-np", "4"]] * 3
    assert [a[3:] for a in runs] == [command(w), command(r.setup), command(r)]


def test_ior_script_lines():
    text = to_ior_script(ior_invocations(small()))
    test = lambda comment, f, w, r, k, e: [  # noqa: E731
        f"# {comment}", "api=MPIIO", "numTasks=4", f"testFile=./iomodel.small.{f}",
        "segmentCount=2", "blockSize=1048576", "transferSize=1048576", "filePerProc=0",
        "collective=1", f"writeFile={w}", f"readFile={r}", f"keepFile={k}",
        f"useExistingTestFile={e}", "reorderTasks=0", "reorderTasksRandom=0", "fsync=0", "randomOffset=0",
        "RUN"]
    assert text.splitlines() == [
        "# IOR 4.x script: run with `mpirun -np 4 ior -f FILE`.",
        "# All its tests run with the same processes; invocations with another np are in "
        "other scripts.",
        "IOR START",
        *test("phase 1: write", 1, 1, 0, 0, 0),
        *test("phase 2: setup (not measured), writes the file the read reads", 2, 1, 0, 1, 0),
        *test("phase 2: read", 2, 0, 1, 1, 1),
        "IOR STOP",
    ]
    with_summary = to_ior_script(ior_invocations(small()), summary_file="/tmp/s.json")
    assert with_summary.splitlines()[3:5] == ["summaryFormat=JSON", "summaryFile=/tmp/s.json"]


def test_ior_script_groups_by_np():
    m = make_model([make_phase(1, np=4), make_phase(2, np=2, per_rank=MIB)], np=4)
    invs = ior_invocations(m)
    assert [i.np for i in invs] == [4, 2]
    with pytest.raises(ValueError, match="one np"):
        to_ior_script(invs)
    scripts = ior_scripts(invs)
    assert sorted(scripts) == [2, 4]
    assert "numTasks=2" in scripts[2].splitlines() and "numTasks=4" not in scripts[2]
    assert to_ior_script(invs, np=4) == scripts[4]


def test_json():
    invs = ior_invocations(small())
    doc = json.loads(json.dumps(to_json(invs)))
    assert doc["format"] == "iomodel-ior" and doc["version"] == 1
    w, r = doc["invocations"]
    assert w["command"] == command(invs[0]) and w["bytes"] == w["weight"] == 8 * MIB
    assert w["setup"] is None
    assert r["setup"]["command"] == command(invs[1].setup)
    assert {k: w[k] for k in ("phase_ids", "np", "api", "segments", "block", "transfer",
                              "file_per_proc", "collective", "operation", "test_file", "flags",
                              "approximations", "roundings")} == {
        "phase_ids": [1], "np": 4, "api": "MPIIO", "segments": 2, "block": MIB,
        "transfer": MIB, "file_per_proc": False, "collective": True, "operation": "write",
        "test_file": "./iomodel.small.1", "flags": ["-w"], "approximations": [],
        "roundings": []}
    assert isinstance(invs[0], Invocation)
