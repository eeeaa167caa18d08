#!/usr/bin/env python3
"""Why a solver's collective dumps take longer when it computes between them
than when they run back to back.

examples/solver_like.c at two settings of its computing between dumps (STEPS
ADI steps a dump), alternating in pairs, traced with the layer under MPI-IO
(IOMODEL_UNDER_MPI=1) and modelled: per write phase, its time (the model's
io_time_s), how far apart the processes came in (arrival_skew_s), and the
aggregator's and the other process's time in the calls (aggregators). Then
each setting's last model is replayed on the same directory, back to back
and as modelled (iomodel replay --back-to-back / its default), against the
traced phases' time.

Writes bench/results/compute-between.json (one entry a --dir, the others kept).

usage: .venv/bin/python bench/compute_between.py [--dir /dev/shm] [--grid 64] [--dumps 4]
                                                 [--steps 1,10] [--pairs 3] [--np 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from machine_info import machine  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "compute-between.json"
IOMODEL = [sys.executable, "-m", "iomodel"]
ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
       "OMPI_MCA_mpi_yield_when_idle": "1"}


def sh(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True, env=kw.pop("env", ENV),
                          **kw)


def traced_model(exe, work, tag, args, np_):
    data, trace, model = work / f"data-{tag}", work / f"trace-{tag}", work / f"model-{tag}.json"
    data.mkdir(exist_ok=True)
    for f in data.iterdir():
        f.unlink()
    env = {**ENV, "IOMODEL_UNDER_MPI": "1", "IOMODEL_POSIX": "1"}
    sh([*IOMODEL, "trace", "-o", trace, "--", "mpirun", "--oversubscribe", "-np", np_, exe, data, *args], env=env)
    sh([*IOMODEL, "analyze", trace, "-o", model, "-q"])
    return json.loads(model.read_text()), model


def write_phases(m):
    """Per write phase: (io_time_s, arrival_skew_s, aggregator's time, the other's time)."""
    out = []
    for p in m["phases"]:
        if p["operation"] == "write" and p["collective"] and p["rs"] > 4096:
            a = p.get("aggregators") or {}
            out.append((p["io_time_s"], p.get("arrival_skew_s"), a.get("time_s"), a.get("others_time_s"),
                        p.get("gap_s")))
    return out


def replayed(model, vc, out, *flags):
    sh([*IOMODEL, "replay", model, "--vc", vc, "-o", out, "--repeat", "3", *flags])
    runs = json.loads((out / "results.json").read_text())["runs"].values()
    return sum(e["time_s"] for e in runs if e["operation"] == "write")


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def storage(path):
    """What decides when written data reaches the device: the file system's mount options
    and the kernel's dirty-page limits."""
    best = ("", "")
    for line in Path("/proc/mounts").read_text().splitlines():
        dev, mnt, fs, opts = line.split()[:4]
        if os.path.realpath(path).startswith(mnt) and len(mnt) > len(best[0]):
            best = (mnt, f"{fs} {opts}")
    vm = {k: int(Path(f"/proc/sys/vm/{k}").read_text()) for k in
          ("dirty_bytes", "dirty_background_bytes", "dirty_ratio", "dirty_background_ratio")}
    return {"mount": best[1], "vm": vm}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/dev/shm", help="where the files go (default: %(default)s)")
    ap.add_argument("--grid", type=int, default=64)
    ap.add_argument("--dumps", type=int, default=4)
    ap.add_argument("--steps", default="1,10", help="ADI steps between dumps, each setting (default: %(default)s)")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--np", type=int, default=2)
    args = ap.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    with tempfile.TemporaryDirectory(prefix="iomodel-cb-", dir=args.dir) as tmp:
        work = Path(tmp)
        exe = work / "solver_like"
        sh(["mpicc", "-O2", "-o", exe, ROOT / "examples" / "solver_like.c"])
        vc = work / "vc.yaml"
        vc.write_text((ROOT / "cluster" / "shipped" / "local.yaml").read_text()
                      .replace("workdir: /tmp/iomodel-replay", f"workdir: {work / 'replay-work'}"))
        rows = {s: [] for s in steps}
        models = {}
        for k in range(args.pairs):
            for s in (steps if k % 2 == 0 else steps[::-1]):         # alternating order
                m, path = traced_model(exe, work, f"{s}-{k}", [args.grid] * 3 + [args.dumps, s], args.np)
                rows[s].append(write_phases(m))
                models[s] = path
                print(f"pair {k}, steps {s}: {[round(x[0] * 1e3, 2) for x in rows[s][-1]]} ms", file=sys.stderr)
        result = {"machine": machine(), "dir": args.dir, "storage": storage(args.dir), "grid": args.grid, "dumps": args.dumps, "np": args.np,
                  "pairs": args.pairs, "settings": {}}
        for s in steps:
            flat = [x for run in rows[s] for x in run]
            traced_total = med([sum(x[0] for x in run) for run in rows[s]])
            mp = models[s]
            b2b = replayed(mp, vc, work / f"r-b2b-{s}", "--back-to-back")
            mod = replayed(mp, vc, work / f"r-mod-{s}")
            result["settings"][str(s)] = {
                "steps": s, "gap_s": med([x[4] for x in flat[1:]]),
                "write_phase_s": med([x[0] for x in flat]),
                "write_phase_range_s": [min(x[0] for x in flat), max(x[0] for x in flat)],
                "arrival_skew_s": med([x[1] for x in flat]),
                "aggregator_s": med([x[2] for x in flat]), "other_s": med([x[3] for x in flat]),
                "writes_total_s": traced_total,
                "replay_back_to_back_s": b2b, "replay_as_modelled_s": mod}
            print(json.dumps(result["settings"][str(s)]), file=sys.stderr)
    try:                  # one entry a directory (file system), the others kept
        every = json.loads(RESULTS.read_text())["by_dir"]
    except (OSError, ValueError, KeyError):
        every = {}
    every[args.dir] = result
    RESULTS.write_text(json.dumps({"by_dir": every}, indent=1) + "\n")
    print(f"written {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
