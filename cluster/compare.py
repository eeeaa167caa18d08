"""Compare virtual clusters for one I/O model (the paper's step 6): predict on
each, rank the feasible ones by I/O time, by cost and by performance/cost
(best first), list the infeasible ones with their reasons, and draw the
paper's Figures 2 and 3 (cost and performance/cost per VC, log scale).
"""
from pathlib import Path

from iomodel.outputs import atomic_path

from .predict import PredictError, feasibility, money, needed_processes, predict, seconds
from .profile import MiB, Profile, ProfileError

__all__ = ["compare", "format_comparison", "plot_comparison", "COST_KEYS"]

# which cost ranks and divides the performance: cost_tot (expression 5), cost_var
# (expression 6, the instances only) or the billed cost
COST_KEYS = {"cost_usd": "cost_tot", "cost_var_usd": "cost_var", "billed_usd": "billed"}


def _labels(clusters):
    """A label for each cluster, never two the same: its name; where names
    collide (two prices, two regions of one VC), the name with what tells
    those clusters apart: their files' names, paths, regions, or places in
    the list."""
    names = [getattr(c, "name", None) or f"cluster{i + 1}" for i, c in enumerate(clusters)]
    out = list(names)
    for name in set(names):
        same = [i for i, n in enumerate(names) if n == name]
        if len(same) < 2:
            continue
        for tell in (lambda c, i: Path(c.path).name if getattr(c, "path", None) else None,
                     lambda c, i: str(c.path) if getattr(c, "path", None) else None,
                     lambda c, i: getattr(c, "region", None),
                     lambda c, i: f"#{i + 1}"):
            tags = [tell(clusters[i], i) for i in same]
            if None not in tags and len(set(tags)) == len(tags):
                break
        for i, tag in zip(same, tags):
            out[i] = f"{name} ({tag})"
    return out


def _profile_for(i, label, cluster, profiles):
    if profiles is None:
        return None
    if isinstance(profiles, dict):
        return profiles.get(label, profiles.get(getattr(cluster, "name", None)))
    return profiles[i]


def compare(model, clusters, profiles=None, cost_key="cost_usd", fallback=True):
    """Predict `model` on every cluster and rank them.

    profiles: None (each cluster's own, Profile.load), a list parallel to
    `clusters`, or a dict {name: Profile}; a None entry means the cluster's own.
    cost_key: the cost that ranks and divides the performance: "cost_usd"
    (cost_tot, expression 5; default), "cost_var_usd" (expression 6) or
    "billed_usd".  Returns a dict: model, cost_key, predictions {label: pred},
    order (labels as given), by_time, by_cost, by_perf_cost (labels of the
    feasible VCs, best first), time_overlaps ([faster, slower] neighbours in
    by_time whose I/O times over their profiles' passes overlap: `time_overlaps`),
    perf_cost {label: value}, infeasible [{vc,
    reasons}], unavailable [{vc, reason}] (feasible, but no bandwidth to
    predict with)."""
    if cost_key not in COST_KEYS:
        raise ValueError(f"cost_key must be one of {', '.join(COST_KEYS)}, got {cost_key!r}")
    labels = _labels(clusters)
    preds, infeasible, unavailable, perf_cost = {}, [], [], {}
    for i, (label, c) in enumerate(zip(labels, clusters)):
        ok, reasons, _ = feasibility(model, c)
        if not ok:
            infeasible.append({"vc": label, "reasons": reasons})
        try:
            prof = _profile_for(i, label, c, profiles)
            if prof is None:
                prof = Profile.load(c)
            pred = predict(model, c, prof, fallback=fallback)
        except (ProfileError, PredictError) as e:
            if ok:
                unavailable.append({"vc": label, "reason": str(e)})
            continue
        pred["label"] = label
        preds[label] = pred
        cost = pred[cost_key]
        perf = pred["performance_Bps"]
        perf_cost[label] = perf / MiB / cost if cost and perf is not None else None

    feasible = [lb for lb in labels if lb in preds and preds[lb]["feasible"]]
    by_time = sorted(feasible, key=lambda lb: preds[lb]["io_time_s"])
    by_cost = sorted((lb for lb in feasible if preds[lb][cost_key] is not None),
                     key=lambda lb: preds[lb][cost_key])
    by_pc = sorted((lb for lb in feasible if perf_cost[lb] is not None), key=lambda lb: -perf_cost[lb])
    return {
        "model": model["application"].get("name"),
        "np": needed_processes(model),
        "weight": model.get("weight"),
        "storage_capacity": model.get("storage_capacity"),
        "cost_key": cost_key,
        "order": labels,
        "predictions": preds,
        "perf_cost": perf_cost,
        "by_time": by_time,
        "time_overlaps": time_overlaps(by_time, preds),
        "by_cost": by_cost,
        "by_perf_cost": by_pc,
        "infeasible": infeasible,
        "unavailable": unavailable,
    }


