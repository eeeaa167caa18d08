"""The accuracy bench's results (bench/accuracy.py): a row's measured times
and errors, the goals and VC rankings they score, and other runs' rows
combined with them.  No run happens here: --render rescores saved results."""
import json
import re
import statistics
import sys
from pathlib import Path

import yaml

# what runs 8 to 31 set, before a results file recorded it
EARLIER_MPI_ENV = {"OMPI_MCA_mpi_yield_when_idle": "1"}
KINDS = {"predicted": "predicted (profile)", "replayed": "replayed",
         "modelled": "replayed as modelled"}
STEADY = 0.05         # a row whose runs agree within this is one the 5% goal can be judged on
STEADY_PHASE = 0.10   # and a phase whose runs agree within this, the 10% goal


def io_time(phase):
    """A measured phase's I/O time: the model's io_time_s (the slowest process's time
    inside the phase's I/O calls, Darshan's convention; of a collective phase, its
    calls each from the last process's entry to the last one's exit), not its span
    from first start to last end, which counts the computation between the calls too."""
    return phase["io_time_s"]


def err(x, ref):
    return None if x is None or not ref else (x - ref) / ref


def rank(d):
    """VC names from fastest to slowest."""
    return [k for k, _ in sorted(d.items(), key=lambda kv: kv[1])]


def kinds(rows):
    """The estimates every row has: predicted, replayed and (runs since the
    --as-modelled column) modelled."""
    ok = [r for r in rows if not r.get("error")]
    return [k for k in KINDS if ok and all(f"{k}_io_time_s" in r for r in ok)]


def spread(r):
    """How far the application's own runs on the VC are apart: (slowest - fastest)
    of their I/O times / the measured I/O time (the phases' medians summed). No prediction can be closer than its reference is
    steady; None with fewer than two runs."""
    runs = r.get("measured_runs_io_time_s") or []
    return (max(runs) - min(runs)) / r["measured_io_time_s"] if len(runs) > 1 and r["measured_io_time_s"] else None


def phase_spread(p):
    """(slowest - fastest) of a phase's measured runs / its median; None with fewer than two."""
    runs = p.get("measured_runs_s") or []
    return (max(runs) - min(runs)) / p["measured_s"] if len(runs) > 1 and p["measured_s"] else None


def worst_error(phases, k):
    es = [p[k] for p in phases if p[k] is not None]
    return max(es, key=abs) if es else None


def measure_row(row, runs):
    """The row's measured times from the models of the application's runs on the
    VC (per phase the median over the runs), and every estimate's error."""
    for i, p in enumerate(row["phases"]):
        times = [io_time(vm["phases"][i]) for vm in runs]
        p.update(measured_s=statistics.median(times), measured_runs_s=times,
                 measured_span_s=statistics.median(vm["phases"][i]["duration_s"] for vm in runs))
        for k in KINDS:
            if f"{k}_s" in p:
                p[f"error_{k}"] = err(p[f"{k}_s"], p["measured_s"])
    measured = sum(p["measured_s"] for p in row["phases"])
    app = runs[0]["application"]
    row.update(measured_io_time_s=measured,
               measured_runs_io_time_s=[sum(io_time(p) for p in vm["phases"]) for vm in runs],
               measured_span_s=sum(p["measured_span_s"] for p in row["phases"]),
               measured_app_io_time_s=app["io_time_s"], measured_run_time_s=app.get("run_time_s"))
    for k in KINDS:
        if f"{k}_io_time_s" in row:
            row.update({f"error_{k}": err(row[f"{k}_io_time_s"], measured),
                        f"worst_phase_error_{k}": worst_error(row["phases"], f"error_{k}")})


def record_again(row, again_s, first_s):
    """A row's prediction from the VC's second profile (--recheck), against the
    measured time and against the first profile's prediction."""
    row.update(predicted_again_io_time_s=again_s,
               error_predicted_again=err(again_s, row["measured_io_time_s"]),
               predicted_moved=err(again_s, first_s))


