#!/usr/bin/env python3
"""Fuzz iomodel's readers at scale: damaged traces, models, cluster files,
Darshan logs, type records, sets of models to extrapolate, launcher options
and output targets (bench/fuzzing.py), each run through the commands a user
would run on it, in this process (Darshan logs: `iomodel analyze` as a
process of its own); how many were accepted, refused with a message naming
the file, refused without naming it, went over the limits (more than 2 GiB
resident, or out of memory), ended in a traceback, hung, crashed (killed by
a signal), got launcher options past the allow-list (a bypass) or left an
output target other than it should be (a target violation).

The seed inputs are real: traces of examples/btio_like.c and
tests/programs/nonblocking.c made here under mpirun (kind "trace": rank files;
kind "job": btio_like's in one job file), the model of the first,
a paper model, the shipped cluster descriptions, and Darshan logs of three
formats (kind "darshan": tests/fixtures/darshan's, Darshan 3.5.0, with and
without DXT, and two of the PyDarshan wheel's, of Darshan 3.1 and 3.2); for
kind "types", traces of programs whose views have rich filetypes
(tests/programs/view_types.c, huge_view.c, many_views.c, btio_like); for
"extrapolate", models of btio_like, s3d_like and ior_like traced here at 2 to
4 processes, and the paper's BT-IO and S3D-IO models; for "launcher", the
shipped cluster descriptions; for "output", btio_like's trace and model; for
"space", the testbed's space and seed 000's (their kinds' cluster files by
absolute path), compared and designed for the paper's BT-IO model.
Each row says the code it ran on (code_version) and its seeds; a run of
--first-seed N whose seeds follow a row's of the same code and sources adds to
that row, so that 10^5 inputs of a slow reader can be run in parts. Inputs
past a limit, and the slowest, are kept (--keep). Writes
bench/results/fuzz.json and the table between the README's and
docs/security.md's <!-- bench:fuzz --> markers; --render does only that.

usage: .venv/bin/python bench/fuzz.py [--inputs 100000] [--kinds trace,job,...] [--jobs 2]
                                      [--seconds 20] [--limit-gib 2] [--keep DIR] [--first-seed N]
       .venv/bin/python bench/fuzz.py --render
"""
import argparse
import collections
import hashlib
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
CLUSTERS = [ROOT / "cluster" / "shipped" / f"{n}.yaml" for n in ("vc3", "vc4", "local")]
SPACES = [ROOT / "testbed" / "testbed-space.yaml", ROOT / "cluster" / "shipped" / "spaces" / "ec2-cc2.yaml"]
# MPI-IO and POSIX with DXT, stdio only (no DXT), Darshan 3.2's HDF5 IOR and 3.1's dxt.darshan
DARSHAN_LOGS = [ROOT / "tests" / "fixtures" / "darshan" / f"{n}.darshan"
                for n in ("ior_mpiio_e", "posix_fpp", "rank0_writer_stdio")]
WHEEL_LOGS = ("ior_hdf5_example.darshan", "dxt.darshan")
# the folders of the code a row is of (pyproject.toml's wheel.packages)
CODE_DIRS = ("iomodel", "analyzer", "tracer", "models", "replay", "cluster")


def code_version():
    """Which code a row is of: a hash of the git trees of the package's folders,
    so that rows run at different commits that changed only docs or benches
    are seen to be of one code; "+changed" when the checkout differs from them."""
    try:
        git = ["git", "-C", str(ROOT)]
        trees = subprocess.run(git + ["rev-parse"] + [f"HEAD:{d}" for d in CODE_DIRS],
                               capture_output=True, text=True, check=True).stdout
        changed = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no", "--", *CODE_DIRS],
                                 capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None                                     # not a git checkout
    return hashlib.sha1(trees.encode()).hexdigest()[:10] + ("+changed" if changed else "")


def darshan_logs():
    import darshan.log_utils
    return DARSHAN_LOGS + [Path(darshan.log_utils.get_log_path(n)) for n in WHEEL_LOGS]


def _trace(work, name, src, np_, args, join="0"):
    """A trace of program `src` at np_ processes, in rank files (join "0") or one job file."""
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "IOMODEL_JOIN": join}
    exe, data, trace = work / src.stem, work / f"{name}-data", work / f"{name}-trace"
    data.mkdir(exist_ok=True)
    if not exe.exists():
        subprocess.run(["mpicc", "-O1", "-o", exe, src], check=True)
    subprocess.run(IOMODEL + ["trace", "-o", trace, "--", "mpirun", "--oversubscribe", "-np", str(np_),
                              exe, data, *map(str, args)], check=True, capture_output=True, env=env)
    shutil.rmtree(data)
    return trace


