"""bench/accuracy.py's applications (bench/accuracy_apps.py): the method
paper's NAS BT-IO and S3D-IO beside the six examples, each with its ranks, its
command line and the directory it runs in; the sweep's process counts that
cover them; and the record of the rows that cannot run without
../shared/vendor.  Building NPB takes too long for the suite: `bench/accuracy.py
--check-builds` builds and runs them."""
import importlib.util
import json
import sys
import tarfile

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


apps = load("accuracy_apps")
bench = load("accuracy")
render = load("accuracy_render")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np"]
PAPER = ["bt.S.x.mpi_io_full", "bt.W.x.mpi_io_full", "bt.S.x.mpi_io_simple", "bt.W.x.mpi_io_simple", "s3d_io.x"]


def test_the_paper_applications_run_at_4_ranks_with_their_arguments(tmp_path):
    """BT-IO: NPB names its binary bt.CLASS.x.mpi_io_SUBTYPE and writes
    ./btio.SUBTYPE.out, so it takes no argument and runs in its data directory;
    its 4 ranks are 2x2 (a square).  S3D-IO: "NX NY NZ PX PY PZ 0|1 F DIR", 0
    blocking and 1 nonblocking PnetCDF, F no restart, DIR its data directory,
    2x2x1 = 4 ranks.  The examples keep --np ranks and their data directory
    first."""
    table = apps.app_table(("S", "W"))
    paper = [a for a in table if a.app in apps.PAPER_APPS]
    assert [(a.app, a.size) for a in paper] == [
        ("bt-io-full", "S"), ("bt-io-full", "W"), ("bt-io-simple", "S"), ("bt-io-simple", "W"),
        ("s3d-io-blocking", "32^3 2x2x1"), ("s3d-io-blocking", "50^3 2x2x1"),
        ("s3d-io-nonblocking", "32^3 2x2x1"), ("s3d-io-nonblocking", "50^3 2x2x1")]
    assert len(table) == 12 + 8
    progs = {p: tmp_path / "bin" / p for p in PAPER + list(apps.SOURCES)} | {"py_io.py": ROOT / "examples" / "py_io.py"}
    data = tmp_path / "data"
    cmds = {(a.app, a.size): apps.app_cmd(progs, a, data, 2) for a in table}
    assert cmds[("bt-io-full", "W")] == ([*MPIRUN, "4", progs["bt.W.x.mpi_io_full"]], data)
    assert cmds[("bt-io-simple", "S")] == ([*MPIRUN, "4", progs["bt.S.x.mpi_io_simple"]], data)
    assert cmds[("s3d-io-blocking", "32^3 2x2x1")] == (
        [*MPIRUN, "4", progs["s3d_io.x"], "32", "32", "32", "2", "2", "1", "0", "F", data], None)
    assert cmds[("s3d-io-nonblocking", "50^3 2x2x1")] == (
        [*MPIRUN, "4", progs["s3d_io.x"], "50", "50", "50", "2", "2", "1", "1", "F", data], None)
    assert cmds[("btio_like", "32^3x8")] == ([*MPIRUN, "2", progs["btio_like"], data, "32", "32", "32", "8"], None)
    assert cmds[("py_io", "1MiBx8")] == (
        [*MPIRUN, "2", apps.PYTHON, ROOT / "examples" / "py_io.py", data, "1024", "8"], None)
    # --np moves the examples only
    assert apps.app_cmd(progs, paper[0], data, 3)[0][4] == "4"
    # class A on request: one binary more per subtype
    assert [a.prog for a in apps.paper_apps(("A",))][:2] == ["bt.A.x.mpi_io_full", "bt.A.x.mpi_io_simple"]
    # work directory names: distinct, without spaces or carets
    keys = [apps.row_key(a.app, a.size) for a in table]
    assert len(set(keys)) == len(keys) and "s3d-io-blocking-323-2x2x1" in keys and "btio_like-323x8" in keys


