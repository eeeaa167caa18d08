"""`iomodel replay`, `characterize`, `predict --replay` and `compare` for
real: the built-in replayer under mpirun on this machine's local.yaml."""
import json
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from conftest import ROOT, rank_events

IOMODEL = [sys.executable, "-m", "iomodel"]


def run(*args, **kw):
    return subprocess.run(IOMODEL + [str(a) for a in args], capture_output=True, text=True, **kw)


@pytest.fixture
def model(traced, tmp_path):
    """The model of ior_like segmented at 4 ranks: writes one phase, reads one phase."""
    r = traced("ior_like", 4, "segmented")
    m = tmp_path / "m.json"
    assert run("analyze", r.trace_dir, "-o", m, "-q").returncode == 0
    return m


def test_replay_measures_every_phase_and_resumes(model, local_vc, tmp_path):
    out = tmp_path / "replay"
    p = run("replay", model, "--vc", local_vc, "--backend", "builtin", "-o", out)
    assert p.returncode == 0, p.stderr
    m = json.loads(model.read_text())
    text = (out / "results.json").read_text()
    res = json.loads(text)["runs"]
    # one invocation per run of identical phases (the write phase, the read
    # phase), each measured, each on a line of its own
    assert len(m["runs"]) == 2 and len(res) == 2
    lines = text.splitlines()
    assert lines[0] == '{"runs": {' and lines[-1] == "}}" and len(lines) == 4
    assert [json.loads("{" + ln.rstrip(",") + "}") for ln in lines[1:3]] == [{k: v} for k, v in res.items()]
    for entry in res.values():
        assert entry["ok"] and entry["bandwidth_Bps"] > 0 and entry["backend"] == "builtin"
        assert entry["command"][:3] == ["mpirun", "-np", "4"]
        # the application's file name, in a directory of the replay's own
        assert "--iomodel.names=ior.dat" in entry["command"]
    measured = {pid for e in res.values() for pid in e["phase_ids"]}
    assert measured == {1, 2}
    # the files the replay wrote are gone; the profile has one point per phase kind
    assert not (tmp_path / "work").exists()     # made for the replay, removed after: empty again
    prof = pq.read_table(out / "profile.parquet").to_pylist()
    # segmented reads back each rank's own block through the write's open:
    # the read phase is a reread (reread_bytes == weight: 6 segments x 4 ranks
    # x 4096 B) and is keyed so
    assert [(p["operation"], p.get("reread_bytes"), p["weight"]) for p in m["phases"]] == \
        [("write", None, 98304), ("read", 98304, 98304)]
    assert {(x["operation"], x["np"]) for x in prof} == {("write", 4), ("reread", 4)}
    # run again: nothing is rerun
    p2 = run("replay", model, "--vc", local_vc, "--backend", "builtin", "-o", out)
    assert p2.returncode == 0 and p2.stderr.count("done before") == 2
    assert json.loads((out / "results.json").read_text())["runs"] == res
    # and predict from what the replay measured
    pr = run("predict", model, "--vc", local_vc, "--replay", out, "--json")
    assert pr.returncode == 0, pr.stderr
    pred = json.loads(pr.stdout)
    assert pred["feasible"] and [ph["id"] for ph in pred["phases"]] == [1, 2]
    bw = {pid: e["bandwidth_Bps"] for e in res.values() for pid in e["phase_ids"]}
    for ph in pred["phases"]:
        assert ph["bw_Bps"] == pytest.approx(bw[ph["id"]])
        assert ph["time_s"] == pytest.approx(ph["weight"] / bw[ph["id"]])


def test_replay_spreads_repetitions_over_launches(model, local_vc, tmp_path):
    """--repeat 5 --launches 2: launches of 3 and 2 repetitions (-i 3, -i 2), each
    with its own summary; the time is the median of all five repetitions."""
    import statistics
    from iomodel.replay.runner import repetitions_per_launch
    assert repetitions_per_launch(9, 3) == [3, 3, 3] and repetitions_per_launch(8, 3) == [3, 3, 2]
    assert repetitions_per_launch(1, 1) == [1]
    out = tmp_path / "spread"
    p = run("replay", model, "--vc", local_vc, "--backend", "builtin", "--repeat", "5",
            "--launches", "2", "-o", out)
    assert p.returncode == 0, p.stderr
    res = json.loads((out / "results.json").read_text())["runs"]
    assert len(res) == 2
    for entry in res.values():
        assert entry["ok"] and entry["repetitions"] == 5 and entry["launches"] == 2
        assert len(entry["rep_times_s"]) == 5 and len(entry["launch_times_s"]) == 2
        # each launch's median, of its own repetitions in the order they ran
        reps_of = (entry["rep_times_s"][:3], entry["rep_times_s"][3:])
        assert entry["launch_times_s"] == [pytest.approx(statistics.median(r)) for r in reps_of]
        assert entry["time_s"] == pytest.approx(statistics.median(entry["rep_times_s"]))
        # 6 segments x 4 ranks x 4096 B a repetition, over the median time
        assert entry["bytes"] == 98304
        assert entry["bandwidth_Bps"] == pytest.approx(98304 / entry["time_s"])
        # the last launch's command: its two repetitions
        i = entry["command"].index("-i")
        assert entry["command"][i + 1] == "2"
        name = f"phases-{entry['phase_ids'][0]}-{entry['phase_ids'][-1]}-{entry['operation']}"
        reps = [json.loads((out / f"{name}.launch{k}.json").read_text())["tests"][0]["Parameters"]
                ["repetitions"] for k in (1, 2)]
        assert reps == [3, 2]
    # a count no repetition fits: one message, nothing run
    for bad in ("0", "6"):
        p = run("replay", model, "--vc", local_vc, "--backend", "builtin", "--repeat", "5",
                "--launches", bad, "-o", tmp_path / f"bad{bad}")
        assert p.returncode == 2
        assert p.stderr.strip() == (f"iomodel: error: --launches {bad}: expected 1 to --repeat (5); "
                                    "each launch runs at least one repetition")
        assert not (tmp_path / f"bad{bad}").exists()


def test_a_failing_run_is_reported_and_the_rest_goes_on(model, local_vc, tmp_path):
    # a work directory that cannot be created: every run fails, each is reported
    bad = tmp_path / "bad.yaml"
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    bad.write_text(local_vc.read_text().replace(str(tmp_path / "work"), str(blocker / "work")))
    p = run("replay", model, "--vc", bad, "--backend", "builtin", "-o", tmp_path / "r")
    assert p.returncode == 1
    m = json.loads(model.read_text())
    assert len(m["runs"]) == 2 and p.stderr.count("FAILED") == 2
    assert "2 run(s) failed" in p.stderr.strip().splitlines()[-1]
    res = json.loads((tmp_path / "r" / "results.json").read_text())["runs"]
    assert all(not e["ok"] and e["output"] for e in res.values())


