"""One trace file per job: at MPI_Finalize a job of IOMODEL_JOIN ranks or more
copies every rank's trace into DIR/job.iot and removes the rank files; what a
rank records after MPI_Finalize goes to DIR/rank-N.iot.after.  The reader gives
the same trace from either layout."""
import json
import re
import struct
import subprocess
import zlib

import pyarrow as pa
import pytest

from conftest import BOTH_MPIS, IOMODEL
from iomodel.analyzer.jobfile import ENC_PLANES, ENC_PLANES_ZSTD, ZSTD_FRAME, job_images, planes, write_job
from test_posix import events, facts, model_of

HEADER, ENTRY = struct.Struct("<8sIIIIQ"), struct.Struct("<QQIIQ")


def layout(trace_dir):
    """The job file's header and index entries (offset, size, encoding, raw size)."""
    data = (trace_dir / "job.iot").read_bytes()
    head = HEADER.unpack_from(data)
    return data, head, [ENTRY.unpack_from(data, head[5] + r * ENTRY.size)[:3] + (
        ENTRY.unpack_from(data, head[5] + r * ENTRY.size)[4],) for r in range(head[3])]


def no_pids(evs):
    return [(re.sub(r"\.\d+\.in$", ".PID.in", f) if f else f, *rest) for f, *rest in
            ((e[1], e[0], *e[2:]) for e in evs)]


def aside(run, where):
    """The run's trace moved out of the way of the next run of the same program."""
    run.trace_dir = run.trace_dir.rename(where)
    return run


@BOTH_MPIS
def test_one_file_per_job(traced, tmp_path):
    """outside_mpi on 3 ranks, joined (IOMODEL_JOIN=3) and not (IOMODEL_JOIN=4).
    Joined: job.iot and, per rank, the open, write (512 B) and close of its
    summary after MPI_Finalize in rank-N.iot.after; a 32-byte header, 3 index
    entries of 32 bytes, the images back to back from byte 128 in rank order,
    each byte planes in one zstd frame (encoding 2: the frame's compressed and
    raw sizes, then the frame) that decompress to the index's raw size and to a
    whole rank file of that rank (its chunks' checksums hold).  Both layouts
    give the same events and the same model."""
    joined = aside(traced("outside_mpi", 3, posix=True, env={"IOMODEL_JOIN": "3"}), tmp_path / "joined")
    apart = traced("outside_mpi", 3, posix=True, env={"IOMODEL_JOIN": "4"})
    assert sorted(p.name for p in joined.trace_dir.iterdir()) == [
        "job.iot", "rank-000000.iot.after", "rank-000001.iot.after", "rank-000002.iot.after"]
    assert sorted(p.name for p in apart.trace_dir.iterdir()) == [
        "rank-000000.iot", "rank-000001.iot", "rank-000002.iot"]
    assert "trace of 3 rank(s) in" in joined.proc.stderr and "job.iot" in joined.proc.stderr
    data, head, entries = layout(joined.trace_dir)
    assert head == (b"IOMJOB\0\0", 1, 32, 3, 32, 32)
    at = 32 + 3 * 32
    images = job_images(joined.trace_dir / "job.iot")
    for r, (offset, size, encoding, raw_size) in enumerate(entries):
        assert (offset, encoding) == (at, 2)          # byte planes in zstd
        image = images[r].read_bytes()[:raw_size]     # without the .after chunks
        assert len(image) == raw_size and image[:8] == b"IOMTRACE"
        # one frame (the image is under 4 MiB); the tracer's planes are those
        # the reader's own encoder makes of the image
        csize, rsize = struct.unpack_from("<II", data, offset)
        assert (rsize, 8 + csize) == (raw_size, size)
        assert pa.Codec("zstd").decompress(data[offset + 8:offset + size], decompressed_size=rsize,
                                           asbytes=True) == planes(image)
        assert struct.unpack_from("<ii", image, 16) == (r, 3)   # the image's rank, of 3
        at += size
    assert at == len(data)
    # the same calls, the input deck named by each run's process ids
    assert no_pids(events(joined)) == no_pids(events(apart))
    for r in range(3):
        assert [e for e in events(joined, r)][-4:] == [
            ("MPI_Finalize", None, 0, 0), ("open", f"summary.{r}.txt", 0, 0),
            ("write", f"summary.{r}.txt", 0, 512), ("close", f"summary.{r}.txt", 0, 0)]
    t = joined.trace()
    assert t.ranks["ended_by"].to_pylist() == ["MPI_Finalize"] * 3
    assert t.trace_bytes == len(data) + sum(
        (joined.trace_dir / f"rank-{r:06d}.iot.after").stat().st_size for r in range(3))
    assert facts(model_of(joined, tmp_path)) == facts(model_of(apart, tmp_path))


