"""`iomodel analyze` on traces of real runs, against models worked out by hand.

Each case traces a program of tests/programs/ (or examples/btio_like.c)
under mpirun, analyzes the trace with `python -m iomodel analyze`, and
compares the model with tests/programs/expected_models.py: every phase's
facts (file, operation, routine, np, ranks, iop, request sizes, rs, rep,
weight, access mode, offsets, logical time), the files' type, role and
sizes (expressions 2 to 4), the model's weight and storage capacity, the
runs of identical phases, the order graph and the auto threshold.  All
exact: none of these facts depends on timing.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import BOTH_MPIS, IOMODEL, PROGRAMS, rank_events
from iomodel.analyzer.trace import Trace

sys.path.insert(0, str(PROGRAMS))
import expected_models as em  # noqa: E402

CASES = em.cases()
ABSENT = "<absent>"
TIMING = {"start_s", "end_s", "duration_s", "io_time_s", "bandwidth_Bps", "gap_s", "arrival_skew_s", "compute_s",
          "done_early_s"}


def analyze(run, out):
    proc = subprocess.run(IOMODEL + ["analyze", str(run.trace_dir), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"iomodel analyze failed ({proc.returncode}):\n" \
                                 f"{proc.stdout}\n{proc.stderr}"
    return json.loads(out.read_text())


def flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def first_rank(ranks):
    return int(ranks.split(",")[0].split("-")[0])


def phase_facts(model, p, want):
    """The facts of model phase p named by the keys of want."""
    flat = flatten(p)
    got = {}
    for k in want:
        if k == "file":
            got[k] = os.path.basename(model["files"][p["file"]]["name"])
        elif k == "request_sizes_one_of":
            # "one process's" sizes when the ranks differ: any group's
            got[k] = want[k] if p.get("request_sizes") in want[k] else p.get("request_sizes")
        elif k == "rs_groups":
            g = p.get("rs_groups")
            got[k] = None if g is None else sorted(g, key=lambda x: first_rank(x["ranks"]))
        else:
            got[k] = flat.get(k, ABSENT)
    return got


def closure(edges):
    reach = {}
    for a, b in edges:
        reach.setdefault(a, set()).add(b)
    changed = True
    while changed:
        changed = False
        for a in reach:
            new = set().union(*(reach.get(b, set()) for b in reach[a])) - reach[a]
            if new:
                reach[a] |= new
                changed = True
    return {(a, b) for a, bs in reach.items() for b in bs}


def check_model(model, want):
    from iomodel.models import validate
    validate(model)
    assert model["application"]["np"] == want["np"]
    a = model["analysis"]
    assert (a["max_comm_gap"], a["max_idle_s"]) == (want["max_comm_gap"], None)
    assert a["threshold_rule"].startswith("auto"), a["threshold_rule"]
    if want["features"] is not None:
        assert model["application"]["features"] == want["features"]
    phases = model["phases"]
    assert [p["id"] for p in phases] == list(range(1, len(phases) + 1))
    got = [phase_facts(model, p, w) for p, w in zip(phases, want["phases"])]
    wrong = [(i + 1, {k: (g[k], w[k]) for k in w if g[k] != w[k]})
             for i, (g, w) in enumerate(zip(got, want["phases"])) if g != w]
    assert not wrong, "phases differ (id, {field: (got, expected)}), first ones:\n" + \
        "\n".join(map(str, wrong[:6]))
    assert len(phases) == len(want["phases"])
    files = {os.path.basename(f["name"]): f for f in model["files"]}
    assert sorted(files) == sorted(want["files"])
    for name, w in want["files"].items():
        f = dict(files[name], paths=sorted(os.path.basename(x) for x in files[name]["paths"]))
        assert {k: f.get(k, ABSENT) for k in w} == w, name
    assert model["storage_capacity"] == want["storage_capacity"]
    assert model["weight"] == want["weight"]
    assert model["runs"] == want["runs"]
    must = {(a, b) for seq in want["sequences"].values() for a, b in zip(seq, seq[1:])}
    order = {tuple(e) for e in model["order"]}
    assert must <= order, sorted(must - order)
    assert order <= closure(must), sorted(order - closure(must))


@pytest.mark.parametrize("case", list(CASES))
def test_model_matches_hand_derivation(traced, tmp_path, case):
    prog, np_, args, mca, want = CASES[case]
    run = traced(prog, np_, *args, mca=mca)
    check_model(analyze(run, tmp_path / "model.json"), want)


def without_timing(model):
    """The model less what differs from run to run: times, and where a buffer from
    the heap sat (after what MPI_Init allocated, which differs with the job's ids
    and paths: btio_like's 5 KiB buffer 3392 bytes past a page in one run, 2848 in
    the next)."""
    m = json.loads(json.dumps(model))
    for p in m["phases"]:
        for k in TIMING | {"buffer_offset"}:
            p.pop(k, None)
    m["application"].pop("run_time_s")
    m["application"].pop("io_time_s")
    m["application"].pop("process_io_time_s", None)
    m["source"].pop("path", None)
    return m


def calls_time(mine):
    """A collective phase's time worked out from its events: per call (the j-th
    data operation of every process), from the last process's entry to the last
    process's exit, summed over the calls."""
    [n] = {len(v) for v in mine.values()}
    return sum(max(0.0, max(v[j]["t_end"] for v in mine.values()) - max(v[j]["t_start"] for v in mine.values()))
               for j in range(n))


