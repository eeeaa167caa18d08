"""Hostile and broken inputs (docs/security.md), each test written as the attack
or the accident it stops: what a model, a cluster file or a trace may hold
never runs a command, never chooses where iomodel writes, never ends in a
traceback; a run that goes wrong (a forked child, a signal, a missing rank, a
full disk) is said so, and nothing recorded is lost."""
import json
import os
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import IOMODEL, RANK_FILES, ROOT, mpi_env, mpirun, program_command

sys.path.insert(0, str(ROOT / "bench"))
import fuzzing  # noqa: E402  (the chunk-aware trace editing of the fuzz harness)

MODEL = ROOT / "models" / "examples" / "btio-B-4.json"
LOCAL = ROOT / "cluster" / "shipped" / "local.yaml"


def run(*args, cwd=None, timeout=120, env=None):
    return subprocess.run(IOMODEL + [str(a) for a in args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, env=env)


def refused(proc, message):
    """Exit 2, no traceback, and exactly one line: `iomodel: error: MESSAGE`."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == f"iomodel: error: {message}", proc.stderr


def model_named(tmp_path, name, src=MODEL):
    m = json.loads(Path(src).read_text())
    m["application"]["name"] = name
    path = tmp_path / "model.json"
    path.write_text(json.dumps(m))
    return path


def cluster_file(tmp_path, name="hostile.yaml", **run_fields):
    """local.yaml with `run:` fields replaced."""
    import yaml
    doc = yaml.safe_load(LOCAL.read_text())
    doc["run"].update(run_fields)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def small_model(traced, tmp_path):
    """The model of a real run of btio_like (2 ranks, 8^3 cells, 2 steps): 2 write
    phases of 20 KiB a rank, then a read phase, replayed in a second."""
    run_ = traced("btio_like", 2, 8, 8, 8, 2)
    out = tmp_path / "small.json"
    proc = run("analyze", run_.trace_dir, "-o", out, "-q")
    assert proc.returncode == 0, proc.stderr
    return out


# -------------------------------------------------------------- 1. shell commands from a model

def test_a_model_name_with_a_newline_stays_in_a_comment(tmp_path):
    """application.name = 'x' NEWLINE 'touch PWNED': the script `iomodel ior`
    writes has it in its first comment line, the newline a space, and runs
    nothing but the launcher (and its rm of the test files)."""
    model = model_named(tmp_path, "x\ntouch PWNED\n# ")
    proc = run("ior", model)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1] == "# IOR 4.x runs for the I/O model of x touch PWNED #  (np 4): one per run"
    commands = [shlex.split(l) for l in lines if l.strip() and not l.startswith("#")]
    assert {c[0] for c in commands} == {"set", "mpirun", "rm"}
    script = tmp_path / "ior.sh"
    script.write_text(proc.stdout.replace("mpirun", "true"))   # run it, every launch a no-op
    subprocess.run(["sh", str(script)], cwd=tmp_path, check=True)
    assert not (tmp_path / "PWNED").exists()


# -------------------------------------------------------------- 2. paths from a model

def test_a_model_name_with_dotdot_writes_under_the_current_folder(small_model, tmp_path):
    """A name of 'x/../../../escape' (which once put the replay's results three
    folders up) gives the default output folder replay-x_.._.._.._escape-local, in
    the current folder; nothing lands above it."""
    cwd = tmp_path / "here"
    cwd.mkdir()
    model = model_named(cwd, "x/../../../escape", src=small_model)
    vc = cluster_file(tmp_path, name="work.yaml", workdir=str(tmp_path / "work"))
    before = sorted(p.name for p in tmp_path.parent.iterdir())
    proc = run("replay", model, "--vc", vc, "--backend", "builtin", cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in cwd.iterdir()) == ["model.json", "replay-x_.._.._.._escape-local"]
    assert (cwd / "replay-x_.._.._.._escape-local" / "results.json").is_file()
    assert sorted(p.name for p in tmp_path.parent.iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["here", "work.yaml", "small.json", "btio_like-data", "btio_like-trace"])   # the work dir: gone again


# -------------------------------------------------------------- 3. programs from a cluster file

@pytest.mark.parametrize("options, shown", [
    (["--mca", "plm_rsh_agent", "AGENT"], "'--mca plm_rsh_agent AGENT'"),
    (["-x", "LD_PRELOAD=/tmp/evil.so"], "'-x LD_PRELOAD=/tmp/evil.so'"),
    (["--oversubscribe", "--launch-agent", "AGENT"], "'--launch-agent AGENT'"),
])
def test_launcher_options_that_run_programs_are_refused(small_model, tmp_path, options, shown):
    """A cluster file whose launcher options would start another program (the
    remote agent: a script that leaves a mark) or preload a library: replay,
    characterize and ior refuse it, run nothing and write nothing; the user
    who trusts the file says so with --trust-cluster."""
    agent = tmp_path / "agent.sh"
    agent.write_text(f"#!/bin/sh\ntouch {tmp_path / 'RAN'}\n")
    agent.chmod(0o755)
    options = [str(agent) if o == "AGENT" else o for o in options]
    vc = cluster_file(tmp_path, launcher_options=options, workdir=str(tmp_path / "work"))
    want = (f"{vc}: run.launcher_options: {shown.replace('AGENT', str(agent))} not known safe for Open "
            "MPI's mpirun (iomodel passes on only options it knows start no program, load no library "
            "and write no file); if you trust this file as you would a shell script, give "
            "--trust-cluster (docs/security.md)")
    for cmd in (["replay", small_model, "--vc", vc, "--backend", "builtin", "-o", tmp_path / "r"],
                ["characterize", "--vc", vc, "--backend", "builtin", "--sizes", "4k", "--np", "1",
                 "-o", tmp_path / "c"],
                ["ior", small_model, "--vc", vc]):
        refused(run(*cmd), want)
    assert not any((tmp_path / x).exists() for x in ("RAN", "r", "c", "work"))
    trusted = run("ior", small_model, "--vc", vc, "--trust-cluster")
    assert trusted.returncode == 0 and shlex.join(options) in trusted.stdout


def test_the_shipped_clusters_and_the_testbeds_need_no_trust():
    """Each as this machine reads it (mpirun: Open MPI's, its --version says;
    mpiexec.mpich: MPICH's; srun: Slurm's), none refused; the testbeds' options
    (--oversubscribe, --mca mpi_yield_when_idle 1, --mpi=pmix,
    --export=ALL,OMPI_MCA_mpi_yield_when_idle=1) are all there to be checked."""
    from iomodel.replay.trust import check_launcher_options, families
    from iomodel.cluster.description import load_cluster
    files = sorted(f for f in [*(ROOT / "cluster" / "shipped").glob("*.yaml"), *(ROOT / "testbed").glob("*.yaml")]
                   if yaml.safe_load(f.read_text())["format"] == "iomodel-cluster")    # not the testbed's space
    assert len(files) >= 9
    checked = {}
    for f in files:
        c = load_cluster(f)
        check_launcher_options(c)      # raises if refused
        checked[f.name] = (families(c), c.launcher_options)
    assert checked["local.yaml"] == (("openmpi",), ["--oversubscribe"])
    assert checked["local-mpich.yaml"] == (("mpich",), [])
    assert checked["testbed-disk.yaml"] == (("openmpi",), ["--oversubscribe", "--mca", "mpi_yield_when_idle", "1"])
    assert checked["testbed-srun.yaml"] == (("slurm",), ["--mpi=pmix", "--export=ALL,OMPI_MCA_mpi_yield_when_idle=1"])


# -------------------------------------------------------------- 4. a YAML alias bomb

def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    """1.9 KB that expand to 9^9 values: refused before anything walks it."""
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("format: iomodel-cluster\nversion: 1\nname: bomb\n" + fuzzing.BOMB + "io_library: *g\n")
    want = (f"{bomb}: not a cluster description: its aliases expand it to more than 100000 values "
            "(a YAML alias bomb?)")
    for cmd in (["ior", MODEL, "--vc", bomb], ["predict", MODEL, "--vc", bomb]):
        t0 = time.monotonic()
        refused(run(*cmd, timeout=60), want)
        assert time.monotonic() - t0 < 30


# -------------------------------------------------------------- 5. traces damaged past their checksums

def edit_rank_file(path, edit):
    """Apply edit(header, chunks) to a rank file, every chunk's checksum made good again."""
    header, chunks, tail = fuzzing.split_chunks(Path(path).read_bytes())
    edit(header, chunks)
    Path(path).write_bytes(fuzzing.join_chunks(header, chunks, tail))


def meta_records(payload):
    """(offset, type, length) of each metadata record of a metadata chunk's payload."""
    out, pos = [], 0
    while pos + 16 <= len(payload):
        t, n, _ = struct.unpack_from("<IIQ", payload, pos)
        out.append((pos, t, n))
        pos += n
    return out


def _cut_routine_table(header, chunks):
    meta = next(c for c in chunks if c[0] == 2)
    pos, t, n = meta_records(meta[5])[0]
    assert t == 1
    struct.pack_into("<I", meta[5], pos + 16, 500)     # 500 names said, about 30 there


def _short_end(header, chunks):
    end = next(c for c in chunks if c[0] == 3)
    end[5] = end[5][:8]


def _huge_seq(header, chunks):
    ev = next(c for c in chunks if c[0] == 1)
    ev[2] = 2 ** 63                                    # the chunk's first event number


def _unknown_routine(header, chunks):
    ev = next(c for c in chunks if c[0] == 1)
    ev[5][32] = 200                                    # the second event's op: routine 200


def _view_past_its_record(header, chunks):
    for c in chunks:
        if c[0] == 2:
            for pos, t, n in meta_records(c[5]):
                if t == 3:
                    struct.pack_into("<Q", c[5], pos + 16 + 48, 2 ** 40)   # n blocks
                    return
    raise AssertionError("no view record")


def _meta_record(chunks, mtype, combiner=None):
    """(payload, offset) of the first metadata record of that type (a type record of
    that combiner)."""
    for c in chunks:
        if c[0] == 2:
            for pos, t, n in meta_records(c[5]):
                if t == mtype and (combiner is None or struct.unpack_from("<I", c[5], pos + 20)[0] == combiner):
                    return c[5], pos
    raise AssertionError(f"no metadata record of type {mtype}")


def _subarray_of_four_dimensions(header, chunks):
    payload, pos = _meta_record(chunks, 8, combiner=10)         # btio_like's 3-D subarray
    struct.pack_into("<i", payload, pos + 16 + 48, 4)           # its first integer: ndims


def _view_of_a_type_not_there(header, chunks):
    payload, pos = _meta_record(chunks, 3)
    struct.pack_into("<I", payload, pos + 16 + 60, 99)          # type ref: type 98


def _subarray_int(i, value):
    """Edit integer i of btio_like's subarray record: at 2 ranks rank 1's is
    [3, sizes 8 8 8, subsizes 4 8 8, starts 4 0 0, order 0] (dims 2 x 1 x 1)."""
    def edit(header, chunks):
        payload, pos = _meta_record(chunks, 8, combiner=10)
        struct.pack_into("<i", payload, pos + 16 + 48 + 4 * i, value)
    return edit


def _subarray_size(value):
    def edit(header, chunks):                                   # the type record's size field
        payload, pos = _meta_record(chunks, 8, combiner=10)
        struct.pack_into("<q", payload, pos + 16 + 24, value)
    return edit


def _view_field(at, value):
    def edit(header, chunks):                                   # etype size at 16, displacement at 8
        payload, pos = _meta_record(chunks, 3)
        struct.pack_into("<q", payload, pos + 16 + at, value)
    return edit


SUBARRAY_BAD = "corrupt metadata record (type 8): a subarray of sizes [8, 8, 8], subsizes "
VIEW_BAD = "corrupt metadata record (type 3): a view of etype size "


def _huge_nranks(header, chunks):
    struct.pack_into("<i", header, 20, 2 ** 31 - 1)    # the header's number of ranks


@pytest.mark.parametrize("edit, rank, problem", [
    (_huge_nranks, 1, "corrupt header: rank 1 of 2147483647 ranks (at most 16777216)"),
    (_cut_routine_table, 1, "corrupt metadata record (type 1): a routine table of 500 names holds"),
    (_short_end, 1, "corrupt: end chunk of 8 bytes"),
    (_huge_seq, 1, "corrupt: chunk of"),
    (_unknown_routine, 0, "corrupt: event 1 names routine number 200, which the routine table"),
    (_view_past_its_record, 1, "corrupt metadata record (type 3): a view of 1099511627776 blocks"),
    # a subarray's integers are 3 * ndims + 2 (ndims, sizes, subsizes, starts, order): 11 for 3-D
    (_subarray_of_four_dimensions, 1, "corrupt metadata record (type 8): a subarray type with 11 "
                                      "integers, 0 addresses and 1 types, not 14, 0 and 1"),
    (_view_of_a_type_not_there, 1, "corrupt metadata record (type 3): a view of type 98, which no "
                                   "type record before it describes"),
    # impossible descriptions: rank 1's subarray of 4 x 8 x 8 cells of 40 B (10240 B) at row 4
    (_subarray_int(7, -1), 1, SUBARRAY_BAD + "[4, 8, 8] and starts [-1, 0, 0] (order 0), which MPI would not make"),
    (_subarray_int(4, 9), 1, SUBARRAY_BAD + "[9, 8, 8] and starts [4, 0, 0] (order 0), which MPI would not make"),
    (_subarray_int(10, 2), 1, SUBARRAY_BAD + "[4, 8, 8] and starts [4, 0, 0] (order 2), which MPI would not make"),
    (_subarray_size(-8), 1, "corrupt metadata record (type 8): a subarray type of size -8"),
    (_subarray_size(10000), 1, "corrupt metadata record (type 8): a subarray type of size 10000, where its "
                               "constructor makes 10240 from its parts"),
    (_view_field(16, 0), 1, VIEW_BAD + "0, filetype size 10240 and displacement 0, which MPI_File_set_view "
                                       "would not take"),
    (_view_field(16, 2 ** 40), 1, VIEW_BAD + "1099511627776, filetype size 10240 and displacement 0, which "
                                             "MPI_File_set_view would not take"),
    (_view_field(8, -1), 1, VIEW_BAD + "40, filetype size 10240 and displacement -1, which MPI_File_set_view "
                                       "would not take"),
])
def test_damage_that_the_checksums_cannot_see(traced, tmp_path, edit, rank, problem):
    """A rank file edited with every chunk's checksum recomputed: trace-info and
    analyze name the file and the damage, exit 2, no traceback; --partial reads
    what comes before it."""
    trace = traced("btio_like", 2, 8, 8, 8, 2, env=RANK_FILES).trace_dir
    victim = trace / f"rank-{rank:06d}.iot"
    edit_rank_file(victim, edit)
    for cmd in (["trace-info", trace], ["analyze", trace, "-o", tmp_path / "m.json"]):
        proc = run(*cmd)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        line = proc.stderr.strip().splitlines()[-1]
        assert line.startswith(f"iomodel: error: {victim}: ") and problem in line, line
    assert not (tmp_path / "m.json").exists()
    assert run("trace-info", trace, "--partial").returncode == 0


# -------------------------------------------------------------- 6. huge numbers in a cluster file

@pytest.mark.parametrize("field, value, message", [
    ("rs", 99999999999999999999999999,
     "bandwidth[0].rs: expected a size from 1 to 4611686018427387904 bytes, got an integer of 26 digits"),
    ("np", 99999999999999999999999999,
     "bandwidth[0].np: expected an integer from 1 to 2147483647, got an integer of 26 digits"),
])
def test_huge_integers_in_bandwidth_points(tmp_path, field, value, message):
    import yaml
    doc = yaml.safe_load((ROOT / "cluster" / "shipped" / "vc3.yaml").read_text())
    doc["bandwidth"][0][field] = value
    vc = tmp_path / "huge.yaml"
    vc.write_text(yaml.safe_dump(doc))
    for cmd in (["predict", MODEL, "--vc", vc], ["compare", MODEL, "--vc", vc, "vc1"]):
        refused(run(*cmd), f"{vc}: {message}")


def test_a_request_of_2_to_the_60_bytes_is_refused_at_once(traced, tmp_path, local_vc):
    """s3d_like at 2 ranks (16^3 doubles): phase 2 writes 256 KiB a rank in
    4 collective calls through views of 16 KiB pieces.  Edited by hand (or
    extrapolated far) to one request of R = 2^60 - 1024 B a rank in pieces of
    480 B: a transfer no replay can make, more than the 8 * (2^31 - 1) B that
    IOR's MPIIO and the built-in replayer move in one call.  `ior` once spent
    half an hour looking for a piece size dividing R; `ior`, `replay`,
    `characterize --for` and `predict --replay` refuse it at once in one line
    naming the file and the phase, and `replay` writes nothing.  `predict`
    alone predicts it (no replay): the model's 2^61 B do not fit vc1's 160 GB."""
    app = traced("s3d_like", 2, "blocking")
    model = tmp_path / "s3d.json"
    assert run("analyze", app.trace_dir, "-o", model, "-q").returncode == 0
    m = json.loads(model.read_text())
    p, R = m["phases"][1], 2**60 - 1024
    assert (p["np"], p["iop"], p["rs"], p["offsets"]["piece"]) == (2, 4, 262144, 16384)
    extra = 2 * R - p["weight"]
    p.update(request_sizes=[R], iop=1, rs=R, rs_min=R, rs_max=R, weight=2 * R, bandwidth_Bps=None)
    p["offsets"]["piece"] = 480
    f = m["files"][p["file"]]
    f.update(iof_size=f["iof_size"] + extra, size=f["size"] + extra)
    m.update(weight=m["weight"] + extra, storage_capacity=m["storage_capacity"] + extra)
    model.write_text(json.dumps(m))
    message = (f"{model}: phase 2: a transfer (-t) of {R} B, more than IOR's MPIIO or the built-in "
               "replayer can move in one call (17179869176 B: 8-byte integers counted in an int)")
    out = tmp_path / "replay"
    for cmd in (["ior", model], ["ior", model, "--format", "json"], ["replay", model, "--vc", local_vc, "-o", out],
                ["characterize", "--vc", local_vc, "--for", model, "-o", out],
                ["predict", model, "--vc", local_vc, "--replay", out]):
        refused(run(*cmd, timeout=60), message)
    assert not out.exists()
    p = run("predict", model, "--vc", "vc1", timeout=60)
    assert p.returncode == 0 and "NOT FEASIBLE" in p.stdout
    assert f"storage: the model needs {m['storage_capacity'] / 1e9:.2f} GB" in p.stdout


# -------------------------------------------------------------- 7. a child after fork()

def test_a_forked_child_leaves_its_rank_trace_alone(traced):
    """The child exits at once (its atexit handlers run): each rank's trace still
    reads whole, ended by MPI_Finalize, with its 6 events."""
    run_ = traced("fork_exit", 2)
    t = run_.trace()
    assert t.errors == []
    assert t.ranks["ended_by"].to_pylist() == ["MPI_Finalize", "MPI_Finalize"]
    assert t.ranks["events"].to_pylist() == [6, 6]
    ev = t.events.to_pylist()
    assert [e["routine"] for e in ev if e["rank"] == 1] == [
        "MPI_Init", "MPI_File_open", "MPI_File_write_at", "MPI_File_write_at", "MPI_File_close", "MPI_Finalize"]
    assert [e["abs_offset"] for e in ev if e["routine"] == "MPI_File_write_at"] == [0, 2048, 1024, 3072]


# -------------------------------------------------------------- 8. a command killed by a signal

@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGTERM, signal.SIGKILL])
def test_trace_passes_a_signal_death_on_as_a_shell_does(tmp_path, sig):
    proc = run("trace", "-o", tmp_path / "t", "--", "sh", "-c", f"kill -{sig.name[3:]} $$")
    assert proc.returncode == 128 + sig


