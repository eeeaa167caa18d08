"""The tracer under real mpirun, on the programs of tests/programs/; the
tests marked BOTH_MPIS run under Open MPI and under MPICH, with the same
expected values.

Expected calls, offsets, bytes and communication counts come from
tests/programs/expected.py, worked out by hand from the programs' sources.
"""
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from conftest import (BOTH_MPIS, PROGRAMS, RANK_FILES, final_lclocks, mpirun, program_command, rank_events,
                      recorded, stopped_by_mpirun)

sys.path.insert(0, str(PROGRAMS))
import expected  # noqa: E402

NP = 4


def data_calls(evs):
    return [(e["routine"], e["file"], e["abs_offset"], e["bytes"]) for e in evs if e["data"]]


def comm_counts_between_data_calls(evs, final_lclock):
    """Communication calls before the first data call, between consecutive
    ones, and after the last: differences of the logical clock."""
    clocks = [e["lclock"] for e in evs if e["data"]]
    return [b - a for a, b in zip([0] + clocks, clocks + [final_lclock])]


def large_count(routine):
    """The MPI-4 large-count form of a data-access routine (mpi4py calls it
    where the MPI has it: MPICH 4, not Open MPI 4.1)."""
    return routine + "_c" if routine.startswith("MPI_File_") and ("read" in routine or "write" in routine) \
        else routine


def check_against_expected(trace, prog, np_, large=False, **kw):
    """The trace against expected.py; `large`: the data calls are their MPI-4
    large-count forms."""
    name = large_count if large else (lambda r: r)
    per_rank = rank_events(trace)
    assert sorted(per_rank) == list(range(np_))
    finals = final_lclocks(trace)
    for rank in range(np_):
        evs = per_rank[rank]
        assert data_calls(evs) == [(name(r), *x) for r, *x in expected.io_calls(prog, np_, rank, **kw)], \
            f"rank {rank}"
        gaps = [sum(g.values()) for g in expected.comm_gaps(prog, np_, rank, **kw)]
        assert comm_counts_between_data_calls(evs, finals[rank]) == gaps, f"rank {rank}"
        # every completion links to the post it completes
        data_seq = [e["seq"] for e in evs if e["data"]]
        got = {}
        for e in evs:
            if e["completion"]:
                got.setdefault(e["routine"], []).append(data_seq.index(e["request"]))
        want = {}
        for routine, posts in expected.completions(prog, np_, rank, **kw):
            want.setdefault(name(routine), []).extend(posts)
        assert got == want, f"rank {rank}"
    # calls per routine over all ranks (communication is counted, not recorded)
    counts = Counter(e["routine"] for evs in per_rank.values() for e in evs if e["call"]
                     and not (e["routine"] == "MPI_Test" and not e["completion"]))
    for routine, n in expected.routine_totals(prog, np_, **kw).items():
        if routine not in expected.COMMUNICATION:
            assert counts[name(routine)] == n, routine
    assert counts["MPI_Finalize"] == np_


@BOTH_MPIS
@pytest.mark.parametrize("prog", ["basic_c", "basic_mpifh", "basic_usempi", "basic_f08", "basic_py"])
def test_basic_program_in_every_language(traced, prog, mpi):
    run = traced(prog, NP)
    trace = run.trace()
    large = prog == "basic_py" and mpi == "mpich"
    check_against_expected(trace, prog, NP, large=large)
    info = subprocess.run([sys.executable, "-m", "iomodel", "trace-info", "--json",
                           str(run.trace_dir)], capture_output=True, text=True, check=True)
    import json
    s = json.loads(info.stdout)
    assert s["ranks"] == NP
    assert [os.path.basename(f) for f in s["files"]] == ["shared.dat"]
    assert s["bytes_written"] == NP * (3 * 1024 + 512)
    assert s["bytes_read"] == NP * (1024 + 512)
    assert s["events"]["MPI_File_write_at_all" + "_c" * large] == 3 * NP
    assert s["events"]["MPI_File_read_at" + "_c" * large] == NP
    init = "MPI_Init_thread" if prog == "basic_py" else "MPI_Init"
    assert s["events"][init] == NP
    # time zero is after MPI_Init on every rank; calls are timed in order
    ev = trace.events
    t0, t1 = ev["t_start"].to_numpy(), ev["t_end"].to_numpy()
    data = ev["data"].to_numpy(zero_copy_only=False)
    assert (t0[data] >= 0).all() and (t1 >= t0).all()
    opens = trace.files.to_pylist()
    assert [(o["comm_size"], o["comm_rank"]) for o in sorted(opens, key=lambda o: o["rank"])] == \
        [(NP, r) for r in range(NP)]
    assert all(o["amode"] & 1 for o in opens)  # MPI_MODE_CREATE is 1 in Open MPI and MPICH


