#!/usr/bin/env python3
"""`iomodel analyze` on 1 and on 2 cores: wall time, memory, same model.

Two traces in one job file each: the synthetic BT-IO-like job of 4,096 ranks
(bench/synth_trace.py --job, 1,000 data calls a rank) and a real traced run of
64 ranks (bench/simple_io.c, BT-IO simple-like 64^3 for 10 steps,
oversubscribed on this machine).  Each is analysed end to end, interpreter
start included (iomodel's bytecode cached, as an installed iomodel runs, and
the trace in the page cache: one untimed run of each first), in alternating
pairs: `taskset -c 0 iomodel analyze -j 1` and `iomodel analyze -j 2` (the
ranks read and reduced in two worker processes, analyzer/parallel.py).  Memory is the peak of the process tree's summed
proportional set size (Pss: pages the workers share with the analyzer counted
once), sampled every 100 ms in 3 more runs of each, the median: the timed runs
are not sampled (reading smaps_rollup walks the page tables the workers are
filling, and the sampler takes a share of a core from the 2-core runs).  The
two models are compared whole.  Each pair
also runs two whole 1-core analyses at once, one pinned to each core: twice the
1-core time over theirs is the machine's ceiling, about the most any split of this
work over two cores could give here (both cores' share of the memory system and
caches included).  The spread
of the 1-core runs among themselves is given beside the ratio: a ratio inside
it says nothing.

Writes bench/results/analyze-cores.json and the table between the
<!-- bench:analyze-cores --> markers of docs/performance.md and the README.

usage: .venv/bin/python bench/analyze_cores.py [--pairs 5]
       .venv/bin/python bench/analyze_cores.py --render
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
from doc_blocks import put_block  # noqa: E402
from machine_info import machine  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "analyze-cores.json"
IOMODEL = str(ROOT / ".venv" / "bin" / "iomodel")
ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "IOMODEL_POSIX": "0"}
# the analyses run as installed iomodel runs: from cached bytecode (a shell
# that forbids writing it would have every run compile iomodel's modules anew)
ANALYZE_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def tree_pss_kib(pid):
    """The summed Pss of a process and its descendants (KiB)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in open(f"/proc/{p}/smaps_rollup"):
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
            for t in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in open(f"/proc/{p}/task/{t}/children").read().split()]
        except OSError:
            continue
    return total


def timed(cmd, memory=False):
    """(wall seconds, peak tree Pss in bytes or None) of a command; its memory
    only when asked (a run whose memory is sampled is not timed: reading
    smaps_rollup walks the workers' page tables, which they need too)."""
    if not memory:
        t = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ANALYZE_ENV)
        if proc.returncode:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr.decode()}")
        return time.perf_counter() - t, None
    peak, done = [0], threading.Event()
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ANALYZE_ENV)

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], tree_pss_kib(proc.pid))
            done.wait(0.1)
    th = threading.Thread(target=sample)
    th.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - t
    done.set()
    th.join()
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err.decode()}")
    return wall, peak[0] * 1024


def timed_both(cmds):
    """Wall seconds until every one of `cmds`, started together, is done."""
    t = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ANALYZE_ENV)
             for c in cmds]
    for c, p in zip(cmds, procs):
        _, err = p.communicate()
        if p.returncode:
            raise SystemExit(f"{' '.join(c)} failed:\n{err.decode()}")
    return time.perf_counter() - t


def compare(trace, work, name, pairs):
    from iomodel.analyzer import Trace
    t = Trace(trace, lazy=True)
    runs = {1: [], 2: []}
    models, both = {}, []
    def cmd(jobs):
        return ([shutil.which("taskset"), "-c", "0"] if jobs == 1 else []) + \
            [IOMODEL, "analyze", "-q", "-j", str(jobs), str(trace), "-o", str(work / f"{name}-{jobs}.json")]
    for jobs in (1, 2):         # untimed: the trace in the page cache, the bytecode written
        timed(cmd(jobs))
    for i in range(pairs):
        for jobs in ((1, 2) if i % 2 == 0 else (2, 1)):
            runs[jobs].append(timed(cmd(jobs)))
            models[jobs] = json.loads((work / f"{name}-{jobs}.json").read_text())
        # the machine's own ceiling: two whole 1-core analyses at once, one on each core
        both.append(timed_both([[shutil.which("taskset"), "-c", str(c), IOMODEL, "analyze", "-q", "-j", "1",
                                 str(trace), "-o", str(work / f"{name}-both{c}.json")] for c in (0, 1)]))
    pss = {jobs: [timed(cmd(jobs), memory=True)[1] for _ in range(3)] for jobs in (1, 2)}
    w1, w2 = [w for w, _ in runs[1]], [w for w, _ in runs[2]]
    ratios = [a / b for a, b in zip(w1, w2)]
    ceilings = [2 * a / b for a, b in zip(w1, both)]
    events = sum(len(r.events) for r in t.scan())
    return {"trace": name, "ranks": len(t.rank_files), "events": events, "trace_bytes": t.trace_bytes,
            "files": len(list(Path(trace).iterdir())),
            "wall_1core_s": round(statistics.median(w1), 2), "wall_2cores_s": round(statistics.median(w2), 2),
            "speedup_median": round(statistics.median(ratios), 2),
            "speedup_range": [round(min(ratios), 2), round(max(ratios), 2)],
            "spread_1core": round(max(w1) / min(w1), 2),
            "wall_two_at_once_s": round(statistics.median(both), 2),
            "ceiling_median": round(statistics.median(ceilings), 2),
            "ceiling_range": [round(min(ceilings), 2), round(max(ceilings), 2)],
            "pss_1core_bytes": int(statistics.median(pss[1])),
            "pss_2cores_bytes": int(statistics.median(pss[2])),
            "same_model": models[1] == models[2], "phases": len(models[1]["phases"])}


