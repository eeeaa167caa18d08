"""`analyze` on every core (analyzer/parallel.py): the ranks read and reduced
to bursts in worker processes give the model the serial analysis gives, for
every kind of trace the per-rank stages handle differently: job file and rank
files, ordered-pointer calls placed across workers, the layer under MPI-IO,
an I/O library's metadata between its data; and damage is reported as the
serial analysis reports it."""
import json
import os
import subprocess
import tempfile

import pytest

from conftest import IOMODEL, RANK_FILES, mpirun
from iomodel.analyzer import Trace, TraceError, analyze
from iomodel.analyzer import memory_bound
from iomodel.analyzer.parallel import RankWorkers, split_sources
from iomodel.analyzer.phases import build_model


def in_workers(trace_dir, jobs, piece_bytes=None):
    """The model built by `jobs` workers, never falling back to the serial path
    (a worker's failure raises WorkerFailed here); with `piece_bytes`, each
    worker's block in pieces of that many raw bytes, read again in each pass
    (1: one rank trace a piece; jobs 1: the worker a thread)."""
    trace = Trace(trace_dir, lazy=True)
    workers = RankWorkers.in_thread(trace.rank_files, piece_bytes) if jobs == 1 else \
        RankWorkers(trace.rank_files, jobs, piece_bytes)
    try:
        return build_model(workers.read(trace.path), workers=workers)
    finally:
        workers.close()


def in_pieces(trace_dir, serial):
    """The model is the serial one from workers holding their ranks one at a
    time (bounded memory), 1 worker (a thread) and 2: each piece's operations
    kept in a spill file between passes, and (the temporary directory in
    memory, /dev/shm) read and linked again from the trace in each pass."""
    for jobs in (1, 2):
        assert in_workers(trace_dir, jobs, piece_bytes=1) == serial, jobs     # spilled where /tmp is a disk
        tempfile.tempdir = "/dev/shm"
        try:
            assert memory_bound.spill_dir() is None
            assert in_workers(trace_dir, jobs, piece_bytes=1) == serial, jobs
        finally:
            tempfile.tempdir = None


def test_job_file_and_layer_under_mpi_io(traced):
    """btio_like 16^3 points of 40 B, 3 steps, 4 ranks in one job file, with
    IOMODEL_UNDER_MPI=1 (the aggregator's own writes): 2, 3 and 4 workers
    give the serial model, whose phases are three collective writes of
    4 * 40960 B, rank 0 the aggregator writing them, and the read-back."""
    run = traced("btio_like", 4, 16, 16, 16, 3, env={"IOMODEL_UNDER_MPI": "1"}, posix=True)
    assert (run.trace_dir / "job.iot").exists()
    serial = analyze(run.trace_dir, jobs=1)
    got = [(p["operation"], p["np"], p["weight"], p["aggregators"]["ranks"]) for p in serial["phases"]]
    assert got == [("write", 4, 163840, "0")] * 3 + [("read", 4, 491520, "0")]
    for jobs in (2, 3, 4):
        assert in_workers(run.trace_dir, jobs) == serial
    in_pieces(run.trace_dir, serial)


def test_ordered_calls_placed_across_workers(traced):
    """ordered_view on 3 rank files, one worker each: rank r's
    MPI_File_write_ordered follows the lower ranks' data, which only the
    analyzer sees whole.  Rank 0 covers file bytes 0-27 in 4 pieces, rank 2
    32-59: the file's extent is 60, as the serial model says."""
    run = traced("ordered_view", 3, env=RANK_FILES)
    assert sorted(p.name for p in run.trace_dir.iterdir()) == [
        "rank-000000.iot", "rank-000001.iot", "rank-000002.iot"]
    serial = analyze(run.trace_dir, jobs=1)
    assert [(f["name"].rsplit("/", 1)[-1], f["extent"]) for f in serial["files"]] == [("ordered.dat", 60)]
    assert in_workers(run.trace_dir, 3) == serial
    assert in_workers(run.trace_dir, 2) == serial
    in_pieces(run.trace_dir, serial)


