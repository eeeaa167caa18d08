"""The method paper's I/O models (its Tables V and VIII) as example models.

NAS BT-IO (subtype full), classes B and C on 4, 9, 16, 25 and 36 processes,
and S3D-IO on 200^3 and 400^3 grids on 8, 16 and 32 processes, built from the
paper's tables (../shared/reference/paper-tables.json, next to the checkout)
with exact byte counts derived from the applications' definitions: Table V and
VIII print sizes in "MB", which are MiB rounded to a few digits.

The generated files ship in models/examples/ (`example_names`, `load_example`),
so users have them without ../shared; rebuilding them needs the tables:

    python -m iomodel.models.paper [OUTDIR]    # default: models/examples/
"""
import json
import sys
from math import isqrt
from pathlib import Path

from . import find_runs, format_ranks, load_model, save_model, validate

TABLES = Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "paper-tables.json"
EXAMPLES = Path(__file__).resolve().parent / "examples"
MIB = 2 ** 20

# NPB BT (class grid, 40 dumps of 5 doubles per grid point: NPB 3.x BT-IO, subtype full).
BT_GRID = {"B": 102, "C": 162}
BT_DUMPS = 40
BT_POINT_BYTES = 5 * 8
BT_FILE = "btio.out"
BTIO_NP = (4, 9, 16, 25, 36)

# S3D-IO: per checkpoint file 16 double 3-D arrays of the grid (Table VIII's note); process
# grids of Table IX.
S3D_ARRAYS = 16
S3D_FILES = 5
S3D_PROCESS_GRID = {8: (2, 2, 2), 16: (2, 2, 4), 32: (2, 4, 4)}
S3D_GRIDS = (200, 400)

_NO_TIMES = {"start_s": None, "end_s": None, "duration_s": None, "io_time_s": None, "bandwidth_Bps": None,
             "gap_s": None, "gap_comm": None}
_NO_LOGICAL = {"first": None, "comm_between": None}
_UNAVAILABLE = [
    "run and I/O times: the paper's tables give no run_time_s, io_time_s, phase times, "
    "bandwidths or gaps",
    "hosts and the placement of processes",
    "the command line",
    "logical times (communication calls before and between operations)",
    "the phase rule: phases are the paper's, not split by iomodel analyze",
]


class PaperTablesMissing(FileNotFoundError):
    """../shared/reference/paper-tables.json is not next to the checkout."""


def load_tables(path=None):
    """The paper's tables (dict), from ../shared/reference/paper-tables.json."""
    path = Path(path) if path else TABLES
    if not path.is_file():
        raise PaperTablesMissing(
            f"paper tables not found: {path} (building the paper's models needs "
            f"shared/reference/paper-tables.json next to the checkout; the built models ship "
            f"in {EXAMPLES})")
    return json.loads(path.read_text())


def configurations():
    """Every example: (name, builder, args)."""
    out = [(f"btio-{c}-{n}", build_btio, (c, n)) for c in BT_GRID for n in BTIO_NP]
    out += [(f"s3d-{g}-{n}", build_s3d, (g, n)) for g in S3D_GRIDS for n in S3D_PROCESS_GRID]
    return out


def build_all(tables=None):
    """{name: model} for every configuration of Tables V and VIII."""
    tables = tables if tables is not None else load_tables()
    return {name: fn(*args, tables=tables) for name, fn, args in configurations()}


