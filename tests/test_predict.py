"""Prediction of I/O time and cost on virtual clusters (cluster/profile.py,
cluster/predict.py, cluster/compare.py) against the method paper's tables:
BW_CH of Table VII (VC 3, NAS BT-IO) and Table IX (VC 4, S3D-IO) as profiles,
prices of Tables III and IV, expressions 5-8, and the paper's feasibility
statements (sections III-A-2, III-B-2, III-B-6)."""
import json
import math
import types
from pathlib import Path

import pytest

from iomodel.models import load_model
from iomodel.cluster.description import load_cluster
from iomodel.cluster.compare import compare, format_comparison, plot_comparison
from iomodel.cluster.predict import GB, PredictError, feasibility, format_prediction, predict
from iomodel.cluster.profile import Profile, ProfileError, summary

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "models" / "examples"
TABLES = json.loads((ROOT.parent / "shared" / "reference" / "paper-tables.json").read_text()) \
    if (ROOT.parent / "shared" / "reference" / "paper-tables.json").exists() else None
MiB = 1 << 20
HOUR = 3600

# Table VII (VC 3, BT-IO, collective, shared file) and Table IX (VC 4, S3D-IO):
# (class or workload, np, BW_CH MB/s (= MiB/s), time s), as printed in the paper.
TABLE_VII = [("B", 4, 104, 15.5), ("B", 9, 91, 17.7), ("B", 16, 96, 16.9), ("B", 25, 73, 22.6),
             ("B", 36, 74, 22.2), ("C", 4, 87, 74.5), ("C", 9, 83, 77.8), ("C", 16, 84, 77.2),
             ("C", 25, 82, 79.0), ("C", 36, 78, 82.9)]
TABLE_IX = [("200", 8, 541, 9.0), ("200", 16, 474, 10.4), ("200", 32, 411, 11.9),
            ("400", 8, 398, 98.1), ("400", 16, 431, 90.6), ("400", 32, 425, 91.7)]

_models = {}


def model(name):
    if name not in _models:
        _models[name] = load_model(EXAMPLES / f"{name}.json")
    return _models[name]


def table_profile(rows, prefix):
    """The table's BW_CH as write, shared, collective points at the model's (np, rs)."""
    pts = []
    for cls, np_, bw, _ in rows:
        m = model(f"{prefix}-{cls}-{np_}")
        pts.append({"operation": "write", "access_type": "shared", "collective": True, "np": np_,
                    "rs": m["phases"][0]["rs"], "bw_Bps": bw * MiB, "source": "paper"})
    return Profile.from_points(pts)


def test_tables_in_this_file_are_the_papers():
    if TABLES is None:
        pytest.skip("shared/reference/paper-tables.json not here")
    vii = [(r["class"], r["np"], r["bw_ch_MBps"], r["time_s"]) for r in TABLES["table_VII_btio_ior_on_vc3"]["rows"]]
    ix = [(r["workload"][:3], r["np"], r["bw_ch_MBps"], r["time_s"]) for r in TABLES["table_IX_s3dio_ior_on_vc4"]["rows"]]
    assert vii == TABLE_VII and ix == TABLE_IX


# -- time: Tables VII and IX ---------------------------------------------------------

def test_btio_on_vc3_matches_table_vii():
    vc3 = load_cluster("vc3")
    prof = table_profile(TABLE_VII, "btio")
    for cls, np_, bw, table_time in TABLE_VII:
        m = model(f"btio-{cls}-{np_}")
        pred = predict(m, vc3, prof)
        writes = [p for p in pred["phases"] if p["id"] <= 40]
        assert len(writes) == 40 and all(p["operation"] == "write" for p in writes)
        assert all(p["bw_Bps"] == bw * MiB and p["note"] == "measured" for p in writes)
        t = sum(p["time_s"] for p in writes)
        # Table VII: time = weight of phases 1..40 / BW_CH, within about 2%
        assert t == pytest.approx(sum(p["weight"] for p in writes) / (bw * MiB), rel=1e-12)
        assert t == pytest.approx(table_time, rel=0.02), (cls, np_)
        # phase 41 (read, rep 40): no read point, so the write bandwidth, with a note
        (p41,) = [p for p in pred["phases"] if p["id"] == 41]
        assert p41["operation"] == "read" and p41["rep"] == 40
        assert p41["bw_Bps"] == bw * MiB
        assert p41["note"].startswith("no read bandwidth measured: used write")
        assert p41["time_s"] == pytest.approx(p41["weight"] / (bw * MiB), rel=1e-12)
        assert any("read phases use the write bandwidth" in n for n in pred["notes"])
        assert pred["io_time_s"] == pytest.approx(t + p41["time_s"], rel=1e-12)


def test_read_phase_without_fallback_is_an_error():
    prof = table_profile(TABLE_VII, "btio")
    with pytest.raises(PredictError, match=r"phase 41 \(read\): no read bandwidth in the profile"):
        predict(model("btio-B-4"), load_cluster("vc3"), prof, fallback=False)


def test_s3d_on_vc4_matches_table_ix():
    vc4 = load_cluster("vc4")
    prof = table_profile(TABLE_IX, "s3d")
    for w, np_, bw, table_time in TABLE_IX:
        pred = predict(model(f"s3d-{w}-{np_}"), vc4, prof)
        assert [p["id"] for p in pred["phases"]] == [1, 2, 3, 4, 5]
        assert all(p["note"] == "measured" for p in pred["phases"])
        assert pred["io_time_s"] == pytest.approx(5 * np_ * pred["phases"][0]["rs"] / (bw * MiB), rel=1e-12)
        assert pred["io_time_s"] == pytest.approx(table_time, rel=0.02), (w, np_)
        assert pred["feasible"], pred["reasons"]
        assert pred["performance_Bps"] == pytest.approx(bw * MiB, rel=1e-12)


# -- cost: expressions 5-8 with Tables III and IV ------------------------------------

def test_costs_follow_expressions_5_to_8_on_vc3_ireland():
    vc3 = load_cluster("vc3")                      # c3.xlarge, Ireland: $0.239/h, 11 instances
    assert (vc3.price_per_hour, vc3.instances, vc3.persistent_gb, vc3.persistent_usd_per_gb_month) == \
        (0.239, 11, 8, 0.55)
    m = model("btio-C-16")                         # Table VII: BW_CH 84 MiB/s
    pred = predict(m, vc3, table_profile(TABLE_VII, "btio"))
    bw = 84 * MiB
    w_phase, w41 = 170061120, 40 * 170061120       # one class C dump; phase 41 reads the 40 back
    io_time = (40 * w_phase + w41) / bw            # 154.459 s
    assert pred["io_time_s"] == pytest.approx(io_time, rel=1e-12)
    assert pred["phases"][0]["cost_usd"] == pytest.approx(w_phase / bw / 3600 * 0.239, rel=1e-12)  # exp. 7
    cost_var = io_time / 3600 * 0.239 * 11                                                         # exp. 6
    cost_fix = 8 * 0.55                            # EBS 8 GB for one month: $4.40
    assert pred["cost_var_usd"] == pytest.approx(cost_var, rel=1e-12)
    assert pred["cost_var_usd"] == pytest.approx(0.11280, abs=5e-5)
    assert pred["cost_fix_usd"] == pytest.approx(4.40, rel=1e-12)
    assert pred["cost_fix_prorated_usd"] == pytest.approx(4.40 * io_time / (730 * 3600), rel=1e-12)
    assert pred["cost_usd"] == pytest.approx(cost_var + cost_fix, rel=1e-12)                       # exp. 5
    # billed per whole hour: 1 instance-hour x 11 instances, plus the fixed cost
    assert pred["billed_usd"] == pytest.approx(1 * 0.239 * 11 + 4.40, rel=1e-12)
    perf = m["weight"] / io_time
    assert perf == pytest.approx(bw, rel=1e-12)
    assert pred["performance_Bps"] == pytest.approx(perf, rel=1e-12)
    assert pred["perf_cost"] == pytest.approx(84 / (cost_var + cost_fix), rel=1e-12)               # exp. 8, MiB/s per $
    assert pred["perf_cost_var"] == pytest.approx(84 / cost_var, rel=1e-12)
    assert (pred["vc"], pred["feasible"], pred["reasons"]) == ("vc3", True, [])
    text = format_prediction(pred)
    assert "1 to 40" in text and "cost_tot" in text and "no read bandwidth measured" in text


def test_costs_in_virginia_and_per_second_billing():
    vc3 = load_cluster("vc3", region="Virginia")   # $0.210/h, EBS $0.50/GB-month
    m = model("btio-B-4")                          # 3.2 GB, Table VII: 104 MiB/s
    pred = predict(m, vc3, table_profile(TABLE_VII, "btio"))
    io_time = m["weight"] / (104 * MiB)
    assert pred["cost_var_usd"] == pytest.approx(io_time / 3600 * 0.210 * 11, rel=1e-12)
    assert pred["cost_fix_usd"] == pytest.approx(8 * 0.50, rel=1e-12)
    assert pred["billed_usd"] == pytest.approx(0.210 * 11 + 4.0, rel=1e-12)
    per_second = types.SimpleNamespace(**{**vc3.__dict__, "billing": "second"})
    pred = predict(m, per_second, table_profile(TABLE_VII, "btio"))
    assert pred["billed_usd"] == pytest.approx(math.ceil(io_time) / 3600 * 0.210 * 11 + 4.0, rel=1e-12)


def test_bandwidths_measured_by_a_replay_come_first():
    vc4 = load_cluster("vc4")
    m = model("s3d-200-8")
    pred = predict(m, vc4, bandwidths={1: 100 * MiB, 2: 200 * MiB, 3: 300 * MiB, 4: 400 * MiB, 5: 500 * MiB})
    assert [p["note"] for p in pred["phases"]] == ["measured by replay"] * 5
    w = m["phases"][0]["weight"]
    assert pred["io_time_s"] == pytest.approx(sum(w / (k * 100 * MiB) for k in range(1, 6)), rel=1e-12)
    # a phase the replay did not measure: from the profile, else an error
    prof = table_profile(TABLE_IX, "s3d")
    pred = predict(m, vc4, prof, bandwidths={"1": 100 * MiB})
    assert pred["phases"][0]["bw_Bps"] == 100 * MiB and pred["phases"][1]["bw_Bps"] == 541 * MiB
    with pytest.raises(PredictError, match="phase 2"):
        predict(m, vc4, bandwidths={1: 100 * MiB})


