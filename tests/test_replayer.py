"""The built-in replayer (iomodel_replay) and the IOR result parsers.

Parsers: every fixture of real IOR 4.1.0+dev output in tests/fixtures/ior/,
with values read off the files.  Replayer: real runs under mpirun on a temporary
directory; the access pattern is checked by tracing the replayer with iomodel's
own tracer and comparing every rank's offsets with IOR's layout formula."""
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from conftest import IOMODEL, mpirun
from iomodel.replay.results import (MIB, ReplayerNotFound, parse_ior_json, parse_ior_output,
                                    parse_ior_text, replayer_path)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ior"
NP = 4
KIB = 1024

# Read off the fixture files.  The JSON and the text of one fixture come from two
# different IOR runs: same parameters, different measurements.
#   stem: (api, segments, block, transfer, file_per_proc,
#          text (write MiB/s, read MiB/s, write Mean(s), read Mean(s)),
#          json (write MiB/s, read MiB/s, write MeanTime, read MeanTime))
FIXTURE_VALUES = {
    "a_mpiio_shared_coll": ("MPIIO", 8, MIB, MIB, False, (358.64, 882.54, 0.08923, 0.03626),
                            (504.7145, 922.6932, 0.0634, 0.0347)),
    "b_mpiio_fpp": ("MPIIO", 2, 4 * MIB, MIB, True, (1789.71, 13501.43, 0.01788, 0.00237),
                    (2897.7445, 7854.9615, 0.0110, 0.0041)),
    "c_posix_shared": ("POSIX", 4, 2 * MIB, 256 * KIB, False, (480.09, 12825.39, 0.06665, 0.00250),
                       (862.6040, 10373.1145, 0.0371, 0.0031)),
    "d_HDF5_shared_coll": ("HDF5", 8, MIB, MIB, False, (1141.03, 844.22, 0.02804, 0.03790),
                           (601.2423, 478.8343, 0.0532, 0.0668)),
    "d_NCMPI_shared_coll": ("NCMPI", 8, MIB, MIB, False, (506.76, 614.76, 0.06315, 0.05205),
                            (473.9628, 639.9121, 0.0675, 0.0500)),
}
STRUCTURE = ("operation", "api", "test_id", "num_tasks", "segments", "block", "transfer",
             "repetitions", "file_per_proc", "aggregate_bytes")


def test_every_fixture_is_covered():
    assert {p.stem for p in FIXTURES.glob("*.json")} == set(FIXTURE_VALUES)
    assert {p.name[:-len(".stdout.txt")] for p in FIXTURES.glob("*.stdout.txt")} == set(FIXTURE_VALUES)


@pytest.mark.parametrize("stem", sorted(FIXTURE_VALUES))
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_fixture_values(stem, fmt):
    api, segments, block, transfer, fpp, text_vals, json_vals = FIXTURE_VALUES[stem]
    if fmt == "json":
        ops, vals = parse_ior_json(FIXTURES / f"{stem}.json"), json_vals
    else:
        ops, vals = parse_ior_text((FIXTURES / f"{stem}.stdout.txt").read_text()), text_vals
    assert [o["operation"] for o in ops] == ["write", "read"]
    for o, bw, t in zip(ops, vals[:2], vals[2:]):
        assert (o["api"], o["num_tasks"], o["segments"], o["block"], o["transfer"],
                o["file_per_proc"], o["repetitions"], o["test_id"]) == (api, 4, segments, block,
                                                                        transfer, fpp, 1, 0)
        assert o["aggregate_bytes"] == 32 * MIB == 4 * segments * block
        assert o["bw_MiBps_mean"] == o["bw_MiBps_max"] == o["bw_MiBps_min"] == bw
        assert o["bw_MiBps_std"] == 0.0
        assert o["mean_time_s"] == t
        assert o["bandwidth_Bps"] == bw * 2 ** 20


def test_fixture_a_in_words():
    """The brief's example: a_mpiio_shared_coll, text output."""
    w, r = parse_ior_text((FIXTURES / "a_mpiio_shared_coll.stdout.txt").read_text())
    assert (w["bw_MiBps_mean"], r["bw_MiBps_mean"]) == (358.64, 882.54)
    assert (w["segments"], w["block"], w["num_tasks"], w["aggregate_bytes"]) == (8, MIB, 4, 32 * MIB)


@pytest.mark.parametrize("stem", sorted(FIXTURE_VALUES))
def test_fixture_json_and_text_agree(stem):
    j = parse_ior_json(FIXTURES / f"{stem}.json")
    t = parse_ior_text((FIXTURES / f"{stem}.stdout.txt").read_text())
    assert [{k: o[k] for k in STRUCTURE} for o in j] == [{k: o[k] for k in STRUCTURE} for o in t]
    assert set(j[0]) == set(t[0])
    # each format is consistent with itself: the summary is the one repetition's result
    doc = json.loads((FIXTURES / f"{stem}.json").read_text())
    assert [x["bwMiB"] for x in doc["tests"][0]["Results"]] == [o["bw_MiBps_mean"] for o in j]


def test_json_from_text_string_and_path():
    path = FIXTURES / "c_posix_shared.json"
    assert parse_ior_json(path.read_text()) == parse_ior_json(path) == parse_ior_json(str(path))


def test_parse_output_prefers_a_valid_json_file(tmp_path):
    stdout = (FIXTURES / "a_mpiio_shared_coll.stdout.txt").read_text()
    ops = parse_ior_output(stdout, FIXTURES / "a_mpiio_shared_coll.json")
    assert ops[0]["bw_MiBps_mean"] == 504.7145  # the JSON's, not the text's 358.64
    # missing or truncated summary file: the text on stdout
    assert parse_ior_output(stdout, tmp_path / "absent.json")[0]["bw_MiBps_mean"] == 358.64
    cut = tmp_path / "cut.json"
    cut.write_text((FIXTURES / "a_mpiio_shared_coll.json").read_text()[:2000])
    assert parse_ior_output(stdout, cut)[0]["bw_MiBps_mean"] == 358.64
    # JSON on stdout (summaryFormat=JSON without a file)
    assert parse_ior_output((FIXTURES / "b_mpiio_fpp.json").read_text())[1]["bw_MiBps_mean"] == 7854.9615