def test_library_metadata_between_datasets(library_build_dir, tmp_path):
    """h5_steps "reopen", 4 ranks, 256^2 doubles, 5 dumps: HDF5's 512-byte
    object-header reads between the collective reads are a phase of their
    own (metadata_ops, decided per rank in the workers), the five reads one
    phase of rep 5: the same model from 2 workers as from the serial path."""
    data, trace = tmp_path / "data", tmp_path / "trace"
    data.mkdir()
    p = subprocess.run(IOMODEL + ["trace", "-o", str(trace), "--",
                                  *mpirun(4, library_build_dir / "h5_steps", data, 256, 5, "reopen")],
                       capture_output=True, text=True, timeout=120, env={**os.environ, "IOMODEL_POSIX": "0"})
    assert p.returncode == 0, p.stdout + p.stderr
    serial = analyze(trace, jobs=1)
    reads = [p for p in serial["phases"] if p["routine"] == "MPI_File_read_at_all"]
    assert [(p["np"], p["rs"], p["rep"]) for p in reads] == [(4, 131072, 5)]
    assert any(p.get("metadata") for p in serial["phases"])
    assert in_workers(trace, 2) == serial
    in_pieces(trace, serial)


@pytest.fixture
def merges(monkeypatch):
    """How each analysis in workers got its phases: "merged" (the workers
    reduced them: every process has the same bursts), "columns" after the
    numbers were asked (the processes' sizes differ), or "columns"."""
    from iomodel.analyzer import parallel
    seen, merged = [], parallel.RankWorkers._merged

    def spy(self, sigs, shared):
        m = merged(self, sigs, shared)
        seen.append("merged" if m is not None else "columns" if None in sigs else "columns after numbers")
        return m
    monkeypatch.setattr(parallel.RankWorkers, "_merged", spy)
    return seen


def test_phases_reduced_in_the_workers(traced, merges):
    """strides "simple" on 4 ranks (BT-IO simple's rows): every process has
    the same bursts, so the workers reduce them into the phases' numbers and
    the analyzer merges their shares.  The writes of a step are one phase of
    128 writes of 320 B, in the nest [[16, 10240], [8, 640]], whose first
    offsets 0, 320, 5120, 5440 are not affine in the rank (so the workers send
    them).  ior_like "segmented" on 4 ranks: write_at_all at i*4*4096 +
    r*4096, affine, 4096 a rank, also across workers of one rank each (3 and
    4 workers).  The models are the serial path's."""
    run = traced("strides", 4, "simple")
    serial = analyze(run.trace_dir, jobs=1)
    w = serial["phases"][0]
    assert (w["operation"], w["np"], w["request_sizes"], w["rep"]) == ("write", 4, [320], 128)
    assert (w["offsets"]["nested"], w["offsets"]["starts"], w["offsets"]["per_rank"]) == \
        ([[16, 10240], [8, 640]], [0, 320, 5120, 5440], None)
    for jobs in (2, 3):
        assert in_workers(run.trace_dir, jobs) == serial
    in_pieces(run.trace_dir, serial)
    seg = traced("ior_like", 4, "segmented")
    serial = analyze(seg.trace_dir, jobs=1)
    assert [(p["operation"], p["rep"], p["offsets"]["first"], p["offsets"]["per_rank"])
            for p in serial["phases"]] == [("write", 6, 0, 4096), ("read", 6, 0, 4096)]
    for jobs in (2, 3, 4):
        assert in_workers(seg.trace_dir, jobs) == serial
    in_pieces(seg.trace_dir, serial)
    assert merges == ["merged"] * 13


def test_processes_that_differ_send_their_bursts(traced, merges):
    """ior_like "varsize": every process makes the same bursts, but rank r
    moves (r + 1) * 1000 B a call, 3 calls: after the numbers, the analyzer asks for the
    bursts themselves, to group the processes by size (rs_groups).  hacc_like:
    rank 0 has bursts the others have not, so the bursts come at once."""
    run = traced("ior_like", 4, "varsize")
    serial = analyze(run.trace_dir, jobs=1)
    assert [(p["rep"], [g["rs"] for g in p["rs_groups"]]) for p in serial["phases"]] == \
        [(3, [1000, 2000, 3000, 4000])] * 2
    assert in_workers(run.trace_dir, 2) == serial
    in_pieces(run.trace_dir, serial)
    hacc = traced("hacc_like", 4)
    serial = analyze(hacc.trace_dir, jobs=1)
    assert in_workers(hacc.trace_dir, 2) == serial
    in_pieces(hacc.trace_dir, serial)
    # a rank a piece is a table of one row: rank 0's keys tell its piece apart
    assert merges == ["columns after numbers"] * 5 + ["columns"] + ["columns after numbers"] * 4