@BOTH_MPIS
@pytest.mark.parametrize("np_,size", [(4, (8, 8, 8, 5)), (9, (12, 12, 6, 5))])
def test_btio_like_views_resolve_to_the_hand_computed_layout(traced, np_, size):
    nx, ny, nz, nsteps = size
    run = traced("btio_like", np_, nx, ny, nz, nsteps)
    trace = run.trace()
    kw = dict(nx=nx, ny=ny, nz=nz, nsteps=nsteps)
    per_rank = rank_events(trace)
    finals = final_lclocks(trace)
    ext = trace.extents.to_pylist()
    step_bytes = nx * ny * nz * 40
    for rank in range(np_):
        evs = [e for e in per_rank[rank] if e["data"]]
        assert [e["routine"] for e in evs] == ["MPI_File_write_at_all"] * nsteps + \
            ["MPI_File_read_at_all"] * nsteps
        local = expected.btio_local_cells(np_, nx, ny, nz)
        assert [e["bytes"] for e in evs] == [local * 40] * (2 * nsteps)
        for e in evs:
            step = (evs.index(e)) % nsteps
            got = [(x["offset"], x["length"]) for x in ext
                   if x["rank"] == rank and x["seq"] == e["seq"]]
            want = expected.btio_expected_ranges(np_, nx, ny, nz, nsteps, rank, step=step)
            assert got == want, (rank, step)
        gaps = [sum(g.values()) for g in expected.comm_gaps("btio_like", np_, rank, **kw)]
        assert comm_counts_between_data_calls(per_rank[rank], finals[rank]) == gaps
    # the writes cover the file exactly once
    writes = sorted((x["offset"], x["length"]) for x in ext
                    if per_rank[x["rank"]][x["seq"]]["write"])
    off = np.array([w[0] for w in writes])
    ln = np.array([w[1] for w in writes])
    assert off[0] == 0 and (off[1:] == off[:-1] + ln[:-1]).all()
    assert off[-1] + ln[-1] == nsteps * step_bytes == os.path.getsize(run.data_dir / "btio.dat")
    view = trace.views.to_pylist()[0]
    assert view["etype_size"] == 40 and view["disp"] == 0 and not view["capped"]
    assert view["filetype_extent"] == step_bytes


@BOTH_MPIS
def test_nonblocking_and_split_collectives_complete_at_wait(traced):
    trace = traced("nonblocking", NP).trace()
    check_against_expected(trace, "nonblocking", NP)
    ev = trace.events.to_pylist()
    posts = [e for e in ev if e["data"] and e["nonblocking"]]
    # per rank: iwrite_at, iwrite_at_all, iread_at, the two _begin calls, iread
    assert len(posts) == 6 * NP
    for e in posts:
        done = ev[[i for i, x in enumerate(ev) if x["rank"] == e["rank"]
                   and x["seq"] == e["request"]][0]]
        # the I/O interval ends at the completion, not at the post
        assert e["t_complete"] == done["t_end"] >= e["t_end"]


@BOTH_MPIS
def test_individual_and_shared_file_pointers(traced):
    check_against_expected(traced("pointers", NP).trace(), "pointers", NP)


@BOTH_MPIS
def test_file_per_process(traced):
    trace = traced("fpp", NP).trace()
    check_against_expected(trace, "fpp", NP)
    assert sorted(os.path.basename(p) for p in trace.paths) == [f"fpp.{r}.dat" for r in range(NP)]
    assert {o["comm_size"] for o in trace.files.to_pylist()} == {1}