@pytest.mark.parametrize("encoding", [ENC_PLANES, ENC_PLANES_ZSTD])
def test_both_compressions_read(traced, tmp_path, encoding):
    """A job file whose images are deflated (encoding 1, as a tracer built
    without libzstd writes them) or in zstd frames (2), written from
    outside_mpi's 3 rank files: the same events as the rank files (NaN as
    NaN: the JSON of both)."""
    run = traced("outside_mpi", 3, posix=True, env={"IOMODEL_JOIN": "4"})
    d = tmp_path / "t"
    d.mkdir()
    write_job(d / "job.iot", [(run.trace_dir / f"rank-{r:06d}.iot").read_bytes() for r in range(3)],
              encoding=encoding)
    assert [e[2] for e in layout(d)[2]] == [encoding] * 3
    from iomodel.analyzer import Trace
    assert json.dumps(Trace(d).events.to_pylist()) == json.dumps(run.trace().events.to_pylist())


def test_zstd_frames_of_a_large_image():
    """Planes of 2 * ZSTD_FRAME + 5 bytes are stored in 3 frames of 4 MiB,
    4 MiB and 5 bytes raw, and come back whole; cut inside the third frame,
    the first two come back and the stream is said to be cut."""
    from iomodel.analyzer.jobfile import _unzstd, zstd_frames
    data = bytes(range(256)) * (2 * ZSTD_FRAME // 256) + b"12345"
    z = zstd_frames(data)
    raws, at = [], 0
    while at < len(z):
        c, n = struct.unpack_from("<II", z, at)
        raws.append(n)
        at += 8 + c
    assert raws == [ZSTD_FRAME, ZSTD_FRAME, 5] and at == len(z)
    assert _unzstd(z, None) == (data, True)
    assert _unzstd(z[:-3], None) == (data[:2 * ZSTD_FRAME], False)


def test_rank_files_kept_when_the_run_dies(traced):
    """no_finalize (1 rank, no MPI_Finalize) with IOMODEL_JOIN=1: no join, the
    rank file its exit handler wrote stays, with its two 10-byte writes."""
    run = traced("no_finalize", 1, env={"IOMODEL_JOIN": "1"}, check=False)
    assert run.proc.returncode != 0          # mpirun: a rank exited without MPI_Finalize
    assert sorted(p.name for p in run.trace_dir.iterdir()) == ["rank-000000.iot"]
    assert [e[2:] for e in events(run) if e[0] == "MPI_File_write_at"] == [(0, 10), (10, 10)]


@pytest.fixture(scope="module")
def job_trace(tmp_path_factory, build_dir):
    """A joined trace of basic_c on 3 ranks, copied by each test that damages it."""
    from conftest import mpirun, program_command
    base = tmp_path_factory.mktemp("job")
    (base / "data").mkdir()
    proc = subprocess.run(IOMODEL + ["trace", "-o", str(base / "t"), "--",
                                     *mpirun(3, *program_command(build_dir, "basic_c"), base / "data")],
                          capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "IOMODEL_JOIN": "1", "IOMODEL_POSIX": "0"})
    assert proc.returncode == 0, proc.stderr
    return base / "t"


def damaged(job_trace, tmp_path, how):
    import shutil
    d = tmp_path / "t"
    shutil.copytree(job_trace, d)
    data, head, entries = layout(d)
    data = bytearray(data)
    how(data, entries)
    (d / "job.iot").write_bytes(bytes(data))
    return d


