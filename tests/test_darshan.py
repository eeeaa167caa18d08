"""Darshan logs with DXT as analyzer input (analyzer/darshan.py), on real logs:
the public samples in ../shared/fixtures/darshan/ (see its README; skipped where
that folder is absent), the logs the PyDarshan wheel ships, and logs of our own
test programs made with Darshan 3.5.0 (tests/fixtures/darshan/, see its README).
Expected values follow from what each run did."""
import json
import multiprocessing
import resource
import signal
import struct
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import darshan
import darshan.log_utils
from iomodel.analyzer import darshan as darshan_input
from iomodel.analyzer.darshan import DarshanInputError, _collective, _posix_offsets, ops_from_darshan
from iomodel.analyzer.ops import OPS_SCHEMA

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import fuzzing  # noqa: E402  the fuzz harness's editing of Darshan logs (regions inflated, header made good)

SHARED = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "darshan"
LOCAL = Path(__file__).resolve().parent / "fixtures" / "darshan"
MPI_TEST = "mpi-io-test-x86_64-3.1.6.darshan"
TREDDY = "treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
# the public samples of ../shared/fixtures/darshan
SHARED_LOGS = sorted(["hdf5_diagonal_write_bytes_range_dxt.darshan", MPI_TEST,
                      "nonmpi_dxt_anonymized.darshan", "partial_data_dxt.darshan", TREDDY])
# ours with DXT (tests/fixtures/darshan/README.md); the other two have none
LOCAL_DXT_LOGS = ["ior_mpiio_e.darshan", "ior_posix_fpp_e.darshan", "ior_posix_i2_e.darshan",
                  "ior_posix_shared_e.darshan", "posix_fpp.darshan", "rank0_writer_posix.darshan"]
# the PyDarshan wheel's logs that have DXT (its others have none; one is used below)
WHEEL_DXT_LOGS = ["ior_hdf5_example.darshan", "sample-dxt-simple.darshan", "dxt.darshan"]
KiB, MiB = 1024, 1024 * 1024


def log_path(name):
    if (LOCAL / name).exists():
        return LOCAL / name
    if name in SHARED_LOGS:
        if not SHARED.is_dir():
            pytest.skip(f"{SHARED} is absent: the public sample Darshan logs are not here")
        return SHARED / name
    return Path(darshan.log_utils.get_log_path(name))


@lru_cache(maxsize=None)
def ops_of(name):
    return ops_from_darshan(log_path(name))


def rows(ops):
    return ops.table.to_pylist()


def by_rank(ops):
    out = {}
    for r in rows(ops):
        out.setdefault(r["rank"], []).append(r)
    return out


OWN_POSIX = ("the log has no MPI-IO record: every operation is a POSIX call of the application's "
             "own, so independent, through an open of its process's own (comm_size 1)")


def test_the_fixture_logs_are_there():
    assert sorted(p.name for p in LOCAL.glob("*.darshan")) == sorted(
        LOCAL_DXT_LOGS + ["excluded.darshan", "rank0_writer_stdio.darshan"])
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: the public sample Darshan logs are not here")
    assert sorted(p.name for p in SHARED.glob("*.darshan")) == SHARED_LOGS


@pytest.mark.parametrize("name", SHARED_LOGS + WHEEL_DXT_LOGS + LOCAL_DXT_LOGS)
def test_every_dxt_log_gives_a_well_formed_ops(name):
    ops = ops_of(name)
    t = ops.table
    assert t.schema == OPS_SCHEMA
    assert t.num_rows > 0
    r = {c: t[c].to_pylist() for c in t.column_names}
    # what Darshan does not record
    for c in ("routine", "pointer", "nonblocking"):
        assert t[c].null_count == t.num_rows, c
    # collective: from the MPI-IO counters of DXT_MPIIO's files, which in these logs
    # count independent reads and writes only (mpi-io-test, IOR's defaults), but for
    # ior_mpiio_e's, collective only (IOR's -c)
    coll = r["collective"]
    if ops.source["module"] == "DXT_MPIIO":
        assert set(coll) == ({True} if name == "ior_mpiio_e.darshan" else {False})
        assert any(s.startswith(f"whether an operation was collective, for {len(coll)} of {len(coll)} operations")
                   for s in ops.source["inferred"])
    else:
        # the DXT_POSIX logs here have no MPI-IO record: POSIX programs, whose calls
        # are each independent, through an open of the process's own
        assert set(coll) == {False} and set(r["comm_size"]) == {1}
        assert OWN_POSIX in ops.source["inferred"]
        assert not any("collective" in s for s in ops.source["unavailable"])
    assert set(r["lclock"]) == {-1}
    assert ops.final_lclock is None
    # sorted by rank, then start time
    keys = list(zip(r["rank"], r["t_start"]))
    assert keys == sorted(keys)
    assert all(0 <= k < ops.np for k in r["rank"])
    for off, end, size, pieces in zip(r["offset"], r["end"], r["bytes"], r["pieces"]):
        assert (off, end, pieces) == ((off, off + size, 1) if off >= 0 else (-1, -1, 0))
    assert all(0 <= a <= b <= ops.run_time_s for a, b in zip(r["t_start"], r["t_end"]))
    assert set(r["comm_size"]) <= {1, -1}
    # hosts: every rank counted once, each value >= 1 as the model schema wants
    assert sum(ops.hosts.values()) == ops.np and min(ops.hosts.values()) >= 1
    src = ops.source
    assert src["kind"] == "darshan" and src["path"] == str(log_path(name))
    assert src["module"] in ("DXT_MPIIO", "DXT_POSIX")
    assert src["inferred"][0].startswith(f"operations from Darshan's {src['module']} trace")
    for must in ("the MPI routine of each operation",
                 "the logical clock (communication between operations): bursts are split by "
                 "idle time"):
        assert must in src["unavailable"]