def test_replay_with_ior_when_there_is_none(model, local_vc, tmp_path):
    p = run("replay", model, "--vc", local_vc, "--backend", "ior", "-o", tmp_path / "r",
            env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 2 and "IOR not found on PATH" in p.stderr and "--backend builtin" in p.stderr


def test_characterize_a_small_sweep(local_vc, tmp_path):
    out = tmp_path / "ch"
    p = run("characterize", "--vc", local_vc, "--backend", "builtin", "--sizes", "64k,1m",
            "--np", "1,2", "--access", "shared,unique", "--collective", "collective",
            "--bytes", "4m", "-o", out)
    assert p.returncode == 0, p.stderr
    rows = pq.read_table(out / "profile.parquet").to_pylist()
    # 2 sizes x 2 np x 2 access types x 1 kind x (write, read), each measured twice:
    # 4 MiB in all (4m / (rs * np) operations per process) and one operation per process
    assert len(rows) == 32
    segments = {(65536, 1): 64, (65536, 2): 32, (1 << 20, 1): 4, (1 << 20, 2): 2}
    assert sorted((r["transfer_size"], r["np"], r["access_type"], r["operation"], r["ops_per_process"])
                  for r in rows) == \
        sorted((s, n, a, o, k) for s in (65536, 1 << 20) for n in (1, 2) for a in ("shared", "unique")
               for o in ("write", "read") for k in (segments[(s, n)], 1))
    assert all(r["bandwidth_Bps"] > 0 and r["collective"] is True and r["source"] == "builtin"
               for r in rows)
    assert "peak" in p.stdout.lower()
    # every point removes its files: writes without -k, reads (which keep the file
    # their setup wrote, -k, for -i) by iomodel once read
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    assert sorted(("-k" in e["command"], e["operation"]) for e in runs) == \
        [(False, "write")] * 16 + [(True, "read")] * 16
    assert not (tmp_path / "work").exists()     # made for the run, removed after: empty again
    # a sweep of writes alone leaves the cluster's storage as it found it too
    p = run("characterize", "--vc", local_vc, "--backend", "builtin", "--sizes", "64k",
            "--np", "2", "--ops", "write", "--access", "shared,unique", "--collective",
            "collective", "--bytes", "1m", "-o", tmp_path / "writes")
    assert p.returncode == 0, p.stderr
    assert len(pq.read_table(tmp_path / "writes" / "profile.parquet")) == 4
    assert not (tmp_path / "work").exists()     # made for the run, removed after: empty again
    # described with 2 data servers and 256 KiB stripes, over a file system that
    # cannot say where a file goes: the unique points keep their names and sizes
    # (1 MiB / (64 KiB x 2) = 8 writes a file, not a stripe's 4), no placement
    two = tmp_path / "two.yaml"
    two.write_text(local_vc.read_text().replace("io_servers: {data: 1,", "io_servers: {data: 2,")
                   .replace("stripe_size: null", "stripe_size: 256 KiB"))
    assert "data: 2," in two.read_text() and "256 KiB" in two.read_text()
    p = run("characterize", "--vc", two, "--backend", "builtin", "--sizes", "64k",
            "--np", "2", "--ops", "write", "--access", "unique", "--collective",
            "collective", "--bytes", "1m", "--no-one-op", "-o", tmp_path / "two")
    assert p.returncode == 0, p.stderr
    (entry,) = json.loads((tmp_path / "two" / "results.json").read_text())["runs"].values()
    assert entry["point"]["ops_per_process"] == 8 and "placement" not in entry["point"]
    assert str(tmp_path / "work" / "iomodel.sweep.unique.c.2.65536.8") in entry["command"]
    assert not (tmp_path / "work").exists()     # made for the run, removed after: empty again


def test_characterize_rereads(local_vc, tmp_path):
    """--ops reread: each point writes and reads back through one open
    (--iomodel.reread); 64 KiB at np 2 with --bytes 1m: 1m / (64k * 2) = 8
    operations per process, and the one-operation point: 2 profile rows of
    operation reread; the runs' commands have -w -r and the extension."""
    out = tmp_path / "ch"
    p = run("characterize", "--vc", local_vc, "--backend", "builtin", "--sizes", "64k",
            "--np", "2", "--ops", "reread", "--access", "shared", "--collective", "independent",
            "--bytes", "1m", "-o", out)
    assert p.returncode == 0, p.stderr
    rows = pq.read_table(out / "profile.parquet").to_pylist()
    assert sorted((r["operation"], r["np"], r["transfer_size"], r["ops_per_process"]) for r in rows) == \
        [("reread", 2, 65536, 1), ("reread", 2, 65536, 8)]
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    assert all({"-w", "-r", "--iomodel.reread"} <= set(e["command"]) and "-E" not in e["command"]
               for e in runs) and len(runs) == 2
    # the one-operation point is the median of 9 repetitions, the long one a single run
    reps = sorted((e["command"][e["command"].index("-s") + 1], e["repetitions"],
                   "-i" in e["command"] and e["command"][e["command"].index("-i") + 1]) for e in runs)
    assert reps == [("1", 9, "9"), ("8", 1, False)]
    # its 9 repetitions' times are kept, and its time is their median (the fifth);
    # a single run has no repetitions to keep
    (one,) = [e for e in runs if e["command"][e["command"].index("-s") + 1] == "1"]
    (long,) = [e for e in runs if e is not one]
    assert len(one["rep_times_s"]) == 9 and "rep_times_s" not in long
    assert one["time_s"] == sorted(one["rep_times_s"])[4]
    assert [r["time_s"] for r in rows if r["ops_per_process"] == 1] == [one["time_s"]]
    # the 9 repetitions each write into pages of their own; a single run needs nothing
    assert sorted((e["command"][e["command"].index("-s") + 1], "--iomodel.fresh" in e["command"])
                  for e in runs) == [("1", True), ("8", False)]
    bad = run("characterize", "--vc", local_vc, "--backend", "builtin", "--ops", "write,reed",
              "-o", tmp_path / "bad")
    assert bad.returncode == 2 and "--ops write,reed: expected write, read and/or reread, got reed" \
        in bad.stderr


def test_characterize_points_of_fewer_processes_run_in_the_job(local_vc, tmp_path):
    """--np 1,2: the shared independent np-1 points (write, and read) run in a
    job of 2, the second process opening and closing the file with the first
    (-N 1 --iomodel.idleOpen, launched with -np 2), as around an application's
    header written by one of its processes; the collective ones and the np-2
    ones do not; --job-np 1 turns it off.  64 KiB with --bytes 128k: 2
    operations per process at np 1, 1 at np 2 (no separate one-op point)."""
    out = tmp_path / "ch"
    p = run("characterize", "--vc", local_vc, "--backend", "builtin", "--sizes", "64k",
            "--np", "1,2", "--access", "shared", "--collective", "collective,independent",
            "--bytes", "128k", "--no-one-op", "-o", out)
    assert p.returncode == 0, p.stderr
    runs = json.loads((out / "results.json").read_text())["runs"].values()

    def launched(e):
        return int(e["command"][e["command"].index("-np") + 1])
    got = sorted((e["point"]["np"], e["point"]["collective"], e["operation"], launched(e),
                  e["point"]["job_np"], "--iomodel.idleOpen" in e["command"],
                  "-N" in e["command"] and e["command"][e["command"].index("-N") + 1]) for e in runs)
    assert got == [(1, False, "read", 2, 2, True, "1"), (1, False, "write", 2, 2, True, "1"),
                   (1, True, "read", 1, None, False, False), (1, True, "write", 1, None, False, False),
                   (2, False, "read", 2, None, False, False), (2, False, "write", 2, None, False, False),
                   (2, True, "read", 2, None, False, False), (2, True, "write", 2, None, False, False)]
    assert "of 2 holding the file" in p.stderr
    assert len(pq.read_table(out / "profile.parquet")) == 8
    assert not (tmp_path / "work").exists()     # made for the run, removed after: empty again
    p = run("characterize", "--vc", local_vc, "--backend", "builtin", "--sizes", "64k",
            "--np", "1,2", "--ops", "write", "--access", "shared", "--collective", "independent",
            "--bytes", "128k", "--no-one-op", "--job-np", "1", "-o", tmp_path / "off")
    assert p.returncode == 0, p.stderr
    runs = json.loads((tmp_path / "off" / "results.json").read_text())["runs"].values()
    assert sorted((e["point"]["np"], e["point"]["job_np"], "-N" in e["command"]) for e in runs) == \
        [(1, None, False), (2, None, False)]


def test_characterize_repeat_is_passes_over_the_sweep(local_vc, tmp_path):
    """--repeat 2: two passes over the sweep, every point once in each (pass 1 of
    every point before pass 2 of any), each pass a run of its own in
    results.json; 64 KiB at np 2 with --bytes 1m: 8 operations per process and
    the one-operation point, which takes -i 5 in each pass (at least 9 in all,
    and 3 a pass: -i 3 with --repeat 5);
    a point's time is that of its median pass, the lower of two."""
    out = tmp_path / "ch"
    p = run("characterize", "--vc", local_vc, "--backend", "builtin", "--sizes", "64k",
            "--np", "2", "--ops", "write", "--access", "shared", "--collective", "collective",
            "--bytes", "1m", "--repeat", "2", "-o", out)
    assert p.returncode == 0, p.stderr
    runs = json.loads((out / "results.json").read_text())["runs"]

    def segs(e):
        return int(e["command"][e["command"].index("-s") + 1])

    def i_opt(e):
        return "-i" in e["command"] and e["command"][e["command"].index("-i") + 1]
    assert [(k.rsplit("@", 1)[1], segs(e), i_opt(e)) for k, e in runs.items()] == \
        [("pass1of2", 8, False), ("pass1of2", 1, "5"), ("pass2of2", 8, False), ("pass2of2", 1, "5")]
    assert "pass 2/2" in p.stderr
    rows = pq.read_table(out / "profile.parquet").to_pylist()

    def lower(n):
        # of the passes the hypervisor took less than 5% of the time from (when
        # any: test_characterize_leaves_out_passes_the_hypervisor_took_time_from)
        passes = [e for e in runs.values() if segs(e) == n]
        calm = [e for e in passes if not (e["steal_s"] and e["steal_s"] >= 0.05 * e["seconds"])]
        return min(e["time_s"] for e in calm or passes)
    assert sorted((r["ops_per_process"], r["time_s"]) for r in rows) == [(1, lower(1)), (8, lower(8))]
    # five passes: the one-operation point still takes -i 3 in each (9 / 5 would be 2,
    # and a launch's first repetition, the slowest, would then be half of each median)
    p = run("characterize", "--vc", local_vc, "--backend", "builtin", "--sizes", "64k",
            "--np", "2", "--ops", "write", "--access", "shared", "--collective", "collective",
            "--bytes", "1m", "--repeat", "5", "-o", tmp_path / "five")
    assert p.returncode == 0, p.stderr
    runs = json.loads((tmp_path / "five" / "results.json").read_text())["runs"]
    assert sorted((k.rsplit("@", 1)[1], segs(e), i_opt(e), e["repetitions"]) for k, e in runs.items()) == \
        sorted((f"pass{n}of5", s, i, r) for n in range(1, 6) for s, i, r in ((8, False, 1), (1, "3", 3)))


def test_characterize_fresh_files_follows_the_cluster(local_vc, tmp_path):
    """A one-operation write point takes -i 9 in its one pass (at least 9 in all); its repetitions
    write into new files (--iomodel.fresh) unless the cluster description says
    run.fresh_files: false (a disk, where the application writes where the
    previous run's files were): then the command has -i 9 and no --iomodel.fresh.
    The 8-operation point runs once, without it either way."""
    def commands(vc, out):
        p = run("characterize", "--vc", vc, "--backend", "builtin", "--sizes", "64k", "--np", "1",
                "--ops", "write", "--access", "shared", "--collective", "independent",
                "--bytes", "512k", "-o", out)
        assert p.returncode == 0, p.stderr
        runs = json.loads((out / "results.json").read_text())["runs"].values()
        return sorted((e["command"][e["command"].index("-s") + 1],
                       "-i" in e["command"] and e["command"][e["command"].index("-i") + 1],
                       "--iomodel.fresh" in e["command"]) for e in runs)
    assert commands(local_vc, tmp_path / "new") == [("1", "9", True), ("8", False, False)]
    disk_like = tmp_path / "disk_like.yaml"
    text = local_vc.read_text()
    assert "defeat_page_cache: false\n" in text
    disk_like.write_text(text.replace("defeat_page_cache: false\n",
                                      "defeat_page_cache: false\n  fresh_files: false\n"))
    assert commands(disk_like, tmp_path / "old") == [("1", "9", False), ("8", False, False)]


def test_characterize_leaves_out_passes_the_hypervisor_took_time_from(local_vc, tmp_path):
    """Every run records the CPU time the hypervisor took from this machine while
    it ran (steal_s, from /proc/stat). A point's median leaves out the passes
    that lost 5% of their wall time or more when others did not. Of three
    passes, the median one marked as having lost half its time is left out, the
    fastest one marked with 1% is kept: the point's time is the fastest pass's
    (the lower middle of the two left), not the median pass's (no rule) nor the
    slowest's (any steal left out). The characterization run again over the same
    results (every pass done before) says so."""
    out = tmp_path / "ch"
    args = ["characterize", "--vc", local_vc, "--backend", "builtin", "--sizes", "64k", "--np", "1",
            "--ops", "write", "--access", "shared", "--collective", "collective", "--bytes", "4m",
            "--no-one-op", "--repeat", "3", "-o", out]
    p = run(*args)
    assert p.returncode == 0, p.stderr
    state = json.loads((out / "results.json").read_text())
    runs = state["runs"]
    assert len(runs) == 3 and all(isinstance(e["steal_s"], float) and e["steal_s"] >= 0
                                  for e in runs.values())
    ranked = sorted(runs.values(), key=lambda e: e["time_s"])   # passes of equal time tie
    times = [e["time_s"] for e in ranked]
    for e, share in zip(ranked, (0.01, 0.5, 0.0)):
        e["steal_s"] = share * e["seconds"]
    (out / "results.json").write_text(json.dumps(state))
    p = run(*args)
    assert p.returncode == 0, p.stderr
    assert "done before" in p.stderr
    total = sum(e["steal_s"] for e in runs.values())
    assert (f"steal: the hypervisor took {total:.2f} s of CPU time from this machine during 2 of 3 "
            "runs, 1 of them 5% of their time or more; 1 point(s) take the median of their other "
            "passes") in p.stderr
    (row,) = pq.read_table(out / "profile.parquet").to_pylist()
    assert row["time_s"] == times[0]
    # every pass's bandwidth kept, in pass order, the one left out null; the summary
    # says how far the two that count were apart, (slower - faster) / the median's
    passes = [None if runs[k] is ranked[1] else runs[k]["bandwidth_Bps"]
              for k in sorted(runs, key=lambda k: k.rsplit("@pass", 1)[1])]
    assert row["pass_bandwidths_Bps"] == passes and passes.count(None) == 1
    fast, slow = ranked[0]["bandwidth_Bps"], ranked[2]["bandwidth_Bps"]
    assert (f"1 point(s) measured in 3 passes: their passes' times (slowest - fastest) / median "
            f"{(1 / slow - 1 / fast) * row['bandwidth_Bps']:.1%} at the median point") in p.stdout
    # predicted from each pass alone: BT-IO class B at 4 ranks, 40 collective writes
    # and reads of 10612080 B a rank, every phase from this one point (the nearest
    # size and np; the reads from the write's), so its weight / each pass's bandwidth
    m = ROOT / "models" / "examples" / "btio-B-4.json"
    pred = json.loads(run("predict", m, "--vc", local_vc, "--profile", f"local={out / 'profile.parquet'}",
                          "--json").stdout)
    w = 80 * 4 * 10612080
    assert pred["io_time_s"] == pytest.approx(w / row["bandwidth_Bps"], rel=1e-12)
    assert pred["io_time_passes_s"] == pytest.approx([w / (b or row["bandwidth_Bps"]) for b in passes],
                                                     rel=1e-12)
    # the runs made again (--steal-retries, replay/host.py until_calm; tests/test_steal_rule.py)
    bad = run(*args[:-2], "--steal-retries", "-1", "-o", tmp_path / "bad")
    assert bad.returncode == 2 and "--steal-retries -1: expected 0 or more" in bad.stderr


def test_characterize_views_of_pieces(local_vc, tmp_path):
    """--pieces 64k,1m: each shared point of 2 processes whose size is a larger
    multiple of a piece is measured again through a view of such pieces: with
    sizes 64k and 256k, only 256k in pieces of 64k (64k is no larger than 64k,
    neither is larger than 1m; np 1 has no view).  --bytes 1m: 1m / (256k * 2) = 2
    operations per process, as its contiguous point; no one-op view point."""
    out = tmp_path / "ch"
    p = run("characterize", "--vc", local_vc, "--backend", "builtin", "--sizes", "64k,256k",
            "--np", "1,2", "--ops", "write", "--access", "shared", "--collective", "collective",
            "--bytes", "1m", "--pieces", "64k,1m", "-o", out)
    assert p.returncode == 0, p.stderr
    rows = pq.read_table(out / "profile.parquet").to_pylist()
    views = [(r["np"], r["transfer_size"], r["ops_per_process"], r["piece"]) for r in rows
             if r["piece"] is not None]
    assert views == [(2, 262144, 2, 65536)]
    assert len(rows) == 2 * 2 * 2 + 1          # (sizes x np) x (long, one op) + the view
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    assert sorted(a for e in runs for a in e["command"] if a.startswith("--iomodel.piece")) == \
        ["--iomodel.piece=65536"]
    assert not (tmp_path / "work").exists()     # made for the run, removed after: empty again
    bad = run("characterize", "--vc", local_vc, "--backend", "ior", "--pieces", "64k",
              "-o", tmp_path / "bad")
    assert bad.returncode == 2 and "--pieces needs --backend builtin" in bad.stderr


def test_characterize_random_points(local_vc, tmp_path):
    """--random: each independent contiguous point again with each process's
    operations in a random order within its block (IOR's -z, which needs one
    block of several transfers: -s 1 -b ops*rs).  64 KiB writes and rereads to
    one shared file, --bytes 256k: np 1 does 4 operations, np 2 two each; the
    collective points get no random twin, nor do the one-op points (one
    operation has one order)."""
    out = tmp_path / "ch"
    p = run("characterize", "--vc", local_vc, "--backend", "builtin", "--sizes", "64k",
            "--np", "1,2", "--ops", "write,reread", "--access", "shared",
            "--collective", "collective,independent", "--bytes", "256k", "--random", "-o", out)
    assert p.returncode == 0, p.stderr
    rows = pq.read_table(out / "profile.parquet").to_pylist()
    assert sorted((r["operation"], r["collective"], r["np"], r["ops_per_process"]) for r in rows
                  if r["random"]) == [("reread", False, 1, 4), ("reread", False, 2, 2),
                                      ("write", False, 1, 4), ("write", False, 2, 2)]
    # in order: 2 ops x 2 collective x 2 np, each long and one-op
    assert sum(not r["random"] for r in rows) == 2 * 2 * 2 * 2
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    shuffled = sorted((e["point"]["operation"], e["point"]["np"],
                       " ".join(e["command"][e["command"].index("-s"):e["command"].index("-t") + 2]))
                      for e in runs if "-z" in e["command"])
    assert shuffled == [("reread", 1, "-s 1 -b 262144 -t 65536"), ("reread", 2, "-s 1 -b 131072 -t 65536"),
                        ("write", 1, "-s 1 -b 262144 -t 65536"), ("write", 2, "-s 1 -b 131072 -t 65536")]
    assert all(e["point"]["ops_per_process"] == (4 if e["point"]["np"] == 1 else 2)
               for e in runs if "-z" in e["command"])
    assert "in a random order" in p.stderr
    assert not (tmp_path / "work").exists()     # made for the run, removed after: empty again


def test_characterize_computing_between_operations(local_vc, tmp_path):
    """--think 100us,1ms: each independent point of several processes again with
    them computing so long between operations.  64 KiB writes to a file each,
    --bytes 256k, no one-op points: np 1 does 4 operations, np 2 two each; the
    np 2 point twice more, with --iomodel.think, of 4 operations each (a point
    computing between operations has at least THINK_OPS).  The time in calls
    leaves the computing out: the 1 ms point's time from open to close exceeds
    its time in calls by the 3 ms each process spun between its four writes,
    its time in calls is under 1 ms, and its bandwidth is its bytes over that time."""
    out = tmp_path / "ch"
    p = run("characterize", "--vc", local_vc, "--backend", "builtin", "--sizes", "64k",
            "--np", "1,2", "--ops", "write", "--access", "unique", "--collective", "independent",
            "--bytes", "256k", "--no-one-op", "--think", "100us,1ms", "-o", out)
    assert p.returncode == 0, p.stderr
    rows = pq.read_table(out / "profile.parquet").to_pylist()
    assert sorted((r["np"], r["ops_per_process"], r["think_s"] or 0) for r in rows) == \
        [(1, 4, 0), (2, 2, 0), (2, 4, 0.0001), (2, 4, 0.001)]
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    slow = next(e for e in runs if "--iomodel.think=0.001000" in e["command"])
    # from the first open to the last close each process spun 1 ms between each two of
    # its four writes besides its time in them; counted, that 3 ms would be in the time
    # in calls too, which is under 1 ms (64 KiB writes to tmp take tens of microseconds)
    assert slow["open_to_close_s"] - slow["time_s"] >= 0.003
    assert slow["time_s"] < 0.001
    assert next(r for r in rows if r["think_s"] == 0.001)["bandwidth_Bps"] == \
        pytest.approx(2 * 4 * 65536 / slow["time_s"])     # 2 processes, 4 writes each
    assert sorted(a for e in runs for a in e["command"] if a.startswith("--iomodel.think")) == \
        ["--iomodel.think=0.000100", "--iomodel.think=0.001000"]
    assert "computing 1 ms between" in p.stderr
    bad = run("characterize", "--vc", local_vc, "--backend", "ior", "--think", "1ms",
              "-o", tmp_path / "bad")
    assert bad.returncode == 2 and "--think needs --backend builtin" in bad.stderr
    bad = run("characterize", "--vc", local_vc, "--backend", "builtin", "--think", "2",
              "-o", tmp_path / "bad")
    assert bad.returncode == 2 and "--think 2: expected times from 1us to 1" in bad.stderr
    for k in ("0.5us", "1ms,x", "1s"):
        bad = run("characterize", "--vc", local_vc, "--backend", "builtin", "--think", k,
                  "-o", tmp_path / "bad")
        assert bad.returncode == 2 and f"--think {k}: expected times from 1us to 1" in bad.stderr, k
    assert not (tmp_path / "bad").exists()


def test_characterize_buffer_offsets(local_vc, tmp_path):
    """--buffer-offsets 16 with --ops write,read,reread, 64 KiB at np 1, --bytes
    256k (4 operations), no one-op points, independent: every point again with
    the buffer 16 B past 4 KiB: 6 rows (a collective write would not be: the
    aggregators' buffers write its data).  IOR cannot place its buffer; 4096 is
    no offset within 4 KiB."""
    out = tmp_path / "ch"
    p = run("characterize", "--vc", local_vc, "--backend", "builtin", "--sizes", "64k",
            "--np", "1", "--ops", "write,read,reread", "--access", "unique",
            "--collective", "independent", "--bytes", "256k", "--no-one-op",
            "--buffer-offsets", "16", "-o", out)
    assert p.returncode == 0, p.stderr
    rows = pq.read_table(out / "profile.parquet").to_pylist()
    assert sorted((r["operation"], r["buffer_offset"] or 0, r["ops_per_process"]) for r in rows) == \
        [("read", 0, 4), ("read", 16, 4), ("reread", 0, 4), ("reread", 16, 4), ("write", 0, 4),
         ("write", 16, 4)]
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    assert sorted(a for e in runs for a in e["command"] if "bufferOffset" in a) == \
        ["--iomodel.bufferOffset=16"] * 3
    assert not (tmp_path / "work").exists()     # made for the run, removed after: empty again
    bad = run("characterize", "--vc", local_vc, "--backend", "ior", "--buffer-offsets", "16",
              "-o", tmp_path / "bad")
    assert bad.returncode == 2 and "--buffer-offsets needs --backend builtin" in bad.stderr
    bad = run("characterize", "--vc", local_vc, "--backend", "builtin", "--buffer-offsets", "4096",
              "-o", tmp_path / "bad")
    assert bad.returncode == 2 and \
        "--buffer-offsets 4096: expected bytes from 0 to 4095, got '4096'" in bad.stderr


def test_characterize_one_stripe(local_vc, tmp_path):
    """--one-stripe on a description of 2 data servers striping by 64 KiB, independent
    shared writes of 16k and 64k at np 1 and 2, --bytes 256k.  The sweep's files are
    256 KiB: 16k np 1 x 16 ops, 16k np 2 x 8, 64k np 1 x 4, 64k np 2 x 2.  Within
    64 KiB: 16k np 1 x 4 ops, 16k np 2 x 2; 64k np 1 would be 1 op (its one-op point
    measures that), 64k np 2 none.  So 4 long + 4 one-op + 2 one-stripe rows.  On one
    data server every file sits on it: the option says so and measures none."""
    vc = tmp_path / "striped.yaml"
    vc.write_text(local_vc.read_text().replace("io_servers: {data: 1,", "io_servers: {data: 2,")
                  .replace("stripe_size: null", "stripe_size: 64k"))
    out = tmp_path / "ch"
    args = ("--backend", "builtin", "--sizes", "16k,64k", "--np", "1,2", "--ops", "write",
            "--access", "shared", "--collective", "independent", "--bytes", "256k", "--one-stripe")
    p = run("characterize", "--vc", vc, *args, "-o", out)
    assert p.returncode == 0, p.stderr
    rows = pq.read_table(out / "profile.parquet").to_pylist()
    assert sorted((r["np"], r["transfer_size"], r["ops_per_process"], r["file_cap"]) for r in rows) == \
        [(1, 16384, 1, None), (1, 16384, 4, 65536), (1, 16384, 16, None), (1, 65536, 1, None),
         (1, 65536, 4, None), (2, 16384, 1, None), (2, 16384, 2, 65536), (2, 16384, 8, None),
         (2, 65536, 1, None), (2, 65536, 2, None)]
    assert p.stderr.count("on one stripe of 65536 B") == 2
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    capped = sorted((e["np"], e["command"][e["command"].index("-s") + 1]) for e in runs
                    if e["point"].get("file_cap"))
    assert capped == [(1, "4"), (2, "2")]
    assert not (tmp_path / "work").exists()     # made for the run, removed after: empty again
    one = run("characterize", "--vc", local_vc, *args, "-o", tmp_path / "one")
    assert one.returncode == 0, one.stderr
    assert "--one-stripe: local has 1 data server: every file sits on it; no one-stripe points" \
        in one.stderr
    assert len(pq.read_table(tmp_path / "one" / "profile.parquet")) == 8


def test_compare_local_with_the_papers_vcs(model, local_vc, tmp_path):
    out = tmp_path / "replay"
    assert run("replay", model, "--vc", local_vc, "--backend", "builtin", "-o", out).returncode == 0
    p = run("compare", model, "--vc", local_vc, "vc1", "vc2", "vc3", "vc4",
            "--profile", f"local={out / 'profile.parquet'}", "--json", "--plot", tmp_path / "fig")
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    names = {"local", "vc1", "vc2", "vc3", "vc4"}
    assert set(res["predictions"]) == names
    # the model (4 processes, 96 KiB a phase) fits every VC, and each has
    # bandwidths for it (the paper's VCs their shipped points, local its replay)
    assert res["infeasible"] == [] and not res.get("unavailable")
    assert sorted(res["by_time"]) == sorted(names)
    for name in ("cost.png", "perf_cost.png"):
        assert (tmp_path / "fig" / name).read_bytes()[:4] == b"\x89PNG"


def test_predict_replays_now_when_asked(model, local_vc, tmp_path):
    out = tmp_path / "now"
    p = run("predict", model, "--vc", local_vc, "--replay", out, "--backend", "builtin", "--json")
    assert p.returncode == 0, p.stderr
    res = json.loads((out / "results.json").read_text())["runs"]
    bw = {pid: e["bandwidth_Bps"] for e in res.values() for pid in e["phase_ids"]}
    pred = json.loads(p.stdout)
    assert {ph["id"]: ph["bw_Bps"] for ph in pred["phases"]} == pytest.approx(bw)


def test_replay_as_modelled_uses_the_phases_offsets_and_gaps(traced, local_vc, tmp_path):
    # ior_like segmented at 4 ranks with 12 barriers between operations: 12 write
    # phases of rep 1 (max_comm_gap 8 < 12), each rank's block at r * b, one
    # segment of np * b per phase: offsets first = k * np * b, per_rank b
    r = traced("ior_like", 4, "segmented", 12, 12)
    model = tmp_path / "m.json"
    assert run("analyze", r.trace_dir, "-o", model, "-q").returncode == 0
    m = json.loads(model.read_text())
    out = tmp_path / "r"
    p = run("replay", model, "--vc", local_vc, "-o", out)       # the builtin backend, as modelled: the default
    assert p.returncode == 0, p.stderr
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    assert all(e["backend"] == "builtin" for e in runs)
    first_run = min(runs, key=lambda e: e["phase_ids"][0])
    # the six writes (S = 6, T = 4096 B at i*P*T + r*T) are the first run
    assert first_run["phase_ids"] == [1, 2, 3, 4, 5, 6]
    ph = [x for x in m["phases"] if x["id"] in first_run["phase_ids"]]
    assert [(x["operation"], x["rs"], x["offsets"]["first"], x["offsets"]["per_rank"]) for x in ph] == \
        [("write", 4096, i * 4 * 4096, 4096) for i in range(6)]
    opts = first_run["as_modelled"]
    assert opts[0] == "--iomodel.offsets=0,4096,16384"
    gaps = sorted(x["gap_s"] for x in ph[1:])
    assert opts[1] == f"--iomodel.gap={gaps[len(gaps) // 2]:.6f}"
    # 12 barriers between the phases: they start together in the replay too
    assert [x["gap_comm"] for x in ph[1:]] == [12] * (len(ph) - 1) and opts[2] == "--iomodel.gapBarrier"
    assert all(e["ok"] for e in runs) and first_run["command"][-3:] == opts
    # back to back, as the paper replays: IOR's layout, no gaps
    p = run("replay", model, "--vc", local_vc, "--back-to-back", "-o", tmp_path / "b2b")
    assert p.returncode == 0, p.stderr
    runs = json.loads((tmp_path / "b2b" / "results.json").read_text())["runs"].values()
    assert all(e["as_modelled"] == [] and not any("--iomodel.gap" in a for a in e["command"]) for e in runs)
    # IOR has only its own layout: asked for, refused; by default, said
    p = run("replay", model, "--vc", local_vc, "--backend", "ior", "--as-modelled", "-o", out)
    assert p.returncode == 2 and "--as-modelled needs --backend builtin" in p.stderr
    p = run("replay", model, "--vc", local_vc, "--backend", "ior", "-o", tmp_path / "i", env={"PATH": "/usr/bin:/bin"})
    assert "IOR replays the phases back to back in its own layout" in p.stderr


def test_replay_as_modelled_computes_between_a_phases_operations(traced, local_vc, tmp_path):
    """ior_like contiguous at 2 ranks: one write phase of 8 operations per rank
    (iop 1, rep 8) and one read of one.  As modelled, the write's run gets
    --iomodel.think, the most a rank computed between its operations
    (compute_s: none of them in progress) over its 7 gaps (the replayer's test
    checks what it does); the read, one operation per rank, gets none."""
    from iomodel.replay.ior import ior_invocations
    from iomodel.replay.runner import modelled_options
    r = traced("ior_like", 2, "contiguous")
    mpath = tmp_path / "m.json"
    assert run("analyze", r.trace_dir, "-o", mpath, "-q").returncode == 0
    m = json.loads(mpath.read_text())
    w, rd = m["phases"]
    assert (w["operation"], w["iop"], w["rep"], rd["operation"], rd["rep"]) == ("write", 1, 8, "read", 1)
    # the computing lies within the phase's span
    assert 0 < w["compute_s"] < w["duration_s"]
    think = w["compute_s"] / 7
    opts = {inv.operation: modelled_options(m, inv) for inv in ior_invocations(m)}
    assert opts["write"][-1] == f"--iomodel.think={think:.6f}"
    assert not any(o.startswith("--iomodel.think") for o in opts["read"])
    out = tmp_path / "r"
    p = run("replay", mpath, "--vc", local_vc, "--backend", "builtin", "--as-modelled", "-o", out)
    assert p.returncode == 0, p.stderr
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    assert {e["operation"]: e["command"][-1] for e in runs}["write"] == opts["write"][-1]


def test_replay_as_modelled_keeps_iors_layout_for_random_phases(traced):
    """random_io at 2 ranks, 8 pieces of 16 KiB: rank r writes the pieces of its
    block [r * 128 KiB, (r + 1) * 128 KiB) in a random order, then reads them
    in another.  Each phase's first offsets are one random piece per rank:
    placing rank r's block there would overlap the other's, so as modelled
    the runs keep IOR's layout (-z, each rank's block at r * b, shuffled
    within), which is random_io's own."""
    from iomodel.replay.ior import ior_invocations
    from iomodel.replay.runner import modelled_options
    r = traced("random_io", 2, 16384, 8)
    mpath = r.trace_dir.parent / "m.json"
    assert run("analyze", r.trace_dir, "-o", mpath, "-q").returncode == 0
    m = json.loads(mpath.read_text())
    assert [(p["operation"], p["access_mode"], p["rep"], p["rs"], p["np"]) for p in m["phases"]] == \
        [("write", "random", 8, 16384, 2), ("read", "random", 8, 16384, 2)]
    # rank 0's first piece in its block, rank 1's in its own (block 131072 B): the
    # LCG's permutations (random_io.c) start writes at pieces 0 and 4, reads at 4 and 3
    assert [(p["offsets"]["first"], p["offsets"]["per_rank"]) for p in m["phases"]] == \
        [(0, 131072 + 4 * 16384), (4 * 16384, 131072 + 3 * 16384 - 4 * 16384)]
    invs = ior_invocations(m)
    assert [inv.operation for inv in invs] == ["write", "read"]
    for inv in invs:
        assert "-z" in inv.flags and (inv.segments, inv.block, inv.transfer) == (1, 131072, 16384)
        assert not any(o.startswith("--iomodel.offsets") for o in modelled_options(m, inv))


def _replayer_traced(inv, opts, tmp_path, np_):
    """The built-in replayer run as `replay` runs `inv` with `opts`, under the
    tracer (MPI-IO only: not the summary file it writes): its trace directory
    and its argv."""
    from iomodel.replay.backends import get_backend
    from iomodel.replay.results import replayer_path
    from conftest import mpirun
    argv = get_backend("builtin").argv(inv, str(replayer_path()), tmp_path / "s.json", 1)
    argv = [a if a != inv.test_file else str(tmp_path / "replay-files") for a in argv] + opts
    tdir = tmp_path / "replay-trace"
    p = subprocess.run(IOMODEL + ["trace", "-o", str(tdir), "--", *mpirun(np_, *argv)],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "IOMODEL_POSIX": "0"})
    assert p.returncode == 0, p.stdout + p.stderr
    return tdir, argv


