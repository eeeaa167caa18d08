"""Cluster descriptions (cluster/description.py, cluster/shipped/*.yaml): the shipped files equal
Tables III and IV of the method paper, regions, errors, paths, inline bandwidth."""
import json
from pathlib import Path

import pytest
import yaml

from iomodel.cluster.description import (MiB, Cluster, ClusterError, find_cluster, load_cluster,
                                    parse_size, shipped_clusters)

TABLES = Path(__file__).resolve().parents[2] / "shared" / "reference" / "paper-tables.json"
IRELAND, VIRGINIA = "eu-west-1 (Ireland)", "us-east-1 (Virginia)"


@pytest.fixture(scope="module")
def tables():
    if not TABLES.is_file():
        pytest.skip(f"{TABLES} not found")
    return json.loads(TABLES.read_text())


def test_every_shipped_file_loads():
    shipped = shipped_clusters()
    assert set(shipped) == {"vc1", "vc2", "vc3", "vc4", "local", "local-mpich"}
    for name, path in shipped.items():
        c = load_cluster(path)
        assert isinstance(c, Cluster)
        assert c.name == name and c.path == path
        assert c.cores_total == c.cores_per_instance * c.instances
        assert (c.launcher, c.mpi) == (("mpiexec.mpich", "mpich") if name == "local-mpich" else
                                       ("mpirun", None))
        # the loader refuses unknown keys, so loading proves every field of every
        # shipped file is known (no typos survive); and each declares its format
        assert yaml.safe_load(path.read_text())["format"] == "iomodel-cluster"


@pytest.mark.parametrize("region,col,ebs", [(None, "usd_per_hour_ireland", "ebs_usd_per_gb_month_eu"),
                                            (IRELAND, "usd_per_hour_ireland", "ebs_usd_per_gb_month_eu"),
                                            (VIRGINIA, "usd_per_hour_virginia",
                                             "ebs_usd_per_gb_month_us_east")])
def test_shipped_vcs_equal_tables_iii_and_iv(tables, region, col, ebs):
    inst = {r["instance"]: r for r in tables["table_III_instances"]}
    vcs = tables["table_IV_virtual_clusters"]
    assert len(vcs) == 4
    for vc in vcs:
        c = load_cluster(find_cluster(f"vc{vc['vc']}"), region=region)
        i = inst[vc["instance"]]
        assert c.instance_type == vc["instance"]
        assert c.instances == vc["instances"]
        assert c.cores_per_instance == i["cpu"]
        assert c.memory_gib == i["ram_gb"]
        assert c.region == (region or IRELAND)
        assert c.regions() == [IRELAND, VIRGINIA]
        assert c.price_per_hour == i[col]
        assert c.price_date == "2014-06"
        assert c.billing == "hour"
        assert c.persistent_usd_per_gb_month == vc[ebs]
        kind, dev, cap = vc["temporal"].split()           # "ephemeral HDD 160GB"
        assert (c.temporal_device, c.temporal_gb) == (dev, float(cap.removesuffix("GB")))
        kind, dev, cap = vc["persistent"].split()         # "EBS HDD 8GB"
        assert (c.persistent_device, c.persistent_gb) == (dev, float(cap.removesuffix("GB")))
        assert c.network == vc["network"]
        assert (c.data_servers, c.metadata_servers) == (vc["data_servers"], vc["metadata_servers"])
        assert (c.local_fs, c.global_fs) == (vc["local_fs"], vc["global_fs"])
        assert c.stripe_size == (None if vc["stripe"] is None else parse_size(vc["stripe"]))
        assert c.io_library == [x.strip() for x in vc["io_library"].split(",")]


def test_the_paper_figures_spelled_out():
    """Independent of the JSON: the numbers the brief and Table IV state."""
    vc = {n: load_cluster(n) for n in ("vc1", "vc2", "vc3", "vc4")}
    assert [vc[n].temporal_gb for n in vc] == [160, 420, 40, 300]
    assert [vc[n].persistent_gb for n in vc] == [8, 8, 8, 16]
    assert vc["vc4"].stripe_size == 64 * 1024 and vc["vc4"].global_fs == "PVFS2"
    assert vc["vc4"].data_servers == 8
    assert vc["vc3"].cores_total == 44 and vc["vc1"].cores_total == 17
    assert load_cluster("vc3", region=VIRGINIA).price_per_hour == 0.210
    assert vc["vc4"].persistent_usd_per_month == pytest.approx(16 * 0.55)


