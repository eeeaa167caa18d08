"""IOR results, from IOR 4.x or from iomodel's own replayer (iomodel_replay).

Both write the same two formats, and both are read here into one dict per
operation summary ("write" or "read" of one test):

    parse_ior_json(text_or_path)   the JSON summary (-O summaryFormat=JSON -O summaryFile=F)
    parse_ior_text(text)           the "Summary of all tests:" table of the text output
    parse_ior_output(stdout, summary_file=None)
                                   the JSON summary when there is a valid one, else the text

Keys of each dict (MiB = 2**20 bytes, as IOR's MiB):

    operation        "write" or "read"
    api              IOR's -a (MPIIO, POSIX, HDF5, NCMPI...)
    test_id          IOR's test number (scripts can hold several tests)
    bw_MiBps_max, bw_MiBps_min, bw_MiBps_mean, bw_MiBps_std
                     bandwidth over the repetitions, MiB/s
    mean_time_s      mean time of one repetition of the operation (open to close), s
    num_tasks, segments, block, transfer, repetitions
                     IOR's numTasks, -s, -b (bytes), -t (bytes), -i
    file_per_proc    IOR's -F
    aggregate_bytes  bytes moved by one repetition: num_tasks * segments * block
    bandwidth_Bps    bw_MiBps_mean in bytes/s
    transfer_time_s  median over the repetitions of the transfers' time alone (IOR's
                     wrRdTime: no open, no close), s; None when the output does not
                     give it.  The median, not the mean: one repetition can be
                     slowed by anything else on the machine (IOR's first one, on
                     tmpfs, also by writing into newly allocated pages where the
                     others, the file removed in between, reuse the pages just
                     freed: iomodel_replay --iomodel.fresh), and the measured
                     side of the accuracy bench is a median too
    transfer_bandwidth_Bps
                     aggregate_bytes / transfer_time_s, or None
    io_time_s        median over the repetitions of the transfers' time as the
                     model reckons io_time_s (iomodel_replay's iomodelIoTime:
                     collective calls each from the last process's entry to the
                     last one's exit, else the slowest process's time in its
                     own transfers); None from IOR, which
                     reports only the span over processes (wrRdTime)
    io_bandwidth_Bps aggregate_bytes / io_time_s, or None
    transfer_times_s, io_times_s
                     the repetitions' times the two medians are of, in the order
                     they ran, or None

replayer_path() finds the iomodel_replay binary (built for the cluster's MPI).
"""
import json
import os
import statistics
from pathlib import Path

MIB = 2 ** 20
REPLAYER_NAME = "iomodel_replay"

# text summary column -> (key, type); the two "StdDev" columns are told apart by position
_TEXT_COLUMNS = {
    "Max(MiB)": ("bw_MiBps_max", float), "Min(MiB)": ("bw_MiBps_min", float),
    "Mean(MiB)": ("bw_MiBps_mean", float), "StdDev": ("bw_MiBps_std", float),
    "Mean(s)": ("mean_time_s", float), "Test#": ("test_id", int), "#Tasks": ("num_tasks", int),
    "reps": ("repetitions", int), "fPP": ("file_per_proc", int), "segcnt": ("segments", int),
    "blksiz": ("block", int), "xsize": ("transfer", int), "API": ("api", str),
}
_JSON_KEYS = {
    "operation": ("operation", str), "API": ("api", str), "TestID": ("test_id", int),
    "bwMaxMIB": ("bw_MiBps_max", float), "bwMinMIB": ("bw_MiBps_min", float),
    "bwMeanMIB": ("bw_MiBps_mean", float), "bwStdMIB": ("bw_MiBps_std", float),
    "MeanTime": ("mean_time_s", float), "numTasks": ("num_tasks", int),
    "segmentCount": ("segments", int), "blockSize": ("block", int), "transferSize": ("transfer", int),
    "repetitions": ("repetitions", int), "filePerProc": ("file_per_proc", int),
}


class ReplayerNotFound(FileNotFoundError):
    pass


