"""The same POSIX run, traced by iomodel and logged by Darshan, gives the same
model but for what Darshan does not record (docs/commands/analyze.md, "POSIX
and stdio phases").

The Darshan logs are fixtures (tests/fixtures/darshan/, its README): Darshan
3.5.0 around the test programs with the arguments below.  The trace is made
here, by the real tracer under mpirun, of the same program with the same
arguments.  The two models' phases are compared field by field: the fields in
TIMES are not compared (two runs), those in TRACE_ONLY hold what DXT does not
record (the trace's value is checked, Darshan's is null or absent), and every
other field must be equal, but where a case names a difference of its own.
The Darshan model's phases are also checked against the values worked out
from each program."""
import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import IOMODEL

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "darshan"
HACC = [32] + [4000] * 7 + [8000, 2000]      # posix_fpp's header and 9 arrays at N = 1000

# wall-clock times: two different runs, not compared
TIMES = {"start_s", "end_s", "duration_s", "io_time_s", "bandwidth_Bps", "gap_s", "compute_s"}


def trace_only(t, d):
    """Take out of the trace's phase `t` and Darshan's `d` the fields DXT does
    not record, checking both sides' values."""
    # the routine: DXT keeps only read or write (pwrite and write look alike)
    assert d.pop("routine") is None and t.pop("routine") in ("pwrite", "pread", "write", "read")
    # the logical clock: no communication calls in a Darshan log (bursts cut by idle time)
    assert d.pop("logical_time") == {"first": None, "comm_between": None}
    assert t.pop("logical_time")["comm_between"] in (0, 1)    # rank0_writer: its gather, 1
    assert d.pop("gap_comm") is None and t.pop("gap_comm") >= 0
    # the buffers' place in memory: absent from Darshan's (the trace's is absent where
    # the lowest rank's buffers sat at different places: posix_fpp's arrays)
    assert "buffer_offset" not in d
    t.pop("buffer_offset", None)
    # rereads need the opens: DXT has none.  Each program reopens its file to read it
    # back, so no read is through the open that wrote: 0
    assert "reread_bytes" not in d
    if t["operation"] == "read":
        assert t.pop("reread_bytes") == 0


def phases_of(model):
    return [{k: v for k, v in p.items() if k not in TIMES} for p in model["phases"]]


def facts(model):
    return [(p["operation"], p["np"], p["ranks"], p["request_sizes"], p["rep"], p["weight"],
             p["access_mode"], p.get("synced")) for p in model["phases"]]


