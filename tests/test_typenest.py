"""A view's pattern straight from its description (analyzer/typenest.py): the
nests of real traces' filetypes worked out by hand, a view too large to
flatten resolved exactly, and, for any type tree, the nest's pieces those of
the flattening (a property test)."""
import numpy as np
from hypothesis import given, settings, strategies as st

from conftest import rank_events
from iomodel.analyzer import typemap as tm
from iomodel.analyzer.linking import link_rank, resolve_rank
from iomodel.analyzer.ops import _trait_arrays
from iomodel.analyzer.tracefile import read_rank_file
from iomodel.analyzer.typenest import Nest, nest_of
from iomodel.analyzer.views import map_through_view

# view_types.c's filetypes A to N (its header gives their blocks): the nests, or
# None where the blocks are no regular increasing nest (H, I, J: uneven; L: two
# types).  F, G, K and M end where their next tile starts (touch).
VIEW_TYPES_NESTS = [
    Nest(192, (), (), 384, 768),                    # A: one run
    Nest(256, (2,), (192,), 96, 768),               # B: 2 runs of 3 rows of 8 ints
    Nest(256, (2,), (192,), 96, 768),               # C: B in Fortran order
    Nest(64, (16,), (8,), 4, 192),                  # D: the vector element's ints
    Nest(64, (2,), (40,), 16, 120),                 # E
    Nest(0, (3,), (32,), 16, 80, touch=True),       # F vector
    Nest(0, (2,), (100,), 12, 112, touch=True),     # G hvector
    None, None, None,                               # H, I, J
    Nest(0, (2,), (50,), 3, 53, touch=True),        # K hindexed_block
    None,                                           # L struct of two types
    Nest(0, (3,), (32,), 16, 80, touch=True),       # M dup of F
    Nest(0, (2,), (12,), 4, 24),                    # N contiguous of a resized int
]


def test_view_types_nests_are_the_hand_worked_ones(traced):
    raw = read_rank_file(traced("view_types", 1).trace().rank_files[0])
    described = [v for v in raw.views if "type_id" in v]
    assert [v["nest"] for v in described] == VIEW_TYPES_NESTS
    for v, nest in zip(described, VIEW_TYPES_NESTS):     # and they flatten alike
        if nest is not None:
            assert blocks_of(nest).tolist() == v["blocks"].tolist()


def blocks_of(nest):
    """The nest's blocks, merged as the flattening merges them."""
    off = nest.offsets(np.arange(nest.nblocks))
    return np.stack(tm.merge(off, np.full(len(off), nest.block, np.int64)), axis=1)


def test_a_view_too_large_to_flatten_is_resolved_from_its_description(traced):
    """huge_view, 2 ranks: rank r's pencil of a 4096^3 grid of doubles, 16,777,216
    pieces of 8 bytes 32 KiB apart (more than typemap.MAX_BLOCKS); it writes its
    first 64 doubles and reads them back.  Each access: first byte 8r, end
    8r + 63*32768 + 8, 64 pieces; the read a reread.  Flattened instead, the view
    is capped and its accesses not resolved.  Only the accesses asked for are
    cut into pieces (resolve_rank's need): here the writes, 64 a rank."""
    run = traced("huge_view", 2)
    trace = run.trace()
    events = rank_events(trace)
    for r in (0, 1):
        data = [e for e in events[r] if e["file"] == "hv.dat" and e["bytes"] > 0]
        assert [(e["bytes"], e["abs_offset"], e["abs_end"], e["pieces"], e["resolved"]) for e in data] \
            == [(512, 8 * r, 8 * r + 63 * 32768 + 8, 64, True)] * 2
        mine = trace.extents.filter(
            np.array(trace.extents["rank"].to_numpy() == r))
        assert sorted(mine["offset"].to_pylist()) == sorted([8 * r + 32768 * k for k in range(64)] * 2)
        assert set(mine["length"].to_pylist()) == {8}
    raw = read_rank_file(trace.rank_files[1])
    view = raw.views[0]
    assert view["nest"] == Nest(8, (4096 * 4096,), (32768,), 8, 4096 ** 3 * 8)
    l, write = linked(raw)
    # the pieces' ranges only where asked (resolve_rank(need=...)), the rest alike
    full, part = resolve_rank(l), resolve_rank(l, need=write)
    for a, b in zip(full[:4], part[:4]):
        assert a.tolist() == b.tolist()
    assert len(full[4][0]) == 128 and len(part[4][0]) == 64
    assert set(part[4][0].tolist()) == set(np.flatnonzero(write).tolist())
    # flattened instead: the whole filetype is capped, but the accesses need its
    # first 64 pieces only (512 B of data): resolved, and the nest's pieces
    flat = resolve_rank(l, direct=False)
    assert view["capped"] and flat[2][l.data & (l.nbytes > 0)].all()
    for a, b in zip(full[:2] + full[3:4] + full[4], flat[:2] + flat[3:4] + flat[4]):
        assert a.tolist() == b.tolist()


