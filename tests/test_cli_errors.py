"""Bad input to `iomodel analyze`, `show` and `plot`: one clear line naming the
file and the problem, exit code 2, no traceback."""
import json
import shutil
import subprocess
import sys

import pytest

from conftest import RANK_FILES, ROOT

IOMODEL = [sys.executable, "-m", "iomodel"]


def run(*args):
    return subprocess.run(IOMODEL + [str(a) for a in args], capture_output=True, text=True)


def one_error(proc, *words):
    assert proc.returncode == 2, proc
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("iomodel: error: "), proc.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_trace_says_why_no_trace_was_written(tmp_path):
    """A command that fails before any process calls MPI_Init (here `false`,
    status 1; mpirun refusing to run as root is the usual one) is said to have,
    with its status, which iomodel exits with; one that runs without MPI, too."""
    p = run("trace", "-o", tmp_path / "t", "--", "false")
    assert p.returncode == 1
    assert p.stderr.strip().splitlines()[-1] == (
        f"iomodel: no trace was written in {tmp_path / 't'}: the command exited with status 1 before any "
        "process called MPI_Init; its own messages are above")
    p = run("trace", "-o", tmp_path / "t", "--", "true")
    assert p.returncode == 0
    assert p.stderr.strip().splitlines()[-1] == (
        f"iomodel: no trace was written in {tmp_path / 't'}: the command ran, but no process called "
        "MPI_Init (not an MPI program?)")


def test_analyze_missing_input(tmp_path):
    one_error(run("analyze", tmp_path / "nothing", "-o", tmp_path / "m.json"),
              str(tmp_path / "nothing"), "no such trace directory")
    assert not (tmp_path / "m.json").exists()


def test_analyze_damaged_trace_names_file_and_byte(traced, tmp_path):
    run_ = traced("basic_c", 4, env=RANK_FILES)
    victim = run_.trace_dir / "rank-000001.iot"
    data = victim.read_bytes()
    victim.write_bytes(data[:len(data) - 10])        # cut inside the end chunk
    proc = run("analyze", run_.trace_dir, "-o", tmp_path / "m.json")
    one_error(proc, str(victim), "at byte", "truncated")
    assert not (tmp_path / "m.json").exists()


def test_show_not_json(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "iomodel-model",\n  "version": 1,,}')
    one_error(run("show", bad), str(bad), "not JSON", "line 2")


def test_show_and_plot_name_the_bad_field(tmp_path):
    model = json.loads((ROOT / "models" / "examples" / "btio-B-4.json").read_text())
    model["phases"][3]["rep"] = 0
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps(model))
    one_error(run("show", bad), str(bad), "phases[3].rep", "expected an integer >= 1, got 0")
    one_error(run("plot", bad, "-o", tmp_path / "f.png"), "phases[3].rep")
    del model["files"]
    bad.write_text(json.dumps(model))
    one_error(run("show", "--json", bad), "files: missing")


def test_a_newer_model_version_is_refused(tmp_path):
    model = json.loads((ROOT / "models" / "examples" / "s3d-200-8.json").read_text())
    model["version"] = 2
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps(model))
    one_error(run("show", bad), "version", "format 1")


def test_plot_draws_a_png(traced, tmp_path):
    pytest.importorskip("matplotlib")
    run_ = traced("ior_like", 4, "segmented")
    model = tmp_path / "m.json"
    assert run("analyze", run_.trace_dir, "-o", model, "-q").returncode == 0
    for extra in ([], ["--from-model"], ["--logical"]):
        out = tmp_path / f"fig{len(extra)}{''.join(extra)}.png"
        proc = run("plot", model, "-o", out, *extra)
        assert proc.returncode == 0, proc.stderr
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10000
    shutil.rmtree(run_.trace_dir)                     # the trace is gone: the phases are drawn
    proc = run("plot", model, "-o", tmp_path / "g.png")
    assert proc.returncode == 0 and "the model phases" in proc.stderr


def test_plot_of_nothing_says_so_without_matplotlibs_warning(tmp_path):
    """A model with no operation to draw (its phases taken out): plot writes
    the empty axes and says so in one line, not matplotlib's "No artists with
    labels found to put in legend"."""
    pytest.importorskip("matplotlib")
    model = json.loads((ROOT / "models" / "examples" / "btio-B-4.json").read_text())
    model.update(phases=[], runs=[], order=[], weight=0)
    path, out = tmp_path / "m.json", tmp_path / "empty.png"
    path.write_text(json.dumps(model))
    proc = run("plot", path, "-o", out)
    assert proc.returncode == 0 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert proc.stderr.splitlines() == [
        f"iomodel: note: the model phases: no operation of known file offset to draw; {out} has the "
        "empty axes"]


def test_a_refused_plot_leaves_no_figure_open(tmp_path):
    """plot to a path through a regular file (not a directory) is refused, and
    its figure closed all the same: pyplot holds every figure not closed, and
    the fuzz bench's in-process plots to refused targets grew one worker to
    2 GiB over 4,000 of them (issue 78)."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    from iomodel.models import load_model
    from iomodel.models.plot import plot
    (tmp_path / "file").write_text("x")
    model = load_model(ROOT / "models" / "examples" / "btio-B-4.json")
    before = plt.get_fignums()
    with pytest.raises(OSError):
        plot(model, tmp_path / "file" / "x.png")
    assert plt.get_fignums() == before
    assert (tmp_path / "file").read_text() == "x"


def test_a_cluster_without_bandwidth_says_how_to_give_it(tmp_path):
    """A description with no profile and no bandwidth points: predict says what is
    missing and where to put it (a new user's first cluster file)."""
    vc = tmp_path / "bare.yaml"
    vc.write_text("format: iomodel-cluster\nversion: 1\nname: bare\n"
                  "instance: {type: t, cores: 8, memory_gib: 16, prices: [{region: r, usd_per_hour: 1}]}\n"
                  "instances: 1\nfilesystem: {global: NFS}\n")
    one_error(run("predict", ROOT / "models" / "examples" / "btio-B-4.json", "--vc", vc),
              f"{vc}: phase 1 (write): no write bandwidth in the profile (it is empty); give its "
              "description `bandwidth:` points or a measured `profile:` (docs/cluster-format.md), or "
              "predict with --profile or --replay")


def test_out_of_memory_names_the_input(monkeypatch, tmp_path, capsys):
    """A reader that runs out of memory on a damaged input (the fuzz bench found a
    trace that did, under its 4 GiB limit) ends in one message naming that input.
    The command's reading is made to fail so: what is tested is main()'s message."""
    import iomodel.cli as cli

    def exhausted(args):
        raise MemoryError()
    monkeypatch.setattr(cli, "cmd_trace_info", exhausted)
    assert cli.main(["trace-info", str(tmp_path / "t")]) == 2
    assert capsys.readouterr().err == (f"iomodel: error: {tmp_path / 't'}: out of memory (is it far larger "
                                       "than it should be, or damaged?)\n")
    monkeypatch.setattr(cli, "cmd_predict", exhausted)
    assert cli.main(["predict", "m.json", "--vc", "c.yaml"]) == 2
    assert capsys.readouterr().err == ("iomodel: error: m.json, c.yaml: out of memory (is an input far larger "
                                       "than it should be, or damaged?)\n")
