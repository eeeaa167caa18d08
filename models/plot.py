"""`iomodel plot`: file offset over time per process, coloured by operation
(the paper's Fig. 1).  Needs matplotlib (pip install 'iomodel[plot]')."""
from pathlib import Path

import numpy as np

from iomodel.outputs import atomic_path


def model_points(model):
    """Operations rebuilt from the model alone: (rank, time, offset, write, phase) arrays.

    Each repetition of each process sits at its modelled offset, spread
    evenly over the phase's duration."""
    from .schema import parse_ranks
    rows = []
    for p in model["phases"]:
        ranks = parse_ranks(p["ranks"])
        off = p["offsets"]
        first = off.get("first") or 0
        starts = off.get("starts")
        t0, t1 = p.get("start_s") or 0.0, p.get("end_s") or 0.0
        for j, r in enumerate(ranks):
            base = first + (starts[j] if starts else (off.get("per_rank") or 0) * j)
            for i in range(p["rep"]):
                t = t0 + (t1 - t0) * (i / p["rep"]) if p["rep"] > 1 else t0
                rows.append((r, t, base + i * (off.get("stride") or 0), p["operation"] == "write", p["id"]))
    if not rows:
        return tuple(np.zeros(0) for _ in range(5))
    return tuple(np.array(c) for c in zip(*rows))


def trace_points(ops):
    t = ops.table
    return (t["rank"].to_numpy(), t["t_start"].to_numpy(), t["offset"].to_numpy(),
            t["write"].to_numpy(zero_copy_only=False), None)


def plot(model, out, ops=None, logical=False):
    """Draw to `out` (png, pdf, svg...).  With `ops` (the traced operations),
    every operation is drawn; otherwise the model's phases are.  Returns how
    many operations were drawn (those of known offset)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("iomodel plot needs matplotlib: pip install matplotlib "
                           "(or .venv/bin/pip install 'iomodel[plot]')") from None
    if ops is not None:
        rank, t, off, write, _ = trace_points(ops)
        if logical:
            t = ops.table["lclock"].to_numpy()
    else:
        rank, t, off, write, _ = model_points(model)
    known = off >= 0
    fig, ax = plt.subplots(figsize=(9, 5))
    nranks = max(int(rank.max()) + 1, 1) if len(rank) else 1
    for is_write, color, label in ((True, "tab:red", "write"), (False, "tab:blue", "read")):
        sel = known & (write == is_write)
        if sel.any():
            ax.scatter(t[sel], off[sel] / 2**20, s=8, c=color, label=label, alpha=0.7)
    drawn = int(known.sum())
    name = model["application"]["name"]
    ax.set_title(f"{name}: {model['application']['np']} processes, {len(model['phases'])} phases"
                 + ("" if ops is not None else " (from the model)"))
    ax.set_xlabel("logical time (communication calls)" if logical and ops is not None else "time (s)")
    ax.set_ylabel("file offset (MiB)")
    if drawn:
        ax.legend(title=f"{nranks} ranks")
    else:                       # an empty legend is matplotlib's warning, not a figure
        ax.text(0.5, 0.5, "no operation of known file offset", ha="center", va="center",
                transform=ax.transAxes)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    try:
        with atomic_path(out) as tmp:
            fig.savefig(tmp, dpi=110, format=Path(out).suffix[1:] or "png")
    finally:
        plt.close(fig)          # pyplot holds every figure not closed, a refused output's too
    return drawn