def test_a_reread_phase_uses_the_reread_bandwidth():
    """BT-IO class B, 4 processes, with its read phase (41: 40 reads of
    10612080 B per process, weight 1697932800 B) marked as reading back what
    each process wrote through the same open.  Profile at (np 4, rs 10612080,
    shared, collective): read 50 MiB/s, reread 200 MiB/s.  The phase takes
    1697932800 / (200 MiB/s) = 8.0964 s; without the reread point, the read
    point's 1697932800 / (50 MiB/s) = 32.386 s, and the notes say so."""
    import copy
    m = copy.deepcopy(model("btio-B-4"))
    rd = m["phases"][40]
    rd["reread_bytes"] = rd["weight"]
    pts = [{"operation": op, "access_type": "shared", "collective": True, "np": 4,
            "rs": 10612080, "bw_Bps": bw * MiB} for op, bw in (("write", 100), ("read", 50),
                                                                ("reread", 200))]
    vc3 = load_cluster("vc3")
    got = predict(m, vc3, Profile.from_points(pts))["phases"][40]
    assert got["time_s"] == pytest.approx(1697932800 / (200 * MiB), rel=1e-12)
    assert got["note"].startswith("reread (through the write's open)")
    pred = predict(m, vc3, Profile.from_points(pts[:2]))
    assert pred["phases"][40]["time_s"] == pytest.approx(1697932800 / (50 * MiB), rel=1e-12)
    assert pred["phases"][40]["note"].startswith("no reread bandwidth measured: used read")
    assert any(n.startswith("no reread bandwidth measured") for n in pred["notes"])
    # a phase that does not reread ignores the reread point
    rd["reread_bytes"] = 0
    got = predict(m, vc3, Profile.from_points(pts))["phases"][40]
    assert got["time_s"] == pytest.approx(1697932800 / (50 * MiB), rel=1e-12)


def test_a_reread_phase_also_gives_its_time_from_the_servers():
    """The same BT-IO class B read phase, a reread, on VC 3 (global file system
    NFS): besides its reread time, 1697932800 / (200 MiB/s) = 8.0964 s, the
    prediction gives the phase read from the servers as through a new open
    (the read point: 1697932800 / (50 MiB/s) = 32.386 s) and the I/O time
    with it: the 40 writes at 100 MiB/s, 40 x 42448320 / (100 MiB/s) =
    16.193 s, plus 32.386 s = 48.578 s (against 24.289 s).  Not on a
    cluster without a global file system of its own (local.yaml), not
    without a reread point, and not for a phase that does not reread."""
    import copy
    m = copy.deepcopy(model("btio-B-4"))
    m["phases"][40]["reread_bytes"] = m["phases"][40]["weight"]
    pts = [{"operation": op, "access_type": "shared", "collective": True, "np": 4,
            "rs": 10612080, "bw_Bps": bw * MiB} for op, bw in (("write", 100), ("read", 50),
                                                                ("reread", 200))]
    pred = predict(m, load_cluster("vc3"), Profile.from_points(pts))
    rd = pred["phases"][40]
    assert rd["time_s"] == pytest.approx(1697932800 / (200 * MiB), rel=1e-12)
    assert rd["time_uncached_s"] == pytest.approx(1697932800 / (50 * MiB), rel=1e-12)
    assert rd["time_uncached_s"] == pytest.approx(32.3855, abs=1e-4)
    assert rd["note_uncached"] == "measured" and rd["note"] == "reread (through the write's open); measured"
    assert all(p["time_uncached_s"] is None for p in pred["phases"][:40])
    writes = 40 * 42448320 / (100 * MiB)
    assert writes == pytest.approx(16.1927, abs=1e-4)
    assert pred["io_time_s"] == pytest.approx(writes + 1697932800 / (200 * MiB), rel=1e-12)
    assert pred["io_time_uncached_s"] == pytest.approx(writes + 1697932800 / (50 * MiB), rel=1e-12)
    note = next(n for n in pred["notes"] if n.startswith("phase 41 reads back"))
    assert "NFS's client" in note and "it would take 32.4 s, the I/O time 48.6 s" in note
    assert "rereads uncached  48.58 s" in format_prediction(pred)
    # one node's file system (local.yaml): its rereads are its page cache's
    local = predict(m, load_cluster("local"), Profile.from_points(pts))
    assert local["io_time_uncached_s"] is None and local["phases"][40]["time_uncached_s"] is None
    assert "rereads uncached" not in format_prediction(local)
    # no reread point: the phase is already predicted from the read point
    assert predict(m, load_cluster("vc3"), Profile.from_points(pts[:2]))["io_time_uncached_s"] is None
    m["phases"][40]["reread_bytes"] = 0
    assert predict(m, load_cluster("vc3"), Profile.from_points(pts))["io_time_uncached_s"] is None


def test_file_per_process_on_several_data_servers_has_a_placement_note():
    """BT-IO class B's 41 phases made file-per-process (4 files, btio.{rank}.out):
    on VC 4 (8 data servers) predicted from a profile, the notes say that the
    files' placement decides and that a replay writes the application's names;
    not on VC 3 (one data server), not for the shared file, and not when a
    replay measured every such phase."""
    import copy
    m = copy.deepcopy(model("btio-B-4"))
    m["files"][0].update(access_type="unique", name="btio.{rank}.out")
    pts = [{"operation": op, "access_type": "unique", "collective": True, "np": 4,
            "rs": 10612080, "bw_Bps": 100 * MiB} for op in ("write", "read")]
    prof = Profile.from_points(pts)
    vc4, vc3 = load_cluster("vc4"), load_cluster("vc3")
    note = (f"{vc4.name} has 8 data servers: where its file system places the 4 files of the "
            "file-per-process phases (btio.{rank}.out) decides how many servers share their "
            "I/O; the profile's own files were spread evenly over the servers (if characterize "
            "could ask the file system where they go), the application's may be less so; a "
            "replay (--backend builtin) writes the application's file names")
    assert [n for n in predict(m, vc4, prof)["notes"] if "data servers" in n] == [note]
    assert not any("data servers" in n for n in predict(m, vc3, prof)["notes"])
    assert not any("data servers" in n for n in predict(model("btio-B-4"), vc4, prof)["notes"])
    replayed = {str(p["id"]): 100 * MiB for p in m["phases"]}      # keys as a replay's JSON has them
    assert not any("data servers" in n for n in predict(m, vc4, prof, bandwidths=replayed)["notes"])
    # one phase left to the profile: the note again
    del replayed[str(m["phases"][-1]["id"])]
    assert [n for n in predict(m, vc4, prof, bandwidths=replayed)["notes"] if "data servers" in n] == [note]


def without_bandwidth(name, tmp_path):
    """A shipped cluster description with its measured points taken out."""
    text = (ROOT / "cluster" / "shipped" / f"{name}.yaml").read_text()
    head = text[:text.index("\nbandwidth:")]
    head = "\n".join(l for l in head.splitlines() if not l.startswith("# Measured bandwidth")
                     and not l.startswith("# system, or for VC 4") and not l.startswith("# `iomodel characterize"))
    path = tmp_path / f"{name}.yaml"
    path.write_text(head + "\nbandwidth: []\n")
    return path


def test_a_cluster_without_a_profile_says_which_operation_is_missing(tmp_path):
    with pytest.raises(PredictError, match="no write bandwidth in the profile"):
        predict(model("btio-B-4"), load_cluster(without_bandwidth("vc3", tmp_path)))


# -- feasibility ------------------------------------------------------------------------

def test_feasibility_as_the_paper_found_it():
    vc = {i: load_cluster(f"vc{i}") for i in (1, 2, 3, 4)}
    # BT-IO class C (6,802,444,800 B: the paper's "6.4GB", 6.34 GiB) fits VC 3's 40 GB SSD; np 36 on 11 x 4 cores
    ok, reasons, _ = feasibility(model("btio-C-36"), vc[3])
    assert ok and reasons == []
    # S3D-IO 400^3 (5 x 8,192,000,000 B = 40.96 GB, the paper's "39GB" of MiB) does not fit VC 3's 40 GB:
    # capacity in GB of 10^9 B, as providers sell it (it would fit 40 GiB)
    need = model("s3d-400-8")["storage_capacity"]
    assert need == 40_960_000_000 and 40 * GB < need < 40 * (1 << 30)
    for np_ in (8, 16, 32):
        ok, reasons, _ = feasibility(model(f"s3d-400-{np_}"), vc[3])
        assert not ok and len(reasons) == 1 and reasons[0].startswith("storage:")
        assert "40.96 GB" in reasons[0] and "40 GB of temporal storage" in reasons[0]
    assert feasibility(model("s3d-200-32"), vc[3])[0]
    for i in (1, 2, 4):                            # 160, 420, 300 GB
        assert feasibility(model("s3d-400-16"), vc[i])[0]
    # parallel degree: VC 1 (17 x 1 core) up to 16 processes, VC 2 (17 x 2) up to 25
    assert feasibility(model("btio-B-16"), vc[1])[0]
    for name, i, cores in (("btio-B-25", 1, 17), ("btio-C-36", 1, 17), ("btio-C-36", 2, 34)):
        ok, reasons, _ = feasibility(model(name), vc[i])
        assert not ok and reasons == [f"cores: the model needs {name.rsplit('-', 1)[1]} processes but "
                                      f"vc{i} has {cores} cores ({vc[i].instances} x {vc[i].instance_type}, "
                                      f"{vc[i].cores_per_instance} core{'s' if i == 2 else ''} each)"]
    assert feasibility(model("btio-C-25"), vc[2])[0]
    pred = predict(model("btio-B-25"), vc[1], table_profile(TABLE_VII, "btio"))
    assert not pred["feasible"] and pred["reasons"][0].startswith("cores:")


def test_a_shared_file_needs_a_global_file_system():
    vc = types.SimpleNamespace(name="nofs", instances=4, cores_per_instance=4, cores_total=16,
                               instance_type="x", temporal_gb=100, persistent_gb=None, global_fs=None)
    ok, reasons, _ = feasibility(model("btio-B-4"), vc)
    assert not ok and reasons == ["file system: 1 shared file (btio.out) needs a global file system "
                                  "and nofs has none"]
    ok, reasons, _ = feasibility(model("s3d-200-8"), vc)
    assert not ok and reasons[0].startswith("file system: 5 shared files")
    one = types.SimpleNamespace(**{**vc.__dict__, "instances": 1})
    ok, reasons, notes = feasibility(model("btio-B-4"), one)
    assert ok and any("one instance" in n for n in notes)
    # everything at once, and unknowns are notes, not reasons
    small = types.SimpleNamespace(name="tiny", instances=2, cores_per_instance=1, cores_total=2,
                                  instance_type="t", temporal_gb=1, persistent_gb=None, global_fs=None)
    ok, reasons, _ = feasibility(model("btio-C-4"), small)
    assert [r.split(":")[0] for r in reasons] == ["storage", "cores", "file system"]
    unknown = types.SimpleNamespace(name="u", instances=2, global_fs="NFS")
    ok, reasons, notes = feasibility(model("btio-C-4"), unknown)
    assert ok and len(notes) == 2


