"""Which configurations of a space to measure: per storage kind, a
Plackett-Burman design over the axes along which that kind varies, each at its
lowest and highest value (as ACIC designs its IOR runs).  A run the space
excludes is replaced by the nearest configuration it has; repeated runs are
measured once.  Every kind gets at least two configurations, the fewest the
composition fits from (cluster/compose.py).
"""
import math

import numpy

from .compose import _distance
from .space import AXES, _value

__all__ = ["plackett_burman", "design"]

# Plackett and Burman's cyclic generators (1946) for N runs: N - 1 cyclic
# shifts of the generator, then a run of all lows
_GENERATORS = {4: "++-", 8: "+++-+--", 12: "++-+++---+-", 20: "++--++++-+-+----++-",
               24: "+++++-+-++--++--+-+----"}


def plackett_burman(factors):
    """The design for `factors` two-level factors: an array of N runs by
    `factors` columns of +1 (high) and -1 (low), N the smallest multiple of 4
    above `factors` that has a generator here."""
    n = next((k for k in sorted(_GENERATORS) if k > factors), None)
    if n is None:
        raise ValueError(f"{factors} factors: more than a Plackett-Burman design here has "
                         f"({max(_GENERATORS) - 1} at most)")
    gen = numpy.array([1 if c == "+" else -1 for c in _GENERATORS[n]])
    rows = [numpy.roll(gen, i) for i in range(n - 1)] + [-numpy.ones(n - 1, dtype=int)]
    return numpy.array(rows)[:, :factors]


def _level_distance(point, wanted):
    """How far a point is from the run's wanted values (log-ratio per axis)."""
    out = 0.0
    for a, v in wanted.items():
        x, y = _value(a, point.values[a]), _value(a, v)
        if isinstance(x, (int, float)) and x > 0 and y > 0:
            out += abs(math.log(x / y))
        else:
            out += x != y
    return out


def design(space):
    """The configurations to measure: [(point, why)] where why says which run
    of which kind's design it stands for."""
    out, chosen = [], set()
    kinds = {}
    for p in space.points:
        kinds.setdefault(p.kind, []).append(p)
    for kind, points in kinds.items():
        axes = [a for a in AXES if len({repr(_value(a, p.values[a])) for p in points if a in p.values}) > 1]
        levels = {a: sorted({_value(a, p.values[a]): p.values[a] for p in points}.items()) for a in axes}
        runs = plackett_burman(len(axes)) if axes else numpy.zeros((1, 0), dtype=int)
        picked = []
        for i, run in enumerate(runs):
            wanted = {a: (levels[a][-1][1] if s > 0 else levels[a][0][1]) for a, s in zip(axes, run)}
            best = min(points, key=lambda p: (_level_distance(p, wanted), p.name))
            if best.name in chosen:         # the same configuration as an earlier run
                j = next(k for k, (q, _) in enumerate(picked) if q.name == best.name)
                picked[j] = (picked[j][0], f"{picked[j][1]}; run {i + 1} too")
                continue
            chosen.add(best.name)
            exact = _level_distance(best, wanted) == 0
            levels_text = (", ".join(f"{a} {'high' if s > 0 else 'low'}" for a, s in zip(axes, run))
                           or "the kind's one configuration")
            picked.append((best, f"{kind} run {i + 1} of {len(runs)}: " + (
                levels_text if exact else f"wanted {levels_text}, which the space excludes: the nearest it has")))
        if len(picked) < 2 and len(points) > 1:
            # two configurations at least: the one farthest from the first
            first = picked[0][0]
            far = max((p for p in points if p.name not in chosen),
                      key=lambda p: (_distance(p.components, first.components), p.name))
            chosen.add(far.name)
            picked.append((far, f"{kind}: the configuration farthest from {first.name}, so that two "
                                f"are measured"))
        out.extend(picked)
    return out