def test_replay_as_modelled_covers_the_applications_view_pieces(traced, tmp_path):
    """S3D-like at 2 ranks, 16^3: per file, each rank writes its half (8 of 16 x
    planes: 16 KiB contiguous) of 16 arrays of 32 KiB after the 512-byte header,
    through subarray views: one phase of 256 KiB per rank in pieces of 16 KiB,
    first 512, per_rank 16 KiB.  Replayed as modelled through a view of those
    pieces (--iomodel.piece), the replayer writes exactly the application's byte
    ranges: both traced, the (rank, offset, length) sets are equal."""
    from iomodel.analyzer import Trace
    from iomodel.replay.ior import ior_invocations
    from iomodel.replay.runner import modelled_options
    app = traced("s3d_like", 2, "blocking")
    mpath = tmp_path / "s3d.json"
    assert run("analyze", app.trace_dir, "-o", mpath, "-q").returncode == 0
    m = json.loads(mpath.read_text())
    data = m["phases"][1]
    assert (data["np"], data["rs"], data["offsets"]["first"], data["offsets"]["per_rank"],
            data["offsets"]["contiguous"], data["offsets"]["piece"]) == \
        (2, 16 * 16384, 512, 16384, False, 16384)
    inv = next(i for i in ior_invocations(m) if i.phase_ids == [data["id"]])
    opts = modelled_options(m, inv)
    # its 4 writes per file (iop 4) have set_view calls between them, which count
    # as computing: the think time is compute_s over the gaps between operations
    assert 0 < data["compute_s"] < data["duration_s"]
    think = data["compute_s"] / (data["iop"] * data["rep"] - 1)
    assert (inv.piece, opts) == (16384, ["--iomodel.offsets=512,16384,0",
                                         f"--iomodel.think={think:.6f}"])
    tdir, argv = _replayer_traced(inv, opts, tmp_path, 2)
    assert "--iomodel.piece=16384" in argv and "-c" in argv

    def ranges(trace, name):
        ev = {(e["rank"], e["seq"]): e for e in trace.events.to_pylist()}
        return sorted((x["rank"], x["offset"], x["length"]) for x in trace.extents.to_pylist()
                      if ev[(x["rank"], x["seq"])]["write"]
                      and trace.paths[x["file_id"]].endswith(name))
    want = [r for r in ranges(app.trace(), "/s3d.0.nc") if r[2] != 512]      # not the header
    assert len(want) == 2 * 16 and {r[2] for r in want} == {16384}
    assert ranges(Trace(tdir), "/s3d.0.nc") == want


