#!/usr/bin/env python3
"""Write a synthetic, format-valid iomodel trace directory (BT-IO-like), fast.

Every one of R ranks opens the shared file "synth.dat" (comm size R), writes
it with MPI_File_write_at_all at offset (i*R + r)*rs, the logical clock
advancing by --write-gap (120) between writes, then reads it back with
MPI_File_read_at_all at the same offsets, the clock advancing by --read-gap
(1) between reads; plus MPI_Init, MPI_File_open, MPI_File_close and
MPI_Finalize, and an end chunk.  --calls is the number of data calls per rank
(half writes, half reads).  Times are 2.6 GHz TSC ticks, about 10 us a call.

The files are what tracer/buffers.c writes (docs/trace-format.md; the 32-byte
event record of tracer/runtime.h): a 256-byte header, one metadata chunk
(routine table, command line, open) before the first event chunk, event
chunks of --chunk-records records, and the end chunk.  Numpy builds each
rank's records from one template; no loop over events.

usage: .venv/bin/python bench/synth_trace.py OUT_DIR [--ranks R] [--calls N] [--rs BYTES] [--check]
"""
import argparse
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

# The tracer's structs (tracer/buffers.c, runtime.h), written independently of
# the reader's so that the self-check tests the reader against them.
HEADER = struct.Struct("<8sIIiiIiIIQQqQQ128s48s")
CHUNK = struct.Struct("<IHHQQQQQQ")
META = struct.Struct("<IIQ")
CHUNK_MAGIC = 0x4B4E4843
CHUNK_EVENTS, CHUNK_META, CHUNK_END = 1, 2, 3
META_ROUTINES, META_OPEN, META_PROGRAM, META_BUFFER = 1, 2, 5, 6
BUFFER_OFFSET = 16            # one buffer reused by every call, as malloc places a large one
RECORD = np.dtype([("op", "u1"), ("flags", "u1"), ("slot", "<u2"), ("lclock", "<u4"),
                   ("offset", "<i8"), ("t0", "<u8"), ("dt", "<u4"), ("bytes", "<u4")])
assert HEADER.size == 256 and CHUNK.size == 56 and RECORD.itemsize == 32
F_COLL, F_WRITE, F_READ = 0x01, 0x02, 0x04
NO_SLOT = 0xFFFF
AMODE = 9                     # Open MPI: MPI_MODE_CREATE | MPI_MODE_RDWR
U64 = 2**64

# Clock: 2.6 GHz, i.e. exactly 26 ticks per 10 ns.
TICKS, NS = 26, 10
TICK0 = 26 * 10**11           # ticks at time zero
MONO0 = 10 * 10**11           # CLOCK_MONOTONIC ns at time zero (1000 s of uptime)
REAL0 = 1_790_000_000 * 10**9
CALL = 26_000                 # 10 us
RANKS_PER_HOST = 32
COMM = 2_600                  # 1 us per communication call between I/O calls


def ns_at(ticks):
    return MONO0 + (int(ticks) - TICK0) * NS // TICKS


def routine_names():
    """The tracer's routine table: tracer/wrappers.tmpl in order (gen_wrappers.py)."""
    sys.path.insert(0, str(ROOT))
    from iomodel.tracer.gen_wrappers import read_template
    return [entry[2] for entry in read_template(ROOT / "tracer" / "wrappers.tmpl")]


def meta_record(mtype, seq, body):
    total = (META.size + len(body) + 7) & ~7
    return (META.pack(mtype, total, seq) + body).ljust(total, b"\0")


def chunk(ctype, payload, count, first, ticks):
    assert len(payload) % 8 == 0
    ns = ns_at(ticks)
    s = int(np.frombuffer(payload, "<u8").sum(dtype=np.uint64)) if payload else 0
    csum = (s + ctype + len(payload) + count + first + ticks + ns) % U64
    return CHUNK.pack(CHUNK_MAGIC, ctype, CHUNK.size, len(payload), count, first, ticks, ns, csum) + payload