# -- profile: interpolation -----------------------------------------------------------------

def synthetic():
    pts = [(4, 1, 100), (4, 4, 900), (8, 1, 50), (8, 4, 450)]    # (np, rs MiB, MiB/s)
    return Profile.from_points([{"operation": "write", "np": n, "rs": r * MiB, "bw_Bps": b * MiB,
                                 "access_type": "shared", "collective": True} for n, r, b in pts])


def test_below_the_smallest_size_time_is_affine_between_bounds():
    """Per op: a fixed cost and a cost per byte, through the two smallest sizes."""
    def prof(*pts):
        return Profile.from_points([{"operation": "write", "np": 4, "rs": r, "bw_Bps": b * MiB,
                                     "access_type": "shared", "collective": True} for r, b in pts])
    # 1 MiB in 20 ms (50 MiB/s), 2 MiB in 25 ms (80 MiB/s): 15 ms + 5 ms per MiB,
    # so 512 KiB takes 17.5 ms: 0.5 MiB / 17.5 ms = 28.571 MiB/s
    bw, _ = prof((MiB, 50), (2 * MiB, 80)).bandwidth("write", 4, 512 * 1024)
    assert bw == pytest.approx(0.5 / 0.0175 * MiB, rel=1e-12)
    # bandwidth-bound (the paper's VCs: 10 and 40 MiB at the same 150 MiB/s): no
    # fixed cost, 320 KiB at 150 MiB/s, not in the time of a 10 MiB op (4.7 MiB/s)
    bw, _ = prof((10 * MiB, 150), (40 * MiB, 150)).bandwidth("write", 4, 320 * 1024)
    assert bw == pytest.approx(150 * MiB, rel=1e-12)
    # latency-bound (4 and 16 KiB in 1 ms each): 512 B in 1 ms too
    bw, _ = prof((4096, 4 / 1024 * 1000), (16384, 16 / 1024 * 1000)).bandwidth("write", 4, 512)
    assert bw == pytest.approx(512 / 1e-3, rel=1e-9)
    # a negative fixed cost is cut at the smallest size's bandwidth: 1 MiB in
    # 10 ms, 2 MiB in 30 ms: 512 KiB in 5 ms (100 MiB/s), not 0
    bw, _ = prof((MiB, 100), (2 * MiB, 2 / 0.03)).bandwidth("write", 4, 512 * 1024)
    assert bw == pytest.approx(100 * MiB, rel=1e-9)
    # one size measured: its bandwidth
    bw, note = prof((MiB, 100)).bandwidth("write", 4, 4096)
    assert bw == 100 * MiB and note.startswith("extrapolated: the bandwidth of the only measured rs 1 MiB")


def test_exact_point_and_log_log_midpoints():
    prof = synthetic()
    bw, note = prof.bandwidth("write", 4, 4 * MiB, "shared", True)
    assert bw == 900 * MiB and note == "measured"
    # 2 MiB is the geometric middle of 1 and 4 MiB: log-log gives sqrt(100 * 900) = 300 (linear: 366.7)
    bw, note = prof.bandwidth("write", 4, 2 * MiB, "shared", True)
    assert bw == pytest.approx(300 * MiB, rel=1e-12)
    assert note == "interpolated (log-log) in rs between 1 MiB and 4 MiB at np 4"
    assert prof.bandwidth("write", 8, 2 * MiB)[0] == pytest.approx(150 * MiB, rel=1e-12)
    # 3 MiB: exp of the interpolated logs
    f = math.log(3) / math.log(4)
    assert prof.bandwidth("write", 4, 3 * MiB)[0] == pytest.approx(100 * MiB * 9 ** f, rel=1e-12)
    # linear in np between 4 and 8
    bw, note = prof.bandwidth("write", 6, 2 * MiB)
    assert bw == pytest.approx(225 * MiB, rel=1e-12)
    assert note.startswith("interpolated in np between 4 and 8")
    assert prof.bandwidth("write", 5, 1 * MiB)[0] == pytest.approx(87.5 * MiB, rel=1e-12)


def test_extrapolation_beyond_the_measured_range():
    prof = synthetic()
    bw, note = prof.bandwidth("write", 4, 16 * MiB)
    assert bw == 900 * MiB and note.startswith("extrapolated: nearest measured rs 4 MiB")
    # below the smallest size: 1 MiB takes 10 ms, 4 MiB 4.44 ms, so the affine
    # time falls with rs and is capped at one 1 MiB op: 512 KiB in 10 ms, 50 MiB/s
    bw, note = prof.bandwidth("write", 4, 512 * 1024)
    assert bw == 50 * MiB and note == \
        "extrapolated: time per op affine in rs through 1 MiB and 4 MiB, between the bandwidth " \
        "and the time of one op of 1 MiB (measured 1 MiB..4 MiB) at np 4"
    bw, note = prof.bandwidth("write", 2, 1 * MiB)
    assert bw == 100 * MiB and note.startswith("extrapolated: nearest measured np 4")
    bw, note = prof.bandwidth("write", 64, 8 * MiB)
    assert bw == 450 * MiB and "nearest measured np 8" in note and "nearest measured rs 4 MiB" in note


def test_relaxing_collective_then_access_type_and_missing_operation():
    prof = synthetic()
    bw, note = prof.bandwidth("write", 4, 1 * MiB, "shared", False)
    assert bw == 100 * MiB and note.startswith("no independent shared points: used shared points of any kind")
    bw, note = prof.bandwidth("write", 4, 1 * MiB, "unique", True)
    assert bw == 100 * MiB and note.startswith("no unique points: used shared ones")
    with pytest.raises(ProfileError, match="no read bandwidth in the profile"):
        prof.bandwidth("read", 4, 1 * MiB)
    with pytest.raises(ProfileError, match="no write bandwidth in the profile \\(it is empty\\)"):
        Profile().bandwidth("write", 4, MiB)
    # a matching point is preferred to a relaxed one; repeated measurements are averaged
    prof = prof + Profile.from_points([{"operation": "write", "np": 4, "rs": MiB, "bw_Bps": 10.0 * MiB,
                                        "access_type": "unique", "collective": False},
                                       {"operation": "write", "np": 4, "rs": MiB, "bw_Bps": 30.0 * MiB,
                                        "access_type": "unique", "collective": False}])
    assert prof.bandwidth("write", 4, MiB, "unique", False) == (20 * MiB, "measured")
    assert prof.bandwidth("write", 4, MiB, "shared", True) == (100 * MiB, "measured")


def test_a_phase_of_few_operations_pays_the_fixed_cost():
    """Long points (64 ops per process) and one-op points: t(ops) = a + b * ops."""
    KiB = 1024
    pts = [  # np 4, rs 64 KiB: 64 ops in 0.0266 s, 1 op in 1.4 ms: b = 400 us, a = 1 ms
        {"np": 4, "rs": 64 * KiB, "ops_per_process": 64, "bw_Bps": 64 * 4 * 64 * KiB / 0.0266},
        {"np": 4, "rs": 64 * KiB, "ops_per_process": 1, "bw_Bps": 4 * 64 * KiB / 0.0014},
        # rs 256 KiB: 16 ops in 0.0250 s, 1 op in 0.0025 s: b = 1.5 ms, a = 1 ms
        {"np": 4, "rs": 256 * KiB, "ops_per_process": 16, "bw_Bps": 16 * 4 * 256 * KiB / 0.0250},
        {"np": 4, "rs": 256 * KiB, "ops_per_process": 1, "bw_Bps": 4 * 256 * KiB / 0.0025}]
    prof = Profile.from_points([{"operation": "write", **p} for p in pts])
    # at a measured rs: 10 ops = 1 ms + 10 x 0.4 ms = 5 ms
    bw, note = prof.bandwidth("write", 4, 64 * KiB, ops=10)
    assert 10 * 4 * 64 * KiB / bw == pytest.approx(0.005, rel=1e-12)
    assert note.startswith("10 ops per process: fixed 1000 us + 10 x 400.0 us (per op: measured; one op: measured")
    # one op: the one-op point itself; 64 ops: the long point itself
    assert 4 * 64 * KiB / prof.bandwidth("write", 4, 64 * KiB, ops=1)[0] == pytest.approx(0.0014, rel=1e-12)
    assert prof.bandwidth("write", 4, 64 * KiB, ops=64)[0] == pytest.approx(pts[0]["bw_Bps"], rel=1e-12)
    # 128 KiB, the geometric middle of 64 and 256 KiB: the per-op bandwidths (625 and
    # 666.7 MiB/s) and the one-op ones are interpolated log-log, then t = a + 3 b
    b_op = 128 * KiB * 4 / math.sqrt((64 * KiB * 4 / 0.0004) * (256 * KiB * 4 / 0.0015))
    one = 128 * KiB * 4 / math.sqrt((4 * 64 * KiB / 0.0014) * (4 * 256 * KiB / 0.0025))
    assert 3 * 4 * 128 * KiB / prof.bandwidth("write", 4, 128 * KiB, ops=3)[0] == \
        pytest.approx(one - b_op + 3 * b_op, rel=1e-12)
    # 1 MiB: its long measurement was one op per process (so only a one-op point, 4 ms):
    # that point is its per-op time too (a = 0 there), not the 256 KiB one extrapolated
    with_1m = prof + Profile.from_points([{"operation": "write", "np": 4, "rs": 1024 * KiB,
                                           "ops_per_process": 1, "bw_Bps": 4 * 1024 * KiB / 0.004}])
    bw, note = with_1m.bandwidth("write", 4, 1024 * KiB, ops=3)
    assert 3 * 4 * 1024 * KiB / bw == pytest.approx(3 * 0.004, rel=1e-12)
    assert note.startswith("3 ops per process: fixed 0 us + 3 x 4000.0 us (per op: measured; one op: measured")
    # one op cheaper than the next ones (a token bucket's burst): 64 ops in 26.6 ms, 1 op
    # in 0.2 ms: b = 26.4 ms / 63 = 419.0 us, a = 0.2 ms - b = -219 us < 0: the fit is
    # refused; 16 ops: 16 b = 6.7048 ms, said
    burst = Profile.from_points([{"operation": "write", **pts[0]},
                                 {"operation": "write", "np": 4, "rs": 64 * KiB, "ops_per_process": 1,
                                  "bw_Bps": 4 * 64 * KiB / 0.0002}])
    bw, note = burst.bandwidth("write", 4, 64 * KiB, ops=16)
    assert 16 * 4 * 64 * KiB / bw == pytest.approx(16 * 0.0264 / 63, rel=1e-12)
    assert note == ("16 ops per process: 16 x 419.0 us (per op: measured; one op: measured; a fixed cost "
                    "fitted at -219 us, below 0: refused, one op alone was faster than one more of a long run)")
    bw, note = burst.bandwidth("write", 4, 64 * KiB, ops=1)
    assert 4 * 64 * KiB / bw == pytest.approx(0.0002, rel=1e-12)
    assert note.startswith("1 op per process: the one-op time, 200.0 us (per op: measured; one op: measured; "
                           "a fixed cost fitted at -219 us, below 0: refused")
    # without ops (or without one-op points) the long points answer, as before
    assert prof.bandwidth("write", 4, 64 * KiB) == (pts[0]["bw_Bps"], "measured")
    long_only = Profile.from_points([{"operation": "write", **p} for p in pts if p["ops_per_process"] > 1])
    assert long_only.bandwidth("write", 4, 64 * KiB, ops=1) == (pts[0]["bw_Bps"], "measured")