def type_traces(work):
    """Traces whose views' filetypes the trace describes (type records): every
    constructor (view_types, one rank, no data moved), a 16 Mi-piece pencil
    (huge_view), views of 4 Mi pieces of which the accesses need the first
    (many_views, 2 views), and btio_like's subarray."""
    programs = ROOT / "tests" / "programs"
    return [_trace(work, "view_types", programs / "view_types.c", 1, []),
            _trace(work, "huge_view", programs / "huge_view.c", 2, []),
            _trace(work, "many_views", programs / "many_views.c", 2, [2, 64]),
            _trace(work, "btio_like-types", ROOT / "examples" / "btio_like.c", 2, [8, 8, 8, 2])]


def model_sets(work):
    """Sets of models of one application for extrapolate (bench/fuzz_extrapolate.py):
    btio_like, s3d_like and ior_like traced here (np 2 and 4 at one size, np 2
    at another; ior_like at np 2, 3 and 4), and the paper's BT-IO and S3D-IO."""
    import fuzz_extrapolate
    programs, made = ROOT / "tests" / "programs", {}
    runs = {"btio_like": (ROOT / "examples" / "btio_like.c", [(2, [8, 8, 8, 2]), (4, [8, 8, 8, 2]),
                                                              (2, [16, 16, 16, 2])]),
            "s3d_like": (programs / "s3d_like.c", [(2, ["blocking", 16, 16, 16]), (4, ["blocking", 16, 16, 16]),
                                                   (2, ["blocking", 32, 32, 32])]),
            "ior_like": (programs / "ior_like.c", [(2, ["segmented"]), (3, ["segmented"]), (4, ["segmented"])])}
    for name, (src, points) in runs.items():
        made[name] = []
        for np_, args in points:
            label = f"{name}-{np_}-{'-'.join(map(str, args))}"
            trace = _trace(work, label, src, np_, args)
            model = work / f"{label}.json"
            subprocess.run(IOMODEL + ["analyze", trace, "-o", model, "-q"], check=True)
            made[name].append(model)
    ex = ROOT / "models" / "examples"
    # grids fastest-varying axis first: MPI_Dims_create's X x Y x Z reversed (Z fastest in C)
    return fuzz_extrapolate.write_sets(work, {
        "btio_like": {"models": made["btio_like"], "sizes": [8, 8, 16], "size_arg": 2,
                      "grids": ["1x1x2", "1x2x2", "1x1x2"]},
        "s3d_like": {"models": made["s3d_like"], "sizes": [16, 16, 32], "size_arg": 3,
                     "grids": ["1x1x2", "1x2x2", "1x1x2"]},
        "ior_like": {"models": made["ior_like"]},
        "btio-B": {"models": [ex / f"btio-B-{n}.json" for n in (4, 9, 16)]},
        "s3d-paper": {"models": [ex / "s3d-200-8.json", ex / "s3d-200-16.json", ex / "s3d-400-8.json"],
                      "sizes": [200, 200, 400]}})


def real_traces(work):
    """Traces of btio_like and nonblocking, 2 ranks, in rank files, the model of
    the first, and btio_like's again in one job file (IOMODEL_JOIN=1)."""
    btio, programs = ROOT / "examples" / "btio_like.c", ROOT / "tests" / "programs"
    out = [_trace(work, "btio_like", btio, 2, [8, 8, 8, 2]),
           _trace(work, "nonblocking", programs / "nonblocking.c", 2, []),
           _trace(work, "btio_like-job", btio, 2, [8, 8, 8, 2], join="1")]
    model = work / "btio_like.json"
    subprocess.run(IOMODEL + ["analyze", out[0], "-o", model, "-q"], check=True)
    return out[:2], out[2:], model


