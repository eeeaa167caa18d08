"""bench/accuracy.py --combine: which runs' profiles count as one sweep.  Rows of
runs whose VCs were characterized alike may share a table; `--one-stripe` on a VC
of one data server and `--think` (extra points only) are the two allowed
differences, and a run without `--think` has its VCs named for the render."""
import importlib.util

from conftest import ROOT

spec = importlib.util.spec_from_file_location("accuracy_score", ROOT / "bench" / "accuracy_score.py")
score = importlib.util.module_from_spec(spec)
spec.loader.exec_module(score)

BASE = ["--sizes", "4k,64k", "--np", "1,2", "--repeat", "3"]
ONE = "io_servers: {data: 1, metadata: 0}\n"
TWO = "io_servers: {data: 2, metadata: 0}\n"


def run(args, **vcs):
    return {"characterize": {"args": list(args)}, "vcs": {k: {"yaml": v} for k, v in vcs.items()}}


def test_think_points_are_the_only_sweep_difference_allowed_besides_one_stripe():
    think = BASE + ["--one-stripe", "--think", "1ms"]
    with_, without = run(think, disk=ONE), run(BASE + ["--one-stripe"], gluster2=TWO)
    assert score.same_sweep(with_, without) == think
    assert without["characterize"]["no_think_vcs"] == ["gluster2"]
    assert "no_think_vcs" not in with_["characterize"]
    # either way round, and with --one-stripe missing on a VC of one data server
    with_, without = run(think, gluster2=TWO), run(BASE, tmpfs=ONE)
    assert score.same_sweep(without, with_) == think
    assert without["characterize"]["no_think_vcs"] == ["tmpfs"]
    # ... but not on one of two
    assert score.same_sweep(run(think, disk=ONE), run(BASE, gluster2=TWO)) is None
    # any other difference: not one sweep
    assert score.same_sweep(run(think, disk=ONE), run(BASE[:-1] + ["5", "--one-stripe"], gluster2=TWO)) is None
    assert score.same_sweep(run(think, disk=ONE), run(BASE + ["--one-stripe", "--think", "4ms"],
                                                      gluster2=TWO)) is None
    assert score.same_sweep(run(think, disk=ONE), run(think, gluster2=TWO)) == think


def test_a_run_with_some_of_the_think_points_is_the_sweep_less_the_others():
    four = BASE + ["--one-stripe", "--think", "30us,60us,250us,1ms"]
    one = BASE + ["--one-stripe", "--think", "1ms"]
    more, fewer = run(four, disk=ONE), run(one, gluster2=TWO)
    assert score.same_sweep(more, fewer) == four
    assert fewer["characterize"]["fewer_think_vcs"] == {"gluster2": "1ms"}
    assert "fewer_think_vcs" not in more["characterize"] and "no_think_vcs" not in fewer["characterize"]
    # either way round: the result with fewer points takes the other's, its VCs named
    fewer, more = run(one, gluster=ONE), run(four, disk=ONE)
    assert score.same_sweep(fewer, more) == four
    assert fewer["characterize"]["fewer_think_vcs"] == {"gluster": "1ms"}
    # a VC already named without any think point stays so
    fewer = run(one, gluster=ONE, tmpfs=ONE)
    fewer["characterize"]["no_think_vcs"] = ["tmpfs"]
    assert score.same_sweep(fewer, run(four, disk=ONE)) == four
    assert fewer["characterize"]["fewer_think_vcs"] == {"gluster": "1ms"}
    # points that are not a subset: not one sweep
    assert score.same_sweep(run(four, disk=ONE), run(BASE + ["--one-stripe", "--think", "1ms,4ms"],
                                                     gluster2=TWO)) is None