def linked(raw):
    """A rank trace's links (the analyzer's own routine traits), and which of
    its events are data writes."""
    t = _trait_arrays(raw.routines)
    l = link_rank(raw, np.arange(len(raw.routines), dtype=np.int32), t["data"])
    return l, l.data & t["write"][l.routine]


# ---------------------------------------------------------------- any type tree
def _node(types, comb, ints=(), addrs=(), kids=(), lb=None, extent=None):
    """Add a type record as the tracer writes it: its size, lb and extent from
    its blocks unless given (resized)."""
    node = dict(comb=comb, ints=np.array(ints, np.int64), addrs=np.array(addrs, np.int64),
                kids=list(kids), size=0, lb=0, extent=0)
    if comb == tm.NAMED:
        node.update(size=ints[0], extent=ints[0])
        node["ints"] = np.zeros(0, np.int64)
    else:
        off, ln = _node_blocks(types, node)
        node["size"] = int(ln.sum())
        if lb is None:
            lo = int(off.min()) if len(off) else 0
            hi = int((off + ln).max()) if len(off) else 0
            lb, extent = lo, hi - lo
        if comb == tm.SUBARRAY:
            n = ints[0]
            lb, extent = 0, int(np.prod(ints[1:1 + n])) * types[kids[0]]["extent"]
        node.update(lb=lb, extent=extent)
    tid = len(types)
    types[tid] = node
    return tid


def _node_blocks(types, node):
    """A node's blocks, all of them, from its children's."""
    kids = node["kids"]
    return tm._node_blocks(node, lambda i, _: (_typemap(types, kids[i]), types[kids[i]]["extent"]),
                           lambda i: types[kids[i]]["size"], None)


def _typemap(types, tid):
    """A type's blocks, as typemap.flatten makes those of the types inside a view's."""
    return tm.merge(*_node_blocks(types, types[tid]))


@st.composite
def type_trees(draw):
    types = {}
    return types, _tree(draw, types, 0)


def _tree(draw, types, depth):
    """Build a random type in `types`; returns its id."""
    small = st.integers(1, 4)
    kind = draw(st.sampled_from(["named"] if depth >= 3 else
                                ["named", "contiguous", "vector", "hvector", "indexed", "hindexed",
                                 "indexed_block", "hindexed_block", "struct", "subarray", "resized",
                                 "dup"]))
    if kind == "named":
        return _node(types, tm.NAMED, (draw(st.sampled_from([1, 2, 4, 8])),))
    kid = _tree(draw, types, depth + 1)
    even = draw(st.sampled_from([True] * 4 + [False]))   # mostly regular, as real codes' are
    ext = types[kid]["extent"]
    if kind == "contiguous":
        return _node(types, tm.CONTIGUOUS, (draw(small),), kids=[kid])
    if kind == "vector":
        blen = draw(small)
        return _node(types, tm.VECTOR, (draw(small), blen, blen + draw(st.integers(-2, 6))), kids=[kid])
    if kind == "hvector":
        blen = draw(small)
        return _node(types, tm.HVECTOR, (draw(small), blen), (blen * ext + draw(st.integers(-8, 40)),),
                     kids=[kid])
    n = draw(small)
    if even:
        blens = [draw(small)] * n
        first, step = draw(st.integers(0, 6)), blens[0] + draw(st.integers(-1, 6))
        displs = [first + step * i for i in range(n)]
    else:
        displs = draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))
        blens = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    if kind == "indexed":
        return _node(types, tm.INDEXED, [n] + blens + displs, kids=[kid])
    if kind == "hindexed":
        return _node(types, tm.HINDEXED, [n] + blens, [d * max(ext, 1) for d in displs], kids=[kid])
    if kind == "indexed_block":
        return _node(types, tm.INDEXED_BLOCK, [n, blens[0]] + displs, kids=[kid])
    if kind == "hindexed_block":
        return _node(types, tm.HINDEXED_BLOCK, [n, blens[0]], [d * 3 for d in displs], kids=[kid])
    if kind == "struct":
        kids = [kid] if n == 1 or even else [kid, _tree(draw, types, depth + 1)]
        return _node(types, tm.STRUCT, [len(kids)] + blens[:len(kids)],
                            [d * 4 for d in displs[:len(kids)]], kids=kids)
    if kind == "subarray":
        nd = draw(st.integers(1, 3))
        sizes = draw(st.lists(st.integers(1, 5), min_size=nd, max_size=nd))
        subs = [draw(st.integers(1, s)) for s in sizes]
        starts = [draw(st.integers(0, s - b)) for s, b in zip(sizes, subs)]
        return _node(types, tm.SUBARRAY, [nd] + sizes + subs + starts + [draw(st.integers(0, 1))],
                            kids=[kid])
    if kind == "resized":
        lo, ext = types[kid]["lb"], types[kid]["extent"] + draw(st.integers(0, 24))
        return _node(types, tm.RESIZED, (), (lo, ext), kids=[kid], lb=lo, extent=ext)
    return _node(types, tm.DUP, kids=[kid])