def test_replay_as_modelled_leaves_the_gap_between_dumps_not_between_writes(traced, local_vc, tmp_path):
    """btio_simple (NAS BT-IO's simple subtype in small) at 2 ranks, 8^3 cells
    of 40 B, 4 dumps after 5 time steps each (one MPI_Sendrecv a step): rank r
    writes its 4 cells of each of the 64 rows (z, y) with one 160-byte
    MPI_File_write_at at d*20480 + (z*8 + y)*320 + r*160, then all read the
    rows back through the same open.  The model: 4 write phases of rep 64
    (first d*20480, per_rank 160, stride 320), 5 communication calls before
    each of the last three, then one read of rep 4*64 = 256.  The writes are
    one invocation of 256 segments of one 160-byte transfer; as modelled the
    application's time between dumps (the median gap_s of phases 2 to 4) goes
    before every 64th segment, with a barrier after it (gap_comm 5 > 0), not
    before each of the 256 (BT-IO W simple: 11,520 gaps of 0.1 s, half an
    hour, for a run of 8 s).  The replayer's own trace has one communication
    call (the barrier) between two of them and at least the gap there, and
    analyzed with a burst ending at any call, the application's four write
    phases at the same offsets."""
    from iomodel.analyzer import Trace
    from iomodel.replay.ior import ior_invocations
    from iomodel.replay.runner import modelled_options
    app = traced("btio_simple", 2)
    mpath = tmp_path / "m.json"
    assert run("analyze", app.trace_dir, "-o", mpath, "-q").returncode == 0
    m = json.loads(mpath.read_text())

    def shape(model):
        return [(p["operation"], p["np"], p["routine"], p["iop"], p["rs"], p["rep"], p["offsets"]["first"],
                 p["offsets"]["per_rank"], p["offsets"]["stride"]) for p in model["phases"]]
    writes = [("write", 2, "MPI_File_write_at", 1, 160, 64, d * 20480, 160, 320) for d in range(4)]
    assert shape(m) == writes + [("read", 2, "MPI_File_read_at", 1, 160, 256, 0, 160, 320)]
    assert m["runs"] == [[1, 4], [5, 5]] and [p["gap_comm"] for p in m["phases"][1:4]] == [5] * 3
    inv = ior_invocations(m)[0]
    assert (inv.phase_ids, inv.segments, inv.block, inv.transfer) == ([1, 2, 3, 4], 256, 160, 160)
    gap = sorted(p["gap_s"] for p in m["phases"][1:4])[1]
    opts = modelled_options(m, inv)
    # (no --iomodel.offsets: four phases of rep 64 are no single stride; a think
    # time may follow, the processes' skew in a dump)
    assert opts[:3] == [f"--iomodel.gap={gap:.6f}", "--iomodel.gapBarrier", "--iomodel.gapEvery=64"]
    tdir, _ = _replayer_traced(inv, opts, tmp_path, 2)
    rmodel = tmp_path / "replay-model.json"
    # its one barrier where the application made 5 calls: a burst ends at any call
    assert run("analyze", tdir, "-o", rmodel, "-q", "--max-comm-gap", 0).returncode == 0
    assert shape(json.loads(rmodel.read_text())) == writes
    every = [0] * 63 + [1]
    for rank, evs in rank_events(Trace(tdir)).items():
        w = [e for e in evs if e["write"] and e["data"]]
        assert len(w) == 256
        assert [b["lclock"] - a["lclock"] for a, b in zip(w, w[1:])] == (every * 4)[:255]
        assert all(w[k]["t_start"] - w[k - 1]["t_end"] >= float(f"{gap:.6f}") for k in (64, 128, 192))
    # the whole replay, as modelled by default
    out = tmp_path / "r"
    p = run("replay", mpath, "--vc", local_vc, "-o", out)
    assert p.returncode == 0, p.stderr
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    first = next(e for e in runs if e["phase_ids"] == [1, 2, 3, 4])
    assert first["ok"] and first["as_modelled"] == opts and first["command"][-len(opts):] == opts