def _part(kind, seeds, src, work, seconds, model, limit, keep):
    """One worker's share of a source's inputs: outcome counts, the first
    examples, the largest peak memory and the longest command (with the seed),
    and each input past a limit or slow kept in `keep`/KIND/."""
    counts, examples, peak, slowest = collections.Counter(), {}, (0, None), (0.0, None)
    slow_kept = 0
    for seed, result, argv, msg, used, secs, target in fuzzing.fuzz(kind, seeds, src, work, seconds,
                                                                  model=model, limit=limit):
        counts[result] += 1
        peak, slowest = max(peak, (used, seed)), max(slowest, (secs, seed))
        if result not in ("accepted", "refused") and len(examples.get(result, [])) < 5:
            examples.setdefault(result, []).append(
                {"seed": seed, "source": str(Path(src).name), "command": [str(a) for a in argv],
                 "message": msg[:400]})
        finding = result not in ("accepted", "refused")
        if finding or (secs > seconds / 4 and slow_kept < 20):      # a finding, or one of the first slow ones
            slow_kept += not finding
            _keep(keep, kind, src, seed, target, argv, result, msg, used, secs)
    return counts, examples, peak, slowest


def _keep(keep, kind, src, seed, target, argv, result, msg, used, secs):
    """An input worth a look kept as it was given (its seed makes it again, from its source)."""
    where = Path(keep) / kind / f"{Path(src).stem}-{seed}"
    where.mkdir(parents=True, exist_ok=True)
    # the input, and the other files the command reads (the models beside it, a trace)
    for i, path in enumerate(dict.fromkeys([Path(target), *(Path(a) for a in argv[1:] if isinstance(a, Path))])):
        name = where / f"{i}-{path.name[:100]}"
        if path.is_symlink() or not path.exists():
            continue
        if path.is_dir():
            shutil.copytree(path, name, dirs_exist_ok=True, symlinks=True)
        elif path.is_file():
            shutil.copy(path, name)
    (where / "input.json").write_text(json.dumps(
        {"kind": kind, "source": str(src), "seed": seed, "outcome": result, "command": [str(a) for a in argv],
         "message": msg[:2000], "peak_bytes": used, "seconds": round(secs, 2)}, indent=1) + "\n")


def _limit_memory(gib):
    """A worker's address space, at most `gib` GiB: an input that makes a reader
    allocate without bound ends in its MemoryError, as on a user's machine with
    limits, not in the system's OOM killer."""
    resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))


def run_kind(kind, n, sources, work, seconds, model=None, jobs=1, memory_gib=4, limit_gib=2, keep=None,
             first=0):
    """n inputs of one kind, seeds first to first + n - 1, spread over the
    sources (and over `jobs` worker processes, each in a folder of its own);
    counts and first examples."""
    counts, examples, t0 = collections.Counter(), {}, time.monotonic()
    peak, slowest = (0, None, None), (0.0, None, None)
    per = -(-n // len(sources))
    # spawn: a forked child of a process whose Arrow and numpy threads run can deadlock
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_limit_memory, initargs=(memory_gib,)) as pool:
        for j, src in enumerate(sources):
            seeds = range(first + j * per, first + min(n, (j + 1) * per))
            shares = [(kind, seeds[w::jobs], src, work / kind / f"job{w}", seconds, model, limit_gib << 30, keep)
                      for w in range(jobs)]
            try:
                parts = list(pool.map(_part, *zip(*shares)))
            except BrokenProcessPool:
                kept = Path.cwd() / f"fuzz-died-{kind}"
                shutil.copytree(work / kind, kept, dirs_exist_ok=True, symlinks=True)
                raise SystemExit(f"fuzz {kind}: a worker died on an input of {Path(src).name} (a crash, or "
                                 f"killed by the system); each worker's last input is kept in {kept}/job*/")
            for c, ex, (used, useed), (secs, sseed) in parts:
                counts.update(c)
                for result, items in ex.items():
                    examples.setdefault(result, []).extend(items[:5 - len(examples.get(result, []))])
                peak = max(peak, (used, useed, Path(src).name))
                slowest = max(slowest, (secs, sseed, Path(src).name))
            print(f"fuzz {kind}: {Path(src).name}: {dict(counts)} after {time.monotonic() - t0:.0f} s",
                  file=sys.stderr, flush=True)
    return {"inputs": sum(counts.values()), "outcomes": {k: counts.get(k, 0) for k in fuzzing.OUTCOMES},
            "seconds": round(time.monotonic() - t0, 1), "jobs": jobs, "examples": examples,
            "limit_gib": limit_gib, "most_memory": {"bytes": peak[0], "seed": peak[1], "source": peak[2]},
            "slowest": {"seconds": round(slowest[0], 2), "seed": slowest[1], "source": slowest[2]},
            "sources": [Path(s).name for s in sources], "seeds": [[first, first + n]]}


