"""The testbed's single-node Slurm (issue 5): start it, replay a model through
`srun --mpi=pmix` with the built-in replayer, stop it, and nothing is left."""
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import ROOT, running

SLURM = ROOT / "testbed" / "slurm"
IOMODEL = [sys.executable, "-m", "iomodel"]


def daemon_pids(state):
    """The PIDs the testbed's daemons wrote."""
    files = (state / "slurmd.pid", state / "slurmctld.pid", state / "munge" / "munged.pid")
    return [f.read_text().strip() for f in files if f.exists()]



@pytest.fixture
def slurm(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("the testbed starts Slurm as root: run the tests as root")
    env = {**os.environ, "IOMODEL_TESTBED_STATE": str(tmp_path / "state")}
    t0 = time.monotonic()
    up = subprocess.run(["bash", SLURM / "start.sh"], env=env, capture_output=True, text=True, timeout=60)
    assert up.returncode == 0, up.stdout + up.stderr
    again = subprocess.run(["bash", SLURM / "start.sh"], env=env, capture_output=True, text=True,
                           timeout=60)
    assert again.returncode == 0 and "slurm up" in again.stdout        # idempotent
    env["SLURM_CONF"] = str(tmp_path / "state" / "slurm" / "slurm.conf")
    yield env, time.monotonic() - t0
    down = subprocess.run(["bash", SLURM / "stop.sh", "--purge"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert down.returncode == 0, down.stdout + down.stderr


def test_replay_through_srun_then_nothing_is_left(slurm, traced, tmp_path):
    env, started = slurm
    state = tmp_path / "state" / "slurm"
    pids = daemon_pids(state)
    assert len(pids) == 3 and running(pids) == pids
    p = subprocess.run(["srun", "-n", "4", "--mpi=pmix", "hostname"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and len(p.stdout.split()) == 4, p.stderr
    # a model: ior_like segmented, 4 ranks (one write phase, one read phase)
    r = traced("ior_like", 4, "segmented")
    model = tmp_path / "m.json"
    assert subprocess.run(IOMODEL + ["analyze", str(r.trace_dir), "-o", str(model), "-q"]).returncode == 0
    vc = tmp_path / "srun.yaml"
    vc.write_text((ROOT / "testbed" / "testbed-srun.yaml").read_text()
                  .replace("/tmp/iomodel-testbed-srun", str(tmp_path / "work")))
    out = tmp_path / "replay"
    p = subprocess.run(IOMODEL + ["replay", str(model), "--vc", str(vc), "--backend", "builtin",
                                  "-o", str(out)], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    m = json.loads(model.read_text())
    assert len(runs) == len(m["runs"])
    for e in runs:
        assert e["ok"] and e["bandwidth_Bps"] > 0
        assert e["command"][:5] == ["srun", "-n", "4", "--mpi=pmix",
                                    "--export=ALL,OMPI_MCA_mpi_yield_when_idle=1"]
    assert started < 30
    # stop (the fixture's teardown does it too): every daemon gone
    down = subprocess.run(["bash", SLURM / "stop.sh"], env=env, capture_output=True, text=True, timeout=60)
    assert down.returncode == 0 and "slurm stopped (3 daemons)" in down.stdout
    assert running(pids) == [] and daemon_pids(state) == []


def test_mpirun_inside_sbatch_and_salloc_traces_and_replays(slurm, build_dir, tmp_path):
    """As users run on a Slurm cluster: `iomodel trace -- mpirun` in a batch job
    (sbatch), then `iomodel replay` with the mpirun launcher in an interactive
    allocation (salloc); mpirun takes its 4 slots from the allocation."""
    env, _ = slurm
    # mpirun inside an allocation of 8 declared CPUs on 2 cores busy-polls (testbed/README.md);
    # MPI-IO alone, as in the tracer tests (conftest.traced): rank 0's fread check is not followed
    env = {**env, "OMPI_MCA_mpi_yield_when_idle": "1", "IOMODEL_POSIX": "0"}
    data, trace, model = tmp_path / "data", tmp_path / "trace", tmp_path / "m.json"
    data.mkdir()
    job = tmp_path / "job.sh"
    job.write_text("#!/bin/bash\n#SBATCH -n 4\n#SBATCH -o " + str(tmp_path / "job.out") + "\nset -e\n"
                   f"echo \"job $SLURM_JOB_ID tasks $SLURM_NTASKS\" > {tmp_path / 'job.env'}\n"
                   f"{' '.join(IOMODEL)} trace -o {trace} -- mpirun --allow-run-as-root "
                   f"{build_dir / 'ior_like'} {data} segmented\n")
    p = subprocess.run(["sbatch", "--wait", "-J", "iomodel-trace", str(job)], env=env,
                       capture_output=True, text=True, timeout=120)
    out = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert p.returncode == 0, p.stdout + p.stderr + out
    jobid = p.stdout.split()[-1]
    assert (tmp_path / "job.env").read_text() == f"job {jobid} tasks 4\n"
    # mpirun took -np from the allocation: 4 ranks, each 6 writes and 6 reads of 4096 B
    assert subprocess.run(IOMODEL + ["analyze", str(trace), "-o", str(model), "-q"]).returncode == 0
    m = json.loads(model.read_text())
    assert m["application"]["np"] == 4
    assert [(p["operation"], p["np"], p["rs"], p["rep"]) for p in m["phases"]] == \
        [("write", 4, 4096, 6), ("read", 4, 4096, 6)]

    vc = tmp_path / "mpirun.yaml"
    vc.write_text((ROOT / "cluster" / "shipped" / "local.yaml").read_text()
                  .replace("/tmp/iomodel-replay", str(tmp_path / "work"))
                  .replace('["--oversubscribe"]', '["--allow-run-as-root"]'))
    out = tmp_path / "replay"
    p = subprocess.run(["salloc", "-n", "4", "-J", "iomodel-replay", *IOMODEL, "replay", str(model),
                        "--vc", str(vc), "--backend", "builtin", "-o", str(out)],
                       env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Granted job allocation" in p.stderr
    runs = list(json.loads((out / "results.json").read_text())["runs"].values())
    assert [(e["ok"], e["operation"], e["np"], e["bytes"]) for e in runs] == \
        [(True, "write", 4, 6 * 4 * 4096), (True, "read", 4, 6 * 4 * 4096)]
    assert all(e["command"][:4] == ["mpirun", "-np", "4", "--allow-run-as-root"] for e in runs)
    # both jobs are over: salloc returns once it gave the allocation back, and
    # slurmctld may list the job a moment longer while it completes (state CG)
    deadline = time.monotonic() + 15
    while True:
        q = subprocess.run(["squeue", "-h", "-o", "%i %T"], env=env, capture_output=True, text=True,
                           timeout=30)
        assert q.returncode == 0, q.stderr
        if q.stdout.strip() == "" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert q.stdout.strip() == ""


@pytest.mark.parametrize("mpi,plugin", [("openmpi", "pmix"), ("mpich", "pmi2")])
def test_trace_and_replay_through_srun_under_each_mpi(slurm, mpi, plugin, programs, tmp_path):
    """`iomodel trace -- srun` as on a Slurm cluster: srun says nothing of the
    MPI, so the build is the one the program links; srun passes the tracer's
    variables on by itself (no -x, no -genv). Then the model is replayed
    through srun with that MPI's replayer (run.mpi)."""
    from iomodel.analyzer import Trace
    from test_tracer import check_against_expected
    env, _ = slurm
    env = {**env, "OMPI_MCA_mpi_yield_when_idle": "1", "IOMODEL_POSIX": "0"}
    data, trace, model = tmp_path / "data", tmp_path / "trace", tmp_path / "m.json"
    data.mkdir()
    cmd = ["srun", "-n", "4", f"--mpi={plugin}", str(programs / "basic_c"), str(data)]
    p = subprocess.run(IOMODEL + ["trace", "-o", str(trace), "--", *cmd], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    lib = {"openmpi": "Open MPI 4.1.4 build (basic_c links libmpi.so.40)",
           "mpich": "MPICH 4.0.2 build (basic_c links libmpich.so.12)"}[mpi]
    assert p.stderr.splitlines()[0] == f"iomodel: tracing with the {lib}"
    assert p.stderr.splitlines()[-1] == f"iomodel: trace of 4 rank(s) in {trace}/job.iot"
    check_against_expected(Trace(trace), "basic_c", 4)
    # the same model as under mpirun: 4 ranks write 3 x 1 KiB collectively, then 512 B each
    assert subprocess.run(IOMODEL + ["analyze", str(trace), "-o", str(model), "-q"]).returncode == 0
    m = json.loads(model.read_text())
    assert m["application"]["np"] == 4

    vc = tmp_path / "srun.yaml"
    vc.write_text((ROOT / "testbed" / "testbed-srun.yaml").read_text()
                  .replace("/tmp/iomodel-testbed-srun", str(tmp_path / "work"))
                  .replace("--mpi=pmix", f"--mpi={plugin}")
                  .replace("  hostfile: null", f"  hostfile: null\n  mpi: {mpi}"))
    out = tmp_path / "replay"
    p = subprocess.run(IOMODEL + ["replay", str(model), "--vc", str(vc), "--backend", "builtin",
                                  "-o", str(out)], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    runs = list(json.loads((out / "results.json").read_text())["runs"].values())
    assert len(runs) == len(m["runs"]) and all(e["ok"] and e["bandwidth_Bps"] > 0 for e in runs)
    assert all(e["command"][:4] == ["srun", "-n", str(e["np"]), f"--mpi={plugin}"] for e in runs)
    assert all(f"/{mpi}/iomodel_replay" in " ".join(e["command"]) for e in runs)


def test_analyze_as_a_job_step_of_srun(slurm, traced, tmp_path):
    """`srun --mpi=pmix -n 3 iomodel analyze` (issue 81): the tasks are one
    analysis (PMIx's rank and the step's task count tell them), whose model is
    the serial one."""
    env, _ = slurm
    run = traced("s3d_like", 4, "blocking", "12", "12", "12")
    serial = tmp_path / "serial.json"
    subprocess.run(IOMODEL + ["analyze", run.trace_dir, "-o", serial, "-q", "-j", "1"], check=True, timeout=120)
    out = tmp_path / "srun.json"
    proc = subprocess.run(["srun", "-n", "3", "--mpi=pmix", "--export=ALL,OMPI_MCA_mpi_yield_when_idle=1",
                           *IOMODEL, "analyze", run.trace_dir, "-o", out],
                          env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == serial.read_bytes()
    assert proc.stdout.count("model written to") == 1      # three tasks alone would each write it