def test_replay_as_modelled_reads_a_shared_file_past_its_header(traced, local_vc, tmp_path):
    """hacc_like at 4 ranks, 100 particles a rank: rank 0's 65536-byte header,
    then each rank's 9 variables (7 of 400 B, 800, 200: 3800 B) of the
    all-rank blocks after it, variable v of rank r at 65536 + 4*100*(bytes of
    the variables before v) + r*100*size(v); read back the same way.  The
    read phase of the variables starts at 65536, per_rank 400, and is
    replayed there as modelled (--iomodel.offsets=65536,400,0); the setup run
    that writes the file for it must put the data there too: in IOR's layout
    it wrote 4 * 3800 = 15200 B from 0, and the read at 65536 found nothing
    ("short read at offset 65536 ...: 0 of 3800 bytes")."""
    from iomodel.replay.ior import ior_invocations
    from iomodel.replay.runner import modelled_layout, modelled_options
    app = traced("hacc_like", 4, 100)
    mpath = tmp_path / "m.json"
    assert run("analyze", app.trace_dir, "-o", mpath, "-q").returncode == 0
    m = json.loads(mpath.read_text())
    sizes = [400] * 7 + [800, 200]
    assert [(p["operation"], p["ranks"], p["request_sizes"], p["offsets"]["first"], p["offsets"]["per_rank"])
            for p in m["phases"]] == [("write", "0", [65536], 0, None), ("write", "0-3", sizes, 65536, 400),
                                      ("read", "0", [65536], 0, None), ("read", "0-3", sizes, 65536, 400)]
    read = ior_invocations(m)[3]
    assert (read.phase_ids, read.operation, read.block, read.transfer) == ([4], "read", 3800, 3800)
    assert read.setup is not None and modelled_layout(m, read) == ["--iomodel.offsets=65536,400,0"]
    assert modelled_options(m, read)[0] == "--iomodel.offsets=65536,400,0"
    out = tmp_path / "r"
    p = run("replay", mpath, "--vc", local_vc, "-o", out)
    assert p.returncode == 0, p.stdout + p.stderr
    runs = {tuple(e["phase_ids"]): e for e in json.loads((out / "results.json").read_text())["runs"].values()}
    assert runs[(4,)]["ok"] and runs[(4,)]["bytes"] == 4 * 3800