def test_ior_hdf5_example():
    # IOR run as `ior -a HDF5 -o test123.h5` on 4 ranks (Cray MPICH: DXT_MPIIO has real
    # offsets).  IOR's defaults: block size (-b) 1 MiB, transfer size (-t) 256 KiB, one
    # segment (-s 1), one shared file, write then read back.  So each rank writes its own
    # 1 MiB block as 4 transfers of 256 KiB, rank r's block following rank r-1's, and later
    # reads the same 4 pieces back.  HDF5 puts its metadata (superblock, object headers) at
    # the start of the file and the dataset's contiguous data after it, at file address
    # 2048: rank r's k-th transfer is at 2048 + r * 1 MiB + k * 256 KiB.  Every other
    # operation is HDF5 metadata, all below 2048.
    ops = ops_of("ior_hdf5_example.darshan")
    assert ops.source["module"] == "DXT_MPIIO"
    assert (ops.name, ops.np, ops.hosts, ops.run_time_s) == ("ior", 4, {"nid00097": 4}, 1.0)
    assert ops.command == ["/global/u2/s/ssnyder/software/ior/build/src/ior", "-a", "HDF5",
                           "-o", "/global/cscratch1/sd/ssnyder/test123.h5"]
    per_rank = by_rank(ops)
    # rank 0 also writes the superblock and reads it first: more metadata operations
    assert {r: len(v) for r, v in per_rank.items()} == {0: 19, 1: 14, 2: 13, 3: 13}
    for rank, ops_r in per_rank.items():
        assert {o["path"] for o in ops_r} == {"/global/cscratch1/sd/ssnyder/test123.h5"}
        data = [2048 + rank * MiB + k * 256 * KiB for k in range(4)]
        writes = [o for o in ops_r if o["write"]]
        reads = [o for o in ops_r if not o["write"]]
        # the data writes come first, then the metadata is flushed at close
        assert [(o["offset"], o["bytes"]) for o in writes[:4]] == [(d, 256 * KiB) for d in data]
        # the reads open the file (metadata), then read the data back
        assert [(o["offset"], o["bytes"]) for o in reads[-4:]] == [(d, 256 * KiB) for d in data]
        assert all(o["end"] <= 2048 for o in writes[4:] + reads[:-4])
        assert all(o["comm_size"] == -1 for o in ops_r)    # 4 ranks share the file
    t = rows(ops)
    # metadata written: rank 0 40 + 96 + 96, rank 1 544 + 120, rank 2 272, rank 3 328
    assert sum(o["bytes"] for o in t if o["write"]) == 4 * MiB + 232 + 664 + 272 + 328
    assert sum(o["bytes"] for o in t if not o["write"]) == 4 * MiB + 2512 + 3 * 1896


def test_mpi_io_test_open_mpi_offsets_come_from_posix():
    # mpi-io-test with its defaults on 4 ranks: one 16 MiB block per rank at rank * 16 MiB
    # (MPI_File_seek + MPI_File_write on MPI_COMM_SELF), then read back the same way.
    # Darshan 3.1.6 writes -1 for every DXT_MPIIO offset; the POSIX write/read of the same
    # rank inside the MPI call has the offset.
    ops = ops_of(MPI_TEST)
    assert ops.source["module"] == "DXT_MPIIO"
    assert (ops.name, ops.np, ops.hosts) == ("mpi-io-test", 4, {"shane-thinkpad": 4})
    assert any(s.startswith("file offsets of 8 of 8 operations from DXT_POSIX")
               for s in ops.source["inferred"])
    assert not any("file offset" in s for s in ops.source["unavailable"])
    for rank, ops_r in by_rank(ops).items():
        assert [(o["write"], o["offset"], o["end"], o["bytes"], o["pieces"]) for o in ops_r] == \
            [(w, rank * 16 * MiB, (rank + 1) * 16 * MiB, 16 * MiB, 1) for w in (True, False)]
    # the times stay the MPI call's (DXT_MPIIO), not the POSIX write's inside it
    w0 = by_rank(ops)[0][0]
    assert w0["t_start"] == pytest.approx(0.000799, abs=1e-6)
    assert w0["t_end"] == pytest.approx(0.010999, abs=1e-6)


def test_posix_offsets_only_when_posix_matches_the_call():
    def seg(rank, offset, length, t0, t1, write=True, rec=7):
        return {"rank": np.array(rank), "id": np.full(len(rank), rec, np.uint64),
                "write": np.full(len(rank), write), "offset": np.array(offset),
                "length": np.array(length), "t_start": np.array(t0), "t_end": np.array(t1)}
    # four MPI writes of rank 0, offsets unknown
    mpi = seg([0, 0, 0, 0], [-1] * 4, [100, 100, 100, 100], [1.0, 2.0, 3.0, 4.0],
              [1.5, 2.5, 3.5, 4.5])
    posix = seg([0, 0, 0, 0, 0], [500, 0, 50, 1000, 3000], [100, 50, 50, 200, 100],
                [1.1, 2.1, 2.2, 3.1, 4.6], [1.2, 2.15, 2.3, 3.2, 4.7])
    # 1: one POSIX write of the same length; 2: two contiguous pieces make up the call;
    # 3: POSIX moved 200 bytes (another rank's data too: collective buffering): unknown;
    # 4: the only POSIX write is after the call: unknown
    assert _posix_offsets(mpi, posix).tolist() == [500, 0, -1, -1]
    # another rank's or another file's POSIX writes never match
    assert _posix_offsets(mpi, seg([1], [500], [100], [1.1], [1.2])).tolist() == [-1] * 4
    assert _posix_offsets(mpi, seg([0], [500], [100], [1.1], [1.2], rec=8)).tolist() == [-1] * 4
    reads = seg([0], [500], [100], [1.1], [1.2], write=False)
    assert _posix_offsets(mpi, reads).tolist() == [-1] * 4