def two_writers(rs, rep, collective, t1, t2, **phase):
    """A model of one write phase of two processes, rep operations of rs bytes
    each into one shared file (phase: its other fields), and a profile of that
    operation at np 1 (t1 s per operation) and np 2 (t2 s per operation of
    both): (model, phase, profile)."""
    m = json.loads(json.dumps(model("btio-B-4")))
    ph = {**m["phases"][0], "collective": collective, "np": 2, "ranks": "0-1", "iop": 1,
          "request_sizes": [rs], "rs": rs, "rs_min": rs, "rs_max": rs, "rs_groups": None,
          "rep": rep, "weight": 2 * rep * rs, **phase}
    m.update(phases=[ph], weight=ph["weight"])
    m["application"] = {**m["application"], "np": 2}
    one = {"operation": "write", "access_type": "shared", "collective": collective, "rs": rs}
    prof = Profile.from_points([{**one, "np": 1, "bw_Bps": rs / t1}, {**one, "np": 2, "bw_Bps": 2 * rs / t2}])
    return m, ph, prof


def writers_at_random_moments():
    """test_computing_between_operations_meets_the_others_less_often's phase:
    two processes, 64 independent 16 KiB writes each to one file, computing
    13 us between them; its profile 10 us a write alone, 20 at np 2."""
    KiB, us = 1024, 1e-6
    return two_writers(
        16 * KiB, 64, False, 10 * us, 20 * us,
        offsets={"first": 0, "per_rank": 16 * KiB, "stride": 32 * KiB, "contiguous": True},
        io_time_s=64 * 12 * us, duration_s=64 * 12 * us + 63 * 13 * us)


def test_computing_between_operations_meets_the_others_less_often():
    """Two processes writing 16 KiB each 64 times to one file, independently,
    computing k between operations (duration - io_time = 63 x k).  The profile,
    back to back: 10 us per operation alone (np 1), 20 us at np 2, so d = 10 us
    of waiting for the other's operation (h = 10 us).  t = t_1 + max(d - k,
    d h / (2 (k + t))).  k = 13 us: at random moments of the other's cycle,
    (t - 10)(13 + t) = 50, t = 12 us, so the phase takes 64 x 12 us = 0.768 ms,
    not 64 x 20 us; k = 4 us: in lockstep, t = 10 + 10 - 4 = 16 us (the other
    root, 12.95 us, is less)."""
    KiB, us = 1024, 1e-6
    m, ph, prof = writers_at_random_moments()
    one = {"operation": "write", "access_type": "shared", "collective": False, "rs": 16 * KiB}
    vc = types.SimpleNamespace(name="vc")
    [p] = predict(m, vc, prof)["phases"]
    assert p["time_s"] == pytest.approx(64 * 12 * us, rel=1e-9)
    assert p["note"] == ("measured; computing 13.0 us between operations: per op at random moments of "
                         "the others', 10.0 + 10.0 x 10.0 / (2 x (13.0 + t)) = 12.0 us (np 1: measured)")
    lock = {**ph, "duration_s": ph["io_time_s"] + 63 * 4 * us}
    [p] = predict({**m, "phases": [lock]}, vc, prof)["phases"]
    assert p["time_s"] == pytest.approx(64 * 16 * us, rel=1e-9)
    assert p["note"] == ("measured; computing 4.0 us between operations: per op in lockstep, "
                         "10.0 + (20.0 - 10.0 - 4.0) = 16.0 us (np 1: measured)")
    back_to_back = 64 * 20 * us
    # no computing between operations: the np 2 point as measured
    assert predict({**m, "phases": [{**ph, "duration_s": ph["io_time_s"]}]}, vc, prof)["phases"][0][
        "time_s"] == pytest.approx(back_to_back, rel=1e-12)
    # a collective phase meets the others at every operation
    coll = Profile.from_points([{**pt, "collective": True} for pt in prof.table.to_pylist()])
    assert predict({**m, "phases": [{**ph, "collective": True}]}, vc, coll)["phases"][0][
        "time_s"] == pytest.approx(back_to_back, rel=1e-12)
    # without a point of one process there is nothing to say what the others cost
    only2 = Profile.from_points([{**one, "np": 2, "bw_Bps": 2 * 16 * KiB / (20 * us)}])
    assert predict(m, vc, only2)["phases"][0]["note"] == "measured"
    # one operation per process: nothing between operations
    single = {**ph, "rep": 1, "weight": 2 * 16 * KiB, "duration_s": 1e-3}
    assert predict({**m, "phases": [single], "weight": single["weight"]}, vc, prof)["phases"][0][
        "time_s"] == pytest.approx(20 * us, rel=1e-12)


# test_computing_between_operations_given_back_as_the_profile_measured's phase at
# random moments: 10 us a write alone, 20 at np 2 back to back, 13 us computed
# between writes: t = 10 + 10 x 10 / (2 (13 + t)), t = 12 us
NOTE_AT_RANDOM = ("measured; computing 13.0 us between operations: per op at random moments of the "
                  "others', 10.0 + 10.0 x 10.0 / (2 x (13.0 + t)) = 12.0 us (np 1: measured)")


def test_computing_between_operations_given_back_as_the_profile_measured():
    """The rule above takes the time computed between operations off the wait
    for the others' (a device serving requests in turn).  A profile with a
    point computing between operations (characterize --think) says how much
    the storage gives back.  Two processes, 16 independent 64 KiB writes each
    to one file, computing k = 0.5 ms between them; the profile: 2 ms a write
    alone, 4 ms at np 2 back to back (d = 2 ms), and at np 2 computing 1 ms
    between writes 3.9 ms: g = (4 - 3.9) / min(1, 2) = 0.1.  Served in turn, in
    lockstep, 2 + (4 - 2 - 0.5) = 3.5 ms (the other root: 2.64 ms); the phase
    takes (1 - g) t_np + g 3.5 = 0.9 x 4 + 0.1 x 3.5 = 3.95 ms a write, 16
    writes 63.2 ms; without the point 3.5 ms, 56 ms; with a point giving it
    all back (3.0 ms at 1 ms: g = 1), 3.5 ms too.  Not at random moments: the
    phase of test_computing_between_operations_meets_the_others_less_often
    stays 12 us a write with a point that gave nothing back (30 us a write
    computing 1 ms between, against 20 back to back); its note then says the
    operations were slower after computing, which it does not count, and says
    nothing of it with a point no slower than back to back (20 us)."""
    KiB, ms = 1024, 1e-3
    rs = 64 * KiB
    m, ph, prof = two_writers(
        rs, 16, False, 2 * ms, 4 * ms,
        offsets={"first": 0, "per_rank": rs, "stride": 2 * rs, "contiguous": True},
        io_time_s=16 * 3.5 * ms, duration_s=16 * 3.5 * ms + 15 * 0.5 * ms)
    one = {"operation": "write", "access_type": "shared", "collective": False, "rs": rs}
    vc = types.SimpleNamespace(name="vc")
    assert predict(m, vc, prof)["phases"][0]["time_s"] == pytest.approx(16 * 3.5 * ms, rel=1e-9)
    shared = prof + Profile.from_points([{**one, "np": 2, "bw_Bps": 2 * rs / (3.9 * ms),
                                          "think_s": 1 * ms}])
    [p] = predict(m, vc, shared)["phases"]
    assert p["time_s"] == pytest.approx(16 * 3.95 * ms, rel=1e-9)
    assert p["note"] == ("measured; computing 500.0 us between operations: per op 0.90 x 4000.0 + "
                         "0.10 x 3500.0 (in lockstep, 2000.0 + (4000.0 - 2000.0 - 500.0); the "
                         "profile's 64 KiB at np 2 computing 1000 us between operations: 3900.0 us "
                         "per op against 4000.0 back to back and 2000.0 alone, 10% given back) = "
                         "3950.0 us (np 1: measured)")
    # the point answers only that: the np 2 bandwidth is still the back-to-back point's
    assert shared.bandwidth("write", 2, rs, collective=False) == (2 * rs / (4 * ms), "measured")
    in_turn = prof + Profile.from_points([{**one, "np": 2, "bw_Bps": 2 * rs / (3 * ms),
                                           "think_s": 1 * ms}])
    assert predict(m, vc, in_turn)["phases"][0]["time_s"] == pytest.approx(16 * 3.5 * ms, rel=1e-9)
    assert in_turn.given_back("write", 2, rs)[0] == pytest.approx(1.0, rel=1e-12)
    # a point of another access type or np says nothing about this phase
    other = prof + Profile.from_points([{**one, "access_type": "unique", "np": 2,
                                         "bw_Bps": 2 * rs / (3.9 * ms), "think_s": 1 * ms}])
    assert other.given_back("write", 2, rs) is None
    assert predict(m, vc, other)["phases"][0]["time_s"] == pytest.approx(16 * 3.5 * ms, rel=1e-9)
    # at random moments (operations short against k) the point is not read: there
    # it measures operations made cold by the computing (tmpfs: 4 KiB writes 11 us
    # after 1 ms, 2.3 back to back), not how the storage is shared
    KiB, us = 1024, 1e-6
    m2, ph2, prof2 = writers_at_random_moments()
    cold = prof2 + Profile.from_points([{**one, "rs": 16 * KiB, "np": 2, "bw_Bps": 2 * 16 * KiB / (30 * us),
                                         "think_s": 1 * ms}])
    assert cold.given_back("write", 2, 16 * KiB)[0] == 0.0
    [p] = predict(m2, vc, cold)["phases"]
    assert p["time_s"] == pytest.approx(64 * 12 * us, rel=1e-9)
    # but the note says the point found the operations slower after computing
    assert p["note"] == NOTE_AT_RANDOM + (
        "; the profile's 16 KiB at np 2 computing 1000 us between operations: 30.0 us per op "
        "against 20.0 back to back: operations after computing were slower there; this phase "
        "computes 13.0 us, more than a factor of 2 outside those, which this prediction does not "
        "count")
    # a point no slower than back to back: no such caution
    warm = prof2 + Profile.from_points([{**one, "rs": 16 * KiB, "np": 2, "bw_Bps": 2 * 16 * KiB / (20 * us),
                                         "think_s": 1 * ms}])
    assert predict(m2, vc, warm)["phases"][0]["note"] == NOTE_AT_RANDOM
    # points at several k: g is fitted by least squares, the longest k weighing most:
    # 4.1 ms computing 30 us between, 3.9 ms computing 1 ms, against 4 ms back to back:
    # g = (0.03 x -0.1 + 1 x 0.1) / (0.03^2 + 1^2) (a mean of the two, clamped: 0.05)
    two_k = shared + Profile.from_points([{**one, "np": 2, "bw_Bps": 2 * rs / (4.1 * ms),
                                           "think_s": 0.03 * ms}])
    assert two_k.given_back("write", 2, rs)[0] == pytest.approx(0.097 / 1.0009, rel=1e-9)


