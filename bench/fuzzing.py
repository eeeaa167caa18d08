"""Hostile inputs for iomodel's readers, and how a command took each one.

Four readers take files a user may have been sent: the trace reader (a
directory of rank files), the model loader (JSON), the cluster loader (YAML)
and the Darshan log reader (PyDarshan). Each mutator below turns a real input
into a damaged one, driven by a random.Random, so that a seed gives the same
input again:

- traces: a header field, a chunk header field or a word of a chunk's payload
  set to an edge value with the chunk's checksum computed again (the damage
  the checksum cannot see), chunks dropped, repeated or swapped, files cut
  short, rank files deleted, emptied or copied;
- models: a value replaced by another JSON value, a key removed or added, a
  list emptied or grown, the text cut or a byte changed;
- cluster files: the same on the YAML document, and text-level damage;
- Darshan logs: a header field, bytes of a compressed region, regions lost or
  swapped, the file cut short, or a region inflated, damaged (edge values,
  cut, grown, text made not UTF-8) and deflated again with the header's map
  made good (the damage zlib's checksum cannot see).

`outcome()` runs the iomodel commands a user would run on the input, in this
process (Darshan logs: in a process of its own, `iomodel` as a user runs it,
so that a crash of a C library, even at exit, is seen), and says how they
took it: "accepted", "refused" (exit 2 and one message naming the file),
"refused without naming the file", "traceback" (an internal error: exit 70,
or an exception main() let through), "hang" (past the time limit) or
"crash" (killed by a signal). bench/fuzz.py runs many; tests/test_fuzz.py a
fixed few.
"""
import contextlib
import copy
import ctypes
import io
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import yaml

from iomodel.cli import main

HEADER = struct.Struct("<8sIIiiIiIIQQqQQ128s48s")
CHUNK = struct.Struct("<IHHQQQQQQ")
EDGES = [0, 1, 2, 7, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000,
         0xFFFFFFFF, 2 ** 32, 2 ** 62, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1]
OUTCOMES = ("accepted", "refused", "refused without naming the file", "over the limits", "traceback", "hang",
            "crash", "bypass", "target violation")


class Hang(BaseException):
    """A command past its time limit (a BaseException: main() must not catch it)."""


# ------------------------------------------------------------------ traces

def split_chunks(data):
    """A rank file as (header bytes, [(type, count, first, ticks, ns, payload)], tail)."""
    pos, chunks = HEADER.size, []
    while pos + CHUNK.size <= len(data):
        magic, ctype, hsize, plen, count, first, ticks, ns, _ = CHUNK.unpack_from(data, pos)
        if magic != 0x4B4E4843 or hsize != CHUNK.size or pos + CHUNK.size + plen > len(data):
            break
        chunks.append([ctype, count, first, ticks, ns, bytearray(data[pos + CHUNK.size:pos + CHUNK.size + plen])])
        pos += CHUNK.size + plen
    return bytearray(data[:HEADER.size]), chunks, data[pos:]


def join_chunks(header, chunks, tail=b""):
    """The file again, every chunk's checksum computed for what it now holds."""
    out = bytearray(header)
    for ctype, count, first, ticks, ns, payload in chunks:
        payload = bytes(payload) + b"\0" * (-len(payload) % 8)
        words = sum(struct.unpack(f"<{len(payload) // 8}Q", payload)) if payload else 0
        csum = (words + ctype + len(payload) + count + first + ticks + ns) % 2 ** 64
        out += CHUNK.pack(0x4B4E4843, ctype % 2 ** 16, CHUNK.size, len(payload), count % 2 ** 64,
                          first % 2 ** 64, ticks % 2 ** 64, ns % 2 ** 64, csum) + payload
    return bytes(out + tail)


def _edge(rnd, width):
    v = rnd.choice(EDGES + [rnd.getrandbits(8 * width)] * 4)
    return v % 2 ** (8 * width)


