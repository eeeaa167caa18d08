"""Edge cases of the tracer and the trace reader, under real mpirun:
MPI_THREAD_MULTIPLE with concurrent writers, MPI_Abort, and damaged or
foreign trace files.

Expected values come from tests/programs/expected.py (threads_*, aborts_*,
basic_*), worked out by hand from the programs' sources; nothing here is
copied from tracer output.  The damage tests only use the chunk headers to
find where to cut or flip a byte (the layout is docs/trace-format.md's).
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import pytest

from conftest import (IOMODEL, RANK_FILES, PROGRAMS, final_lclocks, mpirun, program_command, rank_events,
                      recorded, stopped_by_mpirun)

sys.path.insert(0, str(PROGRAMS))
import expected  # noqa: E402

NP = 4
HEADER_SIZE = 256
CHUNK = struct.Struct("<IHHQQQQQQ")  # magic, type, header_size, payload_len, count, first_seq, ticks, ns, checksum
CHUNK_MAGIC = 0x4B4E4843
CHUNK_EVENTS, CHUNK_META, CHUNK_END, CHUNK_STOP = 1, 2, 3, 4
MPI_THREAD_MULTIPLE = 3  # Open MPI's mpi.h: SINGLE 0, FUNNELED 1, SERIALIZED 2, MULTIPLE 3


# ------------------------------------------------------------------ helpers

def chunks(path):
    """The chunks of a trace file: dicts offset, type, payload_len, count, first."""
    data = open(path, "rb").read()
    out, pos = [], HEADER_SIZE
    while pos < len(data):
        magic, ctype, hsize, plen, count, first, _, _, _ = CHUNK.unpack_from(data, pos)
        assert magic == CHUNK_MAGIC and hsize == CHUNK.size, f"{path}: not a chunk at {pos}"
        out.append(dict(offset=pos, type=ctype, payload_len=plen, count=count, first=first))
        pos += hsize + plen
    assert pos == len(data)
    return out


def trace_info(*args):
    return subprocess.run(IOMODEL + ["trace-info", *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def assert_one_clean_error_line(proc, *must_contain):
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for s in must_contain:
        assert s in lines[0], (s, lines[0])
    assert proc.stdout == ""
    return lines[0]


# ------------------------------------------------- 1. MPI_THREAD_MULTIPLE

T, K, BLK = expected.THREADS_T, expected.THREADS_K, expected.THREADS_BLK


@pytest.mark.parametrize("buffer_bytes", [None, 4096], ids=["1MiB-buffer", "4KiB-buffer"])
def test_threads_writing_concurrently_are_all_recorded(traced, buffer_bytes):
    # With a 4 KiB buffer the tracer flushes (at 4096 / 32 = 128 records)
    # while the other threads of the rank keep recording.
    env = {"IOMODEL_BUFFER_BYTES": str(buffer_bytes)} if buffer_bytes else None
    run = traced("threads", NP, env=env)
    assert run.proc.returncode == 0
    trace = run.trace()
    ranks = trace.ranks.to_pylist()
    assert sorted(r["rank"] for r in ranks) == list(range(NP))
    for r in ranks:
        assert r["ended_by"] == "MPI_Finalize" and r["damage"] is None, r
        assert r["thread_level"] == MPI_THREAD_MULTIPLE
    per_rank = rank_events(trace)
    # 4 ranks * 4 threads * 50 writes = 800 MPI_File_write_at events
    all_writes = [e for evs in per_rank.values() for e in evs if e["routine"] == "MPI_File_write_at"]
    assert len(all_writes) == NP * T * K == 800
    for rank in range(NP):
        evs = per_rank[rank]
        first, nwrites, last = expected.threads_recorded(NP, rank)
        # MPI_Init_thread, MPI_File_open, 200 writes, MPI_File_close, MPI_Finalize
        assert len(evs) == len(first) + nwrites + len(last) == 204
        seqs = [e["seq"] for e in evs]
        assert len(set(seqs)) == len(seqs) and seqs == list(range(len(evs)))
        assert [(e["routine"], e["lclock"]) for e in evs[:2]] == first
        assert [(e["routine"], e["lclock"]) for e in evs[-2:]] == last
        assert sum(e["routine"] == "MPI_Init_thread" for e in evs) == 1
        assert not any(e["routine"] == "MPI_Init" for e in evs)
        writes = evs[2:-2]
        for e in writes:
            assert e["routine"] == "MPI_File_write_at" and e["file"] == "threads.dat"
            assert e["data"] and e["write"] and not e["collective"] and not e["error"]
            assert e["resolved"] and e["abs_end"] == e["abs_offset"] + e["bytes"]
            # no communication before the writes: MPI_File_open does not count
            assert e["lclock"] == 0
            assert e["t_end"] >= e["t_start"]
        assert sorted((e["abs_offset"], e["bytes"]) for e in writes) == \
            expected.threads_write_set(NP, rank)
        # each thread's own writes appear in its program order (k = 0..49)
        by_thread = expected.threads_writes_by_thread(NP, rank)
        thread_of = {off: t for t, ws in by_thread.items() for off, _ in ws}
        got = {t: [] for t in range(T)}
        for e in writes:
            got[thread_of[e["abs_offset"]]].append((e["abs_offset"], e["bytes"]))
        assert got == by_thread
        # the barrier after the join is the rank's only communication call
        assert final_lclocks(trace)[rank] == expected.threads_final_lclock(NP, rank) == 1
    # the writes of all ranks cover [0, 4*4*50*64) exactly once
    ranges = sorted((e["abs_offset"], e["bytes"]) for e in all_writes)
    pos = 0
    for off, n in ranges:
        assert off == pos, (off, pos)
        pos += n
    assert pos == expected.threads_file_size(NP) == 51200
    data = (run.data_dir / "threads.dat").read_bytes()
    assert len(data) == 51200
    assert data == bytes(expected.threads_byte(b, j) for b in range(NP * T * K) for j in range(BLK))


# ---------------------------------------------------------- 2. MPI_Abort

def test_abort_flushes_the_aborting_rank(traced):
    run = traced("aborts", NP, check=False)
    assert run.proc.returncode != 0
    trace = run.trace(partial=True)  # mpirun's SIGKILL may cut a rank's last write short
    ranks = {r["rank"]: r for r in trace.ranks.to_pylist()}
    assert sorted(ranks) == list(range(NP))
    per_rank = rank_events(trace)
    ab = expected.ABORTS_RANK
    want = expected.aborts_recorded(NP, ab)
    r1 = ranks[ab]
    assert r1["ended_by"] == "MPI_Abort" and r1["damage"] is None
    assert r1["events"] == len(want) == 6
    evs = per_rank[ab]
    assert [recorded(e) + (e["lclock"],) for e in evs] == want
    assert evs[-1]["routine"] == "MPI_Abort" and evs[-1]["lclock"] == 1
    assert final_lclocks(trace)[ab] == 1
    # mpirun stops the others with SIGTERM in their second barrier: each writes
    # out its buffer, so every event up to the first barrier is there, unless
    # mpirun's SIGKILL came first (its 1 MiB buffer had never been flushed)
    for rank in range(NP):
        if rank == ab:
            continue
        got = [recorded(e) + (e["lclock"],) for e in per_rank.get(rank, [])]
        assert stopped_by_mpirun(ranks[rank], got, expected.aborts_recorded(NP, rank), 0), rank
    # every rank's writes were done (the barrier) before the abort
    for rank in range(NP):
        assert (run.data_dir / f"abort.{rank}.dat").read_bytes() == expected.aborts_file_bytes(rank)


def killed_run(build_dir, tmp_path, mode, traced, env=None):
    """killed.c in `mode` under mpirun, traced into tmp_path/trace or not: its
    exit status and its data directory."""
    data = tmp_path / ("traced" if traced else "plain")
    data.mkdir()
    cmd = mpirun(NP, *program_command(build_dir, "killed"), data, mode)
    if traced:
        cmd = IOMODEL + ["trace", "-o", str(tmp_path / "trace"), "--", *cmd]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})
    return p.returncode, data


def test_stop_signal_ends_the_trace_and_the_run_as_untraced(build_dir, tmp_path):
    """killed.c term: rank 0 raises SIGTERM after its 1000 writes: it writes
    out its buffer (4096 bytes: flushed 7 times before) and ends its trace
    with the signal, and mpirun ends as it does untraced.  mpirun stops the
    others with SIGTERM, then SIGKILL (stopped_by_mpirun)."""
    small = {"IOMODEL_BUFFER_BYTES": "4096"}
    plain, _ = killed_run(build_dir, tmp_path, "term", False, small)
    traced_rc, _ = killed_run(build_dir, tmp_path, "term", True, small)
    assert plain != 0 and traced_rc == plain
    from iomodel.analyzer import Trace
    trace = Trace(tmp_path / "trace", partial=True)  # mpirun's SIGKILL may cut a write short
    ranks = trace.ranks.to_pylist()
    events = rank_events(trace)
    assert ranks[0]["ended_by"] == "signal SIGTERM" and ranks[0]["damage"] is None
    assert [recorded(e) for e in events[0]] == expected.killed_recorded(0, closed=False)
    for rank in range(1, NP):
        got = [recorded(e) for e in events[rank]]
        assert stopped_by_mpirun(ranks[rank], got, expected.killed_recorded(rank, closed=True), 896), rank


def test_stop_signal_leaves_the_applications_own_handler_alone(build_dir, tmp_path):
    """killed.c own: every rank installs its own SIGTERM handler before
    MPI_Init (it creates killed.<rank>.handled and calls _exit(5)).  The tracer
    does not take the signal over: rank 0's handler runs when it raises the
    signal, traced as untraced, and no trace ends with the signal (the
    handler's _exit skips the tracer's exit handler too)."""
    def run(traced):
        rc, data = killed_run(build_dir, tmp_path, "own", traced)
        return rc, sorted(x.name for x in data.glob("*.handled"))
    plain = run(False)
    traced_run = run(True)
    # rank 0's handler runs (it raised the signal itself); the others' when
    # the scheduler runs them before mpirun's SIGKILL (stopped_by_mpirun)
    assert plain[0] == traced_run[0] != 0
    for got in (plain[1], traced_run[1]):
        assert got[0] == "killed.0.handled" and set(got) <= {f"killed.{r}.handled" for r in range(NP)}
    from iomodel.analyzer import Trace
    assert Trace(tmp_path / "trace").ranks["ended_by"].to_pylist() == [None] * NP


# -------------------------------------------------------- 3. damaged traces

def basic_recorded(rank):
    """Hand-worked events of basic_c: the I/O calls of expected.basic_events
    (communication is counted, not recorded) between MPI_Init and
    MPI_Finalize: 10 events per rank."""
    ev = [e for e in expected.basic_events(NP, rank) if e[0] not in expected.COMMUNICATION]
    ev = [(r, f, off if r in expected.DATA_ACCESS else None, n if r in expected.DATA_ACCESS else None)
          for r, f, off, n in ev]
    return [("MPI_Init", None, None, None)] + ev + [("MPI_Finalize", None, None, None)]


@pytest.fixture(scope="module")
def basic_trace(build_dir, tmp_path_factory):
    """One traced run of basic_c on 4 ranks in rank files, shared by the damage
    tests (each copies it)."""
    base = tmp_path_factory.mktemp("basic_c")
    data, trace = base / "data", base / "trace"
    data.mkdir()
    cmd = IOMODEL + ["trace", "-o", str(trace), "--",
                     *mpirun(NP, *program_command(build_dir, "basic_c"), data)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, **RANK_FILES})
    assert proc.returncode == 0, proc.stderr
    return trace


@pytest.fixture
def basic_copy(basic_trace, tmp_path):
    d = tmp_path / "trace"
    shutil.copytree(basic_trace, d)
    return d


def check_damaged_rank(trace_dir, bad_rank, offset, kept, problem):
    """trace-info fails with one line naming the file and the chunk's offset;
    --partial and Trace(partial=True) give `kept` (the hand-worked events
    of the chunks before it) for bad_rank and everything for the others."""
    from iomodel.analyzer import Trace, TraceError
    bad = trace_dir / f"rank-{bad_rank:06d}.iot"
    assert_one_clean_error_line(trace_info(trace_dir), str(bad), f"at byte {offset}", problem)
    with pytest.raises(TraceError) as exc:
        Trace(trace_dir)
    assert exc.value.path == str(bad) and exc.value.offset == offset
    trace = Trace(trace_dir, partial=True)
    ranks = {r["rank"]: r for r in trace.ranks.to_pylist()}
    assert [(os.path.basename(e.path), e.offset) for e in trace.errors] == [(bad.name, offset)]
    assert sorted(ranks) == list(range(NP))
    per_rank = rank_events(trace)
    for rank in range(NP):
        got = [recorded(e) for e in per_rank.get(rank, [])]
        if rank == bad_rank:
            assert got == kept
            assert ranks[rank]["ended_by"] is None
            assert str(bad) in ranks[rank]["damage"] and f"at byte {offset}" in ranks[rank]["damage"]
        else:
            assert got == basic_recorded(rank), rank
            assert ranks[rank]["ended_by"] == "MPI_Finalize" and ranks[rank]["damage"] is None
    # the opens are metadata, flushed before any event: rank 2's survives
    assert sorted(trace.files["rank"].to_pylist()) == list(range(NP))
    part = trace_info("--partial", "--json", trace_dir)
    assert part.returncode == 0, part.stderr
    s = json.loads(part.stdout)
    assert s["total_events"] == 3 * 10 + len(kept)
    assert len(s["damage"]) == 1 and f"at byte {offset}" in s["damage"][0]
    warn = part.stderr.strip().splitlines()
    assert len(warn) == 1 and str(bad) in warn[0] and f"at byte {offset}" in warn[0]


def layout(path):
    """basic_c with the default 1 MiB buffer flushes nothing before
    MPI_Finalize (buffers.c finish): after the stop chunk the file reserves at
    its start (40 bytes, empty: count 0), metadata (routine table, the open),
    then the 10 events, then the end record; returned without the stop chunk."""
    ch = chunks(path)
    assert [c["type"] for c in ch] == [CHUNK_STOP, CHUNK_META, CHUNK_EVENTS, CHUNK_END]
    assert (ch[0]["count"], ch[0]["payload_len"]) == (0, 40)
    ch = ch[1:]
    assert ch[1]["first"] == 0 and ch[2]["first"] == 10  # events before each chunk
    return ch


@pytest.mark.parametrize("which", ["last chunk", "event chunk"])
def test_truncated_chunk_is_reported_at_its_offset(basic_copy, which):
    path = basic_copy / "rank-000002.iot"
    ch = layout(path)
    c = ch[-1] if which == "last chunk" else ch[1]
    cut = c["offset"] + (CHUNK.size + c["payload_len"]) // 2  # in the middle of the chunk
    with open(path, "r+b") as f:
        f.truncate(cut)
    # cutting the end chunk keeps all 10 events; cutting the only event chunk keeps none
    kept = basic_recorded(2)[:c["first"]]
    assert len(kept) == (10 if which == "last chunk" else 0)
    check_damaged_rank(basic_copy, 2, c["offset"], kept, "truncated")


def test_flipped_byte_is_a_checksum_error_at_the_chunk(basic_copy):
    path = basic_copy / "rank-000002.iot"
    c = layout(path)[1]
    pos = c["offset"] + CHUNK.size + c["payload_len"] // 2 + 3
    data = bytearray(path.read_bytes())
    data[pos] ^= 0xFF
    path.write_bytes(bytes(data))
    check_damaged_rank(basic_copy, 2, c["offset"], [], "checksum")


def test_damage_in_a_later_event_chunk_keeps_the_earlier_ones(traced):
    # threads with a 4 KiB buffer: each rank's 204 events span two event chunks
    run = traced("threads", NP, env={"IOMODEL_BUFFER_BYTES": "4096", **RANK_FILES})
    path = run.trace_dir / "rank-000002.iot"
    ev_chunks = [c for c in chunks(path) if c["type"] == CHUNK_EVENTS]
    assert len(ev_chunks) >= 2
    c = ev_chunks[1]
    n_before = c["first"]
    assert 2 < n_before < 204
    data = bytearray(path.read_bytes())
    data[c["offset"] + CHUNK.size + 5] ^= 0x01
    path.write_bytes(bytes(data))
    assert_one_clean_error_line(trace_info(run.trace_dir), str(path), f"at byte {c['offset']}",
                                "checksum")
    trace = run.trace(partial=True)
    per_rank = rank_events(trace)
    for rank in range(NP):
        evs = per_rank[rank]
        if rank != 2:
            assert len(evs) == 204
            continue
        # the events of the first chunk: MPI_Init_thread, MPI_File_open, then
        # writes of the expected set, each thread's in its own order
        assert len(evs) == n_before
        assert [e["routine"] for e in evs[:2]] == ["MPI_Init_thread", "MPI_File_open"]
        got = [(e["abs_offset"], e["bytes"]) for e in evs[2:]]
        assert all(e["routine"] == "MPI_File_write_at" for e in evs[2:])
        by_thread = expected.threads_writes_by_thread(NP, 2)
        for t, ws in by_thread.items():
            mine = [w for w in got if w in set(ws)]
            assert mine == ws[:len(mine)], t
        assert sum(len([w for w in got if w in set(ws)]) for ws in by_thread.values()) == len(got)


def test_partial_trace_lists_its_damage_before_any_table_is_read(basic_copy):
    # analyzer/trace.py documents `Trace(path, partial=True)` "with .errors
    # listing the damage"; a caller checking .errors first must see it.
    from iomodel.analyzer import Trace
    path = basic_copy / "rank-000002.iot"
    c = layout(path)[-1]
    with open(path, "r+b") as f:
        f.truncate(c["offset"] + 10)
    trace = Trace(basic_copy, partial=True)
    assert [(e.path, e.offset) for e in trace.errors] == [(str(path), c["offset"])]


@pytest.mark.parametrize("content", [b"hello you\n", b"not a trace, just some text\n" * 11],
                         ids=["10-bytes", "300-bytes"])
def test_a_file_that_is_not_a_trace(tmp_path, content):
    from iomodel.analyzer import Trace, TraceError
    d = tmp_path / "notrace"
    d.mkdir()
    f = d / "rank-000000.iot"
    f.write_bytes(content)
    line = assert_one_clean_error_line(trace_info(d), str(f))
    assert "iomodel trace" in line
    with pytest.raises(TraceError) as exc:
        Trace(d)
    assert exc.value.path == str(f)
    partial = Trace(d, partial=True)
    assert partial.ranks.num_rows == 0 and len(partial.errors) == 1
    assert "Traceback" not in trace_info("--partial", d).stderr


@pytest.mark.parametrize("byte", [47, 54])
def test_garbage_in_a_header_field_is_an_error_not_a_traceback(basic_copy, byte):
    # Header bytes 40..47 are the u64 tick origin, 48..55 the monotonic ns at
    # time zero (docs/trace-format.md). Flipping byte 47 makes the origin >=
    # 2**63; flipping byte 54 moves time zero by about 2**48 ns (3 days) in a
    # run of a second.  Magic, version and chunks are intact and the header
    # has no checksum, but the clock pairs then give a negative tick period or
    # one far above 10,000 ns: one clean error naming the file and the time
    # zero's offset, and --partial reads the other three ranks.
    path = basic_copy / "rank-000002.iot"
    data = bytearray(path.read_bytes())
    data[byte] ^= 0xFF
    path.write_bytes(bytes(data))
    line = assert_one_clean_error_line(trace_info(basic_copy), str(path), "at byte 40",
                                       "corrupt header", "ns per tick")
    assert "ns per tick, not a clock's rate" in line
    from iomodel.analyzer import Trace
    partial = Trace(basic_copy, partial=True)
    assert sorted(partial.ranks["rank"].to_pylist()) == [0, 1, 3]
    assert [e.offset for e in partial.errors] == [40]


@pytest.mark.parametrize("kind", ["empty", "other files", "missing"])
def test_a_directory_without_trace_files(tmp_path, kind):
    d = tmp_path / "dir"
    if kind != "missing":
        d.mkdir()
    if kind == "other files":
        (d / "rank-0.txt").write_text("x")
        (d / "shared.dat").write_bytes(b"\0" * 300)
    line = assert_one_clean_error_line(trace_info(d), str(d))
    assert ("no such trace directory" if kind == "missing" else "no rank-*.iot files") in line