def span(mine):
    return max(e["t_end"] for v in mine.values() for e in v) - min(e["t_start"] for v in mine.values() for e in v)


def test_phase_io_time_is_its_collective_calls_from_last_entry_to_last_exit(traced, tmp_path):
    """io_time_s of a collective phase: per call the time from the last process's
    entry to the last process's exit, summed over the phase's calls; duration_s:
    first start to last end.  btio_like at 4 ranks: 40 phases of one
    MPI_File_write_at_all each, then one of 40 MPI_File_read_at_all."""
    run = traced("btio_like", 4, 8, 8, 8, 40)
    m = analyze(run, tmp_path / "model.json")
    ev = rank_events(Trace(run.trace_dir))
    data = {r: [e for e in v if e["data"]] for r, v in ev.items()}
    assert all(len(v) == 80 for v in data.values())       # 40 writes, then 40 reads
    assert len(m["phases"]) == 41
    for p in m["phases"]:
        assert p["collective"] is True
        # phase k <= 40: the k-th write of every rank; phase 41: the 40 reads
        mine = {r: (v[p["id"] - 1: p["id"]] if p["id"] <= 40 else v[40:]) for r, v in data.items()}
        assert p["io_time_s"] == pytest.approx(calls_time(mine), rel=1e-9, abs=1e-12)
        assert p["duration_s"] == pytest.approx(span(mine), rel=1e-9, abs=1e-12)
        assert 0 < p["io_time_s"] <= p["duration_s"] + 1e-12