def analyze(path, tmp_path, name):
    out = tmp_path / f"{name}.json"
    proc = subprocess.run(IOMODEL + ["analyze", str(path), "-o", str(out), "-q"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def base(name):
    return os.path.basename(name)


W, R = "write", "read"
# (fixture, program, np, arguments after the data folder, the Darshan model's phases as
# facts(), the phase fields a case lets differ: {(phase id, field): (trace's, Darshan's)})
RUNS = [
    # IOR -a POSIX -e -s 2 -b 16k -t 4k on 4 ranks, one file: rank r's transfer j of
    # segment i at i*64K + r*16K + j*4K, 8 of 4 KiB a rank, fsync, close; then the same
    # read back.  Strided (a jump of 48 KiB between segments).  Every rank synced.
    ("ior_posix_shared_e", "ior_cmd", 4, "-a POSIX -e -s 2 -b 16k -t 4k -w -r",
     [(W, 4, "0-3", [4096], 8, 4 * 8 * 4096, "strided", True),
      (R, 4, "0-3", [4096], 8, 4 * 8 * 4096, "strided", None)], {}),
    # the same with -F: a file each, its 2 segments one after the other: sequential
    ("ior_posix_fpp_e", "ior_cmd", 4, "-a POSIX -F -e -s 2 -b 16k -t 4k -w -r",
     [(W, 4, "0-3", [4096], 8, 4 * 8 * 4096, "sequential", True),
      (R, 4, "0-3", [4096], 8, 4 * 8 * 4096, "sequential", None)], {}),
    # -i 2: write, fsync, read, twice, 4 transfers of 4 KiB a rank each time.  The trace
    # sees each fsync after its write phase; Darshan counts 4 fsyncs on the file and
    # cannot tell which phase each followed, so it marks neither (and says so)
    ("ior_posix_i2_e", "ior_cmd", 2, "-a POSIX -e -i 2 -s 1 -b 16k -t 4k -w -r",
     [(op, 2, "0-1", [4096], 4, 2 * 4 * 4096, "sequential", None) for op in (W, R, W, R)],
     {(1, "synced"): (True, None), (3, "synced"): (True, None)}),
    # HACC-IO-like: each of 2 ranks pwrites a header and 9 arrays to its own file, fsyncs,
    # then preads the arrays back
    ("posix_fpp", "posix_fpp", 2, "1000",
     [(W, 2, "0-1", HACC, 1, 2 * sum(HACC), "sequential", True),
      (R, 2, "0-1", HACC[1:], 1, 2 * sum(HACC[1:]), "sequential", None)], {}),
    # POP-like: rank 0 alone writes a 64 B header and 4 x 1000 doubles to each of 3 files
    # (the offsets start again in each: strided), then reads the last back
    ("rank0_writer_posix", "rank0_writer", 4, "1000 3 posix",
     [(W, 1, "0", [64, 32000], 3, 3 * 32064, "strided", None),
      (R, 1, "0", [64, 32000], 1, 32064, "sequential", None)], {}),
]


@pytest.mark.parametrize("fixture,program,np_,args,want,differ", RUNS, ids=[r[0] for r in RUNS])
def test_a_trace_and_a_darshan_log_of_one_run_give_one_model(traced, tmp_path, fixture, program,
                                                             np_, args, want, differ):
    run = traced(program, np_, *args.split(), posix=True)
    tm = analyze(run.trace_dir, tmp_path, "trace")
    dm = analyze(FIXTURES / f"{fixture}.darshan", tmp_path, "darshan")
    assert facts(dm) == want
    tp, dp = phases_of(tm), phases_of(dm)
    assert len(tp) == len(dp)
    for t, d in zip(tp, dp):
        trace_only(t, d)
        for (pid, field), (tv, dv) in differ.items():
            if t["id"] == pid:
                assert (t.pop(field, None), d.pop(field, None)) == (tv, dv)
        assert t == d
    # the whole model: the same files (in other folders), sizes, runs of phases, order
    assert [(base(f["name"]), [base(p) for p in f["paths"]]) for f in tm["files"]] == \
        [(base(f["name"]), [base(p) for p in f["paths"]]) for f in dm["files"]]
    for tf, df in zip(tm["files"], dm["files"]):
        assert {k: v for k, v in tf.items() if k not in ("name", "paths")} == \
            {k: v for k, v in df.items() if k not in ("name", "paths")}
    for k in ("weight", "storage_capacity", "runs", "order"):
        assert tm[k] == dm[k], k
    ta, da = tm["application"], dm["application"]
    assert (ta["name"], ta["np"]) == (da["name"], da["np"]) == (program, np_)
    # hosts: the trace's are this machine's; DXT names a host only for the ranks that
    # did I/O (rank0_writer: rank 0 alone)
    assert sum(ta["hosts"].values()) == np_
    assert da["hosts"] == ({"vm": 1, "unknown": 3} if program == "rank0_writer" else {"vm": np_})
    # features: which pointer, blocking or not, need the routine; a POSIX call is independent
    unknown = ("explicit_offsets", "individual_pointers", "shared_pointers", "blocking", "nonblocking")
    assert all(da["features"][k] is None and ta["features"][k] is not None for k in unknown)
    assert (ta["features"]["collective"], ta["features"]["independent"]) == \
        (da["features"]["collective"], da["features"]["independent"]) == (False, True)


def test_a_stdio_run_has_a_model_from_its_trace_only(traced, tmp_path):
    """rank0_writer through stdio: its trace gives rank 0's fwrite and fread
    phases; Darshan's DXT traces no stdio, so its log of the same run gives no
    model and the refusal says why (tests/test_darshan.py has its words)."""
    tm = analyze(traced("rank0_writer", 4, "1000", "3", posix=True).trace_dir, tmp_path, "trace")
    assert [(p["interface"], p["routine"], p["operation"], p["weight"]) for p in tm["phases"]] == \
        [("STDIO", "fwrite", W, 3 * 32064), ("STDIO", "fread", R, 32064)]
    log = FIXTURES / "rank0_writer_stdio.darshan"
    proc = subprocess.run(IOMODEL + ["analyze", str(log), "-o", str(tmp_path / "d.json")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and not (tmp_path / "d.json").exists()
    assert proc.stderr.startswith(f"iomodel: error: {log}: no I/O model can be made from this Darshan "
                                  f"log: it holds only STDIO records (3 files: 96192 bytes written, "
                                  f"32064 bytes read), and Darshan's DXT traces the operations of "
                                  f"POSIX and MPI-IO only")