def write_examples(outdir, tables=None):
    """Write one NAME.json per configuration into outdir; the paths written."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, model in build_all(tables).items():
        save_model(model, outdir / f"{name}.json")
        paths.append(outdir / f"{name}.json")
    return paths


def example_names():
    """The shipped examples (no ../shared needed)."""
    return sorted(p.stem for p in EXAMPLES.glob("*.json"))


def load_example(name):
    """A shipped example model by name, e.g. 'btio-C-16'."""
    return load_model(EXAMPLES / f"{name}.json")


# --- BT-IO ------------------------------------------------------------------------------

def _cell(k, grid, p):
    """(size, low) of cell coordinate k (0-based) along one axis: NPB make_set."""
    size, excess = divmod(grid, p)
    if k < excess:
        return size + 1, k * (size + 1)
    return size, excess * (size + 1) + (k - excess) * size


def btio_ranks(grid, np_):
    """Per rank: (bytes of one dump, first byte of it in the dump), from NPB BT's
    multi-partition: sqrt(np) cells per process, cell c of node at
    (node % p + c, node // p - c, c) mod p; the file holds u(5, x, y, z) per dump."""
    p = isqrt(np_)
    if p * p != np_:
        raise ValueError(f"BT-IO runs on a square number of processes, not {np_}")
    out = []
    for node in range(np_):
        total = 0
        for c in range(p):
            sx, _ = _cell((node % p + c) % p, grid, p)
            sy, _ = _cell((node // p - c) % p, grid, p)
            sz, _ = _cell(c, grid, p)
            total += sx * sy * sz
        _, lx = _cell(node % p, grid, p)  # cell 0 is at z = 0: the process's lowest byte
        _, ly = _cell(node // p, grid, p)
        out.append((total * BT_POINT_BYTES, (lx + grid * ly) * BT_POINT_BYTES))
    return out


def _sizes(per_rank, rep):
    """The phase's size fields (rs, rs_min, rs_max, rs_groups) for iop 1; weight exact."""
    np_ = len(per_rank)
    weight = sum(per_rank) * rep
    rs = sum(per_rank) // np_  # the mean (rounded down) when processes differ
    f = {"iop": 1, "request_sizes": [rs], "rs": rs, "rs_min": min(per_rank),
         "rs_max": max(per_rank)}
    if len(set(per_rank)) > 1:
        groups = {}
        for rank, b in enumerate(per_rank):
            groups.setdefault(b, []).append(rank)
        f["rs_groups"] = [{"ranks": format_ranks(r), "rs": b, "request_sizes": [b]}
                          for b, r in sorted(groups.items(), key=lambda x: x[1][0])]
    f["rep"] = rep
    f["weight"] = weight
    return f


def _features(**on):
    keys = ("explicit_offsets", "individual_pointers", "shared_pointers", "blocking",
            "nonblocking", "collective", "independent")
    return {k: bool(on.get(k)) for k in keys}


def _mib(b):
    return f"{b / MIB:.4f} MiB"


def build_btio(cls, np_, tables=None):
    """NAS BT-IO class cls ("B" or "C") on np_ processes: Table V."""
    tables = tables if tables is not None else load_tables()
    t = tables["table_V_btio_phases"][f"class_{cls}"]
    rows = {r["np"]: r for r in t["rows"]}
    if np_ not in rows:
        raise ValueError(f"Table V has no BT-IO class {cls} row for np {np_}")
    row, grid = rows[np_], BT_GRID[cls]
    dump = grid ** 3 * BT_POINT_BYTES
    if dump != t["bytes_per_dump_derived"]:
        raise ValueError(f"class {cls}: {grid}^3 * {BT_POINT_BYTES} = {dump} B, but the tables "
                         f"give bytes_per_dump_derived {t['bytes_per_dump_derived']}")
    ranks = btio_ranks(grid, np_)
    per_rank = [b for b, _ in ranks]
    table_mean = row.get("rs_bytes_derived", row.get("rs_bytes_derived_mean"))
    if sum(per_rank) != dump or sum(per_rank) != table_mean * np_:
        raise ValueError(f"class {cls} np {np_}: per-rank sizes sum to {sum(per_rank)}, the "
                         f"tables' mean is {table_mean}")
    starts = [s for _, s in ranks]
    common = {"file": 0, "collective": True, "np": np_, "ranks": format_ranks(range(np_)),
              "access_mode": "strided"}

    step = starts[1] - starts[0]
    affine = all(b - a == step for a, b in zip(starts, starts[1:]))

    def offsets(first, stride):
        if affine:
            return {"first": first, "per_rank": step, "stride": stride, "contiguous": False}
        return {"first": first, "per_rank": None, "starts": starts, "stride": stride,
                "contiguous": False}

    phases = []
    for k in range(1, BT_DUMPS + 1):
        phases.append({"id": k, **common, "operation": "write", "routine": "MPI_File_write_at_all",
                       **_sizes(per_rank, 1), "offsets": offsets((k - 1) * dump, None),
                       "logical_time": dict(_NO_LOGICAL), **_NO_TIMES})
    phases.append({"id": BT_DUMPS + 1, **common, "operation": "read",
                   "routine": "MPI_File_read_at_all", **_sizes(per_rank, BT_DUMPS),
                   "offsets": offsets(0, dump), "logical_time": dict(_NO_LOGICAL), **_NO_TIMES})
    phases = [_ordered(p) for p in phases]
    iof = sum(p["weight"] for p in phases if p["operation"] == "write")
    inf = sum(p["weight"] for p in phases if p["operation"] == "read")
    files = [{"id": 0, "name": BT_FILE, "paths": [BT_FILE], "access_type": "shared", "np": np_,
              "access_mode": "strided", "role": "inout", "iof_size": iof, "inf_size": inf,
              "size": iof, "extent": BT_DUMPS * dump}]
    differ = len(set(per_rank)) > 1
    inferred = [
        f"sizes in bytes from the NPB definition, not printed in the paper: class {cls} grid "
        f"{grid}^3, 5 doubles per point, one dump of {dump} B written {BT_DUMPS} times; Table V "
        f"prints rs {row['rs_MB']:g} MB (MiB), the exact mean is {_mib(dump / np_)}",
        "one MPI-IO operation per process per repetition (iop 1): the whole dump of a process "
        "(its cells through the file view)",
        f"offsets from NPB's file layout: dump d (0-based) at d * {dump} B, read back in order in "
        f"phase {BT_DUMPS + 1}; starts: each process's lowest byte, the corner of its cell at "
        "z = 0; extent: the 40 dumps",
    ]
    if differ:
        lo, hi = min(per_rank), max(per_rank)
        inferred.append(
            f"{grid} is not divisible by sqrt(np) = {isqrt(np_)}: NPB's multi-partition gives "
            f"processes {lo} to {hi} B per dump (rs_groups, rs_min, rs_max); rs is their mean "
            f"rounded down, and each phase's weight the exact sum")
    return validate({
        "format": "iomodel-model", "version": 1,
        "application": {"name": f"NAS BT-IO class {cls} (subtype full)", "command": [], "np": np_,
                        "hosts": {}, "run_time_s": None, "io_time_s": None,
                        "features": _features(explicit_offsets=True, blocking=True,
                                              collective=True)},
        "source": {"kind": "paper", "path": "shared/reference/paper-tables.json",
                   "unavailable": list(_UNAVAILABLE), "inferred": inferred},
        "analysis": {"max_comm_gap": None, "max_idle_s": None,
                     "threshold_rule": "paper: the phases of Table V (phases 1 to 40: one "
                                       "Write_at_all each; phase 41: Read_at_all, rep 40)"},
        "files": files, "phases": phases, "runs": find_runs(phases),
        "order": [[k, k + 1] for k in range(1, BT_DUMPS + 1)],
        "weight": sum(p["weight"] for p in phases),
        "storage_capacity": sum(f["size"] for f in files),
    })


_KEY_ORDER = ["id", "file", "operation", "routine", "collective", "np", "ranks", "iop",
              "request_sizes", "rs", "rs_min", "rs_max", "rs_groups", "rep", "weight",
              "access_mode", "offsets", "logical_time"]


def _ordered(phase):
    """The phase's fields in the documented order (readable JSON)."""
    out = {k: phase[k] for k in _KEY_ORDER if k in phase}
    out.update({k: v for k, v in phase.items() if k not in out})
    return out


# --- S3D-IO -----------------------------------------------------------------------------

def build_s3d(grid, np_, tables=None):
    """S3D-IO on a grid^3 workload with np_ processes: Table VIII."""
    tables = tables if tables is not None else load_tables()
    t = tables["table_VIII_s3dio_phases"]
    workload = f"{grid}x3"
    if not any(r["workload"] == workload and r["np"] == np_ for r in t["rows"]):
        raise ValueError(f"Table VIII has no S3D-IO {workload} row for np {np_}")
    pgrid = S3D_PROCESS_GRID[np_]
    if any(grid % q for q in pgrid):
        raise ValueError(f"{grid}^3 does not split evenly on a {pgrid} process grid")
    per_file = S3D_ARRAYS * 8 * grid ** 3
    local = (grid // pgrid[0]) * (grid // pgrid[1]) * (grid // pgrid[2])
    per_rank = [S3D_ARRAYS * 8 * local] * np_
    names = [f"s3d-checkpoint-{i}.nc" for i in range(1, S3D_FILES + 1)]
    phases, files = [], []
    for i, name in enumerate(names):
        phases.append(_ordered({
            "id": i + 1, "file": i, "operation": "write", "routine": "MPI_File_write_all",
            "collective": True, "np": np_, "ranks": format_ranks(range(np_)),
            **_sizes(per_rank, 1), "access_mode": "strided",
            "offsets": {"first": None, "per_rank": None, "stride": None, "contiguous": None},
            "logical_time": dict(_NO_LOGICAL), **_NO_TIMES}))
        w = phases[-1]["weight"]
        files.append({"id": i, "name": name, "paths": [name], "access_type": "shared", "np": np_,
                      "access_mode": "strided", "role": "output", "iof_size": w, "inf_size": 0,
                      "size": w, "extent": None})
    px, py, pz = pgrid
    inferred = [
        f"sizes in bytes from Table VIII's note, not printed in the table: each checkpoint file "
        f"holds {S3D_ARRAYS} double 3-D arrays of the {grid}^3 grid ({per_file} B = "
        f"{_mib(per_file)}), split evenly on the {px}x{py}x{pz} process grid of Table IX "
        f"({per_rank[0]} B = {_mib(per_rank[0])} per process)",
        "one MPI-IO operation per process and file (iop 1): Table VIII's rs is all of a "
        "process's data in the file, with rep 1",
        "file names are placeholders (the paper does not name the five checkpoint files), "
        "written in this order",
    ]
    return validate({
        "format": "iomodel-model", "version": 1,
        "application": {"name": f"S3D-IO {grid}x{grid}x{grid}", "command": [], "np": np_,
                        "hosts": {}, "run_time_s": None, "io_time_s": None,
                        "features": _features(individual_pointers=True, blocking=True,
                                              collective=True)},
        "source": {"kind": "paper", "path": "shared/reference/paper-tables.json",
                   "unavailable": list(_UNAVAILABLE) + [
                       "file offsets and extents (the netCDF header and variable layout), and "
                       "the header's own writes",
                       "the checkpoint files' names"],
                   "inferred": inferred},
        "analysis": {"max_comm_gap": None, "max_idle_s": None,
                     "threshold_rule": "paper: the phases of Table VIII (one Write_all per "
                                       "checkpoint file, rep 1)"},
        "files": files, "phases": phases, "runs": find_runs(phases),
        "order": [[i, i + 1] for i in range(1, S3D_FILES)],
        "weight": sum(p["weight"] for p in phases),
        "storage_capacity": sum(f["size"] for f in files),
    })


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) > 1 or (argv and argv[0] in ("-h", "--help")):
        print("usage: python -m iomodel.models.paper [OUTDIR]   (default: models/examples/)",
              file=sys.stderr)
        return 2
    try:
        paths = write_examples(argv[0] if argv else EXAMPLES)
    except PaperTablesMissing as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
