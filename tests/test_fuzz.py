"""The fuzz harness of bench/fuzzing.py, a fixed few inputs per reader: every
damaged trace, model, cluster file, Darshan log, type record, set of models
to extrapolate, launcher option list and output target is either accepted or
refused with one message naming it, never a traceback, a hang, a crash, more
than 2 GiB of memory, launcher options past the allow-list or an output
target left other than it should be.
Seeds come from hypothesis, derandomized, so a run is the same every time;
bench/fuzz.py runs 10^5 a reader (bench/results/fuzz.json)."""
import json
import os
import subprocess
import sys

import pytest
from conftest import IOMODEL, RANK_FILES, ROOT, mpirun, program_command
from hypothesis import HealthCheck, given, settings, strategies as st

sys.path.insert(0, str(ROOT / "bench"))
import fuzzing  # noqa: E402

MODEL = ROOT / "models" / "examples" / "btio-B-4.json"
INPUTS = 120          # per reader: about a minute for all three on 2 cores
SETTINGS = settings(max_examples=INPUTS, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def seeds(build_dir, tmp_path_factory):
    """Real inputs to damage: a trace of btio_like (views, collective calls) and
    of nonblocking (requests and their completions), and its model; btio_like
    again in one job file (IOMODEL_JOIN=1)."""
    work = tmp_path_factory.mktemp("fuzz")
    traces = []
    for name, args, join in (("btio_like", (8, 8, 8, 2), "0"), ("nonblocking", (), "0"),
                             ("btio_like", (8, 8, 8, 2), "1")):
        data, trace = work / f"{name}-data", work / f"{name}-trace-{join}"
        data.mkdir(exist_ok=True)
        subprocess.run(IOMODEL + ["trace", "-o", str(trace), "--",
                                  *mpirun(2, *program_command(build_dir, name), data, *args)],
                       check=True, capture_output=True, timeout=120,
                       env={**os.environ, "IOMODEL_JOIN": join})
        traces.append(trace)
    assert (traces[2] / "job.iot").exists()
    model = work / "btio_like.json"
    subprocess.run(IOMODEL + ["analyze", str(traces[0]), "-o", str(model), "-q"], check=True, timeout=120)
    return {"traces": traces, "model": model, "work": work}


def check(kind, seed, source, work, model=None):
    ((_, result, argv, message, *_),) = fuzzing.fuzz(kind, [seed], source, work, seconds=30, model=model)
    assert result in ("accepted", "refused"), f"seed {seed}: {result} in iomodel {argv}: {message}"


DARSHAN = ROOT / "tests" / "fixtures" / "darshan"
DARSHAN_INPUTS = 40     # each an `iomodel analyze` of its own: about a minute on 2 cores


def test_darshan_logs(tmp_path):
    """Damaged Darshan logs of Darshan 3.5.0 (MPI-IO and POSIX with DXT, stdio
    without) and of 3.1 and 3.2 (the PyDarshan wheel's), through `iomodel
    analyze` as a process of its own, so that a crash of libdarshan-util even
    at exit would count."""
    import darshan.log_utils
    logs = [DARSHAN / f"{n}.darshan" for n in ("ior_mpiio_e", "posix_fpp", "rank0_writer_stdio")] + \
        [darshan.log_utils.get_log_path(n) for n in ("ior_hdf5_example.darshan", "dxt.darshan")]

    @settings(max_examples=DARSHAN_INPUTS, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(0, 2 ** 32 - 1), st.integers(0, len(logs) - 1))
    def one(seed, which):
        check("darshan", seed, logs[which], tmp_path / "d")
    one()


@pytest.mark.parametrize("log, seed, rank, nprocs", [("ior_mpiio_e", 517, -1, 2),
                                                     ("ior_hdf5_example", 70016, 2 ** 63 - 1, 4)])
def test_a_damaged_rank_in_a_dxt_record(tmp_path, log, seed, rank, nprocs):
    """Found by bench/fuzz.py (issue 78): a DXT_MPIIO record's rank damaged to
    -1 (ior_mpiio_e, np 2) was refused as "'list' argument must have no negative
    elements" (numpy's, naming no file), and to 2^63 - 1 (the PyDarshan wheel's
    ior_hdf5_example, np 4) was an internal error (an int past a C long).  A
    rank outside the job's processes is damage, said of the file."""
    import darshan.log_utils
    src = DARSHAN / f"{log}.darshan" if log == "ior_mpiio_e" else darshan.log_utils.get_log_path(f"{log}.darshan")
    ((_, result, argv, message, *_),) = fuzzing.fuzz("darshan", [seed], src, tmp_path, seconds=30)
    assert (result, message) == ("refused", f"iomodel: error: {argv[1]}: damaged Darshan log: a DXT_MPIIO "
                                            f"record of rank {rank}, outside the job's {nprocs} processes")


@pytest.mark.parametrize("name", ["ior_mpiio_e.darshan", "posix_fpp.darshan"])
def test_darshan_region_editing_keeps_a_real_log_whole(tmp_path, name):
    """darshan_layout's regions of a real log (format 3.41) tile the file after
    its header, and every region inflated and deflated again (join_darshan,
    the harness's edits made good) gives a log whose model is the real one's:
    the header's map the harness writes is the one libdarshan-util reads."""
    data = (DARSHAN / name).read_bytes()
    size, fields, regions = fuzzing.darshan_layout(data)
    assert size == 1328 and regions[0][:2] == ["job", 1328]
    assert [r[1] for r in regions[1:]] == [r[1] + r[2] for r in regions[:-1]]
    assert regions[-1][1] + regions[-1][2] == len(data)
    raw = {r[0]: fuzzing.inflate(data[r[1]:r[1] + r[2]]) for r in regions}
    again = fuzzing.join_darshan(data, size, regions, raw)
    assert again != data            # deflated again: other bytes
    models = []
    for label, content in (("real", data), ("again", again)):
        log, out = tmp_path / f"{label}.darshan", tmp_path / f"{label}.json"
        log.write_bytes(content)
        subprocess.run(IOMODEL + ["analyze", str(log), "-o", str(out), "-q"], check=True, timeout=120)
        m = json.loads(out.read_text())
        m["source"]["path"] = None
        models.append(m)
    assert models[0] == models[1]


def test_traces(seeds):
    @SETTINGS
    @given(st.integers(0, 2 ** 32 - 1), st.integers(0, 2))
    def one(seed, which):
        check("trace", seed, seeds["traces"][which], seeds["work"] / "t")
    one()


def test_models(seeds):
    @SETTINGS
    @given(st.integers(0, 2 ** 32 - 1), st.booleans())
    def one(seed, paper):
        check("model", seed, MODEL if paper else seeds["model"], seeds["work"] / "m")
    one()


@pytest.mark.parametrize("kind", ["cluster", "launcher"])
def test_clusters(seeds, kind):
    """Damaged cluster files; and (launcher) random launchers, MPIs and option
    lists of the three families through ior --vc and predict: none accepted
    that holds an option not known safe."""
    @SETTINGS
    @given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["vc3", "vc4", "local"]))
    def one(seed, name):
        check(kind, seed, ROOT / "cluster" / "shipped" / f"{name}.yaml", seeds["work"] / kind,
              model=seeds["model"])
    one()


