"""`iomodel analyze` as an MPI job (analyzer/mpi_job.py, issue 81): under
mpirun (Open MPI) and mpiexec.mpich, at 2 and 3 processes, the model is the
one `-j 1` writes, byte for byte; a damaged share is the serial analysis's
error, no process left waiting; an mpi4py of another MPI is said."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import pyarrow.parquet as pq
from conftest import BOTH_MPIS, IOMODEL, ROOT, mpi_env, mpirun

DARSHAN = ROOT / "tests" / "fixtures" / "darshan"

# btio_like: every process the same bursts (the workers reduce the phases' numbers);
# s3d_like: rank 0's header too (the bursts themselves come back to process 0);
# each as one job file and as rank files (IOMODEL_JOIN=0)
CASES = [("btio_like", 4, ("16", "16", "16", "4"), "1"), ("s3d_like", 4, ("blocking", "16", "16", "16"), "1"),
         ("s3d_like", 3, ("blocking", "12", "12", "12"), "0")]


def analyze_under(mpi, np_, trace, out, *extra, **kw):
    env = {**os.environ, **mpi_env(mpi)}
    return subprocess.run(mpirun(np_, *IOMODEL, "analyze", trace, "-o", out, *extra, mpi=mpi),
                          capture_output=True, text=True, timeout=180, env=env, **kw)


@pytest.fixture(scope="module")
def case_traces(build_dir, tmp_path_factory):
    out = {}
    for name, np_, args, join in CASES:
        work = tmp_path_factory.mktemp(f"{name}-{np_}")
        (work / "data").mkdir()
        trace = work / "trace"
        subprocess.run(IOMODEL + ["trace", "-o", trace, "--", *mpirun(np_, build_dir / name, work / "data", *args)],
                       check=True, capture_output=True, timeout=120,
                       env={**os.environ, "IOMODEL_POSIX": "0", "IOMODEL_JOIN": join})
        assert (trace / "job.iot").exists() == (join == "1")
        serial = work / "serial.json"
        subprocess.run(IOMODEL + ["analyze", trace, "-o", serial, "-q", "-j", "1"], check=True, timeout=120)
        out[(name, np_)] = (trace, serial.read_bytes())
    return out


@BOTH_MPIS
@pytest.mark.parametrize("processes", [2, 3])
def test_the_model_is_the_serial_one(case_traces, mpi, processes, tmp_path):
    for (name, np_), (trace, serial) in case_traces.items():
        out = tmp_path / f"{name}-{np_}.json"
        proc = analyze_under(mpi, processes, trace, out)
        assert proc.returncode == 0, proc.stderr
        assert out.read_bytes() == serial, (name, np_)
        # one analysis: processes each alone would each print and write the model
        assert proc.stdout.count("model written to") == 1


# the Python API, which takes any bound: 1 byte is a rank trace a piece
IN_PIECES = ("import sys\n"
             "from iomodel.analyzer import analyze\n"
             "from iomodel.models import save_model\n"
             "m = analyze(sys.argv[1], max_memory=1)\n"
             "m is None or save_model(m, sys.argv[2], check=False)\n")


@BOTH_MPIS
def test_in_pieces_the_model_is_the_serial_one(case_traces, mpi, tmp_path):
    """Under a bound no rank trace fits in, each of 2 processes reads its ranks
    one at a time, again in each pass (process 0's block too, beside the
    analysis): every case's model is the serial one, byte for byte."""
    env = {**os.environ, **mpi_env(mpi)}
    for (name, np_), (trace, serial) in case_traces.items():
        out = tmp_path / f"{name}-{np_}.json"
        proc = subprocess.run(mpirun(2, sys.executable, "-c", IN_PIECES, trace, out, mpi=mpi),
                              capture_output=True, text=True, timeout=180, env=env)
        assert proc.returncode == 0, proc.stderr
        assert out.read_bytes() == serial, (name, np_)