def score(result):
    """Rankings and goals, against both measures of a phase's time: `io_time`
    (the slowest process's time inside the calls) and `span` (first start to last end)."""
    rows = [r for r in result["rows"] if not r.get("error")]
    ks = kinds(rows)
    refs = {"io_time": ("measured_io_time_s", "measured_s"), "span": ("measured_span_s", "measured_span_s")}
    result["rankings"], result["goals"] = {}, {}
    for ref, (total, phase) in refs.items():
        keys = sorted({(r["app"], r["size"]) for r in rows},
                      key=lambda k: [(r["app"], r["size"]) for r in result["rows"]].index(k))
        rankings = {}
        for app, size in keys:
            rs = [r for r in rows if (r["app"], r["size"]) == (app, size)]
            if len(rs) > 1:
                rankings[f"{app} {size}"] = {
                    "measured": rank({r["vc"]: r[total] for r in rs}),
                    **{k: rank({r["vc"]: r[f"{k}_io_time_s"] for r in rs}) for k in ks}}
        goals = {}
        steady = [r for r in rows if spread(r) is not None and spread(r) <= STEADY]
        steady_phases = [p for r in rows for p in r["phases"]
                         if phase_spread(p) is not None and phase_spread(p) <= STEADY_PHASE]
        for k in ks:
            goals[k] = {
                "steady_rows": len(steady),
                "steady_total_within_5pct": sum(abs(err(r[f"{k}_io_time_s"], r[total])) <= 0.05
                                                for r in steady),
                "rows": len(rows),
                "total_within_5pct": sum(abs(err(r[f"{k}_io_time_s"], r[total])) <= 0.05 for r in rows),
                "total_within_10pct": sum(abs(err(r[f"{k}_io_time_s"], r[total])) <= 0.10 for r in rows),
                "phases": sum(len(r["phases"]) for r in rows),
                "phases_within_10pct": sum(abs(err(p[f"{k}_s"], p[phase])) <= 0.10
                                           for r in rows for p in r["phases"]),
                "steady_phases": len(steady_phases),
                "steady_phases_within_10pct": sum(abs(err(p[f"{k}_s"], p[phase])) <= 0.10
                                                  for p in steady_phases),
                "rankings_same": sum(v[k] == v["measured"] for v in rankings.values()),
                "rankings": len(rankings)}
        result["rankings"][ref], result["goals"][ref] = rankings, goals
    return result


def _data_servers(vc):
    """A VC's data servers, from the cluster description the run kept."""
    try:
        return int((yaml.safe_load(vc["yaml"]).get("io_servers") or {}).get("data") or 1)
    except (KeyError, TypeError, ValueError, yaml.YAMLError):
        return None


def _without_think(args):
    """The arguments without `--think K` (and K)."""
    out, skip = [], False
    for x in args:
        if skip:
            skip = False
        elif x == "--think":
            skip = True
        else:
            out.append(x)
    return out


def _think(args):
    """The `--think` points of characterize arguments, [] without it."""
    return args[args.index("--think") + 1].split(",") if "--think" in args else []


def same_sweep(result, other):
    """The characterize arguments two runs' VCs share, or None.  `--one-stripe`
    measures nothing on a VC of one data server (it says so and goes on), so a
    run without it on such VCs had the sweep it would have had with it.
    `--think` only adds points: a run without it, or with some of its points
    only, is the same sweep less the others; without it predict takes the
    computing between operations as all given back (its rule before them), with
    fewer it reads them from the points it has.  The render names those VCs
    (`no_think_vcs`, `fewer_think_vcs`: VC -> its points)."""
    a, b = result["characterize"]["args"], other["characterize"]["args"]
    if a == b:
        return a
    ta, tb = _think(a), _think(b)
    if ta != tb:
        if set(tb) <= set(ta):
            more, fewer = result, other
        elif set(ta) <= set(tb):
            more, fewer = other, result
        else:
            return None
        args = same_sweep({"characterize": {"args": _without_think(more["characterize"]["args"])},
                           "vcs": more["vcs"]},
                          {"characterize": {"args": _without_think(fewer["characterize"]["args"])},
                           "vcs": fewer["vcs"]})
        if args is None:
            return None
        points = _think(fewer["characterize"]["args"])
        known = set(fewer["characterize"].get("no_think_vcs", [])) | set(fewer["characterize"].get("fewer_think_vcs", {}))
        if points:     # a VC already named keeps what it had, which is fewer still
            fewer["characterize"]["fewer_think_vcs"] = {
                **{vc: ",".join(points) for vc in fewer["vcs"] if vc not in known},
                **fewer["characterize"].get("fewer_think_vcs", {})}
        else:
            fewer["characterize"]["no_think_vcs"] = sorted(fewer["vcs"])
        return args + ["--think", ",".join(_think(more["characterize"]["args"]))]
    flag = "--one-stripe"
    if [x for x in a if x != flag] != [x for x in b if x != flag]:
        return None
    without = result if flag not in a else other
    if any(_data_servers(vc) != 1 for vc in without["vcs"].values()):
        return None
    return a if flag in a else b