def test_spaces(tmp_path):
    """Damaged space files through compare --space and characterize --space
    --design (never trusted: a damaged start command must not run)."""
    @SETTINGS
    @given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["testbed/testbed-space.yaml",
                                                         "cluster/shipped/spaces/ec2-cc2.yaml"]))
    def one(seed, space):
        check("space", seed, ROOT / space, tmp_path / "s", model=MODEL)
    one()


def test_chunk_editing_recomputes_the_tracers_checksums(seeds):
    """split_chunks then join_chunks gives a real rank file back byte for byte:
    the harness's checksums are the tracer's, so its edits pass the checksum."""
    for f in seeds["traces"][1].glob("rank-*.iot"):
        data = f.read_bytes()
        head, chunks, tail = fuzzing.split_chunks(data)
        assert len(chunks) >= 3 and tail == b""
        assert fuzzing.join_chunks(head, chunks, tail) == data


@pytest.fixture(scope="module")
def type_traces(build_dir, tmp_path_factory):
    """Traces whose views' filetypes are type records: every constructor
    (view_types, 1 rank), a 16 Mi-piece pencil (huge_view, 2 ranks), two views
    of 4 Mi pieces whose accesses need the first 64 (many_views, 2 ranks)."""
    work = tmp_path_factory.mktemp("types")
    out = []
    for name, np_, args in (("view_types", 1, ()), ("huge_view", 2, ()), ("many_views", 2, (2, 64))):
        data, trace = work / f"{name}-data", work / f"{name}-trace"
        data.mkdir()
        subprocess.run(IOMODEL + ["trace", "-o", str(trace), "--",
                                  *mpirun(np_, *program_command(build_dir, name), data, *args)],
                       check=True, capture_output=True, timeout=120, env={**os.environ, **RANK_FILES})
        out.append(trace)
    return out


