"""Composed bandwidth profiles: a configuration of a space that was not
measured gets the profile of the nearest measured one of its storage kind
(its anchor), each point's time scaled by a small performance model of the
two (docs/composition.md):

    T = c * ops + V * (g0 + g_dev / (n * d * R_dev) + g_link / (n * R_link)
                       + g_cli / (m * R_cli) + g_node * shared)

for a point where np processes each make `ops` requests of rs bytes (V = np *
ops * rs bytes in all), over n data servers (those the point's files spread
over: one per file below a stripe) of d devices each (striped, a RAID 0),
m client nodes, with device, server-link
and client-link rates R (bytes/s), `shared` 1 where the servers run on the
clients' nodes.  The weights (c, g0, g_dev, g_link, g_cli, g_node >= 0) are
fitted, per storage kind and kind of point (operation, shared or unique file,
collective or not), to the measured configurations' points by non-negative
least squares on relative error.  A composed point's bandwidth is its anchor's
times T(anchor) / T(target): the model carries only the difference between
the two configurations, the anchor's measurement the rest.
"""
import itertools
import math
from dataclasses import dataclass

import numpy
import pyarrow as pa

from .profile import Profile

__all__ = ["Composition", "fit", "compose_space", "features", "nnls", "TERMS"]

TERMS = ("requests", "bytes", "device", "link", "client_link", "shared_node")
# the component each term needs (None: always there)
_NEEDS = {"requests": None, "bytes": None, "device": "device_Bps", "link": "link_bps",
          "client_link": "client_link_bps", "shared_node": None}


def _spread(comp, unique, np_, vol, ops, rs):
    """Data servers each point's files spread over: a file below one stripe
    sits on one server; file-per-process files go one to a server; without a
    stripe size, a shared file spreads over every server."""
    stripe, servers = comp.get("stripe_size"), comp["data_servers"] or 1
    file_bytes = numpy.where(unique, ops * rs, vol)
    # without a stripe size: a shared file over every server, a process's file on one
    per_file = numpy.maximum(1, numpy.ceil(file_bytes / stripe)) if stripe else numpy.where(unique, 1, servers)
    return numpy.minimum(servers, numpy.where(unique, np_, 1) * per_file)


def features(comp, rows):
    """The model's terms (TERMS) for a table of profile points on a
    configuration: an array of (points, terms)."""
    np_ = numpy.asarray(rows["np"], dtype=float)
    rs = numpy.asarray(rows["transfer_size"], dtype=float)
    ops = numpy.asarray(rows["ops"], dtype=float)
    vol = np_ * ops * rs
    n = _spread(comp, numpy.asarray(rows["access_type"]) == "unique", np_, vol, ops, rs)
    x = numpy.zeros((len(vol), len(TERMS)))
    x[:, 0] = ops
    x[:, 1] = vol
    if comp.get("device_Bps"):
        x[:, 2] = vol / (n * (comp.get("devices") or 1) * comp["device_Bps"])
    if comp.get("link_bps"):
        x[:, 3] = vol / (n * comp["link_bps"] / 8)
    if comp.get("client_link_bps"):
        x[:, 4] = vol / ((comp.get("instances") or 1) * comp["client_link_bps"] / 8)
    if comp.get("placement") == "shared":
        x[:, 5] = vol
    return x


def nnls(a, b):
    """Non-negative least squares for a handful of unknowns: the best of the
    least-squares solutions on every subset of columns that stays >= 0
    (columns scaled to unit norm first: bytes and requests differ by 10^7)."""
    scale = numpy.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    a = a / scale
    best, cols = None, range(a.shape[1])
    for k in range(1, a.shape[1] + 1):
        for sub in itertools.combinations(cols, k):
            sol = numpy.linalg.lstsq(a[:, sub], b, rcond=None)[0]
            if (sol < 0).any():
                continue
            full = numpy.zeros(a.shape[1])
            full[list(sub)] = sol
            res = float(numpy.sum((a @ full - b) ** 2))
            # a larger subset only where it fits better: the fewest terms that explain the points
            if best is None or res < best[0] * (1 - 1e-9) - 1e-15:
                best = (res, full)
    return (best[1] if best else numpy.zeros(a.shape[1])) / scale


def _rows(profile):
    """A profile's points as columns, with ops (1 where not recorded) and the
    measured time."""
    t = profile.table
    d = {c: t.column(c).to_pylist() for c in ("operation", "access_type", "collective", "np",
                                                "transfer_size", "bandwidth_Bps", "ops_per_process")}
    d["ops"] = [o or 1 for o in d["ops_per_process"]]
    d["time"] = [p * o * r / bw for p, o, r, bw in zip(d["np"], d["ops"], d["transfer_size"],
                                                       d["bandwidth_Bps"])]
    return d


def _group_keys(d):
    return list(zip(d["operation"], d["access_type"], d["collective"]))


def _take(d, idx):
    return {k: [v[i] for i in idx] for k, v in d.items()}


