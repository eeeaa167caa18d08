"""Step 3's two layouts of the bursts by phase (analyzer/phase_groups.py): a
Table, where every process has the same sequence of bursts, reduced down its
columns in place; and the bursts sorted by phase otherwise.  Worked by hand on
small bursts, then on traced runs: the layout the analyzer takes, and the
model it gives, equal to the sorted layout's."""
import copy

import numpy as np

from iomodel.analyzer import analyze, phase_groups
from iomodel.analyzer.phase_groups import Sorted, Table, group_bursts


def KEY(columns):
    return columns["key"]


def three_ranks(drop_last=False):
    """Ranks 0-2, each with a burst of key 7 then one of key 3 (k 0 both).
    Key 7: offsets 100, 150, 200 (affine, 50 a rank), bytes 5, 6, 7.  Key 3:
    offsets 0, 10, 30 (not affine), bytes 1, 2, 3.  drop_last: rank 2 has no
    key-3 burst."""
    b = {"rank": np.array([0, 0, 1, 1, 2, 2], np.int32),
         "k": np.zeros(6, np.int32),
         "offset0": np.array([100, 0, 150, 10, 200, 30], np.int64),
         "bytes": np.array([5, 1, 6, 2, 7, 3], np.int64),
         "key": np.array([7, 3] * 3, np.int64)}
    if drop_last:
        b = {f: v[:5] for f, v in b.items()}
    return b


def per_phase(grp):
    """What step 3 reads of a grouping, phase by phase (phases in key order)."""
    affine, step = grp.affine(grp.s("offset0"))
    return {"keys": grp.keys.tolist(), "count": grp.count.tolist(),
            "bytes": grp.add(grp.s("bytes")).tolist(),
            "first": grp.lo(grp.s("offset0")).tolist(), "last_rank": grp.hi(grp.s("rank")).tolist(),
            "lowest_rank_bytes": grp.first("bytes").tolist(),
            "affine": affine.tolist(), "step": [int(s) if a else None for a, s in zip(affine, step)],
            "spread_first": (grp.spread(grp.lo(grp.s("offset0"))) + 0 * grp.s("offset0")).ravel().tolist(),
            "bursts": [grp.b["bytes"][grp.sel(p)].tolist() for p in range(grp.nph)],
            "edges": sorted(grp.edges)}


def test_equal_sequences_are_a_table_reduced_in_place():
    """Phase 0 is key 3 (column 1), phase 1 key 7 (column 0); each process
    meets phase 1 then phase 0.  The Sorted layout of a copy says the same,
    after moving the bursts; the Table moves none."""
    b = three_ranks()
    before = copy.deepcopy(b)
    grp = group_bursts(b, KEY, ("key",))
    assert isinstance(grp, Table) and grp.kmul == 1
    want = {"keys": [3, 7], "count": [3, 3], "bytes": [6, 18], "first": [0, 100], "last_rank": [2, 2],
            "lowest_rank_bytes": [1, 5], "affine": [False, True], "step": [None, 50],
            "bursts": [[1, 2, 3], [5, 6, 7]], "edges": [(1, 0)]}
    got = per_phase(grp)
    # the spread runs down the table: row by row, column 0 is phase 1's
    assert got.pop("spread_first") == [100, 0] * 3
    assert got == want
    assert all(np.array_equal(b[f], before[f]) for f in b)
    by_rank_order = {k: f"burst {k}" for k in range(6)}
    assert grp.reindex(by_rank_order) == [by_rank_order]
    srt = Sorted(b2 := copy.deepcopy(before), b2["key"] * 1 + b2["k"])
    got = per_phase(srt)
    assert got.pop("spread_first") == [0, 0, 0, 100, 100, 100]
    assert got == want
    assert b2["bytes"].tolist() == [1, 2, 3, 5, 6, 7]          # moved, by phase then rank
    assert srt.reindex(by_rank_order) == [{3: "burst 0", 0: "burst 1", 4: "burst 2", 1: "burst 3",
                                           5: "burst 4", 2: "burst 5"}]


def test_different_sequences_are_sorted():
    """Rank 2 has no key-3 burst: no table; phase 0 (key 3) has ranks 0 and 1
    (offsets 0, 10: affine with two processes), phase 1 all three."""
    paired = []
    grp = group_bursts(three_ranks(drop_last=True), KEY, ("key",), pair=lambda key: paired.append(key.tolist()))
    assert isinstance(grp, Sorted) and paired == [[7, 3, 7, 3, 7]]
    got = per_phase(grp)
    got.pop("spread_first")
    assert got == {"keys": [3, 7], "count": [2, 3], "bytes": [3, 18], "first": [0, 100],
                   "last_rank": [1, 2], "lowest_rank_bytes": [1, 5], "affine": [True, True],
                   "step": [10, 50], "bursts": [[1, 2], [5, 6, 7]], "edges": [(1, 0)]}


def test_the_same_number_of_bursts_in_another_order_is_sorted():
    """Rank 2 meets key 3 before key 7: as many bursts as the others, but
    not the same sequence, so no table; the phases are as before."""
    b = three_ranks()
    b["key"][4:] = [3, 7]
    b["offset0"][4:], b["bytes"][4:] = [30, 200], [3, 7]
    grp = group_bursts(b, KEY, ("key",))
    assert isinstance(grp, Sorted)
    got = per_phase(grp)
    got.pop("spread_first")
    assert got == {"keys": [3, 7], "count": [3, 3], "bytes": [6, 18], "first": [0, 100],
                   "last_rank": [2, 2], "lowest_rank_bytes": [1, 5], "affine": [False, True],
                   "step": [None, 50], "bursts": [[1, 2, 3], [5, 6, 7]], "edges": [(0, 1), (1, 0)]}


def test_traced_runs_give_the_sorted_layouts_model(traced, monkeypatch):
    """btio_like 16^3, 3 steps, 4 ranks: every process makes the same bursts,
    a table of 4 rows and 4 columns (three writes, the read-back).  hacc_like,
    4 ranks: rank 0 has two bursts more than the others (the header's write
    and read), 4 + 3 * 2, so the bursts are sorted.  Either way the model is the one the sorted layout
    gives when the table is turned off."""
    seen = []
    real = phase_groups.group_bursts

    def spy(*a, **k):
        grp = real(*a, **k)
        seen.append((type(grp).__name__, grp.nph, len(grp.b["rank"])))
        return grp
    monkeypatch.setattr("iomodel.analyzer.phases.group_bursts", spy)
    btio = traced("btio_like", 4, 16, 16, 16, 3)
    hacc = traced("hacc_like", 4)
    models = [analyze(btio.trace_dir, jobs=1), analyze(hacc.trace_dir, jobs=1)]
    assert seen == [("Table", 4, 16), ("Sorted", 4, 10)]
    monkeypatch.setattr(Table, "of", classmethod(lambda cls, b, fields, pkey_of: None))
    assert [analyze(btio.trace_dir, jobs=1), analyze(hacc.trace_dir, jobs=1)] == models
    assert [t for t, *_ in seen[2:]] == ["Sorted", "Sorted"]
