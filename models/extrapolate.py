"""An application's model at a process count (and problem size) it was never
run at, from models of it at two or more others (docs/commands/extrapolate.md).

The inputs' phases are matched run by run (runs of identical phases, in the
application's order), by operation, file, routine and collectivity; every
number of a run is then given the law over np and size that its values follow
(models/laws.py) and evaluated at the target.  What no law of the family fits,
or what depends on how the processes split the grid rather than on np (a
view's pieces, the processes' first offsets), is taken from the input nearest
the target and said to be an assumption.
"""
import math
import re
from functools import reduce

from .laws import fit
from .measured_times import scaled_times
from .schema import MAX_NP, ModelError, format_ranks, parse_ranks, validate


class ExtrapolationError(ValueError):
    """The inputs cannot give the model asked for: said with the file and the place."""


# what a run must have alike in every input to be the same run
_KEY = ("operation", "routine", "collective", "interface", "metadata", "own_open", "synced")
MAX_GROUPS = 1 << 16    # rs_groups a target may need (one a process where they move a + b * rank)


def _law_record(field, f, value):
    law = f.law
    return {"field": field, "law": str(law), "kind": law.kind, "c0": law.c0, "c1": law.c1,
            "a": str(law.a), "b": str(law.b), "exact": f.exact,
            "max_residual": round(f.max_residual, 9), "value": value}


class _Job:
    """The inputs, the target, and what the extrapolation finds on the way."""

    def __init__(self, inputs, np_, size, sizes, grid=None, grids=None):
        self.paths = [str(p) for p, _ in inputs]
        self.models = [m for _, m in inputs]
        self.np = [m["application"]["np"] for m in self.models]
        self.size = list(sizes) if sizes else [1] * len(self.models)
        # process grids, the array's fastest-varying axis first (None: not given)
        self.grid, self.grids = (tuple(grid), [tuple(g) for g in grids]) if grid else (None, None)
        self.target = (np_, size if size is not None else self.size[0])
        self.laws, self.approximate, self.assumed, self.fits = [], [], [], {}
        # the input nearest the target, in log size then log np: the source of what no law gives
        # (a view's pieces follow the grid more than the process count)
        self.near = min(range(len(self.models)), key=lambda i: (
            abs(math.log(self.size[i] / self.target[1])), abs(math.log(self.np[i] / np_)), -self.np[i]))

    def law(self, field, values, integer=True, affine=True, mean=False, exact_only=False, only=None):
        """The target's value of one number, or None (then the caller assumes);
        only: the inputs to fit it on (default all)."""
        only = range(len(values)) if only is None else only
        f = fit([self.np[i] for i in only], [self.size[i] for i in only], [values[i] for i in only],
                integer=integer, affine=affine, target=self.target, best=not integer)
        self.fits[field] = f
        if f is None or (exact_only and not f.exact):
            return None
        v = f.law(*self.target)
        if integer:
            whole = math.floor(v + 1e-6) if mean else round(v)
            if abs(v - round(v)) > 1e-6 and not mean and f.exact:
                self.approximate.append(f"{field}: the law {f.law} gives {round(v, 3)} at the target, "
                                        f"not a whole number; rounded to {whole}")
            v = int(whole)
        else:
            v = round(v, 9)
        if not f.exact and integer:
            self.approximate.append(f"{field}: no law of the family fits the inputs exactly; the best, "
                                    f"{f.law}, is off by up to {f.max_residual:.1%}")
        if f.ambiguous:
            self.approximate.append(f"{field}: the inputs fit more than one law as simple as {f.law}; "
                                    "a model at one more scale would tell them apart")
        self.laws.append(_law_record(field, f, v))
        return v

    def need(self, field, values, **kw):
        """law(), where the model cannot go on without the value: no law is an ExtrapolationError."""
        v = self.law(field, values, **kw)
        if v is None:
            got = ", ".join(f"np {n}{'' if len(set(self.size)) == 1 else f' size {s:g}'}: {x}"
                            for n, s, x in zip(self.np, self.size, values))
            raise ExtrapolationError(
                f"{field}: no law of the family fits the inputs' values ({got}) exactly, and a best fit "
                "needs three inputs or more: add a model at another scale")
        return v

    def assume(self, field, value, why, at=None):
        at = self.near if at is None else at
        self.assumed.append(f"{field}: {value!r} taken from {self.paths[at]} (np {self.np[at]}), {why}")
        return value

    def notes(self, lines):
        """Lines that differ only in their run, said once: 'runs 2, 4: offsets.piece: ...'."""
        grouped = {}
        for line in lines:
            m = re.fullmatch(r"run (\d+)([.:] ?)(.*)", line, re.S)
            key = (m.group(2), m.group(3)) if m else ("", line)
            grouped.setdefault(key, []).append(m.group(1) if m else None)
        out = []
        for (sep, rest), runs in grouped.items():
            runs = [r for r in runs if r]
            head = "" if not runs else (f"run {runs[0]}" if len(runs) == 1 else f"runs {', '.join(runs)}")
            out.append(f"{head}{': ' if head else ''}{rest}")
        return out