@settings(max_examples=600, deadline=None)
@given(type_trees(), st.data())
def test_a_nest_gives_the_flattenings_pieces(tree, data):
    types, root = tree
    nest = nest_of(types, root)
    blocks, capped = tm.flatten(types, root)
    if nest is None or capped:
        return
    assert blocks_of(nest).tolist() == blocks.tolist()
    extent = types[root]["extent"]
    # accesses anywhere in the first tiles, of any length, through a view at disp 7
    n = data.draw(st.integers(1, 12))
    start = np.array(data.draw(st.lists(st.integers(0, 3 * nest.size), min_size=n, max_size=n)), np.int64)
    length = np.array(data.draw(st.lists(st.integers(0, 2 * nest.size + 3), min_size=n, max_size=n)),
                      np.int64)
    want = map_through_view(start, length, 7, blocks, extent)
    got = nest.pieces(start, length, 7)
    assert [x.tolist() for x in got] == [x.tolist() for x in want]
    keep = length > 0
    first, end, count = nest.span(start[keep], length[keep])
    j, off, ln = want
    idx = np.flatnonzero(keep)
    assert (first + 7).tolist() == [int(off[j == i][0]) for i in idx]
    assert (end + 7).tolist() == [int((off + ln)[j == i].max()) for i in idx]
    assert count.tolist() == [int((j == i).sum()) for i in idx]


@settings(max_examples=600, deadline=None)
@given(type_trees(), st.data())
def test_a_flattening_to_a_limit_is_the_whole_ones_start(tree, data):
    """flatten(limit=L), what an access moving L bytes through a view needs of
    its filetype: the first blocks of the whole flattening that hold its first
    L data bytes (the last one cut short, or whole), never fewer bytes."""
    types, root = tree
    whole, capped = tm.flatten(types, root)
    size = types[root]["size"]
    if capped or size == 0:
        return
    limit = data.draw(st.integers(1, size + 3))
    part, capped = tm.flatten(types, root, limit=limit)
    assert not capped and len(part) and int(part[:, 1].sum()) >= min(limit, size)
    assert part[:-1].tolist() == whole[:len(part) - 1].tolist()
    assert part[-1, 0] == whole[len(part) - 1, 0] and part[-1, 1] <= whole[len(part) - 1, 1]