@dataclass
class Composition:
    """The fitted weights of one storage kind: {group: weights}, where a group
    is (operation, access_type, collective), and the terms its measured
    configurations let it fit (a component that never varied among them
    cannot be told from the others)."""
    kind: str
    weights: dict
    varied: set
    fitted: bool = True

    def time(self, comp, d, group):
        return features(comp, d) @ self.weights[group]


def _varied(measured):
    """The components whose values differ among the measured configurations."""
    return {AXIS_OF[k] for k in AXIS_OF if len({m[0].get(k) for m in measured}) > 1}


def prior(kind, measured):
    """The components' own rates, unfitted, for a kind measured once: every
    rate term weighs 1 (the data crosses each at its rate), nothing else."""
    d = _rows(measured[0][1])
    w = numpy.zeros(len(TERMS))
    w[[TERMS.index(t) for t in ("device", "link", "client_link")]] = 1.0
    return Composition(kind, {g: w for g in set(_group_keys(d))}, set(), fitted=False)


def fit(kind, measured):
    """Weights for one kind from its measured configurations: a list of
    (components, Profile)."""
    by_group = {}
    for comp, prof in measured:
        d = _rows(prof)
        for g in set(_group_keys(d)):
            idx = [i for i, k in enumerate(_group_keys(d)) if k == g]
            by_group.setdefault(g, []).append((comp, _take(d, idx)))
    weights = {}
    for g, parts in by_group.items():
        if len(parts) < 2:
            continue                        # one configuration: nothing to tell them apart by
        x = numpy.vstack([features(c, d) for c, d in parts])
        t = numpy.concatenate([numpy.asarray(d["time"], dtype=float) for _, d in parts])
        used = [j for j, term in enumerate(TERMS) if x[:, j].any()]
        w = numpy.zeros(len(TERMS))
        w[used] = nnls(x[:, used] / t[:, None], numpy.ones(len(t)))
        weights[g] = w
    return Composition(kind, weights, _varied(measured))


def _distance(a, b):
    """How far two configurations are apart: log-ratios of their rates and
    counts, 1 for another placement."""
    out = 0.0
    for k in ("data_servers", "devices", "device_Bps", "link_bps", "client_link_bps", "stripe_size", "instances"):
        if a.get(k) and b.get(k):
            out += abs(math.log(a[k] / b[k]))
        elif bool(a.get(k)) != bool(b.get(k)):
            out += 10.0
    return out + (a.get("placement") != b.get("placement"))


# a component as the space file names it (its axis)
AXIS_OF = {"data_servers": "data_servers", "devices": "devices", "device_Bps": "device", "link_bps": "link",
           "client_link_bps": "client_link", "stripe_size": "stripe_size", "placement": "placement",
           "instances": "instances"}


class Unsupported(ValueError):
    """A configuration differs from its anchor in components no two measured
    configurations of its kind tell apart (`axes`: their axis names)."""

    def __init__(self, kind, axes):
        self.kind, self.axes = kind, axes
        super().__init__(f"it differs from its anchor in {', '.join(axes)}, which no two measured "
                         f"configurations of kind {kind} tell apart")


def differing(a, b):
    """The axes along which two configurations differ."""
    return [AXIS_OF[k] for k in AXIS_OF if a.get(k) != b.get(k)]


def compose(target, anchor, anchor_profile, composition):
    """The anchor's profile scaled to the target configuration; points of a
    kind the fit has no weights for are left out.  Returns (Profile, notes)."""
    unseen = [a for a in differing(target, anchor) if a not in composition.varied]
    if not composition.fitted:      # the rates' own terms: they carry whatever differs
        unseen = [a for a in unseen if a == "placement"]
    if unseen:
        raise Unsupported(composition.kind, unseen)
    d = _rows(anchor_profile)
    keys = _group_keys(d)
    ratio = numpy.full(len(keys), numpy.nan)
    for g in set(keys):
        if g not in composition.weights:
            continue
        idx = [i for i, k in enumerate(keys) if k == g]
        sub = _take(d, idx)
        ta, tt = composition.time(anchor, sub, g), composition.time(target, sub, g)
        ok = ta > 0
        ratio[numpy.asarray(idx)[ok]] = tt[ok] / ta[ok]
    keep = numpy.flatnonzero(numpy.isfinite(ratio) & (ratio > 0))
    t = anchor_profile.table.take(pa.array(keep))
    r = ratio[keep]
    bw = numpy.asarray(t.column("bandwidth_Bps").to_pylist(), dtype=float) / r
    time_s = [None if v is None else v * x for v, x in zip(t.column("time_s").to_pylist(), r)]
    passes = [None if ps is None else [None if b is None else b / x for b in ps]
              for ps, x in zip(t.column("pass_bandwidths_Bps").to_pylist(), r)]
    t = (t.set_column(t.schema.get_field_index("bandwidth_Bps"), "bandwidth_Bps", pa.array(bw))
          .set_column(t.schema.get_field_index("time_s"), "time_s", pa.array(time_s, pa.float64()))
          .set_column(t.schema.get_field_index("source"), "source", pa.array(["composed"] * len(keep)))
          .set_column(t.schema.get_field_index("pass_bandwidths_Bps"), "pass_bandwidths_Bps",
                      pa.array(passes, pa.list_(pa.float64()))))
    notes = []
    if len(keep) < len(ratio):
        notes.append(f"{len(ratio) - len(keep)} of the anchor's {len(ratio)} points left out: "
                     f"no other measured configuration has points of their kind")
    return Profile(t), notes