def test_collective_splits_voted_across_workers(traced):
    """coll_log, 4 ranks, 5 steps: rank 0's log lines between its collective
    writes make it wish a split before each of its writes 2 to 5 (1 of 4
    voters), so the writes stay one np-4 phase of rep 5 only if the workers
    pool their ranks' wishes; with 2, 3 and 4 workers (rank 0 alone in one)
    the model is the serial one."""
    run = traced("coll_log", 4, 5, posix=True)
    serial = analyze(run.trace_dir, jobs=1)
    assert [(p["routine"], p["np"], p["rep"]) for p in serial["phases"]] == [
        ("MPI_File_write_at_all", 4, 5), ("write", 1, 5)]
    for jobs in (2, 3, 4):
        assert in_workers(run.trace_dir, jobs) == serial
    in_pieces(run.trace_dir, serial)


def test_damage_is_reported_as_the_serial_analysis_does(traced):
    """A job file cut in rank 2's image: analyze with 2 workers raises the
    serial analysis's error, naming the file, the rank and the byte."""
    run = traced("btio_like", 4, 8, 8, 8, 2)
    job = run.trace_dir / "job.iot"
    images = Trace(run.trace_dir, lazy=True).rank_files
    with open(job, "r+b") as f:
        f.truncate(images[2].offset + images[2].size // 2)
    with pytest.raises(TraceError) as serial:
        analyze(run.trace_dir, jobs=1)
    with pytest.raises(TraceError) as parallel:
        analyze(run.trace_dir, jobs=2)
    assert str(parallel.value) == str(serial.value)
    for jobs in (1, 2):         # a rank at a time (bounded memory): one worker, a thread, and two
        with pytest.raises(TraceError) as pieces:
            analyze(run.trace_dir, jobs=jobs, max_memory=1)
        assert str(pieces.value) == str(serial.value)
    assert f"job.iot (rank 2, from byte {images[2].offset})" in str(serial.value)


def test_the_command_line_option(traced, tmp_path):
    """iomodel analyze -j 2 writes the model -j 1 writes; -j 0 is refused."""
    run = traced("btio_like", 4, 8, 8, 8, 2)
    out = {}
    for j in ("1", "2"):
        out[j] = tmp_path / f"m{j}.json"
        p = subprocess.run(IOMODEL + ["analyze", "-q", "-j", j, str(run.trace_dir), "-o", str(out[j])],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    assert json.loads(out["1"].read_text()) == json.loads(out["2"].read_text())
    p = subprocess.run(IOMODEL + ["analyze", "-j", "0", str(run.trace_dir)], capture_output=True, text=True)
    assert p.returncode == 2
    assert "argument -j/--jobs: '0' is not a whole number of at least 1" in p.stderr


def test_max_memory_on_the_command_line(traced, tmp_path):
    """--max-memory 2GiB writes the -j 1 model (4 ranks of 8^3 points fit: one
    piece); 100MiB is refused, as are a size without a number and a log directory's."""
    run = traced("btio_like", 4, 8, 8, 8, 2)
    out = {}
    for name, extra in (("serial", ["-j", "1"]), ("bound", ["--max-memory", "2GiB"])):
        out[name] = tmp_path / f"{name}.json"
        p = subprocess.run(IOMODEL + ["analyze", "-q", *extra, str(run.trace_dir), "-o", str(out[name])],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    assert out["serial"].read_bytes() == out["bound"].read_bytes()
    for bad, said in (("100MiB", "argument --max-memory: 100MiB: at least 256 MiB (a process holds about 96 "
                                 "MiB before any trace)"),
                      ("lots", "argument --max-memory: expected a size in bytes")):
        p = subprocess.run(IOMODEL + ["analyze", "--max-memory", bad, str(run.trace_dir)], capture_output=True,
                           text=True)
        assert p.returncode == 2 and said in p.stderr, p.stderr


def test_pieces_of_a_block(tmp_path):
    """Rank files of 100, 100, 100, 100 and 400 bytes: under 1000 raw bytes a
    piece, one piece; under 400, two (the first four, the last); under 300,
    three (the first three, the fourth, the last); under 1, one a file.  The bound's arithmetic:
    a process of 2 GiB holds (2 GiB - 96 MiB) / 5 raw bytes, process 0 half that."""
    from iomodel.analyzer.memory_bound import budget, piece_bytes
    from iomodel.analyzer.parallel import split_pieces
    files = []
    for r, size in enumerate([100, 100, 100, 100, 400]):
        f = tmp_path / f"rank-{r:06d}.iot"
        f.write_bytes(b"\0" * size)
        files.append(f)
    assert split_pieces(files, 1000) == [files]
    assert split_pieces(files, None) == [files]
    assert split_pieces(files, 400) == [files[:4], files[4:]]
    assert split_pieces(files, 300) == [files[:3], files[3:4], files[4:]]
    assert split_pieces(files, 1) == [[f] for f in files]
    assert budget(2 << 30, 8) == 2 << 30
    assert piece_bytes(2 << 30) == (2048 - 96) * 2**20 // 5
    assert piece_bytes(2 << 30, analyzer=True) == (2048 - 96) * 2**20 // 10


def test_ranks_split_by_bytes(tmp_path):
    """Five rank files of 100, 100, 100, 100 and 400 bytes in two blocks: the
    first four (400 bytes) and the last (400); in three: the first three (300:
    nearer the share of 266.7 than 200), the fourth, the last; in seven: one each."""
    files = []
    for r, size in enumerate([100, 100, 100, 100, 400]):
        f = tmp_path / f"rank-{r:06d}.iot"
        f.write_bytes(b"\0" * size)
        files.append(f)
    assert split_sources(files, 2) == [files[:4], files[4:]]
    assert split_sources(files, 3) == [files[:3], files[3:4], files[4:]]
    assert split_sources(files, 7) == [[f] for f in files]


def test_writes_that_extend_the_file_in_lockstep(traced):
    """bt_simple (NAS BT-IO simple's multipartition), 12^3 points of 40 B, 3
    dumps, 4 ranks (q 2: two cells of 6^3 points each): each dump is 72 rows
    of 240 B per process.  In lockstep, round k holds each process's k-th row.
    Cell 0 (z 0-5): ranks 0 and 1 write the two halves of row (z, y), ranks 2
    and 3 of row (z, y + 6); at a new z all four rows pass the file's end,
    else only ranks 2 and 3's: 6 x (4 + 5 x 2) = 84.  Cell 1 (z 6-11): rank 0
    writes the second half of row (z, y + 6), the last byte of the round,
    rank 1 its first half, ranks 2 and 3 row (z, y): only rank 0's passes the
    end, 36.  So 120 of each dump's 288 writes, each dump past the one before;
    the read-back has none.  Workers (rounds' maxima in rank order) and pieces
    count the same."""
    run = traced("bt_simple", 4)
    serial = analyze(run.trace_dir, jobs=1)
    got = [(p["operation"], p["np"], p["rep"], p.get("extending_writes")) for p in serial["phases"]]
    assert got == [("write", 4, 72, 120)] * 3 + [("read", 4, 216, None)]
    for jobs in (2, 3, 4):
        assert in_workers(run.trace_dir, jobs) == serial
    in_pieces(run.trace_dir, serial)


@pytest.mark.parametrize("api", ["MPIIO", "POSIX"])
def test_a_deleted_file_extends_again(traced, api):
    """ior_cmd -i 2 -s 2 -b 16k -t 4k -w at 4 ranks (IOR's layout, independent
    writes), each repetition a phase of its own (--max-comm-gap 0: the barrier
    between them ends a burst): blocks of 4 transfers, so in lockstep each
    segment's first round passes the file's end 4 times and the 3 others once
    each: 2 x (4 + 3) = 14 of the 32 writes.  The second repetition writes the
    same bytes again: with the file kept (IOR's -k) none passes its end; with
    -D, rank 0 deletes it first (MPI_File_delete, or unlink), and the count is
    14 again.  Two workers count the same."""
    args = ("-a", api, "-i", "2", "-s", "2", "-b", "16k", "-t", "4k", "-w")
    for extra, second in (((), 0), (("-D",), 14)):
        run = traced("ior_cmd", 4, *args, *extra, posix=api == "POSIX")
        m = analyze(run.trace_dir, jobs=1, max_comm_gap=0)
        assert [(p["operation"], p["np"], p["rep"], p["extending_writes"]) for p in m["phases"]] == \
            [("write", 4, 8, 14), ("write", 4, 8, second)]
        assert analyze(run.trace_dir, jobs=2, max_comm_gap=0) == m
