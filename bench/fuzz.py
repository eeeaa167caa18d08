#!/usr/bin/env python3
"""Fuzz iomodel's four readers at scale: damaged traces, models, cluster files
and Darshan logs (bench/fuzzing.py), each run through the commands a user
would run on it, in this process (Darshan logs: `iomodel analyze` as a
process of its own); how many were accepted, refused with a message naming
the file, refused without naming it, ended in a traceback, hung or crashed
(killed by a signal).

The seed inputs are real: traces of examples/btio_like.c and
tests/programs/nonblocking.c made here under mpirun (kind "trace": rank files;
kind "job": btio_like's in one job file), the model of the first,
a paper model, the shipped cluster descriptions, and Darshan logs of three
formats (kind "darshan": tests/fixtures/darshan's, Darshan 3.5.0, with and
without DXT, and two of the PyDarshan wheel's, of Darshan 3.1 and 3.2).
Writes bench/results/fuzz.json and the table between the README's and
docs/security.md's <!-- bench:fuzz --> markers; --render does only that.

usage: .venv/bin/python bench/fuzz.py [--inputs 100000] [--seconds 20] [--kinds trace,job,model,cluster,darshan] [--jobs 2]
       .venv/bin/python bench/fuzz.py --render
"""
import argparse
import collections
import json
import multiprocessing
import resource
import shutil
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import fuzzing  # noqa: E402
from doc_blocks import put_block  # noqa: E402
from machine_info import machine  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "fuzz.json"
IOMODEL = [sys.executable, "-m", "iomodel"]
MODEL = ROOT / "models" / "examples" / "btio-B-4.json"
CLUSTERS = [ROOT / "replay" / "clusters" / f"{n}.yaml" for n in ("vc3", "vc4", "local")]
# MPI-IO and POSIX with DXT, stdio only (no DXT), Darshan 3.2's HDF5 IOR and 3.1's dxt.darshan
DARSHAN_LOGS = [ROOT / "tests" / "fixtures" / "darshan" / f"{n}.darshan"
                for n in ("ior_mpiio_e", "posix_fpp", "rank0_writer_stdio")]
WHEEL_LOGS = ("ior_hdf5_example.darshan", "dxt.darshan")


def darshan_logs():
    import darshan.log_utils
    return DARSHAN_LOGS + [Path(darshan.log_utils.get_log_path(n)) for n in WHEEL_LOGS]


def real_traces(work):
    """Traces of btio_like and nonblocking, 2 ranks, in rank files, the model of
    the first, and btio_like's again in one job file (IOMODEL_JOIN=1)."""
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    out = []
    for name, src, args, join in (("btio_like", ROOT / "examples" / "btio_like.c", ["8", "8", "8", "2"], "0"),
                                  ("nonblocking", ROOT / "tests" / "programs" / "nonblocking.c", [], "0"),
                                  ("btio_like", ROOT / "examples" / "btio_like.c", ["8", "8", "8", "2"], "1")):
        exe, data = work / name, work / f"{name}-data"
        trace = work / (f"{name}-trace" if join == "0" else f"{name}-job-trace")
        data.mkdir(exist_ok=True)
        subprocess.run(["mpicc", "-O1", "-o", exe, src], check=True)
        subprocess.run(IOMODEL + ["trace", "-o", trace, "--", "mpirun", "--oversubscribe", "-np", "2",
                                  exe, data, *args], check=True, capture_output=True,
                       env={**env, "IOMODEL_JOIN": join})
        out.append(trace)
    model = work / "btio_like.json"
    subprocess.run(IOMODEL + ["analyze", out[0], "-o", model, "-q"], check=True)
    return out[:2], out[2:], model


def _part(kind, seeds, src, work, seconds, model):
    """One worker's share of a source's inputs: outcome counts and the first examples."""
    counts, examples = collections.Counter(), {}
    for seed, result, argv, msg in fuzzing.fuzz(kind, seeds, src, work, seconds, model=model):
        counts[result] += 1
        if result not in ("accepted", "refused") and len(examples.get(result, [])) < 5:
            examples.setdefault(result, []).append(
                {"seed": seed, "source": str(Path(src).name), "command": [str(a) for a in argv],
                 "message": msg[:400]})
    return counts, examples


def _limit_memory(gib):
    """A worker's address space, at most `gib` GiB: an input that makes a reader
    allocate without bound ends in its MemoryError, as on a user's machine with
    limits, not in the system's OOM killer."""
    resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))


def run_kind(kind, n, sources, work, seconds, model=None, jobs=1, memory_gib=4):
    """n inputs of one kind, spread over the sources (and over `jobs` worker
    processes, each in a folder of its own); counts and first examples."""
    counts, examples, t0 = collections.Counter(), {}, time.monotonic()
    per = -(-n // len(sources))
    # spawn: a forked child of a process whose Arrow and numpy threads run can deadlock
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_limit_memory, initargs=(memory_gib,)) as pool:
        for j, src in enumerate(sources):
            seeds = range(j * per, min(n, (j + 1) * per))
            shares = [(kind, seeds[w::jobs], src, work / kind / f"job{w}", seconds, model) for w in range(jobs)]
            try:
                parts = list(pool.map(_part, *zip(*shares)))
            except BrokenProcessPool:
                kept = Path.cwd() / f"fuzz-died-{kind}"
                shutil.copytree(work / kind, kept, dirs_exist_ok=True)
                raise SystemExit(f"fuzz {kind}: a worker died on an input of {Path(src).name} (a crash, or "
                                 f"killed by the system); each worker's last input is kept in {kept}/job*/")
            for c, ex in parts:
                counts.update(c)
                for result, items in ex.items():
                    examples.setdefault(result, []).extend(items[:5 - len(examples.get(result, []))])
            print(f"fuzz {kind}: {Path(src).name}: {dict(counts)} after {time.monotonic() - t0:.0f} s",
                  file=sys.stderr, flush=True)
    return {"inputs": sum(counts.values()), "outcomes": {k: counts.get(k, 0) for k in fuzzing.OUTCOMES},
            "seconds": round(time.monotonic() - t0, 1), "jobs": jobs, "examples": examples,
            "sources": [Path(s).name for s in sources]}