def test_phase_io_time_leaves_out_the_waits_for_a_late_process(traced, tmp_path):
    """late_rank: rank 1 sleeps 0.5 s before each of the phase's two collective
    writes of 100 bytes, so the other ranks wait about 0.5 s inside each call.
    Those waits are rank 1's computing, not I/O: a replay, whose processes enter
    together, has none, and neither does the phase's io_time_s (each call from
    its last entry, rank 1's, to its last exit), while duration_s >= 1 s."""
    run = traced("late_rank", 4)
    m = analyze(run, tmp_path / "model.json")
    [p] = m["phases"]
    assert (p["operation"], p["collective"], p["np"], p["iop"], p["rs"], p["rep"], p["weight"]) == \
        ("write", True, 4, 1, 100, 2, 800)
    assert p["offsets"]["first"] == 0 and p["offsets"]["per_rank"] == 100
    ev = rank_events(Trace(run.trace_dir))
    mine = {r: [e for e in v if e["data"]] for r, v in ev.items()}
    assert p["io_time_s"] == pytest.approx(calls_time(mine), rel=1e-9, abs=1e-12)
    # the two 0.5 s sleeps are in the span, not in the I/O time
    assert p["duration_s"] >= 1.0 and p["io_time_s"] < p["duration_s"] - 0.9
    # rank 0 waits in both calls: its own time in them holds both sleeps, and
    # no process did any of the phase before the last came in
    assert sum(e["t_end"] - e["t_start"] for e in mine[0]) >= 1.0
    assert "done_early_s" not in p
    # how late the processes came: per call, from the first entry to the last (rank 1's),
    # summed; and the longest a process computed inside the phase (rank 1's second sleep)
    calls = list(zip(*mine.values()))
    assert p["arrival_skew_s"] == pytest.approx(
        sum(max(e["t_start"] for e in c) - min(e["t_start"] for e in c) for c in calls), rel=1e-9)
    assert p["arrival_skew_s"] >= 1.0
    assert p["compute_s"] == pytest.approx(max(
        v[-1]["t_end"] - v[0]["t_start"] - sum(e["t_end"] - e["t_start"] for e in v) for v in mine.values()),
        rel=1e-9)
    assert p["compute_s"] >= 0.5
    # the application's own measure: each process's time in its calls (rank 0 waits ~1 s in them)
    per = [sum(e["t_end"] - e["t_start"] for e in v) for v in mine.values()]
    assert m["application"]["process_io_time_s"] == pytest.approx({"max": max(per), "mean": sum(per) / 4},
                                                                  rel=1e-9)
    assert m["application"]["process_io_time_s"]["max"] >= 1.0


def test_a_collective_phase_done_early_by_the_first_process_in(traced, tmp_path):
    """late_rank at 2 ranks: Open MPI writes each rank's contiguous 100 bytes on
    its own, so rank 0 is done with each call before rank 1, 0.5 s late, comes
    in.  The phase's done_early_s is the time rank 0 spent in its two calls,
    its io_time_s rank 1's own calls."""
    run = traced("late_rank", 2)
    m = analyze(run, tmp_path / "model.json")
    [p] = m["phases"]
    assert (p["collective"], p["np"], p["rep"], p["weight"]) == (True, 2, 2, 400)
    ev = rank_events(Trace(run.trace_dir))
    mine = {r: [e for e in v if e["data"]] for r, v in ev.items()}
    assert all(a["t_end"] <= b["t_start"] for a, b in zip(mine[0], mine[1]))
    own = [e["t_end"] - e["t_start"] for e in mine[0]]
    assert p["done_early_s"] == pytest.approx(sum(own), rel=1e-9, abs=1e-12)
    assert p["io_time_s"] == pytest.approx(sum(e["t_end"] - e["t_start"] for e in mine[1]), rel=1e-9)