def test_the_profiles_cover_every_applications_ranks():
    """characterize's --np: 1 and every app's ranks.  With the examples (2)
    beside the paper's (4), the shared independent points of fewer processes
    keep a job of 2 (--job-np 2), as with the examples alone; the examples alone
    give the sweep they always had (no --job-np: the same arguments, so runs of
    before still --combine)."""
    table = apps.app_table(("S", "W"))
    examples, paper = table[:12], table[12:]
    assert bench.sweep_nps(examples, 2) == ([1, 2], None)
    assert bench.sweep_nps(table, 2) == ([1, 2, 4], 2)
    assert bench.sweep_nps(paper, 2) == ([1, 4], None)
    old = bench.char_args([1, 2], 3)
    assert old[old.index("--np") + 1] == "1,2" and "--job-np" not in old
    both = bench.char_args([1, 2, 4], 3, 2)
    assert both[both.index("--np") + 1] == "1,2,4" and both[-2:] == ["--job-np", "2"]
    assert [x for x in both if x not in ("1,2,4", "--job-np", "2")] == [x for x in old if x != "1,2"]


def never(cmd, cwd):
    raise AssertionError(f"nothing is built without the sources: {cmd}")


def test_without_the_vendor_directory_the_paper_rows_are_missing(tmp_path):
    """No ../shared/vendor: every paper program is missing for that reason (and
    nothing is run); the examples need none.  The rows say np 4 and the VCs."""
    none = tmp_path / "no-vendor"
    progs, missing = apps.build(apps.paper_apps(), tmp_path, none, never)
    why = f"{none}: no such directory (the paper's applications are built from it)"
    assert missing == {p: why for p in PAPER}
    assert progs == {"py_io.py": ROOT / "examples" / "py_io.py"}
    rows = apps.missing_rows(apps.app_table(), missing, 2, ["tmpfs", "disk"])
    assert len(rows) == 8
    assert rows[0] == {"app": "bt-io-full", "size": "S", "np": 4, "vcs": ["tmpfs", "disk"], "why": why}
    assert rows[-1] == {"app": "s3d-io-nonblocking", "size": "50^3 2x2x1", "np": 4, "vcs": ["tmpfs", "disk"],
                        "why": why}


def test_a_missing_archive_or_a_failed_build_is_said(tmp_path):
    """A vendor directory with an NPB archive that holds no config/ (make.def's
    template) and no S3D-IO archive: the four BT programs fail to build, saying
    what was missing, S3D-IO's archive is named as absent; the archive is
    unpacked once under bindir/vendor."""
    vendor, bindir = tmp_path / "vendor", tmp_path / "bin"
    (tmp_path / "NPB3.4-MPI").mkdir()
    (tmp_path / "NPB3.4-MPI" / "README").write_text("no sources\n")
    vendor.mkdir()
    bindir.mkdir()
    with tarfile.open(vendor / apps.NPB, "w:gz") as t:
        t.add(tmp_path / "NPB3.4-MPI", arcname="NPB3.4-MPI")
    progs, missing = apps.build(apps.paper_apps(), bindir, vendor, never)
    template = bindir / "vendor" / "NPB3.4-MPI" / "config" / "make.def.template"
    assert missing == {
        **{p: f"building {p} from {vendor / apps.NPB} failed: [Errno 2] No such file or directory: '{template}'"
           for p in PAPER[:4]},
        "s3d_io.x": f"{vendor / apps.S3D}: no such file"}
    assert sorted(p.name for p in (bindir / "vendor").iterdir()) == ["NPB3.4-MPI"]
    assert (bindir / "vendor" / "NPB3.4-MPI" / "README").read_text() == "no sources\n"


def test_the_vendor_archives_the_table_names_are_there():
    if not apps.VENDOR.is_dir():
        pytest.skip(f"{apps.VENDOR} is absent: the paper's applications cannot be built here")
    assert sorted({a.source for a in apps.paper_apps()}) == ["npb3.4-mpi.tar.gz", "s3d-io.tar.gz"]
    for archive in (apps.NPB, apps.S3D):
        assert (apps.VENDOR / archive).is_file()


def row(app, size, np, err):
    """A tmpfs row of one phase, its estimates err off; runs 1.0 and 1.1 s."""
    return {"app": app, "size": size, "vc": "tmpfs", "np": np, "weight_bytes": 1 << 20,
            "measured_io_time_s": 1.0, "measured_span_s": 1.0, "measured_runs_io_time_s": [1.0, 1.1],
            "predicted_io_time_s": 1 + err, "error_predicted": err, "worst_phase_error_predicted": err,
            "replayed_io_time_s": 1 + err, "error_replayed": err, "worst_phase_error_replayed": err,
            "phases": [{"error_predicted": err, "error_replayed": err}]}