@BOTH_MPIS
def test_romio_collectives_count_no_internal_communication(traced, mpi):
    """ROMIO (Open MPI's romio321 component; MPICH's MPI-IO itself) calls MPI
    inside collective I/O (collective buffering's Allreduce, Alltoall): none of
    it is counted."""
    run = traced("basic_c", NP, mca=[("io", "romio321")] if mpi == "openmpi" else ())
    check_against_expected(run.trace(), "basic_c", NP)


def test_killed_run_leaves_a_readable_partial_trace(traced):
    # A 4096-byte buffer holds 4096 // 32 = 128 records.  Rank 0 records
    # MPI_Init, MPI_File_open and 1000 writes (1002 events, plus an extension
    # record for MPI_Init should it last more than 2^32 ticks) and is killed
    # (SIGKILL) with its file still open: the buffer was flushed full 7 times,
    # so 896 records are on disk: MPI_Init, MPI_File_open and the first writes.
    # mpirun then stops the other ranks with SIGTERM in their second barrier:
    # they write out their buffers, so their traces are whole, unless mpirun's
    # SIGKILL came first (stopped_by_mpirun): then the 896 records flushed,
    # MPI_Init, the open and 894 writes.
    run = traced("killed", NP, check=False, env={"IOMODEL_BUFFER_BYTES": "4096"})
    assert run.proc.returncode != 0
    trace = run.trace(partial=True)  # mpirun's SIGKILL may cut another rank's last write short
    ranks = {r["rank"]: r for r in trace.ranks.to_pylist()}
    r0 = ranks[0]
    from iomodel.analyzer.tracefile import read_rank_file
    raw = read_rank_file(r0["path"])
    assert r0["ended_by"] is None and r0["damage"] is None and raw.records == 896
    # said, and the model marked partial: rank 0's calls after its 7th buffer are lost
    from iomodel.analyzer import analyze
    from iomodel.models import format_ranks
    gaps = analyze(run.trace_dir, partial=True)["source"]["partial"]
    unended = [r for r in range(NP) if ranks[r]["ended_by"] is None and ranks[r]["damage"] is None]
    assert unended[0] == 0 and gaps["unended_ranks"] == format_ranks(unended)
    assert any(n.startswith(f"rank{'s' * (len(unended) > 1)} {format_ranks(unended)}: ") and
               "no end (killed outright" in n for n in gaps["notes"])
    events = rank_events(trace)
    writes = [e for e in events[0] if e["data"]]
    assert [e["abs_offset"] for e in writes] == [8 * i for i in range(len(writes))]
    assert len(writes) == r0["events"] - 2 >= 896 - 3
    for rank in range(1, NP):
        got = [recorded(e) for e in events[rank]]
        assert stopped_by_mpirun(ranks[rank], got, expected.killed_recorded(rank, closed=True), 896), rank


def test_unwritable_trace_dir_leaves_the_run_unchanged(build_dir, tmp_path):
    exe = program_command(build_dir, "plain_output")
    data = tmp_path / "data"
    data.mkdir()
    plain = subprocess.run(mpirun(NP, *exe, data), capture_output=True, text=True, check=True)
    from iomodel.tracer import library_path
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a directory")
    env = {**os.environ, "LD_PRELOAD": str(library_path()),
           "IOMODEL_TRACE_DIR": str(blocked / "trace")}
    traced = subprocess.run(mpirun(NP, *exe, data), capture_output=True, text=True, env=env)
    assert traced.returncode == 0
    assert traced.stdout == plain.stdout == expected.plain_output_stdout(NP)
    warnings = [l for l in traced.stderr.splitlines() if l.startswith("iomodel:")]
    assert len(warnings) == 1 and "running untraced" in warnings[0]


