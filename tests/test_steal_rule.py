"""The rule for runs the hypervisor slowed (replay/host.py until_calm): a run
that lost 5% of its wall time or more to steal is set aside and made again, at
most so many times, the last attempt kept whatever it lost.  `characterize
--steal-retries` holds its sweep runs to it, bench/accuracy.py its application
runs and replays (their files moved to the work directory's stolen/,
`set_aside`); it is the rule the profile's passes follow (`lost_to_steal`)."""
import sys

import pytest
from conftest import ROOT

from iomodel.replay.host import until_calm

sys.path.insert(0, str(ROOT / "bench"))
import accuracy  # noqa: E402  (bench/ is not a package)


def run(tmp_path, outcomes, retries):
    made, out = [], tmp_path / "replay-x"

    def attempt():
        j = len(made)
        made.append(j)
        out.mkdir()
        (out / "results.json").write_text(str(j))
        return f"result {j}", *outcomes[j]
    result = until_calm(attempt, retries, on_stolen=accuracy.set_aside(tmp_path, out, what="test"))
    return result, made, out


def test_an_attempt_that_lost_5_percent_is_made_again_and_set_aside(tmp_path):
    # 0.06 s of 1.0 s is 6%: set aside; 0.04 of 1.0 is 4%: kept
    (res, st, aside), made, out = run(tmp_path, [(1.0, 0.06), (1.0, 0.04), (1.0, 0.0)], retries=3)
    assert (res, st) == ("result 1", 0.04)
    assert made == [0, 1]
    assert aside == [{"wall_s": 1.0, "steal_s": 0.06}]
    assert (out / "results.json").read_text() == "1"
    assert (tmp_path / "stolen" / "replay-x.0" / "results.json").read_text() == "0"


def test_exactly_5_percent_counts_as_stolen(tmp_path):
    # 0.1 s of 2.0 s is 5% exactly: set aside; the next, without steal, kept
    (res, st, aside), made, _ = run(tmp_path, [(2.0, 0.1), (2.0, 0.0)], retries=3)
    assert (res, st, made) == ("result 1", 0.0, [0, 1])
    assert aside == [{"wall_s": 2.0, "steal_s": 0.1}]


def test_unknown_steal_is_kept(tmp_path):
    # a kernel that does not say (steal_s() None): nothing to set aside for
    (res, st, aside), made, _ = run(tmp_path, [(2.0, None)], retries=3)
    assert (res, st, aside, made) == ("result 0", None, [], [0])


def test_the_last_attempt_is_kept_whatever_it_lost(tmp_path):
    (res, st, aside), made, out = run(tmp_path, [(1.0, 0.5), (1.0, 0.3), (1.0, 0.2)], retries=2)
    assert (res, st) == ("result 2", 0.2)
    assert [a["steal_s"] for a in aside] == [0.5, 0.3]
    assert sorted(p.name for p in (tmp_path / "stolen").iterdir()) == ["replay-x.0", "replay-x.1"]
    assert (out / "results.json").read_text() == "2"


def test_no_retries_keeps_the_first_attempt(tmp_path):
    (res, st, aside), made, _ = run(tmp_path, [(1.0, 0.9)], retries=0)
    assert (res, st, aside, made) == ("result 0", 0.9, [], [0])


def test_a_reused_run_has_no_wall_time_and_is_kept(tmp_path):
    # --resume: a run made before is reused, its wall time and steal unknown
    (res, st, aside), made, _ = run(tmp_path, [(None, None)], retries=3)
    assert (res, st, aside, made) == ("result 0", None, [], [0])


def test_negative_retries_are_refused(tmp_path):
    with pytest.raises(ValueError, match="retries -1: expected 0 or more"):
        run(tmp_path, [(1.0, 0.0)], retries=-1)