def layout(ranks, calls, rs, write_gap, read_gap):
    """Rank 0's records (the template) and what every rank's stream holds."""
    names = routine_names()
    op = {n: i for i, n in enumerate(names)}
    nw, nr = calls - calls // 2, calls // 2
    n = calls + 4
    t = np.zeros(n, RECORD)
    w = slice(2, 2 + nw)
    rd = slice(2 + nw, 2 + calls)
    t["op"][0], t["op"][1], t["op"][w], t["op"][rd] = op["MPI_Init"], op["MPI_File_open"], \
        op["MPI_File_write_at_all"], op["MPI_File_read_at_all"]
    t["op"][-2], t["op"][-1] = op["MPI_File_close"], op["MPI_Finalize"]
    t["flags"][w], t["flags"][rd] = F_COLL | F_WRITE, F_COLL | F_READ
    t["slot"][:] = 0
    t["slot"][0] = t["slot"][-1] = NO_SLOT
    lw = np.arange(1, nw + 1, dtype=np.int64) * write_gap
    lr = lw[-1] + write_gap + np.arange(nr, dtype=np.int64) * read_gap if nw else np.arange(nr) * read_gap
    lclock = np.concatenate([[0, 0], lw, lr, [lr[-1] if nr else (lw[-1] if nw else 0)] * 2])
    assert lclock.max() < 2**32, "logical clock does not fit 32 bits: fewer calls or a smaller gap"
    t["lclock"] = lclock
    i = np.concatenate([np.arange(nw), np.arange(nr)]).astype(np.int64)
    t["offset"][2:2 + calls] = i * ranks * rs          # + r*rs per rank
    assert 0 < rs < 0xFFFFFFFF, "rs must fit the record's 32-bit bytes field (no extension records)"
    t["bytes"][2:2 + calls] = rs
    # Time between the end of a call and the start of the next: the
    # communication calls the logical clock counts, 1 us each.
    gap = np.zeros(n, np.int64)
    gap[1:] = np.maximum(np.diff(lclock), 1) * COMM
    return dict(template=t, names=names, op=op, nw=nw, nr=nr, n=n, gap=gap,
                final_lclock=int(lclock[-1]))


