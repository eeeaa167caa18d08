"""bench/accuracy_render.py: the sentence per VC that says how many measured
totals fall inside the span of the predictions from each of the profile's
passes alone (predict's io_time_passes_s)."""
import importlib.util
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
spec = importlib.util.spec_from_file_location("accuracy_render", ROOT / "bench" / "accuracy_render.py")
render = importlib.util.module_from_spec(spec)
spec.loader.exec_module(render)


def test_measured_totals_inside_the_span_of_the_passes():
    """tmpfs: 1.0 s measured inside passes 0.9 to 1.2 s (predicted 1.0: a span of
    30%), 2.0 s measured outside passes 1.0 to 1.5 s (predicted 1.2: 0.5 / 1.2 =
    42%); median span 36%; 1 of 2 inside.  The disk: its profile in one pass
    (null), no sentence; a failed row counts for nothing."""
    rows = [
        {"vc": "tmpfs", "measured_io_time_s": 1.0, "predicted_io_time_s": 1.0,
         "predicted_passes_io_time_s": [1.2, 0.9]},
        {"vc": "tmpfs", "measured_io_time_s": 2.0, "predicted_io_time_s": 1.2,
         "predicted_passes_io_time_s": [1.0, 1.5]},
        {"vc": "tmpfs", "error": "the run failed"},
        {"vc": "disk", "measured_io_time_s": 3.0, "predicted_io_time_s": 3.1,
         "predicted_passes_io_time_s": None},
    ]
    assert render.pass_range_lines(rows) == [
        "tmpfs: predicted from each of its profile's 2 passes alone, the totals span 30% to 42% of the "
        "prediction (median 36%); 1 of 2 measured totals fall inside their span."]
