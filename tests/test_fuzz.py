"""The fuzz harness of bench/fuzzing.py, a fixed few inputs per reader: every
damaged trace, model, cluster file and Darshan log is either accepted or
refused with one message naming it, never a traceback, a hang or a crash.
Seeds come from hypothesis, derandomized, so a run is the same every time;
bench/fuzz.py runs 10^5 a reader (bench/results/fuzz.json)."""
import json
import os
import subprocess
import sys

import pytest
from conftest import IOMODEL, ROOT, mpirun, program_command
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
    ((_, result, argv, message),) = fuzzing.fuzz(kind, [seed], source, work, seconds=30, model=model)
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


def test_clusters(seeds):
    @SETTINGS
    @given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["vc3", "vc4", "local"]))
    def one(seed, name):
        check("cluster", seed, ROOT / "replay" / "clusters" / f"{name}.yaml", seeds["work"] / "c",
              model=seeds["model"])
    one()


def test_chunk_editing_recomputes_the_tracers_checksums(seeds):
    """split_chunks then join_chunks gives a real rank file back byte for byte:
    the harness's checksums are the tracer's, so its edits pass the checksum."""
    for f in seeds["traces"][1].glob("rank-*.iot"):
        data = f.read_bytes()
        head, chunks, tail = fuzzing.split_chunks(data)
        assert len(chunks) >= 3 and tail == b""
        assert fuzzing.join_chunks(head, chunks, tail) == data
