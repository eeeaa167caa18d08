"""The laws a model's numbers follow over the process count np and the problem
size s (docs/commands/extrapolate.md, "Laws"): constant, power c * np^a * s^b
with small rational exponents, and affine c0 + c1 * np^a * s^b.

A law is chosen per parameter from the inputs' values: the simplest one that
fits them all exactly (integers to within rounding), else, with three or more
inputs, the one with the smallest largest relative residual (marked not exact).
"""
import math
from dataclasses import dataclass
from fractions import Fraction as F

import numpy as np

# exponents, simplest first: what real applications show (BT-IO simple's np^-1/2,
# a 3-D grid's s^3, a cube root of np for a 3-D decomposition's faces)
EXPONENTS = tuple(F(x) for x in ("1", "-1", "1/2", "-1/2", "2", "-2", "3", "-3", "1/3", "-1/3",
                                  "2/3", "-2/3", "3/2", "-3/2"))


def _complexity(a, b):
    return ((a != 0) + (b != 0), a.denominator + b.denominator, abs(a) + abs(b))


@dataclass(frozen=True)
class Law:
    kind: str                 # "constant", "power" or "affine"
    c1: float                 # the constant, or the factor of np^a * s^b
    a: F = F(0)
    b: F = F(0)
    c0: float = 0.0           # affine: the term that does not scale

    def __call__(self, np_, size=1):
        try:
            g = float(np_) ** float(self.a) * float(size) ** float(self.b)
        except OverflowError:       # past a float's range (a size of 1e-300 to the power -2)
            g = math.inf
        return self.c0 + self.c1 * g if self.kind != "constant" else self.c1

    def __str__(self):
        def num(x):
            whole = abs(x) >= 1 and abs(x - round(x)) <= 1e-6 * abs(x)
            return str(int(round(x))) if whole or x == 0 else f"{x:.9g}"
        if self.kind == "constant":
            return num(self.c1)
        term = " * ".join(([num(self.c1)] if num(self.c1) != "1" else []) + [f"{v}^{e}" if e != 1 else v
                                             for v, e in (("np", self.a), ("s", self.b)) if e != 0])
        if self.kind == "power":
            return term
        return f"{num(self.c0)} - {term[1:]}" if term.startswith("-") else f"{num(self.c0)} + {term}"


@dataclass(frozen=True)
class Fit:
    law: Law
    exact: bool
    max_residual: float       # largest |law - value| over the inputs, relative to the value
    ambiguous: bool = False   # other laws as simple fit as well and give another value at the target


def _candidates(vary_np, vary_size):
    ea = EXPONENTS if vary_np else (F(0),)
    eb = EXPONENTS if vary_size else (F(0),)
    pairs = [(a, b) for a in (F(0),) + ea for b in (F(0),) + eb if (a, b) != (0, 0)]
    return sorted(dict.fromkeys(pairs), key=lambda ab: _complexity(*ab))   # stable: np^1 before np^-1


def _residual(law, nps, sizes, ys):
    pred = np.array([law(n, s) for n, s in zip(nps, sizes)])
    err = np.abs(pred - ys)
    return err, float(np.max(err / np.maximum(np.abs(ys), 1e-300)))


def fit(nps, sizes, values, integer=True, affine=True, target=None, best=False):
    """The law of `values` (one per input, at nps[i], sizes[i]), or None when
    no law of the family fits exactly and fewer than three inputs (unless
    `best`: measured times, which no law fits exactly) cannot check a best fit.
    Laws that go negative or past a float's range at `target` (np, size) are
    not taken."""
    nps, sizes = np.asarray(nps, float), np.asarray(sizes, float)
    ys = np.asarray(values, float)
    tol = 1.0 + 1e-9 * np.abs(ys) if integer else 1e-9 * np.maximum(np.abs(ys), 1e-12)
    if np.ptp(ys) == 0:
        return Fit(Law("constant", float(ys[0])), True, 0.0)
    vary = len(set(nps.tolist())) > 1, len(set(sizes.tolist())) > 1
    points = len(set(zip(nps.tolist(), sizes.tolist())))
    tried = []
    for kind in ("power", "affine") if affine else ("power",):
        exact = []
        for a, b in _candidates(*vary):
            with np.errstate(over="ignore", invalid="ignore"):
                g = nps ** float(a) * sizes ** float(b)
            if not np.all(np.isfinite(g)) or not np.any(g):
                continue                  # past a float's range: no law of this kind here
            if kind == "power":
                c1 = float(g @ ys / (g @ g))
                law = Law("power", c1, a, b)
            else:
                if np.ptp(g) == 0:
                    continue
                try:
                    c1, c0 = np.linalg.lstsq(np.stack([g, np.ones_like(g)], 1), ys, rcond=None)[0]
                except np.linalg.LinAlgError:
                    continue
                law = Law("affine", float(c1), a, b, float(c0))
            err, rel = _residual(law, nps, sizes, ys)
            if target is not None and not 0 <= law(*target) < math.inf:
                continue                  # negative, or past a float's range, at the target
            tried.append((rel, law))
            if np.all(err <= tol):
                exact.append((law, rel, _complexity(a, b)))
        if exact:
            law, rel, cx = exact[0]
            ambiguous = target is not None and any(
                c == cx and abs(other(*target) - law(*target)) > 0.5 for other, _, c in exact[1:])
            # two points (or two sizes) fit many affine laws exactly: which exponent is right
            # they cannot tell
            ambiguous |= kind == "affine" and len(exact) > 1 and (target is None or points == 2 or any(
                abs(other(*target) - law(*target)) > 0.5 for other, _, _ in exact[1:]))
            return Fit(law, True, rel, ambiguous)
    if (points < 3 and not best) or not tried:
        return None
    rel, law = min(tried, key=lambda t: t[0])
    if best:    # measured times: a law only where it is clearly better than their mean
        flat = Law("constant", float(np.mean(ys)))
        flat_rel = _residual(flat, nps, sizes, ys)[1]
        if rel > flat_rel / 2:
            return Fit(flat, False, flat_rel)
    return Fit(law, False, rel)