def test_operations_slower_after_computing():
    """Where the profile's points computing between operations took longer at
    the phase's k than the rule's time (operations left cold by the
    computing), their time answers.  The phase of
    test_computing_between_operations_meets_the_others_less_often: 16 KiB
    writes, 20 us each at np 2 back to back, k = 13 us, 12 us by the rule.
    Points at np 2: 24 us computing 10 us between writes, 36 us computing 30
    us.  At 13 us, in log k: 24 + (36 - 24) ln(13 / 10) / ln(30 / 10) =
    26.866 us, so the 64 writes take 64 x 26.866 us.  Points of 32 KiB only
    (40 us back to back, 48 and 72 us computing) give the same, halved.
    Outside the k measured by no more than a factor of 2, the nearest one's
    point: 24 us computing 5 and 10 us, 30 us computing 20 and 60 us; further
    out (30 and 60 us: 13 < 15) nothing but a caution.  Points faster than
    the rule's 12 us (11 and 11.5 us) change nothing.  Where the operations
    take longer than k (in lockstep, k = 4 us) the points say only how much
    of k the storage gives back (Profile.given_back): here none, so t_np, 20
    us, not 36 us (30 and 40 us computing 1 and 10 us, at 4 us)."""
    KiB, us = 1024, 1e-6
    rs = 16 * KiB
    m, ph, prof = writers_at_random_moments()
    vc = types.SimpleNamespace(name="vc")
    one = {"operation": "write", "access_type": "shared", "collective": False, "np": 2}

    def with_points(*at, size=rs):
        return prof + Profile.from_points([{**one, "rs": size, "bw_Bps": 2 * size / (t * us),
                                            "think_s": k * us} for k, t in at])
    [p] = predict(m, vc, with_points((10, 24), (30, 36)))["phases"]
    t = 24 + 12 * math.log(1.3) / math.log(3)
    assert t == pytest.approx(26.86578, rel=1e-6)
    assert p["time_s"] == pytest.approx(64 * t * us, rel=1e-9)
    assert p["note"] == NOTE_AT_RANDOM + (
        "; slower after computing: per op 26.9 us (the profile's 16 KiB at np 2 computing 10, 30 us "
        "between operations: 24.0, 36.0 us per op against 20.0 back to back: 26.9 at 13.0 us)")
    wide = with_points((10, 48), (30, 72), size=2 * rs) + Profile.from_points(
        [{**one, "rs": 2 * rs, "bw_Bps": 4 * rs / (40 * us)}])
    [p] = predict(m, vc, wide)["phases"]
    assert p["time_s"] == pytest.approx(64 * t * us, rel=1e-9)
    assert p["note"].endswith("; slower after computing: per op 26.9 us (the profile's 32 KiB at np 2 "
                              "computing 10, 30 us between operations: 48.0, 72.0 us per op against "
                              "40.0 back to back: 53.7 at 13.0 us, 26.9 for 16 KiB)")
    assert predict(m, vc, with_points((5, 22), (10, 24)))["phases"][0]["time_s"] == \
        pytest.approx(64 * 24 * us, rel=1e-9)
    assert predict(m, vc, with_points((20, 30), (60, 40)))["phases"][0]["time_s"] == \
        pytest.approx(64 * 30 * us, rel=1e-9)
    [p] = predict(m, vc, with_points((30, 30), (60, 40)))["phases"]
    assert p["time_s"] == pytest.approx(64 * 12 * us, rel=1e-9)
    assert p["note"].startswith(NOTE_AT_RANDOM + "; the profile's 16 KiB at np 2 computing 30, 60 us")
    assert predict(m, vc, with_points((10, 11), (30, 11.5)))["phases"][0]["note"] == NOTE_AT_RANDOM
    lock = {**ph, "duration_s": ph["io_time_s"] + 63 * 4 * us}
    assert predict({**m, "phases": [lock]}, vc, with_points((1, 30), (10, 40)))["phases"][0][
        "time_s"] == pytest.approx(64 * 20 * us, rel=1e-9)


def test_think_points_must_be_positive():
    one = {"operation": "write", "access_type": "shared", "collective": False, "rs": 16 * 1024}
    with pytest.raises(ProfileError, match="think_s must be a number of seconds > 0"):
        Profile.from_points([{**one, "np": 2, "bw_Bps": 1.0, "think_s": 0}])


def test_a_collective_phase_partly_done_before_its_last_process_came_in():
    """Two processes, one 256 KiB collective write each into one file.  The
    profile, both starting together: 100 us at np 1, 180 us at np 2 (the
    writes take turns).  The first process in did e of the shared work before
    the last came in (done_early_s), and the last one's own write is left:
    max(100, 180 - e) us.  e = 50 us: 130 us; e = 120 us: 100 us."""
    KiB, us = 1024, 1e-6
    m, ph, prof = two_writers(
        256 * KiB, 1, True, 100 * us, 180 * us, done_early_s=50 * us,
        offsets={"first": 0, "per_rank": 256 * KiB, "stride": None, "contiguous": True},
        io_time_s=130 * us, duration_s=130 * us)
    one = {"operation": "write", "access_type": "shared", "collective": True, "rs": 256 * KiB}
    vc = types.SimpleNamespace(name="vc")

    def time_and_note(phase, profile=prof):
        [p] = predict({**m, "phases": [phase], "weight": phase["weight"]}, vc, profile)["phases"]
        return p["time_s"], p["note"]
    t, note = time_and_note(ph)
    assert t == pytest.approx(130 * us, rel=1e-9)
    assert note == ("measured; 50.0 us done before the last process came in: "
                    "max(100.0, 180.0 - 50.0) = 130.0 us (np 1: measured)")
    t, note = time_and_note({**ph, "done_early_s": 120 * us})
    assert t == pytest.approx(100 * us, rel=1e-9) and "max(100.0, 180.0 - 120.0) = 100.0 us" in note
    # nothing done early (the field absent): the np 2 point as measured
    no_early = {k: v for k, v in ph.items() if k != "done_early_s"}
    assert time_and_note(no_early) == (pytest.approx(180 * us, rel=1e-12), "measured")
    # two operations per process, or no point of one process: as measured
    two = {**ph, "rep": 2, "weight": 2 * 2 * 256 * KiB}
    assert time_and_note(two) == (pytest.approx(360 * us, rel=1e-12), "measured")
    only2 = Profile.from_points([{**one, "np": 2, "bw_Bps": 2 * 256 * KiB / (180 * us)}])
    assert time_and_note(ph, only2) == (pytest.approx(180 * us, rel=1e-12), "measured")
    # through a view (s3d_like's writes came out too fast with it): as measured
    view = {**ph, "offsets": {**ph["offsets"], "contiguous": False}}
    assert time_and_note(view) == (pytest.approx(180 * us, rel=1e-12), "measured")
    # an independent phase is not this (its processes never wait for each other)
    ind = Profile.from_points([{**pt, "collective": False} for pt in prof.table.to_pylist()])
    assert time_and_note({**ph, "collective": False}, ind)[0] == pytest.approx(180 * us, rel=1e-12)


