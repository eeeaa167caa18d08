"""The paper's models (models/paper.py, models/examples/) against its Tables V and VIII.

Expected values are computed here from the tables' numbers
(../shared/reference/paper-tables.json) and the paper's expressions 1-4:
  (1) weight(IdPh) = np * rs * rep        (2) IOFSize = sum of write-phase weights
  (3) INFSize = sum of read-phase weights (4) StorageCapacity = sum over files of their size
with the BT-IO per-process sizes worked out independently from NPB BT's multi-partition.

Units: the tables' MB is MiB. Their GB is 1000 of those MB (1000 * 2^20 B), truncated to
the printed digits: that is the only reading under which every weight(app) and storage
figure of Tables V and VIII fits (class C's 13,604,889,600 B is 12.67 GiB, printed 12.9GB;
see test_tables_gb_is_1000_mib_not_gib).
"""
import json
from pathlib import Path
from decimal import Decimal
from fractions import Fraction
from math import floor, isqrt

import pytest

from iomodel.models import ModelError, find_runs, format_ranks, identical, load_model, validate
from iomodel.models import paper

MIB = 2 ** 20
GB = 1000 * MIB  # the tables' GB
BT_NP = (4, 9, 16, 25, 36)
BT = [(c, n) for c in "BC" for n in BT_NP]
S3D = [(g, n) for g in (200, 400) for n in (8, 16, 32)]
BT_POINT = 5 * 8        # NPB BT: 5 doubles per grid point
BT_DUMPS = 40
S3D_FILE_ARRAYS = 16    # Table VIII's note: 16 double 3-D arrays per checkpoint file
NAMES = [f"btio-{c}-{n}" for c, n in BT] + [f"s3d-{g}-{n}" for g, n in S3D]

@pytest.fixture(scope="module")
def tables():
    """The tables with their printed digits kept (4.50 stays 4.50)."""
    if not paper.TABLES.is_file():
        pytest.skip(f"no paper tables at {paper.TABLES}")
    return json.loads(paper.TABLES.read_text(), parse_float=Decimal)


@pytest.fixture(scope="module")
def built():
    if not paper.TABLES.is_file():
        pytest.skip(f"no paper tables at {paper.TABLES}")
    return paper.build_all()


# --- helpers -------------------------------------------------------------------------

def ulp(printed):
    """One unit of the last printed digit; whole numbers are printed without decimals
    ("10MB", "18MB", which the JSON keeps as 10.0, 18.0)."""
    printed = Decimal(printed)
    if printed == printed.to_integral_value():
        return Fraction(1)
    return Fraction(1, 10 ** -printed.as_tuple().exponent)


def exact(x):
    return x if isinstance(x, Fraction) else Fraction(Decimal(x) if isinstance(x, str) else x)


def near(value, printed, tol):
    return abs(exact(value) - exact(printed)) < tol


def truncated(value, printed):
    """printed is value cut (not rounded) to printed's digits."""
    u = ulp(printed)
    return floor(exact(value) / u) * u == exact(printed)


def gb(text):
    assert text.endswith("GB")
    return Decimal(text[:-2])


def bt_table(tables, cls, np_):
    t = tables["table_V_btio_phases"][f"class_{cls}"]
    return t, next(r for r in t["rows"] if r["np"] == np_)


def bt_grid(dump):
    n = round((dump / BT_POINT) ** (1 / 3))
    assert n ** 3 * BT_POINT == dump
    return n


