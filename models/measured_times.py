"""The times of an extrapolated model's phases (docs/commands/extrapolate.md, "Times").

A handful of runs on a few shared cores tells little about how an application's
computing scales, and a power law fitted to such timings goes wild (np^3 through
three oversubscribed points).  So each phase keeps the times measured at the same
place in the nearest input, scaled only by the work the sizes show: the computing
before a phase (gap_s) and a phase's I/O time by the bytes a process moves (1 under
weak scaling, np over np' under strong scaling), the computing between a process's
operations by the bytes an operation moves.  predict and replay take the computing
between operations from duration_s less io_time_s (replay.runner.think_time), so
both are kept, and give the nearest input's per-operation computing at the target.
"""

FIELDS = ("gap_s", "compute_s", "io_time_s", "duration_s")


def _ops(p):
    """A process's operations in the phase, as think_time counts them."""
    return p["rep"] * p.get("iop", 1)


def _ratio(a, b):
    return a / b if b else 1.0


def scaled_times(src, dst, where, at):
    """({field: seconds}, [law records]) of phase dst from src, the nearest input's
    phase at the same place (`at`: that input's np, for the records' text)."""
    per_proc = _ratio(dst["weight"] / dst["np"], src["weight"] / src["np"])
    per_op = _ratio(dst["weight"] / (dst["np"] * _ops(dst)), src["weight"] / (src["np"] * _ops(src)))
    n_src, n_dst = _ops(src), _ops(dst)
    out, laws = {}, []

    def put(field, value, text):
        out[field] = round(max(0.0, value), 9)      # (a first phase's gap_s can be below 0: clocks)
        laws.append({"field": f"{where}.{field}", "law": text, "kind": "measured", "c0": 0.0,
                     "c1": float(src[field]), "a": "0", "b": "0", "exact": False, "max_residual": 0,
                     "value": out[field]})

    def between(total):
        """A phase's computing between its operations (total s at np `at`), at the target."""
        if n_src > 1:
            k = total / (n_src - 1)
            return k * per_op * (n_dst - 1), (f"{n_dst - 1} x {k:.6g} s between operations at np {at} x "
                                              f"{per_op:.4g} (bytes an operation)")
        return total * per_proc, f"{total:.6g} s at np {at} x {per_proc:.4g} (bytes a process)"

    def number(x):
        return isinstance(x, (int, float)) and not isinstance(x, bool)

    if number(src.get("gap_s")):
        put("gap_s", src["gap_s"] * per_proc, f"{src['gap_s']:.6g} s at np {at} x {per_proc:.4g} (bytes a process)")
    if number(src.get("compute_s")):
        put("compute_s", *between(src["compute_s"]))
    if number(src.get("io_time_s")) and number(src.get("duration_s")):
        put("io_time_s", src["io_time_s"] * per_proc,
            f"{src['io_time_s']:.6g} s at np {at} x {per_proc:.4g} (bytes a process)")
        rest, text = between(max(0.0, src["duration_s"] - src["io_time_s"]))
        put("duration_s", out["io_time_s"] + rest, f"io_time_s + {text}")
    return out, laws