def test_results_written_before_one_run_a_line_are_resumed(tmp_path):
    # results.json as written until 2026-11-29 (indented): read as it is, and
    # the next record writes it one run a line with the earlier runs kept
    from iomodel.replay.runner import State
    old = {"runs": {"k1": {"ok": True, "bandwidth_Bps": 1.5e9}, "k2": {"ok": False}}}
    (tmp_path / "results.json").write_text(json.dumps(old, indent=1))
    st = State(tmp_path)
    assert st.done("k1") == {"ok": True, "bandwidth_Bps": 1.5e9} and st.done("k2") is None
    st.record("k3", {"ok": True, "bandwidth_Bps": 2.0e9})
    text = (tmp_path / "results.json").read_text()
    assert json.loads(text) == {"runs": {**old["runs"], "k3": {"ok": True, "bandwidth_Bps": 2.0e9}}}
    assert text.splitlines()[1:4] == ['"k1": {"ok": true, "bandwidth_Bps": 1500000000.0},',
                                      '"k2": {"ok": false},', '"k3": {"ok": true, "bandwidth_Bps": 2000000000.0}']
    assert State(tmp_path).done("k3") == {"ok": True, "bandwidth_Bps": 2.0e9}


def test_compare_two_files_of_one_name_are_two_rows(tmp_path):
    """vc3.yaml twice, as a user compares two prices: the same `name: vc3`,
    one at the paper's $0.239/h (eu-west-1), the other at $9.99/h. Each is a
    row of its own, labelled by its file, with its own cost: the same I/O time
    and storage, an instance cost 9.99 / 0.239 times the first's; --profile
    by file name reaches the one file only."""
    src = (ROOT / "cluster" / "shipped" / "vc3.yaml").read_text()
    assert "usd_per_hour: 0.239" in src
    (tmp_path / "a.yaml").write_text(src)
    (tmp_path / "b.yaml").write_text(src.replace("usd_per_hour: 0.239", "usd_per_hour: 9.99"))
    btio = ROOT / "models" / "examples" / "btio-C-16.json"
    p = run("compare", btio, "--vc", tmp_path / "a.yaml", tmp_path / "b.yaml", "--json")
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["order"] == ["vc3 (a.yaml)", "vc3 (b.yaml)"]
    a, b = res["predictions"]["vc3 (a.yaml)"], res["predictions"]["vc3 (b.yaml)"]
    assert a["io_time_s"] == b["io_time_s"] and a["cost_fix_usd"] == b["cost_fix_usd"]
    assert b["cost_var_usd"] == pytest.approx(a["cost_var_usd"] * 9.99 / 0.239, rel=1e-12)
    assert res["by_cost"] == ["vc3 (a.yaml)", "vc3 (b.yaml)"]
    # a profile for b.yaml only: every phase of the model at 1000 MiB/s (its own points are slower)
    from iomodel.cluster.characterize import write_profile
    from iomodel.cluster.profile import MiB, Profile
    m = json.loads(btio.read_text())
    points = [{"operation": ph["operation"], "np": ph["np"], "rs": ph["rs"], "bw_Bps": 1000 * MiB,
               "collective": True} for ph in m["phases"]]
    write_profile(Profile.from_points(points), tmp_path / "fast.parquet")
    p = run("compare", btio, "--vc", tmp_path / "a.yaml", tmp_path / "b.yaml", "--json", "--profile",
            f"b.yaml={tmp_path / 'fast.parquet'}")
    assert p.returncode == 0, p.stderr
    res2 = json.loads(p.stdout)
    assert res2["predictions"]["vc3 (a.yaml)"]["io_time_s"] == a["io_time_s"]
    assert res2["predictions"]["vc3 (b.yaml)"]["io_time_s"] == pytest.approx(m["weight"] / (1000 * MiB))
    p = run("compare", btio, "--vc", tmp_path / "a.yaml", "--profile", f"c.yaml={tmp_path / 'fast.parquet'}")
    assert p.returncode == 2 and "--profile names no --vc cluster: c.yaml" in p.stderr


