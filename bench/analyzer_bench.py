#!/usr/bin/env python3
"""Analyzer speed benchmark: events/s and peak memory on one core; model size vs np and rep.

(a) Writes a synthetic BT-IO-like trace of 1024 ranks x 10^4 data calls
(bench/synth_trace.py, about 10^7 events, 315 MiB) in /dev/shm (or a temp
dir), then, each in its own process pinned to one core (taskset -c 0), times
the reading stage (Trace(dir), .events, .extents) and the whole analysis
(`iomodel analyze DIR -o model.json`): wall time and peak RSS (wait4's
rusage of that process).  A stage slower than the goal is profiled with
cProfile (top functions in the results).
(b) Model size vs np (4 ... 1024, rep 100) and rep (10, 100, 1000 at np 64),
for the BT-IO-like pattern (writes 120 communication calls apart: one phase
per write, the reads one phase of rep `rep`) and a fully regular one (writes
1 call apart too: two phases).

Writes bench/results/analyzer.json, prints the tables and puts them between
the <!-- bench:analyzer --> markers of the README and docs/performance.md (the
model sizes there only); --render does only that, from the results file.

usage: .venv/bin/python bench/analyzer_bench.py [--ranks R] [--calls N] [--repeats K] [--no-profile] [--no-sweep]
       .venv/bin/python bench/analyzer_bench.py --render
"""
import argparse
import datetime
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
import synth_trace  # noqa: E402
from doc_blocks import put_block  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "analyzer.json"


def shown(cmd):
    """A command as the results file keeps it: no path of this machine's checkout."""
    return " ".join("python" if str(c) == sys.executable else str(c) for c in cmd)
GOALS = {"events_per_s": 2e6, "peak_rss_per_trace_byte": 4}
PY = sys.executable
TASKSET = shutil.which("taskset")
ANALYZE_BUDGET_S = 150          # repeat the full analysis while under this much time

READ_STAGE = """\
import json, sys
from iomodel.analyzer import Trace
t = Trace(sys.argv[1])
print(json.dumps({"events": t.events.num_rows, "extents": t.extents.num_rows}))
"""

# The reading stage step by step, with the RSS after each step.
READ_STEPS = """\
import json, re, sys, time
t00 = time.perf_counter()
def mem():
    s = open("/proc/self/status").read()
    return {k: int(re.search(k + r":\\s+(\\d+)", s).group(1)) * 1024 for k in ("VmRSS", "VmHWM")}
out = []
def step(name, t):
    out.append(dict(step=name, s=round(time.perf_counter() - t, 3), **{k.lower() + "_bytes": v for k, v in mem().items()}))
t = time.perf_counter()
import numpy, pyarrow
from iomodel.analyzer import Trace
step("interpreter imports (numpy, pyarrow, iomodel)", t)
t = time.perf_counter(); tr = Trace(sys.argv[1]); step("Trace(dir): read and check the rank files (analyzer/tracefile.py)", t)
t = time.perf_counter(); tr._links; step("link opens, views, requests (analyzer/linking.py link_rank)", t)
t = time.perf_counter(); tr.events; tr.extents; step("events and extents tables (analyzer/trace.py _tables, linking.resolve_rank)", t)
extra = {"events_table_bytes": tr.events.nbytes, "extents_table_bytes": tr.extents.nbytes}
if len(sys.argv) > 2:  # the rest of `iomodel analyze`, step by step (what cmd_analyze calls)
    from iomodel.analyzer.ops import ops_from_trace
    from iomodel.analyzer.phases import build_model
    from iomodel.models import save_model
    t = time.perf_counter(); ops = ops_from_trace(tr); step("ops table (analyzer/ops.py ops_from_trace)", t)
    t = time.perf_counter(); model = build_model(ops); step("phases and model (analyzer/phases.py build_model)", t)
    t = time.perf_counter(); save_model(model, sys.argv[2]); step("validate and write the model (models save_model)", t)
print(json.dumps(dict(steps=out, **extra)))
"""


