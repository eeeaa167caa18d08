#!/usr/bin/env python3
"""Composed predictions against real runs on every configuration of the
testbed's space (issue 80; docs/composition.md).

    sudo .venv/bin/python bench/space.py [--space testbed/testbed-space.yaml] [--apps A,B]
                                         [--runs 3] [--points P,Q] [--keep] [--resume WORKDIR]

Each application of bench/accuracy_apps.py (one size each: the first of the
examples, class W of NAS BT-IO, 50^3 of S3D-IO) is traced once on tmpfs (the
home cluster) and modelled.  Then every configuration of the space is started
with its own start command; the design's configurations
(`characterize --space --design`) are characterized for every model
(`characterize --space S --point NAME --for ...`); every application runs
--runs times there under the tracer (its measured I/O time: per phase the
median over the runs of the phase's io_time_s, summed, as bench/accuracy.py
measures it); the configuration is stopped.  Last, `compare --space` predicts
each model on every configuration, the measured ones from their profiles and
the others composed.

Rows (one per application and configuration: app, size, config, kind,
measured_profile, predicted_io_time_s, measured_io_time_s, runs_io_time_s,
error, price_per_hour) and the goals go to bench/results/space.json, the
tables to docs/composition.md (<!-- bench:space -->).  Goals, per issue 80:
composed predictions within 15% (median within 10%); per application the
configuration predicted best by I/O time and by cost measured within 5% of
the measured best; Spearman correlation of predicted and measured times of
at least 0.9; the chosen configuration's gain in time and cost over the
baseline (one server, slowest link).  Needs root (the testbed).
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy

from accuracy import IOMODEL, MPI_ENV, code_version, machine, sh, trace_and_model
from accuracy_apps import NP, VENDOR, app_cmd, app_table, build, row_key
from accuracy_score import io_time
from doc_blocks import put_block

from iomodel.cluster.design import design
from iomodel.cluster.space import load_space

ROOT = Path(__file__).resolve().parent.parent
SPACE = ROOT / "testbed" / "testbed-space.yaml"
RESULTS = ROOT / "bench" / "results" / "space.json"
BASELINE = "gluster-1srv-100Mbit-4MiB"        # one server, the slowest link (ACIC's baseline)
# one size of each application: the examples' first, BT-IO class W, S3D-IO 50^3
SIZES = {"bt-io-full": "W", "bt-io-simple": "W", "s3d-io-blocking": "50^3 2x2x1",
         "s3d-io-nonblocking": "50^3 2x2x1"}


STOP_TRIES = 4       # a stop that fails (its mount busy a moment after the runs) is tried again
STOP_PAUSE_S = 5


def stop(p, env, log, cwd):
    """Run configuration p's stop command until it succeeds: one that failed
    leaves the configuration up (the Gluster VC's volume, the state its
    --purge keeps), and the next configuration's start then fails."""
    for i in range(STOP_TRIES):
        if sh(["bash", "-c", p.stop], env, timeout=300, check=False, log=log, cwd=cwd).returncode == 0:
            return
        time.sleep(STOP_PAUSE_S)
    sys.exit(f"space: the stop of {p.name} failed {STOP_TRIES} times (see the work directory's log.txt); "
             f"stop it by hand, then go on with --resume")


def spearman(a, b):
    """Spearman's rank correlation (ties get their mean rank)."""
    def ranks(x):
        x = numpy.asarray(x, dtype=float)
        order = x.argsort()
        r = numpy.empty(len(x))
        r[order] = numpy.arange(len(x))
        for v in numpy.unique(x):                # ties: their mean rank
            r[x == v] = r[x == v].mean()
        return r
    if len(a) < 2:
        return None
    ra, rb = ranks(a), ranks(b)
    return float(numpy.corrcoef(ra, rb)[0, 1])