def test_characterize_for_a_model(traced, local_vc, tmp_path):
    """--for MODEL: exactly the points the model's replay runs.  ior_cmd's
    -a MPIIO -c -s 4 -b 64k -t 16k -w -r at 2 ranks: one collective write and
    one collective read of 16 KiB transfers on a shared file (the read after a
    reopen: no reread), so two points of np 2, 16384 B, shared, collective;
    each with its one-operation run; and the same two with the buffer's
    offset past a page for the read, where the model has one (not for the
    collective write: its data reaches the file from the aggregators' buffers)."""
    r = traced("ior_cmd", 2, "-a", "MPIIO", "-c", "-s", "4", "-b", "64k", "-t", "16k", "-w", "-r")
    m = tmp_path / "m.json"
    assert run("analyze", r.trace_dir, "-o", m, "-q").returncode == 0
    model = json.loads(m.read_text())
    boff = {p["operation"]: p.get("buffer_offset") for p in model["phases"]}
    out = tmp_path / "ch"
    p = run("characterize", "--vc", local_vc, "--backend", "builtin", "--for", m, "--bytes", "256k", "-o", out)
    assert p.returncode == 0, p.stderr
    rows = pq.read_table(out / "profile.parquet").to_pylist()
    got = sorted((r["operation"], r["np"], r["transfer_size"], r["access_type"], r["collective"],
                  r["ops_per_process"], r["buffer_offset"] or 0) for r in rows)
    # --bytes 256k: 256k / (16k * 2) = 8 operations a process, and the one-op run
    want = [("write", 2, 16384, "shared", True, n, 0) for n in (1, 8)] + \
        [("read", 2, 16384, "shared", True, n, 0) for n in (1, 8)]
    if boff["read"]:
        want += [("read", 2, 16384, "shared", True, n, boff["read"]) for n in (1, 8)]
    assert got == sorted(want)
    bad = run("characterize", "--vc", local_vc, "--for", m, "--sizes", "4k", "-o", tmp_path / "bad")
    assert bad.returncode == 2 and "--for takes the points from the model(s): not with --sizes" in bad.stderr