def test_call_longer_than_32_bit_ticks_keeps_its_end_time(traced):
    """Rank 0's collective write waits 2.5 s for rank 1: more than 2^32 ticks
    of this machine's clock, so its end time goes to an extension record."""
    trace = traced("long_call", NP).trace()
    from iomodel.analyzer.tracefile import read_rank_file
    for rank in (0, 2, 3):
        raw = read_rank_file(trace.rank_files[rank])      # the rank's image in job.iot
        w = [e for e in rank_events(trace)[rank] if e["data"]]
        assert [(e["routine"], e["abs_offset"], e["bytes"]) for e in w] == \
            [("MPI_File_write_at_all", rank * 100, 100)]
        seconds = w[0]["t_end"] - w[0]["t_start"]
        assert 2.4 < seconds < 30
        ticks = seconds * 1e9 / raw.ns_per_tick
        # MPI_Init, MPI_File_open, the write, MPI_File_close, MPI_Finalize
        assert len(raw.events) == 5
        assert raw.records == 5 + (ticks >= 2**32) + (raw.events["t1"][0] - raw.events["t0"][0] >= 2**32)


def test_ranks_of_one_host_share_one_clock(traced):
    """clock_stamps: each rank reads CLOCK_MONOTONIC right before each of its 10
    writes.  The trace's t_start of a write less the program's reading is the
    same for every rank of the host (the few microseconds of the wrapper's
    entry; the least of 10 leaves out a preemption), although each rank left
    the tracer's barrier at its own moment (with 4 ranks on 2 cores, tens to
    hundreds of microseconds apart)."""
    run = traced("clock_stamps", NP)
    trace = run.trace()
    offsets = []
    for rank, ev in rank_events(trace).items():
        w = [e for e in ev if e["data"]]
        assert [(e["routine"], e["abs_offset"]) for e in w] == \
            [("MPI_File_write_at", (i * NP + rank) * 8) for i in range(10)]
        stamps = [int(x) * 1e-9 for x in (run.data_dir / f"stamps-{rank}.txt").read_text().split()]
        assert len(stamps) == 10
        offsets.append(min(e["t_start"] - s for e, s in zip(w, stamps)))
    assert len(offsets) == NP
    assert max(offsets) - min(offsets) < 10e-6


def test_exit_without_finalize_is_flushed_at_exit(traced):
    run = traced("no_finalize", 1, check=False)
    trace = run.trace()
    (rank,) = trace.ranks.to_pylist()
    assert rank["ended_by"] == "exit without MPI_Finalize"
    assert [(e["routine"], e["abs_offset"], e["bytes"]) for e in rank_events(trace)[0]] == [
        ("MPI_Init", -1, 0), ("MPI_File_open", -1, 0),
        ("MPI_File_write_at", 0, 10), ("MPI_File_write_at", 10, 10)]


