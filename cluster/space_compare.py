"""Compare every configuration of a space for one model: the measured ones from
their profiles, the others from composed profiles (cluster/compose.py), each
ranked by I/O time, cost and performance per cost, with the time-cost Pareto
front and, per configuration, where its profile came from and how far to
trust it.
"""
from pathlib import Path

from iomodel.outputs import atomic_path

from .compare import COST_KEYS, compare, format_comparison
from .compose import compose_space
from .profile import Profile, ProfileError

__all__ = ["measured_profiles", "compare_space", "format_space_comparison", "pareto_front", "plot_pareto"]


def measured_profiles(space):
    """{point name: Profile} of the points measured: a profile file in the
    space's profiles directory (`characterize --space` writes NAME.parquet
    there) and/or the space's inline `measured` points."""
    out = {}
    for p in space.points:
        parts = []
        f = space.profiles_dir / f"{p.name}.parquet"
        if f.is_file():
            parts.append(Profile.read(f))
        if p.name in space.measured_points:
            try:
                parts.append(Profile.from_points(space.measured_points[p.name]))
            except ProfileError as e:
                raise ProfileError(f"{space.path}: measured.{p.name}: {e}") from None
        if parts:
            out[p.name] = sum(parts[1:], parts[0])
    return out


def pareto_front(result):
    """The feasible configurations no other beats in both I/O time and cost,
    fastest first."""
    preds, ck = result["predictions"], result["cost_key"]
    front, best_cost = [], None
    for lb in result["by_time"]:
        cost = preds[lb][ck]
        if cost is None:
            continue
        if best_cost is None or cost < best_cost:
            front.append(lb)
            best_cost = cost
    return front


def compare_space(model, space):
    """compare() over the space's points, with `space`: {point: provenance}
    and `pareto`: the time-cost front."""
    measured = measured_profiles(space)
    composed = compose_space(space, measured)
    points = [p for p in space.points]
    profiles = [composed[p.name][0] if composed[p.name][0] is not None else Profile() for p in points]
    result = compare(model, [p.cluster for p in points], profiles)
    prov = {p.name: composed[p.name][1] for p in points}
    for x in result["unavailable"]:       # say why a point has no profile, not that it is empty
        why = prov.get(x["vc"], {}).get("reason")
        if why:
            x["reason"] = f"no profile: {why}"
    result["space"] = {"name": space.name, "file": str(space.path), "measured": sorted(measured),
                       "points": prov}
    result["pareto"] = pareto_front(result)
    return result


def _trust(prov):
    if prov["profile"] == "measured":
        return "measured"
    if prov["profile"] == "none":
        return "no profile"
    s = f"composed from {prov['anchor']} ({', '.join(prov['differs_in']) or 'same components'})"
    if not prov.get("fitted", True):
        s += "; its kind measured once: scaled by the components' rates alone, nothing fitted"
    elif "loo_median_error" in prov:
        s += (f"; measured ones left out: median {100 * prov['loo_median_error']:.0f}%, "
              f"worst {100 * prov['loo_max_error']:.0f}% off")
    else:
        s += "; not checked (fewer than 3 measured of its kind)"
    return s


def format_space_comparison(result):
    out = [format_comparison(result), "", f"space {result['space']['name']} "
           f"({len(result['space']['points'])} configurations, {len(result['space']['measured'])} measured):"]
    for name, prov in result["space"]["points"].items():
        out.append(f"  {name:<28} {_trust(prov)}")
    out.append("")
    out.append(f"time-cost Pareto front (fastest first): {', '.join(result['pareto']) or '-'}")
    return "\n".join(out)


def plot_pareto(result, outdir):
    """Draw every feasible configuration's predicted I/O time against its cost
    (filled: measured profile, hollow: composed), the Pareto front joined, as
    outdir/pareto.png.  Returns the path.  Needs matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("plotting needs matplotlib: .venv/bin/pip install 'iomodel[plot]'") from None
    preds, ck, prov = result["predictions"], result["cost_key"], result["space"]["points"]
    shown = [lb for lb in result["by_time"] if preds[lb][ck] is not None]
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7.5, 5))
    try:
        for measured, style in ((True, {"color": "C0"}), (False, {"facecolors": "none", "edgecolors": "C0"})):
            pts = [lb for lb in shown if (prov[lb]["profile"] == "measured") == measured]
            ax.scatter([preds[lb]["io_time_s"] for lb in pts], [preds[lb][ck] for lb in pts], s=36,
                       label="measured profile" if measured else "composed profile", **style)
        for lb in shown:
            ax.annotate(lb, (preds[lb]["io_time_s"], preds[lb][ck]), fontsize=6, xytext=(3, 3),
                        textcoords="offset points")
        front = result["pareto"]
        ax.plot([preds[lb]["io_time_s"] for lb in front], [preds[lb][ck] for lb in front], "C1o-",
                markersize=11, markerfacecolor="none", label="Pareto front")
        ax.set_xlabel("predicted I/O time (s)")
        ax.set_ylabel(f"{COST_KEYS[ck]} ($)")
        ax.set_title(f"{result['model']} on space {result['space']['name']}", fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        path = outdir / "pareto.png"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=110, format="png")
    finally:
        plt.close(fig)
    return path