# -------------------------------------------------------------- 9. missing and empty ranks

def test_a_missing_rank_file_is_said_and_the_model_marked_partial(traced, tmp_path, local_vc):
    """basic_c at 4 ranks, rank 2's trace file removed: trace-info and analyze
    say so, the model is partial, `show` prints it, and `predict`, `compare`,
    `ior` and `replay` of the model say it on stderr in analyze's words."""
    run_ = traced("basic_c", 4, env=RANK_FILES)
    (run_.trace_dir / "rank-000002.iot").unlink()
    note = "no trace file for rank 2 of 4: its I/O is not in the trace"
    info = run("trace-info", run_.trace_dir)
    assert info.returncode == 0
    assert f"iomodel: warning: {run_.trace_dir}: {note}" in info.stderr.splitlines()
    assert "ranks        3 of 4 on 1 host(s)" in info.stdout
    out = tmp_path / "m.json"
    proc = run("analyze", run_.trace_dir, "-o", out)
    assert proc.returncode == 0
    assert f"iomodel: warning: {run_.trace_dir}: {note}; the model is partial" in proc.stderr.splitlines()
    model = json.loads(out.read_text())
    assert model["source"]["partial"] == {"missing_ranks": "2", "empty_ranks": None, "stopped_ranks": None,
                                          "unended_ranks": None,
                                          "notes": [note]}
    assert model["application"]["np"] == 4 and model["application"]["name"] == "basic_c"
    assert f"partial       {note}" in run("show", out).stdout.splitlines()
    said = f"iomodel: warning: {out}: {note}; the model is partial"
    for cmd in (["predict", out, "--vc", "vc4"], ["compare", out, "--vc", "vc1", "vc4"], ["ior", out],
                ["ior", out, "--format", "json"], ["replay", out, "--vc", local_vc, "-o", tmp_path / "r"]):
        p = run(*cmd)
        assert p.returncode == 0, (cmd, p.stderr)
        assert said in p.stderr.splitlines(), (cmd, p.stderr)