def machine():
    import numpy
    import pyarrow
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((int(l.split()[1]) * 1024 for l in open("/proc/meminfo") if l.startswith("MemTotal")), None)
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_bytes": mem, "kernel": platform.release(),
            "python": platform.python_version(), "numpy": numpy.__version__, "pyarrow": pyarrow.__version__,
            "date": datetime.date.today().isoformat()}


def run(cmd, work, pin=True):
    """Run cmd in its own process (pinned to core 0); wall time and that process's rusage."""
    full = ([TASKSET, "-c", "0"] if pin and TASKSET else []) + [str(c) for c in cmd]
    with open(work / "stdout", "w+") as out, open(work / "stderr", "w+") as err:
        t = time.perf_counter()
        p = subprocess.Popen(full, stdout=out, stderr=err, cwd=ROOT)
        _, status, ru = os.wait4(p.pid, 0)  # taskset execs: this is the Python process's own rusage
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {"rc": p.returncode, "wall_s": round(wall, 3), "user_s": round(ru.ru_utime, 3),
                "sys_s": round(ru.ru_stime, 3), "peak_rss_bytes": ru.ru_maxrss * 1024,
                "minor_faults": ru.ru_minflt, "stdout": out.read(), "stderr": err.read()}


def measure(name, cmd, work, repeats, events, trace_bytes, check, budget=None):
    runs = []
    t = time.perf_counter()
    while len(runs) < repeats and (budget is None or not runs or time.perf_counter() - t < budget):
        r = run(cmd, work)
        if r["rc"] != 0:
            return {"ok": False, "command": shown(cmd), "rc": r["rc"],
                    "note": f"{name} failed: " + r["stderr"].strip()[-2000:]}
        check(r)
        print(f"{name} run {len(runs) + 1}: {r['wall_s']:.2f} s wall ({r['user_s']:.2f} user, "
              f"{r['sys_s']:.2f} sys), peak RSS {r['peak_rss_bytes'] / 2**20:.0f} MiB", file=sys.stderr)
        runs.append({k: v for k, v in r.items() if k not in ("stdout", "stderr", "rc")})
    wall = statistics.median(r["wall_s"] for r in runs)
    rss = statistics.median(r["peak_rss_bytes"] for r in runs)
    return {"ok": True, "command": shown(cmd), "runs": runs, "repeats": len(runs),
            "wall_s_median": round(wall, 3),
            "user_s_median": round(statistics.median(r["user_s"] for r in runs), 3),
            "sys_s_median": round(statistics.median(r["sys_s"] for r in runs), 3),
            "events_per_s": round(events / wall),
            "peak_rss_bytes_median": int(rss),
            "peak_rss_per_trace_byte": round(rss / trace_bytes, 2),
            "meets_goals": events / wall >= GOALS["events_per_s"] and rss / trace_bytes < GOALS["peak_rss_per_trace_byte"]}


def profile(cmd_tail, work, top=15):
    """cProfile of `python -m cProfile -o F <cmd_tail>` pinned to core 0: top functions."""
    prof = work / "profile.out"
    r = run([PY, "-m", "cProfile", "-o", prof, *cmd_tail], work)
    if r["rc"] != 0:
        return {"note": "profile run failed: " + r["stderr"][-500:]}
    st = pstats.Stats(str(prof))

    def where(k):
        f, line, fn = k
        try:
            f = str(Path(f).relative_to(ROOT))
        except ValueError:
            f = f.replace(str(Path(PY).parent.parent), "<venv>") if f != "~" else "<built-in>"
        return f"{f}:{line}({fn})"
    rows = [(k, v) for k, v in st.stats.items()]
    tot = sorted(rows, key=lambda kv: -kv[1][2])[:top]
    ours = sorted([kv for kv in rows if kv[0][0].startswith(str(ROOT)) and ".venv" not in kv[0][0]],
                  key=lambda kv: -kv[1][3])[:top]
    fmt = lambda kv: {"where": where(kv[0]), "calls": kv[1][1], "self_s": round(kv[1][2], 3),  # noqa: E731
                      "cumulative_s": round(kv[1][3], 3)}
    prof.unlink()
    return {"total_s": round(st.total_tt, 3), "by_self_time": [fmt(kv) for kv in tot],
            "project_by_cumulative_time": [fmt(kv) for kv in ours]}


