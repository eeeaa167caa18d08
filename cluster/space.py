"""A space of candidate cluster configurations (docs/space-format.md): storage
kinds, each a cluster description to start from and the axes along which its
configurations vary (data servers, device and link rates, stripe size,
placement, instances), the points a user excludes, what each costs, and where
the measured ones keep their profiles.  `load_space(path)` reads and validates
one; `Space.points` are its configurations, each with its components (what the
composition models: cluster/compose.py) and its cluster description.
"""
import copy
import difflib
import itertools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from .description import (ClusterError, _FieldError, _Obj, _is_int, _is_num, _parse, _show, find_cluster,
                          network_bps, parse_size, read_yaml)

__all__ = ["Space", "SpacePoint", "SpaceError", "load_space", "AXES", "parse_rate"]

FORMAT, VERSION = "iomodel-space", 1
PLACEMENTS = ("dedicated", "shared")
# The components a point is made of, and how its axis values are written.
# rate: bytes/s ("60 MiB/s", a number in MiB/s); link: bits/s ("300 Mbit/s", a
# number in Gbit/s); size: bytes ("4 MB", binary units); count: integer >= 1.
AXES = {"data_servers": "count", "devices": "count", "device": "rate", "link": "link", "client_link": "link",
        "stripe_size": "size", "placement": "placement", "instances": "count", "instance_type": "name"}
_RATE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?)b\s*/\s*s\s*$", re.IGNORECASE)
_RATE_UNITS = {"": 1, "k": 1, "m": 2, "g": 3, "t": 4}
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_SHORT = {"data_servers": "{}srv", "devices": "{}dev", "instances": "{}x"}


class SpaceError(ValueError):
    """A malformed space file: one line naming the file and the field."""


def parse_rate(v):
    """Bytes/s from a number (MiB/s) or a string like "60 MiB/s", "100 MB/s"
    (MB: 10^6, MiB: 2^20)."""
    bps = None
    if _is_num(v) and v > 0:
        bps = float(v) * (1 << 20)
    m = _RATE_RE.match(v) if isinstance(v, str) else None
    if m and float(m.group(1)) > 0:
        bps = float(m.group(1)) * (1024 if m.group(3) else 1000) ** _RATE_UNITS[m.group(2).lower()]
    if bps is not None and math.isfinite(bps):    # 400 digits are no rate
        return bps
    raise ValueError(f"expected a rate like \"60 MiB/s\" or a number of MiB/s, got {_show(v)}")


def _value(axis, v):
    """An axis value as the composition uses it (bytes/s, bits/s, bytes, ...)."""
    kind = AXES[axis]
    if kind == "count":
        if not _is_int(v) or v < 1:
            raise ValueError(f"expected an integer >= 1, got {_show(v)}")
        return v
    if kind == "rate":
        return parse_rate(v)
    if kind == "link":
        bps = network_bps(v)
        if not bps:
            raise ValueError(f"expected a link rate in bits like \"300 Mbit/s\" or an unquoted number of "
                             f"Gbit/s, got {_show(v)}")
        return bps
    if kind == "size":
        n = parse_size(v)
        if n < 1:
            raise ValueError(f"expected a size of at least 1 byte, got {_show(v)}")
        return n
    if kind == "placement":
        if v not in PLACEMENTS:
            raise ValueError(f"expected one of {' | '.join(PLACEMENTS)}, got {_show(v)}")
        return v
    if not isinstance(v, str) or not v.strip():
        raise ValueError(f"expected a non-empty string, got {_show(v)}")
    return v.strip()


def _short(axis, v):
    """A value as a point's name shows it: 300Mbit, 60MiBps, 4MiB, 2srv."""
    kind = AXES[axis]
    if kind == "link":
        bps = _value(axis, v)
        return f"{bps / 1e9:g}Gbit" if bps >= 1e9 else f"{bps / 1e6:g}Mbit"
    if kind == "rate":
        return f"{_value(axis, v) / (1 << 20):g}MiBps"
    if kind == "size":
        n = _value(axis, v)
        return next(f"{n >> s}{u}" for s, u in ((30, "GiB"), (20, "MiB"), (10, "KiB"), (0, "B"))
                    if n >= 1 << s and n % (1 << s) == 0)
    return _SHORT.get(axis, "{}").format(v)