def wait_for(ready, seconds=60):
    """Poll `ready` until it holds or `seconds` pass; whether it held."""
    end = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def file_size(path):
    try:
        return path.stat().st_size
    except OSError:
        return -1


def test_a_rank_stopped_as_its_tracer_starts_leaves_a_readable_trace(build_dir, tmp_path):
    """init_exit, 4 ranks (they exit right after MPI_Init, as IOR given an option
    it does not know does), each waiting before MPI_Init for the test's go, given
    once it has made rank 1's trace file a named pipe: rank 1's tracer, opening
    it in MPI_Init, waits there (the kernel's wait_for_partner), and the others
    wait for rank 1 in the tracer's check that every rank can write its file (an
    MPI_Allreduce).  SIGTERM to rank 0 there (what mpirun sends every rank once
    one has exited), then mpirun stops the rest.  Rank 0's file is a readable
    trace: its header (rank 0 of 4), what it did before MPI_Init (fopen of
    pid.0, fprintf of its pid and a newline, fclose; MPI_Init's own event comes
    after the check), ended by the signal, its handler being in place; ranks 2
    and 3 the same, or their header alone where mpirun's SIGKILL came first;
    rank 1 has none.  `trace` says 3 of 4 ranks and trace-info reads the trace whole.
    Before, the tracer created the files empty there and wrote them after its
    barrier: three 0-byte files, `trace of 3 rank(s)`, and trace-info refused
    them."""
    data, trace = tmp_path / "data", tmp_path / "trace"
    data.mkdir()
    proc = subprocess.Popen(IOMODEL + ["trace", "-o", str(trace), "--",
                                       *map(str, mpirun(4, build_dir / "init_exit", data, "wait"))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: all(file_size(data / f"pid.{r}") > 1 for r in range(4)))
        pid = {r: int((data / f"pid.{r}").read_text()) for r in range(4)}
        os.mkfifo(trace / "rank-000001.iot")
        (data / "go").touch()
        wchan = Path(f"/proc/{pid[1]}/wchan")
        assert wait_for(lambda: wchan.exists() and wchan.read_text() == "wait_for_partner")
        # the header and the stop record the tracer reserves after it: 256 + 96 bytes
        wait_for(lambda: file_size(trace / "rank-000000.iot") >= 352, seconds=20)
        time.sleep(0.2)             # rank 0 on into the check (its handler was set before)
        (trace / "rank-000001.iot").unlink()
        os.kill(pid[0], signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    lines = [line for line in err.splitlines() if line.startswith("iomodel: ")]
    assert lines[-2:] == [f"iomodel: trace of 3 of 4 rank(s) in {trace}",
                          "iomodel: warning: 1 rank(s) wrote no trace: the trace is partial "
                          "(iomodel trace-info says which)"]
    from iomodel.analyzer import Trace
    t = Trace(trace)
    ranks = {r["rank"]: r for r in t.ranks.to_pylist()}
    assert sorted(ranks) == [0, 2, 3]
    assert ranks[0]["ended_by"] == "signal SIGTERM"
    assert all(r["nranks"] == 4 and r["damage"] is None for r in ranks.values())
    assert {ranks[r]["ended_by"] for r in (2, 3)} <= {"signal SIGTERM", None}
    got = sorted((e["rank"], e["seq"], e["routine"], os.path.basename(t.paths[e["file_id"]]), e["bytes"])
                 for e in t.events.to_pylist())
    assert [g for g in got if g[0] == 0 or ranks[g[0]]["ended_by"]] == [
        (r, k, name, f"pid.{r}", n) for r in (0, 2, 3) if ranks[r]["ended_by"]
        for k, (name, n) in enumerate([("fopen", 0), ("fprintf", len(str(pid[r])) + 1), ("fclose", 0)])]
    info = run("trace-info", trace)
    assert info.returncode == 0, info.stderr
    assert f"iomodel: warning: {trace}: no trace file for rank 1 of 4: its I/O is not in the trace" \
        in info.stderr.splitlines()
    assert "ranks        3 of 4 on 1 host(s)" in info.stdout


def test_an_empty_rank_file_is_a_rank_missing_not_damage(build_dir, tmp_path):
    """basic_c, 4 ranks, rank files kept, run by a shell that then empties rank
    2's file: what a rank stopped between its tracer's creating the file and
    writing its header (a few microseconds now) leaves.  `trace` counts 3 of 4
    ranks and names the empty file; trace-info and analyze read the other three
    without --partial, each saying that rank 2's file is empty; the model is
    partial, rank 2 missing.  Before, `trace` said 4 ranks, and trace-info and
    analyze refused the trace ("file is 0 bytes, shorter than the 256-byte
    header"), trace-info with a --partial hint."""
    data, trace = tmp_path / "data", tmp_path / "trace"
    data.mkdir()
    launch = " ".join(shlex.quote(str(a)) for a in mpirun(4, build_dir / "basic_c", data))
    proc = run("trace", "-o", trace, "--", "sh", "-c", f"{launch} && : > {trace}/rank-000002.iot",
               env={**os.environ, **RANK_FILES, "IOMODEL_POSIX": "0"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines()[-3:] == [
        f"iomodel: trace of 3 of 4 rank(s) in {trace}",
        "iomodel: warning: 1 rank file(s) empty (rank-000002.iot): those ranks were stopped after the "
        "tracer created their files in MPI_Init, before it wrote anything",
        "iomodel: warning: 1 rank(s) wrote no trace: the trace is partial (iomodel trace-info says which)"]
    note = ("rank 2 of 4: its trace file is empty (stopped after the tracer created it in MPI_Init, "
            "before it wrote anything): its I/O is not in the trace")
    info = run("trace-info", trace)
    assert info.returncode == 0, info.stderr
    assert info.stderr.splitlines() == [f"iomodel: warning: {trace}: {note}"]
    assert "ranks        3 of 4 on 1 host(s)" in info.stdout
    out = tmp_path / "m.json"
    proc = run("analyze", trace, "-o", out, "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [f"iomodel: warning: {trace}: {note}; the model is partial"]
    model = json.loads(out.read_text())
    assert model["source"]["partial"] == {"missing_ranks": "2", "empty_ranks": None, "stopped_ranks": None,
                                          "unended_ranks": None,
                                          "notes": [note]}
    assert [p["np"] for p in model["phases"]] and all(p["np"] == 3 for p in model["phases"])


def test_analyze_partial_models_what_comes_before_the_damage(traced, tmp_path):
    """basic_c, 4 ranks, rank files kept; rank 2's file cut 10 bytes into its
    chunk of events (a rank killed while writing it).  trace-info and analyze
    refuse it, each naming its own --partial; `analyze --partial` writes the
    model of what comes before the damage, marked partial with the damage as
    its note: rank 2's events were all in that chunk, so every phase has the
    other 3 processes."""
    run_ = traced("basic_c", 4, env=RANK_FILES)
    f = run_.trace_dir / "rank-000002.iot"
    _, chunks, _ = fuzzing.split_chunks(f.read_bytes())
    at, offsets = fuzzing.HEADER.size, []
    for c in chunks:
        offsets.append((at, c[0]))
        at += fuzzing.CHUNK.size + len(c[5])
    events_at = next(o for o, kind in offsets if kind == 1)
    with open(f, "r+b") as fh:
        fh.truncate(events_at + 10)
    damage = f"{f}: at byte {events_at}: truncated: 10 bytes left where a 56-byte chunk header was expected"
    refused(run("trace-info", run_.trace_dir), f"{damage} (--partial reads what comes before the damage)")
    out = tmp_path / "m.json"
    refused(run("analyze", run_.trace_dir, "-o", out),
            f"{damage} (--partial models what comes before the damage)")
    assert not out.exists()
    proc = run("analyze", run_.trace_dir, "-o", out, "--partial", "-q")
    assert proc.returncode == 0, proc.stderr
    note = f"{damage}: what comes before the damage is kept"
    assert proc.stderr.splitlines() == [f"iomodel: warning: {run_.trace_dir}: {note}; the model is partial"]
    model = json.loads(out.read_text())
    assert model["source"]["partial"]["notes"] == [note]
    assert model["phases"] and all(p["np"] == 3 for p in model["phases"])


def test_a_header_claiming_millions_of_ranks_is_said_at_once(traced):
    """Both rank files of a 2-rank run edited to claim 2^24 ranks (the most a
    run may have): the 16,777,214 ranks missing are said as one range, without
    listing them (a claim of 2^31 once took 24 GB and the OOM killer)."""
    trace = traced("basic_c", 2, env=RANK_FILES).trace_dir
    for r in (0, 1):
        edit_rank_file(trace / f"rank-{r:06d}.iot", lambda h, c: struct.pack_into("<i", h, 20, 2 ** 24))
    info = run("trace-info", trace)
    assert info.returncode == 0, info.stderr
    assert f"iomodel: warning: {trace}: no trace file for ranks 2-16777215 of 16777216: their I/O is not " \
        "in the trace" in info.stderr.splitlines()
    assert "ranks        2 of 16777216 on 1 host(s)" in info.stdout


def test_a_rank_killed_before_its_first_buffer_is_said(traced, tmp_path):
    """Rank 0's file cut to its header (what a rank killed outright before its
    first flush leaves): the model keeps the program's name from rank 1."""
    run_ = traced("basic_c", 2, env=RANK_FILES)
    f = run_.trace_dir / "rank-000000.iot"
    f.write_bytes(f.read_bytes()[:256])
    out = tmp_path / "m.json"
    proc = run("analyze", run_.trace_dir, "-o", out, "-q")
    assert proc.returncode == 0, proc.stderr
    model = json.loads(out.read_text())
    assert model["source"]["partial"]["empty_ranks"] == "0"
    assert model["source"]["partial"]["notes"] == [
        "rank 0: no events while the others have some (killed before the tracer wrote its buffer?)"]
    assert (model["application"]["name"], model["application"]["np"]) == ("basic_c", 2)


# -------------------------------------------------------------- 10. a full disk

@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs (root only)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    d = tmp_path / "small"
    d.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(d)], check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d)], check=False)


def test_tracing_stopped_by_a_full_disk_is_recorded(build_dir, tmp_path, small_disk):
    """2 ranks of 20,000 zero-byte writes (20,004 events, 640 KB a rank) into a
    64 KiB disk: the run ends normally, each rank's trace keeps its whole
    chunks and says where it stopped, why, and how the run ended."""
    data = tmp_path / "data"
    data.mkdir()
    trace = small_disk / "trace"
    proc = subprocess.run(IOMODEL + ["trace", "-o", str(trace), "--",
                                     *mpirun(2, *program_command(build_dir, "many_events"), data, 20000)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "IOMODEL_BUFFER_BYTES": "8192"})
    assert proc.returncode == 0, proc.stderr
    assert "trace write failed (No space left on device)" in proc.stderr
    info = run("trace-info", trace, "--json")
    assert info.returncode == 0, info.stderr
    s = json.loads(info.stdout)
    assert s["ended_by"] == ["MPI_Finalize"]
    from iomodel.analyzer import Trace
    t = Trace(trace)
    kept = t.ranks["events"].to_pylist()
    assert 0 < sum(kept) and all(k < 20004 and k % 256 == 0 for k in kept)   # whole 256-event chunks
    for row in t.ranks.to_pylist():
        assert row["stopped"] == f"after {row['events']} of 20004 events: ENOSPC (No space left on device)"
    assert len(s["gaps"]) == 2 and all("the run went on and ended by MPI_Finalize" in g for g in s["gaps"])


# -------------------------------------------------------------- 11. outputs whole or not at all

def test_analyze_on_a_full_disk_leaves_no_model(traced, small_disk):
    run_ = traced("basic_c", 2)
    (small_disk / "fill").write_bytes(b"\0" * (64 << 10))   # as much as it takes
    proc = run("analyze", run_.trace_dir, "-o", small_disk / "model.json", "-q")
    assert proc.returncode == 2 and "No space left on device" in proc.stderr.splitlines()[-1]
    assert sorted(p.name for p in small_disk.iterdir()) == ["fill"]


def test_analyze_makes_the_output_folder(traced, tmp_path):
    run_ = traced("basic_c", 2)
    out = tmp_path / "new" / "folder" / "m.json"
    assert run("analyze", run_.trace_dir, "-o", out, "-q").returncode == 0
    assert json.loads(out.read_text())["application"]["np"] == 2


# -------------------------------------------------------------- 12. work directories

@pytest.mark.parametrize("workdir, why", [
    ("/", "a system directory"),
    ("/etc", "a system directory"),
    ("/usr/local/share", "a system directory"),
    ("LINK", "a system directory"),
    ("../../../../../../../..", "a system directory"),
    ("FULL", "holds files that are not iomodel's"),
])
def test_dangerous_work_directories_are_refused(small_model, tmp_path, workdir, why):
    (tmp_path / "link").symlink_to("/etc")
    full = tmp_path / "full"
    full.mkdir()
    (full / "thesis.tex").write_text("mine")
    raw = {"LINK": str(tmp_path / "link"), "FULL": str(full)}.get(workdir, workdir)
    resolved = os.path.realpath(raw)
    vc = cluster_file(tmp_path, workdir=raw)
    shown = f"run.workdir {raw!r}" + (f" ({resolved})" if resolved != raw else "")
    tail = {"a system directory": "a system directory; give a directory of its own for iomodel's test "
                                  "files, e.g. /tmp/iomodel-work or a new folder on the cluster's file system",
            "holds files that are not iomodel's": "holds files that are not iomodel's; give a directory of its "
                                                  "own (iomodel creates it if it does not exist)"}[why]
    refused(run("replay", small_model, "--vc", vc, "--backend", "builtin", "-o", tmp_path / "r",
                cwd=tmp_path), f"{shown}: {tail}")
    assert not (tmp_path / "r").exists() and os.listdir(full) == ["thesis.tex"]


def test_a_tilde_work_directory_is_the_home_one(small_model, tmp_path):
    """~/NAME is the home directory's NAME, made for the replay and removed after,
    not a folder named '~'."""
    home = tmp_path / "home"
    home.mkdir()
    vc = cluster_file(tmp_path, workdir="~/iomodel-work")
    proc = run("replay", small_model, "--vc", vc, "--backend", "builtin", "-o", tmp_path / "r",
               cwd=tmp_path, env={**os.environ, "HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "~").exists() and os.listdir(home) == []
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert all(str(home / "iomodel-work") in " ".join(e["command"]) for e in results["runs"].values())


# -------------------------------------------------------------- 13. small things

def test_trace_info_into_head_is_quiet(traced):
    run_ = traced("basic_c", 2)
    proc = subprocess.run(" ".join(map(shlex.quote, IOMODEL + ["trace-info", str(run_.trace_dir), "--events"]))
                          + " | head -1", shell=True, capture_output=True, text=True)
    assert proc.stdout.startswith("rank") and proc.stderr == ""


def test_trace_info_of_a_rank_not_there(traced):
    run_ = traced("basic_c", 2)
    refused(run("trace-info", run_.trace_dir, "--events", "--rank", 99),
            f"{run_.trace_dir}: no rank 99 in the trace (ranks 0-1)")


@pytest.mark.parametrize("edit, message", [
    (lambda m: m.update(runs=[]), "runs: they cover phases 1 to 0 of 41"),
    (lambda m: m.update(order=[]), "order: empty, but some process takes part in two phases"),
    (lambda m: m["phases"][2].update(colective=True), "phases[2].colective: unknown field (did you mean 'collective'?)"),
    (lambda m: m["application"].update(np=10 ** 30), "application.np: expected an integer from 1 to 16777216, got an integer of 31 digits"),
    # sizes that disagree (btio-B-4's first phase: one request of 10612080 B a process)
    (lambda m: m["phases"][0].update(request_sizes=[10612000]),
     "phases[0].rs: 10612080, but its request sizes add up to 10612000"),
    (lambda m: m["phases"][0].update(rs_max=10),
     "phases[0].rs_min, rs_max: 10612080 and 10, but the phase's sizes are 10612080 to 10612080, rs 10612080"),
    (lambda m: m["phases"][0].update(rs_groups=[{"ranks": "0-1", "rs": 10612080, "request_sizes": [10612080]},
                                                {"ranks": "2", "rs": 10612080, "request_sizes": [10612080]}]),
     "phases[0].rs_groups: their ranks are not the phase's (0-3), each once"),
    (lambda m: m["phases"][0].update(rs_groups=[{"ranks": "0-1", "rs": 10612080, "request_sizes": [10612080]},
                                                {"ranks": "2-3", "rs": 8, "request_sizes": [8]}]),
     "phases[0].weight: 42448320, but its groups of ranks move 21224176"),
])
def test_the_model_validator_refuses(tmp_path, edit, message):
    m = json.loads(MODEL.read_text())
    edit(m)
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps(m))
    refused(run("show", bad), f"{bad}: {message}")


def test_show_prints_a_models_strings_as_one_line_of_text(tmp_path):
    """A model whose name, command and file name hold a newline, a carriage
    return and terminal escapes (ESC [2J clears the screen, ESC ]0; sets the
    title): show prints them as spaces, each line of the table one line."""
    m = json.loads(MODEL.read_text())
    m["application"]["name"] = "bt\nphase 99 forged"
    m["application"]["command"] = ["./bt", "\x1b[2J\x1b]0;owned\x07"]
    m["files"][0]["name"] = "/data/btio.out\rx"
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps(m))
    proc = run("show", bad)
    assert proc.returncode == 0 and "\x1b" not in proc.stdout and "\r" not in proc.stdout and "\x07" not in proc.stdout
    lines = proc.stdout.splitlines()
    assert lines[0] == "application   bt phase 99 forged: 4 processes"
    assert lines[1] == "command       ./bt  [2J ]0;owned"
    assert any(line.startswith("file 0        /data/btio.out x: ") for line in lines)


def test_a_model_with_a_key_twice_is_refused(tmp_path):
    text = MODEL.read_text().replace('"weight":', '"weight": 0, "weight":', 1)
    bad = tmp_path / "m.json"
    bad.write_text(text)
    refused(run("show", bad), f"{bad}: not a model: duplicate key 'weight'")


def test_deletes_and_failed_opens_keep_their_file_names(traced):
    run_ = traced("file_names", 2)
    none, scratch = str(run_.data_dir / "missing" / "none.dat"), str(run_.data_dir / "scratch.dat")
    t = run_.trace()
    paths = t.paths
    ev = [(e["rank"], e["routine"], paths[e["file_id"]] if e["file_id"] >= 0 else None, e["error"])
          for e in t.events.to_pylist()]
    assert ev == [(0, "MPI_Init", None, False), (0, "MPI_File_open", none, True),
                  (0, "MPI_File_open", scratch, False), (0, "MPI_File_close", scratch, False),
                  (0, "MPI_File_delete", scratch, False), (0, "MPI_Finalize", None, False),
                  (1, "MPI_Init", None, False), (1, "MPI_File_open", none, True),
                  (1, "MPI_Finalize", None, False)]
    info = run("trace-info", run_.trace_dir)
    assert [l.split()[0] for l in info.stdout.split("\n\n")[1].splitlines()[1:]] == sorted([none, scratch])


# ------------------------------------------------------------- where -o writes

LOG = ROOT / "tests" / "fixtures" / "darshan" / "ior_posix_shared_e.darshan"


def test_an_output_path_that_is_a_directory_or_a_link_to_one_is_refused(tmp_path):
    """-o naming a directory, or a symbolic link to one: one line, exit 2, the
    directory and the link as they were (the link was replaced by a file)."""
    pytest.importorskip("darshan")
    (tmp_path / "d").mkdir()
    (tmp_path / "ld").symlink_to("d")
    for name in ("d", "ld"):
        refused(run("analyze", LOG, "-o", name, "-q", cwd=tmp_path),
                f"{name}: is a directory (give a file's name)")
    assert (tmp_path / "ld").is_symlink() and os.readlink(tmp_path / "ld") == "d"
    assert os.listdir(tmp_path / "d") == [] and sorted(os.listdir(tmp_path)) == ["d", "ld"]


def test_an_output_file_keeps_its_mode_and_a_link_its_target(tmp_path):
    """A 0600 model file stays 0600 when written again; -o through a symbolic
    link writes the file it points to, and the link stays a link."""
    pytest.importorskip("darshan")
    private = tmp_path / "private.json"
    private.write_text("old")
    private.chmod(0o600)
    assert run("analyze", LOG, "-o", private, "-q").returncode == 0
    assert (private.stat().st_mode & 0o777, json.loads(private.read_text())["format"]) == (0o600, "iomodel-model")
    (tmp_path / "real.json").write_text("old")
    (tmp_path / "link.json").symlink_to("real.json")
    assert run("analyze", LOG, "-o", tmp_path / "link.json", "-q").returncode == 0
    assert os.readlink(tmp_path / "link.json") == "real.json"
    assert json.loads((tmp_path / "real.json").read_text())["format"] == "iomodel-model"
    assert sorted(os.listdir(tmp_path)) == ["link.json", "private.json", "real.json"]


def waiting_for_a_writer(pid, seconds=30):
    """Wait until process `pid` is in its open of a named pipe, waiting for a
    writer (it is then the pipe's reader; a fixed sleep lost that race on a
    loaded machine)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        wchan = Path(f"/proc/{pid}/wchan").read_text()
        if wchan == "wait_for_partner":         # fs/pipe.c
            return
        if wchan == "0" and Path(f"/proc/{pid}/syscall").read_text().split()[0] == "257":
            return                              # the kernel hides where: in openat, at least
        time.sleep(0.01)
    raise AssertionError(f"process {pid} never came to open the named pipe")


def test_outputs_go_through_devices_and_read_pipes(tmp_path):
    """A character device (a /dev/null of our own, made with mknod as root) is
    written through and stays a device; a named pipe a process reads gets the
    model; one nobody reads is refused at once (not a hang, not a regular file
    in its place); a block device is refused.  No temporary file is left."""
    from iomodel.outputs import write_atomic
    pytest.importorskip("darshan")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    refused(run("analyze", LOG, "-o", fifo, "-q", timeout=30), f"{fifo}: is a named pipe no process reads: not written")
    assert fifo.is_fifo()
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    waiting_for_a_writer(reader.pid)
    assert run("analyze", LOG, "-o", fifo, "-q", timeout=30).returncode == 0
    assert json.loads(reader.communicate(timeout=30)[0])["format"] == "iomodel-model"
    assert fifo.is_fifo() and sorted(os.listdir(tmp_path)) == ["fifo"]
    if os.geteuid() != 0:
        pytest.skip("making devices needs root")
    null, blk = tmp_path / "null", tmp_path / "blk"
    os.mknod(null, 0o666 | 0o020000, os.makedev(1, 3))      # S_IFCHR: the kernel's null device
    os.mknod(blk, 0o600 | 0o060000, os.makedev(7, 255))     # S_IFBLK: a loop device number
    assert run("analyze", LOG, "-o", null, "-q").returncode == 0
    assert null.is_char_device() and null.stat().st_rdev == os.makedev(1, 3)
    with pytest.raises(OSError, match="is a block device: not written"):
        write_atomic(blk, "x")
    assert blk.is_block_device() and sorted(os.listdir(tmp_path)) == ["blk", "fifo", "null"]


def test_an_output_of_the_longest_name_and_one_with_a_set_user_id_bit(tmp_path):
    """Found by the fuzz bench (bench/fuzz_outputs.py): -o of a 250-byte name
    (names may have 255) was refused, naming a temporary file of 264 bytes
    (`.NAME.XXXXXXXX.tmp.json`) the file system would not take; and a file of
    mode 04755 lost its set-user-ID bit when written again (the owner set
    after the mode: chown clears that bit).  Now both are written, the mode and
    owner as they were, no temporary file left."""
    pytest.importorskip("darshan")
    long = tmp_path / ("n" * 245 + ".json")                    # 245 + 5 = 250 bytes
    assert run("analyze", LOG, "-o", long, "-q").returncode == 0
    assert json.loads(long.read_text())["format"] == "iomodel-model"
    suid = tmp_path / "suid.json"
    suid.write_text("old")
    os.chown(suid, 1, 1)
    suid.chmod(0o4755)
    assert run("analyze", LOG, "-o", suid, "-q").returncode == 0
    st = suid.stat()
    assert (st.st_mode & 0o7777, st.st_uid, st.st_gid) == (0o4755, 1, 1)
    assert json.loads(suid.read_text())["format"] == "iomodel-model"
    assert sorted(os.listdir(tmp_path)) == sorted([long.name, "suid.json"])


# -------------------------------------------------------------- a long trace directory

@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_a_long_trace_directory_keeps_the_rank_files_and_the_job_alive(programs, mpi, tmp_path):
    """A trace directory whose job file path is 250 characters long: Open MPI's
    MPI_File_open of DIR/job.iot aborted every traced process at MPI_Finalize
    (its shared-pointer file names overflow a buffer from 245 characters on).
    The run exits 0 as untraced, writes its log, and leaves its rank files
    (Open MPI) or its job file (MPICH): the same model either way."""
    left = 250 - len(str(tmp_path)) - len("/job.iot")      # "/" and 40 letters a folder, then the rest
    trace = tmp_path.joinpath(*["d" * 40] * (left // 41), "t" * (left % 41 - 1 if left % 41 > 1 else 1))
    assert len(str(trace / "job.iot")) in (250, 251)
    data = tmp_path / "data"
    data.mkdir()
    cmd = IOMODEL + ["trace", "-o", str(trace), "--", *mpirun(2, *program_command(programs, "coll_log"), data, 3,
                                                              mpi=mpi)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, **mpi_env(mpi)})
    assert proc.returncode == 0 and "buffer overflow" not in proc.stderr, proc.stderr
    assert (data / "run.0.log").read_bytes().count(b"\n") == 3
    files = sorted(p.name for p in trace.iterdir())
    assert files == (["rank-000000.iot", "rank-000001.iot"] if mpi == "openmpi" else ["job.iot"])
    proc = run("analyze", trace, "-o", tmp_path / "m.json", "-q")
    assert proc.returncode == 0, proc.stderr
    m = json.loads((tmp_path / "m.json").read_text())
    assert [(p["routine"], p["np"], p["rep"]) for p in m["phases"]] == [("MPI_File_write_at_all", 2, 3),
                                                                        ("write", 1, 3)]


def test_trace_info_prints_a_traces_names_as_one_line_of_text(programs, tmp_path):
    """A run whose files' folder is named with a terminal escape (ESC [2J
    clears the screen) and a newline: trace-info's summary and --events print
    them as spaces, the file's line one line."""
    data = tmp_path / "d\x1b[2J\nforged"
    data.mkdir()
    trace = tmp_path / "t"
    p = subprocess.run(IOMODEL + ["trace", "-o", str(trace), "--",
                                  *mpirun(2, *program_command(programs, "coll_log"), data, 1)],
                       capture_output=True, text=True, timeout=120, env={**os.environ, "IOMODEL_POSIX": "0"})
    assert p.returncode == 0, p.stderr
    for extra in ([], ["--events"]):
        out = run("trace-info", trace, *extra).stdout
        assert "\x1b" not in out and "forged" in out
        assert not [line for line in out.splitlines() if line.startswith("forged")]
    summary = run("trace-info", trace).stdout.splitlines()
    assert any(line.startswith(f"{tmp_path}/d [2J forged/out.dat  ") for line in summary)