def test_local_cluster():
    c = load_cluster("local")
    assert (c.cores_per_instance, c.instances, c.memory_gib) == (2, 1, 24)
    assert c.price_per_hour == 0.0 and c.billing == "second"
    assert c.global_fs == "local" and c.workdir == "/tmp/iomodel-replay"
    assert c.launcher_options == ["--oversubscribe"] and c.defeat_page_cache is False
    assert c.persistent_usd_per_gb_month == 0 and c.persistent_gb is None


def test_region_switch_and_short_names():
    assert load_cluster("vc2").price_per_hour == 0.190
    for r in (VIRGINIA, "us-east-1", "virginia"):
        c = load_cluster("vc2", region=r)
        assert (c.region, c.price_per_hour, c.persistent_usd_per_gb_month) == (VIRGINIA, 0.175, 0.50)
    with pytest.raises(ClusterError) as e:
        load_cluster("vc2", region="ap-south-1")
    msg = str(e.value)
    assert "vc2.yaml: instance.prices:" in msg and "'ap-south-1'" in msg
    assert IRELAND in msg and VIRGINIA in msg and "\n" not in msg


def test_find_cluster(tmp_path):
    assert find_cluster("vc3") == shipped_clusters()["vc3"]
    assert find_cluster("vc3.yaml") == shipped_clusters()["vc3"]
    p = tmp_path / "mine.yaml"
    p.write_text(shipped_clusters()["vc1"].read_text())
    assert find_cluster(p) == p and find_cluster(str(p)) == p
    assert load_cluster(str(p)).name == "vc1"
    with pytest.raises(ClusterError, match=r"^vc9: no such file, and not a shipped cluster "
                                           r"\(shipped: local, local-mpich, vc1, vc2, vc3, vc4\)$"):
        find_cluster("vc9")


def test_billed_hours():
    hour, sec = load_cluster("vc3"), load_cluster("local")
    assert hour.billed_hours(0) == 0 and hour.billed_hours(1) == 1 and hour.billed_hours(3600) == 1
    assert hour.billed_hours(3601) == 2
    assert sec.billed_hours(1.2) == pytest.approx(2 / 3600)


# ------------------------------------------------------------------ malformed files

def _vc3():
    return yaml.safe_load(shipped_clusters()["vc3"].read_text())


def _write(tmp_path, doc, name="vc3.yaml"):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False))
    return p


def _set(doc, dotted, value):
    *head, last = dotted.split(".")
    d = doc
    for k in head:
        d = d[int(k)] if isinstance(d, list) else d[k]
    if value is KeyError:
        del d[last]
    elif isinstance(d, list):
        d[int(last)] = value
    else:
        d[last] = value
    return doc


BAD = [  # (field to change, new value or KeyError to delete, field named in the message, words)
    ("instance.cores", 0, "instance.cores", "expected an integer >= 1, got 0"),
    ("instance.cores", "four", "instance.cores", "expected an integer >= 1, got 'four'"),
    ("instance.cores", True, "instance.cores", "expected an integer >= 1, got true"),
    ("instance.memory_gib", -1, "instance.memory_gib", "expected a number > 0"),
    ("instance.type", KeyError, "instance.type", "missing"),
    ("instance.prices", [], "instance.prices", "expected a non-empty list"),
    ("instance.prices.0.usd_per_hour", "cheap", "instance.prices[0].usd_per_hour",
     "expected a number >= 0"),
    ("instance.prices.1.region", IRELAND, "instance.prices[1].region", "listed twice"),
    ("instances", 0, "instances", "expected an integer >= 1, got 0"),
    ("instances", KeyError, "instances", "missing"),
    ("billing", "month", "billing", "expected one of hour | second, got 'month'"),
    ("run.launcher", "aprun", "run.launcher", "expected one of mpirun | mpiexec | srun | mpirun.openmpi | mpiexec.openmpi | mpirun.mpich | mpiexec.mpich | mpiexec.hydra, got 'aprun'"),
    ("run.launcher_options", {"a": 1}, "run.launcher_options", "expected a list of strings"),
    ("run.defeat_page_cache", "yes please", "run.defeat_page_cache", "expected true or false"),
    ("run.fresh_files", 1, "run.fresh_files", "expected true or false, got 1"),
    ("io_servers.data", -1, "io_servers.data", "expected an integer >= 0, got -1"),
    ("storage.temporal.capacity_gb", "big", "storage.temporal.capacity_gb", "expected a number >= 0"),
    ("storage.persistent.prices.0.region", "ap-south-1", "storage.persistent.prices",
     "no price for region 'eu-west-1 (Ireland)'"),
    ("network", "Blazing", "network", "expected one of Low | Moderate | High | Unknown"),
    ("filesystem.global", KeyError, "filesystem.global", "missing (null: no global file system)"),
    ("filesystem.stripe_size", "64 furlongs", "filesystem.stripe_size", "expected a size in bytes"),
    ("filesystem", None, "filesystem", "expected a mapping, got null"),
    ("io_library", 3, "io_library", "expected a list of strings, got 3"),
    ("instance.core", 4, "instance.core", "unknown field (did you mean 'cores'?)"),
    ("format", "iomodel-model", "format", "expected 'iomodel-cluster', got 'iomodel-model'"),
    ("version", 2, "version", "expected 1"),
    ("format", KeyError, "format", "missing"),
    ("bandwidth", [{"operation": "append", "np": 4, "rs": 10, "bw_MiBps": 1}],
     "bandwidth[0].operation", "expected one of write | read | reread, got 'append'"),
    ("bandwidth", [{"operation": "write", "np": 4, "rs": 10}],
     "bandwidth[0].bw_MiBps", "give exactly one of bw_MiBps and bw_Bps"),
    ("bandwidth", [{"operation": "write", "np": 4, "rs": 10, "bw_MiBps": 0}],
     "bandwidth[0].bw_MiBps", "expected a number > 0, got 0"),
    ("bandwidth", [{"operation": "read", "np": 4, "rs": 10, "bw_MiBps": 5, "collective": "yes"}],
     "bandwidth[0].collective", "expected true, false or null"),
]