def test_type_records(type_traces, tmp_path):
    """Damage aimed at the type records and views (bench/fuzz_types.py), through
    trace-info --events and --parquet (every view flattened whole) and analyze."""
    @settings(max_examples=24, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(0, 2 ** 32 - 1), st.integers(0, 2))
    def one(seed, which):
        check("types", seed, type_traces[which], tmp_path / "t")
    one()


def test_type_record_editing_keeps_a_real_trace_whole(type_traces):
    """fuzz_types' records and join_records give view_types' metadata back byte
    for byte, and its type records decode and encode to themselves, each of
    the size its constructor makes of its children's: 21 records for
    view_types.c's views A to N (O, a darray, is stored as pieces): 4 named
    types (int, double, short, char), 5 subarrays (A to E), 2 vectors (D's
    element, F), 2 resized (D's element, N), and one hvector, indexed,
    hindexed, indexed_block, hindexed_block, struct, dup and contiguous."""
    import fuzz_types
    data = (type_traces[0] / "rank-000000.iot").read_bytes()
    _, chunks, _ = fuzzing.split_chunks(data)
    types = []
    for c in chunks:
        if c[0] == 2:
            recs = fuzz_types.records(c[5])
            assert fuzz_types.join_records(recs) == c[5]
            for r in recs:
                if r[0] == fuzz_types.T_TYPE:
                    t = fuzz_types.decode_type(r[2])
                    assert fuzz_types.encode_type(t) == r[2]
                    types.append(t)
    sizes = {}
    for t in types:
        assert fuzz_types.constructed_size(t, sizes) == t["size"], t
        sizes[t["tid"]] = t["size"]
    combiners = sorted(t["comb"] for t in types)
    assert combiners == [0] * 4 + [1, 2, 3, 3, 4, 5, 6, 7, 8, 9] + [10] * 5 + [11, 11]


PAPER_SETS = {"btio-B": {"models": [ROOT / "models" / "examples" / f"btio-B-{n}.json" for n in (4, 9, 16)]},
              "s3d": {"models": [ROOT / "models" / "examples" / f"s3d-{g}-{n}.json"
                                 for g, n in ((200, 8), (200, 16), (400, 8))], "sizes": [200, 200, 400]}}


def test_extrapolate_inputs(tmp_path):
    """Sets of the paper's models, one damaged, random targets (--np up to
    2^24, --size and --sizes right or wrong)."""
    import fuzz_extrapolate
    sets = fuzz_extrapolate.write_sets(tmp_path, PAPER_SETS)

    @SETTINGS
    @given(st.integers(0, 2 ** 32 - 1), st.booleans())
    def one(seed, s3d):
        check("extrapolate", seed, sets[s3d], tmp_path / "x")
    one()


def test_the_launcher_oracle_agrees_with_the_security_page():
    """The labels bench/fuzz_launcher.py counts bypasses by, against the
    allow-list's own reading (replay/trust.py): each option it calls dangerous
    for a family (from docs/security.md's lists) is refused for that family,
    each it draws as safe passes; and the family follows run.launcher and
    run.mpi as the page says (mpirun is Open MPI's here)."""
    import random
    import fuzz_launcher
    from iomodel.replay.trust import refused_options
    assert fuzz_launcher.family_of("mpirun", None) == {"openmpi"}
    assert fuzz_launcher.family_of("mpirun", "mpich") == {"mpich"}
    assert fuzz_launcher.family_of("mpiexec.hydra", None) == {"mpich"}
    assert fuzz_launcher.family_of("srun", "openmpi") == {"slurm"}
    for fam, units in fuzz_launcher.DANGEROUS.items():
        for words in units:
            assert refused_options(words, fam), (fam, words)
    rnd, safe = random.Random(78), 0
    for i in range(600):
        fam = ("openmpi", "mpich", "slurm")[i % 3]
        words, label = fuzz_launcher.unit(rnd, fam, last=False)
        if label == "safe":
            safe += 1
            assert refused_options(words, fam) == [], (fam, words)
        else:
            assert label == "dangerous" and refused_options(words, fam), (fam, words)
    assert safe > 300