def analyze_available():
    p = subprocess.run([PY, "-m", "iomodel", "analyze", "--help"], capture_output=True, text=True, cwd=ROOT)
    return p.returncode == 0


def model_info(path):
    m = json.loads(Path(path).read_text())
    hosts = m.get("application", {}).get("hosts", {})
    whole = len(json.dumps(m, indent=1))
    m.get("application", {})["hosts"] = {}
    hosts_bytes = whole - len(json.dumps(m, indent=1))  # what the hosts map takes (one entry per host)
    size = Path(path).stat().st_size
    return {"model_bytes": size, "model_bytes_without_hosts": size - hosts_bytes, "hosts": len(hosts),
            "phases": len(m.get("phases", [])),
            "runs": m.get("runs"), "max_comm_gap": m.get("analysis", {}).get("max_comm_gap"),
            "reps": sorted({p["rep"] for p in m.get("phases", [])})}


def big_trace(args, work, res):
    tdir = work / "trace"
    t = time.perf_counter()
    info = synth_trace.write_trace(tdir, args.ranks, args.calls, args.rs)
    gen = time.perf_counter() - t
    events, size = info["events"], info["trace_bytes"]
    print(f"trace: {events} events, {size / 2**20:.0f} MiB in {tdir} ({gen:.1f} s to write)", file=sys.stderr)
    res["trace"] = {k: info[k] for k in ("ranks", "calls", "rs", "events", "trace_bytes", "write_gap", "read_gap")}
    res["trace"].update(where=str(work.parent), bytes_per_event=round(size / events, 2),
                        synth_seconds=round(gen, 2), synth_events_per_s=round(events / gen))

    script = work / "read_stage.py"
    script.write_text(READ_STAGE)

    def check_read(r):
        got = json.loads(r["stdout"].strip().splitlines()[-1])
        want = {"events": events, "extents": info["ranks"] * info["calls"]}
        assert got == want, f"reader gave {got}, expected {want}"

    base = measure("startup", [PY, "-c", "import numpy, pyarrow, iomodel.analyzer"], work, args.repeats,
                   1, size, lambda r: None)
    res["startup"] = {"wall_s_median": base["wall_s_median"], "peak_rss_bytes_median": base["peak_rss_bytes_median"],
                      "what": "python -c 'import numpy, pyarrow, iomodel.analyzer' (included in every stage)"}
    res["read"] = measure("read", [PY, script, tdir], work, args.repeats, events, size, check_read)
    res["read"]["what"] = "Trace(dir); .events; .extents (iomodel.analyzer)"
    steps = run([PY, "-c", READ_STEPS, tdir], work)
    if steps["rc"] == 0:
        res["read"]["steps"] = json.loads(steps["stdout"].strip().splitlines()[-1])
    if args.profile and res["read"]["ok"] and not res["read"]["meets_goals"]:
        print("read: a goal is missed, profiling", file=sys.stderr)
        res["read"]["profile"] = profile([script, tdir], work)

    model = work / "model.json"
    cmd = [PY, "-m", "iomodel", "analyze", tdir, "-o", model, "-q"]
    if not analyze_available():
        res["analyze"] = {"ok": False, "command": shown(cmd),
                          "note": "`iomodel analyze` does not exist yet: only the reading stage was measured"}
        return

    def check_model(r):
        assert model.is_file(), "analyze wrote no model"
    res["analyze"] = measure("analyze", cmd, work, args.repeats, events, size, check_model, budget=ANALYZE_BUDGET_S)
    res["analyze"]["what"] = "iomodel analyze TRACE -o model.json (read, ops table, phases, model, validation, JSON)"
    if res["analyze"]["ok"]:
        res["analyze"]["model"] = model_info(model)
        if args.profile and not res["analyze"]["meets_goals"]:
            print("analyze: a goal is missed, profiling", file=sys.stderr)
            res["analyze"]["profile"] = profile(["-m", "iomodel", "analyze", tdir, "-o", model, "-q"], work)
            steps = run([PY, "-c", READ_STEPS, tdir, work / "model-steps.json"], work)
            res["analyze"]["steps"] = (json.loads(steps["stdout"].strip().splitlines()[-1]) if steps["rc"] == 0
                                       else {"note": "step-by-step run failed (internal API changed?): "
                                             + steps["stderr"].strip()[-500:]})