@pytest.mark.parametrize("key,value,field,words", BAD, ids=[f"{b[0]}={b[1]!r}"[:40] for b in BAD])
def test_malformed_field(tmp_path, key, value, field, words):
    p = _write(tmp_path, _set(_vc3(), key, value))
    with pytest.raises(ClusterError) as e:
        load_cluster(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}: {field}: "), msg
    assert words in msg, msg
    assert "\n" not in msg
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("text,words", [
    ("format: iomodel-cluster\nversion: 1\nname: [unclosed\n", "not YAML: "),
    ("format: iomodel-cluster\n  version: 1\n", "not YAML: "),
    ("format: iomodel-cluster\nformat: iomodel-cluster\n", "not YAML: duplicate key 'format' at line 2"),
    # a flow mapping as a key (a stray ": " after a bandwidth point; found by the fuzz bench)
    ("format: iomodel-cluster\n{a: 1}: 2\n", "not YAML: a key that is a dict, not a name at line 2"),
    ("format: iomodel-cluster\n[a, b]: 2\n", "not YAML: a key that is a list, not a name at line 2"),
    ("", "expected a mapping with format: iomodel-cluster, got null"),
    ("- a\n- b\n", "expected a mapping with format: iomodel-cluster"),
])
def test_not_a_cluster(tmp_path, text, words):
    p = _write(tmp_path, text)
    with pytest.raises(ClusterError) as e:
        load_cluster(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}: ") and words in msg and "\n" not in msg, msg
    if "not YAML" in words:
        assert " at line " in msg


def test_unreadable(tmp_path):
    with pytest.raises(ClusterError, match="no such file"):
        load_cluster(tmp_path / "nope.yaml")
    with pytest.raises(ClusterError, match="cannot read"):
        load_cluster(tmp_path)


# ------------------------------------------------------------------ paths and values

def test_relative_paths_are_relative_to_the_file(tmp_path, monkeypatch):
    sub = tmp_path / "clusters"
    sub.mkdir()
    doc = _vc3()
    doc["profile"] = "profiles/vc3.parquet"
    doc["run"]["hostfile"] = "hosts.txt"
    doc["run"]["ior"] = "bin/ior"
    p = _write(sub, doc)
    monkeypatch.chdir(tmp_path)                      # resolution must not depend on the cwd
    c = load_cluster(Path("clusters") / "vc3.yaml")
    assert c.profile_path == Path("clusters") / "profiles" / "vc3.parquet"
    assert c.profile_path.resolve() == sub / "profiles" / "vc3.parquet"
    assert c.hostfile.resolve() == sub / "hosts.txt"
    assert Path(c.ior).resolve() == sub / "bin" / "ior"
    doc["profile"] = str(tmp_path / "abs.parquet")
    doc["run"]["ior"] = "ior-4.0"                    # a bare name: looked up on PATH
    c = load_cluster(_write(sub, doc))
    assert c.profile_path == tmp_path / "abs.parquet" and c.ior == "ior-4.0"
    # p is that same file (rewritten), given by its absolute path
    assert load_cluster(p).profile_path == tmp_path / "abs.parquet"