def _poke(buf, rnd, off=None, width=None):
    width = width or rnd.choice((1, 2, 4, 8))
    if len(buf) < width:
        return
    off = rnd.randrange(0, len(buf) - width + 1) if off is None else off
    if off + width <= len(buf):
        buf[off:off + width] = _edge(rnd, width).to_bytes(width, "little")


# header fields an attacker may set: (offset, width)
HEADER_FIELDS = [(8, 4), (12, 4), (16, 4), (20, 4), (24, 4), (28, 4), (32, 4), (36, 4), (40, 8), (48, 8),
                 (56, 8), (64, 8), (72, 8)]


def mutate_rank_file(data, rnd):
    """One damaged version of a rank file's bytes."""
    header, chunks, tail = split_chunks(data)
    kind = rnd.randrange(9)
    if kind == 0:                                   # a header field
        off, width = rnd.choice(HEADER_FIELDS)
        _poke(header, rnd, off, width)
    elif kind == 1 and chunks:                      # a chunk header field, checksum made good
        c = rnd.choice(chunks)
        i = rnd.choice((0, 1, 2, 3, 4))
        c[i] = _edge(rnd, 2 if i == 0 else 8)
    elif kind in (2, 3, 4) and chunks:              # payload words, checksum made good
        c = rnd.choice(chunks)
        for _ in range(rnd.choice((1, 1, 2, 4))):
            if kind == 2 and c[0] == 1 and len(c[5]) >= 32:     # an event record's field
                rec = rnd.randrange(len(c[5]) // 32) * 32
                off, width = rnd.choice(((0, 1), (1, 1), (2, 2), (4, 4), (8, 8), (16, 8), (24, 4), (28, 4)))
                _poke(c[5], rnd, rec + off, width)
            else:
                _poke(c[5], rnd)
    elif kind == 5 and chunks:                      # a chunk's payload cut or grown
        c = rnd.choice(chunks)
        n = rnd.choice((0, 8, 16, 24, 32, 56)) if rnd.random() < 0.5 else rnd.randrange(0, len(c[5]) + 64, 8)
        c[5] = c[5][:n] + bytearray(max(0, n - len(c[5])))
    elif kind == 6 and chunks:                      # chunks dropped, repeated, swapped
        i, j = rnd.randrange(len(chunks)), rnd.randrange(len(chunks))
        op = rnd.randrange(3)
        if op == 0:
            del chunks[i]
        elif op == 1:
            chunks.insert(j, copy.deepcopy(chunks[i]))
        else:
            chunks[i], chunks[j] = chunks[j], chunks[i]
    elif kind == 7:                                 # cut short anywhere
        return data[:rnd.randrange(len(data) + 1)]
    else:                                           # any bytes, checksums left as they are
        out = bytearray(data)
        for _ in range(rnd.choice((1, 2, 8))):
            _poke(out, rnd)
        return bytes(out)
    return join_chunks(header, chunks, tail)


JOB_HEADER, JOB_ENTRY = struct.Struct("<8sIIIIQ"), struct.Struct("<QQIIQ")


def mutate_job_file(data, rnd):
    """A job file (docs/trace-format.md, "One file per job") damaged: its header
    or index, its compressed bytes, cut short, or one rank's image decoded,
    damaged as a rank file and stored back raw (encoding 0) with the index
    made good."""
    from iomodel.analyzer.jobfile import decode_planes
    buf = bytearray(data)
    _, _, _, nranks, _, index = JOB_HEADER.unpack_from(buf)
    kind = rnd.randrange(4)
    if kind == 0:                                   # the header or the index
        _poke(buf, rnd, rnd.randrange(0, min(len(buf), index + nranks * JOB_ENTRY.size) - 7) & ~7)
    elif kind == 1:                                 # the compressed bytes
        _poke(buf, rnd, rnd.randrange(index + nranks * JOB_ENTRY.size, len(buf) - 8))
    elif kind == 2:
        del buf[rnd.randrange(len(buf)):]
    else:                                           # one image, damaged inside, stored raw
        entries = [list(JOB_ENTRY.unpack_from(buf, index + r * JOB_ENTRY.size)) for r in range(nranks)]
        r = rnd.randrange(nranks)
        off, size, enc, _, _ = entries[r]
        image = decode_planes(bytes(buf[off:off + size]), encoding=enc)[0] if enc else bytes(buf[off:off + size])
        image = mutate_rank_file(image, rnd)
        buf[off:off + size] = image
        entries[r][1:3], entries[r][4] = [len(image), 0], len(image)
        for k in range(r + 1, nranks):
            entries[k][0] = entries[k - 1][0] + entries[k - 1][1]
        for k, e in enumerate(entries):
            JOB_ENTRY.pack_into(buf, index + k * JOB_ENTRY.size, *e)
    return bytes(buf)


def mutate_trace(src, dst, rnd):
    """Copy the trace directory src to dst, damaged: its rank files' bytes, or
    the directory's set of rank files; a job file's bytes."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    job = Path(dst) / "job.iot"
    if job.exists():
        job.write_bytes(mutate_job_file(job.read_bytes(), rnd))
        return Path(dst)
    files = sorted(Path(dst).glob("rank-*.iot"))
    kind = rnd.randrange(10)
    if kind == 0 and len(files) > 1:
        rnd.choice(files).unlink()                  # a rank file missing
    elif kind == 1:
        f = rnd.choice(files)                       # a rank with its header only
        f.write_bytes(f.read_bytes()[:HEADER.size])
    elif kind == 2:
        f = rnd.choice(files)                       # a rank twice, under another name
        shutil.copy(f, Path(dst) / f"rank-{rnd.choice((999999, len(files)))}.iot")
    else:
        for f in rnd.sample(files, rnd.choice((1, 1, 1, len(files)))):
            f.write_bytes(mutate_rank_file(f.read_bytes(), rnd))
    return Path(dst)


# ------------------------------------------------------------------ models and clusters

def _random_value(rnd, depth=0):
    pick = rnd.randrange(12 if depth < 2 else 10)
    if pick == 10:
        return [_random_value(rnd, depth + 1)]
    if pick == 11:
        return {"k": _random_value(rnd, depth + 1)}
    return [None, True, False, 0, -1, rnd.choice(EDGES), rnd.choice(EDGES) * 10 ** 6, 1.5e308, "",
            "../../x\n$(touch /tmp/pwned)"][pick]


def _mutate_tree(doc, rnd):
    """Change one place of a JSON-like document."""
    paths = []

    def walk(v, path):
        paths.append(path)
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, path + (k,))
        elif isinstance(v, list):
            for i, x in enumerate(v[:8]):
                walk(x, path + (i,))
    walk(doc, ())
    path = rnd.choice(paths[1:] or paths)
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    key = path[-1] if path else None
    kind = rnd.randrange(6)
    if key is None:
        return _random_value(rnd)
    if kind == 0 and isinstance(parent, dict):
        del parent[key]
    elif kind == 1 and isinstance(parent, dict):
        parent[f"{key}_extra"] = _random_value(rnd)
    elif kind == 2 and isinstance(parent[key], list):
        parent[key] = [] if rnd.random() < 0.5 else parent[key] * rnd.choice((2, 50))
    elif kind == 3 and isinstance(parent[key], (int, float)) and not isinstance(parent[key], bool):
        parent[key] = rnd.choice((-parent[key], parent[key] * 2 ** 64, parent[key] + 1, 0, float("inf")))
    else:
        parent[key] = _random_value(rnd)
    return doc


def _mutate_text(text, rnd):
    b = bytearray(text.encode())
    kind = rnd.randrange(3)
    if kind == 0:
        return bytes(b[:rnd.randrange(len(b) + 1)])
    if kind == 1 and b:
        for _ in range(rnd.choice((1, 4))):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        return bytes(b)
    i = rnd.randrange(len(b) + 1)
    return bytes(b[:i]) + rnd.choice((b"\0", b"\xff\xfe", b"&a [*a]", b"}{", b": :", b"\n- ")) + bytes(b[i:])


def mutate_model(text, rnd):
    """A damaged model file's bytes."""
    if rnd.random() < 0.25:
        return _mutate_text(text, rnd)
    doc = json.loads(text)
    for _ in range(rnd.choice((1, 1, 2, 3))):
        doc = _mutate_tree(doc, rnd)
    return json.dumps(doc, allow_nan=True).encode()


BOMB = ("a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
        "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n")


def mutate_cluster(text, rnd):
    """A damaged cluster description's bytes."""
    r = rnd.random()
    if r < 0.2:
        return _mutate_text(text, rnd)
    doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if r < 0.25:                                    # aliases that expand a billion-fold
        key = rnd.choice(["io_library", "description", "bandwidth", "run"])
        return (BOMB + yaml.dump({k: v for k, v in doc.items() if k != key}, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)) + f"{key}: *g\n").encode()
    for _ in range(rnd.choice((1, 1, 2, 3))):
        doc = _mutate_tree(doc, rnd)
    return yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), allow_unicode=True).encode()