PATTERNS = {"btio": {"write_gap": 120, "read_gap": 1,
                     "what": "BT-IO-like: writes 120 communication calls apart (one phase each), "
                             "reads 1 apart (one phase of rep `rep`)"},
            "regular": {"write_gap": 1, "read_gap": 1,
                        "what": "writes and reads 1 communication call apart: two phases of rep `rep`"}}
SWEEP_NP = [4, 16, 64, 256, 1024]
SWEEP_REP = [10, 100, 1000]


def sweep(args, work):
    """Model size vs np (rep 100) and vs rep (np 64); rep = writes = reads per rank."""
    have = analyze_available()
    points = [(n, 100) for n in SWEEP_NP] + [(64, r) for r in SWEEP_REP if r != 100]
    out = {"note": None if have else "`iomodel analyze` does not exist yet: no model sizes", "patterns": {}}
    for name, pat in PATTERNS.items():
        rows = []
        for np_, rep in points:
            tdir = work / f"{name}-np{np_:04d}-rep{rep:04d}"
            info = synth_trace.write_trace(tdir, np_, 2 * rep, args.rs, pat["write_gap"], pat["read_gap"])
            synth_trace.check(info, cli=False)  # the generator's output reads back as generated
            row = {"np": np_, "rep": rep, "events": info["events"], "trace_bytes": info["trace_bytes"]}
            if have:
                model = tdir / "model.json"
                r = run([PY, "-m", "iomodel", "analyze", tdir, "-o", model, "-q"], work)
                if r["rc"] == 0:
                    row.update(model_info(model), analyze_s=r["wall_s"])
                else:
                    row["error"] = r["stderr"].strip()[-500:]
            print(f"sweep {name} np {np_} rep {rep}: {row.get('model_bytes')} B model, "
                  f"{row.get('phases')} phases", file=sys.stderr)
            rows.append(row)
            shutil.rmtree(tdir)
        sizes = lambda sel: [r.get("model_bytes") for r in rows if sel(r)]  # noqa: E731
        by_np = sizes(lambda r: r["rep"] == 100)
        by_rep = sorted(((r["rep"], r.get("model_bytes")) for r in rows if r["np"] == 64))
        growth = lambda v: round(max(v) / min(v), 3) if v and None not in v else None  # noqa: E731
        by_np_nohosts = [r.get("model_bytes_without_hosts") for r in rows if r["rep"] == 100]
        out["patterns"][name] = {**pat, "points": rows,
                                 "growth_np_4_to_1024": growth(by_np),
                                 "growth_np_4_to_1024_without_hosts": growth(by_np_nohosts),
                                 "growth_rep_10_to_1000": growth([b for _, b in by_rep])}
    return out


def fmt_rate(x):
    return f"{x / 1e6:.2f} M events/s"