def test_inline_bandwidth_points(tmp_path):
    doc = _vc3()
    doc["bandwidth"] = [
        {"operation": "write", "np": 4, "rs": 10612080, "bw_MiBps": 104, "access_type": "shared",
         "collective": True},
        {"operation": "read", "np": 16, "rs": "2.5 MiB", "bw_MiBps": 96.5},
        {"operation": "write", "np": 8, "rs": "64KB", "bw_Bps": 1.5e8, "access_type": "unique",
         "collective": False},
    ]
    c = load_cluster(_write(tmp_path, doc))
    a, b, d = c.bandwidth_points
    assert a == {"operation": "write", "np": 4, "rs": 10612080, "bw_Bps": 104 * 2**20,
                 "access_type": "shared", "collective": True}
    assert b == {"operation": "read", "np": 16, "rs": 2621440, "bw_Bps": 96.5 * MiB,
                 "access_type": "shared", "collective": None}
    assert d["rs"] == 65536 and d["bw_Bps"] == 1.5e8 and d["access_type"] == "unique"
    assert isinstance(a["rs"], int) and isinstance(a["bw_Bps"], float)


def test_defaults_of_optional_fields(tmp_path):
    doc = _vc3()
    for k in ("description", "billing", "io_servers", "storage", "network", "io_library", "run",
              "profile", "bandwidth"):
        del doc[k]
    del doc["filesystem"]["local"], doc["filesystem"]["stripe_size"]
    del doc["instance"]["prices"][0]["date"]
    c = load_cluster(_write(tmp_path, doc))
    assert (c.description, c.billing, c.data_servers, c.metadata_servers) == ("", "hour", 1, 1)
    assert (c.temporal_device, c.temporal_gb, c.persistent_device, c.persistent_gb) == (None,) * 4
    assert c.persistent_usd_per_gb_month == 0.0 and c.network == "Unknown"
    assert (c.local_fs, c.stripe_size, c.io_library, c.price_date) == (None, None, [], "")
    assert (c.launcher, c.launcher_options, c.hostfile, c.workdir, c.ior) == \
        ("mpirun", [], None, "iomodel-work", None)
    assert c.defeat_page_cache is False and c.profile_path is None and c.bandwidth_points == []
    assert c.fresh_files is True


@pytest.mark.parametrize("value,expect", [("64KB", 65536), ("64 KiB", 65536), ("64K", 65536),
                                          ("1MB", 2**20), ("4 MiB", 4 * 2**20), ("1.5GiB", 3 * 2**29),
                                          (65536, 65536), ("512", 512), ("512B", 512)])
def test_sizes_are_binary(value, expect):
    assert parse_size(value) == expect


def test_other_accepted_spellings(tmp_path):
    doc = _vc3()
    doc["network"] = "10 Gbit/s"
    doc["io_library"] = "mpich2, pnetcdf"
    doc["run"]["launcher_options"] = "--mpi=pmix -N 2"
    doc["run"]["launcher"] = "SRUN"
    doc["billing"] = "Second"
    doc["filesystem"]["global"] = None
    c = load_cluster(_write(tmp_path, doc))
    assert c.network == "10 Gbit/s" and c.network_bps == 10e9
    assert c.io_library == ["mpich2", "pnetcdf"]
    assert c.launcher_options == ["--mpi=pmix", "-N", "2"]
    assert (c.launcher, c.billing, c.global_fs) == ("srun", "second", None)


def test_the_documented_example_loads(tmp_path):
    doc = (Path(__file__).resolve().parents[1] / "docs" / "cluster-format.md").read_text()
    example = doc.split("## Example: VC3", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    c = load_cluster(_write(tmp_path, example))
    assert c.name == "vc3" and c.bandwidth_points[0]["bw_Bps"] == 84 * MiB
    # the shipped vc3 carries the paper's measurements: Table VI (IOzone, np 1) and Table VII
    shipped = load_cluster("vc3").bandwidth_points
    assert [(p["operation"], p["np"], p["rs"], p["bw_Bps"] / MiB) for p in shipped[:2]] == \
        [("write", 1, 8 * MiB, 116), ("read", 1, 8 * MiB, 291)]
    assert (shipped[4]["np"], shipped[4]["bw_Bps"] / MiB, shipped[4]["collective"]) == (4, 104, True)
    assert len(shipped) == 4 + 10