def nearest(target, candidates):
    """The candidate (name, components, profile) nearest the target."""
    return min(candidates, key=lambda c: (_distance(target, c[1]), c[0]))


def _errors(measured_profile, composed_profile):
    """Relative errors of composed against measured bandwidths, point by point."""
    key = ("operation", "access_type", "collective", "np", "transfer_size", "ops_per_process", "piece",
           "buffer_offset", "file_cap", "think_s", "random", "api", "block_transfers")
    meas = {tuple(r[k] for k in key): r["bandwidth_Bps"] for r in measured_profile.table.to_pylist()}
    out = []
    for r in composed_profile.table.to_pylist():
        m = meas.get(tuple(r[k] for k in key))
        if m:
            out.append(r["bandwidth_Bps"] / m - 1)
    return out


def leave_one_out(kind, measured):
    """The composition's own error on its measured configurations: each in turn
    left out of the fit and composed from the nearest of the others.
    measured: [(name, components, Profile)].  Returns {name: [errors]} of those
    that could be composed so (a configuration alone in some component cannot);
    empty when fewer than three configurations were measured."""
    out = {}
    if len(measured) < 3:
        return out
    for i, (name, comp, prof) in enumerate(measured):
        others = measured[:i] + measured[i + 1:]
        comp_fit = fit(kind, [(c, p) for _, c, p in others])
        aname, acomp, aprof = nearest(comp, others)
        try:
            composed, _ = compose(comp, acomp, aprof, comp_fit)
        except Unsupported:
            continue
        out[name] = _errors(prof, composed)
    return out


def _trust(loo, measured):
    """What the leave-one-out check says of a kind: how many of its measured
    configurations it checked, and their points' median and worst errors."""
    errs = [abs(e) for v in loo.values() for e in v]
    out = {"loo_measured": len(measured), "loo_checked": len(loo), "loo_points": len(errs)}
    if errs:
        out.update(loo_median_error=float(numpy.median(errs)), loo_max_error=float(max(errs)))
    elif len(measured) < 3:
        out["loo"] = f"not checked: {len(measured)} measured of its kind, 3 needed to leave one out"
    else:
        out["loo"] = (f"not checked: none of its {len(measured)} measured configurations can be composed "
                      f"from the others (each alone in some component)")
    return out


def compose_space(space, measured_profiles):
    """Profiles for every point of a space: measured ones as they are, the others
    composed.  measured_profiles: {point name: Profile}.  Returns
    {point name: (Profile or None, provenance dict)}, where provenance says
    measured or composed, the anchor, what differs, the fit's own error when a
    measured configuration is left out, or why there is no profile."""
    out, by_kind = {}, {}
    for p in space.points:
        if p.name in measured_profiles:
            by_kind.setdefault(p.kind, []).append((p.name, p.components, measured_profiles[p.name]))
    fits = {k: fit(k, [(c, pr) for _, c, pr in m]) if len(m) > 1 else prior(k, [(c, pr) for _, c, pr in m])
            for k, m in by_kind.items()}
    trust = {k: _trust(leave_one_out(k, m), m) for k, m in by_kind.items()}
    for p in space.points:
        if p.name in measured_profiles:
            out[p.name] = (measured_profiles[p.name], {"profile": "measured"})
            continue
        meas = by_kind.get(p.kind, [])
        if not meas:
            out[p.name] = (None, {"profile": "none", "reason": f"no configuration of kind {p.kind} is measured "
                                  f"(characterize --space {space.path} --design names which to measure)"})
            continue
        aname, acomp, aprof = nearest(p.components, meas)
        try:
            prof, notes = compose(p.components, acomp, aprof, fits[p.kind])
        except Unsupported as e:
            out[p.name] = (None, {"profile": "none", "reason": (
                f"{e}; measure one {p.kind} configuration of another {' and '.join(e.axes)} than "
                f"{aname}'s, this one for instance (characterize --space {space.path} --point {p.name})")})
            continue
        if not fits[p.kind].fitted:
            notes.append(f"kind {p.kind} was measured once: composed from the components' own rates, "
                         f"nothing fitted")
        out[p.name] = (prof, {"profile": "composed", "anchor": aname, "fitted": fits[p.kind].fitted,
                              "differs_in": differing(p.components, acomp), "notes": notes, **trust[p.kind]})
    return out