def test_tables_export_to_parquet(traced, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    run = traced("fpp", NP)
    out = tmp_path / "tables"
    subprocess.run([sys.executable, "-m", "iomodel", "trace-info", str(run.trace_dir),
                    "--parquet", str(out)], check=True, capture_output=True)
    trace = run.trace()
    for name in ("events", "extents", "files", "views", "ranks"):
        got, want = pq.read_table(out / f"{name}.parquet"), getattr(trace, name)
        assert got.schema == want.schema and got.num_rows == want.num_rows, name
        for col in want.column_names:  # NaN (no completion) must round-trip too
            a = got[col].combine_chunks()
            b = want[col].combine_chunks()
            if pa.types.is_floating(b.type):
                assert np.array_equal(a.to_numpy(), b.to_numpy(), equal_nan=True), col
            else:
                assert a.equals(b), (name, col)
    # fpp: per rank 4 writes of 4096 bytes and one read of 16384, all contiguous
    assert pq.read_table(out / "extents.parquet").num_rows == NP * 5


@BOTH_MPIS
def test_huge_filetype_is_capped_and_marked(traced):
    # btio_like 8x8x8 on 4 ranks: each rank's subarray filetype is 4 blocks of
    # 1280 bytes (expected.btio_expected_ranges); stored as the tracer's pieces
    # (the cap is theirs), with room for only 2.
    env = {"IOMODEL_MAX_VIEW_BLOCKS": "2", "IOMODEL_VIEWS": "pieces"}
    trace = traced("btio_like", NP, 8, 8, 8, 5, env=env).trace()
    views = trace.views.to_pylist()
    assert len(views) == NP and all(v["capped"] and v["blocks"] == 2 for v in views)
    for rank in range(NP):
        want = expected.btio_expected_ranges(NP, 8, 8, 8, 5, rank, step=0)
        v = [x for x in views if x["rank"] == rank][0]
        assert list(zip(v["block_offsets"], v["block_lengths"])) == want[:2]
    data = [e for e in trace.events.to_pylist() if e["data"]]
    assert len(data) == 2 * 5 * NP and not any(e["resolved"] for e in data)


# view_types.c's filetypes: the blocks in its header, worked out by hand.  A and C
# cover whole inner dimensions: one run each, not one block per element.
VIEW_TYPES_BLOCKS = [
    [(192, 384)],
    [(256, 96), (448, 96)],
    [(256, 96), (448, 96)],
    [(64 + 8 * k, 4) for k in range(16)],
    [(64, 16), (104, 16)],
    [(0, 16), (32, 16), (64, 16)],              # F vector
    [(0, 12), (100, 12)],                       # G hvector
    [(0, 4), (12, 8), (28, 4)],                 # H indexed
    [(4, 8), (40, 4)],                          # I hindexed
    [(0, 4), (8, 4), (20, 4)],                  # J indexed_block
    [(0, 3), (50, 3)],                          # K hindexed_block
    [(0, 4), (8, 8)],                           # L struct
    [(0, 16), (32, 16), (64, 16)],              # M dup of F
    [(0, 4), (12, 4)],                          # N contiguous of a resized int
    [(0, 32)],                                  # O darray: the tracer's pieces
]
VIEW_TYPES_EXTENTS = [768, 768, 768, 192, 120, 80, 112, 32, 40, 24, 53, 16, 80, 24, 32]


@BOTH_MPIS
def test_views_are_described_and_flatten_to_the_hand_computed_blocks(traced):
    # Each filetype but the darray is stored as its description (a type id), the
    # analyzer flattening it; the darray, which the trace does not describe, as the
    # tracer's pieces.
    views = traced("view_types", 1).trace().views.to_pylist()
    got = [list(zip(v["block_offsets"], v["block_lengths"])) for v in views]
    assert got == VIEW_TYPES_BLOCKS
    assert [v["blocks"] for v in views] == [len(b) for b in VIEW_TYPES_BLOCKS]
    assert not any(v["capped"] or v["undecoded"] for v in views)
    assert [v["filetype_extent"] for v in views] == VIEW_TYPES_EXTENTS
    assert [v["type_id"] is None for v in views] == [False] * 14 + [True]


@BOTH_MPIS
def test_a_views_description_flattens_to_the_tracers_own_pieces(traced):
    # IOMODEL_VIEWS=both: each view's description and the tracer's own flattening of
    # it in one trace; the analyzer's blocks from the one are the other's, exactly.
    from iomodel.analyzer.tracefile import read_rank_file
    r = traced("view_types", 1, env={"IOMODEL_VIEWS": "both"})
    raw = read_rank_file(r.trace().rank_files[0])
    described = [v for v in raw.views if "type_id" in v]
    assert len(described) == 14 and len(raw.views) == 15
    for v, want in zip(described, VIEW_TYPES_BLOCKS):
        assert v["pieces"].tolist() == v["blocks"].tolist() == [list(b) for b in want]
    # each distinct type once a rank, children first: MPI_INT 0, A to C's subarrays 1 to 3,
    # D's vector 4, resized pair 5 and subarray 6, MPI_DOUBLE 7, E 8, F's vector 9, G to I
    # 10 to 12, MPI_SHORT 13, J 14, MPI_CHAR 15, K 16, L's struct (of 0 and 7) 17, M's dup
    # of F's vector 18, N's resized int 19 and contiguous 20 (a named type is its size)
    assert len(raw.types) == 21
    assert [v["type_id"] for v in described] == [1, 2, 3, 6, 8, 9, 10, 11, 12, 14, 16, 17, 18, 20]
    assert raw.types[17]["kids"] == [0, 7] and raw.types[18]["kids"] == [9]


def test_trace_launches_without_numpy_or_pyarrow_loaded(tmp_path):
    # OpenBLAS's threads spin for about 0.2 s of CPU after numpy's import: the
    # launcher must not load it while the application starts on the same cores.
    code = ("import sys; from iomodel.cli import main; "
            "rc = main(['trace', '-o', sys.argv[1], '--', 'true']); "
            "print(rc, [m for m in ('numpy', 'pyarrow') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "t")], capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["0", "[]"]


def test_subarray_views_over_the_cap_keep_their_first_blocks(traced):
    # Views stored as the tracer's pieces (IOMODEL_VIEWS=pieces, as before types were
    # described) with room for one block: A and the darray are one run each, the
    # others keep their first block and are marked capped (D's element alone, an int
    # at 0 and one at 8, is over the cap: its first int at 64).
    env = {"IOMODEL_MAX_VIEW_BLOCKS": "1", "IOMODEL_VIEWS": "pieces"}
    views = traced("view_types", 1, env=env).trace().views.to_pylist()
    got = [list(zip(v["block_offsets"], v["block_lengths"])) for v in views]
    assert got == [[(192, 384)], [(256, 96)], [(256, 96)], [(64, 4)], [(64, 16)],
                   [(0, 16)], [(0, 12)], [(0, 4)], [(4, 8)], [(0, 4)], [(0, 3)], [(0, 4)],
                   [(0, 16)], [(0, 4)], [(0, 32)]]
    assert [v["capped"] for v in views] == [False] + [True] * 13 + [False]
    assert all(v["type_id"] is None for v in views)


def test_s3d_views_cost_the_same_trace_bytes_at_any_grid(traced):
    """s3d_like (blocking, 4 ranks, MPI_Dims_create's 2 x 2 x 1) at grids of 12, 24 and
    36 cells a side: 5 files of 4 views a rank, variable v's a subarray of {NV[v], G, G,
    G} doubles of which a rank holds {NV[v], G/2, G/2, G}; Z whole, so a run covers Z and
    the rank's half of Y (G * G/2 doubles): NV[v] * G/2 pieces, 8 * G a file and rank.
    Described, every rank's trace has the same bytes at every grid, its buffer records
    apart (the command line's grid has two digits each time); as pieces, 40 * G a rank.  IOMODEL_VIEWS=both: the
    description's blocks
    are the pieces, view by view; and the analyzer's byte ranges of every access from a
    trace of descriptions are those from a trace of pieces, the descriptions read as
    nests (analyzer/typenest.py)."""
    from iomodel.analyzer.tracefile import read_rank_file

    def rank_files(run):
        return sorted(run.trace_dir.glob("rank-*.iot"))
    sizes = []
    for g in (12, 24, 36):     # the raw rank files: their sizes are the records' own
        run = traced("s3d_like", 4, "blocking", g, g, g, env=RANK_FILES)
        # less the buffer records (24 B each): where a buffer sits within 4 KiB
        # follows what the MPI library allocated before it, which varies run to run
        sizes.append([f.stat().st_size - 24 * len(read_rank_file(f).buffers) for f in rank_files(run)])
        pieces = traced("s3d_like", 4, "blocking", g, g, g, env={"IOMODEL_VIEWS": "pieces", **RANK_FILES})
        assert [sum(len(v["blocks"]) for v in read_rank_file(f).views) for f in rank_files(pieces)] \
            == [40 * g] * 4
    assert sizes[0] == sizes[1] == sizes[2]

    def ranges(run):
        t = run.trace()
        return sorted(zip(*(t.extents.column(c).to_pylist() for c in t.extents.column_names
                            if c not in ("t_start", "t_end"))))
    by_pieces = ranges(pieces)                    # the 36^3 run's
    both = traced("s3d_like", 4, "blocking", 36, 36, 36, env={"IOMODEL_VIEWS": "both", **RANK_FILES})
    for f in rank_files(both):
        views = read_rank_file(f).views
        assert len(views) == 20 and all(v["blocks"].tolist() == v["pieces"].tolist() for v in views)
        # read from the description as a nest: NV[v] * G/2 runs of G/2 * G doubles, no flattening
        assert all(v["nest"].nblocks == len(v["pieces"]) and v["nest"].block == 8 * 18 * 36
                   and v["nest"].strides[-1] == 8 * 36 * 36 for v in views)
    # an access's pieces, apart, and rank 0's 512-byte header of each file
    assert ranges(both) == by_pieces and len(by_pieces) == 4 * 40 * 36 + 5
