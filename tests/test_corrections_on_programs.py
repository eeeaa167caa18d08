"""predict's corrections on a real program's model (issue 79): solver_like,
traced under mpirun and modelled, predicted from a profile written for the
test, with each correction's effect worked out by hand and undone by
`without` (`predict --without NAME`).

solver_like 16^3 cells of 40 B on 2 ranks, 3 dumps, 2 ADI steps before
each (tests/test_analyzer.py's test_a_solver_that_computes_between_its_dumps):
each dump one collective write phase, 81,920 B a rank through a view of
320-byte pieces, after the steps' computing (gap_s); then one reread phase.
"""
import json
import subprocess
import types

import pytest

from conftest import IOMODEL
from iomodel.cluster.predict import predict
from iomodel.cluster.profile import Profile

MiB = 2 ** 20
RS, PIECE = 81920, 320
BACK_S = 2 * RS / (100 * MiB)            # a dump back to back at 100 MiB/s: 1.5625 ms


def solver_model(traced, tmp_path):
    run = traced("solver_like", 2, 16, 16, 16, 3, 2)
    out = tmp_path / "model.json"
    p = subprocess.run(IOMODEL + ["analyze", run.trace_dir, "-o", out, "-q"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    m = json.loads(out.read_text())
    assert [(p["operation"], p["np"], p["rs"], p["collective"], p["offsets"]["piece"]) for p in m["phases"][:3]] \
        == [("write", 2, RS, True, PIECE)] * 3
    assert all(p["gap_s"] > 0 for p in m["phases"][:3])
    return m


def points(view_bw=None, computing=None):
    """Collective writes at np 2 of RS: back to back at 100 MiB/s (16
    operations a process); through the view at view_bw; computing 1e-5 s and
    10 s between 4 operations at `computing` MiB/s (flat: every gap of the
    solver's between them takes it).  The reread at 1 GiB/s."""
    one = {"access_type": "shared", "collective": True, "np": 2, "rs": RS}
    pts = [{**one, "operation": "write", "ops_per_process": 16, "bw_Bps": 100 * MiB},
           {**one, "operation": "reread", "ops_per_process": 16, "bw_Bps": 1024 * MiB}]
    if view_bw:
        pts.append({**one, "operation": "write", "ops_per_process": 16, "bw_Bps": view_bw * MiB, "piece": PIECE})
    for k in (1e-5, 10.0) if computing else ():
        pts.append({**one, "operation": "write", "ops_per_process": 4, "think_s": k, "bw_Bps": computing * MiB})
    return Profile.from_points(pts)


def dumps(m, prof, without=()):
    out = predict(m, types.SimpleNamespace(name="vc"), prof, without=list(without))
    return [p["time_s"] for p in out["phases"][:3]], [p["note"] for p in out["phases"][:3]]


def test_a_view_of_pieces_on_a_traced_solver(traced, tmp_path):
    """Through the view at 40 MiB/s against 100 contiguous: each dump x 2.5,
    3.90625 ms; without `views` the contiguous 1.5625 ms; no view point in
    the profile: 1.5625 ms too."""
    m = solver_model(traced, tmp_path)
    times, notes = dumps(m, points(view_bw=40))
    assert times == pytest.approx([2.5 * BACK_S] * 3, rel=1e-9)
    assert all("a view of pieces of 320 B: time x 2.5 (measured piece)" in n for n in notes), notes
    assert dumps(m, points(view_bw=40), without=["views"])[0] == pytest.approx([BACK_S] * 3, rel=1e-9)
    assert dumps(m, points())[0] == pytest.approx([BACK_S] * 3, rel=1e-9)


def test_collective_dumps_after_the_solvers_steps(traced, tmp_path):
    """The profile's dumps after computing at 100 / 1.5 MiB/s, whatever the
    time computed: each dump after the solver's steps x 1.5 on top of the
    view's x 2.5, 5.859375 ms; without `collective-after-computing` 3.90625
    ms; points computing as fast as back to back change nothing."""
    m = solver_model(traced, tmp_path)
    times, notes = dumps(m, points(view_bw=40, computing=100 / 1.5))
    assert times == pytest.approx([1.5 * 2.5 * BACK_S] * 3, rel=1e-9)
    assert all("before each operation: time x 1.5," in n for n in notes), notes
    assert dumps(m, points(view_bw=40, computing=100 / 1.5), without=["collective-after-computing"])[0] == \
        pytest.approx([2.5 * BACK_S] * 3, rel=1e-9)
    assert dumps(m, points(view_bw=40, computing=100))[0] == pytest.approx([2.5 * BACK_S] * 3, rel=1e-9)


def test_a_dump_of_one_operation_pays_the_fixed_cost(traced, tmp_path):
    """Each dump is one operation a process. A one-operation point at 50 MiB/s
    beside the 16-operation one at 100: t(ops) = a + b ops through both,
    a + 16 b = 16 x 1.5625 = 25 ms and a + b = 3.125 ms, so b = 21.875 / 15 =
    1.4583 ms, a = 1.6667 ms, and a dump takes a + b = 3.125 ms; without
    `ops` the long point's 1.5625 ms."""
    m = solver_model(traced, tmp_path)
    one = {"access_type": "shared", "collective": True, "np": 2, "rs": RS, "operation": "write"}
    prof = points() + Profile.from_points([{**one, "ops_per_process": 1, "bw_Bps": 50 * MiB}])
    times, notes = dumps(m, prof)
    assert times == pytest.approx([2 * BACK_S] * 3, rel=1e-9)
    assert all("1 op per process: fixed 1667 us + 1 x 1458.3 us" in n for n in notes), notes
    assert dumps(m, prof, without=["ops"])[0] == pytest.approx([BACK_S] * 3, rel=1e-9)