def merged(old, new):
    """One row of two runs of a reader on the same code whose seeds do not
    overlap (a 10^5 run split over sittings); None when they cannot be one."""
    if not old or old.get("code") is None or old["code"].endswith("+changed") or old.get("code") != new.get("code") \
            or "seeds" not in old \
            or old.get("sources") != new.get("sources") or old.get("limit_gib") != new.get("limit_gib"):
        return None
    if any(a < d and c < b for a, b in old["seeds"] for c, d in new["seeds"]):
        return None                                 # the same inputs twice
    examples = {k: (old["examples"].get(k, []) + v)[:5] for k, v in new["examples"].items()}
    return {**new, "inputs": old["inputs"] + new["inputs"],
            "outcomes": {k: old["outcomes"].get(k, 0) + new["outcomes"].get(k, 0) for k in new["outcomes"]},
            "seconds": round(old["seconds"] + new["seconds"], 1),
            "examples": {**old["examples"], **examples},
            "most_memory": max(old["most_memory"], new["most_memory"], key=lambda m: m["bytes"]),
            "slowest": max(old["slowest"], new["slowest"], key=lambda m: m["seconds"]),
            "seeds": sorted(old["seeds"] + new["seeds"]),
            "date": ", ".join(dict.fromkeys(old["date"].split(", ") + [new["date"]])),
            "cpu": ", ".join(dict.fromkeys(old.get("cpu", "-").split(", ") + [new.get("cpu", "-")]))}


COLUMNS = [("accepted", "accepted"), ("refused", "refused, naming the file"),
           ("refused without naming the file", "refused, not naming it"), ("over the limits", "over the limits"),
           ("traceback", "traceback"), ("hang", "hang"), ("crash", "crash"), ("bypass", "bypass"),
           ("target violation", "target violation")]
# the only kinds whose inputs can be a bypass, or a target violation
ONLY = {"bypass": "launcher", "target violation": "output"}


def table(res):
    out = ["| reader | inputs | " + " | ".join(h for _, h in COLUMNS) + " | code | machine |",
           "|---" * (len(COLUMNS) + 4) + "|"]
    for kind, r in res["kinds"].items():
        # a run before the crash column: in-process, where a crash would have ended the bench
        o, cells = {"crash": 0, **r["outcomes"]}, []
        for key, _ in COLUMNS:
            if ONLY.get(key, kind) != kind:
                cells.append("")                # cannot happen to this kind's inputs
            elif key not in o:
                cells.append("-")               # a run before this column: not measured
            else:
                cells.append(f"{o[key]:,}")
        out.append(f"| {kind} | {r['inputs']:,} | " + " | ".join(cells) + f" | {r.get('code') or '-'} | {r.get('cpu', '-')} |")
    m = res["machine"]
    out.append(f"\nDamaged inputs of real traces, models, cluster files and Darshan logs, type records, sets "
               f"of models to extrapolate, launcher options and output targets (`bench/fuzzing.py`), each "
               f"through the commands a user runs on it; a hang is {res['seconds']} s in one command, a crash "
               f"a command killed by a signal, over the limits a command that held more than "
               f"{res.get('limit_gib', 2)} GiB of memory or ran out of it (-: not counted in that run); "
               f"code: a hash of the package's source trees the row was run on (`code_version`); "
               f"machine: its processor ({m['cores']} cores); {m['date']}.")
    return "\n".join(out)


def plural(n, word, ending="s"):
    return f"{n:,} {word}{'' if n == 1 else ending}"


NAMES = {"space": "space files", "darshan": "Darshan logs", "types": "traces of damaged type records", "extrapolate": "extrapolations",
         "launcher": "launcher option lists", "output": "output targets"}


def summary(res):
    """The table in one sentence, for the README."""
    keys = ("traceback", "hang", "crash", "over the limits", "bypass", "target violation",
            "refused without naming the file")
    total = {k: sum(r["outcomes"].get(k, 0) for r in res["kinds"].values()) for k in keys}
    inputs = sum(r["inputs"] for r in res["kinds"].values())
    measured = sum(r["inputs"] for r in res["kinds"].values() if "over the limits" in r["outcomes"])
    limits = f"{total['over the limits']:,} over the limits" + (
        f" (of the {measured:,} inputs measured)" if measured < inputs else "")
    each = ", ".join(f"{r['inputs']:,} {NAMES.get(kind, kind + 's')}" for kind, r in res["kinds"].items())
    dates = sorted({r.get("date") or res["machine"]["date"] for r in res["kinds"].values()})
    codes = {r.get("code") for r in res["kinds"].values()}
    of = (f"All on one code ({codes.pop()})" if len(codes) == 1 and None not in codes
          else f"Of {len(codes)} versions of the code (docs/security.md)")
    m = res["machine"]
    cpus = ", ".join(dict.fromkeys(c for r in res["kinds"].values() for c in r.get("cpu", m["cpu"]).split(", ")))
    return (f"{inputs:,} hostile inputs ({each}): "
            f"{plural(total['traceback'], 'traceback')}, {plural(total['hang'], 'hang')}, "
            f"{plural(total['crash'], 'crash', 'es')}, {limits}, "
            f"{plural(total['bypass'], 'bypass', 'es')}, {plural(total['target violation'], 'target violation')}, "
            f"{plural(total['refused without naming the file'], 'refusal')} not naming the file. "
            f"{of}; {cpus}, {m['cores']} cores; {', '.join(dates)}.")