@pytest.mark.parametrize("case", ["truncated", "garbled", "magic", "index", "raw size", "no raw size"])
def test_damaged_job_file(job_trace, tmp_path, case):
    """A job file cut inside rank 2's image, one with 16 bytes of rank 1's
    compressed image overwritten, one without its magic, and one whose index
    puts rank 1 past the end, or gives rank 0 a raw size its compressed bytes
    cannot hold (a zlib bomb's claim), or a raw size of 0 (which the split of
    the ranks by their bytes once took for a file name): `analyze` exits 2 with one line naming the
    file (and the rank) and the damage; Trace(partial=True) keeps ranks 0 and 1
    of the cut one."""
    from iomodel.analyzer import Trace
    from iomodel.analyzer.tracefile import TraceError
    hows = {"truncated": lambda d, e: d.__delitem__(slice(e[2][0] + e[2][1] // 2, None)),
            "garbled": lambda d, e: d.__setitem__(slice(e[1][0] + e[1][1] // 2, e[1][0] + e[1][1] // 2 + 16),
                                                  b"\x5a" * 16),
            "magic": lambda d, e: d.__setitem__(slice(0, 8), b"IOMJUNK\0"),
            "raw size": lambda d, e: d.__setitem__(slice(32 + 24, 32 + 32), struct.pack("<Q", 1 << 50)),
            "no raw size": lambda d, e: d.__setitem__(slice(32 + 24, 32 + 32), struct.pack("<Q", 0)),
            "index": lambda d, e: d.__setitem__(slice(32 + 32, 40 + 32), struct.pack("<Q", 1 << 40))}
    raw0 = layout(job_trace)[2][0][3]
    want = {"truncated": "job.iot (rank 2, from byte ", "garbled": "job.iot (rank 1, from byte ",
            "magic": "job.iot: at byte 0: not an iomodel job trace (bad magic)",
            "raw size": f"job.iot (rank 0, from byte 128): corrupt index: a raw size of {1 << 50} bytes",
            # rank 0's whole image, its size as the undamaged index gave it
            "no raw size": f"job.iot (rank 0, from byte 128): at byte {raw0}: corrupt: the trace decompresses "
                           f"to {raw0} bytes, not the index's 0",
            "index": f"job.iot: at byte 64: corrupt index: rank 1's trace at byte {1 << 40}, where rank 0's ends"}
    d = damaged(job_trace, tmp_path, hows[case])
    proc = subprocess.run(IOMODEL + ["analyze", str(d), "-o", str(tmp_path / "m.json")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and want[case] in lines[0], proc.stderr
    assert {"truncated": "truncated", "garbled": "corrupt"}.get(case, "") in lines[0], lines[0]
    with pytest.raises(TraceError):
        Trace(d)
    if case == "truncated":
        t = Trace(d, partial=True)
        assert sorted(set(t.events["rank"].to_pylist())) == [0, 1]   # rank 2: no whole event chunk left
        assert len(t.errors) == 1 and "rank 2" in str(t.errors[0])
    assert not (tmp_path / "m.json").exists() or json.loads((tmp_path / "m.json").read_text())


def test_a_second_batch_run_into_the_same_directory_is_its_own_trace(build_dir, tmp_path):
    """The README's batch way (LD_PRELOAD and IOMODEL_TRACE_DIR given to mpirun
    by hand) run twice into one directory: outside_mpi on 3 ranks leaves
    job.iot and each rank's summary written after MPI_Finalize in
    rank-N.iot.after; then coll_log on 2 ranks.  Its trace is its own: ranks
    0 and 1 remove their own continuation files, rank 0 the job file and rank
    2's continuation; the earlier run's summaries are in no rank's events and
    no file of the model (they were merged into rank 0's and 1's before).
    Run again keeping rank files (IOMODEL_JOIN=0), the second run's job file
    goes too."""
    from conftest import ROOT, Run
    lib = ROOT / "tracer" / "lib" / "openmpi" / "libiomodel_trace.so"
    trace, data = tmp_path / "run1", tmp_path / "data"
    data.mkdir()

    def batch(np_, name, *args, join="1"):
        cmd = ["mpirun", "--oversubscribe", "-x", f"LD_PRELOAD={lib}", "-x", f"IOMODEL_TRACE_DIR={trace}",
               "-x", f"IOMODEL_JOIN={join}", "-np", str(np_), str(build_dir / name), str(data), *map(str, args)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        return Run(trace, data, p)

    batch(3, "outside_mpi")
    assert sorted(p.name for p in trace.iterdir()) == [
        "job.iot", "rank-000000.iot.after", "rank-000001.iot.after", "rank-000002.iot.after"]
    run = batch(2, "coll_log", 2)
    assert sorted(p.name for p in trace.iterdir()) == ["job.iot"]
    for r in (0, 1):
        assert not [e for e in events(run, r) if e[1] and e[1].startswith("summary")]
    assert sorted({f for _, _, f, *_ in facts(model_of(run, tmp_path))}) == ["out.dat", "run.{rank}.log"]
    batch(2, "coll_log", 2, join="0")
    assert sorted(p.name for p in trace.iterdir()) == ["rank-000000.iot", "rank-000001.iot"]


def test_a_compression_bomb_is_refused_at_once(tmp_path):
    """A job file of one image, 64 MiB of zeros in zstd frames (about 2 KB on
    disk: 16 frames of 4 MiB, a ratio of thousands to 1 where the densest trace
    measured is 135 to 1): trace-info and analyze refuse it naming the file and
    the ratio, before decompressing anything."""
    trace = tmp_path / "t"
    trace.mkdir()
    size = write_job(trace / "job.iot", [b"\0" * (64 << 20)])
    assert size < 8192
    stored = size - 32 - 32                           # the header and one index entry
    for cmd in (["trace-info", str(trace)], ["analyze", str(trace), "-o", str(tmp_path / "m.json")]):
        p = subprocess.run(IOMODEL + cmd, capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and p.stderr.strip().splitlines()[-1] == (
            f"iomodel: error: {trace / 'job.iot'} (rank 0, from byte 64): corrupt index: a raw size of "
            f"{64 << 20} bytes for {stored} compressed ones, more than 512 to 1, which no trace compresses to")
