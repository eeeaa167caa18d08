"""The fuzz harness of bench/fuzzing.py, a fixed few inputs per reader: every
damaged trace, model and cluster file is either accepted or refused with one
message naming it, never a traceback or a hang.  Seeds come from hypothesis,
derandomized, so a run is the same every time; bench/fuzz.py runs 10^5 a
reader (bench/results/fuzz.json)."""
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
