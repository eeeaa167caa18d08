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


def readme_result():
    """Two VCs of two rows each, predicted and replayed.  disk: totals off by
    +4% and -7% predicted (one within 5%, both within 10%), +1% and +12%
    replayed; its three phases -2%, +15%, +9% predicted, 0%, +11%, +30%
    replayed; runs 2% and 6% apart (median 4%).  tmpfs: +20% and -3%
    predicted, +6% and -4% replayed, phases +20%/-3% and +6%/-4%; runs 30% and
    50% apart.  The rankings: 2 of 2 predicted, 1 of 2 replayed."""
    def row(vc, measured, runs, pred, repl, phases):
        return {"vc": vc, "measured_io_time_s": measured, "measured_runs_io_time_s": runs,
                "predicted_io_time_s": measured * (1 + pred), "error_predicted": pred,
                "replayed_io_time_s": measured * (1 + repl), "error_replayed": repl,
                "phases": [{"error_predicted": a, "error_replayed": b} for a, b in phases]}
    rows = [row("disk", 1.0, [0.99, 1.01], 0.04, 0.01, [(-0.02, 0.0), (0.15, 0.11)]),
            row("disk", 2.0, [1.94, 2.06], -0.07, 0.12, [(0.09, 0.30)]),
            row("tmpfs", 0.1, [0.08, 0.11], 0.20, 0.06, [(0.20, 0.06)]),
            row("tmpfs", 0.2, [0.15, 0.25], -0.03, -0.04, [(-0.03, -0.04)])]
    result = {"rows": rows, "vcs": {"disk": {"limit": "throttlefs 60 MiB/s"}, "tmpfs": {"limit": "-"}},
              "goals": {"io_time": {"predicted": {"rankings_same": 2, "rankings": 2},
                                    "replayed": {"rankings_same": 1, "rankings": 2}}},
              "np": 2, "code": "abc1234",
              "machine": {"cpu": "AMD EPYC", "cores": 2, "kernel": "6.1", "mpi": "Open MPI 4.1.4",
                          "date": "2026-12-01"}}
    return result


def test_the_readme_summary_counts_each_vc():
    """The rows of readme_result, counted per VC."""
    assert render.summary(readme_result()).splitlines() == [
        "| VC | storage | runs' own spread (median) | totals within 5% (predicted / replayed) | "
        "totals within 10% | phases within 10% |",
        "|---|---|---|---|---|---|",
        "| disk | a disk throttled by FUSE: throttlefs 60 MiB/s | 4% | 1 / 1 of 2 | 2 / 1 of 2 | 2 / 1 of 3 |",
        "| tmpfs | tmpfs (memory) | 40% | 1 / 1 of 2 | 1 / 2 of 2 | 1 / 2 of 2 |",
        "",
        "VCs ranked by I/O time as measured: 2 / 1 of 2 (application, size) pairs. np 2; AMD EPYC, "
        "2 cores, Linux 6.1, Open MPI 4.1.4; 2026-12-01, code abc1234."]


def test_the_readme_sentence_of_a_sitting_of_its_own():
    """A sitting of its own (--block accuracy-real) gets a sentence: the four
    rows of the summary's test, bt-io-full on the disk and s3d-io-blocking on
    tmpfs.  Predicted +4%, -7%, +20%, -3%: 2 within 5%, 3 within 10%;
    replayed +1%, +12%, +6%, -4%: 2 and 3."""
    result = readme_result()
    for r, app in zip(result["rows"], ("bt-io-full", "bt-io-full", "s3d-io-blocking", "s3d-io-blocking")):
        r["app"] = app
    assert render.sentence(result) == (
        "bt-io-full, s3d-io-blocking on disk, tmpfs, in a sitting of their own (np 2, 2026-12-01, code "
        "abc1234): totals within 5% (predicted / replayed) 2 / 2 of 4, within 10% 3 / 3 of 4; VCs ranked "
        "as measured 2 / 1 of 2.")


def test_leave_one_out_verdicts():
    """bench/accuracy_corrections.py's verdicts on rows made by hand: a row whose
    error is -2% with `ops` and +30% without (runs spread 5%) is made better
    (28 points gained, more than the spread); one at +12% with and +4% without
    (spread 3%) worse; one at +5% with and +3% without (spread 10%) within its
    spread; one that moves by 0.2% (1.002 times) is not changed."""
    spec2 = importlib.util.spec_from_file_location("accuracy_corrections", ROOT / "bench" / "accuracy_corrections.py")
    corr = importlib.util.module_from_spec(spec2)
    spec2.loader.exec_module(corr)
    row = lambda app, e, w, s: {"app": app, "size": "s", "vc": "disk", "spread": s, "error": e,  # noqa: E731
                                "without": {"ops": w}}
    table = {"source": "abc", "corrections": {"ops": "..."},
             "rows": [row("a", -0.02, 0.30, 0.05), row("b", 0.12, 0.04, 0.03), row("c", 0.05, 0.03, 0.10),
                      row("d", 0.10, 1.10 / 1.002 - 1, 0.0)]}
    v = corr.verdicts(table)["ops"]
    assert (v["better"], v["worse"], v["within"]) == (1, 1, 1)
    assert [(x["app"], x["effect"]) for x in v["changed"]] == [("a", "better"), ("b", "worse"), ("c", "within")]
    lines = corr.render(table).splitlines()
    assert lines[2] == "| `ops` | 3 | 1 | 1 | 1 |"
    assert "| `ops` | a | s | disk | -2.0% | +30.0% | 5.0% |" in lines
