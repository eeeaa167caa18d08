"""Virtual cluster (VC) descriptions: the components of Table I of the method paper.

A VC is a YAML file (format `iomodel-cluster`, version 1, documented in
docs/cluster-format.md): the instance type and count with their prices, the I/O
servers, the temporal and persistent storage, the network class, the file
systems, the I/O libraries, how to run there (`run:`) and, once measured, its
bandwidth profile.  `load_cluster` reads and validates one; a malformed file
gives one ClusterError naming the file and the field, e.g.
`vc3.yaml: instance.cores: expected an integer >= 1, got 0`.

The paper's four VCs (Table IV, prices of Table III) and this machine ship in
cluster/shipped/: `shipped_clusters()`, `find_cluster("vc3")`.
"""
import datetime
import difflib
import math
import os
import re
import reprlib
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import yaml

FORMAT = "iomodel-cluster"
VERSION = 1
CLUSTERS_DIR = Path(__file__).resolve().parent / "shipped"

# how processes are started: Open MPI's or MPICH's (Hydra) mpirun/mpiexec, by their
# plain names or Debian's per-MPI ones, or Slurm's srun
LAUNCHERS = ("mpirun", "mpiexec", "srun", "mpirun.openmpi", "mpiexec.openmpi", "mpirun.mpich",
             "mpiexec.mpich", "mpiexec.hydra")
MPIS = ("openmpi", "mpich")
BILLINGS = ("hour", "second")
NETWORK_CLASSES = ("Low", "Moderate", "High", "Unknown")
OPERATIONS = ("write", "read", "reread")
ACCESS_TYPES = ("shared", "unique")
MiB = 1 << 20
GiB = 1 << 30
GB = 10 ** 9
MAX_COUNT = 2 ** 31 - 1     # processes, cores, instances, servers: an MPI int
MAX_SIZE = 2 ** 62          # bytes: what a 64-bit offset and the profile's int64 columns hold