def _check_inputs(job):
    if len(job.models) < 2:
        raise ExtrapolationError("give at least two models of the application, at different process "
                                 "counts or problem sizes")
    for path, n in zip(job.paths, job.np):
        if n == 1:
            raise ExtrapolationError(
                f"{path}: a run at np 1 cannot serve as a base: one process makes no communication "
                "between its writes (they merge into other phases) and its files count as unique; "
                "trace at np 2 or more")
    names = sorted({m["application"]["name"] for m in job.models})
    scales = list(zip(job.np, job.size))
    for i, s in enumerate(scales):
        if s in scales[:i]:
            j = scales.index(s)
            a, b = (job.models[x]["application"]["name"] for x in (j, i))
            why = (f"they are of different programs ({a}, {b}): give models of one application"
                   if a != b else "give models at different scales" +
                   ("" if len(set(job.size)) > 1 else
                    " (if they differ in problem size, give each one's with --sizes or --size-arg)"))
            raise ExtrapolationError(f"{job.paths[j]} and {job.paths[i]} are both at np {s[0]}" +
                                     (f", size {s[1]:g}" if len(set(job.size)) > 1 else "") + f": {why}")
    if len(names) > 1:
        job.approximate.append(f"the inputs name different programs ({', '.join(names)}): taken as one "
                               "application, since their phases match")
    logs = [(math.log(n), math.log(s)) for n, s in zip(job.np, job.size)]
    if len(set(job.np)) > 1 and len(set(job.size)) > 1 and all(
            abs((b[0] - logs[0][0]) * (c[1] - logs[0][1]) - (b[1] - logs[0][1]) * (c[0] - logs[0][0])) < 1e-9
            for b in logs[1:] for c in logs[1:]):
        raise ExtrapolationError(
            "the inputs change np and size together (" + ", ".join(f"np {n} size {s:g}" for n, s in
                                                               zip(job.np, job.size)) +
            "): a law cannot tell what follows np from what follows the size; add a model at another "
            "np for one of the sizes (or another size at one of the nps)")
    if len(set(job.size)) == 1 and job.target[1] != job.size[0]:
        raise ExtrapolationError(f"every input is at size {job.size[0]:g}: a law in the size needs models "
                                 "at two sizes at least")
    if len(set(job.np)) == 1 and job.target[0] != job.np[0]:
        raise ExtrapolationError(f"every input is at np {job.np[0]}: a law in np needs models at two "
                                 "process counts at least")


def _runs(model):
    return [model["phases"][a - 1:b] for a, b in model["runs"]]


def _describe(run, files):
    p = run[0]
    ids = f"phase {p['id']}" if len(run) == 1 else f"phases {p['id']} to {run[-1]['id']}"
    name = files[p["file"]]["name"] if p["file"] < len(files) else "?"
    return f"{ids} ({p['operation']} of file {p['file']} {name}, {p.get('routine') or 'routine unknown'}" + \
        (", collective" if p.get("collective") else "") + ")"


def _match(job):
    """Each input's runs, checked to be the same sequence; ExtrapolationError says where not."""
    runs = [_runs(m) for m in job.models]
    files = [m["files"] for m in job.models]
    for i in range(1, len(runs)):
        for k in range(max(len(runs[0]), len(runs[i]))):
            a = runs[0][k] if k < len(runs[0]) else None
            b = runs[i][k] if k < len(runs[i]) else None
            if a is None or b is None or _key(a) != _key(b):
                say = lambda j, r: f"{job.paths[j]} has {_describe(r, files[j]) if r else 'no more phases'}"  # noqa: E731
                raise ExtrapolationError(
                    f"the models differ in structure at run {k + 1} of identical phases: {say(0, a)}, "
                    f"{say(i, b)}; only models with the same phases in the same order can be extrapolated")
        if len(files[0]) != len(files[i]) or any(
                (f["access_type"], f["role"]) != (g["access_type"], g["role"]) for f, g in zip(files[0], files[i])):
            raise ExtrapolationError(f"the models differ in their files: {job.paths[0]} has "
                                     f"{_files_text(files[0])}, {job.paths[i]} {_files_text(files[i])}")
    return runs


def _key(run):
    return tuple(run[0].get(f) for f in _KEY) + (run[0]["file"],)


def _files_text(files):
    return "; ".join(f"file {f['id']} {f['name']} ({f['access_type']}, {f['role']})" for f in files) or "none"


def _ranks(job, where, texts, nprocs):
    """The target's ranks: 0 to np-1 where every input's are theirs, the same where they stay."""
    if all(t == format_ranks(range(n)) for t, n in zip(texts, [len(parse_ranks(t)) for t in texts])):
        return format_ranks(range(nprocs))
    if len(set(texts)) == 1 and len(parse_ranks(texts[0])) == nprocs:
        return texts[0]
    return job.assume(f"{where}.ranks", format_ranks(range(nprocs)),
                      "the first processes, since the inputs' ranks follow no rule the command knows")