def test_pieces_past_the_budget_are_one_range_each(traced, monkeypatch):
    """An access's pieces are made only within a budget (linking.PIECES_HELD,
    typemap.MAX_BLOCKS; the fuzz bench's damaged trace of one 1 TB read
    through 10 KiB blocks made 10^8 and 9 GB).  With a budget of 100, a trace
    held whole (trace-info: one budget for every rank): huge_view's accesses
    (a nest), 64 pieces of 8 B each, 32 KiB apart, from 8r: rank 0's write
    fits (64), its read does not (128 > 100), nor, 36 left, rank 1's two.
    Those are one extent each, first byte to end, not resolved; their pieces
    are still counted, 64, from the nest."""
    from iomodel.analyzer import linking
    monkeypatch.setattr(linking, "PIECES_HELD", 100)
    trace = traced("huge_view", 2).trace()
    events = rank_events(trace)
    end = 63 * 32768 + 8
    for r, fits in ((0, [True, False]), (1, [False, False])):
        data = [e for e in events[r] if e["file"] == "hv.dat" and e["bytes"] > 0]
        assert [(e["bytes"], e["abs_offset"], e["abs_end"], e["pieces"], e["resolved"]) for e in data] \
            == [(512, 8 * r, 8 * r + end, 64, f) for f in fits]
        mine = trace.extents.filter(np.array(trace.extents["rank"].to_numpy() == r))
        pieces = [(8 * r + 32768 * k, 8) for k in range(64)] if r == 0 else []
        assert sorted(zip(mine["offset"].to_pylist(), mine["length"].to_pylist())) == \
            sorted(pieces + [(8 * r, end)] * (2 - len(pieces) // 64))


def test_pieces_past_the_budget_through_a_flattened_view(traced, monkeypatch):
    """The same through a filetype that is flattened (many_views, 2 ranks, one
    view: a struct of two vectors of 1-byte blocks, strides 4 and 5; 64 bytes
    written then read from the view's start: 64 pieces at 4k, first byte 0,
    end 63 * 4 + 1 = 253, both ranks alike).  Budget 100, the trace held
    whole: rank 0's write is made piece by piece, the other three accesses
    are (0, 253) each, 64 pieces counted.  analyze holds a rank at a time
    (a budget a rank): each rank's read is past it, and the model says so."""
    from iomodel.analyzer import analyze, linking
    monkeypatch.setattr(linking, "PIECES_HELD", 100)
    run = traced("many_views", 2, 1, 64)
    trace = run.trace()
    events = rank_events(trace)
    for r, fits in ((0, [True, False]), (1, [False, False])):
        data = [e for e in events[r] if e["file"] == "mv.dat" and e["bytes"] > 0]
        assert [(e["bytes"], e["abs_offset"], e["abs_end"], e["pieces"], e["resolved"]) for e in data] \
            == [(64, 0, 253, 64, f) for f in fits]
        mine = trace.extents.filter(np.array(trace.extents["rank"].to_numpy() == r))
        pieces = [(4 * k, 1) for k in range(64)] if r == 0 else []
        assert sorted(zip(mine["offset"].to_pylist(), mine["length"].to_pylist())) == \
            sorted(pieces + [(0, 253)] * (2 - len(pieces) // 64))
    m = analyze(run.trace_dir, jobs=1)
    assert m["source"]["inferred"] == [
        "2 accesses of ranks 0-1 went through file views whose filetype was not flattened (more "
        "pieces than the analyzer holds at once, typemap.MAX_BLOCKS, or not enough memory): they are "
        "taken as contiguous ranges from their first byte"]


def test_span_through_a_view_of_no_data():
    """A filetype of no blocks (a damaged description) holds no data: its
    accesses have no piece and no place, as map_through_view gives none."""
    from iomodel.analyzer.views import span_through_view
    none = np.zeros((0, 2), np.int64)
    first, end, count = span_through_view([0, 16], [8, 8], 0, none, 8)
    assert (first.tolist(), end.tolist(), count.tolist()) == ([-1, -1], [-1, -1], [0, 0])
    assert [x.tolist() for x in map_through_view([0, 16], [8, 8], 0, none, 8)] == [[], [], []]


# ---------------------------------------------------------------- views of millions of pieces

def test_views_of_millions_of_pieces_cost_what_their_accesses_move(traced, tmp_path):
    """many_views, 2 ranks, 40 views, each a struct of two vectors of 2^20
    one-byte pieces (2 MiB of data, 2^21 pieces: 32 MiB flattened whole, 1.3 GiB
    for the 40) through which each rank writes then reads 64 bytes: an access
    needs the filetype's first 64 pieces only, 4+v bytes apart in view v, and
    that is all the analysis flattens.  Every access is resolved exactly: each
    write a phase of 64 pieces of 1 byte, its read a reread of it."""
    import json
    import subprocess
    from conftest import IOMODEL
    run = traced("many_views", 2, 40, 64)
    out = tmp_path / "m.json"
    p = subprocess.run(IOMODEL + ["analyze", str(run.trace_dir), "-o", str(out), "-q", "-j", "1"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    m = json.loads(out.read_text())
    assert m["source"]["inferred"] == [] and len(m["phases"]) == 80
    for v in range(40):
        w, r = m["phases"][2 * v: 2 * v + 2]
        assert (w["operation"], w["np"], w["rs"], w["access_mode"], w["offsets"]["piece"]) == \
            ("write", 2, 64, "strided", 1)
        # the first view's read rereads what each rank wrote through the open before it
        assert (r["operation"], r.get("reread_bytes")) == ("read", 2 * 64 if v == 0 else 0)
    # the last view's: 64 pieces 4 + 39 = 43 bytes apart, the file's extent
    assert m["files"][0]["extent"] == 63 * 43 + 1


def test_a_ranks_types_held_past_its_budget_are_said(traced, monkeypatch):
    """The same run with 6 views and 4096 bytes an access, analyzed with a
    budget of 20000 pieces a rank: each view needs its first 4096 pieces and
    its first vector's first 4096 (8192 held), so views 0 and 1 fit (16384),
    view 2 does not (3616 left): its accesses and those of views 3 to 5 are
    taken as contiguous, 4 views x 2 accesses x 2 ranks, and the model says so."""
    from iomodel.analyzer import analyze
    run = traced("many_views", 2, 6, 4096)
    monkeypatch.setattr(tm, "RANK_BLOCKS", 20000)
    m = analyze(run.trace_dir, jobs=1)
    assert m["source"]["inferred"] == [
        "16 accesses of ranks 0-1 went through file views whose filetype was not flattened (more "
        "pieces than the analyzer holds at once, typemap.MAX_BLOCKS, or not enough memory): they are "
        "taken as contiguous ranges from their first byte"]
    assert [p["access_mode"] for p in m["phases"][::2]] == ["strided"] * 2 + ["sequential"] * 4