def goals(rows):
    """The issue's figures, per application and over the composed rows."""
    ok = [r for r in rows if r.get("measured_io_time_s") and r.get("predicted_io_time_s")]
    composed = [abs(r["error"]) for r in ok if not r["measured_profile"]]
    out = {"composed_rows": len(composed),
           "composed_within_15pct": sum(e <= 0.15 for e in composed),
           "composed_median_abs_error": statistics.median(composed) if composed else None,
           "apps": {}}
    for app in dict.fromkeys(r["app"] for r in ok):
        rs = [r for r in ok if r["app"] == app]
        meas = {r["config"]: r["measured_io_time_s"] for r in rs}
        pred = {r["config"]: r["predicted_io_time_s"] for r in rs}
        price = {r["config"]: r["price_per_hour"] for r in rs}
        best_t = min(meas, key=meas.get)
        pick_t = min(pred, key=pred.get)
        best_c = min(meas, key=lambda c: meas[c] * price[c])
        pick_c = min(pred, key=lambda c: pred[c] * price[c])
        a = {"configs": len(rs), "spearman": spearman([pred[c] for c in meas], list(meas.values())),
             "best_by_time": best_t, "chosen_by_time": pick_t,
             "chosen_time_over_best": meas[pick_t] / meas[best_t] - 1,
             "best_by_cost": best_c, "chosen_by_cost": pick_c,
             "chosen_cost_over_best": (meas[pick_c] * price[pick_c]) / (meas[best_c] * price[best_c]) - 1
             if price[best_c] else None}
        if BASELINE in meas:
            a["gain_time_over_baseline"] = meas[BASELINE] / meas[pick_t]
            a["gain_cost_over_baseline"] = (1 - (meas[pick_c] * price[pick_c]) / (meas[BASELINE] * price[BASELINE])
                                            if price[BASELINE] else None)
        out["apps"][app] = a
    return out