def test_the_tables_give_the_paper_rows_their_own_lines_and_say_what_is_missing():
    """On tmpfs an example within 5% (+3%) and BT-IO full W off by +20%: the
    summary counts them on two lines, 1 of 1 and 0 of 1; S3D-IO's two rows not
    run, one sentence naming them and why; the ranks: 2, and 4 for BT-IO."""
    why = "/x/vendor/s3d-io.tar.gz: no such file"
    result = {"rows": [row("btio_like", "32^3x8", 2, 0.03), row("bt-io-full", "W", 4, 0.20)],
              "missing": [{"app": "s3d-io-blocking", "size": s, "np": 4, "vcs": ["tmpfs"], "why": why}
                          for s in ("32^3 2x2x1", "50^3 2x2x1")],
              "vcs": {"tmpfs": {"limit": "-"}}, "np": 2,
              "goals": {"io_time": {"predicted": {"rankings_same": 0, "rankings": 0},
                                    "replayed": {"rankings_same": 0, "rankings": 0}}},
              "machine": {"cpu": "AMD EPYC", "cores": 2, "kernel": "6.1", "mpi": "Open MPI 4.1.4",
                          "date": "2026-12-05"}}
    assert render.summary(result).splitlines()[2:] == [
        "| tmpfs: examples | tmpfs (memory) | 10% | 1 / 1 of 1 | 1 / 1 of 1 | 1 / 1 of 1 |",
        "| tmpfs: BT-IO, S3D-IO | tmpfs (memory) | 10% | 0 / 0 of 1 | 0 / 0 of 1 | 0 / 0 of 1 |",
        "",
        "VCs ranked by I/O time as measured: 0 / 0 of 0 (application, size) pairs. Not run on tmpfs: "
        "s3d-io-blocking 32^3 2x2x1, s3d-io-blocking 50^3 2x2x1; /x/vendor/s3d-io.tar.gz: no such file. "
        "np 2 (bt-io-full, s3d-io-blocking: np 4); AMD EPYC, 2 cores, Linux 6.1, Open MPI 4.1.4; 2026-12-05."]
    lines = render.table(result["rows"], result["missing"]).splitlines()
    assert lines[-1] == ("| s3d-io-blocking | 50^3 2x2x1 | tmpfs | | not run: /x/vendor/s3d-io.tar.gz: "
                         "no such file | | | | | |")
    assert lines[3].startswith("| bt-io-full | W | tmpfs | 1.00 | 1.000 (1.000) | 10% | 1.200 (+20%) |")
    assert all(line.count("|") == lines[0].count("|") for line in lines)


def test_runs_combined_keep_what_each_did_not_run(tmp_path):
    """A run of tmpfs and the disk without BT-IO full W, another of gluster
    without S3D-IO: taking only its disk part keeps the missing row for the disk
    alone; combining adds the other run's missing row after it."""
    score = load("accuracy_score")
    machine = {"cpu": "AMD EPYC", "cores": 2, "kernel": "6.1", "mpi": "Open MPI 4.1.4", "date": "2026-12-05"}
    bt = {"app": "bt-io-full", "size": "W", "np": 4, "vcs": ["tmpfs", "disk"], "why": "no vendor"}
    s3d = {"app": "s3d-io-blocking", "size": "50^3 2x2x1", "np": 4, "vcs": ["gluster"], "why": "build failed"}

    def run(vcs, missing):
        return {"machine": dict(machine), "vcs": {vc: {"yaml": "io_servers: {data: 1}\n"} for vc in vcs},
                "rows": [], "missing": missing, "characterize": {"args": ["--np", "1,2,4"]}, "np": 2,
                "repeat": 3, "runs": {}}
    first = run(["tmpfs", "disk"], [bt])
    assert score.only_vcs(first, ["disk"], "first.json")["missing"] == [{**bt, "vcs": ["disk"]}]
    (tmp_path / "second.json").write_text(json.dumps(run(["gluster"], [s3d])))
    assert score.combine(first, [str(tmp_path / "second.json")])["missing"] == [bt, s3d]
