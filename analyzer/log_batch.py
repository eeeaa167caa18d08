"""A directory of Darshan logs (a facility's day) into one model per log and
a summary table: `iomodel analyze LOGDIR -o OUTDIR`.  Each log is analysed
as `analyze LOG` would (its reading contained in a child process), its model
written to OUTDIR/NAME.json (NAME: the log's path under LOGDIR, its slashes
made dashes); a log that gives no model gets its reason in the table
instead.  As an MPI job (analyzer/mpi_job.py) the logs are spread over the
processes, largest first, each to the process with the fewest bytes so far;
process 0 gathers the rows and writes OUTDIR/summary.parquet, one row per log
(SUMMARY): what a site needs to find the jobs worth moving.
"""
from pathlib import Path

import pyarrow as pa

__all__ = ["logs_in", "analyze_logs", "SUMMARY"]

SUMMARY = pa.schema([
    ("log", pa.string()),            # its path under the directory
    ("model", pa.string()),          # its model's file name in OUTDIR; null: none
    ("application", pa.string()),
    ("np", pa.int64()),
    ("phases", pa.int64()),
    ("weight_bytes", pa.int64()),    # the bytes its phases move
    ("io_time_s", pa.float64()),
    ("run_time_s", pa.float64()),
    ("operations", pa.string()),     # "read,write": the phases' operations
    ("access_modes", pa.string()),   # the phases' access modes ("contiguous,strided")
    ("access_types", pa.string()),   # the files' access types ("shared,unique")
    ("error", pa.string()),          # why there is no model; null: there is one
])


def logs_in(directory):
    """The Darshan logs under `directory` (at any depth: a facility's
    YEAR/MONTH/DAY layout), in path order; a link to nothing is listed too
    (its row says so)."""
    return sorted(p for p in Path(directory).rglob("*.darshan") if p.is_file() or p.is_symlink())


def _size(path):
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _share(logs, size):
    """Each process's logs: largest first, to the process with the fewest bytes."""
    loads, out = [0] * size, [[] for _ in range(size)]
    for log in sorted(logs, key=lambda p: (-_size(p), str(p))):
        i = loads.index(min(loads))
        out[i].append(log)
        loads[i] += _size(log)
    return out


def _names(rels):
    """Each log's model file: its path with dashes for slashes, .json for
    .darshan; where that name is taken by a log before it in path order,
    .1, .2, ... before .json, the first free."""
    out, taken = {}, set()
    for r in sorted(rels):
        base = r.replace("/", "-")[:-len(".darshan")]
        name, k = base, 0
        while name in taken:
            k += 1
            name = f"{base}.{k}"
        taken.add(name)
        out[r] = name + ".json"
    return out


def _joined(values):
    return ",".join(sorted({str(v) for v in values if v is not None}))


def _row(rel, model_name, model, error):
    if model is None:
        return {"log": rel, "model": None, "error": error}
    app = model["application"]
    return {"log": rel, "model": model_name, "application": app.get("name"), "np": app.get("np"),
            "phases": len(model["phases"]), "weight_bytes": model.get("weight"),
            "io_time_s": app.get("io_time_s"), "run_time_s": app.get("run_time_s"),
            "operations": _joined(p["operation"] for p in model["phases"]),
            "access_modes": _joined(p.get("access_mode") for p in model["phases"]),
            "access_types": _joined(f.get("access_type") for f in model.get("files", [])),
            "error": None}


def _plan(directory, outdir, size):
    """Process 0's plan: each process's logs and each log's model name, or
    what is wrong (raised after every process knows)."""
    logs = logs_in(directory)
    if not logs:
        return None, f"{directory}: no Darshan log (*.darshan) in it or under it, and no trace"
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return None, f"{outdir}: cannot make the models' directory: {e.strerror or e}"
    if not outdir.is_dir():
        return None, f"{outdir}: not a directory (give the directory for the models)"
    return (_share(logs, size), _names([str(p.relative_to(directory)) for p in logs])), None


def analyze_logs(directory, outdir, analyze_one, comm=None):
    """Every log's model into outdir, and the summary rows: process 0 gets
    them all (and writes summary.parquet), the others None.
    analyze_one(path) -> model, raising ValueError (with a message naming the
    log) where the log gives none.  Every process reaches the gather whatever
    happens to its logs, so that none waits for ever."""
    import traceback
    from iomodel.models import save_model
    from iomodel.outputs import atomic_path
    import pyarrow.parquet as pq
    directory, outdir = Path(directory), Path(outdir)
    rank, size = (comm.Get_rank(), comm.Get_size()) if comm is not None else (0, 1)
    plan = _plan(directory, outdir, size) if rank == 0 else None
    if comm is not None:
        plan = comm.bcast(plan, root=0)
    (shares, names), wrong = plan if plan[0] is not None else ((None, None), plan[1])
    if wrong:
        if rank:
            raise SystemExit(2)            # process 0 says it
        raise ValueError(wrong)
    rows, bug = [], None
    for log in shares[rank]:
        rel = str(log.relative_to(directory))
        try:
            if not log.exists():
                raise ValueError(f"{log}: a link to nothing")
            model = analyze_one(log)
            if not model["phases"]:
                raise ValueError(f"{log}: no data access to model")
            save_model(model, outdir / names[rel], check=False)
        except (ValueError, OSError) as e:
            rows.append(_row(rel, None, None, str(e)))
            continue
        except Exception:               # noqa: BLE001 - a bug: said by process 0, after the gather
            bug = f"{log}: {traceback.format_exc()}"
            break
        rows.append(_row(rel, names[rel], model, None))
    if comm is not None:
        parts = comm.gather((rows, bug), root=0)
        if rank:
            return None
        rows = [r for part, _ in parts for r in part]
        bug = next((b for _, b in parts if b), None)
    if bug:
        raise RuntimeError(f"analyzing the logs failed: {bug}")
    rows.sort(key=lambda r: r["log"])
    table = pa.Table.from_pylist(rows, schema=SUMMARY)
    with atomic_path(outdir / "summary.parquet") as tmp:
        pq.write_table(table, str(tmp))
    return rows