def _time_range(pred):
    """(fastest, slowest) I/O time of a prediction over its profile's passes, or
    its one I/O time twice when the profile was measured in one pass."""
    by_pass = pred.get("io_time_passes_s") or [pred["io_time_s"]]
    return min(by_pass + [pred["io_time_s"]]), max(by_pass + [pred["io_time_s"]])


def time_overlaps(by_time, preds):
    """Neighbours in the ranking by I/O time whose pass-by-pass I/O times overlap
    ([faster, slower] pairs): their order is within the clusters' own variation
    between the passes of their profiles, not a difference the profiles show."""
    out = []
    for a, b in zip(by_time, by_time[1:]):
        if _time_range(preds[b])[0] <= _time_range(preds[a])[1]:
            out.append([a, b])
    return out


def format_comparison(result):
    """A comparison as text: one row per VC, the three rankings, the reasons."""
    ck = result["cost_key"]
    L = [f"{result['model']}: weight(app) {result['weight'] / MiB:.1f} MiB, storage "
         f"{result['storage_capacity'] / 10**9:.2f} GB, cost = {COST_KEYS[ck]}"]
    L.append(f"{'VC':<16} {'feasible':<8} {'I/O time s':>11} {'MiB/s':>9} {'cost_var':>10} "
             f"{'cost_fix':>10} {'cost_tot':>10} {'billed':>10} {'perf/cost':>12}")
    why = {x["vc"]: "no" for x in result["infeasible"]}
    why.update({x["vc"]: "?" for x in result["unavailable"]})
    for lb in result["order"]:
        p = result["predictions"].get(lb)
        feas = why.get(lb, "yes")
        if p is None:
            L.append(f"{lb:<16} {feas:<8} {'-':>11}")
            continue
        perf = p["performance_Bps"]
        pc = result["perf_cost"][lb]
        L.append(f"{lb:<16} {feas:<8} {seconds(p['io_time_s']):>11} "
                 f"{'-' if perf is None else f'{perf / MiB:.1f}':>9} {money(p['cost_var_usd']):>10} "
                 f"{money(p['cost_fix_usd']):>10} {money(p['cost_usd']):>10} {money(p['billed_usd']):>10} "
                 f"{'-' if pc is None else f'{pc:#.4g}'.rstrip('.'):>12}")   # 25.60, not 25.6
    L.append("(I/O time: the model's measure, each phase from its last process's entry to the last exit, "
             "summed; `predict` also gives it as the application's own timers would)")
    L.append("")
    L.append("best first (feasible VCs):")
    for what, key in (("I/O time", "by_time"), (f"cost ({COST_KEYS[ck]})", "by_cost"),
                      ("performance/cost", "by_perf_cost")):
        L.append(f"  {'by ' + what + ':':<24}{', '.join(result[key]) or '-'}"
                 + ("  (MiB/s per $)" if key == "by_perf_cost" else ""))
        for a, b in result.get("time_overlaps") or [] if key == "by_time" else []:
            ra, rb = (_time_range(result["predictions"][x]) for x in (a, b))
            L.append(f"  {'':<24}{a} and {b} overlap pass by pass ({a} {ra[0]:.3g} to {ra[1]:.3g} s, "
                     f"{b} {rb[0]:.3g} to {rb[1]:.3g} s): their order is within the clusters' own variation")
    beyond = [(lb, n) for lb in result["order"] for n in (result["predictions"].get(lb) or {}).get("notes", [])
              if n.startswith("the model is extrapolated")]
    if beyond:     # an extrapolated model at more processes than a cluster's profile measured
        L.append("")
        L.append("measured at fewer processes:")
        L.extend(f"  {lb}: {n}" for lb, n in beyond)
    if result["infeasible"]:
        L.append("")
        L.append("infeasible:")
        for x in result["infeasible"]:
            for r in x["reasons"]:
                L.append(f"  {x['vc']}: {r}")
    if result["unavailable"]:
        L.append("")
        L.append("no prediction:")
        for x in result["unavailable"]:
            L.append(f"  {x['vc']}: {x['reason']}")
    return "\n".join(L)


