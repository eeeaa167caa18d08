"""The hand-worked literal tables that anchor tests/programs/expected.py and
expected_models.py (np = 4: events, offsets, byte counts, model weights and
sizes) agree with the generators the other tests compare traces and models
against. Pure Python: no MPI run."""
import sys

from conftest import PROGRAMS

sys.path.insert(0, str(PROGRAMS))
import expected  # noqa: E402
import expected_models  # noqa: E402


def test_expected_events_match_the_hand_tables():
    expected._selfcheck()
    expected._selfcheck_appended()


def test_expected_models_match_the_hand_tables():
    expected_models._selfcheck()