def replayer_path(family=None, launcher=None):
    """The replayer binary: $IOMODEL_REPLAYER, else the one built for `family`
    (openmpi or mpich), else for the MPI of `launcher`, else the only one built
    (or Open MPI's): tracer/lib/<family>/, installed by scripts/setup.sh."""
    from iomodel import mpi
    env = os.environ.get("IOMODEL_REPLAYER")
    if env:
        if Path(env).is_file() and os.access(env, os.X_OK):
            return Path(env)
        raise ReplayerNotFound(f"IOMODEL_REPLAYER={env}: no such program")
    try:
        build = mpi.for_launcher(launcher or "mpirun", family)
    except mpi.NoBuild as e:
        raise ReplayerNotFound(str(e)) from None
    if build is None or not (build.replayer.is_file() and os.access(build.replayer, os.X_OK)):
        raise ReplayerNotFound(
            f"cannot find {REPLAYER_NAME} in {mpi.lib_dir()}/<mpi>/; build it with the README's "
            "set-up command (scripts/setup.sh; docs/mpi.md), or set IOMODEL_REPLAYER")
    return build.replayer


def _finish(d, source, transfer_times=None, io_times=None):
    """Derived keys; transfer_times, io_times: {(test id, operation): [wrRdTime,
    resp. iomodelIoTime, of each repetition]}."""
    d["file_per_proc"] = bool(d["file_per_proc"])
    if d["operation"] not in ("write", "read"):
        raise ValueError(f"{source}: unknown operation {d['operation']!r} in the summary")
    d["aggregate_bytes"] = d["num_tasks"] * d["segments"] * d["block"]
    d["bandwidth_Bps"] = d["bw_MiBps_mean"] * MIB
    times = (transfer_times or {}).get((d.get("test_id", 0), d["operation"]))
    t = statistics.median(times) if times else None
    d["transfer_time_s"], d["transfer_times_s"] = t, times
    d["transfer_bandwidth_Bps"] = d["aggregate_bytes"] / t if t else None
    times = (io_times or {}).get((d.get("test_id", 0), d["operation"]))
    t = statistics.median(times) if times else None
    d["io_time_s"], d["io_times_s"] = t, times
    d["io_bandwidth_Bps"] = d["aggregate_bytes"] / t if t else None
    return d


def _json_transfer_times(doc, key="wrRdTime"):
    """{(test id, operation): [key...]} from the per-repetition "Results" of IOR's JSON."""
    out = {}
    for test in doc.get("tests", []) if isinstance(doc, dict) else []:
        results = test.get("Results", []) if isinstance(test, dict) else []
        rows = [r for x in results for r in (x if isinstance(x, list) else [x])]
        for r in rows:
            if isinstance(r, dict) and r.get("access") in ("write", "read") and \
                    isinstance(r.get(key), (int, float)):
                out.setdefault((test.get("TestID", 0), r["access"]), []).append(float(r[key]))
    return out


def _text_transfer_times(lines):
    """The same from the "Results:" tables of IOR's text output (column wr/rd(s))."""
    out, test = {}, 0
    for k, line in enumerate(lines):
        if line.startswith("TestID"):
            try:
                test = int(line.split(":", 1)[1])
            except (IndexError, ValueError):
                pass
        if not line.startswith("access") or "wr/rd(s)" not in line:
            continue
        col = line.split().index("wr/rd(s)")
        for row in lines[k + 1:]:
            parts = row.split()
            if not parts or parts[0].startswith("---"):
                if parts:
                    continue
                break
            if parts[0] not in ("write", "read"):
                break
            try:
                out.setdefault((test, parts[0]), []).append(float(parts[col]))
            except (IndexError, ValueError):
                break
    return out


def _read_source(text_or_path):
    """(text, name): a path (str or Path) is read; a str that looks like JSON is the text."""
    if isinstance(text_or_path, bytes):
        return text_or_path.decode("utf-8", "replace"), "IOR output"
    if isinstance(text_or_path, str) and text_or_path.lstrip().startswith(("{", "[")):
        return text_or_path, "IOR output"
    path = Path(text_or_path)
    try:
        return path.read_text(encoding="utf-8", errors="replace"), str(path)
    except OSError as e:
        raise ValueError(f"{path}: cannot read the IOR summary: {e.strerror or e}") from None


