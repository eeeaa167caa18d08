"""Spaces of candidate configurations (cluster/space.py), the design of which
to measure (cluster/design.py), composed profiles (cluster/compose.py) and
`compare --space` end to end: every figure worked out by hand in the comments."""
import json
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

from iomodel.cluster.compose import TERMS, compose_space, features, fit, nnls
from iomodel.cluster.design import design, plackett_burman
from iomodel.cluster.profile import Profile
from iomodel.cluster.space import SpaceError, load_space
from iomodel.cluster.space_compare import measured_profiles

ROOT = Path(__file__).resolve().parents[1]
TESTBED_SPACE = ROOT / "testbed" / "testbed-space.yaml"
MODEL = ROOT / "models" / "examples" / "btio-B-4.json"
IOMODEL = [sys.executable, "-m", "iomodel"]

BASE = """format: iomodel-cluster
version: 1
name: base
instance: {type: m.large, cores: 4, memory_gib: 16, prices: [{region: r1, usd_per_hour: 1.0}]}
instances: 1
billing: second
storage: {temporal: {device: HDD, capacity_gb: 100}}
network: "1 Gbit/s"
filesystem: {local: ext4, global: NFS, stripe_size: 64KB}
"""


def space_file(tmp_path, body, base=BASE):
    (tmp_path / "base.yaml").write_text(base)
    f = tmp_path / "s.yaml"
    f.write_text("format: iomodel-space\nversion: 1\nname: s\n" + body)
    return f


# One kind, 1, 2 and 4 data servers behind 1 Gbit/s links (125e6 B/s).  Measured:
# 1 server 100e6 B/s, 4 servers 250e6 B/s, for one write of 16 MiB by each of 4
# processes.  Per byte: 1/100e6 = g0 + g/125e6 and 1/250e6 = g0 + g/500e6, so
# g = 6e-9 / 6e-9 = 1 and g0 = 1e-8 - 8e-9 = 2e-9; 2 servers: 2e-9 + 1/250e6 =
# 6e-9 s per byte, 166.67e6 B/s.
SERVERS = """kinds:
  nfs:
    cluster: base.yaml
    axes: {data_servers: [1, 2, 4]}
    costs: {data_servers: {1: 0.5, 2: 1.0, 4: 2.2}}
measured:
  nfs-1srv:
    - {operation: write, np: 4, rs: 16MiB, bw_Bps: 100000000, collective: true}
    - {operation: read, np: 4, rs: 16MiB, bw_Bps: 200000000, collective: true}
  nfs-4srv:
    - {operation: write, np: 4, rs: 16MiB, bw_Bps: 250000000, collective: true}
    - {operation: read, np: 4, rs: 16MiB, bw_Bps: 500000000, collective: true}
"""


def test_the_testbed_space_has_its_18_configurations_with_their_components_and_prices():
    s = load_space(TESTBED_SPACE)
    names = [p.name for p in s.points]
    # disk: 3 rates; gluster: 3 servers x 3 links x 2 shard sizes, less 1 server at 64 MiB (3)
    assert len(names) == 3 + 18 - 3 == 18
    assert names[:3] == ["disk-30MiBps", "disk-60MiBps", "disk-120MiBps"]
    assert "gluster-1srv-100Mbit-64MiB" not in names
    p = s.point("gluster-2srv-300Mbit-64MiB")
    assert p.components == {"data_servers": 2, "devices": 1, "device_Bps": None, "link_bps": 300e6, "client_link_bps": None,
                            "stripe_size": 64 << 20, "placement": "dedicated", "instances": 1}
    assert (p.cluster.data_servers, p.cluster.network_bps, p.cluster.stripe_size) == (2, 300e6, 64 << 20)
    # 0.20 for two servers + 0.03 for the 300 Mbit/s links, on a cluster that costs 0
    assert p.cluster.price_per_hour == pytest.approx(0.23)
    assert p.start == ("IOMODEL_GLUSTER_SERVERS=2 IOMODEL_GLUSTER_RATE=300mbit "
                       "IOMODEL_GLUSTER_SHARD_SIZE=64MB gluster/start.sh")
    assert s.point("disk-60MiBps").start == ("IOMODEL_DISK_WRITE_BPS=62914560 IOMODEL_DISK_READ_BPS=62914560 "
                                             "disk/start.sh")