def test_phase_io_time_counts_the_wait_hidden_in_set_view_between_collective_writes(traced, tmp_path):
    """s3d_like at 2 ranks: per file, 4 MPI_File_write_all (11L, L, L and 3L
    bytes, L = 16 KiB) with a collective MPI_File_set_view before each.
    A process that leaves a write early waits for the other in the next
    set_view, outside every I/O call, so its own calls hold less than the phase
    took; from last entry to last exit, the 4 calls hold it all, at least each
    process's own time in them after the last entry."""
    run = traced("s3d_like", 2, "blocking")
    m = analyze(run, tmp_path / "model.json")
    ev = rank_events(Trace(run.trace_dir))
    data = {r: [e for e in v if e["data"] and e["write"]] for r, v in ev.items()}
    writes = [p for p in m["phases"] if p["np"] == 2]
    L = 16 * 16 * 8 * 8                           # a rank's half of the 16^3 grid, in doubles
    assert len(writes) == 5 and all(p["iop"] == 4 and p["collective"] for p in writes)
    assert [len(data[r]) for r in (0, 1)] == [5 + 5 * 4, 5 * 4]   # rank 0 also writes 5 headers
    for i, p in enumerate(writes):
        mine = {r: [e for e in v if e["file"] == f"s3d.{i}.nc" and e["bytes"] > 512]
                for r, v in data.items()}
        assert [[e["bytes"] for e in mine[r]] for r in (0, 1)] == [[11 * L, L, L, 3 * L]] * 2
        got = calls_time(mine)
        assert p["io_time_s"] == pytest.approx(got, rel=1e-9, abs=1e-12)
        for v in mine.values():
            after_entry = sum(max(0.0, e["t_end"] - max(e["t_start"], max(w[j]["t_start"] for w in mine.values())))
                              for j, e in enumerate(v))
            assert after_entry <= got + 1e-12
        assert got <= p["duration_s"] + 1e-12


def test_reread_through_a_noncontiguous_view(traced, tmp_path):
    """view_reread, P = 4, B = 1 KiB, N = 4: each rank writes its 4 pieces
    r*B + j*4B through a vector view (write_at_all, weight 4*4 KiB = 16384);
    then, through the same open, read A of the same pieces and read B of the
    next rank's pieces (both read_at_all of 4 KiB, one barrier apart like the
    write before them: one read phase, rep 2, weight 32768), and read C
    (read_at, 2 KiB from r*B: its own piece 0 and the next rank's bytes).
    A's pieces are all ones the rank wrote: reread; B's none; C's range only
    half: so reread_bytes = A's 4 * 4096 = 16384 of the first read phase, 0
    of the second."""
    run = traced("view_reread", 4)
    m = analyze(run, tmp_path / "model.json")
    assert [(p["operation"], p["collective"], p["rs"], p["rep"], p["weight"], p.get("reread_bytes"))
            for p in m["phases"]] == [("write", True, 4096, 1, 16384, None),
                                      ("read", True, 4096, 2, 32768, 16384),
                                      ("read", False, 2048, 1, 8192, 0)]


def test_same_program_twice_gives_the_same_model(traced, tmp_path):
    models = []
    for i in range(2):
        run = traced("btio_like", 4, 8, 8, 8, 40)
        models.append(analyze(run, tmp_path / f"model{i}.json"))
        # the fixture reuses its directories: move this trace aside, start afresh
        shutil.move(str(run.trace_dir), str(tmp_path / f"trace{i}"))
        shutil.rmtree(run.data_dir)
    a, b = map(without_timing, models)
    assert a == b
    assert len(a["phases"]) == 41