def test_a_view_of_pieces_costs_the_measured_ratio():
    """View points (piece) against the contiguous point of the same kind, np, rs and
    operations: np 2, collective shared writes, 8 ops per process.  Contiguous: 1 MiB
    at 100 MiB/s, 4 MiB at 200 MiB/s.  Through pieces of 64 KiB: 1 MiB at 50 MiB/s
    (ratio 2), 4 MiB at 100 (2); of 1 MiB (only 4 MiB is larger): 4 MiB at 160
    (ratio 1.25)."""
    KiB = 1024
    def pt(rs, bw, piece=None):
        return {"operation": "write", "access_type": "shared", "collective": True, "np": 2,
                "rs": rs, "ops_per_process": 8, "bw_Bps": bw * MiB, "piece": piece}
    prof = Profile.from_points([pt(MiB, 100), pt(4 * MiB, 200), pt(MiB, 50, 64 * KiB),
                                pt(4 * MiB, 100, 64 * KiB), pt(4 * MiB, 160, MiB)])
    # contiguous phases ignore the view points
    assert prof.bandwidth("write", 2, 4 * MiB, "shared", True) == (200 * MiB, "measured")
    # at a measured piece and rs: the view point's own bandwidth
    bw, note = prof.bandwidth("write", 2, 4 * MiB, "shared", True, piece=64 * KiB)
    assert bw == pytest.approx(100 * MiB, rel=1e-12)
    assert note == "measured; a view of pieces of 64 KiB: time x 2 (measured piece)"
    # 256 KiB, the geometric middle of 64 KiB and 1 MiB: ratio (2 + 1.25) / 2 at 4 MiB
    bw, note = prof.bandwidth("write", 2, 4 * MiB, "shared", True, piece=256 * KiB)
    assert bw == pytest.approx(200 * MiB / 1.625, rel=1e-12)
    assert note.endswith("time x 1.62 (interpolated between pieces 64 KiB and 1 MiB)")
    # 2 MiB through 128 KiB: the 1 MiB piece was measured at 4 MiB only (the nearest
    # size, ratio 1.25), the 64 KiB one at 1 and 4 MiB (2 both); log-linear in the piece:
    # 2 + (1.25 - 2) / 4; the contiguous bandwidth log-log: sqrt(100 * 200)
    f = math.log(2) / math.log(16)
    bw, _ = prof.bandwidth("write", 2, 2 * MiB, "shared", True, piece=128 * KiB)
    assert bw == pytest.approx(math.sqrt(100 * 200) * MiB / (2 + f * (1.25 - 2)), rel=1e-12)
    # pieces outside the measured ones: the nearest; a size below the smallest measured
    # with that piece: the smallest (a ratio has no cost per byte)
    assert prof.bandwidth("write", 2, MiB, "shared", True, piece=4 * KiB)[0] == \
        pytest.approx(50 * MiB, rel=1e-12)
    assert prof.bandwidth("write", 2, 4 * MiB, "shared", True, piece=2 * MiB)[1].endswith(
        "time x 1.25 (nearest measured piece 1 MiB)")
    # a piece measured between two others is the measured one, not their interpolation:
    # 256 KiB pieces at 4 MiB and 125 MiB/s, ratio 1.6 (between them above: 1.625)
    mid = Profile.from_points([*prof.table.to_pylist(), pt(4 * MiB, 125, 256 * KiB)])
    bw, note = mid.bandwidth("write", 2, 4 * MiB, "shared", True, piece=256 * KiB)
    assert bw == pytest.approx(125 * MiB, rel=1e-12)
    assert note == "measured; a view of pieces of 256 KiB: time x 1.6 (measured piece)"
    # no view point of that kind (independent): as contiguous, and the note says so
    bw, note = prof.bandwidth("write", 2, MiB, "shared", False, piece=64 * KiB)
    assert bw == 100 * MiB and note.endswith(
        "a view of pieces of 64 KiB: no view point measured (characterize --pieces), predicted "
        "as contiguous")
    # a profile of views only (a replay's of BT-IO's writes): used as they are
    views = Profile.from_points([pt(MiB, 50, 64 * KiB)])
    assert views.bandwidth("write", 2, MiB, "shared", True, piece=64 * KiB) == \
        (50 * MiB, "only write points through views of pieces: used as they are; measured")
    assert summary(prof)[0]["peak_Bps"] == 200 * MiB      # views are no peak
    # buffers 16 B past a page do not count through a view: reads at np 2, 4 MiB, contiguous
    # aligned 200 MiB/s, 16 B past 50 MiB/s, through 64 KiB pieces (aligned) 100 MiB/s: the view
    # phase takes its aligned ratio 2 on the aligned point, not on the offset one
    def rd(bw, piece=None, off=None):
        return {**pt(4 * MiB, bw, piece), "operation": "read", "buffer_offset": off}
    reads = Profile.from_points([rd(200), rd(50, off=16), rd(100, 64 * KiB)])
    bw, note = reads.bandwidth("read", 2, 4 * MiB, "shared", True, piece=64 * KiB, buffer_offset=16)
    assert bw == pytest.approx(100 * MiB, rel=1e-12)
    assert note == ("buffers 16 B past 4 KiB: not counted through a view; measured; a view of pieces of "
                    "64 KiB: time x 2 (measured piece)")
    assert reads.bandwidth("read", 2, 4 * MiB, "shared", True, buffer_offset=16)[0] == 50 * MiB


def test_random_offsets_cost_the_measured_ratio(tmp_path):
    """Random points (random: each process's block in a random order) against the
    in-order point of the same kind, np, rs and operations: independent shared
    writes, 8 ops per process.  In order: np 2 at 16 KiB 10 MiB/s, 64 KiB 40 MiB/s;
    np 1 at 16 KiB 20 MiB/s.  Random: np 2 at 16 KiB 8 MiB/s (ratio 1.25), 64 KiB
    20 MiB/s (2); np 1 at 16 KiB 10 MiB/s (2)."""
    KiB = 1024
    def pt(np_, rs, bw, random=None):
        return {"operation": "write", "access_type": "shared", "collective": False, "np": np_,
                "rs": rs, "ops_per_process": 8, "bw_Bps": bw * MiB, "random": random}
    prof = Profile.from_points([pt(2, 16 * KiB, 10), pt(2, 64 * KiB, 40), pt(1, 16 * KiB, 20),
                                pt(2, 16 * KiB, 8, True), pt(2, 64 * KiB, 20, True),
                                pt(1, 16 * KiB, 10, True)])
    # phases in order ignore the random points
    assert prof.bandwidth("write", 2, 16 * KiB, "shared", False) == (10 * MiB, "measured")
    # at a measured point: the random point's own bandwidth
    bw, note = prof.bandwidth("write", 2, 16 * KiB, "shared", False, random=True)
    assert bw == pytest.approx(8 * MiB, rel=1e-12)
    assert note == "measured; random offsets: time x 1.25 (the profile's random points against in order)"
    assert prof.bandwidth("write", 1, 16 * KiB, "shared", False, random=True)[0] == \
        pytest.approx(10 * MiB, rel=1e-12)
    # 32 KiB, the geometric middle: in order sqrt(10 x 40) = 20 MiB/s, the ratio
    # log-log between 1.25 and 2, sqrt(1.25 x 2)
    bw, note = prof.bandwidth("write", 2, 32 * KiB, "shared", False, random=True)
    assert bw == pytest.approx(20 * MiB / math.sqrt(2.5), rel=1e-12)
    assert note.endswith("random offsets: time x 1.58 (the profile's random points against in order)")
    # np 4, beyond the measured np: both the nearest, np 2's
    assert prof.bandwidth("write", 4, 16 * KiB, "shared", False, random=True)[0] == \
        pytest.approx(8 * MiB, rel=1e-12)
    # below the smallest measured size: the smallest size's ratio (no cost per byte)
    assert prof.bandwidth("write", 2, 4 * KiB, "shared", False, random=True)[1].endswith("time x 1.25 "
        "(the profile's random points against in order)")
    # no random point of that kind (file per process): as in order, and the note says so
    uniq = Profile.from_points([{**p, "access_type": "unique"} for p in
                                (pt(2, 16 * KiB, 10), pt(2, 16 * KiB, 8, True))] + [pt(2, 16 * KiB, 5, True)])
    bw, note = uniq.bandwidth("write", 2, 16 * KiB, "unique", False, random=True)
    assert bw == pytest.approx(8 * MiB, rel=1e-12)
    bw, note = Profile.from_points([pt(2, 16 * KiB, 10)]).bandwidth("write", 2, 16 * KiB, "shared", False,
                                                                   random=True)
    assert (bw, note) == (10 * MiB, "measured; random offsets: no random point measured "
                          "(characterize --random), predicted as in order")
    # random points are no peak; they survive Parquet; a profile from before them loads
    assert summary(prof)[0]["peak_Bps"] == 40 * MiB
    back = Profile.read(prof.save(tmp_path / "r.parquet"))
    assert back.table.equals(prof.table)
    old = Profile(prof.table.drop_columns(["random"]).slice(0, 3))
    assert old.table.column("random").null_count == 3
    with pytest.raises(ProfileError, match="bandwidth point 0: random must be true, false or null"):
        Profile.from_points([pt(2, 16 * KiB, 10, "yes")])


def test_a_random_phase_is_predicted_with_the_random_ratio():
    """Two processes, 8 independent 16 KiB writes each to one file at random offsets
    (access_mode random), back to back.  The profile: 10 us a write alone, 20 us at
    np 2 in order; at np 2 in a random order 25 us (ratio 1.25): 8 x 25 us = 200 us.
    The same phase in order: 8 x 20 us."""
    KiB, us = 1024, 1e-6
    m, ph, prof = two_writers(
        16 * KiB, 8, False, 10 * us, 20 * us, access_mode="random",
        offsets={"first": 0, "per_rank": 128 * KiB, "stride": None, "contiguous": True},
        io_time_s=8 * 25 * us, duration_s=8 * 25 * us)
    one = {"operation": "write", "access_type": "shared", "collective": False, "rs": 16 * KiB}
    rnd = Profile.from_points([*prof.table.to_pylist(),
                               {**one, "np": 2, "bw_Bps": 2 * 16 * KiB / (25 * us), "random": True}])
    vc = types.SimpleNamespace(name="vc")
    [p] = predict(m, vc, rnd)["phases"]
    assert p["time_s"] == pytest.approx(8 * 25 * us, rel=1e-9)
    assert p["note"] == "measured; random offsets: time x 1.25 (the profile's random points against in order)"
    [p] = predict({**m, "phases": [{**ph, "access_mode": "sequential"}]}, vc, rnd)["phases"]
    assert (p["time_s"], p["note"]) == (pytest.approx(8 * 20 * us, rel=1e-9), "measured")


def test_one_stripe_points_answer_for_a_shared_file_that_fits():
    """Independent shared 16 KiB writes, np 2.  The sweep's points: 8 ops per process
    at 8 MiB/s (a 256 KiB file), one op at 4 MiB/s.  One-stripe points (file_cap
    64 KiB): 2 ops per process at 6 MiB/s, and the same 16 B past a page at 5 MiB/s.
    A file within 64 KiB takes the capped point for its kind and keeps the sweep's
    one-op point; a larger file, a unique one, or none given: the sweep's points.
    With ops 2, t(2) = a + 2b meets the capped point's own time (b from it and the
    one-op point), so its bandwidth comes back exactly."""
    KiB = 1024
    def pt(ops, bw, cap=None, boff=None):
        return {"operation": "write", "access_type": "shared", "collective": False, "np": 2,
                "rs": 16 * KiB, "ops_per_process": ops, "bw_Bps": bw * MiB, "file_cap": cap,
                "buffer_offset": boff}
    prof = Profile.from_points([pt(8, 8), pt(1, 4), pt(2, 6, 64 * KiB), pt(2, 5, 64 * KiB, 16)])
    bw, note = prof.bandwidth("write", 2, 16 * KiB, "shared", False, 2, file_size=64 * KiB)
    assert bw == pytest.approx(6 * MiB, rel=1e-12)
    assert note.startswith("a shared file of 64 KiB, within one stripe: points measured on files "
                           "of one stripe (64 KiB) used where measured; 2 ops per process")
    # t_one = 32 KiB / 4 MiB/s = 7812.5 us; the sweep's long point: t = 256 KiB / 8 MiB/s,
    # b = (31250 - 7812.5) / 7 us; at 2 ops: a + 2b = 7812.5 + b
    b = (31250 - 7812.5) / 7
    for size in (64 * KiB + 1, None):
        bw, note = prof.bandwidth("write", 2, 16 * KiB, "shared", False, 2, file_size=size)
        assert bw == pytest.approx(2 * 32 * KiB / ((7812.5 + b) * 1e-6), rel=1e-12)
        assert "stripe" not in note
    bw, _ = prof.bandwidth("write", 2, 16 * KiB, "unique", False, 2)
    assert "stripe" not in _
    # buffers 16 B past a page: the capped point measured so
    bw, note = prof.bandwidth("write", 2, 16 * KiB, "shared", False, 2, buffer_offset=16,
                              file_size=32 * KiB)
    assert bw == pytest.approx(5 * MiB, rel=1e-12)
    assert note.startswith("buffers 16 B past 4 KiB: points measured so; a shared file of 32 KiB")
    assert summary(prof)[0]["peak_Bps"] == 8 * MiB           # one-stripe points are no peak
    with pytest.raises(ProfileError, match="bandwidth point 0: file_cap"):
        Profile.from_points([pt(2, 6, 0)])


