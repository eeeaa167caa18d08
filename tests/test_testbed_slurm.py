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