def table(result):
    g = result["goals"]
    lines = ["| application | configurations | Spearman | best by time (chosen: over the best) | "
             "best by cost (chosen: over the best) | gain over the baseline: time, cost |",
             "|---|---|---|---|---|---|"]
    for app, a in g["apps"].items():
        gain = (f"{a['gain_time_over_baseline']:.2f}x, {100 * a['gain_cost_over_baseline']:.0f}% cheaper"
                if a.get("gain_cost_over_baseline") is not None else "-")
        cost = "-" if a["chosen_cost_over_best"] is None else f"{100 * a['chosen_cost_over_best']:+.1f}%"
        lines.append(f"| {app} | {a['configs']} | {a['spearman']:.2f} | {a['best_by_time']} "
                     f"({a['chosen_by_time']}: {100 * a['chosen_time_over_best']:+.1f}%) | {a['best_by_cost']} "
                     f"({a['chosen_by_cost']}: {cost}) | {gain} |")
    med = g["composed_median_abs_error"]
    lines.append(f"\nComposed predictions within 15% of the measured runs: {g['composed_within_15pct']} of "
                 f"{g['composed_rows']}, median |error| {'-' if med is None else f'{100 * med:.1f}%'}. "
                 f"{result['machine']['cpu']}, {result['machine']['cores']} cores; {result['machine']['date']}; "
                 f"{result['runs']} runs a configuration.")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--space", type=Path, default=SPACE)
    ap.add_argument("--apps", help="comma-separated application names (default: all)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each application on each configuration")
    ap.add_argument("--points", help="only these configurations (default: every one)")
    ap.add_argument("--vendor", type=Path, default=VENDOR)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--resume", metavar="WORKDIR", type=Path,
                    help="go on in the work directory of a run that stopped (implies --keep): its models, "
                    "profiles and the configurations it finished are kept, the rest measured")
    ap.add_argument("--no-docs", action="store_true", help="do not put the tables into docs/composition.md")
    ap.add_argument("-o", type=Path, default=RESULTS)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/space.py needs root (the testbed's loop device, network namespace, FUSE)")
    space = load_space(args.space)
    points = [p for p in space.points if not args.points or p.name in args.points.split(",")]
    apps = [a for a in app_table() if a.size == SIZES.get(a.app, a.size) and
            (not args.apps or a.app in args.apps.split(","))]
    apps = [a for i, a in enumerate(apps) if a.app not in {b.app for b in apps[:i]}]   # one size each
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", **MPI_ENV,
           "IOMODEL_POSIX": "0"}
    if args.resume:
        work, args.keep = args.resume.resolve(), True
        if not (work / "log.txt").is_file():
            sys.exit(f"bench/space.py: {work}: not a work directory of this bench (no log.txt)")
    else:
        work = Path(tempfile.mkdtemp(prefix="iomodel-space-", dir="/tmp")).resolve()
    done = work / "rows.json"           # the configurations finished, kept as each ends
    log = open(work / "log.txt", "a")
    print(f"work dir {work} (log: {work}/log.txt)", flush=True)
    profiles = work / "profiles"
    progs, why = build(apps, work / "bin", args.vendor, lambda c, cwd: sh(c, env, log=log, cwd=cwd, timeout=1800))
    apps = [a for a in apps if a.prog not in why]
    home = Path(tempfile.mkdtemp(prefix="iomodel-space-home-", dir="/dev/shm"))
    models, chosen, t0 = {}, set(), time.monotonic()
    rows = json.loads(done.read_text()) if done.is_file() else []
    finished = {r["config"] for r in rows if "error_text" not in r}
    rows = [r for r in rows if r["config"] in finished]
    try:
        for a in apps:
            key = row_key(a.app, a.size)
            d = home / key
            d.mkdir()
            mpath = work / f"{key}.home.json"
            if mpath.is_file():         # --resume
                models[key] = (a, mpath, json.loads(mpath.read_text()))
                continue
            m = trace_and_model(lambda c, **kw: sh(c, env, **kw), app_cmd(progs, a, d, NP)[0], work / f"{key}.home.trace",
                                mpath, log, cwd=app_cmd(progs, a, d, NP)[1])[0]
            shutil.rmtree(d, ignore_errors=True)
            models[key] = (a, mpath, m)
            print(f"home trace {key}: {len(m['phases'])} phases", flush=True)
        chosen = {p.name for p, _ in design(space)}
        for p in points:
            if p.name in finished:
                continue
            cwd = space.path.parent
            try:
                sh(["bash", "-c", p.start], env, timeout=300, log=log, cwd=cwd)
                if p.name in chosen and not (profiles / f"{p.name}.parquet").is_file():
                    sh([*IOMODEL, "characterize", "--space", space.path, "--point", p.name, "--profiles",
                        profiles, "--backend", "builtin", "--trust-cluster",
                        *[x for _, mp, _ in models.values() for x in ("--for", mp)]],
                       env, timeout=7200, log=log)
                    print(f"[{p.name}] characterized", flush=True)
                for key, (a, mpath, m) in models.items():
                    runs = []
                    for k in range(args.runs):
                        data = Path(p.cluster.workdir) / f"app-{key}"
                        shutil.rmtree(data, ignore_errors=True)
                        data.mkdir(parents=True)
                        cmd, in_dir = app_cmd(progs, a, data, NP)
                        runs.append(trace_and_model(lambda c, **kw: sh(c, env, **kw), cmd,
                                                    work / f"{key}.{p.name}.{k}.trace",
                                                    work / f"{key}.{p.name}.{k}.json", log, cwd=in_dir)[0])
                        shutil.rmtree(data, ignore_errors=True)
                    per_run = [sum(io_time(ph) for ph in vm["phases"]) for vm in runs]
                    same = all(len(vm["phases"]) == len(m["phases"]) for vm in runs)
                    measured = (sum(statistics.median(io_time(vm["phases"][i]) for vm in runs)
                                    for i in range(len(m["phases"]))) if same else statistics.median(per_run))
                    rows.append({"app": a.app, "size": a.size, "config": p.name, "kind": p.kind,
                                 "measured_profile": p.name in chosen, "measured_io_time_s": measured,
                                 "runs_io_time_s": per_run, "price_per_hour": p.cluster.price_per_hour})
                    print(f"[{p.name}] {key}: measured {measured:.3f} s", flush=True)
            except Exception as e:     # the other configurations keep their rows; this one is redone
                print(f"[{p.name}] FAILED {str(e)[:300]}", flush=True)
                rows[:] = [r for r in rows if r["config"] != p.name]
                rows.append({"config": p.name, "error_text": str(e)[-1500:]})
            finally:
                done.write_text(json.dumps(rows, indent=1) + "\n")
                if p.stop:
                    stop(p, env, log, space.path.parent)
        for key, (a, mpath, m) in models.items():
            out = sh([*IOMODEL, "compare", mpath, "--space", space.path, "--profiles", profiles, "--json"],
                     env, log=log)
            res = json.loads(out.stdout)
            for r in rows:
                if r.get("app") == a.app and r["config"] in res["predictions"]:
                    r["predicted_io_time_s"] = res["predictions"][r["config"]]["io_time_s"]
                    r["error"] = r["predicted_io_time_s"] / r["measured_io_time_s"] - 1
                    r["provenance"] = res["space"]["points"][r["config"]]
    finally:
        shutil.rmtree(home, ignore_errors=True)
        log.close()
    result = {"machine": machine(), "code": code_version(), "space": str(args.space), "runs": args.runs,
              "design": sorted(chosen), "wall_s": round(time.monotonic() - t0, 1), "rows": rows}
    result["goals"] = goals(rows)
    args.o.write_text(json.dumps(result, indent=1) + "\n")
    print(table(result))
    if not args.no_docs:
        put_block("space", table(result), page="docs/composition.md")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