def test_plackett_burman_runs_are_the_cyclic_generator():
    # N = 4 for 3 factors: the shifts of ++- and a run of all lows
    assert plackett_burman(3).tolist() == [[1, 1, -1], [-1, 1, 1], [1, -1, 1], [-1, -1, -1]]
    d = plackett_burman(11)            # N = 12: columns balanced and orthogonal
    assert d.shape == (12, 11)
    assert (d.sum(axis=0) == 0).all() and (d.T @ d == 12 * numpy.eye(11)).all()
    with pytest.raises(ValueError, match="24 factors"):
        plackett_burman(24)


def test_the_testbed_design_measures_a_third_of_the_space():
    s = load_space(TESTBED_SPACE)
    chosen = [(p.name, why) for p, why in design(s)]
    # disk: one factor, runs high and low; gluster: servers, link, shard at their extremes by the
    # N = 4 design above, its second run (1 server, 1 Gbit/s, 64 MiB) excluded: the nearest point
    # has 2 servers (log 2 away) rather than 4 MiB shards (log 16 away)
    assert [n for n, _ in chosen] == ["disk-120MiBps", "disk-30MiBps", "gluster-3srv-1Gbit-4MiB",
                                      "gluster-2srv-1Gbit-64MiB", "gluster-3srv-100Mbit-64MiB",
                                      "gluster-1srv-100Mbit-4MiB"]
    assert chosen[3][1] == ("gluster run 2 of 4: wanted data_servers low, link high, stripe_size high, which "
                            "the space excludes: the nearest it has")
    assert len(chosen) * 3 <= len(s.points)