def publish(res):
    put_block("fuzz", summary(res))
    put_block("fuzz", table(res), page="docs/security.md")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--inputs", type=int, default=100_000, help="inputs per reader (default: %(default)s)")
    ap.add_argument("--seconds", type=float, default=20, help="a command past this has hung (default: %(default)s)")
    ap.add_argument("--kinds", default="trace,job,model,cluster,darshan,types,extrapolate,launcher,output,space")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="worker processes (default: the cores, %(default)s)")
    ap.add_argument("--limit-gib", type=int, default=2,
                    help="a command that holds more memory than this is over the limits (default: %(default)s)")
    ap.add_argument("--memory-gib", type=int, default=4,
                    help="each worker's address space, past which an allocation fails (default: %(default)s)")
    ap.add_argument("--keep", default="/tmp/iomodel-fuzz-kept",
                    help="where inputs past a limit, and slow ones, are kept (default: %(default)s)")
    ap.add_argument("--first-seed", type=int, default=0, metavar="N",
                    help="the inputs' seeds start at N (default: %(default)s); a run whose seeds follow "
                    "a row's of the same code adds to it: a 10^5 run in parts")
    ap.add_argument("--render", action="store_true",
                    help=f"only put the figures of {RESULTS.relative_to(ROOT)} into the docs")
    args = ap.parse_args()
    if args.render:
        return publish(json.loads(RESULTS.read_text()))
    if args.inputs < 1 or args.jobs < 1:
        ap.error("--inputs and --jobs: at least 1")
    kinds = args.kinds.split(",")
    bad = set(kinds) - set(fuzzing.KINDS)
    if bad:
        ap.error(f"--kinds: {', '.join(sorted(bad))}: expected some of {', '.join(fuzzing.KINDS)}")
    with tempfile.TemporaryDirectory(prefix="iomodel-fuzz-") as tmp:
        work = Path(tmp)
        # the traces and models are made under mpirun: only for the kinds that use them
        mpi_kinds = set(kinds) - {"darshan", "extrapolate", "types", "space"}
        traces, jobs, model = real_traces(work) if mpi_kinds else ([], [], None)
        sources = {"trace": traces, "job": jobs, "model": [model, MODEL], "cluster": CLUSTERS,
                   "darshan": darshan_logs() if "darshan" in kinds else [],
                   "types": type_traces(work) if "types" in kinds else [],
                   "extrapolate": model_sets(work) if "extrapolate" in kinds else [],
                   "launcher": CLUSTERS, "output": traces[:1], "space": SPACES}
        res = {"machine": machine(), "seconds": args.seconds, "limit_gib": args.limit_gib, "kinds": {}}
        code = code_version()
        # a run of some readers keeps the others' results (each with its own date)
        try:
            before = json.loads(RESULTS.read_text())
            res["kinds"] = {k: v for k, v in before.get("kinds", {}).items() if v.get("date")}
        except (OSError, ValueError):
            pass
        for kind in kinds:
            row = {**run_kind(kind, args.inputs, sources[kind], work, args.seconds,
                              model=MODEL if kind == "space" else model,
                              jobs=args.jobs, memory_gib=args.memory_gib, limit_gib=args.limit_gib,
                              keep=args.keep, first=args.first_seed),
                   "date": res["machine"]["date"], "cpu": res["machine"]["cpu"],
                   # a change to the code during the run makes the row of no one version
                   "code": code if code_version() == code else None}
            res["kinds"][kind] = merged(res["kinds"].get(kind), row) or row
            RESULTS.write_text(json.dumps(res, indent=1) + "\n")     # what is done so far, kept
    print(table(res))
    publish(res)


if __name__ == "__main__":
    main()