def test_show_prints_the_model(traced, tmp_path):
    run = traced("btio_like", 4, 8, 8, 8, 40)
    path = tmp_path / "model.json"
    model = analyze(run, path)
    proc = subprocess.run(IOMODEL + ["show", str(path), "--json"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["np"] == model["application"]["np"] == 4
    assert shown["storage_capacity"] == model["storage_capacity"]
    assert shown["weight"] == model["weight"]
    assert len(shown["phases"]) == len(model["phases"]) == 41
    for s, p in zip(shown["phases"], model["phases"]):
        f = model["files"][p["file"]]
        for k in ("id", "np", "operation", "rs", "rep", "weight", "access_mode"):
            assert s[k] == p[k], (p["id"], k)
        assert s["access_type"] == f["access_type"]
        assert s["file"] in (p["file"], f["name"], os.path.basename(f["name"])), s["file"]
    text = subprocess.run(IOMODEL + ["show", str(path)], capture_output=True, text=True,
                          timeout=60)
    assert text.returncode == 0, text.stderr
    assert "1 to 40" in text.stdout


def test_an_ordered_write_of_nothing_through_a_view(traced, tmp_path):
    """ordered_view, 3 ranks: MPI_File_write_ordered of 16, 0 and 16 bytes
    through a view of 4 bytes in every 8. Rank 1's empty call sits where the
    shared pointer is, view byte 16 = file byte 32 (it once stopped analyze
    with an IndexError); the others' data as the program's comment works out."""
    from iomodel.analyzer import load_ops
    run = traced("ordered_view", 3)
    ops = load_ops(run.trace_dir)
    assert [(r.rank, r.offset.tolist(), r.pieces.tolist()) for r in ops.ranks] == \
        [(0, [0], [4]), (1, [32], [1]), (2, [32], [4])]
    model = analyze(run, tmp_path / "m.json")
    assert sum(p["weight"] for p in model["phases"]) == 32
def test_unique_files_grouped_by_the_ranks_own_number(traced, tmp_path):
    """rank_files, 4 ranks: each writes 2 x 4096 B into each of its own files.
    Only the rank's number in a name is the group's {rank}: HACC-IO's
    part-Part<r>-of-00000004 keeps its "of 4"; out.<r+1> counts from 1; the
    checkpoints of steps 10 and 20 are two groups, not one. One write phase a
    group, np 4, in the program's order (a barrier between files)."""
    m = analyze(traced("rank_files", 4), tmp_path / "m.json")
    names = [os.path.basename(m["files"][p["file"]]["name"]) for p in m["phases"]]
    assert names == ["part-Part{rank}-of-00000004.data", "out.{rank+1}.dat", "step10.{rank}.dat",
                     "step20.{rank}.dat"]
    assert [(p["operation"], p["np"], p["rs"], p["rep"]) for p in m["phases"]] == [("write", 4, 4096, 2)] * 4
    for p in m["phases"]:
        f = m["files"][p["file"]]
        assert f["access_type"] == "unique"
        assert sorted(os.path.basename(x) for x in f["paths"]) == sorted(
            names[m["phases"].index(p)].replace("{rank}", str(r)).replace("{rank+1}", f"{r + 1:04d}")
            for r in range(4))


@pytest.mark.parametrize("files, want", [
    ([("d/part-Part%d-of-00000004.data" % r, r) for r in range(4)], {"d/part-Part{rank}-of-00000004.data"}),
    ([("ckpt_step10_rank%d.dat" % r, r) for r in range(12)], {"ckpt_step10_rank{rank}.dat"}),
    ([("out.%04d.dat" % (r + 1), r) for r in range(3)], {"out.{rank+1}.dat"}),
    ([("step10_file3", 3), ("step20_file3", 3)], {"step10_file{rank}", "step20_file{rank}"}),
    ([("x_%d" % (2 * r), r) for r in range(1, 4)], {"x_{n}"}),       # names that do not hold the rank
])
def test_unique_group_names(files, want):
    from iomodel.analyzer.phases import unique_group_names
    assert set(unique_group_names(files).values()) == want


@pytest.mark.parametrize("mode", ["own-open", "job-open"])
def test_a_ranks_header_is_a_phase_of_its_own(traced, tmp_path, mode):
    """hacc_like at 4 ranks, 1000 particles each (GenericIO's order): rank 0
    writes the 65536-byte header through its own MPI_COMM_SELF open, then all
    write their 9 variables through the job's open; the restart reads them the
    same way.  Rank 0's header is not paired with the other ranks' arrays (it
    is their k-th MPI_File_read_at burst too): four phases, the header's of np 1.
    job-open: rank 0 writes and reads the header through the job's open, then
    hands out 10 parameters (MPI_Bcast) before all move their arrays: the
    logical clock pairs rank 0's arrays with the others' (step 3), not its
    header.
    Variable v of rank r: at 65536 + 4*1000*(bytes of the variables before v)
    + r*1000*size(v), sizes 4 (7 floats), 8 (pid), 2 (mask): 38000 B a rank."""
    r = traced("hacc_like", 4, *([1000, "job-open"] if mode == "job-open" else []))
    m = tmp_path / "m.json"
    assert subprocess.run(IOMODEL + ["analyze", str(r.trace_dir), "-o", str(m), "-q"]).returncode == 0
    model = json.loads(m.read_text())
    sizes = [4000] * 7 + [8000, 2000]
    got = [(p["operation"], p["ranks"], p["request_sizes"], p["rep"], p["weight"], p["offsets"]["first"],
            p["offsets"]["per_rank"], p.get("own_open")) for p in model["phases"]]
    own = True if mode == "own-open" else None
    assert got == [("write", "0", [65536], 1, 65536, 0, None, own),
                   ("write", "0-3", sizes, 1, 4 * 38000, 65536, 4000, None),
                   ("read", "0", [65536], 1, 65536, 0, None, own),
                   ("read", "0-3", sizes, 1, 4 * 38000, 65536, 4000, None)]
    assert model["files"][0]["access_type"] == "shared" and model["files"][0]["np"] == 4
    # the header's replay launches rank 0 alone: nobody else had it open
    from iomodel.replay.ior import ior_invocations
    header = ior_invocations(model)[0]
    # through the job's open, the others had it open too (and are launched to)
    assert (header.phase_ids, header.np, header.launch_np) == ([1], 1, 1 if own else 4)


def test_a_header_written_last_makes_the_phase_random(traced, tmp_path):
    """hacc_coral at 4 ranks, 1000 particles each (the CORAL HACC-IO
    benchmark's order): every rank writes its record block of 38000 B at
    65536 + r * 38000, its 9 variables one after the other, then rank 0 goes
    back to write the 65536-byte header at 0, through the same open and
    routine.  Rank 0's burst is its 9 variables and the header, whose offset
    starts before the one before it: by step 4 of the rule the phase is
    random (the least ordered of its processes), not strided.  The restart:
    rank 0's header through its own open (np 1), then the 9 variables of
    every rank, each rank's in order (sequential)."""
    r = traced("hacc_coral", 4, 1000)
    m = tmp_path / "m.json"
    assert subprocess.run(IOMODEL + ["analyze", str(r.trace_dir), "-o", str(m), "-q"]).returncode == 0
    model = json.loads(m.read_text())
    sizes = [4000] * 7 + [8000, 2000]
    write, header, read = model["phases"]
    assert (write["ranks"], write["weight"], write["access_mode"]) == ("0-3", 4 * 38000 + 65536, "random")
    assert [(g["ranks"], g["request_sizes"]) for g in write["rs_groups"]] == [("0", sizes + [65536]),
                                                                             ("1-3", sizes)]
    assert (header["ranks"], header["request_sizes"], header["offsets"]["first"], header["own_open"],
            header["access_mode"]) == ("0", [65536], 0, True, "sequential")
    assert (read["ranks"], read["request_sizes"], read["offsets"]["first"], read["offsets"]["per_rank"],
            read["access_mode"]) == ("0-3", sizes, 65536, 38000, "sequential")


@BOTH_MPIS
def test_collective_aggregators_from_the_layer_under_mpi_io(traced, tmp_path, mpi):
    """btio_like 16^3 points of 40 B, 3 steps, 4 ranks, traced with
    IOMODEL_UNDER_MPI=1: each step's collective write moves 40960 B a rank,
    and the MPI-IO library's two-phase I/O has one aggregator on one node
    (ROMIO's cb_nodes and OMPIO's default both give one a node): rank 0 writes
    the whole step underneath, 16^3 * 40 = 163840 B, and reads the three steps
    back, 491520 B.  The other processes write nothing to the file."""
    run = traced("btio_like", 4, 16, 16, 16, 3, env={"IOMODEL_UNDER_MPI": "1"}, posix=True)
    m = analyze(run, tmp_path / "model.json")
    got = [(p["operation"], p["np"], p["weight"], p["aggregators"]["ranks"], p["aggregators"]["bytes"])
           for p in m["phases"]]
    assert got == [("write", 4, 163840, "0", 163840)] * 3 + [("read", 4, 491520, "0", 491520)]
    for p in m["phases"]:
        assert p["aggregators"]["time_s"] > 0 and p["aggregators"]["others_time_s"] > 0
    # without the layer under MPI-IO the model cannot tell
    plain = analyze(traced("btio_like", 4, 16, 16, 16, 3), tmp_path / "plain.json")
    assert not any("aggregators" in p for p in plain["phases"])


@BOTH_MPIS
def test_a_solver_that_computes_between_its_dumps(traced, tmp_path, mpi):
    """solver_like 16^3 cells of 40 B on 2 ranks (z slabs of 8), 3 dumps, 2 ADI
    steps before each (2 MPI_Sendrecv and 1 MPI_Allreduce a step: 6 calls
    between dumps), then the 3 dumps read back one after another. A rank's
    dump: 16 * 16 * 8 * 40 = 81920 B through its view, 256 pieces of 8 * 40 =
    320 B, rank 1's first 320 B past rank 0's; dump d at d * 163840. The
    computing between dumps makes each its own phase (the rule's break between
    0 and 6 calls), as the paper's BT-IO; the reads are one phase of rep 3,
    reread through the open that wrote them. The time computed between dumps
    is the gap before each write phase (gap_s), none inside the phases."""
    run = traced("solver_like", 2, 16, 16, 16, 3, 2)
    m = analyze(run, tmp_path / "model.json")
    got = [(p["routine"], p["np"], p["request_sizes"], p["rep"], p["weight"], p["access_mode"], p["collective"],
            p["offsets"]["first"], p["offsets"]["per_rank"], p["offsets"]["stride"], p["offsets"]["piece"],
            p["gap_comm"]) for p in m["phases"]]
    write = [("MPI_File_write_at_all", 2, [81920], 1, 163840, "strided", True, d * 163840, 320, None, 320, 6)
             for d in range(3)]
    assert got == write + [("MPI_File_read_at_all", 2, [81920], 3, 491520, "strided", True, 0, 320, 163840,
                            320, 0)]
    assert m["phases"][-1]["reread_bytes"] == 491520
    assert m["analysis"]["max_comm_gap"] == 0
    assert [p["compute_s"] for p in m["phases"][:3]] == [0.0] * 3
    assert all(p["gap_s"] > 0 for p in m["phases"])
    assert [(f["access_type"], f["extent"]) for f in m["files"]] == [("shared", 3 * 163840)]



def idle_between(calls):
    """The time within a run of calls (in call order) when none was in progress:
    each call's start less the latest end before it, where positive, summed."""
    idle, last = 0.0, calls[0]["t_end"]
    for c in calls[1:]:
        idle += max(0.0, c["t_start"] - last)
        last = max(last, c["t_end"])
    return idle


def test_nonblocking_calls_in_flight_together(traced, tmp_path):
    """nb_window on 2 ranks: each posts 4 MPI_File_iwrite_at of 1024 B at
    (r*4 + i)*1024 and completes them with one MPI_Waitall, then reads them
    back likewise.  A call lasts from its post to the MPI_Waitall, so the four
    overlap: their durations add up to more than their span, and the span less
    them (compute_s once) was negative, the model refused.  compute_s is the
    time when none was in progress: 0, each call being posted before the
    Waitall that ends the ones before it.  Phases: the writes (np 2, rep 4,
    rs 1024, weight 2*4*1024 = 8192, sequential, rank r's at 4096*r), the reads
    of the same blocks, read back through the same open (reread 8192)."""
    run = traced("nb_window", 2)
    m = analyze(run, tmp_path / "model.json")
    got = [(p["routine"], p["np"], p["rep"], p["rs"], p["weight"], p["access_mode"], p["offsets"]["first"],
            p["offsets"]["per_rank"], p.get("reread_bytes")) for p in m["phases"]]
    assert got == [("MPI_File_iwrite_at", 2, 4, 1024, 8192, "sequential", 0, 4096, None),
                   ("MPI_File_iread_at", 2, 4, 1024, 8192, "sequential", 0, 4096, 8192)]
    from iomodel.analyzer import load_ops
    ops = load_ops(run.trace_dir).table.to_pylist()
    for p, write in zip(m["phases"], (True, False)):
        calls = {r: [o for o in ops if o["rank"] == r and o["write"] == write] for r in (0, 1)}
        for c in calls.values():
            assert len(c) == 4
            durations = sum(o["t_end"] - o["t_start"] for o in c)
            assert durations > max(o["t_end"] for o in c) - c[0]["t_start"]     # they overlap
            assert idle_between(c) == 0.0
        assert p["compute_s"] == 0.0
        assert p["io_time_s"] == pytest.approx(
            max(sum(o["t_end"] - o["t_start"] for o in c) for c in calls.values()), rel=1e-9)

@pytest.mark.parametrize("dense", [True, False])
def test_uneven_keys_and_order_edges_by_table_and_by_sort(monkeypatch, dense):
    """The phase finding's tables (a dense table where it fits, a sort beyond)
    give the same answers, worked out by hand on bursts in rank order: key 5
    rank 0 twice and rank 2 once (uneven; rank 1 has none), key 9 once on
    each rank (even); phases 0 1 2 on rank 0, 0 2 on rank 1, 2 0 on rank 2."""
    import numpy as np
    from iomodel.analyzer import phase_groups, phases
    if not dense:
        monkeypatch.setattr(phases, "MAX_DENSE_CELLS", 0)
        monkeypatch.setattr(phase_groups, "MAX_DENSE_CELLS", 0)
    key = np.array([5, 5, 9, 9, 9, 5], np.int64)
    rank = np.array([0, 0, 0, 1, 2, 2], np.int32)
    assert phases._uneven_keys(key, rank).tolist() == [5]
    b = {"rank": np.array([0, 0, 0, 1, 1, 2, 2], np.int32)}
    phase_of = np.array([0, 1, 2, 0, 2, 2, 0], np.int64)
    assert phase_groups.order_edges(b, phase_of, 3) == [(0, 1), (0, 2), (1, 2), (2, 0)]


def test_phase_order_is_networkx_lexicographical_topological_sort():
    """The analyzer orders phases with a heap of its own (networkx's import
    costs a tenth of a small analysis): the same order as networkx's
    lexicographical_topological_sort on random per-process sequences (ties
    by start, file and index; several starts equal), and by key alone when
    the sequences disagree (a cycle)."""
    import networkx as nx
    from hypothesis import given, settings, strategies as st
    from iomodel.analyzer.phases import _phase_order

    @settings(max_examples=300, deadline=None)
    @given(st.integers(1, 12).flatmap(lambda n: st.tuples(
        st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1)), min_size=n, max_size=n),
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))))
    def check(case):
        starts, pairs = case
        phases = [{"start_s": float(s), "file": f} for s, f in starts]
        edges = [(x, y) for x, y in pairs if x != y]
        g = nx.DiGraph()
        g.add_nodes_from(range(len(phases)))
        g.add_edges_from(edges)
        key = {i: (p["start_s"], p["file"], i) for i, p in enumerate(phases)}
        try:
            want = list(nx.lexicographical_topological_sort(g, key=lambda i: key[i]))
        except nx.NetworkXUnfeasible:
            want = sorted(range(len(phases)), key=lambda i: key[i])
        assert _phase_order(phases, edges) == {i: pos for pos, i in enumerate(want)}
    check()