def test_nnls_keeps_weights_non_negative():
    # b = 2 * a0 exactly; a1 would fit with a negative weight: left out
    a = numpy.array([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
    w = nnls(a, numpy.array([2.0, 4.0, 6.0]))
    assert w == pytest.approx([2.0, 0.0])
    w = nnls(a, numpy.array([-1.0, -2.0, -3.0]))
    assert (w >= 0).all()


def test_the_fit_recovers_the_weights_points_were_made_with():
    # times made by T = 1e-4 s per request + V / (n * R_link) on 1 and 3 servers at 1 Gbit/s
    rows = {"np": [1, 4, 4], "transfer_size": [1 << 20, 1 << 16, 1 << 22], "ops": [8, 32, 2],
            "access_type": ["shared"] * 3}
    pts, comps = [], []
    for s in (1, 3):
        comp = {"data_servers": s, "link_bps": 1e9, "stripe_size": 1 << 16}
        t = features(comp, rows) @ numpy.array([1e-4, 0, 0, 1.0, 0, 0])
        prof = Profile.from_points([{"operation": "write", "np": n, "rs": r, "access_type": "shared",
                                     "bw_Bps": n * o * r / tt} for n, r, o, tt in
                                    zip(rows["np"], rows["transfer_size"], rows["ops"], t)])
        prof.table = prof.table.set_column(prof.table.schema.get_field_index("ops_per_process"),
                                           "ops_per_process", __import__("pyarrow").array(rows["ops"]))
        comps.append((comp, prof))
    c = fit("gluster", comps)
    (w,) = c.weights.values()
    assert w == pytest.approx([1e-4, 0, 0, 1.0, 0, 0], abs=1e-9)


def test_composed_points_are_the_anchor_scaled_by_the_model(tmp_path):
    s = load_space(space_file(tmp_path, SERVERS))
    out = compose_space(s, measured_profiles(s))
    prof, prov = out["nfs-2srv"]
    assert prov["profile"] == "composed" and prov["differs_in"] == ["data_servers"]
    assert prov["anchor"] == "nfs-1srv"            # log 2 away, as 4 servers are
    bw = dict(zip(prof.table.column("operation").to_pylist(), prof.table.column("bandwidth_Bps").to_pylist()))
    # write: above, 166.67e6; read: 1/200e6 = g0 + g/125e6, 1/500e6 = g0 + g/500e6, g = 3e-9 / 6e-9
    # = 0.5, g0 = 5e-9 - 4e-9 = 1e-9; 2 servers 1e-9 + 0.5/250e6 = 3e-9 s/B: 333.33e6 B/s
    assert bw["write"] == pytest.approx(1e9 / 6, rel=1e-9)
    assert bw["read"] == pytest.approx(1e9 / 3, rel=1e-9)
    assert set(prof.table.column("source").to_pylist()) == {"composed"}
    assert out["nfs-4srv"][1] == {"profile": "measured"}


def test_a_kind_measured_once_scales_by_its_components_rates(tmp_path):
    # RAID0 of 1 to 4 devices of 89.4 MB/s (seed 000, CC2 ephemeral), 1 device measured: the
    # components alone say n devices write n times as fast: 2 devices 178.8 MB/s
    body = """kinds:
  ephemeral:
    cluster: base.yaml
    axes: {data_servers: [1, 2, 4]}
    fixed: {device: "89.4 MB/s"}
measured:
  ephemeral-1srv: [{operation: write, np: 1, rs: 16MiB, bw_Bps: 89400000}]
"""
    s = load_space(space_file(tmp_path, body))
    prof, prov = compose_space(s, measured_profiles(s))["ephemeral-2srv"]
    assert prov["fitted"] is False
    assert prof.table.column("bandwidth_Bps").to_pylist() == pytest.approx([178.8e6])


def test_a_difference_no_measured_pair_tells_apart_is_refused(tmp_path):
    # the two measured points differ in servers only; 2 servers at 10 Gbit/s differs in the link too
    body = SERVERS.replace("axes: {data_servers: [1, 2, 4]}",
                           "axes: {data_servers: [1, 2, 4], link: [1 Gbit/s, 10 Gbit/s]}")
    body = body.replace("nfs-1srv:", "nfs-1srv-1Gbit:").replace("nfs-4srv:", "nfs-4srv-1Gbit:")
    s = load_space(space_file(tmp_path, body))
    out = compose_space(s, measured_profiles(s))
    assert out["nfs-2srv-1Gbit"][1]["profile"] == "composed"
    assert out["nfs-2srv-10Gbit"][0] is None
    assert out["nfs-2srv-10Gbit"][1]["reason"] == (
        "it differs from its anchor in link, which no two measured configurations of kind nfs tell apart; "
        "measure one nfs configuration of another link than nfs-1srv-1Gbit's, this one for instance "
        f"(characterize --space {s.path} --point nfs-2srv-10Gbit)")


def test_compare_space_ranks_measured_and_composed_with_the_pareto_front(tmp_path):
    f = space_file(tmp_path, SERVERS)
    proc = subprocess.run(IOMODEL + ["compare", str(MODEL), "--space", str(f), "--json"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    t = {k: v["io_time_s"] for k, v in r["predictions"].items()}
    # every phase of BT-IO B at 4 processes takes its profile's one write or read point: the
    # times scale as the bandwidths, 1, 2 and 4 servers at 100, 166.67, 250 MB/s writing and
    # 200, 333.33, 500 reading, each phase in the same proportion: 2 servers 0.6 of 1 server's
    assert t["nfs-2srv"] / t["nfs-1srv"] == pytest.approx(0.6, rel=1e-6)
    assert t["nfs-4srv"] / t["nfs-1srv"] == pytest.approx(0.4, rel=1e-6)
    assert r["by_time"] == ["nfs-4srv", "nfs-2srv", "nfs-1srv"]
    # $/h 1.0 + 0.5, 1.0 + 1.0, 1.0 + 2.2 times 1, 0.6, 0.4 of the time: 1.5, 1.2, 1.28: 4 servers
    # the fastest, 2 the cheapest, 1 server dearer and slower than both
    c = {k: v["cost_usd"] for k, v in r["predictions"].items()}
    assert [c["nfs-2srv"] / c["nfs-1srv"], c["nfs-4srv"] / c["nfs-1srv"]] == pytest.approx([1.2 / 1.5, 1.28 / 1.5])
    assert r["pareto"] == ["nfs-4srv", "nfs-2srv"]
    assert r["space"]["points"]["nfs-2srv"]["anchor"] == "nfs-1srv"
    text = subprocess.run(IOMODEL + ["compare", str(MODEL), "--space", str(f), "--plot", str(tmp_path / "figs")],
                          capture_output=True, text=True)
    assert (tmp_path / "figs" / "pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = {line.split()[0]: line for line in text.stdout.splitlines()[2:5]}
    assert rows["nfs-2srv"].split()[:2] == ["nfs-2srv", "composed"]
    assert rows["nfs-2srv"].endswith("from nfs-1srv (data_servers); not checked: 2 measured of its kind, 3 "
                                     "needed to leave one out")
    assert rows["nfs-4srv"].split()[:2] == ["nfs-4srv", "measured"]
    assert "note: nfs-2srv is composed and nothing checked its composition" in text.stdout
    assert "time-cost Pareto front (fastest first): nfs-4srv, nfs-2srv" in text.stdout


@pytest.mark.parametrize("body,message", [
    ("kinds: {}\n", "s.yaml: kinds: expected at least one storage kind"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {servers: [1, 2]}}}\n",
     "s.yaml: kinds.nfs.axes.servers: unknown field (did you mean 'data_servers'?)"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {device: [60 MiB/s, fast]}}}\n",
     "s.yaml: kinds.nfs.axes.device[1]: expected a rate like \"60 MiB/s\" or a number of MiB/s, got 'fast'"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {link: [1 Gbit/s, 1000 Mbit/s]}}}\n",
     "s.yaml: kinds.nfs.axes.link: a value listed twice"),
    ("kinds: {nfs: {cluster: nope.yaml}}\n", "s.yaml: kinds.nfs.cluster: nope.yaml: no such file"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {data_servers: [1, 2]}, exclude: [{link: 1 Gbit/s}]}}\n",
     "s.yaml: kinds.nfs.exclude[0].link: unknown field"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {data_servers: [0, 2]}}}\n",
     "s.yaml: kinds.nfs.axes.data_servers[0]: expected an integer >= 1, got 0"),
    ("kinds: {nfs: {cluster: base.yaml, start: 'start.sh {servers}'}}\n",
     "s.yaml: kinds.nfs.start: cannot fill 'start.sh {servers}' for point nfs: no value 'servers'"),
    ("kinds: {nfs: {cluster: base.yaml}}\nmeasured: {zzz: []}\n",
     "s.yaml: measured.zzz: not a configuration of the space (1 of them: nfs)"),
    ("kinds: {nfs: {cluster: base.yaml}}\nmeasured: {nfs: [{operation: write, np: 1, rs: 1MiB}]}\n",
     "s.yaml: measured.nfs: bandwidth[0].bw_MiBps: give exactly one of bw_MiBps and bw_Bps"),
    ("kinds: {nfs: {cluster: base.yaml}}\nkinds: {}\n", "s.yaml: not YAML: duplicate key 'kinds'"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {link: [1 GB/s]}}}\n",
     "s.yaml: kinds.nfs.axes.link[0]: expected a link rate in bits like \"300 Mbit/s\" or an unquoted number"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {link: ['10']}}}\n",
     "s.yaml: kinds.nfs.axes.link[0]: expected a link rate in bits like \"300 Mbit/s\" or an unquoted number"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {data_servers: [1, 2]}, costs: {data_servers: {1: 0.1}}}}\n",
     "s.yaml: kinds.nfs.costs.data_servers: no cost for 2 (give every value of kind nfs's data_servers)"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {data_servers: [1, 2]}}}\n"
     "costs: {data_servers: {1: 0.1, 2: 0.2, 3: 0.3}}\n",
     "s.yaml: costs.data_servers: 3 is not a value of kind nfs's data_servers (its values: 1, 2)"),
    ("kinds: {nfs: {cluster: base.yaml, costs: {stripe_size: {64KB: 1}}}}\n",
     "s.yaml: kinds.nfs.costs.stripe_size: kind nfs has no stripe_size axis or fixed value to price"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {data_servers: [1, 2]}, fixed: {data_servers: 2}}}\n",
     "s.yaml: kinds.nfs.fixed.data_servers: data_servers is an axis of this kind too"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {data_servers: [1, 2]}, exclude: [{data_servers: 2}]}}\n"
     "measured: {nfs-2srv: []}\n", "s.yaml: measured.nfs-2srv: a configuration kinds.nfs.exclude[0] excludes"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {data_servers: [1, 2]}}}\nmeasured: {nfs-1sv: []}\n",
     "s.yaml: measured.nfs-1sv: not a configuration of the space (did you mean 'nfs-1srv'"),
    ("format: iomodel-cluster\nkinds: {}\n", "s.yaml: not YAML: duplicate key 'format'"),
    ("kinds: {nfs: {cluster: base.yaml}}\nprofiles: ../elsewhere\n",
     "s.yaml: profiles: '../elsewhere': must be a directory under the space file's own"),
    ("kinds: {../x: {cluster: base.yaml}}\n",
     "s.yaml: kinds.../x.axes: point '../x': a configuration's name (its kind and values) must be letters"),
    ("format: iomodel-cluster\n", "s.yaml: not YAML: duplicate key 'format'"),
    # values with no finite number of bytes or bits (found by bench/fuzz.py's space kind)
    ("kinds: {nfs: {cluster: base.yaml, axes: {device: [60 MiB/s, .inf]}}}\n",
     "s.yaml: kinds.nfs.axes.device[1]: expected a rate like \"60 MiB/s\" or a number of MiB/s, got inf"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {device: [1.0e+305]}}}\n",
     "s.yaml: kinds.nfs.axes.device[0]: expected a rate like \"60 MiB/s\" or a number of MiB/s, got 1e+305"),
    (f"kinds: {{nfs: {{cluster: base.yaml, axes: {{device: [1{'0' * 400} MiB/s]}}}}}}\n",
     "s.yaml: kinds.nfs.axes.device[0]: expected a rate like \"60 MiB/s\" or a number of MiB/s, got '1000"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {link: [.inf]}}}\n",
     "s.yaml: kinds.nfs.axes.link[0]: expected a link rate in bits like \"300 Mbit/s\" or an unquoted number"),
    (f"kinds: {{nfs: {{cluster: base.yaml, axes: {{link: [1{'0' * 400} Gbit/s]}}}}}}\n",
     "s.yaml: kinds.nfs.axes.link[0]: expected a link rate in bits like \"300 Mbit/s\" or an unquoted number"),
    ("kinds: {nfs: {cluster: base.yaml, axes: {link: [1.0e+300]}}}\n",
     "s.yaml: kinds.nfs.axes.link[0]: expected a link rate in bits like \"300 Mbit/s\" or an unquoted number"),
    (f"kinds: {{nfs: {{cluster: base.yaml, axes: {{stripe_size: [1{'0' * 400} KiB]}}}}}}\n",
     "s.yaml: kinds.nfs.axes.stripe_size[0]: expected a size in bytes"),
])
def test_a_malformed_space_is_one_error_naming_the_file_and_field(tmp_path, body, message):
    f = space_file(tmp_path, body)
    with pytest.raises(SpaceError) as e:
        load_space(f)
    assert str(e.value).startswith(f"{tmp_path}/{message}"), str(e.value)
    proc = subprocess.run(IOMODEL + ["compare", str(MODEL), "--space", str(f)], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert str(f) in proc.stderr


def test_compare_takes_clusters_or_a_space_not_both(tmp_path):
    f = space_file(tmp_path, SERVERS)
    for args in ([], ["--vc", "vc3", "--space", str(f)]):
        proc = subprocess.run(IOMODEL + ["compare", str(MODEL), *args], capture_output=True, text=True)
        assert proc.returncode == 2 and "--vc VC [VC ...], or a space of configurations" in proc.stderr


def test_characterize_design_names_the_runs_and_runs_nothing_untrusted(tmp_path):
    proc = subprocess.run(IOMODEL + ["characterize", "--space", str(TESTBED_SPACE), "--design"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"{TESTBED_SPACE}: the design has 6 of its 18 configurations, 6 to measure:"
    assert "run only with --trust-cluster" in proc.stderr
    assert not list(tmp_path.iterdir())            # nothing started, nothing written


def test_the_space_bench_scores_rank_agreement_and_choices_by_hand():
    sys.path.insert(0, str(ROOT / "bench"))
    from space import BASELINE, goals, spearman
    assert spearman([1, 2, 3], [10, 30, 20]) == pytest.approx(0.5)     # ranks 0 1 2 / 0 2 1
    assert spearman([1, 1, 2], [5, 6, 7]) == pytest.approx(numpy.sqrt(3) / 2)   # ties: 0.5 0.5 2
    rows = [{"app": "a", "config": BASELINE, "measured_profile": True, "measured_io_time_s": 10.0,
             "predicted_io_time_s": 10.0, "error": 0.0, "price_per_hour": 1.0},
            {"app": "a", "config": "fast", "measured_profile": False, "measured_io_time_s": 2.0,
             "predicted_io_time_s": 2.4, "error": 0.2, "price_per_hour": 4.0},
            {"app": "a", "config": "mid", "measured_profile": False, "measured_io_time_s": 2.1,
             "predicted_io_time_s": 2.2, "error": 0.1 / 2.1, "price_per_hour": 2.0}]
    g = goals(rows)
    # composed errors 0.2 and 0.0476: one within 15%, median 0.124
    assert (g["composed_rows"], g["composed_within_15pct"]) == (2, 1)
    assert g["composed_median_abs_error"] == pytest.approx((0.2 + 0.1 / 2.1) / 2)
    a = g["apps"]["a"]
    # predicted fastest "mid" (2.2 < 2.4), measured 2.1 against the best 2.0: +5%
    assert (a["best_by_time"], a["chosen_by_time"]) == ("fast", "mid")
    assert a["chosen_time_over_best"] == pytest.approx(0.05)
    # cost: 10, 8, 4.2 measured; 10, 9.6, 4.4 predicted: "mid" both ways
    assert (a["best_by_cost"], a["chosen_by_cost"], a["chosen_cost_over_best"]) == ("mid", "mid", 0.0)
    assert a["gain_time_over_baseline"] == pytest.approx(10 / 2.1)
    assert a["gain_cost_over_baseline"] == pytest.approx(1 - 4.2 / 10)
    # ranks predicted 2 1 0, measured 2 0 1: 0.5
    assert a["spearman"] == pytest.approx(0.5)


def test_the_leave_one_out_check_says_how_many_it_checked(tmp_path):
    # three measured: A 1 server and B 4 at 1 Gbit/s, C 4 at 10 Gbit/s.  A left out: the fit on B and
    # C varies the link only, and A's anchor B differs in servers: not checked.  C left out: A and B
    # vary servers only, C's anchor B differs in the link: not checked.  B left out: A and C vary
    # both, B composed from A (log 4 away, C log 10): checked, its write and read
    body = SERVERS.replace("axes: {data_servers: [1, 2, 4]}",
                           "axes: {data_servers: [1, 2, 4], link: [1 Gbit/s, 10 Gbit/s]}")
    body = body.replace("costs: {data_servers: {1: 0.5, 2: 1.0, 4: 2.2}}", "")
    body = body.replace("nfs-1srv:", "nfs-1srv-1Gbit:").replace("nfs-4srv:", "nfs-4srv-1Gbit:")
    body += ("  nfs-4srv-10Gbit:\n    - {operation: write, np: 4, rs: 16MiB, bw_Bps: 400000000, collective: true}\n"
             "    - {operation: read, np: 4, rs: 16MiB, bw_Bps: 800000000, collective: true}\n")
    s = load_space(space_file(tmp_path, body))
    prov = compose_space(s, measured_profiles(s))["nfs-2srv-1Gbit"][1]
    assert (prov["loo_measured"], prov["loo_checked"], prov["loo_points"]) == (3, 1, 2)


def test_compare_space_with_nothing_measured_says_where_it_looked(tmp_path):
    f = space_file(tmp_path, "kinds: {nfs: {cluster: base.yaml, axes: {data_servers: [1, 2]}}}\n")
    proc = subprocess.run(IOMODEL + ["compare", str(MODEL), "--space", str(f)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr == (f"iomodel: error: {f}: no configuration of the space is measured (no NAME.parquet in "
                           f"{tmp_path}/s-profiles, no `measured:` points): characterize --space {f} --design "
                           f"names which to measure\n")
    proc = subprocess.run(IOMODEL + ["compare", str(MODEL), "--space", str(f), "--profiles", str(tmp_path / "no")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and f"--profiles {tmp_path}/no: no such directory" in proc.stderr


def test_the_design_leaves_out_what_is_measured_already(tmp_path):
    f = space_file(tmp_path, SERVERS)
    proc = subprocess.run(IOMODEL + ["characterize", "--space", str(f), "--design"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    # one factor (servers): runs high and low, 4 and 1 servers, both measured inline
    assert proc.stdout.splitlines() == [f"{f}: the design has 2 of its 3 configurations, 0 to measure:",
                                        "  nfs-4srv  nfs run 1 of 4: data_servers high; run 3 too  (measured already)",
                                        "  nfs-1srv  nfs run 2 of 4: data_servers low; run 4 too  (measured already)"]
    assert proc.stderr == ""


def test_the_servers_a_point_spreads_over():
    # 4 processes x 2 requests of 1 MiB: a shared file of 8 MiB, or 4 files of 2 MiB
    rows = {"np": [4, 4], "transfer_size": [1 << 20] * 2, "ops": [2, 2], "access_type": ["shared", "unique"]}
    link = 1e9                                   # bits/s: 125e6 bytes/s a server
    def servers(stripe, n=3):
        x = features({"data_servers": n, "link_bps": link, "stripe_size": stripe}, rows)
        return (8 << 20) / (x[:, TERMS.index("link")] * link / 8)
    # 4 MiB stripes: the shared file's 2 stripes on 2 servers; each process's file (one stripe) on
    # one server, 4 files over the 3 servers
    assert servers(4 << 20).tolist() == [2, 3]
    # 1 MiB stripes: 8 stripes over all 3; without a stripe size: the shared file over all 3, each
    # process's file on one
    assert servers(1 << 20).tolist() == [3, 3]
    assert servers(None).tolist() == [3, 3]
    assert servers(None, n=8).tolist() == [8, 4]