def test_treddy_mpi_io_test_32_ranks_4_iterations():
    # mpi-io-test -i 4 on 32 ranks: in iteration j rank r writes 16 MiB at
    # (j * 32 + r) * 16 MiB; then reads them back the same way.  2 GiB each way.
    ops = ops_of(TREDDY)
    assert ops.source["module"] == "DXT_MPIIO"
    assert (ops.np, ops.hosts, ops.run_time_s) == (32, {"sn362.localdomain": 32}, 14.0)
    assert ops.command == ["mpi-io-test", "-i", "4", "-v"]
    # Open MPI's shared-file-pointer files (*.sm), written through POSIX only, are left out
    assert "32 file(s) accessed only through POSIX (not MPI-IO) are left out" in \
        ops.source["inferred"]
    per_rank = by_rank(ops)
    assert sorted(per_rank) == list(range(32))
    for rank, ops_r in per_rank.items():
        blocks = [(j * 32 + rank) * 16 * MiB for j in range(4)]
        assert [(o["write"], o["offset"], o["bytes"]) for o in ops_r] == \
            [(True, b, 16 * MiB) for b in blocks] + [(False, b, 16 * MiB) for b in blocks]
    t = rows(ops)
    assert {o["path"] for o in t} == {"/yellow/users/treddy/mpi_io_rough_work/test.out"}
    assert sum(o["bytes"] for o in t if o["write"]) == 2 * 1024 * MiB
    assert sum(o["bytes"] for o in t if not o["write"]) == 2 * 1024 * MiB
    assert {o["comm_size"] for o in t} == {-1}


def test_partial_dxt_is_said_incomplete():
    # mpi-io-test -S -b 1 -r -i 1000000 on 1 rank: a million 1-byte reads at offset 0;
    # DXT_MPIIO's memory filled up after 65529 of them
    ops = ops_of("partial_data_dxt.darshan")
    t = rows(ops)
    assert ops.np == 1 and len(t) == 65529
    assert {(o["write"], o["offset"], o["bytes"], o["comm_size"]) for o in t} == {(False, 0, 1, 1)}
    assert any("incomplete" in s and "65529" in s and "1000000" in s
               for s in ops.source["unavailable"])


def test_non_mpi_log_uses_dxt_posix():
    ops = ops_of("nonmpi_dxt_anonymized.darshan")
    assert ops.source["module"] == "DXT_POSIX"
    t = rows(ops)
    assert (ops.name, ops.np, ops.hosts) == ("2032579916", 1, {"hepd-0004": 1})  # anonymized exe
    assert len(t) == 17652 and len({o["path"] for o in t}) == 75
    assert {o["comm_size"] for o in t} == {1}     # one process: every file is its own


def test_hdf5_diagonal_one_file_per_rank():
    # an h5py script on 10 ranks: rank i writes test_i.h5 (superblock, then 10 * (i + 1)
    # data bytes at HDF5's data address 2048, then metadata, then the superblock again);
    # every rank also reads the same 20 .pyc files twice each (import, then EOF)
    ops = ops_of("hdf5_diagonal_write_bytes_range_dxt.darshan")
    assert ops.source["module"] == "DXT_POSIX"
    assert (ops.np, ops.hosts, ops.name) == (10, {"sn324.localdomain": 10}, "python")
    t = rows(ops)
    assert len(t) == 440
    for rank, ops_r in by_rank(ops).items():
        h5 = [o for o in ops_r if o["path"].endswith(".h5")]
        assert {o["path"].rsplit("/", 1)[1] for o in h5} == {f"test_{rank}.h5"}
        assert [(o["write"], o["offset"], o["bytes"]) for o in h5] == \
            [(True, 0, 96), (True, 2048, 10 * (rank + 1)), (True, 0, 1400), (True, 0, 96)]
        pyc = [o for o in ops_r if o["path"].endswith(".pyc")]
        assert len(pyc) == 40 and not any(o["write"] for o in pyc)
        # no MPI-IO: each rank opened every file through POSIX, on its own
        assert {o["comm_size"] for o in h5 + pyc} == {1}
    assert OWN_POSIX in ops.source["inferred"]


def test_one_rank_on_a_collectively_opened_file_is_not_comm_size_1():
    # 16 ranks open test.out collectively (the MPI-IO counters say so), rank 0 alone writes
    ops = ops_of("sample-dxt-simple.darshan")
    assert [(o["rank"], o["write"], o["offset"], o["bytes"], o["comm_size"]) for o in rows(ops)] \
        == [(0, True, 0, 4000, -1)]
    # DXT gives the host of rank 0 only
    assert ops.hosts == {"sn176.localdomain": 1, "unknown": 15}
    assert any("host of 15 of 16 ranks" in s for s in ops.source["unavailable"])


def test_log_with_empty_exe_is_named_after_the_log():
    ops = ops_of("dxt.darshan")
    assert (ops.name, ops.command) == ("dxt", [])
    assert "the command line (the log's is empty)" in ops.source["unavailable"]


def dxt_posix_calls(path):
    """A log's DXT_POSIX segments read with PyDarshan, in order of start (then
    end), as (start, end, write, bytes, path) tuples: darshan-dxt-parser's view."""
    report = darshan.DarshanReport(str(path), read_all=False, dtype="dict")
    report.mod_read_all_dxt_records("DXT_POSIX", dtype="dict", warnings=False)
    calls = []
    for rec in report.records["DXT_POSIX"]:
        assert rec["rank"] == 0
        name = report.name_records[rec["id"]]
        for write, key in ((True, "write_segments"), (False, "read_segments")):
            calls += [(s["start_time"], s["end_time"], write, s["length"], name) for s in rec[key]]
    return sorted(calls)