# Binary units throughout (the paper's MB is MiB): K, KB, KiB are all 2^10.
_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
# A measured network figure: "10 Gbit/s", "25 Gigabit", "1000 Mb/s", "10Gbps".
# Bits only: "GB/s" and "Gbps" differ eightfold, so a B is not taken for a b.
_NET_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*((?i:[kmgt]))(?:bit/s|bits/s|b/s|bps|igabit|egabit|bit)\s*$")
_NET_UNITS = {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


class ClusterError(ValueError):
    """A cluster description that cannot be read or does not follow the format."""


class _FieldError(Exception):
    """Internal: a field's problem, before the file name is added."""

    def __init__(self, where, msg):
        super().__init__(f"{where}: {msg}" if where else msg)


@dataclass
class Cluster:
    """One virtual cluster, with the prices of one region."""
    path: Path
    name: str
    description: str
    instance_type: str
    cores_per_instance: int
    memory_gib: float
    instances: int
    region: str
    price_per_hour: float            # $ per instance-hour in `region`
    price_date: str
    billing: str                     # "hour" | "second"
    data_servers: int
    metadata_servers: int
    temporal_device: object          # str or None
    temporal_gb: object              # float (GB of 10^9 bytes) or None: unknown
    persistent_device: object        # str or None
    persistent_gb: object            # float (GB of 10^9 bytes) or None
    persistent_usd_per_gb_month: float
    network: str                     # Low | Moderate | High | Unknown | a measured figure
    local_fs: object                 # str or None
    global_fs: object                # str or None: no global file system
    stripe_size: object              # int bytes or None
    io_library: list
    launcher: str                    # one of LAUNCHERS
    launcher_options: list
    hostfile: object                 # Path or None
    workdir: str
    ior: object                      # str or None: ior on PATH
    defeat_page_cache: bool
    profile_path: object             # Path or None
    bandwidth_points: list           # dicts: operation, np, rs, bw_Bps, access_type, collective
    network_bps: object = None       # bits/s when `network` is a measured figure, else None
    fresh_files: bool = True         # repetitions write into new files (builtin --iomodel.fresh)
    trusted: bool = False            # the user trusts its launcher options (replay/trust.py)
    mpi: object = None               # "openmpi" | "mpich": the replayer build; None: the launcher's
    prices: list = field(default_factory=list, repr=False)             # [(region, $/h, date)]
    persistent_prices: list = field(default_factory=list, repr=False)  # [(region, $/GB-month)]

    @property
    def oversubscribe(self):
        """The launcher runs more processes than cores (mpirun --oversubscribe, srun -O;
        MPICH's Hydra always does)."""
        opts = list(self.launcher_options or [])
        hydra = self.mpi == "mpich" and self.launcher != "srun"
        return hydra or "--oversubscribe" in opts or "-O" in opts or "--overcommit" in opts

    @property
    def where(self):
        """How messages name it: its file, or a shipped cluster's name."""
        shipped = self.path is not None and Path(self.path).resolve().parent == CLUSTERS_DIR
        return self.name if shipped or self.path is None else str(self.path)

    @property
    def cores_total(self):
        return self.cores_per_instance * self.instances

    @property
    def temporal_bytes(self):
        """Temporal storage capacity in bytes (capacity_gb is GB of 10^9 bytes), or None if unknown."""
        return None if self.temporal_gb is None else int(self.temporal_gb * GB)

    @property
    def persistent_bytes(self):
        return None if self.persistent_gb is None else int(self.persistent_gb * GB)

    @property
    def persistent_usd_per_month(self):
        """The fixed cost (cost_fix) of the persistent storage for a month, in `region`."""
        return (self.persistent_gb or 0.0) * self.persistent_usd_per_gb_month

    def regions(self):
        """The region names of the instance price list, the default first."""
        return [r for r, _, _ in self.prices]

    def billed_hours(self, seconds):
        """Instance-hours billed for one instance used `seconds` (rounded up per `billing`)."""
        if seconds <= 0:
            return 0.0
        if self.billing == "hour":
            return float(math.ceil(seconds / 3600 - 1e-9))
        return math.ceil(seconds - 1e-9) / 3600


# ---------------------------------------------------------------- YAML reading

class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """SafeLoader that refuses duplicate keys (PyYAML would keep the last silently);
    libyaml's parser where PyYAML has it (ten times faster than the pure-Python one)."""


def _construct_mapping(loader, node, deep=False):
    loader.flatten_mapping(node)
    out = {}
    for knode, vnode in node.value:
        key = loader.construct_object(knode, deep=deep)
        try:
            hash(key)
        except TypeError:       # a mapping or list as a key ("{a: 1}: 2"): no field is named so
            raise yaml.constructor.ConstructorError(
                None, None, f"a key that is a {type(key).__name__}, not a name", knode.start_mark) from None
        if key in out:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", knode.start_mark)
        out[key] = loader.construct_object(vnode, deep=deep)
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


# A cluster description has a few hundred values; aliases may repeat some, not
# multiply them by the billion (the "billion laughs" of 1.9 KB)
MAX_YAML_VALUES = 100_000


def _expanded_size(node):
    """How many values the document holds once its aliases are expanded,
    counted on the composed nodes (an alias is the same node object), each node's
    size computed once, stopping as soon as it passes the limit."""
    size = {}
    stack = [(node, False)]
    while stack:
        n, done = stack.pop()
        if id(n) in size:
            continue
        if isinstance(n, yaml.ScalarNode):
            size[id(n)] = 1
            continue
        kids = [x for pair in n.value for x in pair] if isinstance(n, yaml.MappingNode) else n.value
        if not done:
            stack.append((n, True))
            stack.extend((k, False) for k in kids if id(k) not in size)
            continue
        size[id(n)] = min(1 + sum(size.get(id(k), 1) for k in kids), MAX_YAML_VALUES + 1)
    return size[id(node)]


def read_yaml(path, what="cluster description", error=None):
    """A YAML document of `what`, safely: no duplicate keys, no alias bomb;
    `error` (default ClusterError) carries one line naming the file."""
    error = error or ClusterError
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise error(f"{path}: not YAML: not a text file") from None
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            n = _expanded_size(node)
            if n > MAX_YAML_VALUES:
                raise error(f"{path}: not a {what}: its aliases expand it to more "
                                   f"than {MAX_YAML_VALUES} values (a YAML alias bomb?)")
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except RecursionError:
        raise error(f"{path}: not a {what}: nested too deeply") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise error(f"{path}: not YAML: {problem}{where}") from None


# ---------------------------------------------------------------- field checks

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict, _REPR.maxstring, _REPR.maxother = 3, 4, 4, 60, 60


def _show(v):
    """A value as an error message shows it: short, however large it is."""
    if isinstance(v, str):
        return _REPR.repr(v)
    if isinstance(v, (dict, list)):
        s = _REPR.repr(v)
        return s if len(s) <= 60 else s[:57] + "..."
    if _is_int(v) and abs(v) >= 10 ** 20:
        return f"an integer of {len(str(abs(v)))} digits"
    return "null" if v is None else str(v).lower() if isinstance(v, bool) else str(v)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


class _Obj:
    """A mapping being validated: get fields by name, report unknown ones."""

    def __init__(self, value, where):
        if not isinstance(value, dict):
            raise _FieldError(where, f"expected a mapping, got {_show(value)}")
        self.d, self.where = value, where

    def at(self, key):
        return f"{self.where}.{key}" if self.where else key

    def has(self, key):
        return key in self.d

    def sub(self, key, required=True):
        """A nested mapping; missing or null (when not required) -> an empty one."""
        v = self.raw(key, required, None)
        return _Obj({} if v is None and not required else v, self.at(key))

    def raw(self, key, required=True, default=None):
        if key not in self.d:
            if required:
                raise _FieldError(self.at(key), "missing")
            return default
        return self.d[key]

    def check_keys(self, allowed):
        for k in self.d:
            if k not in allowed:
                near = difflib.get_close_matches(str(k), allowed, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else \
                    f" (known: {', '.join(allowed)})"
                raise _FieldError(self.at(str(k)), f"unknown field{hint}")

    def str(self, key, required=True, default=None, nullable=False, choices=None):
        if key not in self.d and not required:
            return default
        v = self.raw(key, required, default)
        if v is None and nullable:
            return None
        if not isinstance(v, str) or not v.strip():
            raise _FieldError(self.at(key), f"expected a non-empty string, got {_show(v)}")
        v = v.strip()
        if choices is not None:
            match = [c for c in choices if c.lower() == v.lower()]
            if not match:
                raise _FieldError(self.at(key), f"expected one of {' | '.join(choices)}, got {_show(v)}")
            v = match[0]
        return v

    def int(self, key, lo, required=True, default=None, hi=MAX_COUNT):
        if key not in self.d and not required:
            return default
        v = self.raw(key, required, default)
        if not _is_int(v) or v < lo:
            raise _FieldError(self.at(key), f"expected an integer >= {lo}, got {_show(v)}")
        if v > hi:
            raise _FieldError(self.at(key), f"expected an integer from {lo} to {hi}, got {_show(v)}")
        return v

    def num(self, key, lo=0.0, strict=False, required=True, default=None, nullable=False):
        if key not in self.d and not required:
            return default
        v = self.raw(key, required, default)
        if v is None and nullable:
            return None
        if not _is_num(v) or v < lo or (strict and v == lo):
            rel = ">" if strict else ">="
            null = " or null" if nullable else ""
            raise _FieldError(self.at(key), f"expected a number {rel} {lo:g}{null}, got {_show(v)}")
        return float(v)

    def bool(self, key, default):
        v = self.raw(key, False, default)
        if not isinstance(v, bool):
            raise _FieldError(self.at(key), f"expected true or false, got {_show(v)}")
        return v

    def list(self, key, default=()):
        v = self.raw(key, False, None)
        if v is None:
            return list(default)
        if not isinstance(v, list):
            raise _FieldError(self.at(key), f"expected a list, got {_show(v)}")
        return v


def network_bps(v):
    """Bits/s of a measured network figure: a number (Gbit/s) or a string like
    "10 Gbit/s", "25 Gigabit", "1000 Mb/s"; None for anything else."""
    bps = None
    if _is_num(v) and v > 0:
        bps = float(v) * 1e9
    m = _NET_RE.match(v) if isinstance(v, str) else None
    if m:
        bps = float(m.group(1)) * _NET_UNITS[m.group(2).lower()]
    return bps if bps is not None and math.isfinite(bps) else None     # 400 digits are no rate


def parse_size(v):
    """Bytes from an integer or a string like "64KB", "64 KiB", "4M", "1.5 GiB" (binary units)."""
    if _is_int(v) and v >= 0:
        return v
    if isinstance(v, str):
        m = _SIZE_RE.match(v)
        if m:
            n = float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]
            if math.isfinite(n) and n == int(n):
                return int(n)
    raise ValueError(f"expected a size in bytes (an integer, or a string like \"64KB\" or "
                     f"\"64 KiB\", binary units), got {_show(v)}")


def _size(obj, key, lo=1, nullable=False, required=True):
    v = obj.raw(key, required, None)
    if v is None and (nullable or not required):
        return None
    try:
        n = parse_size(v)
    except ValueError as e:
        raise _FieldError(obj.at(key), str(e)) from None
    if n < lo:
        raise _FieldError(obj.at(key), f"expected a size >= {lo} bytes, got {_show(v)}")
    if n > MAX_SIZE:
        raise _FieldError(obj.at(key), f"expected a size from {lo} to {MAX_SIZE} bytes, got {_show(v)}")
    return n


def _date(obj, key):
    v = obj.raw(key, False, "")
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    if _is_int(v):          # date: 2014 (a year)
        return str(v)
    if not isinstance(v, str):
        raise _FieldError(obj.at(key), f"expected a date string like \"2014-06\", got {_show(v)}")
    return v.strip()


def _region_index(names, region):
    """Index of `region` in `names`: exact, else a unique case-insensitive match of the whole
    name, its code ("us-east-1") or its place ("Virginia")."""
    if region in names:
        return names.index(region)
    want = region.strip().lower()

    def forms(n):
        m = re.match(r"^\s*(.*?)\s*\((.*)\)\s*$", n)
        return {n.strip().lower()} | ({m.group(1).lower(), m.group(2).lower()} if m else set())

    hits = [i for i, n in enumerate(names) if want in forms(n)]
    return hits[0] if len(hits) == 1 else None


def _resolve(base, p):
    p = Path(os.path.expanduser(p))
    return p if p.is_absolute() else (base / p)


# ---------------------------------------------------------------- the loader

_TOP = ["format", "version", "name", "description", "instance", "instances", "billing",
        "io_servers", "storage", "network", "filesystem", "io_library", "run", "profile",
        "bandwidth"]


def _parse(doc, path, region):
    base = path.parent
    top = _Obj(doc, "") if isinstance(doc, dict) else None
    if top is None:
        raise _FieldError("", f"expected a mapping with format: {FORMAT}, got {_show(doc)}")
    fmt = top.raw("format")
    if fmt != FORMAT:
        hint = " (a space of configurations: give it with compare --space)" if fmt == "iomodel-space" else ""
        raise _FieldError("format", f"expected {FORMAT!r}, got {_show(fmt)}{hint}")
    ver = top.raw("version")
    if ver != VERSION:
        raise _FieldError("version", f"expected {VERSION} (the only version this iomodel reads), "
                                     f"got {_show(ver)}")
    top.check_keys(_TOP)
    name = top.str("name")
    description = top.str("description", required=False, default="", nullable=True) or ""

    # instance: Table I "instance type" (*)
    inst = _Obj(top.raw("instance"), "instance")
    inst.check_keys(["type", "cores", "memory_gib", "prices"])
    itype = inst.str("type")
    cores = inst.int("cores", 1)
    memory = inst.num("memory_gib", 0.0, strict=True)
    plist = inst.raw("prices")
    if not isinstance(plist, list) or not plist:
        raise _FieldError("instance.prices", f"expected a non-empty list of "
                          f"{{region, usd_per_hour, date}}, got {_show(plist)}")
    prices = []
    for i, p in enumerate(plist):
        po = _Obj(p, f"instance.prices[{i}]")
        po.check_keys(["region", "usd_per_hour", "date"])
        r = po.str("region")
        if r in [x[0] for x in prices]:
            raise _FieldError(po.at("region"), f"region {r!r} listed twice")
        prices.append((r, po.num("usd_per_hour", 0.0), _date(po, "date")))
    names = [r for r, _, _ in prices]
    if region is None:
        ri = 0
    else:
        ri = _region_index(names, str(region))
        if ri is None:
            raise _FieldError("instance.prices", f"no price for region {str(region)!r} "
                              f"(known: {', '.join(names)})")
    region_name, price, date = prices[ri]

    instances = top.int("instances", 1)
    billing = top.str("billing", required=False, default="hour", choices=BILLINGS)

    # Number of I/O nodes (-)
    ios = top.sub("io_servers", required=False)
    ios.check_keys(["data", "metadata"])
    data_servers = ios.int("data", 0, required=False, default=1)
    meta_servers = ios.int("metadata", 0, required=False, default=1)

    # Storage type, device types, capacities (+/-)
    st = top.sub("storage", required=False)
    st.check_keys(["temporal", "persistent"])
    t_dev = t_gb = p_dev = p_gb = None
    p_usd = 0.0
    p_prices = []
    if st.raw("temporal", False) is not None:
        t = _Obj(st.raw("temporal"), "storage.temporal")
        t.check_keys(["device", "capacity_gb"])
        t_dev = t.str("device")
        t_gb = t.num("capacity_gb", 0.0, required=False, nullable=True)
    if st.raw("persistent", False) is not None:
        p = _Obj(st.raw("persistent"), "storage.persistent")
        p.check_keys(["device", "capacity_gb", "prices"])
        p_dev = p.str("device")
        p_gb = p.num("capacity_gb", 0.0, required=False, nullable=True)
        pl = p.list("prices")
        for i, q in enumerate(pl):
            qo = _Obj(q, f"storage.persistent.prices[{i}]")
            qo.check_keys(["region", "usd_per_gb_month"])
            r = qo.str("region")
            if r in [x[0] for x in p_prices]:
                raise _FieldError(qo.at("region"), f"region {r!r} listed twice")
            p_prices.append((r, qo.num("usd_per_gb_month", 0.0)))
        if p_prices:
            pn = [r for r, _ in p_prices]
            j = pn.index(region_name) if region_name in pn else _region_index(pn, region_name)
            if j is None:
                raise _FieldError("storage.persistent.prices",
                                  f"no price for region {region_name!r} (known: {', '.join(pn)}); "
                                  f"use the region names of instance.prices")
            p_usd = p_prices[j][1]

    # Network performance (+)
    net = top.raw("network", False, "Unknown")
    net_bps = network_bps(net)
    if net_bps is not None:
        net = f"{net:g} Gbit/s" if _is_num(net) else net.strip()
    elif isinstance(net, str) and net.strip():
        cls = [c for c in NETWORK_CLASSES if c.lower() == net.strip().lower()]
        net = cls[0] if cls else None
    else:
        net = None
    if net is None:
        raise _FieldError("network", f"expected one of {' | '.join(NETWORK_CLASSES)} or a measured "
                          f"figure like \"10 Gbit/s\", got {_show(top.raw('network'))}")

    # Local and global file system, stripe size (+/-)
    fs = _Obj(top.raw("filesystem"), "filesystem")
    fs.check_keys(["local", "global", "stripe_size"])
    local_fs = fs.str("local", required=False, nullable=True)
    if not fs.has("global"):
        raise _FieldError("filesystem.global", "missing (null: no global file system)")
    global_fs = fs.str("global", nullable=True)
    stripe = _size(fs, "stripe_size", lo=1, nullable=True, required=False)

    # I/O library (-)
    lib = top.raw("io_library", False, [])
    if isinstance(lib, str):
        lib = [x.strip() for x in lib.split(",") if x.strip()]
    if lib is None:
        lib = []
    if not isinstance(lib, list) or not all(isinstance(x, str) and x.strip() for x in lib):
        raise _FieldError("io_library", f"expected a list of strings, got {_show(lib)}")
    lib = [x.strip() for x in lib]

    # run: how to run there
    run = top.sub("run", required=False)
    run.check_keys(["launcher", "mpi", "launcher_options", "hostfile", "workdir", "ior",
                    "defeat_page_cache", "fresh_files"])
    launcher = run.str("launcher", required=False, default="mpirun", choices=LAUNCHERS)
    mpi = run.str("mpi", required=False, nullable=True, choices=MPIS)
    if mpi is None and launcher.endswith((".openmpi", ".mpich", ".hydra")):
        mpi = "openmpi" if launcher.endswith(".openmpi") else "mpich"
    lopts = run.raw("launcher_options", False, [])
    if lopts is None:
        lopts = []
    if isinstance(lopts, str):
        lopts = shlex.split(lopts)
    if not isinstance(lopts, list) or not all(isinstance(x, (str, int, float)) and
                                              not isinstance(x, bool) for x in lopts):
        raise _FieldError("run.launcher_options", f"expected a list of strings, got {_show(lopts)}")
    lopts = [str(x) for x in lopts]
    hf = run.str("hostfile", required=False, nullable=True)
    hostfile = _resolve(base, hf) if hf else None
    workdir = run.str("workdir", required=False, default="iomodel-work")
    ior = run.str("ior", required=False, nullable=True)
    if ior and (os.sep in ior or ior.startswith("~")):
        ior = str(_resolve(base, ior))
    defeat = run.bool("defeat_page_cache", False)
    fresh = run.bool("fresh_files", True)

    # measured bandwidth: a profile file and/or inline points
    prof = top.str("profile", required=False, nullable=True)
    profile_path = _resolve(base, prof) if prof else None
    points = []
    for i, b in enumerate(top.list("bandwidth")):
        bo = _Obj(b, f"bandwidth[{i}]")
        bo.check_keys(["operation", "np", "rs", "bw_MiBps", "bw_Bps", "access_type", "collective"])
        op = bo.str("operation", choices=OPERATIONS)
        np_ = bo.int("np", 1)
        rs = _size(bo, "rs", lo=1)
        if bo.has("bw_MiBps") == bo.has("bw_Bps"):
            raise _FieldError(bo.at("bw_MiBps"), "give exactly one of bw_MiBps and bw_Bps")
        if bo.has("bw_MiBps"):
            bw = bo.num("bw_MiBps", 0.0, strict=True) * MiB
        else:
            bw = bo.num("bw_Bps", 0.0, strict=True)
        at = bo.str("access_type", required=False, default="shared", choices=ACCESS_TYPES)
        coll = bo.raw("collective", False, None)
        if coll is not None and not isinstance(coll, bool):
            raise _FieldError(bo.at("collective"), f"expected true, false or null, got {_show(coll)}")
        points.append({"operation": op, "np": np_, "rs": rs, "bw_Bps": bw,
                       "access_type": at, "collective": coll})

    return Cluster(
        path=path, name=name, description=description, instance_type=itype,
        cores_per_instance=cores, memory_gib=memory, instances=instances,
        region=region_name, price_per_hour=price, price_date=date, billing=billing,
        data_servers=data_servers, metadata_servers=meta_servers,
        temporal_device=t_dev, temporal_gb=t_gb, persistent_device=p_dev, persistent_gb=p_gb,
        persistent_usd_per_gb_month=p_usd, network=net, local_fs=local_fs, global_fs=global_fs,
        stripe_size=stripe, io_library=lib, launcher=launcher, mpi=mpi, launcher_options=lopts,
        hostfile=hostfile, workdir=workdir, ior=ior, defeat_page_cache=defeat,
        fresh_files=fresh, profile_path=profile_path, bandwidth_points=points, network_bps=net_bps,
        prices=prices, persistent_prices=p_prices)


def load_cluster(path, region=None):
    """Read and validate a cluster description.

    `path`: a YAML file, or the name of a shipped cluster ("vc3").  `region`: a region of
    instance.prices (the whole name, or its code "us-east-1" or place "Virginia"); None: the
    first.  Raises ClusterError with one line naming the file and the field.
    """
    p = Path(os.path.expanduser(str(path)))
    if not p.exists():
        p = find_cluster(path)
    doc = read_yaml(p)
    try:
        return _parse(doc, p, region)
    except _FieldError as e:
        raise ClusterError(f"{p}: {e}") from None


def shipped_clusters():
    """name -> Path of the cluster descriptions shipped in cluster/shipped/."""
    return {p.stem: p for p in sorted(CLUSTERS_DIR.glob("*.yaml"), key=lambda p: p.stem)}


def find_cluster(name_or_path):
    """The Path of a cluster description: an existing file, or a shipped cluster's name."""
    s = str(name_or_path)
    p = Path(os.path.expanduser(s))
    if p.is_file():
        return p
    shipped = shipped_clusters()
    key = s[:-5] if s.endswith(".yaml") and os.sep not in s else s
    if key in shipped:
        return shipped[key]
    if p.exists():
        raise ClusterError(f"{s}: not a file")
    raise ClusterError(f"{s}: no such file, and not a shipped cluster "
                       f"(shipped: {', '.join(shipped)})")