@dataclass
class SpacePoint:
    """One configuration: its name, its storage kind, the axis values that made
    it (as written), its components (data_servers, devices, device_Bps, link_bps,
    client_link_bps, stripe_size, placement, instances) and its cluster."""
    name: str
    kind: str
    values: dict
    components: dict
    cluster: object = field(repr=False)
    start: object = None             # the commands that start and stop it, or None
    stop: object = None


@dataclass
class Space:
    path: Path
    name: str
    description: str
    points: list
    profiles_dir: Path
    measured_points: dict             # point name -> inline bandwidth points

    def point(self, name):
        for p in self.points:
            if p.name == name:
                return p
        raise KeyError(name)


def _axes(obj, key):
    """{axis: [values]} of a mapping's `axes`, each value checked."""
    out = {}
    ax = obj.sub(key, required=False)
    ax.check_keys(list(AXES))
    for a, vals in ax.d.items():
        if not isinstance(vals, list) or not vals:
            raise _FieldError(ax.at(a), f"expected a non-empty list of values, got {_show(vals)}")
        for i, v in enumerate(vals):
            try:
                _value(a, v)
            except ValueError as e:
                raise _FieldError(f"{ax.at(a)}[{i}]", str(e)) from None
        if len({repr(_value(a, v)) for v in vals}) < len(vals):
            raise _FieldError(ax.at(a), "a value listed twice")
        out[a] = vals
    return out


def _matches(values, entry):
    return all(values.get(a) is not None and _value(a, values[a]) in {_value(a, x) for x in want}
               for a, want in entry.items())


def _excludes(obj, axes):
    out = []
    for i, e in enumerate(obj.list("exclude")):
        eo = _Obj(e, f"{obj.at('exclude')}[{i}]")
        eo.check_keys(list(axes))
        entry = {}
        for a, want in eo.d.items():
            want = want if isinstance(want, list) else [want]
            for v in want:
                try:
                    _value(a, v)
                except ValueError as err:
                    raise _FieldError(eo.at(a), str(err)) from None
            entry[a] = want
        out.append(entry)
    return out


def _costs(obj, where):
    """{axis: [(value, $/h)]}: what a point pays per hour for an axis value."""
    out = {}
    co = obj.sub("costs", required=False)
    co.check_keys(list(AXES))
    for a, table in co.d.items():
        to = _Obj(table, co.at(a))
        pairs = []
        for v in to.d:
            try:
                _value(a, v)
            except ValueError as e:
                raise _FieldError(to.at(str(v)), str(e)) from None
            pairs.append((v, to.num(v, 0.0)))
        out[a] = pairs
    return out


def _components(values, base):
    """The composition's view of a point: its axis values, else the cluster's
    (its network is a server link only where the storage is reached over it)."""
    remote = base.global_fs is not None and base.global_fs.lower() != "local"
    c = {"data_servers": base.data_servers or 1, "devices": 1, "device_Bps": None,
         "link_bps": base.network_bps if remote else None,
         "client_link_bps": None, "stripe_size": base.stripe_size, "placement": "dedicated",
         "instances": base.instances}
    names = {"device": "device_Bps", "link": "link_bps", "client_link": "client_link_bps"}
    for a, v in values.items():
        if a != "instance_type":
            c[names.get(a, a)] = _value(a, v)
    return c


def _cluster_doc(doc, name, values, price):
    """The base description with the point's values put in."""
    d = copy.deepcopy(doc)
    d["name"] = name
    d["profile"], d["bandwidth"] = None, []
    if "data_servers" in values:
        d.setdefault("io_servers", {})
        d["io_servers"] = {**(d["io_servers"] or {}), "data": values["data_servers"]}
    if "link" in values:
        d["network"] = values["link"]
    if "stripe_size" in values:
        d["filesystem"] = {**d["filesystem"], "stripe_size": values["stripe_size"]}
    if "instances" in values:
        d["instances"] = values["instances"]
    if price is not None:
        first = d["instance"]["prices"][0]
        d["instance"] = {**d["instance"], "prices": [{**first, "usd_per_hour": price}]}
    return d