def test_parse_output_errors_name_the_source(tmp_path):
    cut = tmp_path / "cut.json"
    cut.write_text((FIXTURES / "a_mpiio_shared_coll.json").read_text()[:2000])
    failed = ("IOR-4.1.0+dev: MPI Coordinated Test of Parallel I/O\n"
              "ERROR: cannot open file /scratch/x.dat, (aiori-MPIIO.c:123)\n")
    with pytest.raises(ValueError) as e:
        parse_ior_output(failed, cut)
    msg = str(e.value)
    assert str(cut) in msg and "not valid JSON" in msg
    assert "IOR output" in msg and "cannot open file /scratch/x.dat" in msg
    with pytest.raises(ValueError, match="IOR output: empty"):
        parse_ior_output("")
    with pytest.raises(ValueError, match=r"no \"summary\""):
        parse_ior_json('{"Version": "4.1.0", "tests": []}')
    bad = tmp_path / "bad.json"
    doc = json.loads((FIXTURES / "a_mpiio_shared_coll.json").read_text())
    del doc["summary"][1]["blockSize"]
    bad.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"bad.json: summary\[1\] has no 'blockSize'"):
        parse_ior_json(bad)
    with pytest.raises(ValueError, match="no-such.json: cannot read"):
        parse_ior_json(tmp_path / "no-such.json")


def test_parse_text_of_ior_3():
    """IOR 3.x had no Stonewall columns; columns are found by name."""
    text = """
Summary of all tests:
Operation   Max(MiB)   Min(MiB)  Mean(MiB)     StdDev   Max(OPs)   Min(OPs)  Mean(OPs)     StdDev    Mean(s) Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt   blksiz    xsize aggs(MiB)   API RefNum
write        4201.52    3000.00    3600.76     600.76 1075588.13 1075588.13 1075588.13       0.00    3.89954     0     16  16    2   1     1        1         0    0   1024  1048576     4096   16384.0 POSIX      0
"""
    (o,) = parse_ior_text(text)
    assert (o["bw_MiBps_max"], o["bw_MiBps_min"], o["bw_MiBps_std"], o["repetitions"]) == (4201.52, 3000.0, 600.76, 2)
    assert o["aggregate_bytes"] == 16 * 1024 * MIB and o["file_per_proc"] is True


# ---------------------------------------------------------------- the replayer

def replay_cmd(*args, np_=NP):
    return mpirun(np_, replayer_path(), *args)


def run(cmd, **kw):
    return subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=60, **kw)


