#!/usr/bin/env python3
"""`iomodel analyze` as an MPI job against one process and `-j N` (issue 81):
a synthetic trace (bench/synth_trace.py, BT-IO-like, --ranks ranks of
--calls data calls each) analysed serially (-j 1), with -j P, and under
`mpirun -np P`, for each P of --processes.  Per run: events, processes,
wall_s, events/s, the largest peak resident memory of any of its processes
(max_rss_gib_per_process: each process's own, which for -j is the analyzer
and, apart, its largest worker), and whether the model is the serial one,
byte for byte.

Writes bench/results/analyze-mpi.json, its table in docs/performance.md and
the largest bounded run in the README (--render: only those).

With --max-memory, also with each bound in one process (-j 1) and under
mpirun (each process reading its block in pieces where it does not fit:
pieces_per_process); with
--only-bounded, only those (10^8 events: --calls 24414).  Every run's model
is checked for the phases the synthetic trace was made with
(synthetic_phases).  Runs add to the file's, a run of the same events, mode,
processes and bound replacing the old.

usage: .venv/bin/python bench/analyze_mpi.py [--ranks 4096] [--calls 2440] [--processes 2]
           [--max-memory 2GiB,512MiB] [--only-bounded] [--keep DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import synth_trace
from doc_blocks import put_block
from machine_info import machine

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "analyze-mpi.json"
PYTHON = str(ROOT / ".venv" / "bin" / "python")
# each process of a run writes its own peak resident memory (KiB), and its children's
WRAP = ("import json, os, resource, sys\n"
        "from iomodel.cli import main\n"
        "rc = main(sys.argv[2:])\n"
        "me, kids = (resource.getrusage(w).ru_maxrss for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))\n"
        "open(os.path.join(sys.argv[1], f'rss.{os.getpid()}'), 'w').write(json.dumps([me, kids]))\n"
        "sys.exit(rc)\n")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_pml": "ob1"}


def run(launch, trace, model, rss_dir, env, *options):
    """One analysis (`launch`: [] or mpirun's words): its wall time, the largest
    peak resident memory of its processes (GiB) and how many reported."""
    shutil.rmtree(rss_dir, ignore_errors=True)
    rss_dir.mkdir()
    t0 = time.monotonic()
    subprocess.run([*launch, PYTHON, "-c", WRAP, rss_dir, "analyze", trace, "-o", model, "-q", *options],
                   check=True, env=env)
    wall = time.monotonic() - t0
    peaks = [json.loads(f.read_text()) for f in rss_dir.glob("rss.*")]
    return wall, max(max(x) for x in peaks) / 2 ** 20, len(peaks)


def synthetic_phases(ranks, calls):
    """The phases bench/synth_trace.py makes: each of its calls/2 writes a
    phase of its own (120 communication calls apart), its reads one phase."""
    return [("write", ranks, 1)] * (calls // 2) + [("read", ranks, calls - calls // 2)]


def pieces(trace, processes, bound):
    """How many pieces each process reads its block in under `bound` (mpirun;
    one process: -j 1, which holds the analysis too)."""
    from iomodel.analyzer import Trace, memory_bound
    from iomodel.analyzer.parallel import split_pieces, split_sources
    files = Trace(trace, lazy=True).rank_files
    return [len(split_pieces(b, memory_bound.piece_bytes(bound, analyzer=r == 0)))
            for r, b in enumerate(split_sources(files, processes))]


def render(result):
    """The runs as a table in docs/performance.md, and the 10^8 run in the README."""
    rows = ["| events | ranks | how | bound | pieces a process | wall | events/s | largest peak a process "
            "| the synthetic phases | the serial model |", "|---" * 10 + "|"]
    for r in sorted(result["runs"], key=order):
        how = "1 process" if r["mode"] == "serial" else f"`-j {r['processes']}`" if r["mode"] == "-j" \
            else f"`mpirun -np {r['processes']}`"
        same = "-" if r["same_as_serial"] is None else "yes" if r["same_as_serial"] else "**no**"
        rows.append(f"| {r['events']:,} | {r['ranks']:,} | {how} | {r['max_memory'] or '-'} | "
                    f"{', '.join(map(str, r.get('pieces_per_process') or [])) or 'whole'} | {r['wall_s']} s | "
                    f"{r['events_per_s'] / 1e6:.2f} M | {r['max_rss_gib_per_process']:.2f} GiB | "
                    f"{'yes' if r['synthetic_phases'] else '**no**'} | {same} |")
    m = result["machine"]
    note = (f"{m['cpu']}, {m['cores']} cores, {m.get('mpi', '')}; synthetic BT-IO-like jobs "
            f"(`bench/synth_trace.py`, one job.iot each); a process's peak is its maximum resident set "
            f"(-j: the analyzer's or its largest worker's); {m['date']}.")
    put_block("analyze-mpi", "\n".join(rows) + "\n\n" + note, "docs/performance.md")
    big = [r for r in result["runs"] if r["mode"] == "mpirun" and r["max_memory"]]
    if big:
        r = max(big, key=lambda r: r["events"])
        one = next((o for o in result["runs"] if o["events"] == r["events"] and o["mode"] == "-j"
                    and o["processes"] == 1 and o["max_memory"] == r["max_memory"]), None)
        put_block("analyze-mpi", (
            f"As an MPI job under a memory bound ([bench/analyze_mpi.py](docs/performance.md)): "
            f"{r['events']:,} events of {r['ranks']:,} ranks under `mpirun -np {r['processes']}` with "
            f"`--max-memory {r['max_memory']}` in {r['wall_s']} s, {r['events_per_s'] / 1e6:.2f} M events/s, "
            f"each process at most {r['max_rss_gib_per_process']:.2f} GiB, the synthetic phases "
            f"{'exact' if r['synthetic_phases'] else '**not found**'}"
            + (f"; one process under the same bound {one['wall_s']} s (x{one['wall_s'] / r['wall_s']:.2f} on "
               f"{r['processes']})" if one else "") + f" ({m['date']})."))


def order(r):
    return (r["events"], r.get("ranks") or 0, ("serial", "-j", "mpirun").index(r["mode"]), r["processes"],
            r.get("max_memory") or "")


def key(r):
    return (r.get("ranks"), r["events"], r["mode"], r["processes"], r.get("max_memory"))


def main():
    from iomodel.cluster.description import parse_size
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=4096)
    ap.add_argument("--calls", type=int, default=2440, help="data calls per rank (4096 x 2440: 10^7 events)")
    ap.add_argument("--processes", default="2", help="comma-separated process counts (default: %(default)s)")
    ap.add_argument("--max-memory", default="", metavar="SIZE,...",
                    help="also run mpirun -np P with each of these bounds (e.g. 2GiB,512MiB)")
    ap.add_argument("--only-bounded", action="store_true",
                    help="only the bounded runs (a trace too large for one process)")
    ap.add_argument("--keep", type=Path, help="write the trace here and keep it")
    ap.add_argument("-o", type=Path, default=RESULTS)
    ap.add_argument("--render", action="store_true", help="only put the figures of the results file into the docs")
    args = ap.parse_args()
    if args.render:
        return render(json.loads(args.o.read_text()))
    bounds = [x for x in args.max_memory.split(",") if x]
    work = Path(tempfile.mkdtemp(prefix="iomodel-amp-"))
    trace = args.keep or work / "trace"
    try:
        info = synth_trace.write_trace(trace, ranks=args.ranks, calls=args.calls, job=True)
        env = {**os.environ, **MPI_ENV}
        serial = work / "serial.json"
        plan = [] if args.only_bounded else \
            [("serial", 1, None)] + [(m, int(x), None) for x in args.processes.split(",") for m in ("-j", "mpirun")]
        plan += [("-j", 1, b) for b in bounds] + [("mpirun", int(x), b) for x in args.processes.split(",")
                                                  for b in bounds]
        want = synthetic_phases(args.ranks, args.calls)
        runs = []
        for mode, p, bound in plan:
            out = work / f"{mode}{p}{bound or ''}.json"
            launch = ["mpirun", "-np", str(p)] if mode == "mpirun" else []
            options = ([] if launch else ["-j", str(p)]) + (["--max-memory", bound] if bound else [])
            wall, rss, n = run(launch, trace, out, work / "rss", env, *options)
            model = json.loads(out.read_text())
            row = {"mode": mode, "processes": p, "max_memory": bound, "events": info["events"],
                   "ranks": args.ranks, "calls": args.calls,
                   "wall_s": round(wall, 2), "events_per_s": round(info["events"] / wall),
                   "max_rss_gib_per_process": round(rss, 3),
                   "synthetic_phases": [(q["operation"], q["np"], q["rep"]) for q in model["phases"]] == want,
                   "same_as_serial": True if mode == "serial" else
                   out.read_bytes() == serial.read_bytes() if serial.exists() else None}
            if bound:
                row["pieces_per_process"] = pieces(trace, p, parse_size(bound))
            runs.append(row)
            if mode == "serial":
                shutil.copy(out, serial)
            print(json.dumps(row), flush=True)
        old = json.loads(args.o.read_text()).get("runs", []) if args.o.exists() else []
        fresh = {key(r) for r in runs}
        result = {"machine": machine(),
                  "runs": sorted([r for r in old if key(r) not in fresh] + runs,
                                 key=order)}
        args.o.write_text(json.dumps(result, indent=1) + "\n")
        render(result)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