# ------------------------------------------------------------------ Darshan logs

def darshan_layout(data):
    """A Darshan 3 log's uncompressed header (darshan-log-format.h): its
    fields as [(offset, width)] and its regions in file order as [name, off,
    len, where the header maps it]; the job's region is not mapped: it runs
    from the header to the region after it."""
    new = data[:4] >= b"3.41"               # 64 modules and a 64-bit partial flag since 3.41
    maps, nmods = (32, 64) if new else (24, 16)
    size = maps + 16 * (1 + nmods) + 4 * nmods
    regions, fields = [], [(0, 8), (8, 8), (16, 1), (24, 8) if new else (20, 4)]
    for i in range(1 + nmods):
        at = maps + 16 * i
        off, length = struct.unpack_from("<QQ", data, at)
        if length:
            regions.append([f"module {i - 1}" if i else "names", off, length, at])
            fields += [(at, 8), (at + 8, 8)] + ([(maps + 16 * (1 + nmods) + 4 * (i - 1), 4)] if i else [])
    regions.sort(key=lambda r: r[1])
    return size, fields, [["job", size, (regions[0][1] if regions else len(data)) - size, None]] + regions


def inflate(blob):
    """A region's bytes inflated (libdarshan-util writes a region as one zlib stream or more)."""
    out = b""
    while blob:
        d = zlib.decompressobj()
        out += d.decompress(blob)
        if not d.eof:
            raise zlib.error("a stream cut short")
        blob = d.unused_data
    return out