def plot_comparison(result, outdir, prefix=""):
    """Draw the paper's Figure 2 (cost per VC) and Figure 3 (performance/cost per
    VC), both on a log scale, as PNGs in `outdir`: {prefix}cost.png and
    {prefix}perf_cost.png.  `result` is one compare() result, or a list of them
    (e.g. one per number of processes, as the paper's groups of bars: one group
    per result, one bar per VC; infeasible VCs have no bar and are marked "x").
    Returns the two paths.  Needs matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("plotting the comparison needs matplotlib: pip install matplotlib "
                           "(or .venv/bin/pip install 'iomodel[plot]')") from None
    results = [result] if isinstance(result, dict) else list(result)
    if not results:
        raise ValueError("nothing to plot: no comparison result")
    vcs = []
    for r in results:
        vcs += [lb for lb in r["order"] if lb not in vcs]
    ck = results[0]["cost_key"]
    groups = [f"np {r['np']}" if len({x['model'] for x in results}) == 1 else f"{r['model']}, np {r['np']}"
              for r in results]
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)

    def value(r, lb, what):
        p = r["predictions"].get(lb)
        if p is None or not p["feasible"]:
            return None
        return p[ck] if what == "cost" else r["perf_cost"].get(lb)

    out = []
    for what, fname, ylabel, title in (
            ("cost", "cost.png", f"{COST_KEYS[ck]} ($, log scale)", "Cost per virtual cluster"),
            ("perf", "perf_cost.png", "performance / cost (MiB/s per $, log scale)",
             "Performance-cost ratio per virtual cluster")):
        fig, ax = plt.subplots(figsize=(min(16.0, max(6.0, 0.45 * len(groups) * max(1, len(vcs)) + 2)), 4.5))
        width = 0.8 / max(1, len(vcs))
        vals = [v for r in results for lb in vcs if (v := value(r, lb, what)) and v > 0]
        floor = min(vals) / 3 if vals else 1e-3
        for j, lb in enumerate(vcs):
            xs, ys, miss = [], [], []
            for g, r in enumerate(results):
                x = g - 0.4 + width * (j + 0.5)
                v = value(r, lb, what)
                if v is not None and v > 0:
                    xs.append(x)
                    ys.append(v)
                else:
                    miss.append(x)
            color = f"C{j % 10}"
            ax.bar(xs, ys, width, label=lb, color=color)
            for x in miss:
                ax.text(x, floor * 1.1, "x", ha="center", va="bottom", color=color)
        ax.set_yscale("log")
        if vals:
            ax.set_ylim(floor, max(vals) * 3)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups)
        ax.set_ylabel(ylabel)
        model_names = sorted({r["model"] or "" for r in results})
        ax.set_title(f"{title}: {', '.join(model_names)}" if len(model_names) == 1 else title, fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
        if any(value(r, lb, what) is None for r in results for lb in vcs):
            ax.annotate("x: infeasible or not predicted", xy=(0.99, 0.99), xycoords="axes fraction",
                        ha="right", va="top", fontsize=7)
        fig.tight_layout()
        path = outdir / f"{prefix}{fname}"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=110, format="png")
        plt.close(fig)
        out.append(path)
    return out