def traced(tmp_path, name, *args):
    """Run the replayer under `iomodel trace`, its MPI-IO only (not the POSIX
    writes of its summary file); (process, Trace)."""
    from iomodel.analyzer import Trace
    tdir = tmp_path / f"{name}-trace"
    proc = run([*IOMODEL, "trace", "-o", tdir, "--", *replay_cmd(*args)],
               env={**os.environ, "IOMODEL_POSIX": "0"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc, Trace(tdir)


def accesses(trace):
    """rank -> {"write"/"read": [(routine, path, offset, length), ...] in call order}"""
    ev = {(e["rank"], e["seq"]): e for e in trace.events.to_pylist()}
    out = {}
    for x in sorted(trace.extents.to_pylist(), key=lambda x: (x["rank"], x["seq"])):
        e = ev[(x["rank"], x["seq"])]
        kind = "write" if e["write"] else "read"
        out.setdefault(x["rank"], {"write": [], "read": []})[kind].append(
            (str(e["routine"]), os.path.basename(trace.paths[x["file_id"]]), x["offset"], x["length"]))
    return out


def ior_layout(rank, s, b, t, n=NP, fpp=False):
    """IOR 4.x: transfer j of segment i of `rank` at j*t + (F ? i*b : i*N*b + rank*b)."""
    return [j * t + (i * b if fpp else i * n * b + rank * b) for i in range(s) for j in range(b // t)]


@pytest.fixture(scope="module")
def shared_run(tmp_path_factory):
    """-a MPIIO -w -r -c -s 4 -b 64k -t 16k, traced, JSON summary to a file."""
    tmp = tmp_path_factory.mktemp("replay-shared")
    summary = tmp / "summary.json"
    proc, trace = traced(tmp, "shared", "-a", "MPIIO", "-w", "-r", "-c", "-s", 4, "-b", "64k",
                         "-t", "16k", "-k", "-o", tmp / "shared.dat",
                         "-O", "summaryFormat=JSON", "-O", f"summaryFile={summary}")
    return tmp, proc, trace, summary


def test_replayer_path(monkeypatch, tmp_path):
    assert replayer_path().name == "iomodel_replay"
    fake = tmp_path / "iomodel_replay"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("IOMODEL_REPLAYER", str(fake))
    assert replayer_path() == fake
    assert issubclass(ReplayerNotFound, FileNotFoundError)


def test_shared_file_size_and_summary(shared_run):
    tmp, proc, trace, summary = shared_run
    assert (tmp / "shared.dat").stat().st_size == 4 * NP * 64 * KIB
    ops = parse_ior_json(summary)
    assert [o["operation"] for o in ops] == ["write", "read"]
    for o in ops:
        assert (o["api"], o["num_tasks"], o["segments"], o["block"], o["transfer"],
                o["file_per_proc"], o["repetitions"]) == ("MPIIO", NP, 4, 64 * KIB, 16 * KIB, False, 1)
        assert o["aggregate_bytes"] == NP * 4 * 64 * KIB
        assert o["bw_MiBps_mean"] > 0 and o["bandwidth_Bps"] > 0 and o["mean_time_s"] > 0
        # bandwidth is the aggregate over the whole phase (open to close)
        assert o["bandwidth_Bps"] == pytest.approx(o["aggregate_bytes"] / o["mean_time_s"], rel=2e-3, abs=MIB)
    doc = json.loads(summary.read_text())
    assert doc["Version"].startswith("iomodel_replay ")
    p = doc["tests"][0]["Parameters"]
    assert (p["collective"], p["numTasks"], p["segmentCount"], p["api"]) == (1, NP, 4, "MPIIO")


def test_io_time_is_its_collective_calls_from_last_entry_to_last_exit(shared_run):
    """iomodelIoTime of collective transfers is what the model calls a traced
    collective phase's io_time_s: per call, from the last rank's entry to the
    last rank's exit, summed.  The replayer's clock brackets the tracer's around
    each call, so it is at least the traced phase's and at most 20 us a call
    more, and it lies inside the span over ranks (wrRdTime)."""
    tmp, _, trace, summary = shared_run
    from iomodel.analyzer import analyze
    model = analyze(trace.path)
    assert [p["operation"] for p in model["phases"]] == ["write", "read"]  # 16 calls per rank each
    traced_io = {p["operation"]: p["io_time_s"] for p in model["phases"]}
    doc = json.loads(summary.read_text())
    for o, r in zip(parse_ior_json(summary), doc["tests"][0]["Results"]):
        assert o["io_time_s"] == r["iomodelIoTime"] > 0
        assert traced_io[o["operation"]] <= o["io_time_s"] + 1e-6 <= o["transfer_time_s"] + 2e-6
        assert o["io_time_s"] <= traced_io[o["operation"]] + 16 * 20e-6
        assert o["io_bandwidth_Bps"] == o["aggregate_bytes"] / o["io_time_s"]
    # IOR gives only the span: no io_time_s
    assert [o["io_time_s"] for o in parse_ior_json(FIXTURES / "a_mpiio_shared_coll.json")] == [None, None]


def test_text_output_parses_to_the_same(shared_run):
    _, proc, _, summary = shared_run
    text, js = parse_ior_text(proc.stdout), parse_ior_json(summary)
    assert parse_ior_output(proc.stdout, summary) == js
    assert [{k: o[k] for k in STRUCTURE} for o in text] == [{k: o[k] for k in STRUCTURE} for o in js]
    for t, j in zip(text, js):
        for k in ("bw_MiBps_max", "bw_MiBps_min", "bw_MiBps_mean"):
            assert t[k] == pytest.approx(j[k], abs=0.006)
        assert t["mean_time_s"] == pytest.approx(j["mean_time_s"], abs=1e-5)


def test_output_has_iors_keys_and_columns(shared_run):
    """Every key of IOR's JSON that iomodel reads, and the text tables column for column."""
    _, proc, _, summary = shared_run
    ours = json.loads(summary.read_text())
    ior = json.loads((FIXTURES / "a_mpiio_shared_coll.json").read_text())
    assert set(ior) <= set(ours)
    assert set(ior["tests"][0]["Parameters"]) <= set(ours["tests"][0]["Parameters"])
    assert set(ior["tests"][0]["Results"][0]) <= set(ours["tests"][0]["Results"][0])
    assert set(ior["summary"][0]) <= set(ours["summary"][0])
    assert [r["access"] for r in ours["tests"][0]["Results"]] == ["write", "read"]

    fixture = (FIXTURES / "a_mpiio_shared_coll.stdout.txt").read_text().splitlines()
    lines = proc.stdout.splitlines()
    for head in ("access    bw(MiB/s)", "------    ", "Operation   Max(MiB)"):
        assert [l for l in lines if l.startswith(head)] == [l for l in fixture if l.startswith(head)]
    for text in (fixture, lines):  # values start under their column names, as in IOR's
        header = next(l for l in text if l.startswith("access    bw"))
        starts = [m.start() for m in re.finditer(r"\S+", header)]
        for row in (l for l in text if re.match(r"(write|read)\s+\d", l) and len(l) < len(header) + 8):
            assert [m.start() for m in re.finditer(r"\S+", row)] == starts, row


def test_shared_layout_follows_ior(shared_run):
    """The strongest check: every rank's offsets, in call order, are IOR's."""
    _, _, trace, _ = shared_run
    acc = accesses(trace)
    assert sorted(acc) == list(range(NP))
    for rank in range(NP):
        want = ior_layout(rank, 4, 64 * KIB, 16 * KIB)
        w, r = acc[rank]["write"], acc[rank]["read"]
        assert [x[2] for x in w] == want
        assert {(x[0], x[1], x[3]) for x in w} == {("MPI_File_write_at_all", "shared.dat", 16 * KIB)}
        assert [x[2] for x in r] == want
        assert {(x[0], x[3]) for x in r} == {("MPI_File_read_at_all", 16 * KIB)}


def test_file_per_process_and_reordered_reads(tmp_path):
    """-F: one file per rank; -C with 2 tasks a node: rank r reads rank (r+2)%4's file."""
    proc, trace = traced(tmp_path, "fpp", "-a", "MPIIO", "-F", "-C", "-s", 4, "-b", "64k", "-t",
                         "16k", "-k", "-o", tmp_path / "fpp.dat", "--iomodel.tasksPerNode=2")
    files = sorted(tmp_path.glob("fpp.dat.*"))
    assert [f.name for f in files] == [f"fpp.dat.{r:08d}" for r in range(NP)]
    assert all(f.stat().st_size == 4 * 64 * KIB for f in files)
    acc = accesses(trace)
    for rank in range(NP):
        want = ior_layout(rank, 4, 64 * KIB, 16 * KIB, fpp=True)
        assert acc[rank]["write"] == [("MPI_File_write_at", f"fpp.dat.{rank:08d}", o, 16 * KIB) for o in want]
        other = (rank + 2) % NP
        assert acc[rank]["read"] == [("MPI_File_read_at", f"fpp.dat.{other:08d}", o, 16 * KIB) for o in want]
    ops = parse_ior_text(proc.stdout)
    assert all(o["file_per_proc"] and o["aggregate_bytes"] == NP * 4 * 64 * KIB for o in ops)


def ior_random_reorder(seed, n=NP, rep=0):
    """Whose data each rank reads with IOR 4's -Z (-X seed) on one node: the
    first rand() % n after srand(rank + seed), a negative seed offset by the
    repetition; glibc's rand, as IOR and the replayer call it."""
    import ctypes
    libc = ctypes.CDLL(None)
    out = []
    for rank in range(n):
        libc.srand(rank + (-seed + rep if seed < 0 else seed))
        out.append((rank + libc.rand() % n) % n)
    return out


@pytest.mark.parametrize("seed", [None, 5])
def test_random_task_reorder_reads_as_ior_does(tmp_path, seed):
    """-Z (IOR's reorderTasksRandom): each rank reads the block of the rank
    IOR 4 would pick, several ranks the same one: by glibc's rand, with the
    default seed 0 ranks 0-3 read the blocks of ranks 3, 0, 0, 1."""
    whose = ior_random_reorder(seed or 0)
    if seed is None:
        assert whose == [3, 0, 0, 1]
    proc, trace = traced(tmp_path, "z", "-a", "MPIIO", "-s", 2, "-b", "64k", "-t", "16k", "-Z",
                         *(["-X", seed] if seed is not None else []), "-k", "-o", tmp_path / "z.dat")
    acc = accesses(trace)
    for rank in range(NP):
        assert acc[rank]["write"] == [("MPI_File_write_at", "z.dat", o, 16 * KIB)
                                      for o in ior_layout(rank, 2, 64 * KIB, 16 * KIB)]
        assert acc[rank]["read"] == [("MPI_File_read_at", "z.dat", o, 16 * KIB)
                                     for o in ior_layout(whose[rank], 2, 64 * KIB, 16 * KIB)]


def test_application_names_in_a_directory(tmp_path):
    """--iomodel.names: -o is a directory made for the files; with -F the file of
    rank r is the pattern with {rank} (or {rank:0N}) replaced by r; without -k
    the files and the directory are removed."""
    d = tmp_path / "replay.1"
    proc, trace = traced(tmp_path, "names", "-a", "MPIIO", "-F", "-w", "-s", 2, "-b", "32k", "-t",
                         "16k", "-k", "-o", d, "--iomodel.names=ck_{rank:04}.h5")
    assert sorted(f.name for f in d.iterdir()) == [f"ck_{r:04d}.h5" for r in range(NP)]
    assert all(f.stat().st_size == 2 * 32 * KIB for f in d.iterdir())
    acc = accesses(trace)
    for rank in range(NP):
        assert acc[rank]["write"] == [("MPI_File_write_at", f"ck_{rank:04d}.h5", o, 16 * KIB)
                                      for o in ior_layout(rank, 2, 32 * KIB, 16 * KIB, fpp=True)]
    # shared, and not kept: nothing is left, the directory neither
    d2 = tmp_path / "replay.2"
    proc = run(replay_cmd("-a", "POSIX", "-s", 1, "-b", "16k", "-t", "16k", "-o", d2,
                          "--iomodel.names=fpp.{rank}.dat", "-F"))
    assert proc.returncode == 0, proc.stderr
    assert not d2.exists()
    proc = run(replay_cmd("-a", "MPIIO", "-w", "-k", "-c", "-s", 1, "-b", "16k", "-t", "16k",
                          "-o", d2, "--iomodel.names=out.nc"))
    assert proc.returncode == 0, proc.stderr
    assert [(f.name, f.stat().st_size) for f in d2.iterdir()] == [("out.nc", NP * 16 * KIB)]


def test_fresh_sets_each_repetitions_files_aside(tmp_path):
    """--iomodel.fresh -i 3: each repetition's files are renamed NAME.iomodel-rep.K
    instead of removed (so the next repetition writes into pages of its own), and
    all are removed at the end.  -d 1 sleeps a second before each write: during
    the third repetition's, exactly the first two repetitions' files, 16 KiB
    each, are in the directory."""
    d = tmp_path / "fresh"
    cmd = replay_cmd("-a", "MPIIO", "-F", "-w", "-s", 1, "-b", "16k", "-t", "16k", "-i", 3,
                     "-d", 1, "-o", d, "--iomodel.names=fpp.{rank}.dat", "--iomodel.fresh")
    proc = subprocess.Popen(list(map(str, cmd)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    seen = set()
    while proc.poll() is None:
        try:
            seen.add(frozenset((f.name, f.stat().st_size) for f in d.iterdir()))
        except FileNotFoundError:      # not made yet, or a file renamed while listed
            pass
        time.sleep(0.02)               # the window is -d's second: no need to spin a core
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    aside = frozenset((f"fpp.{r}.dat.iomodel-rep.{k}", 16 * KIB) for r in range(NP) for k in (0, 1))
    assert aside in seen
    assert not d.exists()              # every file removed at the end, then the directory
    assert [o["repetitions"] for o in parse_ior_text(out)] == [3]


def test_application_names_directory_that_cannot_be_made(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    proc = run(replay_cmd("-F", "-w", "-o", blocker / "d", "--iomodel.names=x{rank}"))
    assert proc.returncode != 0
    assert [l for l in proc.stderr.splitlines() if l.startswith("iomodel_replay")] == \
        [f"iomodel_replay: cannot make the directory {blocker / 'd'} (-o, for --iomodel.names): "
         f"Not a directory"]


def test_random_offsets_shuffle_each_block(tmp_path):
    """-z: each segment's transfers of the rank's block, in a fixed shuffled order."""
    _, trace = traced(tmp_path, "z", "-a", "MPIIO", "-z", "-s", 3, "-b", "128k", "-t", "16k",
                      "-o", tmp_path / "z.dat")
    acc = accesses(trace)
    shuffled = 0
    for rank in range(NP):
        got = [x[2] for x in acc[rank]["write"]]
        want = ior_layout(rank, 3, 128 * KIB, 16 * KIB)
        per = 8
        for i in range(3):
            assert sorted(got[i * per:(i + 1) * per]) == want[i * per:(i + 1) * per]
            # the same order in every segment, as IOR's -z
            assert [o - got[i * per] for o in got[i * per:(i + 1) * per]] == [o - got[0] for o in got[:per]]
        assert [x[2] for x in acc[rank]["read"]] == got
        shuffled += got != want
    assert shuffled == NP


def test_iomodel_offsets_extension(tmp_path):
    """--iomodel.offsets=FIRST,PER_RANK,STRIDE replaces IOR's layout."""
    _, trace = traced(tmp_path, "off", "-a", "MPIIO", "-w", "-k", "-s", 3, "-b", "32k", "-t", "16k",
                      "-o", tmp_path / "off.dat", "--iomodel.offsets=1m,40k,512k")
    acc = accesses(trace)
    for rank in range(NP):
        want = [MIB + rank * 40 * KIB + i * 512 * KIB + j * 16 * KIB for i in range(3) for j in range(2)]
        assert [x[2] for x in acc[rank]["write"]] == want
        assert acc[rank]["read"] == []
    assert (tmp_path / "off.dat").stat().st_size == MIB + 3 * 40 * KIB + 2 * 512 * KIB + 32 * KIB


# waits before the 2nd to 8th write: think (k) or the gap (g)
K, G = 0.004, 0.02


@pytest.mark.parametrize("gap, every, want", [
    (None, None, [K] * 7),
    (0.02, None, [K, G, K, G, K, G, K]),          # before segments 1, 2 and 3
    (0.02, 2, [K, K, K, G, K, K, K]),             # before segment 2 only
])
def test_think_and_gap_leave_time_between_transfers(tmp_path, gap, every, want):
    """-s 4 -b 32k -t 16k: 2 writes per segment and rank.  --iomodel.think=0.004
    computes at least 4 ms before every write but the first; with
    --iomodel.gap=0.02 the first write of each segment comes at least 20 ms
    after the last of the one before instead, and with --iomodel.gapEvery=2
    only every second segment's (the application's phases of 2 segments:
    its repetitions within a phase get the think time).  Neither counts in
    iomodelIoTime: it holds the slowest rank's write calls and is at most
    that rank's span less its 7 waits (a millisecond allowed for the loop
    around the calls)."""
    extra = ([f"--iomodel.gap={gap}"] if gap else []) + ([f"--iomodel.gapEvery={every}"] if every else [])
    summary = tmp_path / "s.json"
    _, trace = traced(tmp_path, "think", "-a", "MPIIO", "-w", "-s", 4, "-b", "32k", "-t", "16k",
                      "-o", tmp_path / "t.dat", "-O", "summaryFormat=JSON",
                      "-O", f"summaryFile={summary}", f"--iomodel.think={K}", *extra)
    ev = [e for e in trace.events.to_pylist() if e["write"] and e["data"]]
    in_calls, spans = [], []
    for rank in range(NP):
        calls = sorted((e["t_start"], e["t_end"]) for e in ev if e["rank"] == rank)
        assert len(calls) == 8
        waits = [b[0] - a[1] for a, b in zip(calls, calls[1:])]
        assert all(w >= x for w, x in zip(waits, want)), (waits, want)
        in_calls.append(sum(b - a for a, b in calls))
        spans.append(calls[-1][1] - calls[0][0])
    (o,) = parse_ior_json(summary)
    assert max(in_calls) - 1e-6 <= o["io_time_s"] <= max(spans) - sum(want) + 1e-3
    p = run(replay_cmd("-a", "MPIIO", "-w", "-o", tmp_path / "x.dat", "--iomodel.think=-1"))
    assert p.returncode != 0 and "bad --iomodel.think=-1: expected seconds, 0 to 3600" in p.stderr
    p = run(replay_cmd("-a", "MPIIO", "-w", "-o", tmp_path / "x.dat", "--iomodel.gapEvery=0"))
    assert p.returncode != 0 and "bad --iomodel.gapEvery=0: expected a count of segments >= 1" in p.stderr


@pytest.mark.parametrize("barrier", [False, True])
def test_gap_barrier_starts_each_segment_together(tmp_path, barrier):
    """-c -s 3 -b 32k -t 16k --iomodel.gap=0.01: 2 collective writes per segment
    and rank.  With --iomodel.gapBarrier a barrier follows each gap: one
    communication call more between a segment's last write and the next one's
    first (the trace's logical clock), and no rank starts segment i + 1 before
    every rank has finished segment i.  Neither the gaps nor the barriers count
    in iomodelIoTime."""
    extra = ["--iomodel.gapBarrier"] if barrier else []
    summary = tmp_path / "s.json"
    _, trace = traced(tmp_path, "gb", "-a", "MPIIO", "-w", "-c", "-s", 3, "-b", "32k", "-t", "16k",
                      "-o", tmp_path / "g.dat", "--iomodel.gap=0.01", *extra,
                      "-O", "summaryFormat=JSON", "-O", f"summaryFile={summary}")
    ev = [e for e in trace.events.to_pylist() if e["write"] and e["data"]]
    per = {r: sorted((e for e in ev if e["rank"] == r), key=lambda e: e["seq"]) for r in range(NP)}
    assert all(len(v) == 6 for v in per.values())
    for r, v in per.items():
        assert [b["lclock"] - a["lclock"] for a, b in zip(v, v[1:])] == [0, int(barrier), 0, int(barrier), 0]
    # iomodelIoTime: the 6 calls each from last entry to last exit (the gaps and
    # barriers are outside every call), bracketing the traced calls
    calls = sum(max(0.0, max(v[j]["t_end"] for v in per.values()) - max(v[j]["t_start"] for v in per.values()))
                for j in range(6))
    (o,) = parse_ior_json(summary)
    assert calls - 1e-6 <= o["io_time_s"] <= calls + 6 * 20e-6
    if barrier:
        for i in (2, 4):
            assert min(v[i]["t_start"] for v in per.values()) >= max(v[i - 1]["t_end"] for v in per.values())
    p = run(replay_cmd("-a", "MPIIO", "-w", "-o", tmp_path / "x.dat", "--iomodel.gapBarrier=1"))
    assert p.returncode != 0 and "option --iomodel.gapBarrier takes no value" in p.stderr


@pytest.mark.parametrize("offsets", [None, "1m,4k,0"])
def test_pieces_extension_moves_data_through_a_view(tmp_path, offsets):
    """--iomodel.piece=4k with -s 2 -b 32k -t 16k, 4 ranks: each transfer covers 4
    pieces of 4 KiB, the ranks' pieces in turn (16 KiB apart): rank r's q-th piece
    at D + q*16k, D = r*4k (or 1m + r*4k with --iomodel.offsets=1m,4k,0)."""
    extra = [f"--iomodel.offsets={offsets}"] if offsets else []
    proc, trace = traced(tmp_path, "piece", "-a", "MPIIO", "-c", "-w", "-r", "-k", "-s", 2,
                         "-b", "32k", "-t", "16k", "-o", tmp_path / "p.dat",
                         "--iomodel.piece=4k", *extra)
    base = MIB if offsets else 0
    acc = accesses(trace)
    for rank in range(NP):
        want = [base + rank * 4 * KIB + q * 16 * KIB for q in range(16)]
        for kind, routine in (("write", "MPI_File_write_at_all"), ("read", "MPI_File_read_at_all")):
            got = acc[rank][kind]
            assert [x[2] for x in got] == want
            assert {(x[0], x[3]) for x in got} == {(routine, 4 * KIB)}
    # the 4 ranks' pieces tile the file from base: 4 ranks * 2 segments * 32 KiB
    assert (tmp_path / "p.dat").stat().st_size == base + NP * 2 * 32 * KIB
    ops = parse_ior_text(proc.stdout)
    assert [(o["operation"], o["aggregate_bytes"]) for o in ops] == \
        [("write", NP * 2 * 32 * KIB), ("read", NP * 2 * 32 * KIB)]
    assert "iomodel pieces      : 4096 bytes, the tasks' in turn" in proc.stdout


@pytest.mark.parametrize("reread", [True, False])
def test_reread_reads_back_through_the_writes_open(tmp_path, reread):
    """-w -r -s 2 -b 32k -t 16k: with --iomodel.reread each rank opens the
    file once (MPI_MODE_CREATE|MPI_MODE_RDWR = 1 + 8 = 9) and reads back its
    own 4 transfers at the offsets it wrote; the analyzer finds the read
    phase wholly reread (reread_bytes = 4 ranks * 2 * 32 KiB = 262144).
    Without it, IOR's way: an open to write (CREATE|WRONLY = 1 + 4 = 5), a
    close, an open to read (RDONLY = 2): reread_bytes 0."""
    from iomodel.analyzer import analyze
    extra = ["--iomodel.reread"] if reread else []
    proc, trace = traced(tmp_path, "rr", "-a", "MPIIO", "-w", "-r", "-s", 2, "-b", "32k",
                         "-t", "16k", "-o", tmp_path / "rr.dat", *extra)
    ops = parse_ior_output(proc.stdout)
    assert [(o["operation"], o["aggregate_bytes"]) for o in ops] == \
        [("write", NP * 2 * 32 * KIB), ("read", NP * 2 * 32 * KIB)]
    opens = trace.files.to_pylist()
    for rank in range(NP):
        amodes = [o["amode"] for o in opens if o["rank"] == rank]
        assert amodes == ([9] if reread else [5, 2])
        acc = accesses(trace)[rank]
        assert [x[2] for x in acc["read"]] == [x[2] for x in acc["write"]] == ior_layout(rank, 2, 32 * KIB, 16 * KIB)
    model = analyze(trace.path)
    read = [p for p in model["phases"] if p["operation"] == "read"]
    assert [(p["weight"], p["reread_bytes"]) for p in read] == [(262144, 262144 if reread else 0)]


@pytest.mark.parametrize("idle_open", [False, True])
def test_fewer_tasks_than_launched(tmp_path, idle_open):
    """IOR's -N 2 under mpirun -np 3, -w -r -s 2 -b 32k -t 16k: ranks 0 and 1
    write and read their blocks in IOR's layout for 2 tasks, rank 2 moves
    nothing; IOR reports 2 tasks and 2 * 2 * 32 KiB.  With --iomodel.idleOpen
    rank 2 opens the file with them for the write (CREATE|WRONLY = 5) and the
    read (RDONLY = 2) and closes it with them; without, it never opens it."""
    extra = ["--iomodel.idleOpen"] if idle_open else []
    proc, trace = traced(tmp_path, "n2", "-a", "MPIIO", "-w", "-r", "-k", "-s", 2, "-b", "32k",
                         "-t", "16k", "-N", 2, "-o", tmp_path / "n.dat", *extra)
    ops = parse_ior_output(proc.stdout)
    assert [(o["operation"], o["num_tasks"], o["aggregate_bytes"]) for o in ops] == \
        [("write", 2, 2 * 2 * 32 * KIB), ("read", 2, 2 * 2 * 32 * KIB)]
    assert (tmp_path / "n.dat").stat().st_size == 2 * 2 * 32 * KIB
    opens = trace.files.to_pylist()
    acc = accesses(trace)
    for rank in (0, 1):
        assert [o["amode"] for o in opens if o["rank"] == rank] == [5, 2]
        assert [x[2] for x in acc[rank]["write"]] == [x[2] for x in acc[rank]["read"]] == \
            ior_layout(rank, 2, 32 * KIB, 16 * KIB, n=2)
    assert [o["amode"] for o in opens if o["rank"] == 2] == ([5, 2] if idle_open else [])
    assert 2 not in acc


def test_more_tasks_than_launched_warns(tmp_path):
    proc = run(replay_cmd("-a", "MPIIO", "-w", "-s", 1, "-b", "16k", "-t", "16k", "-N", 3,
                          "-o", tmp_path / "n.dat", np_=2))
    assert proc.returncode == 0, proc.stderr
    assert "-N 3: only 2 tasks were launched; all take part" in proc.stderr
    assert parse_ior_output(proc.stdout)[0]["num_tasks"] == 2


def test_posix_repetitions_and_removal(tmp_path):
    """-a POSIX with fsync, 2 repetitions, text only; without -k the file is removed."""
    proc = run(replay_cmd("-a", "POSIX", "-e", "-i", 2, "-s", 2, "-b", "32k", "-t", "8k",
                          "-o", tmp_path / "p.dat"))
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "p.dat").exists()
    ops = parse_ior_output(proc.stdout)
    assert [(o["operation"], o["api"], o["repetitions"], o["aggregate_bytes"]) for o in ops] == \
        [("write", "POSIX", 2, NP * 2 * 32 * KIB), ("read", "POSIX", 2, NP * 2 * 32 * KIB)]
    assert all(o["bw_MiBps_min"] <= o["bw_MiBps_mean"] <= o["bw_MiBps_max"] for o in ops)
    rows = [l.split()[0] + l.split()[-1] for l in proc.stdout.splitlines()
            if l.split()[:1] in (["write"], ["read"]) and len(l.split()) == 11]
    assert rows == ["write0", "read0", "write1", "read1"]


def test_json_on_stdout_without_a_summary_file(tmp_path):
    proc = run(replay_cmd("-a", "MPIIO", "-w", "-s", 1, "-b", "16k", "-t", "16k", "-o",
                          tmp_path / "j.dat", "-O", "summaryFormat=JSON", np_=2))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [s["operation"] for s in doc["summary"]] == ["write"]
    assert parse_ior_output(proc.stdout)[0]["num_tasks"] == 2


def test_unimplemented_ior_options_warn(tmp_path):
    proc = run(replay_cmd("-a", "MPIIO", "-W", "-D", 5, "--posix.odirect", "-O", "checkRead=1",
                          "-s", 1, "-b", "16k", "-t", "16k", "-o", tmp_path / "w.dat", np_=2))
    assert proc.returncode == 0, proc.stderr
    warnings = [l for l in proc.stderr.splitlines() if "warning" in l]
    assert len(warnings) == 4 and all("not implemented; ignored" in w for w in warnings)
    assert len(parse_ior_text(proc.stdout)) == 2


@pytest.mark.parametrize("args, message", [
    (["-q"], "unknown option -q"),
    (["-b", "12x"], "bad value '12x' for -b"),
    (["-b", "64k", "-t", "24k"], "must be a multiple of -t"),
    (["-b", "100", "-t", "100"], "multiples of 8"),
    (["-a", "HDF5"], "API HDF5 is not supported"),
    (["-z", "-b", "16k", "-t", "16k"], "-z needs -b greater than -t"),
    (["-s"], "option -s needs a value"),
    (["--iomodel.offsets=1,2"], "bad --iomodel.offsets=1,2"),
    (["-w", "--iomodel.reread"], "--iomodel.reread needs -w and -r"),
    (["-w", "-r", "-C", "--iomodel.reread"], "--iomodel.reread cannot take -C, -Z or -E"),
    (["-w", "-r", "-Z", "--iomodel.reread"], "--iomodel.reread cannot take -C, -Z or -E"),
    (["-Z", "-X", "x"], "bad value 'x' for -X: expected an integer"),
    (["--iomodel.reread=1"], "option --iomodel.reread takes no value"),
    (["-r", "--iomodel.fresh"], "--iomodel.fresh needs -w and neither -k nor -E"),
    (["-w", "-k", "--iomodel.fresh"], "--iomodel.fresh needs -w and neither -k nor -E"),
    (["-w", "-E", "--iomodel.fresh"], "--iomodel.fresh needs -w and neither -k nor -E"),
    (["--iomodel.names=a/b"], "bad --iomodel.names=a/b: expected a file name (no '/')"),
    (["-F", "--iomodel.names=x.dat"], "--iomodel.names=x.dat with -F needs {rank}"),
    (["--iomodel.names=x{rank}"], "--iomodel.names=x{rank}: {rank} needs -F"),
    (["-F", "--iomodel.names=x{rank:0}"], "bad --iomodel.names=x{rank:0}: {rank} or {rank:0N}"),
    (["-F", "--iomodel.names=x{rank}}"], "bad --iomodel.names=x{rank}}"),
    (["-F", "--iomodel.names=x{ran}"], "bad --iomodel.names=x{ran}: {rank} or {rank:0N}"),
    (["--iomodel.piece=4k"], "--iomodel.piece needs -a MPIIO and one shared file"),
    (["-a", "MPIIO", "-F", "--iomodel.piece=4k"], "--iomodel.piece needs -a MPIIO and one shared"),
    (["-a", "MPIIO", "-t", "16k", "-b", "16k", "--iomodel.piece=3k"],
     "--iomodel.piece=3072: -t (16384) must be a multiple of it"),
    (["-a", "MPIIO", "--iomodel.piece=0"], "--iomodel.piece must be 1 byte to 2147483647 bytes"),
    (["-a", "MPIIO", "--iomodel.piece=2g"], "--iomodel.piece must be 1 byte to 2147483647 bytes"),
    (["-a", "MPIIO", "-c", "--iomodel.idleOpen"], "--iomodel.idleOpen needs -a MPIIO and a shared"),
    (["-a", "POSIX", "--iomodel.idleOpen"], "--iomodel.idleOpen needs -a MPIIO and a shared"),
    (["-a", "MPIIO", "-w", "-r", "--iomodel.reread", "--iomodel.idleOpen"],
     "no -e, -Y or --iomodel.reread"),
])
def test_bad_options(args, message):
    proc = run([replayer_path(), *args])  # options are checked before MPI starts
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("iomodel_replay: ") and message in lines[0]


def test_bad_option_under_mpirun_prints_one_line():
    proc = run(replay_cmd("-a", "MPIIO", "--nonsense"))
    assert proc.returncode != 0
    assert [l for l in proc.stderr.splitlines() if l.startswith("iomodel_replay")] == \
        ["iomodel_replay: unknown option --nonsense (see iomodel_replay -h)"]


def test_read_of_a_missing_file_fails(tmp_path):
    proc = run(replay_cmd("-a", "MPIIO", "-r", "-c", "-s", 1, "-b", "16k", "-t", "16k",
                          "-o", tmp_path / "missing.dat"))
    assert proc.returncode != 0
    ours = [l for l in proc.stderr.splitlines() if l.startswith("iomodel_replay")]
    assert len(ours) == 1 and "cannot open" in ours[0] and "missing.dat for reading" in ours[0]
    with pytest.raises(ValueError, match="IOR output"):
        parse_ior_output(proc.stdout)


def test_short_read_fails(tmp_path):
    (tmp_path / "short.dat").write_bytes(b"\0" * 20000)
    proc = run(replay_cmd("-a", "POSIX", "-r", "-k", "-s", 1, "-b", "16k", "-t", "16k",
                          "-o", tmp_path / "short.dat", np_=2))
    assert proc.returncode != 0
    ours = [l for l in proc.stderr.splitlines() if l.startswith("iomodel_replay")]
    assert len(ours) == 1 and "short read at offset 16384" in ours[0]


def test_repetitions_give_the_median_time(tmp_path):
    """-i 5: a phase's time is the median over the 5 repetitions of
    iomodelIoTime (and of wrRdTime), not their mean, which a run's first
    repetition (the first request's set-up) pulls up."""
    summary = tmp_path / "s.json"
    proc = run(replay_cmd("-a", "MPIIO", "-w", "-s", 2, "-b", "64k", "-t", "64k", "-i", 5,
                          "-o", tmp_path / "f.dat", "-O", "summaryFormat=JSON", "-O", f"summaryFile={summary}"))
    assert proc.returncode == 0, proc.stderr
    [o] = parse_ior_json(summary)
    results = json.loads(summary.read_text())["tests"][0]["Results"]
    reps = [r for x in results for r in (x if isinstance(x, list) else [x])]
    assert len(reps) == 5 and o["repetitions"] == 5
    assert o["io_time_s"] == sorted(r["iomodelIoTime"] for r in reps)[2]
    assert o["transfer_time_s"] == sorted(r["wrRdTime"] for r in reps)[2]
    assert o["io_bandwidth_Bps"] == NP * 2 * 64 * KIB / o["io_time_s"]


def test_transfer_time_and_bandwidth_leave_open_and_close_out():
    """BW_CH of a replay is bytes / wrRdTime (a traced phase has no open or
    close); the fixture's first repetition: 32 MiB written in 0.059 s of
    transfers (JSON) and in 0.080713 s (the text output, another run)."""
    from iomodel.replay.results import parse_ior_json, parse_ior_text
    fx = FIXTURES
    w, r = parse_ior_json(fx / "a_mpiio_shared_coll.json")
    assert (w["transfer_time_s"], r["transfer_time_s"]) == (0.059, 0.0339)
    assert w["transfer_bandwidth_Bps"] == 32 * 2**20 / 0.059
    tw, tr = parse_ior_text((fx / "a_mpiio_shared_coll.stdout.txt").read_text())
    assert (tw["transfer_time_s"], tr["transfer_time_s"]) == (0.080713, 0.035316)
    assert tr["transfer_bandwidth_Bps"] == 32 * 2**20 / 0.035316


def test_buffer_offset_places_the_transfer_buffer(tmp_path):
    """--iomodel.bufferOffset=16 with -w -r -k -s 1 -b 32k -t 16k: every transfer
    moves data from and into a buffer 16 B past a 4 KiB boundary (the tracer
    sees 16 for all 4 of each rank's calls, the model's phases too), and the
    data is the rank's pattern still: word i of a transfer is
    (rank << 48) ^ i ^ 0x5a5a5a5a00000000.  4096 is refused."""
    import struct
    from iomodel.analyzer import analyze
    proc, trace = traced(tmp_path, "bo", "-a", "MPIIO", "-w", "-r", "-k", "-s", 1, "-b", "32k",
                         "-t", "16k", "-o", tmp_path / "bo.dat", "--iomodel.bufferOffset=16")
    assert "iomodel buffer      : 16 bytes past 4 KiB" in proc.stdout
    ev = [e for e in trace.events.to_pylist() if e["data"]]
    assert len(ev) == NP * 4 and {e["buffer_offset"] for e in ev} == {16}
    assert [p.get("buffer_offset") for p in analyze(trace.path)["phases"]] == [16, 16]
    data = (tmp_path / "bo.dat").read_bytes()
    assert len(data) == NP * 32 * KIB
    for rank in range(NP):
        for j in range(2):                     # the rank's two transfers in its block
            at = rank * 32 * KIB + j * 16 * KIB
            words = struct.unpack_from("<4Q", data, at)
            assert words == tuple((rank << 48) ^ i ^ 0x5a5a5a5a00000000 for i in range(4))
    bad = run(replay_cmd("-a", "MPIIO", "-w", "-b", "16k", "-t", "16k",
                         "-o", tmp_path / "x.dat", "--iomodel.bufferOffset=4096", np_=1))
    assert bad.returncode != 0 and "--iomodel.bufferOffset must be 0 to 4095 bytes" in bad.stderr
