"""Measurements of a few variants in rounds, each round in a new order, so
that a slow stretch of the machine falls on one variant's run, not on all of
one variant's (bench/computing_before.py, bench/extending_writes.py)."""
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def replayer(prog):
    """The built-in replayer of the Open MPI build, or exit saying how to build it."""
    path = ROOT / "tracer" / "lib" / "openmpi" / "iomodel_replay"
    if not path.is_file():
        sys.exit(f"{prog}: {path} not found: run scripts/setup.sh first")
    return path


def in_rounds(names, rounds, measure, seed=1):
    """{name: [seconds, one a round]} of measure(name), printed round by round in ms."""
    times = {v: [] for v in names}
    rng = random.Random(seed)
    for r in range(rounds):
        order = list(names)
        rng.shuffle(order)
        for v in order:
            times[v].append(measure(v))
        print(f"round {r + 1}: " + ", ".join(f"{v} {times[v][-1] * 1e3:.3f} ms" for v in names), flush=True)
    return times