def test_output_targets(seeds):
    """-o of analyze and plot to files, links, directories, pipes, devices and
    paths through a file, each checked after (bench/fuzz_outputs.py)."""
    @settings(max_examples=40, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(0, 2 ** 32 - 1))
    def one(seed):
        check("output", seed, seeds["traces"][0], seeds["work"] / "o", model=seeds["model"])
    one()


def test_the_target_check_sees_what_is_wrong(tmp_path):
    """Target.check, the harness's judge of an output target, says when one is
    not what it should be (each spoiled here by hand, as a command that
    reported success might have): a device made a file, a link replaced by a
    file, a directory written into and the command said to succeed, a file's
    set-user-ID bit lost, a pipe's reader given nothing, a temporary file left."""
    import random
    import stat
    import fuzz_outputs

    def target(kind):
        base, scratch = tmp_path / kind / "b", tmp_path / kind / "s"
        base.mkdir(parents=True)
        scratch.mkdir()
        return fuzz_outputs.Target(random.Random(1), base, ".json", scratch, kind=kind)

    t = target("device")
    t.path.unlink()
    t.path.write_text("{}")
    assert f"{t.path} was ({stat.S_IFCHR}," in t.check(0) and "now ('file'," in t.check(0)
    t = target("link-file")
    t.path.unlink()
    t.path.write_text("{}")
    assert f"{t.path} was ('link'," in t.check(0)
    t = target("dir")
    (t.path / "model.json").write_text("{}")
    assert "accepted an output dir target, which must be refused" in t.check(0)
    assert f"{t.path} was ('dir', " in t.check(0)
    t = target("file")
    t.path.write_text("{}")
    t.path.chmod(t.before[t.path][1] ^ 0o4000)
    assert f"{t.path}: bits or owner" in t.check(0)
    t = target("fifo-read")
    assert "the pipe's reader got b'', not the output" in t.check(0)
    t = target("absent")
    t.path.write_text("{}")
    (t.base / ".model.x1y2.tmp.json").write_text("")
    assert t.check(0) == f"temporary file left: {t.base / '.model.x1y2.tmp.json'}"


def test_rows_of_one_code_add_up_and_never_count_an_input_twice():
    import fuzz
    def row(code, a, b, refused, secs, slow, date="2026-12-05"):
        return {"code": code, "seeds": [[a, b]], "sources": ["x"], "limit_gib": 2, "inputs": b - a,
                "outcomes": {"accepted": b - a - refused, "refused": refused}, "seconds": secs,
                "examples": {"refused": [f"r{a}"]}, "most_memory": {"bytes": secs, "seed": a},
                "slowest": {"seconds": slow, "seed": a}, "date": date}
    one, two = row("abc", 0, 50, 10, 5.0, 0.5), row("abc", 50, 100, 20, 7.0, 0.25, "2026-12-06")
    m = fuzz.merged(one, two)
    assert (m["inputs"], m["outcomes"], m["seconds"], m["seeds"]) == \
        (100, {"accepted": 70, "refused": 30}, 12.0, [[0, 50], [50, 100]])
    assert m["slowest"] == {"seconds": 0.5, "seed": 0} and m["most_memory"] == {"bytes": 7.0, "seed": 50}
    assert m["examples"] == {"refused": ["r0", "r50"]} and m["date"] == "2026-12-05, 2026-12-06"
    assert fuzz.merged(one, row("abc", 40, 90, 0, 1.0, 0.1)) is None      # seeds 40-49 twice
    assert fuzz.merged(one, row("abd", 50, 100, 0, 1.0, 0.1)) is None     # another code
    assert fuzz.merged(row(None, 0, 50, 0, 1.0, 0.1), row(None, 50, 100, 0, 1.0, 0.1)) is None
    # a checkout with uncommitted changes: two such runs need not be of one code
    assert fuzz.merged(row("abc+changed", 0, 50, 0, 1.0, 0.1), row("abc+changed", 50, 100, 0, 1.0, 0.1)) is None
