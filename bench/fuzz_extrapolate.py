"""Inputs of `iomodel extrapolate`: a set of two or three real models of one
application, one of them damaged (fuzzing.mutate_model), and a random target:
--np from 2 to 2^24, with or without --size and the inputs' sizes, --grid
and theirs, given right or wrong.

A set is a JSON file: {"models": [paths], "sizes": [numbers] or null,
"grids": ["PxQxR"] or null, "size_arg": K or null}.
"""
import json
from pathlib import Path

import fuzzing

# options whose value a refusal may name instead of a file: the target's
OPTIONS = ["--np", "--size", "--sizes", "--size-arg", "--grid", "--grids", "--grid-args"]


def _np(rnd):
    return rnd.choice((2, 3, 4, 1 << 24, (1 << 24) - 1, 1 << 12, int(2 ** rnd.uniform(1, 24))))


def _grid(rnd, np_, axes):
    """A grid of np_ processes on `axes` axes (its factors by chance), or a wrong one."""
    if rnd.random() < 0.2:
        return rnd.choice(("0x4", "1x1x1x1", f"{np_}", "2x", "axb", f"{1 << 24}x2", "-2x-2", "1.5x2"))
    dims, left = [1] * axes, np_
    p = 2
    while left > 1 and p * p <= left:
        while left % p == 0:
            dims[rnd.randrange(axes)] *= p
            left //= p
        p += 1
    if left > 1:
        dims[rnd.randrange(axes)] *= left
    return "x".join(map(str, dims))


def _size(rnd, sizes):
    if rnd.random() < 0.25:
        return rnd.choice(("0", "-1", "1e308", "nan", "inf", "1e-300", "-0", "2.5", "1e20"))
    return repr(rnd.choice(sizes) * rnd.choice((1, 2, 4, 8, 0.5, 1000, 2 ** 20)))


def mutate_extrapolate(set_file, work, rnd):
    """(argv of `iomodel extrapolate`, the files and options a refusal may name)."""
    s = json.loads(Path(set_file).read_text())
    models = [Path(m) for m in s["models"]]
    hit = rnd.randrange(len(models))
    damaged = Path(work) / f"damaged-{hit}.json"
    damaged.write_bytes(fuzzing.mutate_model(models[hit].read_text(), rnd))
    models[hit] = damaged
    np_ = _np(rnd)
    argv = ["extrapolate", *models, "--np", str(np_), "-q", "-o", Path(work) / "extrapolated.json"]
    sizes = s.get("sizes")
    if sizes and rnd.random() < 0.7:
        argv += ["--size", _size(rnd, sizes)]
        r = rnd.random()
        if r < 0.6 or not s.get("size_arg"):
            given = list(sizes)
            if rnd.random() < 0.2:          # wrong: one too few, not a number, not positive
                given = rnd.choice((given[:-1], given + [1], ["x"] * len(given), [0] * len(given),
                                    [-g for g in given]))
            argv += ["--sizes", ",".join(map(str, given))]
        else:
            argv += ["--size-arg", str(rnd.choice((s["size_arg"], s["size_arg"], 0, 99, -1)))]
    grids = s.get("grids")
    if grids and rnd.random() < 0.6:
        axes = len(grids[0].split("x"))
        argv += ["--grid", _grid(rnd, np_, axes)]
        given = list(grids)
        if rnd.random() < 0.2:
            given = rnd.choice((given[:-1], ["1x1"] * len(given), [g + "x1" for g in given]))
        argv += ["--grids", ",".join(given)]
    return argv, [*map(str, models), *OPTIONS]


def write_sets(work, sets):
    """Each set {name: dict} as work/NAME.set.json; their paths."""
    out = []
    for name, s in sets.items():
        p = Path(work) / f"{name}.set.json"
        p.write_text(json.dumps({**s, "models": [str(m) for m in s["models"]]}))
        out.append(p)
    return out