def table(res):
    t = res["trace"]
    out = [f"Trace: {t['ranks']} ranks x {t['calls']} data calls = {t['events']:,} events, "
           f"{t['trace_bytes'] / 2**20:.0f} MiB ({t['bytes_per_event']} B/event), synthetic BT-IO-like "
           f"(`bench/synth_trace.py`, written at {t['synth_events_per_s'] / 1e6:.1f} M events/s).", "",
           "| stage (one core) | wall | speed | peak memory | memory / trace size | goal |",
           "|---|---|---|---|---|---|"]
    for key, label in (("read", "reading: `Trace(dir)`, `.events`, `.extents`"),
                       ("analyze", "`iomodel analyze` end to end")):
        s = res.get(key)
        if not s:
            continue
        if not s["ok"]:
            out.append(f"| {label} | not measured: {s['note'].splitlines()[0][:160]} | | | | |")
            continue
        out.append(f"| {label} | {s['wall_s_median']:.1f} s | {fmt_rate(s['events_per_s'])} | "
                   f"{s['peak_rss_bytes_median'] / 2**30:.2f} GiB | {s['peak_rss_per_trace_byte']:.1f} x | "
                   f">= {GOALS['events_per_s'] / 1e6:.0f} M events/s, < {GOALS['peak_rss_per_trace_byte']} x |")
    m = res["machine"]
    reps = res.get("read", {}).get("repeats")
    an = res.get("analyze", {}).get("repeats")
    out.append(f"\n{m['cpu']}, {m['cores']} cores, Linux {m['kernel']}, Python {m['python']}, numpy {m['numpy']}, "
               f"pyarrow {m['pyarrow']}; each stage in its own process pinned with `taskset -c 0`, trace in "
               f"{t['where']}; medians of {reps} runs (analyze: {an}), interpreter start and imports "
               f"({res['startup']['wall_s_median']:.2f} s) included ({m['date']}).")
    return "\n".join(out)


def sweep_table(res):
    out = []
    sw = res.get("sweep")
    if sw and sw["patterns"]:
        first = next(iter(sw["patterns"].values()))["points"]
        cols = [p for p in first]
        head = [f"np {p['np']}, rep {p['rep']}" for p in cols]
        out += ["Model size (bytes of model.json) vs np and rep (rep: writes = reads per rank):", "",
                "| pattern | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
        for name, p in sw["patterns"].items():
            cells = [f"{q['model_bytes']:,} ({q['phases']} ph.)" if q.get("model_bytes") else "-" for q in p["points"]]
            out.append(f"| {name}: {p['what']} | " + " | ".join(cells) + " |")
        out.append("\nLargest / smallest size: " + "; ".join(
            f"{name}: over np x{p['growth_np_4_to_1024']} (x{p['growth_np_4_to_1024_without_hosts']} without "
            f"`application.hosts`, one entry per host, {synth_trace.RANKS_PER_HOST} ranks per synthetic host), "
            f"over rep x{p['growth_rep_10_to_1000']}" for name, p in sw["patterns"].items()) + ".")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--calls", type=int, default=10_000)
    ap.add_argument("--rs", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=5, help="runs per stage (median); the full "
                    f"analysis repeats only while under {ANALYZE_BUDGET_S} s")
    ap.add_argument("--no-profile", dest="profile", action="store_false", help="do not profile slow stages")
    ap.add_argument("--no-sweep", dest="sweep", action="store_false", help="skip the model-size sweep")
    ap.add_argument("--render", action="store_true",
                    help=f"only put the figures of {RESULTS.relative_to(ROOT)} into the docs")
    args = ap.parse_args()
    if args.render:
        return publish(json.loads(RESULTS.read_text()))
    if not TASKSET:
        print("analyzer_bench: taskset not found: stages run unpinned", file=sys.stderr)
    # the trace lives in memory (tmpfs) when there is room for it and the runs' own copies
    need = args.ranks * (args.calls + 4) * 32 * 3
    base = "/dev/shm" if os.path.isdir("/dev/shm") and shutil.disk_usage("/dev/shm").free > need else None
    work = Path(tempfile.mkdtemp(prefix="iomodel-abench-", dir=base))
    res = {"machine": machine(), "pinned": bool(TASKSET), "goals": GOALS}
    try:
        big_trace(args, work, res)
        if args.sweep:
            res["sweep"] = sweep(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(res, indent=2) + "\n")
    print(table(res) + "\n\n" + sweep_table(res))
    publish(res)


def publish(res):
    """The stage table into the README and docs/performance.md, the model sizes there only."""
    put_block("analyzer", table(res))
    put_block("analyzer", table(res), page="docs/performance.md")
    put_block("analyzer-sweep", sweep_table(res), page="docs/performance.md")


if __name__ == "__main__":
    main()