def test_bad_points_are_refused():
    for bad, what in (({"operation": "append"}, "operation"), ({"np": 0}, "np"), ({"rs": -1}, "rs"),
                      ({"bw_Bps": 0}, "bandwidth"), ({"access_type": "both"}, "access_type"),
                      ({"ops_per_process": 0}, "ops_per_process"), ({"piece": 0}, "piece")):
        p = {"operation": "write", "np": 4, "rs": MiB, "bw_Bps": 1e8, **bad}
        with pytest.raises(ProfileError, match=f"bandwidth point 0: {what}"):
            Profile.from_points([p])


def test_parquet_round_trip_and_cluster_profile(tmp_path):
    prof = synthetic()
    path = prof.save(tmp_path / "vc.parquet")
    back = Profile.read(path)
    assert back.table.equals(prof.table)
    assert back.table.schema.field("np").type == "int32"
    # a cluster description naming the profile file, plus a point of its own
    (tmp_path / "vc.yaml").write_text(
        without_bandwidth("vc3", tmp_path).read_text()
        .replace("profile: null", "profile: vc.parquet")
        .replace("bandwidth: []", "bandwidth:\n  - {operation: read, np: 4, rs: 1048576, bw_MiBps: 291}"))
    c = load_cluster(tmp_path / "vc.yaml")
    both = Profile.load(c)
    assert len(both) == 5
    assert both.bandwidth("read", 4, MiB) == (291 * MiB, "measured")
    assert both.bandwidth("write", 4, 2 * MiB)[0] == pytest.approx(300 * MiB, rel=1e-12)
    rows = summary(both)
    assert [(r["operation"], r["access_type"], r["peak_Bps"] / MiB, r["rs"], r["np"]) for r in rows] == \
        [("write", "shared", 900, 4 * MiB, 4), ("read", "shared", 291, MiB, 4)]
    with pytest.raises(ProfileError, match="no such profile file"):
        Profile.read(tmp_path / "missing.parquet")


def test_predictions_pass_by_pass(tmp_path):
    """A profile measured in three passes keeps each pass's bandwidth of each
    point; predict gives the I/O time from each pass alone besides the median's.
    S3D-IO 400^3 at 16 ranks on VC 4, one point (write, np 16, its rs,
    collective) at a median 100 MiB/s, its passes 80, 100 and 125 MiB/s: every
    phase moves its weight at each, so the passes' I/O times are W / 80 MiB/s,
    W / 100 MiB/s and W / 125 MiB/s (W = 40.96e9 B: 488.28, 390.625 and 312.5 s).
    A pass that did not count (null) keeps the median."""
    m = model("s3d-400-16")
    rs, W = m["phases"][0]["rs"], m["weight"]
    vc = load_cluster("vc4")

    def prof(median, passes):
        return Profile.from_points([{"operation": "write", "np": 16, "rs": rs, "bw_Bps": median * MiB,
                                     "collective": True,
                                     "pass_bandwidths_Bps": [None if b is None else b * MiB for b in passes]}])
    three = prof(100, [80, 100, 125])
    assert three.passes == 3
    pred = predict(m, vc, three)
    assert pred["io_time_s"] == pytest.approx(W / (100 * MiB), rel=1e-12)
    assert pred["io_time_passes_s"] == pytest.approx([W / (b * MiB) for b in (80, 100, 125)], rel=1e-12)
    for ph in pred["phases"]:
        assert ph["time_passes_s"] == pytest.approx([ph["weight"] / (b * MiB) for b in (80, 100, 125)],
                                                    rel=1e-12)
    text = format_prediction(pred)
    assert "I/O time            390.62 s" in text     # 390.625 exactly, to the even digit
    assert ("  pass by pass      312.50 to 488.28 s  (from each of the profile's 3 passes alone: "
            "the cluster's own variation)") in text
    # pass 2 did not count: the median stands in for it
    assert predict(m, vc, prof(100, [80, None, 125]))["io_time_passes_s"] == \
        pytest.approx([W / (b * MiB) for b in (80, 100, 125)], rel=1e-12)
    # measured in one pass (or given): no pass by pass, and the text says nothing of it
    one = Profile.from_points([{"operation": "write", "np": 16, "rs": rs, "bw_Bps": 100 * MiB,
                                "collective": True}])
    pred1 = predict(m, vc, one)
    assert pred1["io_time_passes_s"] is None and pred1["phases"][0]["time_passes_s"] is None
    assert "pass by pass" not in format_prediction(pred1)
    # the profile's summary says how far a point's passes were apart: times 1/80,
    # 1/100, 1/125 of a unit, (1/80 - 1/125) / (1/100) = 45%
    from iomodel.cluster.profile import format_summary
    assert three.pass_spread() == pytest.approx([0.45], rel=1e-12)
    assert format_summary(three).endswith(
        "\n1 point(s) measured in 3 passes: their passes' times (slowest - fastest) / median 45.0% at "
        "the median point, 45.0% at the 90th percentile, 45.0% at most (the cluster's own variation: "
        "predict's pass by pass)")
    assert "passes" not in format_summary(one)
    # small requests' points said apart: a 512-byte point whose passes ran 1, 2 and 4 ms
    # a request ((4 - 1) / 2 = 150%), besides the large one (45%)
    small = three + Profile.from_points([{"operation": "write", "np": 16, "rs": 512, "bw_Bps": 16 * 512 / 0.002,
                                          "collective": True,
                                          "pass_bandwidths_Bps": [16 * 512 / t for t in (0.001, 0.002, 0.004)]}])
    assert small.pass_spread(max_rs=4096) == pytest.approx([1.5], rel=1e-12)
    assert format_summary(small).endswith(
        "\nof which 1 of requests of 4 KiB or less: 150.0% at the median point, 150.0% at most")
    # the passes survive the Parquet file; profiles written before them load without
    back = Profile.read(three.save(tmp_path / "p.parquet"))
    assert back.table.column("pass_bandwidths_Bps").to_pylist() == [[80 * MiB, 100 * MiB, 125 * MiB]]
    old = Profile(one.table.drop_columns(["pass_bandwidths_Bps"]))
    assert old.passes == 0 and old.table.column("pass_bandwidths_Bps").to_pylist() == [None]
    for bad in ([], [0], [MiB, -1.0], "fast", [True]):
        with pytest.raises(ProfileError, match="bandwidth point 0: pass_bandwidths_Bps must be a list"):
            Profile.from_points([{"operation": "write", "np": 1, "rs": MiB, "bw_Bps": MiB,
                                  "pass_bandwidths_Bps": bad}])


def test_compare_says_which_neighbours_overlap_pass_by_pass():
    """S3D-IO 400^3 at 16 ranks (W = 40.96e9 B) on VC 4 at 300 MiB/s (passes 290
    to 310: 126.0 to 134.7 s), VC 1 at 100 (80 to 125: 312.5 to 488.3 s) and VC 2
    at 90 (85 to 95: 411.2 to 459.6 s): ranked VC 4, VC 1, VC 2 by their medians,
    but VC 1's and VC 2's passes overlap (VC 2's fastest pass, 411.2 s, is faster
    than VC 1's slowest, 488.3 s); VC 4's slowest is faster than VC 1's fastest."""
    m = model("s3d-400-16")
    rs = m["phases"][0]["rs"]

    def prof(median, passes):
        return Profile.from_points([{"operation": "write", "np": 16, "rs": rs, "bw_Bps": median * MiB,
                                     "collective": True, "pass_bandwidths_Bps": [b * MiB for b in passes]}])
    vcs = [load_cluster(f"vc{i}") for i in (1, 2, 4)]
    res = compare(m, vcs, [prof(100, [80, 100, 125]), prof(90, [85, 90, 95]), prof(300, [290, 300, 310])])
    assert res["by_time"] == ["vc4", "vc1", "vc2"]
    assert res["time_overlaps"] == [["vc1", "vc2"]]
    assert ("vc1 and vc2 overlap pass by pass (vc1 312 to 488 s, vc2 411 to 460 s): their order is "
            "within the clusters' own variation") in format_comparison(res)
    # without passes nothing overlaps unless the times are equal
    res = compare(m, vcs, [Profile.from_points([{"operation": "write", "np": 16, "rs": rs, "collective": True,
                                                 "bw_Bps": b * MiB}]) for b in (100, 90, 300)])
    assert res["time_overlaps"] == [] and "overlap" not in format_comparison(res)


# -- compare ---------------------------------------------------------------------------------

def test_compare_ranks_feasible_vcs_and_lists_the_others(tmp_path):
    vcs = [load_cluster(f"vc{i}") for i in (1, 2, 3, 4)]
    m = model("s3d-400-16")
    rs = m["phases"][0]["rs"]

    def prof(mibps):
        return Profile.from_points([{"operation": "write", "np": 16, "rs": rs, "bw_Bps": mibps * MiB,
                                     "collective": True}])
    res = compare(m, vcs, [prof(40), prof(30), prof(80), prof(431)])
    (reason,) = [x["reasons"] for x in res["infeasible"] if x["vc"] == "vc3"]
    assert [x["vc"] for x in res["infeasible"]] == ["vc3"]
    assert reason == ["storage: the model needs 40.96 GB (38.15 GiB, expression 4) but vc3 has "
                      "40 GB of temporal storage (GB = 10^9 B)"]
    assert res["by_time"] == ["vc4", "vc1", "vc2"]
    # by hand, eu-west-1: 40.96e9 B at 40 / 30 / 431 MiB/s = 976.6 / 1302.1 / 90.6 s;
    # instances 17 x $0.047/h, 17 x $0.19/h, 11 x $0.239/h for that long, plus
    # persistent storage 8 x $0.55, 8 x $0.55, 16 x $0.55: vc1 $4.617, vc2 $5.568, vc4 $8.866;
    # MiB/s per $: vc1 8.66, vc2 5.39, vc4 48.6
    costs = {k: p["cost_usd"] for k, p in res["predictions"].items() if k != "vc3"}
    assert costs == pytest.approx({"vc1": 4.6167, "vc2": 5.5683, "vc4": 8.8662}, abs=1e-4)
    assert res["by_cost"] == ["vc1", "vc2", "vc4"]
    assert res["by_perf_cost"] == ["vc4", "vc1", "vc2"]
    t4 = m["weight"] / (431 * MiB)
    assert res["perf_cost"]["vc4"] == pytest.approx(431 / (t4 / 3600 * 0.239 * 11 + 16 * 0.55), rel=1e-12)
    # ranked on the variable cost only (the instances: vc4 $0.066, vc1 $0.217, vc2 $1.168),
    # VC 4 is the cheapest
    res_var = compare(m, vcs, {"vc1": prof(40), "vc2": prof(30), "vc3": prof(80), "vc4": prof(431)},
                      cost_key="cost_var_usd")
    assert res_var["by_cost"] == ["vc4", "vc1", "vc2"]
    assert res_var["by_perf_cost"] == ["vc4", "vc1", "vc2"]
    text = format_comparison(res)
    assert "vc3: storage:" in text and "by I/O time:" in text
    # a feasible VC without any bandwidth cannot be predicted: listed apart
    vcs[1] = load_cluster(without_bandwidth("vc2", tmp_path))
    res = compare(m, vcs, [prof(40), None, None, prof(431)])
    assert [x["vc"] for x in res["unavailable"]] == ["vc2"]
    assert "no write bandwidth" in res["unavailable"][0]["reason"]
    assert res["by_time"] == ["vc4", "vc1"]
    pytest.importorskip("matplotlib")
    out = plot_comparison(res, tmp_path / "fig")
    assert [p.name for p in out] == ["cost.png", "perf_cost.png"]
    assert all(p.stat().st_size > 1000 and p.read_bytes()[:4] == b"\x89PNG" for p in out)