def npb_partition(n, np_):
    """Per rank: (bytes of one dump, lowest byte in the dump), cell by cell.

    NPB BT splits each axis into p = sqrt(np) cells (the first n mod p one point wider);
    process `node` owns cells c = 0..p-1 at (node % p + c, node // p - c, c) mod p, so
    the cell at (cx, cy, cz) belongs to ((cx - cz) mod p) + p * ((cy + cz) mod p).
    The file holds u(5, x, y, z) (Fortran order) per dump."""
    p = isqrt(np_)
    assert p * p == np_
    widths = [n // p + 1] * (n % p) + [n // p] * (p - n % p)
    lows = [sum(widths[:k]) for k in range(p)]
    points, first = [0] * np_, [None] * np_
    for cz in range(p):
        for cy in range(p):
            for cx in range(p):
                node = (cx - cz) % p + p * ((cy + cz) % p)
                points[node] += widths[cx] * widths[cy] * widths[cz]
                off = BT_POINT * (lows[cx] + n * (lows[cy] + n * lows[cz]))
                first[node] = off if first[node] is None else min(first[node], off)
    assert sum(points) == n ** 3
    return [BT_POINT * x for x in points], first


# --- BT-IO, Table V ------------------------------------------------------------------

@pytest.mark.parametrize("cls,np_", BT, ids=[f"{c}-{n}" for c, n in BT])
def test_btio(cls, np_, tables, built):
    m = built[f"btio-{cls}-{np_}"]
    validate(m)
    t, row = bt_table(tables, cls, np_)
    dump = t["bytes_per_dump_derived"]
    n = bt_grid(dump)
    per_rank, firsts = npb_partition(n, np_)
    assert sum(per_rank) == dump
    assert Fraction(sum(per_rank), np_) == Fraction(row.get("rs_bytes_derived",
                                                            row.get("rs_bytes_derived_mean")))
    mean = Fraction(dump, np_)
    assert near(mean / MIB, row["rs_MB"], ulp(row["rs_MB"]))  # Table V's rs column

    assert m["application"]["np"] == np_ and m["source"]["kind"] == "paper"
    assert m["application"]["run_time_s"] is None and m["application"]["io_time_s"] is None
    ph = m["phases"]
    assert len(ph) == BT_DUMPS + 1
    assert m["runs"] == [[1, 40], [41, 41]] == find_runs(ph)
    assert m["order"] == [[k, k + 1] for k in range(1, 41)]
    differ = len(set(per_rank)) > 1
    for p in ph:
        write = p["id"] <= BT_DUMPS
        rep = 1 if write else BT_DUMPS
        assert (p["operation"], p["routine"], p["rep"]) == (
            ("write", "MPI_File_write_at_all", 1) if write else ("read", "MPI_File_read_at_all", 40))
        assert p["collective"] is True and p["access_mode"] == "strided" and p["file"] == 0
        assert p["np"] == np_ and p["ranks"] == f"0-{np_ - 1}" and p["iop"] == 1
        # expression 1, exact: np * rs * rep, the exact sum when processes differ
        assert p["weight"] == np_ * mean * rep == sum(per_rank) * rep
        assert near(Fraction(p["weight"], MIB), rep * np_ * Fraction(Decimal(row["rs_MB"])),
                    rep * np_ * ulp(row["rs_MB"]))  # "rep * np * rs" as printed
        assert (p["rs_min"], p["rs_max"]) == (min(per_rank), max(per_rank))
        if differ:
            groups = {}
            for r, b in enumerate(per_rank):
                groups.setdefault(b, []).append(r)
            assert p["rs_groups"] == [{"ranks": format_ranks(r), "rs": b, "request_sizes": [b]}
                                      for b, r in sorted(groups.items(), key=lambda x: x[1][0])]
            assert p["rs"] == sum(per_rank) // np_ and p["request_sizes"] == [p["rs"]]
        else:
            assert "rs_groups" not in p
            assert p["rs"] == per_rank[0] and p["request_sizes"] == [per_rank[0]]
            assert p["weight"] == p["np"] * p["rs"] * p["rep"]
        o = p["offsets"]
        assert o["first"] == ((p["id"] - 1) * dump if write else 0)
        assert o["stride"] == (None if write else dump)
        assert o["per_rank"] is None and o["starts"] == firsts and o["contiguous"] is False

    f, = m["files"]
    iof = sum(p["weight"] for p in ph if p["operation"] == "write")  # expression 2
    inf = sum(p["weight"] for p in ph if p["operation"] == "read")   # expression 3
    assert iof == inf == BT_DUMPS * dump
    assert (f["name"], f["access_type"], f["role"], f["np"]) == ("btio.out", "shared", "inout", np_)
    assert (f["iof_size"], f["inf_size"], f["size"]) == (iof, inf, iof)
    assert m["storage_capacity"] == iof            # expression 4: the in-out file counted once
    assert m["weight"] == iof + inf == 2 * BT_DUMPS * dump
    assert truncated(Fraction(m["weight"], GB), gb(t["weight_app"]))
    assert truncated(Fraction(m["storage_capacity"], GB), gb(t["storage_capacity"]))
    # counting the in-out file's reads too (IOFSize + INFSize) would not give Table V's figure
    assert not truncated(Fraction(iof + inf, GB), gb(t["storage_capacity"]))


def test_btio_sizes_differ_exactly_when_sqrt_np_does_not_divide_the_grid(tables, built):
    # The tables' notes mark B-16, B-25, B-36 and C-25; but 102 = 6 * 17 (B-36 is even)
    # and 162 = 4 * 40 + 2 (C-16 is not, though its mean 10,628,820 B is a whole number).
    differ = set()
    for cls, np_ in BT:
        t, _ = bt_table(tables, cls, np_)
        per_rank, _ = npb_partition(bt_grid(t["bytes_per_dump_derived"]), np_)
        uneven = bt_grid(t["bytes_per_dump_derived"]) % isqrt(np_) != 0
        assert (len(set(per_rank)) > 1) == uneven
        assert ("rs_groups" in built[f"btio-{cls}-{np_}"]["phases"][0]) == uneven
        differ |= {f"{cls}-{np_}"} if uneven else set()
    assert differ == {"B-16", "B-25", "C-16", "C-25"}


# --- S3D-IO, Table VIII -------------------------------------------------------------

@pytest.mark.parametrize("grid,np_", S3D, ids=[f"{g}-{n}" for g, n in S3D])
def test_s3d(grid, np_, tables, built):
    m = built[f"s3d-{grid}-{np_}"]
    validate(m)
    t = tables["table_VIII_s3dio_phases"]
    row = next(r for r in t["rows"] if r["workload"] == f"{grid}x3" and r["np"] == np_)
    per_file = S3D_FILE_ARRAYS * 8 * grid ** 3
    assert per_file % np_ == 0
    rs = per_file // np_
    assert near(Fraction(rs, MIB), row["rs_MB"], ulp(row["rs_MB"]))
    # Table VIII's weight: np * rs with rs before its rounding, so within np units of rs
    assert near(Fraction(per_file, MIB), row["weight_phase_MB"], np_ * ulp(row["rs_MB"]))

    ph, files = m["phases"], m["files"]
    assert len(ph) == len(files) == 5
    for i, (p, f) in enumerate(zip(ph, files)):
        assert (p["id"], p["file"], f["id"]) == (i + 1, i, i)
        assert (p["operation"], p["routine"], p["rep"], p["iop"]) == ("write", "MPI_File_write_all", 1, 1)
        assert p["collective"] is True and p["access_mode"] == "strided"
        assert p["np"] == np_ and p["ranks"] == f"0-{np_ - 1}" and "rs_groups" not in p
        assert p["rs"] == p["rs_min"] == p["rs_max"] == rs and p["request_sizes"] == [rs]
        assert p["weight"] == np_ * rs * 1 == per_file                   # expression 1
        assert (f["access_type"], f["role"], f["np"], f["access_mode"]) == ("shared", "output", np_, "strided")
        assert f["iof_size"] == p["weight"] and f["inf_size"] == 0       # expressions 2, 3
        assert f["size"] == f["iof_size"]
    assert len({f["name"] for f in files}) == 5
    # Table VIII's "1 to 5": one run over the five files
    assert m["runs"] == find_runs(ph) == [[1, 5]]
    assert identical(ph[0], ph[1]) and ph[0]["file"] != ph[1]["file"]
    assert m["order"] == [[i, i + 1] for i in range(1, 5)]
    assert m["weight"] == m["storage_capacity"] == 5 * per_file         # expression 4
    printed = gb(t["weight_app"][f"{grid}x3"])  # Table VIII prints the same for storage
    assert truncated(Fraction(m["weight"], GB), printed)
    assert truncated(Fraction(m["storage_capacity"], GB), printed)


def test_tables_gb_is_1000_mib_not_gib(tables):
    c = tables["table_V_btio_phases"]["class_C"]
    w = 2 * BT_DUMPS * c["bytes_per_dump_derived"]  # 13,604,889,600 B
    assert truncated(Fraction(w, GB), gb(c["weight_app"]))                     # 12.97 -> 12.9
    assert not near(Fraction(w, 2 ** 30), gb(c["weight_app"]), Fraction(1, 10))  # 12.67 GiB
    s3d400 = 5 * S3D_FILE_ARRAYS * 8 * 400 ** 3
    assert truncated(Fraction(s3d400, GB), gb(tables["table_VIII_s3dio_phases"]["weight_app"]["400x3"]))


# --- the shipped files ---------------------------------------------------------------

def test_examples_are_shipped_and_valid():
    assert paper.example_names() == sorted(NAMES)
    for name in NAMES:
        m = paper.load_example(name)
        assert m["source"]["kind"] == "paper"
        assert m["weight"] == sum(p["weight"] for p in m["phases"])
        assert m["storage_capacity"] == sum(f["size"] for f in m["files"])


def test_examples_are_what_paper_py_builds_now(built, tmp_path):
    """Regenerating gives the committed files byte for byte: they never go stale."""
    assert paper.main([str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{n}.json" for n in NAMES)
    for name in NAMES:
        shipped = paper.EXAMPLES / f"{name}.json"
        assert (tmp_path / f"{name}.json").read_bytes() == shipped.read_bytes(), \
            f"{shipped} is stale: run python -m iomodel.models.paper"
        assert load_model(shipped) == built[name]


def test_missing_tables_are_named(tmp_path, monkeypatch, capsys):
    missing = tmp_path / "shared" / "reference" / "paper-tables.json"
    with pytest.raises(paper.PaperTablesMissing, match="paper tables not found"):
        paper.load_tables(missing)
    monkeypatch.setattr(paper, "TABLES", missing)
    assert paper.main([str(tmp_path / "out")]) == 1
    assert str(missing) in capsys.readouterr().err


def _corrupt(tmp_path, name, change):
    model = json.loads((paper.EXAMPLES / f"{name}.json").read_text())
    change(model)
    path = tmp_path / f"bad-{name}.json"
    path.write_text(json.dumps(model))
    return path


@pytest.mark.parametrize("name,change,message", [
    ("btio-B-4", lambda m: m["phases"][0].update(rep=0),
     r"phases\[0\]\.rep: expected an integer >= 1, got 0"),
    ("s3d-200-8", lambda m: m.pop("files"), r": files: missing"),
    ("btio-C-9", lambda m: m["phases"][40].update(weight=m["phases"][40]["weight"] + 1),
     r"phases\[40\]\.weight: \d+ is not np \* rs \* rep"),
    ("btio-B-16", lambda m: m["phases"][3]["rs_groups"][0].update(ranks="3-1"),
     r"phases\[3\]\.rs_groups\[0\]\.ranks: expected a rank list"),
    ("s3d-400-32", lambda m: m["phases"][4].update(file=5), r"phases\[4\]\.file: no file with id 5"),
    ("btio-B-4", lambda m: m["phases"][0].update(reread_bytes=0),
     r"phases\[0\]\.reread_bytes: only a read phase rereads.* in a write phase"),
    ("btio-B-4", lambda m: m["phases"][40].update(reread_bytes=m["phases"][40]["weight"] + 1),
     r"phases\[40\]\.reread_bytes: only a read phase rereads, at most its weight \(\d+\), got \d+ in a read phase"),
], ids=["rep", "files", "weight", "rs_groups", "file", "reread-write", "reread-weight"])
def test_corrupted_copies_name_the_field(tmp_path, name, change, message):
    path = _corrupt(tmp_path, name, change)
    with pytest.raises(ModelError, match=message) as e:
        load_model(path)
    assert str(path) in str(e.value)



def test_order_graph_is_a_networkx_digraph_following_the_phases():
    import networkx as nx
    from iomodel.models import order_graph
    m = load_model(Path(__file__).resolve().parents[1] / "models" / "examples" / "btio-B-9.json")
    g = order_graph(m)
    assert isinstance(g, nx.DiGraph) and g.number_of_nodes() == 41
    # the 40 writes then the read-back: one path 1 -> 2 -> ... -> 41
    assert list(nx.topological_sort(g)) == list(range(1, 42))
    assert sorted(g.edges()) == [(i, i + 1) for i in range(1, 41)]
    assert g.nodes[41]["rep"] == 40 and g.nodes[1]["operation"] == "write"