def _offsets(job, where, reps, firsts, steps, rep, per_rep, same):
    """A phase's offsets; `firsts` and `steps` (between a run's phases) per input; per_rep:
    the bytes the target phase moves a repetition; same: the inputs whose repetitions are
    the target's kind (the stride is between repetitions)."""
    near = reps[job.near]["offsets"]
    offs = [p["offsets"] for p in reps]
    out = {"first": None, "per_rank": None, "stride": None, "contiguous": near["contiguous"]}
    if all(x is not None for x in firsts):
        out["first"] = job.law(f"{where}.offsets.first", firsts)
    for k in ("stride", "per_rank"):
        only = list(same) if k == "stride" else list(range(len(reps)))
        vals = [o.get(k) for o in offs]
        mine = [vals[i] for i in only]
        like = min(only, key=lambda i: (i != job.near, abs(math.log(job.np[i] / job.target[0])))) \
            if only else None             # the nearest input of the target's kind
        if k == "stride" and rep == 1:
            continue                      # no repetitions to be apart
        if k == "stride" and only and all(vals[i] is not None and vals[i] * reps[i]["rep"] == reps[i]["weight"]
                                          for i in only):
            out[k] = per_rep         # a repetition's bytes end to end, in every input
        elif only and all(v is not None for v in mine):
            # per-rank distances come from how the processes split the grid: only a power law is trusted
            v = job.law(f"{where}.offsets.{k}", vals, affine=k == "stride", exact_only=k == "per_rank",
                        only=only)
            out[k] = v if v is not None else job.assume(f"{where}.offsets.{k}", vals[like], "no law fits it",
                                                        at=like)
        elif like is not None and vals[like] is not None:
            out[k] = job.assume(f"{where}.offsets.{k}", vals[like], "the other inputs have none", at=like)
    if out["per_rank"] is None and "starts" in near:
        job.assumed.append(f"{where}.offsets.starts: the processes' first offsets are left out: they "
                           "depend on how the processes split the data")
    if "piece" in near:
        out["piece"] = _piece(job, f"{where}.offsets.piece", [o.get("piece") for o in offs])
    if "nested" in near:
        job.assumed.append(f"{where}.offsets.nested: left out (its counts depend on the split)")
    return out, (job.law(f"{where}.step", steps) if None not in steps else None)


def _first_split(grid):
    """The first axis, fastest-varying first, that a process grid splits (None: none)."""
    return next((k for k, n in enumerate(grid) if n > 1), None)


def _grid_text(grid):
    return "x".join(map(str, grid))


def _piece(job, field, vals):
    """A view's mean piece at the target.  A block decomposition's contiguous ranges run
    along the axes the grid leaves whole, fastest first, and end on the first one it
    splits (axis k, p_k processes): a piece is the bytes of those axes' points over p_k.
    So piece x p_k is the same in every input that splits axis k first (S3D-IO 32^3:
    128 B x 2 at np 2, 4 and 8; 64 B at 4x2x2), and nothing else about np tells it."""
    if job.grid is None:
        same = [i for i, n in enumerate(job.np) if n == job.target[0] and vals[i] is not None]
        if len({job.size[i] for i in same}) > 1:
            # the inputs at the target's np, over sizes: the same split of a larger grid, if
            # the target splits its processes as they do
            v = job.law(field, vals, affine=False, exact_only=True, only=same)
            if v:
                job.assumed.append(f"{field}: {v}, by the law of the inputs at np {job.target[0]}, if the "
                                   "target splits its processes as they do (--grid and --grids say how)")
                return v
        return job.assume(field, vals[job.near], "a view's pieces follow the process grid, which the "
                          "inputs do not give (--grid, and --grids or --grid-args, give it)")
    k = _first_split(job.grid)
    like = [i for i, g in enumerate(job.grids) if _first_split(g) == k and vals[i] is not None]
    spans = [v * g[k] if i in like else None for i, (v, g) in enumerate(zip(vals, job.grids))]
    # a law in the size alone: the same points split over more processes along axis k
    f = fit([1] * len(like), [job.size[i] for i in like], [spans[i] for i in like], affine=False,
            target=(1, job.target[1])) if like else None
    if f is None or not f.exact:
        why = (f"the inputs that split axis {k + 1} first give pieces x its processes ("
               + ", ".join(f"np {job.np[i]}: {spans[i]}" for i in like) + ") that follow no law in the "
               "size alone: not a block decomposition's" if like else
               f"no input's grid splits axis {k + 1} first, as the target's {_grid_text(job.grid)} does; a "
               "model of a run whose grid does would give it")
        return job.assume(field, vals[job.near], why)
    span = f.law(1, job.target[1])
    v = max(1, round(span / job.grid[k]))
    text = str(f.law) if f.law.kind == "constant" else f"({f.law})"
    job.laws.append({"field": field, "law": f"{text} / p{k + 1}", "kind": "by grid", "c0": 0.0,
                     "c1": round(span, 9), "a": "0", "b": str(f.law.b), "exact": True, "max_residual": 0,
                     "value": v})
    return v