def test_the_io_time_as_the_application_times_it():
    """The traced run's slowest process spent 1.5 times the model's measure (its
    phases' io_time_s summed, 10 ms) in its I/O calls, the mean process 1.2
    times: the prediction gives its I/O time so too, at those ratios, and says
    which measure each figure is. Two processes writing 1 MiB each 4 times,
    collectively, 5 ms an operation at np 2: 20 ms, so 30 and 24 ms."""
    MiB = 2 ** 20
    m, ph, prof = two_writers(MiB, 4, True, 0.004, 0.005, io_time_s=0.010)
    m["application"]["process_io_time_s"] = {"max": 0.015, "mean": 0.012}
    pred = predict(m, types.SimpleNamespace(name="vc"), prof)
    assert pred["io_time_s"] == pytest.approx(0.020, rel=1e-12)
    assert pred["process_io_time_s"] == pytest.approx({"max": 0.030, "mean": 0.024, "ratio_max": 1.5,
                                                       "ratio_mean": 1.2}, rel=1e-12)
    text = format_prediction(pred)
    assert "I/O time            0.02 s  (the model's measure: each phase from its last process's entry to " \
        "the last exit, summed)" in text
    assert "  as the app times it  0.03 s slowest process, 0.024 s mean  (in their I/O calls: the traced " \
        "run's 1.50 and 1.20 times the model's measure)" in text
    # a model without the processes' times (a paper model, a Darshan log's): the model's measure only
    del m["application"]["process_io_time_s"]
    assert predict(m, types.SimpleNamespace(name="vc"), prof)["process_io_time_s"] is None


def test_a_collective_dump_after_computing_takes_the_profiles_time_after_computing():
    """Two processes' collective 1 MiB writes, one each, 0.3 s after the
    solver's steps (gap_s). The profile: back to back 5 ms an operation (16
    each), and the same collective point with the processes computing 0.1 s
    and 1 s between operations, 6 and 8 ms: at 0.3 s, log-interpolated, 6 +
    2 x log(3) / log(10) = 6.954 ms, 1.391 times back to back, which the
    phase's own time (5 ms: the one point at np 2 the profile has) takes, and
    says. An independent phase, or a collective one 5 s after (more than twice
    the longest computing measured), keeps the back-to-back time."""
    MiB, ms = 2 ** 20, 1e-3
    m, ph, _ = two_writers(MiB, 1, True, 0.004, 0.005, gap_s=0.3, io_time_s=0.005)
    one = {"operation": "write", "access_type": "shared", "collective": True, "rs": MiB, "np": 2}
    prof = Profile.from_points([{**one, "ops_per_process": 16, "bw_Bps": 2 * MiB / (5 * ms)},
                                {**one, "ops_per_process": 4, "think_s": 0.1, "bw_Bps": 2 * MiB / (6 * ms)},
                                {**one, "ops_per_process": 4, "think_s": 1.0, "bw_Bps": 2 * MiB / (8 * ms)}])
    vc = types.SimpleNamespace(name="vc")
    [p] = predict(m, vc, prof)["phases"]
    want = 6 * ms + 2 * ms * math.log(3) / math.log(10)
    assert p["time_s"] == pytest.approx(want, rel=1e-9)
    assert "computing 300 ms before each operation: time x 1.39, per op 6954.2 us (the profile's collective" \
        in p["note"]
    for other in ({"gap_s": 5.0}, {"collective": False}):
        m["phases"][0].update(other)
        [p] = predict(m, vc, prof)["phases"]
        assert "computing" not in p["note"] and p["time_s"] == pytest.approx(5 * ms, rel=1e-9), other
        m["phases"][0].update(gap_s=0.3, collective=True)


def test_each_correction_can_be_left_out():
    """predict(without=...) leaves a correction out by its name, as
    `predict --without NAME`: the two writers computing 13 us between their
    16 KiB writes take 64 x 12 us with computing-between (worked out in
    test_computing_between_operations_meets_the_others_less_often), 64 x 20 us,
    the np 2 point back to back, without it; a phase of 10 operations takes
    1 ms + 10 x 0.4 ms with `ops` (test_a_phase_of_few_operations_pays_the_fixed_cost's
    points), the long point's 10 x 64 KiB x 4 / 0.0266 s x 64 without it.  The
    result says what was left out; an unknown name is refused with the list."""
    KiB, us = 1024, 1e-6
    m, ph, prof = writers_at_random_moments()
    vc = types.SimpleNamespace(name="vc")
    assert predict(m, vc, prof)["phases"][0]["time_s"] == pytest.approx(64 * 12 * us, rel=1e-9)
    off = predict(m, vc, prof, without=["computing-between"])
    assert off["phases"][0]["time_s"] == pytest.approx(64 * 20 * us, rel=1e-12)
    assert (off["phases"][0]["note"], off["without"]) == ("measured", ["computing-between"])
    pts = [{"operation": "write", "access_type": "shared", "collective": False, "np": 2, "rs": 64 * KiB,
            "ops_per_process": 64, "bw_Bps": 64 * 2 * 64 * KiB / 0.0266},
           {"operation": "write", "access_type": "shared", "collective": False, "np": 2, "rs": 64 * KiB,
            "ops_per_process": 1, "bw_Bps": 2 * 64 * KiB / 0.0014}]
    ten = {**ph, "rs": 64 * KiB, "request_sizes": [64 * KiB], "rs_min": 64 * KiB, "rs_max": 64 * KiB,
           "rep": 10, "weight": 2 * 10 * 64 * KiB, "duration_s": ph["io_time_s"]}
    m10 = {**m, "phases": [ten], "weight": ten["weight"]}
    prof10 = Profile.from_points(pts)
    assert predict(m10, vc, prof10)["phases"][0]["time_s"] == pytest.approx(0.001 + 10 * 0.0004, rel=1e-9)
    assert predict(m10, vc, prof10, without=["ops"])["phases"][0]["time_s"] == \
        pytest.approx(10 * 0.0266 / 64, rel=1e-9)
    with pytest.raises(PredictError, match="--without nonsense: no such correction; they are ops, views, "):
        predict(m, vc, prof, without=["nonsense"])


def test_writes_in_the_replays_blocks_cost_the_measured_block_ratio(tmp_path):
    """Two processes, 8 independent 240-byte writes each to one file, rank r's
    i-th at (2 i + r) 240 (IOR's layout), 10 of the 16 extending the file in
    lockstep (extending_writes).  IOR's blocks of k transfers extend it with
    (2 + k - 1) / 2k: 1, 0.75, 0.625, 0.5625 for the divisors 1, 2, 4, 8 of 8,
    so the replay writes blocks of 4, and the profile's point in blocks of 4
    (16 us a write at np 2, against 20 us one transfer a block: x 0.8)
    prices it: 8 x 16 us.  Without the block point, or --without blocks,
    8 x 20 us."""
    us, rs = 1e-6, 240
    m, ph, _ = two_writers(rs, 8, False, 10 * us, 20 * us, access_mode="strided", routine="MPI_File_write_at",
                           offsets={"first": 0, "per_rank": rs, "stride": 2 * rs, "contiguous": True},
                           io_time_s=8 * 20 * us, duration_s=8 * 20 * us, extending_writes=10)
    m["files"][0]["access_type"] = "shared"
    del ph["rs_groups"]
    m.update(runs=[[1, 1]], order=[])       # of the one phase (the replay's generation checks the model)
    one = {"operation": "write", "access_type": "shared", "collective": False, "rs": rs, "np": 2,
           "ops_per_process": 1024}
    plain = {**one, "bw_Bps": 2 * rs / (20 * us)}
    prof = Profile.from_points([plain, {**one, "ops_per_process": 1024, "block_transfers": 4,
                                        "bw_Bps": 2 * rs / (16 * us)}])
    vc = types.SimpleNamespace(name="vc")
    [p] = predict(m, vc, prof)["phases"]
    assert p["time_s"] == pytest.approx(8 * 16 * us, rel=1e-9)
    assert p["note"] == ("measured; blocks of 4 transfers: time x 0.8 (the profile's points in such blocks "
                         "against one transfer a block)")
    [p] = predict(m, vc, prof, without=["blocks"])["phases"]
    assert (p["time_s"], p["note"]) == (pytest.approx(8 * 20 * us, rel=1e-9), "measured")
    [p] = predict(m, vc, Profile.from_points([plain]))["phases"]
    assert p["time_s"] == pytest.approx(8 * 20 * us, rel=1e-9)
    assert p["note"] == ("measured; blocks of 4 transfers: no point measured so (characterize --for), "
                         "predicted as the sweep's layout of one transfer a block")
    # a point in blocks of another size answers nothing here; block points are no peak, survive
    # Parquet, and a profile from before them loads
    other = Profile.from_points([plain, {**one, "block_transfers": 2, "bw_Bps": 1.0}])
    assert predict(m, vc, other)["phases"][0]["time_s"] == pytest.approx(8 * 20 * us, rel=1e-9)
    assert summary(prof)[0]["peak_Bps"] == plain["bw_Bps"]
    assert Profile.read(prof.save(tmp_path / "b.parquet")).table.equals(prof.table)
    assert Profile(prof.table.drop_columns(["block_transfers"])).table.column("block_transfers").null_count == 2
    with pytest.raises(ProfileError, match="bandwidth point 0: block_transfers must be an integer >= 1 or null"):
        Profile.from_points([{**plain, "block_transfers": 0}])