@pytest.fixture(scope="module")
def many_phases(build_dir, tmp_path_factory):
    """btio_like 6x8x8 points of 40 B, 600 steps, 3 ranks (a trace and its serial model)."""
    work = tmp_path_factory.mktemp("many-phases")
    (work / "data").mkdir()
    trace = work / "trace"
    subprocess.run(IOMODEL + ["trace", "-o", trace, "--", *mpirun(3, build_dir / "btio_like", work / "data",
                                                                   6, 8, 8, 600)],
                   check=True, capture_output=True, timeout=180, env={**os.environ, "IOMODEL_POSIX": "0"})
    serial = work / "serial.json"
    subprocess.run(IOMODEL + ["analyze", trace, "-o", serial, "-q", "-j", "1"], check=True, timeout=180)
    return trace, serial.read_bytes()


@BOTH_MPIS
def test_pieces_whose_messages_pass_the_eager_size(many_phases, mpi, tmp_path):
    """btio_like's 600 steps on 3 ranks are 601 phases, so that in pieces (a
    rank each: process 1 has 2) process 0's message to each piece that asks
    its computing before each phase (a time a phase, 4.8 KB) and the piece's
    answers pass Open MPI's eager size for shared memory (4 KiB): a send of
    either waits for the other side to receive.  No process waits for ever
    (the timeout; with blocking sends on both sides it did), and the model is
    the serial one."""
    trace, serial = many_phases
    assert len(json.loads(serial)["phases"]) == 601
    out = tmp_path / "m.json"
    proc = subprocess.run(mpirun(2, sys.executable, "-c", IN_PIECES, trace, out, mpi=mpi),
                          capture_output=True, text=True, timeout=180, env={**os.environ, **mpi_env(mpi)})
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == serial