def test_writes_extending_the_file_are_replayed_and_measured_in_blocks(traced, local_vc, tmp_path):
    """bt_simple (NAS BT-IO simple's multipartition) at 4 ranks: 3 dumps of 72
    independent 240-byte writes a process, 120 of each dump's 288 extending
    the file in lockstep (tests/test_parallel_analysis.py works them out).
    IOR's blocks of 4 transfers extend it with 7 / 16, the nearest share
    among the divisors of 72: the replay writes -s 54 -b 960 -t 240, and
    --for measures that point in blocks of 4 beside the sweep's: --bytes 256k
    is 273 operations a process of 240 B at np 4, 68 blocks of 4 (272) in
    blocks.  The prediction from that profile takes their ratio."""
    from iomodel.replay.ior import ior_invocations
    app = traced("bt_simple", 4)
    m = tmp_path / "m.json"
    assert run("analyze", app.trace_dir, "-o", m, "-q").returncode == 0
    model = json.loads(m.read_text())
    assert [p.get("extending_writes") for p in model["phases"]] == [120] * 3 + [None]
    inv = ior_invocations(model)[0]
    assert (inv.phase_ids, inv.segments, inv.block, inv.transfer, inv.collective) == ([1, 2, 3], 54, 960, 240,
                                                                                     False)
    out = tmp_path / "ch"
    p = run("characterize", "--vc", local_vc, "--backend", "builtin", "--for", m, "--bytes", "256k", "-o", out)
    assert p.returncode == 0, p.stderr
    rows = [(r["operation"], r["np"], r["transfer_size"], r["collective"], r["ops_per_process"],
             r["block_transfers"]) for r in pq.read_table(out / "profile.parquet").to_pylist()
            if r["operation"] == "write" and r["access_type"] == "shared" and not r["buffer_offset"]
            and not r["think_s"]]
    assert sorted(rows, key=str) == sorted([("write", 4, 240, False, 273, None), ("write", 4, 240, False, 1, None),
                                            ("write", 4, 240, False, 272, 4)], key=str)
    p = run("predict", m, "--vc", local_vc, "--profile", f"{local_vc}={out / 'profile.parquet'}", "--json")
    assert p.returncode == 0, p.stderr
    notes = [x["note"] for x in json.loads(p.stdout)["phases"][:3]]
    assert all("blocks of 4 transfers: time x " in n for n in notes), notes


def test_characterize_for_a_solver_measures_its_dumps_after_computing(traced, local_vc, tmp_path):
    """--for the model of solver_like (32^3 cells on 2 ranks, 3 dumps, 10 ADI
    steps before each): its three collective writes of 32 * 32 * 16 * 40 =
    655360 B a rank are one invocation, whose phases each come after the
    solver's steps (gap_s). Besides its plain points, the write's point again
    with the processes computing that long between operations: the median of
    the three phases' gap_s to the millisecond, 4 operations a process (the
    least a point computing between them has). The reads (one phase of rep 3,
    rereads) compute too, the check of each dump read: their point computes
    what a process computed between them (compute_s) over its 2 gaps
    (replay.runner.think_time), where that rounds to a millisecond or more
    (not the span less the time in calls: that counts how far apart the
    processes started, 1 ms on a loaded machine where they computed none)."""
    r = traced("solver_like", 2, 32, 32, 32, 3, 10)
    m = tmp_path / "m.json"
    assert run("analyze", r.trace_dir, "-o", m, "-q").returncode == 0
    phases = json.loads(m.read_text())["phases"]
    writes, [read] = phases[:3], phases[3:]
    assert [(p["operation"], p["rs"], p["rep"], p["collective"]) for p in phases] == \
        [("write", 655360, 1, True)] * 3 + [("read", 655360, 3, True)]
    k = round(sorted(p["gap_s"] for p in writes)[1], 3)
    assert k >= 0.001
    k_read = round(read["compute_s"] / 2, 3)
    out = tmp_path / "ch"
    p = run("characterize", "--vc", local_vc, "--for", m, "--bytes", "256k", "-o", out)
    assert p.returncode == 0, p.stderr
    rows = pq.read_table(out / "profile.parquet").to_pylist()
    thinks = [(r["operation"], r["np"], r["transfer_size"], r["collective"], r["ops_per_process"], r["think_s"])
              for r in rows if r["think_s"]]
    assert thinks == [("write", 2, 655360, True, 4, k)] + ([("reread", 2, 655360, True, 4, k_read)] if k_read else [])


def test_two_profiles_of_one_cluster_are_read_together(tmp_path):
    """--profile vc3=A --profile vc3=B: both profiles' points (a cluster's sweep,
    and `characterize --for` a model). The paper's BT-IO class B model on vc3,
    A holding only its writes' point (100 MiB/s), B only its reads' (300 MiB/s):
    each phase takes its own operation's, measured."""
    from iomodel.cluster.characterize import write_profile
    from iomodel.cluster.profile import Profile
    btio = ROOT / "models" / "examples" / "btio-B-4.json"
    m = json.loads(btio.read_text())
    MiB = 2 ** 20
    for op, bw in (("write", 100), ("read", 300)):
        rs = next(p["rs"] for p in m["phases"] if p["operation"] == op)
        write_profile(Profile.from_points([{"operation": op, "np": 4, "rs": rs, "bw_Bps": bw * MiB,
                                            "access_type": "shared", "collective": True}]),
                      tmp_path / f"{op}.parquet")
    p = run("predict", btio, "--vc", "vc3", "--json", "--profile", f"vc3={tmp_path / 'write.parquet'}",
            "--profile", f"vc3={tmp_path / 'read.parquet'}")
    assert p.returncode == 0, p.stderr
    got = {(ph["operation"], ph["bw_Bps"] / MiB, ph["note"]) for ph in json.loads(p.stdout)["phases"]}
    assert got == {("write", 100, "measured"), ("read", 300, "measured")}
