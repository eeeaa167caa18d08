"""The application's own POSIX and stdio I/O (issue 57): programs that write
and read outside MPI-IO, traced for real under mpirun, their calls, bytes and
phases worked out by hand from each program's header, the IOR runs their
models give, and the run itself unchanged by the tracer (output files byte
for byte, exit code).  Every fact is exact: none depends on timing."""
import filecmp
import json
import os
import subprocess

import pytest
from conftest import BOTH_MPIS, IOMODEL, mpirun, program_command

KiB, MiB = 1024, 1 << 20


def events(run, rank=None):
    """(routine, file basename or None, offset, bytes) per event, in call order."""
    t = run.trace()
    paths = t.paths
    out = []
    for e in sorted(t.events.to_pylist(), key=lambda e: (e["rank"], e["seq"])):
        if rank is None or e["rank"] == rank:
            f = os.path.basename(paths[e["file_id"]]) if e["file_id"] >= 0 else None
            out.append((e["routine"], f, e["offset"], e["bytes"]))
    return out


def model_of(run, tmp_path):
    out = tmp_path / "model.json"
    proc = subprocess.run(IOMODEL + ["analyze", str(run.trace_dir), "-o", str(out), "-q"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def facts(model):
    """Each phase's timing-free facts."""
    return [(p["routine"], p["interface"], os.path.basename(model["files"][p["file"]]["name"]),
             p["operation"], p["np"], p["ranks"], p["request_sizes"], p["rep"], p["weight"],
             p["access_mode"], model["files"][p["file"]]["access_type"]) for p in model["phases"]]


def ior_lines(model, tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    proc = subprocess.run(IOMODEL + ["ior", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if line.startswith("mpirun")]


# ------------------------------------------------------------- file per process, pwrite

HACC = [32] + [4000] * 7 + [8000, 2000]       # header, 7 float arrays, pid, mask (N = 1000)


def test_hacc_like_pwrite_checkpoint(traced, tmp_path):
    run = traced("posix_fpp", 2, 1000, posix=True)
    offsets = [sum(HACC[:k]) for k in range(10)]
    for r in range(2):
        want = ([("MPI_Init", None, 0, 0), ("open", f"ckpt.{r}.dat", 0, 0)]
                + [("pwrite", f"ckpt.{r}.dat", o, n) for o, n in zip(offsets, HACC)]
                + [("fsync", f"ckpt.{r}.dat", 0, 0), ("close", f"ckpt.{r}.dat", 0, 0),
                   ("open", f"ckpt.{r}.dat", 0, 0)]
                + [("pread", f"ckpt.{r}.dat", o, n) for o, n in zip(offsets[1:], HACC[1:])]
                + [("close", f"ckpt.{r}.dat", 0, 0), ("MPI_Finalize", None, 0, 0)])
        assert events(run, r) == want
    assert [(run.data_dir / f"ckpt.{r}.dat").stat().st_size for r in range(2)] == [38032, 38032]
    model = model_of(run, tmp_path)
    assert facts(model) == [
        ("pwrite", "POSIX", "ckpt.{rank}.dat", "write", 2, "0-1", HACC, 1, 2 * 38032, "sequential", "unique"),
        ("pread", "POSIX", "ckpt.{rank}.dat", "read", 2, "0-1", HACC[1:], 1, 2 * 38000, "sequential", "unique")]
    assert model["files"][0]["size"] == 2 * 38032 and model["weight"] == 2 * 38032 + 2 * 38000
    # each rank fsyncs its file after the checkpoint: IOR's -e
    assert [p.get("synced") for p in model["phases"]] == [True, None]
    # show says so, in its table and to scripts, with the interface
    shown = subprocess.run(IOMODEL + ["show", str(tmp_path / "model.json")], capture_output=True, text=True)
    rows = [l for l in shown.stdout.splitlines() if l.startswith(("1 ", "2 "))]
    assert [r.split("  ")[-1].strip() for r in rows] == ["sequential, unique, synced", "sequential, unique"]
    js = json.loads(subprocess.run(IOMODEL + ["show", str(tmp_path / "model.json"), "--json"],
                                   capture_output=True, text=True).stdout)
    assert [(p["interface"], p["synced"], p["collective"], p["ranks"]) for p in js["phases"]] == [
        ("POSIX", True, False, "0-1"), ("POSIX", False, False, "0-1")]
    base = "mpirun -np 2 ior -a POSIX -s 1"
    assert ior_lines(model, tmp_path) == [
        f"{base} -b 38032 -t 38032 -F -w -e -o ./iomodel.posix_fpp.1",
        f"{base} -b 38000 -t 38000 -F -w -k -o ./iomodel.posix_fpp.2",
        f"{base} -b 38000 -t 38000 -F -r -k -E -o ./iomodel.posix_fpp.2"]


# ------------------------------------------------------------- rank 0 writes for all, stdio

def test_pop_like_rank0_writer(traced, tmp_path):
    """4 ranks of 1000 doubles, 3 history steps: rank 0 writes each file (64 B
    header, 32000 B of field) with fwrite, then reads the last one back; the
    other ranks only gather."""
    run = traced("rank0_writer", 4, 1000, 3, posix=True)
    want = [("MPI_Init", None, 0, 0)]
    for s in range(3):
        f = f"hist.{s:04d}.dat"
        want += [("fopen", f, 0, 0), ("fwrite", f, 0, 64), ("fwrite", f, 64, 32000), ("fclose", f, 0, 0)]
    want += [("fopen", "hist.0002.dat", 0, 0), ("fread", "hist.0002.dat", 0, 64),
             ("fread", "hist.0002.dat", 64, 32000), ("fclose", "hist.0002.dat", 0, 0),
             ("MPI_Finalize", None, 0, 0)]
    assert events(run, 0) == want
    assert all(events(run, r) == [("MPI_Init", None, 0, 0), ("MPI_Finalize", None, 0, 0)] for r in (1, 2, 3))
    model = model_of(run, tmp_path)
    # one gather between steps: the threshold's default, 8; rank 0's six writes one
    # burst of a 2-operation pattern repeated 3 times (its offsets restart in each file);
    # the files' numbers are the steps, not the rank: {n}
    assert facts(model) == [
        ("fwrite", "STDIO", "hist.{n}.dat", "write", 1, "0", [64, 32000], 3, 3 * 32064, "strided", "unique"),
        ("fread", "STDIO", "hist.{n}.dat", "read", 1, "0", [64, 32000], 1, 32064, "sequential", "unique")]
    show = subprocess.run(IOMODEL + ["show", str(tmp_path / "model.json")], capture_output=True, text=True)
    rows = [l.split("  ") for l in show.stdout.splitlines() if l.startswith(("1 ", "2 "))]
    assert [[w.strip() for w in r if w.strip()][2:4] for r in rows] == [
        ["1 (rank 0)", "fwrite (STDIO)"], ["1 (rank 0)", "fread (STDIO)"]]
    lines = ior_lines(model, tmp_path)
    assert lines[0] == "mpirun -np 1 ior -a POSIX -s 3 -b 32064 -t 32064 -F -w -o ./iomodel.rank0_writer.1"


# ------------------------------------------------------------- MPI-IO and a POSIX log

def test_mpiio_output_with_a_posix_log(traced, tmp_path):
    run = traced("mixed_log", 4, 3, posix=True)
    want = [("MPI_Init", None, 0, 0), ("MPI_File_open", "out.dat", 0, 0), ("open", "run.log", 0, 0)]
    for s in range(3):
        want += [("MPI_File_write_at_all", "out.dat", s * 4 * 65536, 65536), ("write", "run.log", s * 100, 100)]
    want += [("close", "run.log", 0, 0), ("MPI_File_close", "out.dat", 0, 0), ("MPI_Finalize", None, 0, 0)]
    assert events(run, 0) == want
    assert (run.data_dir / "run.log").read_bytes().count(b"\n") == 3
    model = model_of(run, tmp_path)
    # 120 exchanges between the steps: each collective write a phase of its own, and
    # rank 0's log lines, which other data accesses part, one each
    mpi = ("MPI_File_write_at_all", "MPI-IO", "out.dat", "write", 4, "0-3", [65536], 1, 4 * 65536,
           "sequential", "shared")
    log = ("write", "POSIX", "run.log", "write", 1, "0", [100], 1, 100, "sequential", "unique")
    assert facts(model) == [mpi, log] * 3
    assert [p["collective"] for p in model["phases"]] == [True, False] * 3
    assert ior_lines(model, tmp_path) == [
        "mpirun -np 4 ior -a MPIIO -s 1 -b 65536 -t 65536 -c -w -o ./iomodel.mixed_log.1",
        "mpirun -np 1 ior -a POSIX -s 1 -b 104 -t 104 -F -w -o ./iomodel.mixed_log.2",
        "mpirun -np 4 ior -a MPIIO -s 1 -b 65536 -t 65536 -c -w -o ./iomodel.mixed_log.3",
        "mpirun -np 1 ior -a POSIX -s 1 -b 104 -t 104 -F -w -o ./iomodel.mixed_log.4",
        "mpirun -np 4 ior -a MPIIO -s 1 -b 65536 -t 65536 -c -w -o ./iomodel.mixed_log.5",
        "mpirun -np 1 ior -a POSIX -s 1 -b 104 -t 104 -F -w -o ./iomodel.mixed_log.6"]


@BOTH_MPIS
def test_one_ranks_log_does_not_cut_a_collective_phase(traced, tmp_path):
    """coll_log: every step a collective 64 KiB write of each rank, an
    MPI_Allreduce, then rank 0's 24-byte log line.  On rank 0 the log lines
    sit between the collective writes; the communicator (4 processes, 3 of
    which see nothing between) keeps them one burst, so the model has one
    np-4 phase of rep 5, not an np-4 phase and four np-1 ones."""
    run = traced("coll_log", 4, 5, posix=True)
    want = [("MPI_Init", None, 0, 0), ("MPI_File_open", "out.dat", 0, 0), ("open", "run.0.log", 0, 0)]
    for s in range(5):
        want += [("MPI_File_write_at_all", "out.dat", s * 4 * 65536, 65536), ("write", "run.0.log", s * 24, 24)]
    want += [("close", "run.0.log", 0, 0), ("MPI_File_close", "out.dat", 0, 0), ("MPI_Finalize", None, 0, 0)]
    assert events(run, 0) == want
    assert events(run, 3) == [("MPI_Init", None, 0, 0), ("MPI_File_open", "out.dat", 0, 0)] + [
        ("MPI_File_write_at_all", "out.dat", (s * 4 + 3) * 65536, 65536) for s in range(5)] + [
        ("MPI_File_close", "out.dat", 0, 0), ("MPI_Finalize", None, 0, 0)]
    assert (run.data_dir / "run.0.log").read_bytes().count(b"\n") == 5
    model = model_of(run, tmp_path)
    # one Allreduce between consecutive writes of either file: one group of
    # counts (all 1), threshold 8; rank r's step s at (4s + r) * 64 KiB: a
    # stride of 256 KiB, ranks 64 KiB apart; the log's lines back to back
    assert facts(model) == [
        ("MPI_File_write_at_all", "MPI-IO", "out.dat", "write", 4, "0-3", [65536], 5, 5 * 4 * 65536,
         "strided", "shared"),
        ("write", "POSIX", "run.{rank}.log", "write", 1, "0", [24], 5, 5 * 24, "sequential", "unique")]
    coll, log = model["phases"]
    assert (coll["collective"], log["collective"]) == (True, False)
    assert coll["offsets"] == {"first": 0, "per_rank": 65536, "stride": 262144, "contiguous": True}
    assert (coll["logical_time"], log["logical_time"]) == ({"first": 0, "comm_between": 1},
                                                           {"first": 1, "comm_between": 1})
    # the log's first line comes after the first write and its Allreduce
    assert log["gap_comm"] == 1
    assert ior_lines(model, tmp_path) == [
        "mpirun -np 4 ior -a MPIIO -s 5 -b 65536 -t 65536 -c -w -o ./iomodel.coll_log.1",
        "mpirun -np 1 ior -a POSIX -s 1 -b 120 -t 24 -F -w -o ./iomodel.coll_log.2"]


def test_most_ranks_logs_split_the_collective_phase_on_all(traced, tmp_path):
    """coll_log with ranks 0-2 logging: 3 of the 4 processes see a log line
    between consecutive collective writes, more than half, so every write is
    a phase of its own on all four (rank 3 too, which saw nothing between),
    each followed by the three ranks' lines: ten phases, none of np 1.  With
    ranks 0-1 logging (2 of 4, not more than half) the writes stay one phase."""
    model = model_of(traced("coll_log", 4, 5, 3, posix=True), tmp_path)
    coll = ("MPI_File_write_at_all", "MPI-IO", "out.dat", "write", 4, "0-3", [65536], 1, 4 * 65536,
            "sequential", "shared")
    log = ("write", "POSIX", "run.{rank}.log", "write", 3, "0-2", [24], 1, 3 * 24, "sequential", "unique")
    assert facts(model) == [coll, log] * 5
    model = model_of(traced("coll_log", 4, 5, 2, posix=True), tmp_path)
    assert [(p["routine"], p["np"], p["rep"], p["weight"]) for p in model["phases"]] == [
        ("MPI_File_write_at_all", 4, 5, 5 * 4 * 65536), ("write", 2, 5, 5 * 2 * 24)]


# ------------------------------------------------------------- stdio records

def test_stdio_fwrite_fread(traced, tmp_path):
    run = traced("stdio_rw", 2, 4, 65536, posix=True)
    for r in range(2):
        f = f"rec.{r}.dat"
        assert events(run, r) == (
            [("MPI_Init", None, 0, 0), ("fopen", f, 0, 0)]
            + [("fwrite", f, k * 65536, 65536) for k in range(4)]
            + [("fclose", f, 0, 0), ("fopen", f, 0, 0), ("fseek", f, 0, 0)]
            + [("fread", f, k * 65536, 65536) for k in range(4)]
            + [("fclose", f, 0, 0), ("MPI_Finalize", None, 0, 0)])
    model = model_of(run, tmp_path)
    assert facts(model) == [
        ("fwrite", "STDIO", "rec.{rank}.dat", "write", 2, "0-1", [65536], 4, 8 * 65536, "sequential", "unique"),
        ("fread", "STDIO", "rec.{rank}.dat", "read", 2, "0-1", [65536], 4, 8 * 65536, "sequential", "unique")]
    ior = subprocess.run(IOMODEL + ["ior", str(tmp_path / "model.json")], capture_output=True, text=True)
    assert "IOR's POSIX API makes each transfer one system call" in ior.stdout


# ------------------------------------------------------------- before MPI_Init, after MPI_Finalize

def test_io_before_mpi_init_and_after_mpi_finalize(traced, tmp_path):
    """The deck, written and read back before MPI_Init, is in the file of the
    rank the process became, before its MPI_Init, at negative times; the
    summary after MPI_Finalize follows it; the trace still ends MPI_Finalize."""
    run = traced("outside_mpi", 2, posix=True)
    t = run.trace()
    assert t.ranks["ended_by"].to_pylist() == ["MPI_Finalize", "MPI_Finalize"]
    pids = dict(zip(t.ranks["rank"].to_pylist(), t.ranks["pid"].to_pylist()))
    for r in range(2):
        deck = f"deck.{pids[r]}.in"
        assert events(run, r) == [
            ("open", deck, 0, 0), ("write", deck, 0, 256), ("lseek", deck, 0, 0), ("read", deck, 0, 256),
            ("close", deck, 0, 0), ("unlink", deck, 0, 0), ("MPI_Init", None, 0, 0),
            ("MPI_File_open", "mid.dat", 0, 0), ("MPI_File_write_at", "mid.dat", r * 4096, 4096),
            ("MPI_File_close", "mid.dat", 0, 0), ("MPI_Finalize", None, 0, 0),
            ("open", f"summary.{r}.txt", 0, 0), ("write", f"summary.{r}.txt", 0, 512),
            ("close", f"summary.{r}.txt", 0, 0)]
    ev = [e for e in t.events.to_pylist() if e["rank"] == 0]
    assert all(e["t_start"] < 0 for e in ev[:6]) and ev[7]["t_start"] >= 0
    model = model_of(run, tmp_path)
    assert [f[:9] for f in facts(model)] == [
        # named by the process id, not the rank: {n}
        ("write", "POSIX", "deck.{n}.in", "write", 2, "0-1", [256], 1, 512),
        ("read", "POSIX", "deck.{n}.in", "read", 2, "0-1", [256], 1, 512),
        ("MPI_File_write_at", "MPI-IO", "mid.dat", "write", 2, "0-1", [4096], 1, 8192),
        ("write", "POSIX", "summary.{rank}.txt", "write", 2, "0-1", [512], 1, 1024)]
    assert model["phases"][1]["reread_bytes"] == 512       # read back through the open that wrote it


# ------------------------------------------------------------- Fortran's own I/O

def test_fortran_unformatted_sequential(traced, tmp_path):
    """3 records of 131072 doubles (1 MiB) a rank.  gfortran frames each record
    with 4-byte length markers and writes it as: the previous record's end
    marker with a placeholder for this one's start (8 B; the first record: 4 B),
    the data, a seek back to write the start marker (4 B), and, before the next
    record, a seek to the end; the last end marker alone (4 B).  It reads each
    record through its 128 KiB buffer: 131072 B (the start marker and the data's
    first 131068 B), then the data's other 917508 B, and seeks past the end
    marker to the next record."""
    run = traced("fortran_unformatted", 2, 3, 131072, posix=True)
    rec = 1048576 + 8
    f = "fort.0.dat"
    want = [("MPI_Init", None, 0, 0), ("open", f, 0, 0),
            ("write", f, 0, 4), ("write", f, 4, 1048576), ("lseek", f, 0, 0), ("write", f, 0, 4)]
    for k in (1, 2):
        want += [("lseek", f, k * rec - 4, 0), ("write", f, k * rec - 4, 8),
                 ("write", f, k * rec + 4, 1048576), ("lseek", f, k * rec, 0), ("write", f, k * rec, 4)]
    want += [("lseek", f, 3 * rec - 4, 0), ("write", f, 3 * rec - 4, 4), ("close", f, 0, 0), ("open", f, 0, 0)]
    for k in range(3):
        want += ([("lseek", f, k * rec, 0)] if k else []) + [("read", f, k * rec, 131072),
                                                             ("read", f, k * rec + 131072, 917508)]
    want += [("close", f, 0, 0), ("MPI_Finalize", None, 0, 0)]
    assert events(run, 0) == want
    assert (run.data_dir / f).stat().st_size == 3 * rec
    model = model_of(run, tmp_path)
    writes = [4, 1048576, 4, 8, 1048576, 4, 8, 1048576, 4, 4]
    assert facts(model)[0][:9] == ("write", "POSIX", "fort.{rank}.dat", "write", 2, "0-1", writes, 1,
                                   2 * sum(writes))
    assert facts(model)[1][:9] == ("read", "POSIX", "fort.{rank}.dat", "read", 2, "0-1", [131072, 917508], 3,
                                   2 * 3 * 1048580)


# ------------------------------------------------------------- formatted and character stdio

def traced_build(tmp_path, name, flags, np_):
    """Program `name` built with mpicc and `flags` (not the fixtures' -O1), run
    traced on np_ ranks in a data folder of its own."""
    from conftest import PROGRAMS, Run
    exe, data, trace = tmp_path / f"{name}.bin", tmp_path / "data", tmp_path / "trace"
    data.mkdir()
    subprocess.run(["mpicc", *flags, "-Wall", "-Wextra", "-Werror", "-o", exe, PROGRAMS / f"{name}.c"],
                   check=True)
    proc = subprocess.run(IOMODEL + ["trace", "-o", str(trace), "--", *mpirun(np_, exe, data)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "IOMODEL_POSIX": "1"})
    assert proc.returncode == 0, proc.stderr
    return Run(trace, data, proc)


def stdio_log_events(routine, inlined=()):
    """stdio_log's events on its files, in order (its header gives the calls,
    offsets and bytes), as `routine` names each call the binary makes; a call
    in `inlined` makes no event, and the calls after it on the same stream
    are placed as the tracer keeps the position: short by its byte."""
    def calls(f, seq):
        out, short = [], 0
        for name, off, n in seq:
            if name in inlined:
                short += n
                continue
            out.append((routine.get(name, name), f, off - short if off is not None else 0, n))
        return out
    log = calls("log.R", [("fopen", None, 0), ("fprintf", 0, 12)]
                + [("fprintf", 12 + 17 * k, 17) for k in range(4)]
                + [("fputs", 80, 9), ("fputc", 89, 1), ("putc", 90, 1), ("putc_unlocked", 91, 1),
                   ("fputc", 92, 1), ("vfprintf", 93, 8), ("fwrite", 101, 16), ("fprintf", 117, 10),
                   ("fprintf", 127, 9), ("fputs", 136, 39), ("fclose", None, 0)])
    back = calls("log.R", [("fopen", None, 0), ("fgets", 0, 12)]
                 + [("__isoc99_fscanf", 12 + 17 * k, 17) for k in range(4)]
                 + [("getline", 80, 9), ("getc", 89, 1), ("ungetc", 89, 0), ("fgetc", 89, 1),
                    ("getc", 90, 1), ("getc_unlocked", 91, 1), ("fgetc", 92, 1), ("fread", 93, 24),
                    ("fgets", 117, 10), ("fgets", 127, 9), ("fgets", 136, 39)])
    # the last fgets meets the end: 0 B, and the position asked there is the stream's own
    back += [(routine.get("fgets", "fgets"), "log.R", 175, 0), ("fclose", "log.R", 0, 0)]
    out = calls("out.R", [("freopen", None, 0), ("printf", 0, 12), ("puts", 12, 4), ("putchar", 16, 1),
                          ("fflush", None, 0)])
    fd = calls("fd.R", [("open", None, 0), ("dprintf", 0, 9), ("write", 9, 2), ("close", None, 0)])
    return log + back + out + fd


def stdio_events_of(run, rank):
    return [(n, f.replace(str(rank), "R"), o, b) for n, f, o, b in events(run, rank) if f]


def test_formatted_and_character_stdio_calls_are_traced(tmp_path):
    """stdio_log built with -O0 (every call made as written; gcc still turns
    fputs of a constant string into fwrite), 2 ranks: each call on its log is
    one event at the stream's position with the bytes it moved: 15 writes of
    175 B, as Darshan's STDIO module counts them, and 16 reads of 176 B (the
    byte ungetc pushed back is read twice, and the last fgets meets the end of
    the file: 0 B); nothing of what stdio's buffer wrote or read underneath
    (no write or read event on log.R).  Standard output reopened on out.R with
    freopen is followed from then on (printf, puts, putchar); dprintf is a
    write at its descriptor's position.  The model: the log written is one
    sequential phase of 15 operations (stdio's calls of one direction are one
    routine for the phase rule), read back one of 15 (the 0-byte read is no
    access) whose pushed-back byte, read twice, is a range gone over again:
    strided by the rule; out.R and fd.R one sequential phase each."""
    run = traced_build(tmp_path, "stdio_log", ["-O0"], 2)
    want = stdio_log_events({"fputs": "fwrite"})
    for r in range(2):
        assert stdio_events_of(run, r) == want
        assert (run.data_dir / f"out.{r}").read_text() == f"rank {r} done\nbye\n!"
    info = json.loads(subprocess.run(IOMODEL + ["trace-info", "--json", str(run.trace_dir)],
                                     capture_output=True, text=True, check=True).stdout)
    assert {p: (f["bytes_written"], f["bytes_read"]) for p, f in info["file_stats"].items()} == {
        str(run.data_dir / f"{k}.{r}"): b for r in range(2)
        for k, b in (("log", (175, 176)), ("out", (17, 0)), ("fd", (11, 0)))}
    assert info["gaps"] == []
    log_w = [12, 17, 17, 17, 17, 9, 1, 1, 1, 1, 8, 16, 10, 9, 39]
    log_r = [12, 17, 17, 17, 17, 9, 1, 1, 1, 1, 1, 24, 10, 9, 39]
    assert facts(model_of(run, tmp_path)) == [
        ("fprintf", "STDIO", "log.{rank}", "write", 2, "0-1", log_w, 1, 2 * 175, "sequential", "unique"),
        ("fgets", "STDIO", "log.{rank}", "read", 2, "0-1", log_r, 1, 2 * 176, "strided", "unique"),
        ("printf", "STDIO", "out.{rank}", "write", 2, "0-1", [12, 4, 1], 1, 2 * 17, "sequential", "unique"),
        ("dprintf", "POSIX", "fd.{rank}", "write", 2, "0-1", [9, 2], 1, 2 * 11, "sequential", "unique")]


def test_fortified_stdio_calls_and_inlined_ones(tmp_path):
    """stdio_log built as Debian builds packages (-O2 -D_FORTIFY_SOURCE=2):
    the program calls glibc's checking forms (__fprintf_chk, __vfprintf_chk,
    __printf_chk, __dprintf_chk), getline is __getdelim, putchar is putc on
    stdout, and putc_unlocked and getc_unlocked are inlined into stdio's buffer
    and call nothing: each of those moves 1 B no traced call accounts for.  The
    calls after it are placed 1 B short (the tracer keeps the position itself);
    where the position is asked again (the fclose of the log written, the
    fgets that meets the end of the one read) the trace records the move, and
    trace-info and analyze say so: 2 B a rank, 4 B in all, the model partial."""
    run = traced_build(tmp_path, "stdio_log", ["-O2", "-D_FORTIFY_SOURCE=2"], 2)
    chk = {"fprintf": "__fprintf_chk", "vfprintf": "__vfprintf_chk", "printf": "__printf_chk",
           "dprintf": "__dprintf_chk", "getline": "__getdelim", "putchar": "putc", "fputs": "fwrite"}
    want = stdio_log_events(chk, inlined=("putc_unlocked", "getc_unlocked"))
    for r in range(2):
        assert stdio_events_of(run, r) == want
    note = ("ranks 0-1: stdio calls the tracer does not see (inlined by the compiler, such as getc_unlocked "
            "and putc_unlocked, or not wrapped, such as putw and the wide-character calls) moved 4 B on 2 "
            "files (log.0, log.1): those bytes are not in the trace")
    assert run.trace().gaps["notes"] == [note]
    model = model_of(run, tmp_path)
    assert model["source"]["partial"]["notes"] == [note]
    assert [(p["routine"], p["weight"], p["access_mode"]) for p in model["phases"]] == [
        ("__fprintf_chk", 2 * 174, "sequential"), ("fgets", 2 * 175, "strided"),
        ("__printf_chk", 2 * 17, "sequential"), ("__dprintf_chk", 2 * 11, "sequential")]


def test_the_analyzer_knows_every_traced_posix_and_stdio_routine():
    """Each data routine of tracer/wrappers.tmpl is a read or a write in
    analyzer/trace.py as its line says, at an explicit offset where it gives
    one; every stdio line (s_*) is of the STDIO interface, every POSIX one not."""
    from iomodel.analyzer import trace as t
    from iomodel.tracer.gen_wrappers import POSIX_DATA, POSIX_PARAMS, read_template
    from conftest import ROOT
    lines = [e for e in read_template(ROOT / "tracer" / "wrappers.tmpl") if e[1] in POSIX_PARAMS]
    assert len(lines) > 100
    for _, cls, name, flags, _ in lines:
        traits = t.routine_traits(name)
        assert traits["data"] == (cls in POSIX_DATA), name
        assert (traits["read"], traits["write"]) == ("read" in flags, "write" in flags), name
        assert (traits["pointer"] == "explicit") == ("at" in flags), name
        assert traits["interface"] == ("STDIO" if cls.startswith("s_") else "POSIX"), name


# ------------------------------------------------------------- MPI-IO beside its POSIX checks

@BOTH_MPIS
def test_mpiio_events_are_the_same_with_posix_traced(traced, mpi):
    """s3d_like, whose rank 0 checks its five files with stdio: its MPI-IO calls
    are recorded the same with POSIX tracing on and off; on, rank 0's checks
    follow them: each file fopen'd, its 512 B header and 16 arrays of 8^3
    doubles (4096 B) read with fread, an fgetc that meets the end of the file
    (0 B at 512 + 16 * 4096), fclosed."""
    on = [events(traced("s3d_like", 4, "blocking", 8, 8, 8, posix=True), r) for r in range(4)]
    off = [events(traced("s3d_like", 4, "blocking", 8, 8, 8), r) for r in range(4)]   # (the same folders)
    for r in range(4):
        assert [e for e in on[r] if e[0].startswith("MPI_")] == off[r]
    checks = [e for e in on[0] if not e[0].startswith("MPI_")]
    want = []
    for k in range(5):
        f = f"s3d.{k}.nc"
        want += [("fopen", f, 0, 0), ("fread", f, 0, 512)] + \
            [("fread", f, 512 + 4096 * a, 4096) for a in range(16)] + \
            [("fgetc", f, 512 + 4096 * 16, 0), ("fclose", f, 0, 0)]
    assert checks == want
    assert all(e[0].startswith("MPI_") for r in (1, 2, 3) for e in on[r])


# ------------------------------------------------------------- the run unchanged

PROGRAMS = [("posix_fpp", 2, (1000,)), ("rank0_writer", 4, (1000, 3)), ("mixed_log", 4, (3,)),
            ("stdio_rw", 2, (4, 65536)), ("fortran_unformatted", 2, (3, 1024))]


@pytest.mark.parametrize("name, np_, args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_output_and_exit_code_are_the_same_traced(build_dir, tmp_path, name, np_, args):
    outs = []
    for traced_ in (False, True):
        data = tmp_path / f"data-{traced_}"
        data.mkdir()
        cmd = mpirun(np_, *program_command(build_dir, name), data, *args)
        if traced_:
            cmd = IOMODEL + ["trace", "-o", str(tmp_path / "trace"), "--", *cmd]
        proc = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=120)
        outs.append((data, proc.returncode))
    (plain, rc0), (traced_dir, rc1) = outs
    assert rc0 == rc1 == 0
    names = sorted(p.name for p in plain.iterdir())
    assert names and names == sorted(p.name for p in traced_dir.iterdir())
    match, mismatch, errors = filecmp.cmpfiles(plain, traced_dir, names, shallow=False)
    assert (mismatch, errors) == ([], []) and len(match) == len(names)


def test_a_failing_program_keeps_its_exit_code(build_dir, tmp_path):
    """posix_fpp without its N: the usage error's MPI_Abort(2), traced or not."""
    rcs = []
    for traced_ in (False, True):
        cmd = mpirun(2, *program_command(build_dir, "posix_fpp"), tmp_path)
        if traced_:
            cmd = IOMODEL + ["trace", "-o", str(tmp_path / "trace"), "--", *cmd]
        rcs.append(subprocess.run(list(map(str, cmd)), capture_output=True, timeout=120).returncode)
    assert rcs[0] == rcs[1] != 0


# ------------------------------------------------------------- no silent empties

def test_a_trace_without_data_access_is_an_error(traced, tmp_path):
    """posix_fpp with its data folder left out (IOMODEL_EXCLUDE): the trace holds
    MPI_Init and MPI_Finalize only; analyze says so, exits 2 and writes no model."""
    data = tmp_path / "posix_fpp-data"
    run = traced("posix_fpp", 2, 1000, posix=True, env={"IOMODEL_EXCLUDE": str(data)})
    out = tmp_path / "m.json"
    proc = subprocess.run(IOMODEL + ["analyze", str(run.trace_dir), "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and not out.exists()
    assert proc.stderr.strip().splitlines()[-1] == (
        f"iomodel: error: {run.trace_dir}: no data access to model: the trace holds only MPI_Finalize x2, "
        "MPI_Init x2: " + NOTHING_FOLLOWED)


NOTHING_FOLLOWED = (
    "no file was opened, read or written through the calls the tracer follows (MPI-IO, POSIX, "
    "stdio); if the application does file I/O, it went through calls the tracer does not follow, "
    "or to files it leaves out (docs/commands/trace.md, \"What is recorded\")")


@BOTH_MPIS
def test_a_program_without_io_is_not_said_to_have_done_some(traced, tmp_path):
    """no_io: 3 ranks, an Allreduce and rank 0's line on its standard output:
    nothing to model, and the error says no file was touched through the
    calls followed, without claiming the application did I/O."""
    run = traced("no_io", 3, posix=True)
    assert run.proc.stdout.count("no_io: 3 ranks' sum 3") == 1
    proc = subprocess.run(IOMODEL + ["analyze", str(run.trace_dir), "-o", str(tmp_path / "m.json")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and not (tmp_path / "m.json").exists()
    assert proc.stderr.strip().splitlines() == [
        f"iomodel: error: {run.trace_dir}: no data access to model: the trace holds only MPI_Finalize x3, "
        "MPI_Init x3: " + NOTHING_FOLLOWED]


def test_a_model_without_phases_is_nothing_to_predict(tmp_path):
    from conftest import ROOT
    model = json.loads((ROOT / "models" / "examples" / "btio-B-4.json").read_text())
    model.update(phases=[], runs=[], order=[], weight=0)
    out = tmp_path / "m.json"
    out.write_text(json.dumps(model))
    for cmd in (["predict", out, "--vc", "vc3"], ["compare", out, "--vc", "vc1", "vc3"], ["ior", out],
                ["replay", out, "--vc", "local", "--backend", "builtin"]):
        p = subprocess.run(IOMODEL + list(map(str, cmd)), capture_output=True, text=True, cwd=tmp_path)
        assert p.returncode == 2, cmd
        assert p.stderr.strip() == f"iomodel: error: {out}: the model has no phases: no I/O to replay or predict"


# ------------------------------------------------------------- replayed, measured, predicted

def test_a_mixed_model_replays_each_phase_through_its_interface(traced, tmp_path, local_vc):
    """mixed_log's model replayed by the built-in replayer: the collective writes
    through MPI-IO (-a MPIIO -c, 4 processes), the log lines through POSIX
    (-a POSIX, 1 process), every run measured; predict then uses the replay."""
    model = model_of(traced("mixed_log", 4, 3, posix=True), tmp_path)
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(model))
    out = tmp_path / "replay"
    proc = subprocess.run(IOMODEL + ["replay", str(path), "--vc", str(local_vc), "--backend", "builtin",
                                     "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    got = sorted((e["phase_ids"], e["command"][2], e["command"][e["command"].index("-a") + 1],
                  "-c" in e["command"], e["ok"]) for e in runs)
    assert got == [([1], "4", "MPIIO", True, True), ([2], "1", "POSIX", False, True),
                   ([3], "4", "MPIIO", True, True), ([4], "1", "POSIX", False, True),
                   ([5], "4", "MPIIO", True, True), ([6], "1", "POSIX", False, True)]
    pred = subprocess.run(IOMODEL + ["predict", str(path), "--vc", str(local_vc), "--replay", str(out),
                                     "--json"], capture_output=True, text=True)
    assert pred.returncode == 0, pred.stderr
    assert [p["note"] for p in json.loads(pred.stdout)["phases"]] == ["measured by replay"] * 6


def test_posix_points_answer_posix_phases(traced, tmp_path, local_vc):
    """characterize --api MPIIO,POSIX measures the independent points both ways
    (a POSIX point has no collective twin); predict takes a POSIX phase's
    bandwidth from the POSIX points, an MPI-IO phase's from the MPI-IO ones, and
    without POSIX points says it used MPI-IO's."""
    import pyarrow.parquet as pq
    out = tmp_path / "char"
    proc = subprocess.run(IOMODEL + ["characterize", "--vc", str(local_vc), "--backend", "builtin",
                                     "--sizes", "4k", "--np", "1", "--ops", "write", "--access", "unique",
                                     "--collective", "collective,independent", "--api", "MPIIO,POSIX",
                                     "--bytes", "64k", "--no-one-op", "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    points = pq.read_table(out / "profile.parquet").to_pylist()
    assert sorted((p["api"], p["collective"]) for p in points) == [
        ("MPIIO", False), ("MPIIO", True), ("POSIX", False)]
    assert {p["api"]: p for p in points if not p["collective"]}["POSIX"]["bandwidth_Bps"] > 0
    model = model_of(traced("stdio_rw", 1, 16, 4096, posix=True), tmp_path)
    path = tmp_path / "stdio.json"
    path.write_text(json.dumps(model))
    prof = f"local={out / 'profile.parquet'}"
    pred = subprocess.run(IOMODEL + ["predict", str(path), "--vc", str(local_vc), "--profile", prof, "--json"],
                          capture_output=True, text=True)
    assert pred.returncode == 0, pred.stderr
    notes = [p["note"] for p in json.loads(pred.stdout)["phases"]]
    assert len(notes) == 2 and not any("MPI-IO's used" in n for n in notes)    # POSIX's own points
    vc3 = subprocess.run(IOMODEL + ["predict", str(path), "--vc", "vc3", "--json"], capture_output=True,
                         text=True)                                # Table VII: MPI-IO points only
    assert vc3.returncode == 0, vc3.stderr
    assert all("no POSIX point measured (characterize --api POSIX): MPI-IO's used" in p["note"]
               for p in json.loads(vc3.stdout)["phases"])


# ------------------------------------------------------------- what is followed

@BOTH_MPIS
def test_the_layer_under_mpiio_on_request(traced, tmp_path, mpi):
    """basic_c with IOMODEL_UNDER_MPI=1: the POSIX calls the MPI-IO library (Open
    MPI's OMPIO, MPICH's ROMIO) makes inside
    its calls are recorded as "NAME under MPI", every byte basic_c writes and
    reads through MPI-IO reaches the file through them (2 ranks: 3 collective
    blocks of 1024 B and one of 512 B each written, 1024 + 512 B each read),
    and the model is the one without them."""
    on = traced("basic_c", 2, posix=True, env={"IOMODEL_UNDER_MPI": "1"})
    ev = on.trace().events.to_pylist()
    paths = on.trace().paths
    under = [e for e in ev if e["routine"].endswith(" under MPI")]
    assert under and all(not e["routine"].startswith("MPI_") for e in under)
    on_file = [e for e in under if e["file_id"] >= 0 and os.path.basename(paths[e["file_id"]]) == "shared.dat"]
    assert sum(e["bytes"] for e in on_file if e["routine"].startswith("pwrite")) == 2 * (3 * 1024 + 512)
    assert sum(e["bytes"] for e in on_file if e["routine"].startswith("pread")) == 2 * (1024 + 512)
    with_layer = facts(model_of(on, tmp_path))
    assert with_layer == facts(model_of(traced("basic_c", 2), tmp_path))


def test_a_program_without_mpi_is_traced_as_one_process(build_dir, tmp_path):
    """serial_stdio run by `iomodel trace` directly: rank 0 of 1, ended by its
    exit; /etc/hostname (a system file) and the `cat` it starts are not traced."""
    data, trace = tmp_path / "data", tmp_path / "trace"
    data.mkdir()
    proc = subprocess.run(IOMODEL + ["trace", "-o", str(trace), "--", str(build_dir / "serial_stdio"),
                                     str(data)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in trace.iterdir()) == ["rank-000000.iot"]
    from iomodel.analyzer import Trace
    t = Trace(trace)
    assert (t.ranks["nranks"].to_pylist(), t.ranks["ended_by"].to_pylist()) == ([1], ["exit (not an MPI program)"])
    got = [(e["routine"], os.path.basename(t.paths[e["file_id"]]), e["offset"], e["bytes"])
           for e in sorted(t.events.to_pylist(), key=lambda e: e["seq"])]
    assert got == [("fopen", "serial.dat", 0, 0), ("fwrite", "serial.dat", 0, 1000),
                   ("fwrite", "serial.dat", 1000, 1000), ("fwrite", "serial.dat", 2000, 1000),
                   ("fclose", "serial.dat", 0, 0), ("open", "serial.dat", 0, 0),
                   ("read", "serial.dat", 0, 3000), ("close", "serial.dat", 0, 0)]
    assert (data / "copy.dat").stat().st_size == 3000


@pytest.mark.parametrize("args, lines", [
    ((), ["failed calls 4 POSIX and stdio (fopen 2, open 2)"]),
    (("mpi",), ["failed calls 2 MPI, returned an MPI error (MPI_File_open 2)",
                "failed calls 4 POSIX and stdio (fopen 2, open 2)"]),
])
def test_failed_posix_calls_are_no_mpi_errors(traced, args, lines):
    """failed_opens, 2 ranks: each rank's open and fopen of a file that is not
    there fail (ENOENT), 4 POSIX and stdio calls in all; with "mpi", the
    collective MPI_File_open of a missing file returns an MPI error on both
    ranks.  trace-info counts and words the two apart, and says nothing of MPI
    errors where no MPI routine failed (NAS BT-IO's epio, which makes no MPI-IO
    call, showed "failed calls 2 (returned an MPI error)" for its opens)."""
    run = traced("failed_opens", 2, *args, posix=True)
    proc = subprocess.run(IOMODEL + ["trace-info", str(run.trace_dir)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stdout.splitlines() if line.startswith("failed")] == lines
    s = json.loads(subprocess.run(IOMODEL + ["trace-info", "--json", str(run.trace_dir)], capture_output=True,
                                  text=True, check=True).stdout)
    mpi = 2 if args else 0
    assert (s["errors"], s["mpi_errors"], s["posix_errors"]) == (4 + mpi, mpi, 4)
    assert s["failed"] == {"open": 2, "fopen": 2, **({"MPI_File_open": 2} if args else {})}


@pytest.mark.parametrize("env, followed", [
    ({}, ["ckpt.0.dat", "ckpt.1.dat"]),
    ({"IOMODEL_EXCLUDE": "DATA"}, []),
    ({"IOMODEL_EXCLUDE": "DATA", "IOMODEL_INCLUDE": "DATA/ckpt.1.dat"}, ["ckpt.1.dat"]),
])
def test_exclude_and_include_prefixes(traced, tmp_path, env, followed):
    data = tmp_path / "posix_fpp-data"
    env = {k: v.replace("DATA", str(data)) for k, v in env.items()}
    t = traced("posix_fpp", 2, 100, posix=True, env=env).trace()
    assert sorted(os.path.basename(p) for p in t.paths) == followed


@pytest.mark.parametrize("env, followed", [
    ({}, {"keep/0.dat": 100, "keep/1.dat": 100, "skip/0.dat": 200, "skip/1.dat": 200,
          "later.0.dat": 300, "later.1.dat": 300}),
    ({"IOMODEL_EXCLUDE": "skip"}, {"keep/0.dat": 100, "keep/1.dat": 100}),
    ({"IOMODEL_EXCLUDE": "./skip/", "IOMODEL_INCLUDE": "keep/../skip/later.1.dat"},
     {"keep/0.dat": 100, "keep/1.dat": 100, "later.1.dat": 300}),
])
def test_relative_exclude_and_include_prefixes(traced, env, followed):
    """relative_paths, 2 ranks started in their data folder D, every file named
    by a relative path: keep/r.dat (100 B), skip/r.dat (200 B), then, after
    chdir("skip"), later.r.dat (300 B, D/skip/later.r.dat).  A relative prefix
    is taken from D, the directory the run starts in, and cleaned ("./skip/" is
    D/skip, "keep/../skip/later.1.dat" is D/skip/later.1.dat); a relative open
    is matched from the directory it is made in, so later.r.dat is in skip."""
    run = traced("relative_paths", 2, posix=True, env=env, cwd="data")
    t = run.trace()
    written = {}
    for e in t.events.to_pylist():
        if e["write"]:
            path = t.paths[e["file_id"]]
            written[path] = written.get(path, 0) + e["bytes"]
    assert written == followed


def test_io_before_mpi_init_past_the_tracers_memory(traced):
    """1000 writes before MPI_Init with IOMODEL_BUFFER_BYTES=4096 (128 events a
    buffer): before MPI_Init the tracer holds at most 4 buffers (512 events), and
    stops while the event in hand and an extension record still fit, 3 short of
    the last: the open and 509 writes, 510 events, are kept, the rest of the
    writes and the close are not, the trace says so, and MPI_Init and
    MPI_Finalize follow."""
    run = traced("preinit_many", 1, 1000, posix=True, env={"IOMODEL_BUFFER_BYTES": "4096"})
    ev = events(run, 0)
    assert [e[0] for e in ev] == ["open"] + ["write"] * 509 + ["MPI_Init", "MPI_Finalize"]
    assert run.trace().gaps["notes"] == [
        "rank 0: the calls before MPI_Init filled the tracer's memory after 510 events; the later ones "
        "before it were not recorded"]


@BOTH_MPIS
def test_duplicated_descriptors_share_their_open_and_position(traced, mpi):
    """dup_log, 2 ranks: each writes its log through fd, then dup(fd), then
    dup2(fd, 100 + r), then dup(fd) again after fd is closed, each write at the
    position the descriptors share (100, 200, 300, 400 bytes at 0, 100, 300,
    600), and reads the 1000 bytes back through dup3 of a new open."""
    from iomodel.analyzer import load_ops
    run = traced("dup_log", 2, posix=True)
    assert run.proc.returncode == 0
    ops = load_ops(run.trace_dir)
    for r in ops.ranks:
        assert {ops.paths[p] for p in r.path} == {f"{run.data_dir}/log.{r.rank}"}
        assert list(zip(r.write.tolist(), r.offset.tolist(), r.bytes.tolist())) == \
            [(True, 0, 100), (True, 100, 200), (True, 300, 300), (True, 600, 400), (False, 0, 1000)]
