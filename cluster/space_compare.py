"""Compare every configuration of a space for one model: the measured ones from
their profiles, the others from composed profiles (cluster/compose.py), each
ranked by I/O time, cost and performance per cost, with the time-cost Pareto
front and, per configuration, where its profile came from and how far to
trust it.
"""
from pathlib import Path

from iomodel.outputs import atomic_path

from .compare import COST_KEYS, compare
from .compose import compose_space
from .profile import MiB, Profile, ProfileError

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
    if not measured:
        raise ProfileError(f"{space.path}: no configuration of the space is measured (no NAME.parquet in "
                           f"{space.profiles_dir}, no `measured:` points): characterize --space {space.path} "
                           f"--design names which to measure")
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
        return ""
    if prov["profile"] == "none":
        return prov["reason"]
    s = f"from {prov['anchor']} ({', '.join(prov['differs_in']) or 'same components'})"
    if not prov.get("fitted", True):
        return s + "; its kind measured once: scaled by the components' rates alone, nothing fitted"
    if "loo_median_error" in prov:
        return (s + f"; {prov['loo_checked']} of {prov['loo_measured']} measured left out and composed: "
                    f"median {100 * prov['loo_median_error']:.0f}%, worst {100 * prov['loo_max_error']:.0f}% off")
    return s + "; " + prov.get("loo", "not checked")


def _weak(prov):
    """A composed profile nothing checked: not fitted, or never left out."""
    return prov["profile"] == "composed" and (not prov.get("fitted", True) or "loo_median_error" not in prov)


def _beyond(pred):
    """The prediction's phases that took a bandwidth from beyond the measured
    points (the profile's own notes), as one short line."""
    notes = sorted({part.strip() for ph in pred.get("phases", []) for part in (ph.get("note") or "").split(";")
                    if part.strip().startswith("extrapolated")})
    return "; ".join(notes)


def format_space_comparison(result):
    """A space's comparison: one row per configuration, fastest first, with its
    profile's source and trust; the rankings, the Pareto front, and what was
    extrapolated, infeasible or not predicted."""
    from .predict import money, seconds
    preds, ck, prov = result["predictions"], result["cost_key"], result["space"]["points"]
    names = list(prov)
    width = max(len("configuration"), *(len(n) for n in names))
    unranked = [n for n in names if n not in result["by_time"]]
    L = [f"{result['model']}: weight(app) {result['weight'] / MiB:.1f} MiB, storage "
         f"{result['storage_capacity'] / 10**9:.2f} GB, cost = {COST_KEYS[ck]}; space {result['space']['name']}: "
         f"{len(names)} configurations, {len(result['space']['measured'])} measured",
         f"{'configuration':<{width}}  {'profile':<8} {'I/O time s':>10} {COST_KEYS[ck]:>10} {'perf/cost':>10}  "
         f"composed from, and how far to trust it"]
    for n in result["by_time"] + unranked:
        p = preds.get(n)
        if p is None or n not in result["by_time"]:
            why = "infeasible" if any(x["vc"] == n for x in result["infeasible"]) else "no prediction"
            L.append(f"{n:<{width}}  {prov[n]['profile']:<8} {'-':>10} {'-':>10} {'-':>10}  {why}")
            continue
        pc = result["perf_cost"][n]
        L.append(f"{n:<{width}}  {prov[n]['profile']:<8} {seconds(p['io_time_s']):>10} {money(p[ck]):>10} "
                 f"{'-' if pc is None else f'{pc:#.4g}'.rstrip('.'):>10}  {_trust(prov[n])}")
    L.append("")
    L.append("best first:")
    for what, key in (("I/O time", "by_time"), (f"cost ({COST_KEYS[ck]})", "by_cost"),
                      ("performance/cost", "by_perf_cost")):
        L.append(f"  {'by ' + what + ':':<24}{', '.join(result[key]) or '-'}")
    L.append(f"time-cost Pareto front (fastest first): {', '.join(result['pareto']) or '-'}"
             + (f" ({len(unranked)} configuration{'s' * (len(unranked) > 1)} not ranked: infeasible or no "
                f"prediction)" if unranked else ""))
    weak = [n for n in dict.fromkeys(result["pareto"] + result["by_time"][:1]) if _weak(prov[n])]
    for n in weak:
        L.append(f"  note: {n} is composed and nothing checked its composition: measure it before you rent "
                 f"it (characterize --space {result['space']['file']} --point {n})")
    beyond = {n: _beyond(preds[n]) for n in result["by_time"] if _beyond(preds[n])}
    if beyond:
        L.append("")
        L.append("bandwidths from beyond the measured points (the profile's nearest):")
        for text in dict.fromkeys(beyond.values()):
            who = [n for n, t in beyond.items() if t == text]
            L.append(f"  {', '.join(who) if len(who) < len(result['by_time']) else 'every configuration'}: {text}")
    if result["infeasible"]:
        L.append("")
        L.append("infeasible:")
        L.extend(f"  {x['vc']}: {r}" for x in result["infeasible"] for r in x["reasons"])
    if result["unavailable"]:
        L.append("")
        L.append("no prediction:")
        L.extend(f"  {x['vc']}: {x['reason']}" for x in result["unavailable"])
    return "\n".join(line.rstrip() for line in L)


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