def test_dxt_darshan_whose_calls_overlap_gives_its_phases(tmp_path):
    """The wheel's dxt.darshan: one process (a Java COMPSs worker), 7623 POSIX
    reads and writes in DXT on 169 files.  Some of its calls overlap in time
    (its threads): phase 282's two 5-byte reads, of two pipes, from
    1466.6126778 s to 1466.6126819 s and from 1466.6126790 s to 1466.6126828 s,
    1.19 us together; their span less their durations was -2.9e-06 s, a
    compute_s the model refused.  The phases are worked out here from the
    log's own records: with one process every phase is one burst, so the
    phases, in order, take the calls in order of start, each a run on one of
    the model's file groups with one operation whose idle times (a start less
    the end before) are at most the threshold, and the next phase starts on
    another group or operation, or after a longer idle time.  Each phase's
    numbers follow from its run: sizes, weight, start, end, time in its calls
    (their durations' sum), and compute_s, the time within its span when none
    of its calls was in progress, 0 for phase 282."""
    log = log_path("dxt.darshan")
    calls = dxt_posix_calls(log)
    assert len(calls) == 7623 and len({c[4] for c in calls}) == 169
    proc, out = analyze_cli(log, tmp_path)
    assert proc.returncode == 0, proc.stderr
    m = json.loads(out.read_text())
    idle_max = m["analysis"]["max_idle_s"]
    assert (idle_max, m["application"]["np"]) == (0.1, 1)
    at = 0
    for p in m["phases"]:
        n = p["rep"] * p["iop"]
        run = calls[at:at + n]
        paths = set(m["files"][p["file"]]["paths"])
        assert all(c[4] in paths and c[2] == (p["operation"] == "write") for c in run), p["id"]
        assert [c[3] for c in run] == p["request_sizes"] * p["rep"]
        assert p["weight"] == sum(c[3] for c in run)
        assert all(max(b[0] - a[1], 0) <= idle_max for a, b in zip(run, run[1:]))
        if at + n < len(calls):            # what ends the burst
            nxt = calls[at + n]
            assert nxt[4] not in paths or nxt[2] != run[-1][2] or nxt[0] - run[-1][1] > idle_max
        assert (p["start_s"], p["end_s"]) == (run[0][0], max(c[1] for c in run))
        assert p["io_time_s"] == pytest.approx(sum(c[1] - c[0] for c in run), rel=1e-9, abs=1e-12)
        idle, last = 0.0, run[0][1]
        for c in run[1:]:
            idle, last = idle + max(0.0, c[0] - last), max(last, c[1])
        assert p["compute_s"] == pytest.approx(idle, rel=1e-9, abs=1e-12) and p["compute_s"] >= 0
        at += n
    assert at == len(calls)
    p = m["phases"][281]
    assert (p["id"], p["operation"], p["rep"], p["weight"], p["compute_s"]) == (282, "read", 2, 10, 0.0)
    assert p["io_time_s"] > p["duration_s"]        # the reads overlap


def refusal(path):
    """What ops_from_darshan says of a log it refuses, after the file and the words every
    such message starts with."""
    with pytest.raises(DarshanInputError) as e:
        ops_from_darshan(path)
    assert isinstance(e.value, ValueError)
    head = f"{path}: no I/O model can be made from this Darshan log: "
    assert str(e.value).startswith(head)
    return str(e.value)[len(head):]


def test_log_without_dxt_says_how_to_enable_it():
    # no fixture log lacks DXT; the wheel's sample-goodost.darshan (IOR on 48 ranks, a file
    # each: 48 POSIX records) does
    msg = refusal(Path(darshan.log_utils.get_log_path("sample-goodost.darshan")))
    assert msg.startswith("it holds POSIX counters (48 files) but no DXT trace of the operations, "
                          "which the model needs. Darshan traces individual operations only with "
                          "DXT enabled")
    assert "export DXT_ENABLE_IO_TRACE=1" in msg
    assert "DARSHAN_CONFIG_PATH" in msg and "MOD_ENABLE DXT_POSIX,DXT_MPIIO" in msg


DXT_ONLY_POSIX_MPIIO = ("and Darshan's DXT traces the operations of POSIX and MPI-IO only: the other "
                        "modules keep per-file counters, not the operations an I/O model is made of "
                        "(`iomodel trace` records stdio calls)")


def test_a_stdio_log_says_what_it_holds_and_why_no_model():
    """rank0_writer through stdio on 4 ranks, DXT on: rank 0 writes 3 files of a
    64 B header and 1000 doubles from each of 4 ranks (32064 B each, 96192 B in
    all), then reads the last back (32064 B).  Darshan's STDIO module counts
    them; DXT traces none (it traces POSIX and MPI-IO only), so the log has no
    DXT module, and DXT was on: the message must not say to turn it on."""
    assert refusal(log_path("rank0_writer_stdio.darshan")) == (
        f"it holds only STDIO records (3 files: 96192 bytes written, 32064 bytes read), "
        f"{DXT_ONLY_POSIX_MPIIO}")
    # the wheel's noposix.darshan: Darshan's POSIX module off; STDIO (2 records, reduced
    # over its 512 ranks) and Lustre's layout of 519 files
    assert refusal(Path(darshan.log_utils.get_log_path("noposix.darshan"))) == (
        f"it holds only LUSTRE records (519 files) and STDIO records (2 files: 29562779 bytes "
        f"written, 1812408359 bytes read), {DXT_ONLY_POSIX_MPIIO}")


def test_a_log_without_any_record_says_so():
    """ior_cmd on 2 ranks with its folder in DARSHAN_EXCLUDE_DIRS: Darshan
    followed no file, the log has no module at all."""
    assert refusal(log_path("excluded.darshan")) == (
        "it holds no record of any file (the run read and wrote no file Darshan follows: it leaves "
        "out /etc, /dev, /usr, /proc, /sys and the like, and the directories DARSHAN_EXCLUDE_DIRS "
        "names)")