def join_darshan(data, size, regions, raw):
    """The log again, the regions named in `raw` ({name: bytes}) deflated from
    those bytes, all one after the other in the same order, and the header's
    map made good: damage zlib's checksum cannot see."""
    out, head = bytearray(), bytearray(data[:size])
    for name, off, length, at in regions:
        blob = zlib.compress(raw[name]) if name in raw else data[off:off + length]
        if at is not None:
            struct.pack_into("<QQ", head, at, size + len(out), len(blob))
        out += blob
    return bytes(head + out)


def mutate_darshan(data, rnd):
    """One damaged version of a Darshan log's bytes: a header field set to an
    edge value, bytes of a compressed region flipped or set (zlib's checksum
    may catch them), a region lost or two swapped, the file cut short, or a
    region inflated, damaged (words set to edge values, cut or grown, a byte
    of its text made not UTF-8) and deflated again with the header made good."""
    size, fields, regions = darshan_layout(data)
    buf = bytearray(data)
    kind = rnd.randrange(10)
    if kind >= 4 and data[16] != 0:                 # not zlib (bzip2): its bytes only
        kind = 1
    if kind == 0:                                   # a header field
        off, width = rnd.choice(fields)
        _poke(buf, rnd, off, width)
    elif kind == 1:                                 # compressed bytes
        _, off, length, _ = rnd.choice(regions)
        for _ in range(rnd.choice((1, 1, 2, 8))):
            i = rnd.randrange(off, max(off + 1, min(off + length, len(buf))))
            if rnd.random() < 0.5:
                buf[i] ^= 1 << rnd.randrange(8)
            else:
                _poke(buf, rnd, i, 1)
    elif kind == 2:                                 # cut short anywhere
        return data[:rnd.randrange(len(data) + 1)]
    elif kind == 3 and len(regions) > 1:            # a region lost, or two swapped
        a, b = rnd.choice(regions[1:])[3], rnd.choice(regions[1:])[3]
        buf[a:a + 16], buf[b:b + 16] = (bytes(16), buf[b:b + 16]) if rnd.random() < 0.5 else \
            (buf[b:b + 16], buf[a:a + 16])
    elif kind >= 4:
        name, off, length, _ = rnd.choice(regions)
        raw = bytearray(inflate(data[off:off + length]))
        if kind <= 7:                               # words set to edge values
            for _ in range(rnd.choice((1, 1, 2, 4))):
                width = rnd.choice((1, 2, 4, 8))
                if len(raw) >= width:
                    _poke(raw, rnd, rnd.randrange(len(raw) - width + 1) // width * width, width)
        elif kind == 8:                             # a byte of its text (names, command line, metadata)
            runs = [m.span() for m in re.finditer(rb"[\x20-\x7e]{4,}", bytes(raw))]
            if runs:
                a, b = rnd.choice(runs)
                raw[rnd.randrange(a, b)] = rnd.choice((0x80, 0xC3, 0xE9, 0xFF))
        else:                                       # cut or grown
            n = rnd.randrange(len(raw) + 64)
            raw = raw[:n] + bytearray(max(0, n - len(raw)))
        return join_darshan(data, size, regions, {name: bytes(raw)})
    return bytes(buf)


# ------------------------------------------------------------------ running

@contextlib.contextmanager
def time_limit(seconds):
    def fire(*_):
        raise Hang()
    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _reset_peak():
    """The process's peak resident memory (VmHWM) set back to what it holds now,
    once the memory the last command freed is given back to the system (Arrow's
    pool and malloc keep it otherwise, and the next command would be charged)."""
    if "pyarrow" in sys.modules:
        sys.modules["pyarrow"].default_memory_pool().release_unused()
    ctypes.CDLL(None).malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _peak():
    """The process's peak resident memory since the last _reset_peak, in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) << 10
    return 0


def run_command(argv, seconds):
    """(exit code, stderr, peak resident bytes, seconds) of `iomodel ARGV` run in
    this process; exit code None for a hang, 70 for an exception main() let
    through.  The peak is the process's, this worker's, while the command ran."""
    err, out = io.StringIO(), io.StringIO()
    _reset_peak()
    t0 = time.monotonic()
    try:
        with time_limit(seconds), contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = main(list(map(str, argv)))
    except Hang:
        rc = None
    except SystemExit as e:          # argparse
        rc = e.code if isinstance(e.code, int) else 2
    except Exception as e:           # noqa: BLE001 - what main() did not turn into a message
        err.write(f"{type(e).__name__}: {e}")
        rc = 70
    return rc, err.getvalue(), _peak(), time.monotonic() - t0


def run_process(argv, seconds):
    """(exit code, stderr, peak resident bytes, seconds) of `iomodel ARGV` run as
    a process of its own; exit code None for a hang, negative for a signal.  The
    peak is the largest of the process's and its children's (wait4)."""
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "iomodel", *map(str, argv)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                rc = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() - t0 > seconds:
                proc.kill()
                _, _, usage = os.wait4(proc.pid, 0)
                rc = None
                break
            time.sleep(0.01)
        proc.returncode = -1 if rc is None else rc      # reaped here, not by Popen
        err.seek(0)
        return rc, err.read().decode(errors="replace"), usage.ru_maxrss << 10, time.monotonic() - t0


def outcome(commands, names, seconds=20, run=run_command, limit=2 << 30, check=None):
    """How the commands took one input (the worst of them), the first message
    of that kind, and the largest peak memory and time a command took:
    (outcome, argv, message, peak bytes, seconds).  A refusal must name one of
    `names` (a path or a list of paths and options); a command past `limit`
    bytes of resident memory, or out of memory, is over the limits;
    check(argv, rc) may call an input a bypass or a target violation (its
    outcome, message) whatever the command said."""
    names = [str(n) for n in ([names] if isinstance(names, (str, Path)) else names)]
    names += [os.path.basename(n) for n in names if os.path.basename(n)]
    worst, peak, took = ("accepted", None, ""), 0, 0.0
    for argv in commands:
        rc, msg, used, secs = run(argv, seconds)
        peak, took = max(peak, used), max(took, secs)
        lines = msg.strip().splitlines()
        # the line that says what happened: an internal error's first, else the last
        last = next((x for x in lines if "internal error" in x), lines[-1] if lines else "")
        if rc is None:
            kind = "hang"
        elif rc < 0:
            kind = "crash"
            last = f"killed by {signal.Signals(-rc).name}" + (f" after: {last}" if last else "")
        elif rc == 70 or (rc and "Traceback (most recent call last)" in msg):
            kind = "traceback"
        elif used > limit or "out of memory" in msg:
            kind = "over the limits"
            last = f"{used / 2 ** 30:.2f} GiB resident at most: {last}"
        elif rc == 0:
            kind = "accepted"
        elif any(n in msg for n in names):
            kind = "refused"
        else:
            kind = "refused without naming the file"
        found = check(argv, rc) if check else None
        if found:
            kind, last = found
        if OUTCOMES.index(kind) > OUTCOMES.index(worst[0]):
            worst = (kind, argv, last)
    return (*worst, peak, took)


def trace_commands(trace, work):
    return [["trace-info", trace], ["trace-info", trace, "--events"], ["trace-info", trace, "--json"],
            ["analyze", trace, "-o", Path(work) / "fuzz-model.json", "-q"]]


def model_commands(model, work):
    return [["show", model], ["show", model, "--json"], ["ior", model], ["ior", model, "--format", "ior-script"],
            ["predict", model, "--vc", "vc3"], ["compare", model, "--vc", "vc1", "vc4"]]


def types_commands(trace, work):
    """Through the views' filetypes: each access mapped (--events), every view
    flattened whole (--parquet: the views table), and the model."""
    return [["trace-info", trace, "--events"], ["trace-info", trace, "--parquet", Path(work) / "tables"],
            ["analyze", trace, "-o", Path(work) / "fuzz-model.json", "-q"]]


def darshan_commands(log, work):
    return [["analyze", log, "-o", Path(work) / "fuzz-model.json", "-q"]]


def cluster_commands(cluster, model, work):
    return [["predict", model, "--vc", cluster], ["ior", model, "--vc", cluster],
            ["compare", model, "--vc", cluster, "vc1"]]


KINDS = ("trace", "job", "model", "cluster", "darshan", "types", "extrapolate", "launcher", "output", "space")


def space_text(space):
    """A space file's text with its kinds' cluster files by absolute path, so
    that a damaged copy elsewhere still finds them; a space with nothing
    measured gets inline points for its design's configurations (made up, each
    a little faster than the one before), so that compare composes the rest."""
    from iomodel.cluster.design import design
    from iomodel.cluster.space import load_space
    doc = yaml.safe_load(Path(space).read_text())
    for k in doc["kinds"].values():
        k["cluster"] = str((Path(space).parent / k["cluster"]).resolve())
    if not doc.get("measured"):
        doc["measured"] = {p.name: [{"operation": op, "np": 4, "rs": "1MiB", "bw_MiBps": 20 * (i + 1) * f,
                                     "collective": True} for op, f in (("write", 1), ("read", 2))]
                           for i, (p, _) in enumerate(design(load_space(space)))}
    return yaml.safe_dump(doc, sort_keys=False)


def space_commands(space, model, work):
    # never --trust-cluster: a damaged space's start commands must not run
    return [["compare", model, "--space", space], ["characterize", "--space", space, "--design"]]


def _types_trace(src, dst, rnd):
    """The trace directory src copied to dst, one rank file's type records and
    views damaged, or every rank's (bench/fuzz_types.py)."""
    import fuzz_types
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    files = sorted(Path(dst).glob("rank-*.iot"))
    for f in rnd.sample(files, rnd.choice((1, 1, len(files)))):
        f.write_bytes(fuzz_types.mutate_types(f.read_bytes(), rnd))
    return Path(dst)