def combine(result, paths):
    """Another run's rows beside this one's: the same sweep on other VCs,
    run apart (e.g. one VC a run when a four-VC run does not fit in a sitting).
    Its VCs must be new to the result, its machine and characterize arguments the
    same; the render says the rows come from several runs."""
    for spec in paths:
        path, _, pick = spec.partition("@")      # FILE@VC+VC: only those VCs of that run
        try:
            other = json.loads(Path(path).read_text())
            other["vcs"], other["rows"], other["machine"]["date"], other["characterize"]["args"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit(f"bench/accuracy.py: {path}: not the results of this bench "
                     f"({type(e).__name__}: {e})")
        if pick:
            other = only_vcs(other, pick.split("+"), path)
        same = [vc for vc in other["vcs"] if vc in result["vcs"]]
        if same:
            sys.exit(f"bench/accuracy.py: {path}: VC {', '.join(same)} is already in the results")
        for key in ("cpu", "cores", "kernel", "mpi"):
            if other["machine"].get(key) != result["machine"].get(key):
                sys.exit(f"bench/accuracy.py: {path}: another machine ({key} "
                         f"{other['machine'].get(key)!r}, not {result['machine'].get(key)!r})")
        args = same_sweep(result, other)
        if args is None:
            sys.exit(f"bench/accuracy.py: {path}: its VCs were characterized with other arguments")
        result["characterize"]["args"] = args
        if (other.get("np"), other.get("repeat")) != (result.get("np"), result.get("repeat")):
            sys.exit(f"bench/accuracy.py: {path}: another --np or --repeat")
        result.setdefault("combined_from", [])
        result["mpi_env_of_vc"] = {**mpi_env_of_vc(result), **mpi_env_of_vc(other)}
        result["replay_launches"] = {**launches_of_vc(result), **launches_of_vc(other)}
        result["rows"] += other["rows"]
        result["missing"] = result.get("missing", []) + other.get("missing", [])
        result["vcs"].update(other["vcs"])
        result["runs"].update(other.get("runs", {}))
        no_think = set(result["characterize"].get("no_think_vcs", [])) | \
            set(other["characterize"].get("no_think_vcs", []))
        fewer_think = {**result["characterize"].get("fewer_think_vcs", {}),
                       **other["characterize"].get("fewer_think_vcs", {})}
        result["characterize"].update({k: v for k, v in other["characterize"].items() if k != "args"})
        if no_think:
            result["characterize"]["no_think_vcs"] = sorted(no_think)
        if fewer_think:
            result["characterize"]["fewer_think_vcs"] = fewer_think
        result["wall_s"] = round(result.get("wall_s", 0) + other.get("wall_s", 0), 1)
        result["combined_from"].append(Path(path).name + (f" ({', '.join(other['vcs'])})" if pick else "")
                                       + (f" (code {other['code']}{again_by(other)})" if other.get("code") else ""))
        if other["machine"]["date"] not in result["machine"]["date"]:
            result["machine"]["date"] += f", {other['machine']['date']}"
    return result


def again_by(result):
    """'; analyzed again by C1; predicted again by C2' for a run whose rows later
    code re-measured (--remeasure) or re-predicted (--repredict): its `code` is
    then only the code that ran the VC."""
    out = ""
    for key, what in (("remeasured", "analyzed"), ("repredicted", "predicted")):
        m = re.search(r" by (\S+) ", result.get(key) or "")
        out += f"; {what} again by {m.group(1)}" if m else ""
    return out


def only_vcs(result, vcs, path):
    """The rows and characterizations of some of a run's VCs; its wall time is
    then that of their characterizations alone (the run's other parts are not
    split by VC)."""
    missing = [vc for vc in vcs if vc not in result["vcs"]]
    if missing:
        sys.exit(f"bench/accuracy.py: {path}: no VC {', '.join(missing)} in it "
                 f"(it has {', '.join(result['vcs'])})")
    out = dict(result)
    out["vcs"] = {vc: v for vc, v in dict(result["vcs"]).items() if vc in vcs} \
        if isinstance(result["vcs"], dict) else [vc for vc in result["vcs"] if vc in vcs]
    out["rows"] = [r for r in result["rows"] if r["vc"] in vcs]
    out["missing"] = [{**m, "vcs": [vc for vc in m["vcs"] if vc in vcs]} for m in result.get("missing", [])
                      if set(m["vcs"]) & set(vcs)]
    out["runs"] = {k: v for k, v in result.get("runs", {}).items() if k in vcs}
    out["replay_launches"] = {k: v for k, v in launches_of_vc(result).items() if k in vcs}
    out["characterize"] = {k: v for k, v in result["characterize"].items() if k == "args" or k in vcs}
    out["wall_s"] = sum(v.get("seconds", 0) for k, v in out["characterize"].items()
                        if k != "args" and isinstance(v, dict))
    return out


def launches_of_vc(result):
    """{VC: launches each replay's repetitions were spread over}; 1 for runs
    before 2026-11-28, which ran them all in one launch."""
    return result.get("replay_launches") or {vc: 1 for vc in result["vcs"]}


def mpi_env_of_vc(result):
    """{VC: the Open MPI settings its runs had}."""
    return result.get("mpi_env_of_vc") or {vc: result.get("mpi_env", EARLIER_MPI_ENV)
                                            for vc in result["vcs"]}
