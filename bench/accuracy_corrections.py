#!/usr/bin/env python3
"""The leave-one-out table of predict's corrections (issue 79).

Every row of an accuracy run (bench/accuracy.py with --keep) is predicted
again from what the run saved (the home model, the VC's description and
profiles), once as it was and once without each correction
(cluster/predict.py's CORRECTIONS, `predict --without NAME`), in this
process.  For each correction the table gives the rows it changes, their
error with it and without it, and the spread of the application's own runs
there: a correction earns its place where it makes some row better and none
worse by more than that row's spread (and 1%, below which nothing is told
apart).

Writes bench/results/accuracy-corrections.json and the table between
docs/accuracy.md's <!-- bench:corrections --> markers (--no-docs: not).

usage: .venv/bin/python bench/accuracy_corrections.py RUN.json WORKDIR [-o OUT] [--no-docs]
"""
import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from accuracy_apps import row_key  # noqa: E402
from accuracy_score import err  # noqa: E402
from doc_blocks import put_block  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "accuracy-corrections.json"
CHANGED = 0.005          # a correction changes a row where it moves its time by more than this
FLOOR = 0.01             # errors closer than this are not told apart


def spread(r):
    """(max - min) / median of the application's runs' I/O times, or None."""
    runs = [x for x in r.get("measured_runs_io_time_s") or [] if x]
    return (max(runs) - min(runs)) / statistics.median(runs) if len(runs) > 1 else None


def inputs(r, work):
    """(model, cluster, profile) the run predicted the row from."""
    from iomodel.models import load_model
    from iomodel.cluster.description import load_cluster
    from iomodel.cluster.profile import Profile
    key = row_key(r["app"], r["size"])
    cluster = load_cluster(str(work / "vc" / r["vc"] / f"testbed-{r['vc']}.yaml"))
    prof = Profile.load(cluster)
    for extra in (work / f"char-{r['vc']}" / "profile.parquet",
                  work / f"char-for-{r['vc']}-{key}" / "profile.parquet"):   # own_computing_points'
        if extra.exists():
            prof = prof + Profile.read(extra)
    return load_model(work / f"{key}.home.json"), cluster, prof


def leave_one_out(result, work):
    """Per row: its error as predicted, and without each correction."""
    from iomodel.cluster.predict import CORRECTIONS, predict
    rows = []
    for r in result["rows"]:
        if r.get("error") or not r.get("measured_io_time_s"):
            continue
        model, cluster, prof = inputs(r, work)
        measured = r["measured_io_time_s"]
        base = predict(model, cluster, profile=prof)["io_time_s"]
        rows.append({"app": r["app"], "size": r["size"], "vc": r["vc"], "measured_io_time_s": measured,
                     "spread": spread(r), "predicted_io_time_s": base, "error": err(base, measured),
                     "without": {c: err(predict(model, cluster, profile=prof, without=[c])["io_time_s"],
                                        measured) for c in CORRECTIONS}})
    return {"source": result.get("code"), "corrections": dict(CORRECTIONS), "rows": rows}


def verdicts(table):
    """Per correction: the rows it changes, and how many it makes better and worse."""
    out = {}
    for c in table["corrections"]:
        changed = []
        for r in table["rows"]:
            w, e = r["without"][c], r["error"]
            if w is None or e is None or abs((1 + e) / (1 + w) - 1) <= CHANGED:
                continue
            margin = max(r["spread"] or 0.0, FLOOR)
            how = "better" if abs(e) < abs(w) - margin else "worse" if abs(e) > abs(w) + margin else "within"
            changed.append({**{k: r[k] for k in ("app", "size", "vc", "spread")}, "with": e, "without": w,
                            "effect": how})
        out[c] = {"changed": changed, **{k: sum(x["effect"] == k for x in changed)
                                         for k in ("better", "worse", "within")}}
    return out


def render(table):
    v = verdicts(table)

    def pct(x):
        return "-" if x is None else f"{x * 100:+.1f}%"
    lines = ["| correction | rows it changes | better | worse | within the runs' spread |", "|---|---|---|---|---|"]
    for c, d in v.items():
        lines.append(f"| `{c}` | {len(d['changed'])} | {d['better']} | {d['worse']} | {d['within']} |")
    lines += ["", "| correction | application | size | VC | error with | without | runs' spread |",
              "|---|---|---|---|---|---|---|"]
    for c, d in v.items():
        for x in d["changed"]:
            lines.append(f"| `{c}` | {x['app']} | {x['size']} | {x['vc']} | {pct(x['with'])} | "
                         f"{pct(x['without'])} | {pct(x['spread'])[1:] if x['spread'] is not None else '-'} |")
    lines += ["", f"Errors of the predicted I/O time against the applications' own runs (the run of "
                  f"{table['source'] or 'unknown code'}); a correction changes a row where it moves its "
                  f"time by more than {CHANGED:.1%}; better or worse: by more than the row's runs' "
                  f"spread and {FLOOR:.0%}."]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="an accuracy run's results (bench/results/accuracy.json)")
    ap.add_argument("work", help="its work directory, kept (bench/accuracy.py --keep)")
    ap.add_argument("-o", default=str(RESULTS))
    ap.add_argument("--no-docs", action="store_true")
    args = ap.parse_args()
    table = leave_one_out(json.loads(Path(args.run).read_text()), Path(args.work))
    table["verdicts"] = verdicts(table)
    Path(args.o).write_text(json.dumps(table, indent=1) + "\n")
    text = render(table)
    print(text)
    if not args.no_docs:
        put_block("corrections", text, "docs/accuracy.md")


if __name__ == "__main__":
    main()