def _output_input(rnd, source, model, work):
    """A target of bench/fuzz_outputs.py, made afresh, and the command that
    writes it: analyze of the trace, or plot of its model."""
    import fuzz_outputs
    base, scratch = work / "out", work / "scratch"
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)
    base.mkdir()
    scratch.mkdir()
    tempfile.tempdir = str(scratch)       # where a device's output is put together: the input's own
    if rnd.random() < 0.5:
        target = fuzz_outputs.Target(rnd, base, ".json", scratch)
        argv = ["analyze", source, "-o", target.path, "-q"]
    else:
        target = fuzz_outputs.Target(rnd, base, rnd.choice((".png", ".png", ".svg", ".pdf")), scratch)
        argv = ["plot", model, "-o", target.path]
    return target, argv


def fuzz(kind, seeds, source, work, seconds=20, model=None, limit=2 << 30):
    """Run inputs seeds (an iterable of ints) of one kind (KINDS) made from
    `source` (a trace directory, a model file, a cluster file, a Darshan log, a
    set of models for extrapolate: bench/fuzz_extrapolate.py); yields (seed,
    outcome, argv, message, peak bytes, seconds, the input's path) for each."""
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    text = Path(source).read_text() if kind in ("model", "cluster", "launcher") else \
        space_text(source) if kind == "space" else None
    for seed in seeds:
        rnd = random.Random(seed)
        run, names, check = run_command, None, None
        if kind in ("trace", "job"):
            target = mutate_trace(source, work / "trace", rnd)
            commands = trace_commands(target, work)
        elif kind == "types":
            target = _types_trace(source, work / "trace", rnd)
            commands = types_commands(target, work)
        elif kind == "darshan":
            target = work / "log.darshan"
            target.write_bytes(mutate_darshan(Path(source).read_bytes(), rnd))
            # in this process as the other kinds: iomodel reads a log in a child of its own
            # (analyzer/contained.py), so libdarshan-util's crash is the child's; one of
            # this process would stop the bench with its input kept (bench/fuzz.py)
            commands = darshan_commands(target, work)
        elif kind == "model":
            target = work / "model.json"
            target.write_bytes(mutate_model(text, rnd))
            commands = model_commands(target, work)
        elif kind == "extrapolate":
            import fuzz_extrapolate
            argv, names = fuzz_extrapolate.mutate_extrapolate(source, work, rnd)
            commands, target = [argv], next(a for a in argv if "damaged-" in str(a))
        elif kind == "launcher":
            import fuzz_launcher
            target = work / "cluster.yaml"
            data, unsafe, drawn = fuzz_launcher.mutate_launcher(text, rnd)
            target.write_bytes(data)
            commands = [["ior", model, "--vc", target], ["predict", model, "--vc", target]]

            def check(argv, rc, unsafe=unsafe, drawn=drawn):
                if argv[0] == "ior" and rc == 0 and unsafe:
                    return "bypass", f"accepted: {drawn}"
        elif kind == "output":
            out, argv = _output_input(rnd, source, model, work)
            target, commands, names = out.path, [argv], [out.path, argv[1]]

            def check(argv, rc, out=out):
                wrong = out.check(rc)           # a hang: the reader stopped, the hang counted
                return ("target violation", f"{out.kind}: {wrong}") if wrong and rc is not None else None
        elif kind == "space":
            target = work / "space.yaml"
            target.write_bytes(mutate_cluster(text, rnd))     # YAML as a cluster file is
            commands = space_commands(target, model, work)
        else:
            target = work / "cluster.yaml"
            target.write_bytes(mutate_cluster(text, rnd))
            commands = cluster_commands(target, model, work)
        yield (seed, *outcome(commands, names or target, seconds, run, limit, check), target)