def _split(rs, iop, unit=1):
    """rs bytes as iop requests of whole units where there are enough, the first ones a
    unit (else a byte) longer where they do not divide."""
    if rs % unit or rs // unit < iop:
        unit = 1
    q, r = divmod(rs // unit, iop)
    return [(q + (k < r)) * unit for k in range(iop)]


def _by_rank(reps):
    """(a, b) when in every input each process r moves a + b*r bytes a repetition, one request
    each (processes that own a share growing with their rank), else None."""
    lines = set()
    for p in reps:
        groups = p.get("rs_groups")
        if not groups or p["iop"] != 1 or any(len(parse_ranks(g["ranks"])) != 1 for g in groups):
            return None
        rs = {parse_ranks(g["ranks"])[0]: g["rs"] for g in groups}
        if sorted(rs) != list(range(p["np"])) or p["np"] < 2:
            return None
        b = rs[1] - rs[0]
        if b == 0 or any(rs[r] != rs[0] + b * r for r in rs):
            return None
        lines.add((rs[0], b))
    return lines.pop() if len(lines) == 1 else None


def _sizes(job, where, reps, nprocs, rep):
    """iop, request_sizes, rs (and rs_groups when the processes cannot move the same), weight,
    where every input repeats a pattern of as many requests (_same_pattern)."""
    iop = reps[0]["iop"]
    line = _by_rank(reps)
    if line and nprocs > MAX_GROUPS:
        raise ExtrapolationError(f"{where}: its processes move {line[0]} + {line[1]} * rank bytes, which at np "
                         f"{nprocs} is {nprocs} groups of processes of their own; at most {MAX_GROUPS}")
    if line:
        a, b = line
        per = [a + b * r for r in range(nprocs)]
        weight = rep * sum(per)
        job.laws.append({"field": f"{where}.rs_groups", "law": f"{a} + {b} * rank", "kind": "by rank",
                         "c0": a, "c1": b, "exact": True, "max_residual": 0, "value": sum(per)})
        return {"iop": 1, "request_sizes": [per[0]], "rs": weight // (rep * nprocs), "rs_min": per[0],
                "rs_max": per[-1], "rs_groups": [{"ranks": str(r), "rs": x, "request_sizes": [x]}
                                                 for r, x in enumerate(per)]}, weight
    weight = job.need(f"{where}.weight", [p["weight"] for p in reps])
    names = [f"{where}.request_sizes[{k}]" for k in range(iop)]
    sizes = [job.need(n, [p["request_sizes"][k] for p in reps], mean=True) for k, n in enumerate(names)]
    out = {"iop": iop, "request_sizes": sizes, "rs": sum(sizes)}
    total = nprocs * rep
    w, ss = job.fits[f"{where}.weight"], [job.fits[n] for n in names]
    if (w.ambiguous or not w.exact) and all(p["weight"] == p["np"] * p["rep"] * p["rs"] for p in reps) and \
            all(f.exact and not f.ambiguous and abs(f.law(*job.target) - round(f.law(*job.target))) < 1e-6
                for f in ss):
        # every process moved the same in every input and the request sizes' laws are certain
        # where the weight's is not (two sizes: 512 + 128 s^3 or a line): the weight follows them
        weight = total * out["rs"]
        job.laws[[x["field"] for x in job.laws].index(f"{where}.weight")]["value"] = weight
        job.approximate[:] = [x for x in job.approximate if not x.startswith(f"{where}.weight:")]
        job.approximate.append(f"{where}.weight: np x rep x the request sizes ({weight} B), whose laws "
                               "are exact, rather than its own law, which the inputs do not settle")
    if weight == total * out["rs"]:
        out["rs_min"] = out["rs_max"] = out["rs"]
        return out, weight
    # the processes cannot all move the same: as a block division with remainders in the
    # largest unit all the inputs' requests are made of (for a grid, a whole number of cells)
    unit = _unit(reps)
    if weight % rep == 0:
        unit = math.gcd(unit, weight // rep)        # an exact weight is kept: the unit divides it
        if weight // (unit * rep) < nprocs:
            unit = 1
    units = weight / (unit * rep)
    if units != int(units) or units < nprocs:
        fixed = max(nprocs, round(units)) * unit * rep
        job.approximate.append(f"{where}.weight: {weight} B is not a whole number of the inputs' "
                               f"{unit}-B units over {rep} repetitions for {nprocs} processes; taken "
                               f"as {fixed} B")
        weight, units = fixed, max(nprocs, round(units))
    q, r = divmod(int(units), nprocs)
    plural = "s" if q > 1 else ""
    out["rs"] = weight // total
    out["rs_min"], out["rs_max"] = q * unit, (q + (r > 0)) * unit
    out["rs_groups"] = [{"ranks": format_ranks(ranks), "rs": n * unit, "request_sizes": _split(n * unit, iop, unit)}
                        for ranks, n in ((range(r), q + 1), (range(r, nprocs), q)) if ranks]
    out["request_sizes"] = _split(out["rs"], iop)       # the mean process's, as the paper's tables give
    if r:
        job.approximate.append(
            f"{where}: {weight} B do not divide evenly over {nprocs} processes and {rep} repetitions; "
            f"split as a 1-D block division in units of {unit} B ({r} of the processes one unit "
            "more), the application's own split may differ")
    else:
        job.approximate.append(
            f"{where}: the laws of weight and request sizes disagree at the target ({weight} B against "
            f"{total} x {sum(sizes)} B); the weight's kept, as {q} unit{plural} of {unit} B a process")
    return out, weight


def _unit(reps):
    """The largest unit every input's requests are made of (for a grid, a whole number of cells)."""
    return reduce(math.gcd, [s for p in reps for s in p["request_sizes"]] +
                  [s for p in reps for g in p.get("rs_groups", []) for s in g["request_sizes"]])


def _operations(p):
    """A phase's operations: every process's, every repetition's."""
    groups = p.get("rs_groups") or [{"ranks": p["ranks"], "request_sizes": p["request_sizes"]}]
    return p["rep"] * sum(len(parse_ranks(g["ranks"])) * len(g["request_sizes"]) for g in groups)


def _one_size(p):
    """Every operation of the phase moves the same bytes (analyze's pattern of one request)."""
    return not p.get("rs_groups") and len(set(p["request_sizes"])) == 1


def _same_pattern(job, reps):
    """Every input repeats a pattern of as many requests, and the target's processes can all
    repeat theirs as many times: rep and the request sizes then get laws of their own."""
    if len({p["iop"] for p in reps}) > 1:
        return False
    f = fit(job.np, job.size, [p["rep"] for p in reps], target=job.target)
    return f is None or not f.exact or abs(f.law(*job.target) - round(f.law(*job.target))) < 1e-6


def _by_operations(job, where, reps, nprocs):
    """(sizes, weight, rep, same) where the inputs' patterns differ or the target's processes
    cannot all make as many requests: NAS BT-IO simple writes a row of its cells a request,
    one size repeated (iop 1, rep the rows) where the cells divide the grid, and no period
    (iop the rows, rep 1) where they do not (np 25 of a 24^3 grid: 115 or 116 rows of 160
    or 200 B).  The phase's operations and bytes, each with its law, are what every input
    has alike; at the target they give one size repeated where they divide evenly, else a
    division over the processes (same: the inputs of the target's kind)."""
    ops = job.need(f"{where}.operations", [_operations(p) for p in reps])
    weight = job.need(f"{where}.weight", [p["weight"] for p in reps])
    even = [i for i, p in enumerate(reps) if _one_size(p)]
    kinds = "; ".join(f"{job.paths[i]} (np {job.np[i]}): rep {reps[i]['rep']} of {reps[i]['iop']} request"
                      f"{'s' * (reps[i]['iop'] > 1)}{'' if i in even else ' of several sizes'}"
                      for i in range(len(reps)))
    if ops % nprocs == 0 and weight % ops == 0:
        rs = weight // ops
        if len(even) < len(reps):
            job.approximate.append(f"{where}: the inputs' patterns differ ({kinds}); their operations "
                                   f"({ops}) and bytes divide evenly at the target: {ops // nprocs} "
                                   f"requests of {rs} B a process" +
                                   ("" if even else ", as none of the inputs shows"))
        return {"iop": 1, "request_sizes": [rs], "rs": rs, "rs_min": rs, "rs_max": rs}, weight, ops // nprocs, even
    uneven = [i for i in range(len(reps)) if i not in even]
    # how often the uneven pattern repeats: only the inputs that have one can tell
    rep = job.law(f"{where}.rep", [p["rep"] for p in reps], only=uneven) if uneven else None
    if not rep or ops % rep or weight % rep:
        job.laws[:] = [x for x in job.laws if x["field"] != f"{where}.rep"]
        rep, uneven = 1, []
    per, unit = ops // rep, math.gcd(_unit(reps), weight // rep)
    if per < nprocs:
        raise ExtrapolationError(f"{where}: {ops} operations for {nprocs} processes at np {job.target[0]}: "
                                 "fewer than one a process")
    (qo, ro), (qb, rb) = divmod(per, nprocs), divmod(weight // rep // unit, nprocs)
    cuts = sorted({0, ro, rb, nprocs})
    groups = []
    for a, b in zip(cuts, cuts[1:]):
        n, size = qo + (a < ro), (qb + (a < rb)) * unit
        groups.append({"ranks": format_ranks(range(a, b)), "rs": size, "request_sizes": _split(size, n, unit)})
    out = {"iop": len(groups[0]["request_sizes"]), "request_sizes": groups[0]["request_sizes"],
           "rs": weight // (nprocs * rep), "rs_min": min(g["rs"] for g in groups),
           "rs_max": max(g["rs"] for g in groups)}
    if len(groups) > 1:
        out["rs_groups"] = groups
    job.approximate.append(
        f"{where}: {ops} operations of {weight} B in all do not divide evenly over {nprocs} processes"
        + (f" ({kinds})" if len(even) < len(reps) else "")
        + f"; split as a 1-D block division of {per} operations and of {weight // rep} B in units of "
        f"{unit} B a repetition, {rep} repetition{'s' * (rep > 1)} ("
        + ("as the inputs of several sizes repeat theirs" if uneven else "no input repeats an uneven pattern")
        + "); the application's own split may differ")
    return out, weight, rep, uneven


def _phase(job, where, reps, rep_id, firsts, steps):
    """One phase of the target from the inputs' phases of the same place."""
    near = reps[job.near]
    nprocs = job.need(f"{where}.np", [p["np"] for p in reps])
    if not 1 <= nprocs <= job.target[0]:
        raise ExtrapolationError(f"{where}: the law of its processes gives {nprocs} at np {job.target[0]}")
    if _same_pattern(job, reps):
        rep = max(1, job.need(f"{where}.rep", [p["rep"] for p in reps]))
        sizes, weight = _sizes(job, where, reps, nprocs, rep)
        same = range(len(reps))
    else:
        sizes, weight, rep, same = _by_operations(job, where, reps, nprocs)
    offsets, step = _offsets(job, where, reps, firsts, steps, rep, weight // rep, same)
    p = {"id": rep_id, "file": near["file"], "operation": near["operation"]}
    for k in ("routine", "interface", "collective", "metadata", "own_open", "synced"):
        if k in near:
            p[k] = near[k]
    p.update(np=nprocs, ranks=_ranks(job, where, [q["ranks"] for q in reps], nprocs))
    p.update(sizes)
    modes = {q["access_mode"] for q in reps}
    p.update(rep=rep, weight=weight, access_mode=near["access_mode"], offsets=offsets)
    if len(modes) > 1:
        job.assume(f"{where}.access_mode", near["access_mode"],
                   f"the inputs' differ ({', '.join(sorted(modes))}) with the split of the data")
    if all("reread_bytes" in q for q in reps):
        p["reread_bytes"] = weight if all(q["reread_bytes"] == q["weight"] for q in reps) else \
            min(weight, job.law(f"{where}.reread_bytes", [q["reread_bytes"] for q in reps]))
    lt = [q.get("logical_time") for q in reps]
    if all(lt):                  # null where some input has none (the paper's tables give none)
        p["logical_time"] = {k: job.law(f"{where}.logical_time.{k}", [t[k] for t in lt])
                             if all(t.get(k) is not None for t in lt) else None
                             for k in ("first", "comm_between")}
    if all(q.get("gap_comm") is not None for q in reps):
        p["gap_comm"] = job.law(f"{where}.gap_comm", [q["gap_comm"] for q in reps])
    return p, step


def _measured(job, where, q, runs, k, j):
    """What the traced system measured of phase q, the j-th of run k: the times of the
    nearest input's phase at the same place (its last where it has fewer), scaled by the
    work the sizes show (models/measured_times.py), and where its buffers sat."""
    mine = runs[job.near][k]
    src = mine[min(j, len(mine) - 1)]
    times, laws = scaled_times(src, q, where, job.np[job.near])
    q.update(times)
    if not j:
        job.laws.extend(laws)
    offs = [r[k][min(j, len(r[k]) - 1)].get("buffer_offset") for r in runs]
    if src.get("buffer_offset") is not None:
        q["buffer_offset"] = src["buffer_offset"]
        if len(set(offs)) > 1 and not j:
            # the heap's layout, not a law: the inputs' own differ
            job.assume(f"{where}.buffer_offset", src["buffer_offset"], "where the buffers sat within 4 KiB, "
                       f"which differs from run to run ({', '.join(map(str, offs))})")


def _later_gap_comm(job, where, runs, k):
    """The communication before a run's second and later phases (before its first there may
    be more: S3D-IO's 21 calls before a checkpoint, none between its files), or None."""
    vals = [r[k][1].get("gap_comm") if len(r[k]) > 1 else None for r in runs]
    return job.law(f"{where}.gap_comm (later phases)", vals) if None not in vals else None


def _file_at(job, runs, k, j):
    """The file of a run's j-th phase (S3D-IO's run of checkpoints goes over five files):
    where every input that has a j-th phase agrees, else the nearest input's, its files'
    cycle repeated (two files written in turn), or its last file when they follow no cycle."""
    at = {r[k][j]["file"] for r in runs if j < len(r[k])}
    if len(at) == 1:
        return at.pop()
    seq = [p["file"] for p in runs[job.near][k]]
    period = next(n for n in range(1, len(seq) + 1) if all(f == seq[i % n] for i, f in enumerate(seq)))
    if period < len(seq) or j < len(seq):
        return seq[j % period]
    note = f"run {k + 1}: its phases beyond the nearest input's {len(seq)} go to that input's last file"
    if note not in job.assumed:
        job.assumed.append(note)
    return seq[-1]


def _order(phases):
    """Edges between each process's consecutive phases (ids are in every process's order)."""
    last = {}
    edges = set()
    spans = [[tuple(map(int, x.split("-"))) if "-" in x else (int(x), int(x)) for x in p["ranks"].split(",")]
             for p in phases]
    bounds = sorted({b for s in spans for lo, hi in s for b in (lo, hi + 1)})
    for p, s in zip(phases, spans):      # ranks in intervals between bounds behave alike
        for lo, hi in s:
            i = bounds.index(lo)
            while i + 1 < len(bounds) and bounds[i] <= hi:
                seg = bounds[i]
                if seg in last:
                    edges.add((last[seg], p["id"]))
                last[seg] = p["id"]
                i += 1
    return sorted([list(e) for e in edges])


def _files(job, phases):
    out = []
    for fid, near in enumerate(job.models[job.near]["files"]):
        mine = [p for p in phases if p["file"] == fid]
        fs = [m["files"][fid] for m in job.models]
        nprocs = job.need(f"files[{fid}].np", [f["np"] for f in fs])
        f = {"id": fid, "name": near["name"], "paths": near["paths"], "access_type": near["access_type"],
             "np": min(nprocs, job.target[0]), "access_mode": near["access_mode"], "role": near["role"]}
        if near["access_type"] == "unique" and re.search(r"\{rank(\+1)?\}", near["name"]):
            plus = 1 if "{rank+1}" in near["name"] else 0
            f["paths"] = [re.sub(r"\{rank(\+1)?\}", str(r + plus), near["name"]) for r in range(f["np"])]
        elif near["access_type"] == "unique":
            job.assumed.append(f"files[{fid}].paths: the nearest input's ({len(near['paths'])}); the "
                               "names hold no rank to make the others' from")
        f["iof_size"] = sum(p["weight"] for p in mine if p["operation"] == "write")
        f["inf_size"] = sum(p["weight"] for p in mine if p["operation"] == "read")
        f["size"] = f["iof_size"] if f["role"] != "input" else f["inf_size"]
        if all(x.get("extent") is not None for x in fs):
            # a file written end to end in every input is at the target too
            f["extent"] = f["size"] if all(x["extent"] == x["size"] for x in fs) else \
                job.law(f"files[{fid}].extent", [x["extent"] for x in fs])
        out.append(f)
    return out


def _clock_step(job, where, runs, k):
    """How far the logical clock moves from one phase of a run to the next (a dump's
    communication), or None where an input has no clock or no second phase there."""
    steps = []
    for r in runs:
        lt = [(p.get("logical_time") or {}).get("first") for p in r[k][:2]]
        steps.append(lt[1] - lt[0] if len(lt) == 2 and None not in lt else None)
    return job.law(f"{where}.logical_time.step", steps) if None not in steps else None


def _check_grids(inputs, np_, grid, grids):
    """The process grids: given for the target and every input, as many axes each, and as
    many processes as each one's np."""
    if (grid is None) != (grids is None):
        raise ExtrapolationError("--grid needs each input's grid (--grids or --grid-args)" if grid else
                                 "the inputs' grids need the target's: give it with --grid")
    if grid is None:
        return
    if len(grids) != len(inputs):
        raise ExtrapolationError(f"--grids: {len(grids)} grids for {len(inputs)} models")
    if len({len(g) for g in [grid, *grids]}) > 1:
        raise ExtrapolationError("--grid and the inputs' grids have different numbers of axes (" + ", ".join(
            _grid_text(g) for g in [grid, *grids]) + "): give each with the same axes, fastest-varying first")
    for (path, m), g in zip(inputs, grids):
        if math.prod(g) != m["application"]["np"]:
            raise ExtrapolationError(f"{path}: its grid {_grid_text(g)} is {math.prod(g)} processes, not its "
                                     f"np {m['application']['np']}")
    if math.prod(grid) != np_:
        raise ExtrapolationError(f"--grid {_grid_text(grid)} is {math.prod(grid)} processes, not --np {np_}")


def extrapolate(inputs, np_, size=None, sizes=None, grid=None, grids=None):
    """The model at np_ (and size), from [(path, model), ...] at other scales;
    sizes: each input's size parameter (needed with `size`); grid, grids: the
    target's and each input's process grid, the array's fastest-varying axis first."""
    if not 2 <= np_ <= MAX_NP:
        raise ExtrapolationError(f"--np {np_}: give a process count from 2 to {MAX_NP}")
    for x in ([size] if size is not None else []) + list(sizes or []):
        if not (isinstance(x, (int, float)) and math.isfinite(x) and x > 0):
            raise ExtrapolationError(f"a problem size of {x}: sizes are positive, finite numbers")
    if size is not None and not sizes:
        raise ExtrapolationError("--size needs each input's size (--sizes, or --size-arg to read it "
                                 "from the command lines the models recorded)")
    if sizes and len(sizes) != len(inputs):
        raise ExtrapolationError(f"--sizes: {len(sizes)} sizes for {len(inputs)} models")
    if sizes and size is None and len(set(sizes)) > 1:
        raise ExtrapolationError(f"the inputs are at sizes {', '.join(f'{x:g}' for x in sizes)}: give the "
                                 "target's with --size")
    _check_grids(inputs, np_, grid, grids)
    job = _Job(inputs, np_, size, sizes, grid, grids)
    try:
        return _extrapolate(job)
    except ExtrapolationError as e:
        # a law's refusal ("run 3: ...") is the inputs' together: say which they are
        if any(p in str(e) for p in job.paths):
            raise
        raise ExtrapolationError(f"{', '.join(job.paths)}: {e}") from None


def _extrapolate(job):
    _check_inputs(job)
    runs = _match(job)
    phases = []
    for k in range(len(runs[0])):
        reps = [r[k][0] for r in runs]
        where = f"run {k + 1}"
        length = job.need(f"{where}.phases", [len(r[k]) for r in runs])
        steps = [r[k][1]["offsets"]["first"] - r[k][0]["offsets"]["first"]
                 if len(r[k]) > 1 and r[k][1]["offsets"]["first"] is not None
                 and r[k][0]["offsets"]["first"] is not None else None for r in runs]
        firsts = [p["offsets"]["first"] for p in reps]
        p, step = _phase(job, where, reps, len(phases) + 1, firsts, steps if length > 1 else [None])
        clock = _clock_step(job, where, runs, k) if length > 1 else None
        later = _later_gap_comm(job, where, runs, k) if length > 1 and "gap_comm" in p else None
        for j in range(max(1, length)):
            q = dict(p, id=len(phases) + 1, offsets=dict(p["offsets"]), file=_file_at(job, runs, k, j))
            if j and q["offsets"]["first"] is not None:
                q["offsets"]["first"] = q["offsets"]["first"] + j * step if step is not None else None
            if j and "gap_comm" in q:
                q["gap_comm"] = later
            if j and q.get("logical_time", {}).get("first") is not None:
                q["logical_time"] = dict(q["logical_time"], first=q["logical_time"]["first"] + j * clock
                                         if clock is not None else None)
            _measured(job, where, q, runs, k, j)
            phases.append(q)
    model = _assemble(job, phases)
    try:
        return validate(model)
    except ModelError as e:
        raise ExtrapolationError(f"the model extrapolated from {', '.join(job.paths)} does not hold together "
                                 f"({e}); the inputs' laws do not agree at the target") from None


def _assemble(job, phases):
    from . import find_runs
    near = job.models[job.near]
    files = _files(job, phases)
    app = dict(near["application"], np=job.target[0], hosts={}, run_time_s=None, io_time_s=None)
    app.pop("process_io_time_s", None)
    # the nearest input's features: where the inputs differ, as all that no law gives (and a
    # feature only some inputs name is no reason to stop)
    app["features"] = dict(near["application"]["features"])
    ext = {"from": [{"path": p, "np": n, "size": s, **({"grid": list(g)} if job.grid else {})}
                    for p, n, s, g in zip(job.paths, job.np, job.size, job.grids or job.np)],
           "np": job.target[0], "size": job.target[1] if len(set(job.size)) > 1 else None,
           **({"grid": list(job.grid)} if job.grid else {}),
           "nearest": job.paths[job.near], "laws": job.laws,
           "approximate": job.notes(job.approximate), "assumed": job.notes(job.assumed)}
    source = {"kind": "extrapolated", "path": None,
              "unavailable": ["times: the run's and the application's I/O times, the phases' start and end, "
                              "bandwidths and the processes' arrival are the traced system's, not laws of "
                              "the application",
                              "hosts, aggregators and the placement of processes at the target"],
              "inferred": [f"extrapolated to np {job.target[0]}" +
                           (f", size {job.target[1]:g}" if ext["size"] is not None else "") +
                           f" from {len(job.paths)} models; laws in source.extrapolated.laws",
                           f"times: each phase's gap_s, compute_s, io_time_s and duration_s are those "
                           f"measured at the same place in {job.paths[job.near]} (np {job.np[job.near]}), "
                           "scaled by the bytes a process or an operation moves at the target against "
                           "there; predict and replay take the computing between operations and before "
                           "phases from them"]
              + ext["approximate"] + ext["assumed"],
              "extrapolated": ext}
    for p in phases:
        p.setdefault("io_time_s", None)
    model = {"format": near["format"], "version": near["version"], "application": app, "source": source,
             "analysis": dict(near["analysis"]), "files": files, "phases": phases,
             "runs": find_runs(phases), "order": _order(phases),
             "weight": sum(p["weight"] for p in phases),
             "storage_capacity": sum(f["size"] for f in files)}
    return model