def real_run(work, ranks):
    exe = work / "simple_io"
    subprocess.run(["mpicc", "-O2", "-o", str(exe), str(ROOT / "bench" / "simple_io.c"), "-lm"], check=True)
    data, trace = work / "data", work / "trace-real"
    data.mkdir()
    subprocess.run([IOMODEL, "trace", "-o", str(trace), "--", "mpirun", "--oversubscribe", "-np", str(ranks),
                    str(exe), str(data), "64", "10"], check=True, capture_output=True,
                   env={**os.environ, **ENV})
    shutil.rmtree(data)
    return trace


def table(res):
    out = ["| trace | ranks | events | trace | files | 1 core | 2 cores | speedup (range) | 1-core spread | "
           "machine's ceiling (range) | memory 1 core / 2 cores | same model |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        out.append(f"| {r['trace']} | {r['ranks']:,} | {r['events']:,} | {r['trace_bytes'] / 2**20:.1f} MiB | "
                   f"{r['files']} | {r['wall_1core_s']} s | {r['wall_2cores_s']} s | "
                   f"x{r['speedup_median']} ({r['speedup_range'][0]} to {r['speedup_range'][1]}) | "
                   f"x{r['spread_1core']} | x{r['ceiling_median']} ({r['ceiling_range'][0]} to "
                   f"{r['ceiling_range'][1]}) | {r['pss_1core_bytes'] / 2**20:.0f} / "
                   f"{r['pss_2cores_bytes'] / 2**20:.0f} MiB | {'yes' if r['same_model'] else 'NO'} |")
    m = res["machine"]
    out.append("")
    out.append(f"{m['cpu']}, {m['cores']} cores, Linux {m['kernel']}; `iomodel analyze` end to end (interpreter "
               f"start included), 1 core: `taskset -c 0 ... -j 1`, 2 cores: `-j 2`; medians of {res['pairs']} "
               f"alternating pairs, the pairs' ratios in brackets; the machine's ceiling: 2 x the 1-core "
               f"time / the time of two 1-core analyses at once (`taskset -c 0` and `-c 1`), each pair's, "
               f"about the most any split of this work over the two cores could reach; memory: peak summed Pss "
               f"of the process tree, median of 3 runs apart from the timed ones ({res['date']}).")
    return "\n".join(out)


def summary(res):
    """The README's line: each trace's speedup and whether the models agree."""
    parts = [f"{r['ranks']:,} ranks ({r['trace'].split(' (')[0]}, {r['events']:,} events) "
             f"x{r['speedup_median']} ({r['wall_1core_s']} s to {r['wall_2cores_s']} s; the machine's "
             f"ceiling x{r['ceiling_median']})" for r in res["rows"]]
    same = all(r["same_model"] for r in res["rows"])
    return (f"On 2 cores (`analyze -j 2`, [bench/analyze_cores.py](docs/performance.md)): " + "; ".join(parts) +
            f"; the same model as on one: {'yes' if same else 'NO'} ({res['date']}).")


def publish(res):
    put_block("analyze-cores", table(res), "docs/performance.md")
    put_block("analyze-cores", summary(res), "README.md")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--synth-ranks", type=int, default=4096)
    ap.add_argument("--synth-calls", type=int, default=1000)
    ap.add_argument("--real-ranks", type=int, default=64)
    ap.add_argument("--render", action="store_true")
    args = ap.parse_args()
    if args.render:
        res = json.loads(RESULTS.read_text())
    else:
        import synth_trace
        base = "/dev/shm" if os.path.isdir("/dev/shm") else None
        with tempfile.TemporaryDirectory(dir=base) as w:
            work = Path(w)
            rows = []
            synth_trace.write_trace(work / "synth", args.synth_ranks, args.synth_calls, job=True)
            rows.append(compare(work / "synth", work, f"synthetic BT-IO-like ({args.synth_calls:,} calls a rank)",
                                args.pairs))
            print(rows[-1], flush=True)
            shutil.rmtree(work / "synth")
            real = real_run(work, args.real_ranks)
            rows.append(compare(real, work, "BT-IO simple-like (simple_io 64^3, 10 steps), traced", args.pairs))
            print(rows[-1], flush=True)
        m = machine()
        res = {"machine": m, "pairs": args.pairs, "date": time.strftime("%Y-%m-%d"), "rows": rows}
        RESULTS.write_text(json.dumps(res, indent=1) + "\n")
    print(table(res))
    publish(res)


if __name__ == "__main__":
    main()