@BOTH_MPIS
def test_a_damaged_share_is_the_serial_error_and_no_process_waits(case_traces, mpi, tmp_path):
    trace, _ = case_traces[("s3d_like", 4)]
    damaged = tmp_path / "trace"
    damaged.mkdir()
    data = bytearray((trace / "job.iot").read_bytes())
    for i in range(len(data) * 3 // 4, len(data) * 3 // 4 + 64):     # inside the last ranks' images
        data[i] ^= 0x5A
    (damaged / "job.iot").write_bytes(bytes(data))
    serial = subprocess.run(IOMODEL + ["analyze", damaged, "-o", tmp_path / "s.json", "-q", "-j", "1"],
                            capture_output=True, text=True, timeout=120)
    assert serial.returncode == 2 and f"{damaged}/job.iot (rank" in serial.stderr
    proc = analyze_under(mpi, 3, damaged, tmp_path / "m.json", "-q")  # timeout: a hang fails the test
    assert proc.returncode != 0
    said = [line for line in proc.stderr.splitlines() if line.startswith("iomodel: error:")]
    assert said == [serial.stderr.strip()]
    assert not (tmp_path / "m.json").exists()


def test_mpi4py_of_another_mpi_is_said(case_traces, tmp_path):
    trace, _ = case_traces[("btio_like", 4)]
    # Hydra starts 2 processes; mpi4py built for Open MPI sees each alone
    proc = subprocess.run(["mpiexec.mpich", "-n", "2", *IOMODEL, "analyze", trace, "-o", tmp_path / "m.json", "-q"],
                          capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert proc.returncode != 0
    said = [line for line in proc.stderr.splitlines() if line.startswith("iomodel:")]
    assert said == ["iomodel: error: analyze was started as one of 2 MPI processes, but mpi4py's MPI "
                    "(Open MPI v4.1.4) sees 1: run it under the launcher of mpi4py's MPI, or give mpi4py built "
                    "for this one (docs/mpi.md)"]          # process 0's alone
    assert not (tmp_path / "m.json").exists()


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    """The test logs as a facility's day: in 2026/12/, and one at the top."""
    d = tmp_path_factory.mktemp("logs")
    (d / "2026" / "12").mkdir(parents=True)
    for f in DARSHAN.glob("*.darshan"):
        shutil.copy(f, d / "2026" / "12" / f.name)
    shutil.copy(DARSHAN / "ior_posix_i2_e.darshan", d / "top.darshan")
    return d


def test_a_directory_of_darshan_logs_is_a_model_each_and_a_summary(log_dir, tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(IOMODEL + ["analyze", log_dir, "-o", out], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"7 of 9 logs modelled; models and summary.parquet in {out}\n"
    rows = {r["log"]: r for r in pq.read_table(out / "summary.parquet").to_pylist()}
    assert list(rows) == sorted(rows) and len(rows) == 9
    # ior -a MPIIO -c -s 2 -b 16k -t 4k -w -r on 2 ranks: 2 x 2 x 16 KiB written, then read
    r = rows["2026/12/ior_mpiio_e.darshan"]
    assert (r["model"], r["np"], r["phases"], r["weight_bytes"], r["operations"], r["access_types"]) == \
        ("2026-12-ior_mpiio_e.json", 2, 2, 2 * 2 * 2 * 16384, "read,write", "shared")
    # -F on 4 ranks: a file each, 4 x 2 x 16 KiB each way
    r = rows["2026/12/ior_posix_fpp_e.darshan"]
    assert (r["np"], r["phases"], r["weight_bytes"], r["access_types"]) == (4, 2, 2 * 4 * 2 * 16384, "unique")
    # -i 2: two repetitions of 2 x 16 KiB each way, four phases
    assert (rows["top.darshan"]["phases"], rows["top.darshan"]["weight_bytes"]) == (4, 2 * 2 * 2 * 16384)
    assert (out / "top.json").is_file() and (out / "2026-12-ior_mpiio_e.json").is_file()
    for bad in ("2026/12/excluded.darshan", "2026/12/rank0_writer_stdio.darshan"):
        assert rows[bad]["model"] is None and rows[bad]["error"].startswith(f"{log_dir / bad}: no I/O model")
        assert f"iomodel: note: no model: {log_dir / bad}: no I/O model" in proc.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted([r["model"] for r in rows.values() if r["model"]]
                                                            + ["summary.parquet"])


@BOTH_MPIS
def test_the_logs_spread_over_an_mpi_job_give_the_same(log_dir, mpi, tmp_path):
    serial = tmp_path / "serial"
    subprocess.run(IOMODEL + ["analyze", log_dir, "-o", serial, "-q"], check=True, timeout=300)
    out = tmp_path / "mpi"
    proc = analyze_under(mpi, 3, log_dir, out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("logs modelled") == 1
    assert pq.read_table(out / "summary.parquet").equals(pq.read_table(serial / "summary.parquet"))
    for f in serial.glob("*.json"):
        assert (out / f.name).read_bytes() == f.read_bytes()


def test_log_model_names_stay_unique(tmp_path):
    from iomodel.analyzer.log_batch import _names
    # a/b-c, a-b/c and a-b-c.0 all read a-b-c; each its own file, in path order
    assert _names(["a/b-c.darshan", "a-b/c.darshan", "a-b-c.1.darshan", "x.darshan"]) == {
        "a-b-c.1.darshan": "a-b-c.1.json", "a-b/c.darshan": "a-b-c.json", "a/b-c.darshan": "a-b-c.2.json",
        "x.darshan": "x.json"}


@BOTH_MPIS
def test_a_log_that_cannot_be_written_on_another_process_stops_no_one(log_dir, mpi, tmp_path):
    # every model's file made a directory: whichever process has a log, its write fails, and
    # every process still reaches the end
    out = tmp_path / "out"
    from iomodel.analyzer.log_batch import _names, logs_in
    for name in _names([str(p.relative_to(log_dir)) for p in logs_in(log_dir)]).values():
        (out / name).mkdir(parents=True)
    proc = analyze_under(mpi, 3, log_dir, out, "-q")          # timeout: a hang fails the test
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("iomodel: error:") == 1
    assert f"iomodel: error: {log_dir}: none of its 9 Darshan logs gave a model" in proc.stderr
    rows = pq.read_table(out / "summary.parquet").to_pylist()
    assert all(r["model"] is None and r["error"] for r in rows) and len(rows) == 9


@BOTH_MPIS
def test_one_log_under_a_launcher_is_process_0s_alone(mpi, tmp_path):
    out = tmp_path / "m.json"
    proc = analyze_under(mpi, 3, DARSHAN / "ior_mpiio_e.darshan", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("model written to") == 1
    serial = subprocess.run(IOMODEL + ["analyze", DARSHAN / "ior_mpiio_e.darshan", "-o", tmp_path / "s.json",
                                       "-q"], check=True, timeout=120)
    assert serial.returncode == 0 and out.read_bytes() == (tmp_path / "s.json").read_bytes()


def test_a_directory_of_neither_is_said(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "notes.txt").write_text("x")
    proc = subprocess.run(IOMODEL + ["analyze", tmp_path / "d"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == (f"iomodel: error: {tmp_path / 'd'}: neither a trace (no rank-*.iot, no job.iot) nor a "
                           f"directory of Darshan logs (no *.darshan in it or under it)\n")


@BOTH_MPIS
def test_a_crashing_log_reads_the_same_under_mpi(mpi, tmp_path):
    """A log whose reader crashes (8 bytes at 1500 inverted: libdarshan-util's
    SIGSEGV or SIGABRT): its row says what serially it says, not the MPI library's
    backtrace of the crash (the reader's child once inherited its handler)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    data = bytearray((DARSHAN / "ior_mpiio_e.darshan").read_bytes())
    data[1500:1508] = bytes(b ^ 0xFF for b in data[1500:1508])
    (logs / "crash.darshan").write_bytes(bytes(data))
    shutil.copy(DARSHAN / "posix_fpp.darshan", logs)
    serial = subprocess.run(IOMODEL + ["analyze", logs, "-o", tmp_path / "s", "-q"], capture_output=True,
                            text=True, timeout=120)
    # which signal it dies of is the library's undefined behaviour: SIGSEGV
    # here, SIGABRT (an assertion in darshan_log_close) on some runs
    assert serial.returncode == 0 and re.search(r"the reader crashed \(SIG(SEGV|ABRT)\)", serial.stderr), \
        serial.stderr
    proc = analyze_under(mpi, 2, logs, tmp_path / "m", "-q")
    assert proc.returncode == 0, proc.stderr
    got, want = (pq.read_table(tmp_path / d / "summary.parquet").to_pylist() for d in ("m", "s"))
    # which signal a damaged log's reader dies of is the library's undefined
    # behaviour, and differs in a child of an MPICH process (SIGABRT, an
    # assertion in darshan_log_close): the row says the crash, then the library's
    # own words, never the MPI library's backtrace
    crashed = re.compile(re.escape(f"{logs / 'crash.darshan'}: the Darshan log could not be read: the reader "
                                   "crashed (") + r"SIG(SEGV|ABRT)\) \(libdarshan-util said: Error: unable to inflate")
    for rows in (got, want):
        assert [r["log"] for r in rows] == ["crash.darshan", "posix_fpp.darshan"]
        assert crashed.match(rows[0]["error"]), rows[0]["error"]
        # the library's own words may name its MPIIO module; a backtrace may not appear
        assert not re.search(r"Process received signal|Backtrace|BAD TERMINATION|\[ *\d+\] ", rows[0]["error"])
    assert [{k: v for k, v in r.items() if k != "error"} for r in got] == \
        [{k: v for k, v in r.items() if k != "error"} for r in want]
    assert got[1] == want[1]