def _parse_space(doc, path, profiles_dir=None):
    top = _Obj(doc, "") if isinstance(doc, dict) else None
    if top is None:
        raise _FieldError("", f"expected a mapping with format: {FORMAT}, got {_show(doc)}")
    if top.raw("format") != FORMAT:
        hint = " (a cluster description: give it with --vc)" if top.raw("format") == "iomodel-cluster" else ""
        raise _FieldError("format", f"expected {FORMAT!r}, got {_show(top.raw('format'))}{hint}")
    if top.raw("version") != VERSION:
        raise _FieldError("version", f"expected {VERSION}, got {_show(top.raw('version'))}")
    top.check_keys(["format", "version", "name", "description", "axes", "kinds", "costs", "profiles",
                    "measured", "instance_types"])
    name = top.str("name")
    shared_axes = _axes(top, "axes")
    costs = _costs(top, "costs")
    types = {}
    it = top.sub("instance_types", required=False)
    for t in it.d:
        to = _Obj(it.d[t], it.at(str(t)))
        to.check_keys(["cores", "memory_gib", "usd_per_hour"])
        types[str(t)] = (to.int("cores", 1), to.num("memory_gib", 0.0, strict=True), to.num("usd_per_hour", 0.0))
    for v in shared_axes.get("instance_type", []):
        if v not in types:
            raise _FieldError("axes.instance_type", f"{v!r} is not in instance_types "
                              f"(known: {', '.join(types) or 'none'})")
    kinds = top.sub("kinds")
    if not kinds.d:
        raise _FieldError("kinds", "expected at least one storage kind")
    points, seen, excluded = [], {}, {}
    for kind in kinds.d:
        ko = _Obj(kinds.d[kind], kinds.at(str(kind)))
        ko.check_keys(["cluster", "axes", "fixed", "exclude", "costs", "start", "stop"])
        cpath = ko.str("cluster")
        try:
            rel = path.parent / cpath
            cfile = rel if rel.is_file() else find_cluster(cpath)
            cdoc = read_yaml(cfile)
            base = _parse(cdoc, cfile, None)
        except ClusterError as e:
            raise _FieldError(ko.at("cluster"), str(e)) from None
        except _FieldError as e:
            raise _FieldError(ko.at("cluster"), f"{cfile}: {e}") from None
        axes = {**shared_axes, **_axes(ko, "axes")}
        fixed = ko.sub("fixed", required=False)
        fixed.check_keys(list(AXES))
        fixed_values = {}
        for a, v in fixed.d.items():
            try:
                _value(a, v)
            except ValueError as e:
                raise _FieldError(fixed.at(a), str(e)) from None
            if a in axes:
                raise _FieldError(fixed.at(a), f"{a} is an axis of this kind too: give it one or the other")
            fixed_values[a] = v
        excludes = _excludes(ko, axes)
        own_costs = _costs(ko, ko.at("costs"))
        kind_costs = {**costs, **own_costs}
        for a, pairs in kind_costs.items():
            where = ko.at(f"costs.{a}") if a in own_costs else f"costs.{a}"
            have = axes.get(a) or ([fixed_values[a]] if a in fixed_values else None)
            if have is None:
                raise _FieldError(where, f"kind {kind} has no {a} axis or fixed value to price")
            given = {_value(a, v) for v, _ in pairs}
            stray = [v for v, _ in pairs if _value(a, v) not in {_value(a, x) for x in have}]
            if stray:
                raise _FieldError(where, f"{stray[0]!r} is not a value of kind {kind}'s {a} "
                                  f"(its values: {', '.join(map(str, have))})")
            missing = [x for x in have if _value(a, x) not in given]
            if missing:
                raise _FieldError(where, f"no cost for {missing[0]!r} (give every value of kind {kind}'s {a})")
        start = ko.str("start", required=False, nullable=True)
        stop = ko.str("stop", required=False, nullable=True)
        order = list(axes)
        for combo in itertools.product(*(axes[a] for a in order)):
            values = {**fixed_values, **dict(zip(order, combo))}
            hit = next((i for i, e in enumerate(excludes) if _matches(values, e)), None)
            if hit is not None:
                varying = [a for a in order if len(axes[a]) > 1]
                excluded["-".join([str(kind)] + [_short(a, values[a]) for a in varying])] = \
                    f"{ko.at('exclude')}[{hit}]"
                continue
            varying = [a for a in order if len(axes[a]) > 1]
            pname = "-".join([str(kind)] + [_short(a, values[a]) for a in varying])
            if not _NAME_RE.fullmatch(pname):     # it names the point's profile file
                raise _FieldError(ko.at("axes"), f"point {pname!r}: a configuration's name (its kind and "
                                  f"values) must be letters, digits, '.', '_' and '-', starting with a "
                                  f"letter or digit")
            if pname in seen:
                raise _FieldError(ko.at("axes"), f"two points named {pname!r}")
            price = None
            if "instance_type" in values:
                cores, mem, usd = types[values["instance_type"]]
                cdoc_i = {**cdoc, "instance": {**cdoc["instance"], "type": values["instance_type"],
                                               "cores": cores, "memory_gib": mem}}
                price = usd
            else:
                cdoc_i = cdoc
            extra = sum(usd for a, pairs in kind_costs.items() if a in values
                        for v, usd in pairs if _value(a, v) == _value(a, values[a]))
            if extra:
                n = values.get("instances", base.instances)
                price = (base.price_per_hour if price is None else price) + extra / n
            try:
                cl = _parse(_cluster_doc(cdoc_i, pname, values, price), cfile, None)
            except _FieldError as e:
                raise _FieldError(ko.at("axes"), f"point {pname}: {e}") from None
            fields = {**values, "name": pname, "kind": kind}
            for a, v in values.items():
                if AXES[a] in ("rate", "link"):
                    raw = _value(a, v)
                    fields[f"{a}_Bps" if AXES[a] == "rate" else f"{a}_bps"] = int(raw)
                    if AXES[a] == "link":
                        fields[f"{a}_mbit"] = int(raw // 10 ** 6)
                elif AXES[a] == "size":
                    n = _value(a, v)
                    fields[f"{a}_bytes"] = n
                    fields[f"{a}_mib"] = n >> 20 if n % (1 << 20) == 0 else n / (1 << 20)

            def fill(cmd, where, fields=fields):
                try:
                    return cmd.format(**fields) if cmd else None
                except (KeyError, IndexError, ValueError) as e:
                    raise _FieldError(where, f"cannot fill {cmd!r} for point {pname}: no value {e}") from None
            seen[pname] = True
            points.append(SpacePoint(pname, str(kind), values, _components(values, cl), cl,
                                     fill(start, ko.at("start")), fill(stop, ko.at("stop"))))
    prof = top.str("profiles", required=False, default=f"{path.stem}-profiles")
    inside = (path.parent / prof).resolve()
    if Path(prof).is_absolute() or not inside.is_relative_to(path.parent.resolve()):
        # characterize writes there: a space file may not send it elsewhere
        raise _FieldError("profiles", f"{prof!r}: must be a directory under the space file's own "
                          f"(the commands' --profiles DIR names any other)")
    measured = {}
    mo = top.sub("measured", required=False)
    for pname, pts in mo.d.items():
        if pname in excluded:
            raise _FieldError(mo.at(str(pname)), f"a configuration {excluded[pname]} excludes")
        if pname not in seen:
            near = difflib.get_close_matches(str(pname), list(seen), n=2)
            raise _FieldError(mo.at(str(pname)), "not a configuration of the space (" + (
                f"did you mean {' or '.join(map(repr, near))}?" if near else
                f"{len(seen)} of them: {', '.join(list(seen)[:6])}{', ...' if len(seen) > 6 else ''}") + ")")
        bw = {**copy.deepcopy(cdoc_min()), "bandwidth": pts}
        try:
            measured[pname] = _parse(bw, path, None).bandwidth_points
        except _FieldError as e:
            raise _FieldError(mo.at(str(pname)), str(e)) from None
    return Space(path, name, top.str("description", required=False, default="", nullable=True) or "",
                 points, Path(profiles_dir) if profiles_dir else path.parent / prof, measured)


def cdoc_min():
    """The least cluster description: to read inline bandwidth points the
    cluster description's way."""
    return {"format": "iomodel-cluster", "version": 1, "name": "x",
            "instance": {"type": "x", "cores": 1, "memory_gib": 1, "prices": [{"region": "x", "usd_per_hour": 0}]},
            "instances": 1, "filesystem": {"global": None}}


def load_space(path, profiles_dir=None):
    """Read and validate a space file; SpaceError on one line naming the file.
    profiles_dir: where the measured profiles are, in place of the file's
    `profiles`."""
    p = Path(path)
    doc = read_yaml(p, "space", error=SpaceError)
    try:
        return _parse_space(doc, p, profiles_dir)
    except _FieldError as e:
        raise SpaceError(f"{p}: {e}") from None