def table(res):
    out = ["| reader | inputs | accepted | refused, naming the file | refused, not naming it | traceback | hang "
           "| crash |", "|---|---|---|---|---|---|---|---|"]
    for kind, r in res["kinds"].items():
        # a run before the crash column: in-process, where a crash would have ended the bench
        o = {"crash": 0, **r["outcomes"]}
        out.append(f"| {kind} | {r['inputs']:,} | {o['accepted']:,} | {o['refused']:,} | "
                   f"{o['refused without naming the file']:,} | {o['traceback']:,} | {o['hang']:,} | "
                   f"{o['crash']:,} |")
    m = res["machine"]
    out.append(f"\nDamaged inputs of real traces, models, cluster files and Darshan logs "
               f"(`bench/fuzzing.py`), each through the commands a user runs on it; a hang is "
               f"{res['seconds']} s in one command, a crash a command killed by a signal. "
               f"{m['cpu']}, {m['cores']} cores; {m['date']}.")
    return "\n".join(out)


def plural(n, word, ending="s"):
    return f"{n:,} {word}{'' if n == 1 else ending}"


def summary(res):
    """The table in one sentence, for the README."""
    total = {k: sum(r["outcomes"].get(k, 0) for r in res["kinds"].values())
             for k in ("traceback", "hang", "crash", "refused without naming the file")}
    inputs = sum(r["inputs"] for r in res["kinds"].values())
    each = ", ".join(f"{r['inputs']:,} {'Darshan log' if kind == 'darshan' else kind}s"
                     for kind, r in res["kinds"].items())
    dates = sorted({r.get("date") or res["machine"]["date"] for r in res["kinds"].values()})
    m = res["machine"]
    return (f"{inputs:,} damaged traces, models, cluster files and Darshan logs ({each}): "
            f"{plural(total['traceback'], 'traceback')}, {plural(total['hang'], 'hang')}, "
            f"{plural(total['crash'], 'crash', 'es')}, "
            f"{plural(total['refused without naming the file'], 'refusal')} not naming the file. "
            f"{m['cpu']}, {m['cores']} cores; {', '.join(dates)}.")


def publish(res):
    put_block("fuzz", summary(res))
    put_block("fuzz", table(res), page="docs/security.md")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=100_000, help="inputs per reader (default: %(default)s)")
    ap.add_argument("--seconds", type=float, default=20, help="a command past this has hung (default: %(default)s)")
    ap.add_argument("--kinds", default="trace,model,cluster,darshan")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="worker processes (default: the cores, %(default)s)")
    ap.add_argument("--memory-gib", type=int, default=4, help="each worker's memory limit (default: %(default)s)")
    ap.add_argument("--render", action="store_true",
                    help=f"only put the figures of {RESULTS.relative_to(ROOT)} into the docs")
    args = ap.parse_args()
    if args.render:
        return publish(json.loads(RESULTS.read_text()))
    if args.inputs < 1 or args.jobs < 1:
        ap.error("--inputs and --jobs: at least 1")
    kinds = args.kinds.split(",")
    bad = set(kinds) - {"trace", "job", "model", "cluster", "darshan"}
    if bad:
        ap.error(f"--kinds: {', '.join(sorted(bad))}: expected trace, job, model, cluster and/or darshan")
    with tempfile.TemporaryDirectory(prefix="iomodel-fuzz-") as tmp:
        work = Path(tmp)
        # the traces and their model are made under mpirun: only for the kinds that use them
        traces, jobs, model = real_traces(work) if set(kinds) - {"darshan"} else ([], [], None)
        sources = {"trace": traces, "job": jobs, "model": [model, MODEL], "cluster": CLUSTERS,
                   "darshan": darshan_logs() if "darshan" in kinds else []}
        res = {"machine": machine(), "seconds": args.seconds, "kinds": {}}
        # a run of some readers keeps the others' results (each with its own date)
        try:
            before = json.loads(RESULTS.read_text())
            res["kinds"] = {k: v for k, v in before.get("kinds", {}).items() if v.get("date")}
        except (OSError, ValueError):
            pass
        for kind in kinds:
            res["kinds"][kind] = {**run_kind(kind, args.inputs, sources[kind], work, args.seconds, model=model,
                                             jobs=args.jobs, memory_gib=args.memory_gib),
                                  "date": res["machine"]["date"]}
            RESULTS.write_text(json.dumps(res, indent=1) + "\n")     # what is done so far, kept
    print(table(res))
    publish(res)


if __name__ == "__main__":
    main()