def parse_ior_json(text_or_path, source=None):
    """IOR's JSON summary (the "summary" list), from its text or a file path."""
    text, name = _read_source(text_or_path)
    name = source or name
    if not text.strip():
        raise ValueError(f"{name}: empty IOR JSON summary (did the run fail?)")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{name}: not valid JSON ({e.msg} at line {e.lineno} column {e.colno}); "
                         "a run that stopped early leaves a truncated summary") from None
    summary = doc.get("summary") if isinstance(doc, dict) else None
    if not isinstance(summary, list) or not summary:
        raise ValueError(f"{name}: the JSON has no \"summary\" list of operations (did the run fail?)")
    out = []
    for i, entry in enumerate(summary):
        if not isinstance(entry, dict):
            raise ValueError(f"{name}: summary[{i}] is not an object")
        d = {}
        for key, (ours, kind) in _JSON_KEYS.items():
            if key not in entry:
                raise ValueError(f"{name}: summary[{i}] has no {key!r}")
            try:
                d[ours] = kind(entry[key])
            except (TypeError, ValueError):
                raise ValueError(f"{name}: summary[{i}] {key!r} is {entry[key]!r}, "
                                 f"not {kind.__name__}") from None
        out.append(_finish(d, name, _json_transfer_times(doc),
                           _json_transfer_times(doc, "iomodelIoTime")))
    return out


def parse_ior_text(text, source="IOR output"):
    """Every "Summary of all tests:" table of IOR's text output (IOR 3.x and 4.x
    layouts: the columns are found by the header's names)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    lines = [l.strip() for l in text.splitlines()]
    out = []
    transfers = _text_transfer_times(lines)
    for k, line in enumerate(lines):
        if not line.startswith("Summary of all tests:"):
            continue
        rest = [l for l in lines[k + 1:] if l]
        if not rest or not rest[0].startswith("Operation"):
            raise ValueError(f"{source}: no column header after 'Summary of all tests:'")
        header = rest[0].split()
        cols, seen = {}, set()
        for pos, name in enumerate(header):
            key = _TEXT_COLUMNS.get(name)
            if key is None:
                continue
            if key[0] in seen:  # the second StdDev is the operations' one
                continue
            seen.add(key[0])
            cols[pos] = key
        missing = {v[0] for v in _TEXT_COLUMNS.values()} - seen
        if missing:
            raise ValueError(f"{source}: the summary header has no column for {', '.join(sorted(missing))}")
        for row in rest[1:]:
            tok = row.split()
            if not tok or tok[0] not in ("write", "read"):
                break
            if len(tok) != len(header):
                raise ValueError(f"{source}: summary row has {len(tok)} fields, the header "
                                 f"{len(header)}: {row!r}")
            d = {"operation": tok[0]}
            for pos, (ours, kind) in cols.items():
                try:
                    d[ours] = kind(tok[pos])
                except ValueError:
                    raise ValueError(f"{source}: {header[pos]} is {tok[pos]!r} in {row!r}") from None
            out.append(_finish(d, source, transfers))
    if not out:
        hint = next((l for l in lines if "ERROR" in l or "Error" in l or "error:" in l), None)
        raise ValueError(f"{source}: no 'Summary of all tests:' table with write/read rows"
                         + (f"; the output says: {hint}" if hint else " (did the run fail?)"))
    return out


def parse_ior_output(stdout, summary_file=None):
    """Results of one IOR (or iomodel_replay) run: the JSON summary file when it is
    there and valid, else the JSON or text on stdout.  ValueError says what is
    wrong with each when none of them parses."""
    if isinstance(stdout, bytes):
        stdout = stdout.decode("utf-8", "replace")
    stdout = stdout or ""
    problems = []
    if summary_file is not None:
        path = Path(summary_file)
        if not path.is_file():
            problems.append(f"{path}: no such summary file")
        else:
            try:
                return parse_ior_json(path)
            except ValueError as e:
                json_error = str(e)
            # summaryFormat=default with a summaryFile: the text summary is in the file
            try:
                return parse_ior_text(path.read_text(encoding="utf-8", errors="replace"), str(path))
            except ValueError:
                problems.append(json_error)
    try:
        if stdout.lstrip().startswith("{"):
            return parse_ior_json(stdout, "IOR output")
        return parse_ior_text(stdout, "IOR output")
    except ValueError as e:
        problems.append(str(e) if stdout.strip() else "IOR output: empty")
    raise ValueError("cannot read the IOR results: " + "; ".join(problems))
