#!/usr/bin/env python3
"""How far does this machine's own memory bandwidth move from one moment to the next?

tmpfs keeps a file in memory: writing to it is the kernel copying the
application's buffer into page-cache pages, so a tmpfs VC is as fast as the
machine's memory is at the moment.  On a virtual machine sharing its host that
moves with the host's other guests, and no profile measured at one moment can
predict another moment better than it moves (docs/accuracy.md, "tmpfs varies
from launch to launch").  This bench measures it without MPI, iomodel or a file view:
every sample is a new process, started `--gap` s after the last, that

  - copies one `--mib` MiB buffer into another, both touched before
    (numpy.copyto, a memcpy): the first copy, and the median of five;
  - writes `--mib` MiB into a new file on tmpfs (`--dir`, default /dev/shm)
    in 1 MiB write() calls, and removes it.

It records each sample's steal (the CPU time the hypervisor took meanwhile,
/proc/stat) and leaves out of the summary the samples that lost 5% of their
time or more.  Summary per measure: median, 10th and 90th percentiles, fastest
and slowest, (90th - 10th) / median, and the correlation of one sample with the
next (stretches of seconds).  Writes bench/results/memory-drift.json.

usage: .venv/bin/python bench/memory_drift.py [--samples 60] [--gap 0.3] [--mib 16] [--dir /dev/shm]
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy

from iomodel.replay.host import STOLEN_SHARE, steal_s, stolen_since
from machine_info import machine

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "memory-drift.json"

# One sample, in a process of its own (its own pages, as each application launch
# has): prints "first_copy_s median_copy_s tmpfs_write_s".
SAMPLE = r"""
import os, sys, time, numpy
n, path = int(sys.argv[1]), sys.argv[2]
a = numpy.ones(n // 8); b = numpy.zeros(n // 8)          # both touched
copies = []
for _ in range(6):
    t = time.perf_counter(); numpy.copyto(b, a); copies.append(time.perf_counter() - t)
chunk = bytes(a[: (1 << 20) // 8].data)
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
t = time.perf_counter()
for _ in range(n >> 20):
    os.write(fd, chunk)
w = time.perf_counter() - t
os.close(fd); os.unlink(path)
print(copies[0], sorted(copies[1:])[2], w)
"""


def sample(mib, directory):
    before, t0 = steal_s(), time.monotonic()
    try:
        out = subprocess.run([sys.executable, "-c", SAMPLE, str(mib << 20),
                              str(Path(directory) / f"iomodel-memory-drift.{os.getpid()}")],
                             capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        sys.exit("memory_drift: a sample did not end within 120 s")
    if out.returncode != 0:
        sys.exit(f"memory_drift: a sample failed ({out.returncode}): {out.stderr.strip()[-500:]}")
    wall = time.monotonic() - t0
    first, copy, write = (float(x) for x in out.stdout.split())
    return {"first_copy_s": first, "copy_s": copy, "tmpfs_write_s": write, "wall_s": round(wall, 4),
            "steal_s": stolen_since(before)}


def summary(xs):
    """Median, percentiles, extremes, the 10-90 spread over the median, lag-1 correlation."""
    a = numpy.array(xs, dtype=float)
    med = float(numpy.median(a))
    p10, p90 = (float(numpy.percentile(a, q)) for q in (10, 90))
    lag1 = float(numpy.corrcoef(a[:-1], a[1:])[0, 1]) if len(a) > 2 and a.std() > 0 else None
    return {"median_s": med, "p10_s": p10, "p90_s": p90, "min_s": float(a.min()), "max_s": float(a.max()),
            "spread_10_90": (p90 - p10) / med, "max_over_min": float(a.max() / a.min()),
            "lag1_correlation": lag1}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=60, help="processes, one sample each (default 60)")
    ap.add_argument("--gap", type=float, default=0.3, help="seconds between samples (default 0.3)")
    ap.add_argument("--mib", type=int, default=16, help="MiB copied and written per sample (default 16)")
    ap.add_argument("--dir", default="/dev/shm", help="a tmpfs directory (default /dev/shm)")
    ap.add_argument("-o", default=str(RESULTS), help=f"results file (default {RESULTS.relative_to(ROOT)})")
    args = ap.parse_args(argv)
    if args.samples < 3 or args.gap < 0 or args.mib < 1:
        ap.error("--samples must be 3 or more, --gap 0 or more, --mib 1 or more")
    if not Path(args.dir).is_dir():
        ap.error(f"--dir {args.dir}: no such directory")
    samples = []
    for i in range(args.samples):
        samples.append(sample(args.mib, args.dir))
        print(f"[{i + 1}/{args.samples}] copy {samples[-1]['copy_s'] * 1e3:.2f} ms, "
              f"tmpfs write {samples[-1]['tmpfs_write_s'] * 1e3:.2f} ms", file=sys.stderr)
        time.sleep(args.gap)
    calm = [s for s in samples if not (s["steal_s"] and s["steal_s"] >= STOLEN_SHARE * s["wall_s"])]
    result = {
        "machine": machine(),
        "args": {"samples": args.samples, "gap_s": args.gap, "mib": args.mib, "dir": args.dir},
        "set_aside_for_steal": len(samples) - len(calm),
        "summary": {k: summary([s[k] for s in calm]) for k in ("first_copy_s", "copy_s", "tmpfs_write_s")},
        "samples": samples,
    }
    Path(args.o).parent.mkdir(parents=True, exist_ok=True)
    Path(args.o).write_text(json.dumps(result, indent=1) + "\n")
    print(f"{len(calm)} of {len(samples)} samples calm, {args.mib} MiB each, {args.gap} s apart "
          f"({result['machine']['cpu']}, {result['machine']['date']}):")
    print(f"{'measure':<14} {'median ms':>10} {'p10':>8} {'p90':>8} {'min':>8} {'max':>8} {'p90-p10':>8} "
          f"{'max/min':>8} {'lag-1 r':>8}")
    for k, s in result["summary"].items():
        r = "-" if s["lag1_correlation"] is None else f"{s['lag1_correlation']:.2f}"
        print(f"{k[:-2]:<14} {s['median_s'] * 1e3:>10.3f} {s['p10_s'] * 1e3:>8.3f} {s['p90_s'] * 1e3:>8.3f} "
              f"{s['min_s'] * 1e3:>8.3f} {s['max_s'] * 1e3:>8.3f} {s['spread_10_90']:>8.0%} "
              f"{s['max_over_min']:>8.2f} {r:>8}")
    print(f"in {args.o}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