@pytest.mark.parametrize("name", ["rank0_writer_stdio.darshan", "excluded.darshan"])
def test_analyze_refuses_a_log_without_dxt_in_one_line(tmp_path, name):
    out = tmp_path / "m.json"
    proc = subprocess.run([sys.executable, "-m", "iomodel", "analyze", str(log_path(name)), "-o",
                           str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == "" and not out.exists()
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"iomodel: error: {log_path(name)}: no I/O model can be made "
                                  f"from this Darshan log: it holds ")


def test_not_a_darshan_log(tmp_path):
    for name, content in (("notes.darshan", b"hello, not a log\n" * 10), ("empty.darshan", b"")):
        p = tmp_path / name
        p.write_bytes(content)
        with pytest.raises(DarshanInputError, match=f"^{p}: not a Darshan log"):
            ops_from_darshan(p)
    with pytest.raises(FileNotFoundError, match="no-such.darshan"):
        ops_from_darshan(tmp_path / "no-such.darshan")


def test_truncated_log_is_an_error_not_a_crash(tmp_path):
    # libdarshan-util crashes reading the names of a log cut short: checked before
    data = log_path("ior_hdf5_example.darshan").read_bytes()
    for n in (1000, len(data) // 2, len(data) - 1):
        p = tmp_path / f"cut{n}.darshan"
        p.write_bytes(data[:n])
        with pytest.raises(DarshanInputError, match=f"^{p}: "):
            ops_from_darshan(p)
    # a log of format 3.41 (Darshan 3.4 and later: a 64-bit partial flag moves the map
    # 8 bytes on) cut in its last region (HEATMAP, 3087 + 126 bytes) or in its header
    # (1328 bytes: 32, the map of the names and 64 modules, 16 bytes each, 64 versions)
    data = log_path("ior_mpiio_e.darshan").read_bytes()
    for n, need in ((3100, 3213), (1000, 1328)):
        p = tmp_path / f"cut{n}.darshan"
        p.write_bytes(data[:n])
        with pytest.raises(DarshanInputError) as e:
            ops_from_darshan(p)
        assert str(e.value) == f"{p}: truncated Darshan log ({n} bytes, its header describes {need})"


def edited(data, region, edit):
    """The Darshan log `data` with one region ("job", "names", "module N")
    inflated, changed by edit(bytearray) and deflated again, the header's map
    made good: damage zlib's checksum cannot see."""
    size, _, regions = fuzzing.darshan_layout(data)
    name, off, length, _ = next(r for r in regions if r[0] == region)
    raw = bytearray(fuzzing.inflate(data[off:off + length]))
    edit(raw)
    return fuzzing.join_darshan(data, size, regions, {name: bytes(raw)})


def analyze_cli(log, tmp_path):
    out = tmp_path / "m.json"
    proc = subprocess.run([sys.executable, "-m", "iomodel", "analyze", str(log), "-o", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    return proc, out


CRASHES = (signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS)
# PyDarshan reading a log's DXT records, as iomodel did in its own process
READ_IN_PYDARSHAN = """import sys, darshan
r = darshan.DarshanReport(sys.argv[1], read_all=False, dtype="dict")
for mod in ("DXT_MPIIO", "DXT_POSIX"):
    r.mod_read_all_dxt_records(mod, dtype="dict", warnings=False)
"""


@pytest.mark.parametrize("at", [0, 2])
def test_a_log_that_kills_libdarshan_util_is_one_error_naming_it(tmp_path, at):
    """ior_mpiio_e.darshan with one byte of its name records' compressed
    region inverted (byte 0, the zlib header, or byte 2, the first of the
    data).  libdarshan-util cannot read the names: a process that reads the
    log's DXT records with PyDarshan is killed by a signal, in the library
    (SIGSEGV) or at an assertion when it closes the log (SIGABRT), as iomodel
    analyze was, after its own message.  Now the reader's process dies of it, alone:
    iomodel says so in one line naming the file and the signal, exit code 2,
    and writes no model."""
    data = bytearray(log_path("ior_mpiio_e.darshan").read_bytes())
    _, _, regions = fuzzing.darshan_layout(bytes(data))
    names = next(r for r in regions if r[0] == "names")
    assert names[1:3] == [1528, 293]
    data[names[1] + at] ^= 0xFF
    bad = tmp_path / "bad.darshan"
    bad.write_bytes(data)
    # libdarshan-util may print a name of garbage bytes: not UTF-8
    plain = subprocess.run([sys.executable, "-c", READ_IN_PYDARSHAN, str(bad)], capture_output=True,
                           encoding="utf-8", errors="replace", timeout=120)
    assert signal.Signals(-plain.returncode) in CRASHES, plain
    proc, out = analyze_cli(bad, tmp_path)
    assert (proc.returncode, proc.stdout, out.exists()) == (2, "", False)
    assert proc.stderr.count("\n") == 1
    # the signal is the reader's, which reads more of the log (counters) than the
    # few lines above: not always the same
    head = f"iomodel: error: {bad}: the Darshan log could not be read: the reader crashed ("
    assert proc.stderr.startswith(head)
    assert signal.Signals[proc.stderr[len(head):].split(")")[0]] in CRASHES
    assert proc.stderr.endswith("): is it damaged?\n") and "(libdarshan-util said: " in proc.stderr


# (region, what to find in it, the byte of it made 0xFF, what the message calls it)
NOT_UTF8 = [("names", b"/tmp/iomodel-darshan/ior_mpiio_e/ior.dat\0", 5, "a file's name"),
            ("job", b"/tmp/darshan77/bin/ior_cmd ", 1, "the command line"),
            ("job", b"lib_ver=3.5.0\n", 0, "the job's metadata"),
            ("job", b"devtmpfs\t/dev\n", 2, "the mount table"),
            ("module 11", b"vm\0", 0, "the host name of a DXT record")]


@pytest.mark.parametrize("region, text, at, what", NOT_UTF8, ids=[x[3] for x in NOT_UTF8])
def test_a_string_of_the_log_not_utf8_is_refused_naming_the_file(tmp_path, region, text, at, what):
    """ior_mpiio_e.darshan with one byte of a string made 0xFF (never in UTF-8)
    and its region deflated again: a file's name (the name records), the
    command line, the job's metadata and the mount table (the job's region:
    the metadata "lib_ver=3.5.0\\n...", then the command line and the mounts,
    "devtmpfs\\t/dev\\n..."), rank 0's host name in its DXT_MPIIO record (module
    11, at byte 24 of the record).  PyDarshan decodes each as UTF-8 and said
    only "'utf-8' codec can't decode byte 0xff in position 5"; the message
    names the file and the string, and where in it the byte is."""
    def edit(raw):
        raw[raw.index(text) + at] = 0xFF        # the first: DXT_MPIIO's first record is rank 0's
    bad = tmp_path / "bad.darshan"
    bad.write_bytes(edited(log_path("ior_mpiio_e.darshan").read_bytes(), region, edit))
    proc, out = analyze_cli(bad, tmp_path)
    assert (proc.returncode, proc.stdout, out.exists()) == (2, "", False)
    assert proc.stderr == (f"iomodel: error: {bad}: the Darshan log could not be read: {what} is not "
                           f"UTF-8 text (byte 0xff at {at}): is it damaged?\n")


def test_a_job_start_time_out_of_range_is_refused_naming_the_file(tmp_path):
    """ior_mpiio_e.darshan with the job's start time (the job region's second
    int64, after the uid) set to 2^62 s: PyDarshan makes a datetime of it,
    which the C library refuses with an OSError (EOVERFLOW), and iomodel said
    only "[Errno 75] Value too large for defined data type"."""
    def edit(raw):
        struct.pack_into("<q", raw, 8, 2 ** 62)
    bad = tmp_path / "bad.darshan"
    bad.write_bytes(edited(log_path("ior_mpiio_e.darshan").read_bytes(), "job", edit))
    proc, out = analyze_cli(bad, tmp_path)
    assert (proc.returncode, proc.stdout, out.exists()) == (2, "", False)
    assert proc.stderr == (f"iomodel: error: {bad}: the Darshan log could not be read: PyDarshan failed in "
                           f"read_metadata (OSError: [Errno 75] Value too large for defined data type): "
                           f"is it damaged?\n")


def expanded(tmp_path, writes):
    """ior_posix_shared_e.darshan with its first DXT_POSIX record (module 10;
    rank 0's, 8 writes and 8 reads) holding `writes` copies of its first write
    and no read: a log of some 80 KB for 2 million writes, each a dict of
    PyDarshan's in the reader (hundreds of bytes)."""
    def edit(raw):
        nw, nr = struct.unpack_from("<qq", raw, 88)        # after id, rank, shared flag, host name
        assert (nw, nr) == (8, 8)
        head = bytearray(raw[:104])
        struct.pack_into("<qq", head, 88, writes, 0)
        raw[:104 + 32 * (nw + nr)] = head + raw[104:136] * writes
    p = tmp_path / "expanded.darshan"
    p.write_bytes(edited(log_path("ior_posix_shared_e.darshan").read_bytes(), "module 10", edit))
    return p


@pytest.mark.parametrize("limits, reason", [((600, 64 << 20), "the reader needed more than 64 MiB of memory"),
                                            ((0.2, 1 << 40), "the reader took more than 0.2 s")],
                         ids=["memory", "time"])
def test_the_reader_is_held_to_its_memory_and_time(tmp_path, monkeypatch, limits, reason):
    """A log that expands to 2 million DXT segments, read under 64 MiB more
    memory than iomodel's own, or 0.2 s (PyDarshan takes seconds for them):
    the reader runs out of either, and is gone; iomodel says which, naming
    the file (read_limits gives these on a real run: docs/security.md)."""
    log = expanded(tmp_path, 2_000_000)
    monkeypatch.setattr(darshan_input, "read_limits", lambda path: limits)
    with pytest.raises(DarshanInputError) as e:
        ops_from_darshan(log)
    assert str(e.value) == f"{log}: the Darshan log could not be read: {reason}: is it damaged?"
    # killed past its time; out of memory, it said so and ends on its own
    for child in multiprocessing.active_children():
        child.join(60)
        assert child.exitcode == 0


def test_the_reader_runs_under_limits():
    """In the reader's process: no core file, a CPU-time limit of its time and
    2 s more, an address space `memory` bytes larger than it started with."""
    from iomodel.analyzer.contained import _address_space, run_contained

    def limits():
        return [resource.getrlimit(k)[0] for k in (resource.RLIMIT_CORE, resource.RLIMIT_CPU,
                                                   resource.RLIMIT_AS)], _address_space()
    (core_cpu_as, space), said = run_contained(limits, seconds=30, memory=1 << 30)
    assert core_cpu_as[:2] == [0, 32] and said == ""
    # the limit was set in the child before it called limits(): its space then is the base
    assert 0 <= core_cpu_as[2] - (1 << 30) <= space


def test_missing_pydarshan_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "darshan", None)
    monkeypatch.setitem(sys.modules, "darshan.report", None)
    with pytest.raises(ImportError, match="pip install darshan"):
        ops_from_darshan(log_path(MPI_TEST))


def test_analyze_ior_hdf5_example_end_to_end(tmp_path):
    """`iomodel analyze run.darshan -o m.json`, with the idle-time rule of
    docs/commands/analyze.md.  The idle times between consecutive operations of a
    rank that could join a burst are a few to a few hundred microseconds (inside
    a write or read sequence) or about 0.04 s and more (rank 0, 1 and 3 between
    their data writes and the metadata written at close): two groups; the top of
    the lower one is 689 us (between rank 0's two superblock writes), the
    threshold.  So per rank: a write burst of the 4 data writes, a write burst of
    metadata, a read burst of everything read.  Rank 2's last data write ends at
    0.22183 s, only 66 us before its only metadata write, but the processes vote
    on each split (their 5th write starts a new burst on ranks 0, 1 and 3: 3 of
    4), so rank 2's metadata write starts a burst too.  Hence 3 phases: write by
    ranks 0-3 (4 MiB), write by ranks 0-3 (232 + 664 + 272 + 328 bytes of
    metadata), read by ranks 0-3 (4 MiB + the metadata: 2512 bytes on rank 0,
    1896 on the others)."""
    out = tmp_path / "m.json"
    log = log_path("ior_hdf5_example.darshan")
    proc = subprocess.run([sys.executable, "-m", "iomodel", "analyze", str(log), "-o", str(out),
                           "-q"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # IOR's HDF5 I/O is independent by default, and the MPI-IO counters say so
    assert "cannot tell whether an operation was collective" not in proc.stderr
    from iomodel.models import load_model
    m = load_model(out)
    assert json.loads(out.read_text()) == m
    assert m["source"]["kind"] == "darshan"
    assert m["analysis"]["max_comm_gap"] is None
    assert m["analysis"]["max_idle_s"] == pytest.approx(0.000689, abs=2e-6)
    assert m["analysis"]["threshold_rule"].startswith("auto: idle times")
    app = m["application"]
    assert (app["name"], app["np"], app["hosts"], app["run_time_s"]) == \
        ("ior", 4, {"nid00097": 4}, 1.0)
    assert app["features"]["collective"] is False and app["features"]["independent"] is True
    assert [f["name"] for f in m["files"]] == ["/global/cscratch1/sd/ssnyder/test123.h5"]
    assert (m["files"][0]["access_type"], m["files"][0]["role"]) == ("shared", "inout")
    ph = m["phases"]
    assert [(p["operation"], p["ranks"], p["weight"]) for p in ph] == [
        ("write", "0-3", 4 * MiB),
        ("write", "0-3", 232 + 664 + 272 + 328),
        ("read", "0-3", 4 * MiB + 2512 + 3 * 1896)]
    assert all(p["routine"] is None and p["collective"] is False for p in ph)
    # the data: rank 0's at 2048, each rank 1 MiB further
    assert (ph[0]["offsets"]["first"], ph[0]["offsets"]["per_rank"]) == (2048, MiB)
    assert m["weight"] == sum(p["weight"] for p in ph)


def test_the_metadata_line_says_only_what_the_log_holds(tmp_path):
    """partial_data_dxt.darshan: one process reading one file through MPI-IO.
    A Darshan log keeps no call features but whether calls were collective,
    which its MPI-IO counters tell (1,000,000 independent reads), so the
    metadata line says the operations were independent and lists the other
    features as unknown, in the singular where there is one."""
    out = tmp_path / "m.json"
    iomodel = [sys.executable, "-m", "iomodel"]
    assert subprocess.run(iomodel + ["analyze", str(log_path("partial_data_dxt.darshan")), "-o", str(out),
                                     "-q"], capture_output=True).returncode == 0
    shown = subprocess.run(iomodel + ["show", str(out)], capture_output=True, text=True, check=True).stdout
    lines = shown.splitlines()
    assert lines[0] == "application   mpi-io-test: 1 process on carns-x1-7g (1)"
    assert lines[3] == (
        "metadata      Independent operations through MPI-IO; Strided access mode; Unique access type; 1 unique "
        "file (one per process). Unknown from this source: explicit offsets, individual file pointers, shared "
        "file pointers, blocking I/O operations, nonblocking I/O operations.")
    assert lines[4].endswith("(1 path, 1 process)")


def test_collective_from_the_counters_and_the_calls_overlaps():
    """S3D-IO's checkpoint as DXT_MPIIO would record it on 4 ranks: rank 0
    writes the 588-byte header alone (t 1.00 to 1.01), then every rank its 4
    variables with collective calls, the calls of one variable overlapping
    on all ranks (rank r's k-th from 2 + 0.3k + 0.01r to 2.2 + 0.3k + 0.01r)."""
    def seg(rows):
        rank, t0, t1 = zip(*rows)
        n = len(rows)
        return {"rank": np.array(rank), "id": np.full(n, 7, np.uint64), "write": np.ones(n, bool),
                "offset": np.zeros(n, np.int64), "length": np.full(n, 100), "t_start": np.array(t0),
                "t_end": np.array(t1)}
    rows = [(0, 1.0, 1.01)] + [(r, 2 + 0.3 * k + 0.01 * r, 2.2 + 0.3 * k + 0.01 * r)
                               for r in range(4) for k in range(4)]
    s = seg(rows)
    header_then_data = [0] + [1] * 16

    def counts(coll, indep):
        return {"MPIIO_COLL_WRITES": coll, "MPIIO_SPLIT_WRITES": 0, "MPIIO_INDEP_WRITES": indep,
                "MPIIO_NB_WRITES": 0, "MPIIO_COLL_READS": 0, "MPIIO_SPLIT_READS": 0,
                "MPIIO_INDEP_READS": 0, "MPIIO_NB_READS": 0}
    # the record Darshan reduces for a file all ranks opened: 16 collective, 1 independent
    assert _collective({(7, -1): counts(16, 1)}, s).tolist() == header_then_data
    # per-rank records: ranks 1-3 all collective (counters alone), rank 0 mixed (time)
    per_rank = {(7, 0): counts(4, 1), **{(7, r): counts(4, 0) for r in (1, 2, 3)}}
    assert _collective(per_rank, s).tolist() == header_then_data
    # counters and times that disagree (2 independent calls counted): unknown, not guessed
    assert _collective({(7, -1): counts(15, 2)}, s).tolist() == [-1] * 17
    # one rank alone on a file: the time cannot tell
    one = seg([(0, 1.0, 1.1), (0, 2.0, 2.1)])
    assert _collective({(7, 0): counts(1, 1)}, one).tolist() == [-1, -1]
    # independent only, or collective only: from the counters
    assert _collective({(7, -1): counts(0, 17)}, s).tolist() == [0] * 17
    assert _collective({(7, -1): counts(17, 0)}, s).tolist() == [1] * 17


# ------------------------------------------------------------- syncs, from the counters

def model_of(name):
    from iomodel.analyzer import analyze
    return analyze(log_path(name))


def ior_lines(model, tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    proc = subprocess.run([sys.executable, "-m", "iomodel", "ior", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if line.startswith("mpirun")]


AFTER = "and its writes are that one phase; the syncs are taken as after them (the log does not say when)"


@pytest.mark.parametrize("name,np_,how,ior", [
    # ior_cmd -a POSIX -e on 4 ranks, one shared file: Darshan reduced its POSIX record over
    # the 4 ranks, POSIX_FSYNCS 4 (one fsync a rank, after its 8 writes of 4 KiB)
    ("ior_posix_shared_e.darshan", 4,
     "4 fsync or fdatasync calls on /tmp/iomodel-darshan/ior_posix_shared_e/ior.dat in one record "
     "Darshan summed over its 4 writing processes, taken as one at least by each",
     "mpirun -np 4 ior -a POSIX -s 2 -b 16384 -t 4096 -w -e -o ./iomodel.ior_cmd.1"),
    # the same with -F: a record per rank, POSIX_FSYNCS 1 in each; each rank's 2 segments
    # of 16 KiB are contiguous in its file: one block of 32 KiB
    ("ior_posix_fpp_e.darshan", 4,
     "fsync or fdatasync calls on /tmp/iomodel-darshan/ior_posix_fpp_e/ior.dat.{rank} by each of "
     "the 4 processes that wrote it (4 in all)",
     "mpirun -np 4 ior -a POSIX -s 1 -b 32768 -t 4096 -F -w -e -o ./iomodel.ior_cmd.1"),
    # posix_fpp on 2 ranks: each pwrites a 32 B header and 9 arrays (38032 B) to its file,
    # fsyncs it, and reads the arrays back
    ("posix_fpp.darshan", 2,
     "fsync or fdatasync calls on /tmp/iomodel-darshan/posix_fpp/ckpt.{rank}.dat by each of the 2 "
     "processes that wrote it (2 in all)",
     "mpirun -np 2 ior -a POSIX -s 1 -b 38032 -t 38032 -F -w -e -o ./iomodel.posix_fpp.1"),
    # ior_cmd -a MPIIO -c -e on 2 ranks: one MPI_File_sync a rank, MPIIO_SYNCS 2 in the
    # reduced MPI-IO record (the offsets, -1 in DXT_MPIIO under Open MPI, from DXT_POSIX)
    ("ior_mpiio_e.darshan", 2,
     "2 MPI_File_sync calls on /tmp/iomodel-darshan/ior_mpiio_e/ior.dat in one record Darshan "
     "summed over its 2 writing processes, taken as one at least by each",
     "mpirun -np 2 ior -a MPIIO -s 2 -b 16384 -t 4096 -c -w -e -o ./iomodel.ior_cmd.1"),
])
def test_a_write_phase_synced_by_every_writer_is_synced(tmp_path, name, np_, how, ior):
    """Each run writes then syncs once per rank, then reads back: two phases, the
    write synced (IOR's -e), the read not; the note says what it rests on."""
    m = model_of(name)
    assert [(p["operation"], p["np"], p.get("synced")) for p in m["phases"]] == \
        [("write", np_, True), ("read", np_, None)]
    assert f"phase 1 synced (IOR's -e): Darshan's counters show {how}, {AFTER}" in \
        m["source"]["inferred"]
    assert not any("synced" in s for s in m["source"]["unavailable"])
    lines = ior_lines(m, tmp_path)
    assert lines[0] == ior and not any(" -e " in line for line in lines[1:])


def test_syncs_of_a_file_written_in_several_phases_are_not_guessed(tmp_path):
    """ior_cmd -a POSIX -e -i 2 on 2 ranks: write, sync, read, twice, on one file:
    4 phases, POSIX_FSYNCS 4 in the reduced record.  Which write phase each sync
    followed is not in the log (a trace tells: both), so neither is marked, and
    the model says why."""
    m = model_of("ior_posix_i2_e.darshan")
    assert [(p["operation"], p["weight"], p.get("synced")) for p in m["phases"]] == \
        [(op, 2 * 4 * 4096, None) for op in ("write", "read", "write", "read")]
    assert m["source"]["unavailable"][-1] == (
        "which of the 2 write phases of /tmp/iomodel-darshan/ior_posix_i2_e/ior.dat (phases 1, 3) "
        "were synced: Darshan counts 4 fsync or fdatasync calls on it, not when they came; none is "
        "marked synced (IOR's -e)")
    assert not any(" -e " in line for line in ior_lines(m, tmp_path))


def test_a_log_without_syncs_marks_none():
    # rank0_writer posix: rank 0 writes 3 files and closes them, no sync
    m = model_of("rank0_writer_posix.darshan")
    assert [p.get("synced") for p in m["phases"]] == [None, None]
    assert not any("sync" in s for s in m["source"]["inferred"] + m["source"]["unavailable"])


def test_a_phase_some_writers_did_not_sync_is_not_synced():
    """mark_synced on its own: one write phase of 2 processes (ranks 0 and 1) on
    a file per process; per-rank records where rank 1 made no sync, then a
    reduced record with fewer calls than writers: not every process synced."""
    from iomodel.analyzer.darshan import mark_synced
    files = [{"id": 0, "name": "out.{rank}", "paths": ["out.0", "out.1"]}]

    def phases():
        return [{"id": 1, "file": 0, "operation": "write"}, {"id": 2, "file": 0, "operation": "read"}]
    per_rank = {"out.0": {"syncs": 1, "writers": 1, "reduced": False, "every": True},
                "out.1": {"syncs": 0, "writers": 1, "reduced": False, "every": False}}
    ph = phases()
    assert mark_synced(ph, files, per_rank, "DXT_POSIX") == (
        ["phase 1 not synced: Darshan counts 1 fsync or fdatasync calls on out.{rank}, but not by "
         "every process that wrote it"], [])
    assert "synced" not in ph[0]
    shared = [{"id": 0, "name": "out", "paths": ["out"]}]
    reduced = {"out": {"syncs": 1, "writers": 2, "reduced": True, "every": False}}
    ph = phases()
    assert mark_synced(ph, shared, reduced, "DXT_MPIIO") == (
        ["phase 1 not synced: Darshan counts 1 MPI_File_sync calls on out, but not by every "
         "process that wrote it"], [])
    assert "synced" not in ph[0]


def test_writes_extending_the_file_from_dxt_offsets():
    """ior_posix_shared_e.darshan (IOR -a POSIX -s 2 -b 16k -t 4k, 4 processes on one
    file): blocks of 4 transfers a process and segment; in lockstep every process's
    first transfer of a segment passes the file's end, then only rank 3's: 2 x (4 + 3)
    = 14 of the 32 writes.  ior_posix_i2_e.darshan's first write (2 processes, -s 1):
    2 + 3 = 5 of 8."""
    from iomodel.analyzer import analyze
    m = analyze(str(log_path("ior_posix_shared_e.darshan")))
    assert [(p["operation"], p["np"], p["rep"], p.get("extending_writes")) for p in m["phases"]] == \
        [("write", 4, 8, 14), ("read", 4, 8, None)]
    first = analyze(str(log_path("ior_posix_i2_e.darshan")))["phases"][0]
    assert (first["operation"], first["np"], first["rep"], first["extending_writes"]) == ("write", 2, 4, 5)