def write_trace(out, ranks=1024, calls=10_000, rs=4096, write_gap=120, read_gap=1,
                chunk_records=32768, path="synth.dat", seed=0, job=False):
    """Write the trace directory, rank files or (job) one job file as the tracer
    leaves at MPI_Finalize; returns what it holds (for check())."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for old in [*out.glob("rank-*.iot"), out / "job.iot"]:
        if old.exists():
            old.unlink()
    images = _rank_images(ranks, calls, rs, write_gap, read_gap, chunk_records, path, seed)
    if job:
        sys.path.insert(0, str(ROOT))
        from iomodel.analyzer.jobfile import write_job
        total_bytes = write_job(out / "job.iot", images)
    else:
        total_bytes = 0
        for r, blob in enumerate(images):
            (out / f"rank-{r:06d}.iot").write_bytes(blob)
            total_bytes += len(blob)
    L = layout(ranks, calls, rs, write_gap, read_gap)
    return dict(dir=str(out), ranks=ranks, calls=calls, rs=rs, events_per_rank=L["n"], events=L["n"] * ranks,
                writes=L["nw"], reads=L["nr"], path=path, final_lclock=L["final_lclock"],
                write_gap=write_gap, read_gap=read_gap, trace_bytes=total_bytes)


def _rank_images(ranks, calls, rs, write_gap, read_gap, chunk_records, path, seed):
    """Each rank's file, as bytes, one at a time."""
    L = layout(ranks, calls, rs, write_gap, read_gap)
    t, n, gap = L["template"], L["n"], L["gap"]
    data = np.zeros(n, bool)
    data[2:2 + calls] = True
    routines = b"".join(x.encode() + b"\0" for x in L["names"])
    routines = meta_record(META_ROUTINES, 0, struct.pack("<II", len(L["names"]), 0) + routines)
    cmd = f"./bt_synth\0{ranks}\0{calls}\0{rs}\0".encode()
    program = meta_record(META_PROGRAM, 0, struct.pack("<II", len(cmd), 0) + cmd)
    init_ticks = 780_000_000  # MPI_Init took 0.3 s, before time zero
    rng = np.random.default_rng(seed)
    for r in range(ranks):
        rec = t.copy()
        rec["offset"][data] += r * rs
        # durations: 10 us +-10%, per-rank skew up to 2 us; MPI_Init ends at time zero
        dur = CALL + rng.integers(-CALL // 10, CALL // 10, n)
        dur[0] = init_ticks
        step = np.empty(n, np.int64)
        step[0] = TICK0 - init_ticks
        step[1:] = dur[:-1] + gap[1:]
        step[1] += (r * 7919) % 5200
        t0 = np.cumsum(step)
        rec["t0"] = t0
        rec["dt"] = dur
        open_meta = meta_record(META_OPEN, 1, struct.pack("<Iiii", 0, AMODE, ranks, r) + path.encode())
        host = f"node{r // RANKS_PER_HOST:04d}".encode()
        buffer_meta = meta_record(META_BUFFER, 2, struct.pack("<II", BUFFER_OFFSET, 0))
        parts = [HEADER.pack(b"IOMTRACE", 2, HEADER.size, r, ranks, 10_000 + r, 0, 1, RECORD.itemsize,
                             TICK0, MONO0, REAL0, TICK0 - 2 * init_ticks, ns_at(TICK0 - 2 * init_ticks),
                             host, b"")]
        meta = routines + program + open_meta + buffer_meta
        for k, lo in enumerate(range(0, n, chunk_records)):
            hi = min(lo + chunk_records, n)
            flushed_at = int(t0[hi - 1] + dur[hi - 1]) + 2600
            if k == 0:  # metadata always goes out just before events
                parts.append(chunk(CHUNK_META, meta, 4, hi, flushed_at))
            parts.append(chunk(CHUNK_EVENTS, rec[lo:hi].tobytes(), hi - lo, lo, flushed_at))
        end = struct.pack("<QII", n, 0, L["final_lclock"])
        parts.append(chunk(CHUNK_END, end, 0, n, int(t0[-1] + dur[-1]) + 5200))
        yield b"".join(parts)


def check(info, cli=True):
    """Read the trace back with iomodel's reader; raise AssertionError on any mismatch."""
    sys.path.insert(0, str(ROOT))
    from iomodel.analyzer import Trace
    from iomodel.analyzer.summary import summarize
    R, nw, nr, rs, n = info["ranks"], info["writes"], info["reads"], info["rs"], info["events_per_rank"]
    tr = Trace(info["dir"])
    assert not tr.errors, tr.errors
    ranks = tr.ranks
    assert ranks.num_rows == R, ranks.num_rows
    assert ranks["rank"].to_pylist() == list(range(R))
    assert set(ranks["events"].to_pylist()) == {n}
    assert set(ranks["ended_by"].to_pylist()) == {"MPI_Finalize"}
    assert set(ranks["final_lclock"].to_pylist()) == {info["final_lclock"]}
    assert tr.paths == [info["path"]], tr.paths
    assert tr.files.num_rows == R and set(tr.files["comm_size"].to_pylist()) == {R}
    s = summarize(tr)
    want = {"MPI_Init": R, "MPI_File_open": R, "MPI_File_write_at_all": R * nw,
            "MPI_File_read_at_all": R * nr, "MPI_File_close": R, "MPI_Finalize": R}
    got = {k: v for k, v in s["events"].items()}
    assert got == {k: v for k, v in want.items() if v}, got
    assert s["total_events"] == R * n == info["events"]
    assert s["bytes_written"] == R * nw * rs and s["bytes_read"] == R * nr * rs
    assert s["trace_bytes"] == info["trace_bytes"]
    ev = tr.events
    rank = ev["rank"].to_numpy()
    seq = ev["seq"].to_numpy()
    data = ev["data"].to_numpy(zero_copy_only=False)
    i = np.where(seq - 2 < nw, seq - 2, seq - 2 - nw)
    want_off = (i * R + rank) * rs
    assert np.array_equal(ev["abs_offset"].to_numpy()[data], want_off[data])
    assert np.array_equal(ev["abs_end"].to_numpy()[data], want_off[data] + rs)
    assert ev["resolved"].to_numpy(zero_copy_only=False)[data].all()
    assert set(ev["buffer_offset"].filter(ev["data"]).to_pylist()) == {BUFFER_OFFSET}
    assert ev["buffer_offset"].null_count == ev.num_rows - int(data.sum())
    assert tr.extents.num_rows == R * (nw + nr)
    t0, t1 = ev["t_start"].to_numpy(), ev["t_end"].to_numpy()
    assert abs(t1[seq == 0]).max() < 1e-9, "MPI_Init must end at time zero"
    d = (t1 - t0)[data]
    assert d.min() > 8.9e-6 and d.max() < 11.1e-6, (d.min(), d.max())
    if cli:
        p = subprocess.run([sys.executable, "-m", "iomodel", "trace-info", info["dir"]],
                           capture_output=True, text=True, cwd=ROOT)
        assert p.returncode == 0, p.stderr
        assert f"events       {R * n} " in p.stdout, p.stdout
        return p.stdout
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="trace directory to write (rank-*.iot files in it are replaced)")
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--calls", type=int, default=10_000, help="data calls per rank (half writes, half reads)")
    ap.add_argument("--rs", type=int, default=4096, help="bytes per call")
    ap.add_argument("--write-gap", type=int, default=120, help="communication calls between writes")
    ap.add_argument("--read-gap", type=int, default=1, help="communication calls between reads")
    ap.add_argument("--chunk-records", type=int, default=32768, help="records per event chunk")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check", action="store_true", help="read it back (Trace, trace-info) and compare")
    ap.add_argument("--job", action="store_true", help="one job.iot (encoded as the tracer does) instead of rank files")
    a = ap.parse_args()
    t = time.perf_counter()
    info = write_trace(a.out, a.ranks, a.calls, a.rs, a.write_gap, a.read_gap, a.chunk_records, seed=a.seed,
                       job=a.job)
    dt = time.perf_counter() - t
    print(f"synth_trace: {info['events']} events, {info['ranks']} ranks, {info['trace_bytes']} bytes "
          f"in {info['dir']} ({dt:.2f} s, {info['events'] / dt:.3g} events/s)", file=sys.stderr)
    if a.check:
        t = time.perf_counter()
        out = check(info)
        print(out, end="")
        print(f"synth_trace: check passed ({time.perf_counter() - t:.1f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
