"""The `iomodel` command: one entry point, one subcommand per step."""
import argparse
import json
import math
import os
import sys
from pathlib import Path


def _positive(text):
    """An argparse type: a whole number of at least 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return n


def fail(msg, code=2):
    print(f"iomodel: error: {msg}", file=sys.stderr)
    return code


def cmd_trace(args):
    from iomodel.tracer.launch import header_nranks, job_nranks, mismatch, run_traced
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        return fail("nothing to run: give the launch command after --, "
                    "e.g. iomodel trace -o run1 -- mpirun -np 4 ./app")
    rc, out = run_traced(args.output, cmd, requested=args.mpi,
                         say=lambda line: print(f"iomodel: {line}", file=sys.stderr))
    other = mismatch(out)
    if other:
        return fail(f"nothing was traced: the tracer was {other}; the run itself went on untouched. "
                    "Trace it with the build for that MPI (--mpi; docs/mpi.md)", rc or 2)
    files = sorted(out.glob("rank-*.iot"))
    empty = [f for f in files if f.stat().st_size == 0]     # a rank stopped before its tracer wrote
    files = [f for f in files if f not in empty]
    nranks = max((header_nranks(f) for f in files), default=0)
    joined = job_nranks(out)
    of = f" of {nranks}" if nranks > len(files) + joined else ""
    stopped = (f"{len(empty)} rank file(s) empty ({', '.join(f.name for f in empty[:4])}"
               f"{', ...' if len(empty) > 4 else ''}): those ranks were stopped after the tracer created "
               "their files in MPI_Init, before it wrote anything")
    if joined:
        print(f"iomodel: trace of {joined} rank(s) in {args.output}/job.iot"
              + (f" and {len(files)} rank file(s)" if files else ""), file=sys.stderr)
    elif files:
        print(f"iomodel: trace of {len(files)}{of} rank(s) in {args.output}", file=sys.stderr)
    elif empty:
        print(f"iomodel: no trace was written in {args.output}: {stopped}", file=sys.stderr)
    elif rc:
        root = " (as root, Open MPI's mpirun needs --allow-run-as-root)" \
            if os.geteuid() == 0 and Path(cmd[0]).name.startswith(("mpirun", "orterun")) else ""
        print(f"iomodel: no trace was written in {args.output}: the command exited with status {rc} "
              f"before any process called MPI_Init; its own messages are above{root}", file=sys.stderr)
    else:
        print(f"iomodel: no trace was written in {args.output}: the command ran, but no process "
              "called MPI_Init (not an MPI program?)", file=sys.stderr)
    if empty and (joined or files):
        print(f"iomodel: warning: {stopped}", file=sys.stderr)
    if of:
        print(f"iomodel: warning: {nranks - len(files) - joined} rank(s) wrote no trace: the trace is "
              "partial (iomodel trace-info says which)", file=sys.stderr)
    return rc


def _line(text=""):
    """One line of a trace's strings (paths, hosts, routine names) as printable
    text: a newline or a terminal escape in a name someone gave a file prints
    as a space (a trace is data a user may have been sent)."""
    from iomodel.outputs import comment_text
    print(comment_text(text))


def print_summary(s):
    from iomodel.models.report import human
    _line(f"trace        {s['trace']}")
    of = f" of {s['nranks']}" if s["nranks"] != s["ranks"] else ""
    _line(f"ranks        {s['ranks']}{of} on {len(s['hosts'])} host(s): {', '.join(s['hosts'])}")
    _line(f"ended by     {', '.join(s['ended_by'])}")
    _line(f"events       {s['total_events']}  ({human(s['trace_bytes'])} on disk, "
          f"{s['trace_bytes'] / max(s['total_events'], 1):.1f} B/event)")
    _line(f"duration     {s['duration_s']:.6f} s from MPI_Init")
    _line(f"written      {s['bytes_written']} B ({human(s['bytes_written'])})")
    _line(f"read         {s['bytes_read']} B ({human(s['bytes_read'])})")
    for kind, n, mpi in (("MPI, returned an MPI error", s["mpi_errors"], True),
                         ("POSIX and stdio", s["posix_errors"], False)):
        if n:
            which = ", ".join(f"{r} {c}" for r, c in sorted(s["failed"].items()) if r.startswith("MPI_") == mpi)
            _line(f"failed calls {n} {kind} ({which})")
    _line()
    w = max([len(p) for p in s["files"]] + [4])
    _line(f"{'file':<{w}}  ranks  {'written':>14}  {'read':>14}")
    for p in s["files"]:
        f = s["file_stats"][p]
        _line(f"{p:<{w}}  {f['ranks']:>5}  {f['bytes_written']:>14}  {f['bytes_read']:>14}")
    _line()
    w = max([len(n) for n in s["events"]] + [7])
    _line(f"{'routine':<{w}}  {'calls':>8}  {'bytes':>14}")
    for n in sorted(s["events"]):
        b = s["routine_bytes"].get(n)
        _line(f"{n:<{w}}  {s['events'][n]:>8}  {b if b is not None else '':>14}")


def damaged(e, does):
    """A damaged trace's error, with the hint of the command's --partial where
    something comes before the damage (`does`: what the option does)."""
    readable = getattr(e, "partial", None) is not None and e.partial.ranks.num_rows > 0
    return fail(f"{e}{f' (--partial {does} what comes before the damage)' if readable else ''}")


def cmd_trace_info(args):
    from iomodel.analyzer import Trace, TraceError
    from iomodel.analyzer.summary import summarize
    try:
        trace = Trace(args.trace, partial=args.partial)
        s = summarize(trace)
    except TraceError as e:
        return damaged(e, "reads")
    for d in s["damage"]:
        print(f"iomodel: warning: {d}; showing what comes before it", file=sys.stderr)
    for note in s["gaps"]:
        print(f"iomodel: warning: {args.trace}: {note}", file=sys.stderr)
    if args.rank is not None and args.rank not in trace.ranks["rank"].to_pylist():
        from iomodel.models import format_ranks
        return fail(f"{args.trace}: no rank {args.rank} in the trace (ranks "
                    f"{format_ranks(trace.ranks['rank'].to_pylist()) or 'none'})")
    if args.parquet:
        trace.to_parquet(args.parquet)
        print(f"iomodel: tables written to {args.parquet}", file=sys.stderr)
    if args.events:
        print_events(trace, args.rank)
    elif args.json:
        print(json.dumps(s, indent=2))
    else:
        print_summary(s)
    return 0


def print_events(trace, rank=None):
    """One line per event, in call order per rank, like darshan-dxt-parser."""
    import numpy as np
    ev = trace.events
    cols = {k: ev[k].to_numpy(zero_copy_only=False) for k in
            ("rank", "seq", "file_id", "lclock", "offset", "bytes", "t_start", "t_end",
             "abs_offset", "abs_end", "data", "completion", "request")}
    from iomodel.outputs import comment_text      # names from the trace: printable, one line each
    col = ev["routine"].combine_chunks() if ev.num_rows else None
    names = [comment_text(x) for x in col.dictionary.to_pylist()] if col is not None else []
    which = col.indices.to_numpy(zero_copy_only=False) if col is not None else []
    ext = trace.extents
    nranges = {}
    for r, q in zip(ext["rank"].to_numpy(), ext["seq"].to_numpy()):
        nranges[(r, q)] = nranges.get((r, q), 0) + 1
    paths = [comment_text(p) for p in trace.paths]
    print(f"{'rank':>4} {'seq':>6} {'routine':<28} {'file':<20} {'lclock':>6} {'offset':>12} "
          f"{'bytes':>10} {'file range':>25} {'start_s':>11} {'end_s':>11}")
    for i in np.lexsort((cols["seq"], cols["rank"])):
        r = cols["rank"][i]
        if rank is not None and r != rank:
            continue
        f = paths[cols["file_id"][i]] if cols["file_id"][i] >= 0 else "-"
        if len(f) > 20:
            f = "..." + f[-17:]
        rng = ""
        if cols["data"][i] and cols["abs_offset"][i] >= 0:
            k = nranges.get((r, cols["seq"][i]), 1)
            rng = f"{cols['abs_offset'][i]}-{cols['abs_end'][i]}" + (f" ({k} pieces)" if k > 1 else "")
        elif cols["completion"][i]:
            rng = f"completes seq {cols['request'][i]}"
        print(f"{r:>4} {cols['seq'][i]:>6} {names[which[i]]:<28} {f:<20} {cols['lclock'][i]:>6} "
              f"{cols['offset'][i]:>12} {cols['bytes'][i]:>10} {rng:>25} "
              f"{cols['t_start'][i]:>11.6f} {cols['t_end'][i]:>11.6f}")


def cmd_analyze(args):
    from iomodel.analyzer import TraceError, analyze
    from iomodel.models import save_model
    from iomodel.models.report import text
    from iomodel.models import ModelError
    from iomodel.analyzer.log_batch import logs_in
    src = Path(args.input)
    if src.is_dir() and not any(src.glob("*.iot")):
        if logs_in(src):
            return _analyze_logs(args)
        if not any(src.glob("rank-*")):     # rank files of other names: the trace reader says what
            return _one_voice(f"{src}: neither a trace (no rank-*.iot, no job.iot) nor a directory of Darshan "
                              f"logs (no *.darshan in it or under it)")
    args.output = args.output or "model.json"
    try:
        model = analyze(args.input, max_comm_gap=args.max_comm_gap, max_idle_s=args.max_idle,
                        jobs=args.jobs, partial=args.partial, max_memory=args.max_memory)
    except ModelError as e:      # what the input holds cannot be a model: damage the checks missed
        return fail(f"{args.input}: the model of what it holds is not valid ({e}): is it damaged?")
    except TraceError as e:
        return damaged(e, "models")
    if model is None:            # a worker process of an MPI analysis: process 0 writes the model
        return 0
    for line in model["source"].get("unavailable", []):
        print(f"iomodel: note: {args.input} cannot tell {line}", file=sys.stderr)
    for line in model["source"].get("inferred", []):
        print(f"iomodel: note: inferred: {line}", file=sys.stderr)
    for line in (model["source"].get("partial") or {}).get("notes", []):
        print(f"iomodel: warning: {args.input}: {line}; the model is partial", file=sys.stderr)
    if not model["phases"]:      # no silent empty model: say what the input holds instead
        return fail(f"{args.input}: no data access to model: {_what_was_seen(args.input)}")
    save_model(model, args.output, check=False)  # build_model validated it
    if not args.quiet:
        print(text(model))
        print(f"\nmodel written to {args.output}")
    return 0


def _analyze_logs(args):
    """analyze LOGDIR: a model per Darshan log and their summary table, spread
    over the processes of an MPI launch (analyzer/log_batch.py)."""
    from iomodel.analyzer import TraceError, analyze
    from iomodel.analyzer.log_batch import analyze_logs
    from iomodel.analyzer.mpi_job import world
    from iomodel.models import ModelError
    comm = world()
    if args.partial or args.jobs or args.max_comm_gap is not None or args.max_memory is not None:
        return _one_voice(f"{args.input}: a directory of Darshan logs: --partial, -j, --max-comm-gap and "
                          "--max-memory are a trace's")
    out = Path(args.output or f"{Path(args.input).name}-models")

    def one(log):
        try:
            return analyze(log, max_idle_s=args.max_idle, mpi=False)    # each log in one process
        except (ModelError, TraceError) as e:     # a log that gives no model: its row says why
            raise ValueError(str(e)) from None
    rows = analyze_logs(args.input, out, one, comm)
    if rows is None:             # a worker process: process 0 says it all
        return 0
    bad = [r for r in rows if r["error"]]
    for r in bad:
        print(f"iomodel: note: no model: {r['error']}", file=sys.stderr)
    if len(bad) == len(rows):
        return fail(f"{args.input}: none of its {len(rows)} Darshan logs gave a model (summary.parquet in {out} "
                    f"says why)")
    if not args.quiet:
        print(f"{len(rows) - len(bad)} of {len(rows)} logs modelled; models and summary.parquet in {out}")
    return 0


def _one_voice(msg):
    """A refusal said once for a whole MPI launch: by its process 0."""
    from iomodel.analyzer.mpi_job import launched_rank
    return 2 if launched_rank() else fail(msg)


def _what_was_seen(path):
    """What a trace without data accesses holds: its calls."""
    from pathlib import Path
    if not Path(path).is_dir():
        return ("the log has no read or write of a file (its I/O went through what Darshan "
                "did not record)")
    from iomodel.analyzer import Trace
    from iomodel.analyzer.summary import summarize
    from iomodel.analyzer.trace import OPENS
    calls = summarize(Trace(path))["events"]
    seen = ", ".join(f"{n} x{c}" for n, c in sorted(calls.items())) or "no call at all"
    opened = any(n in OPENS for n in calls)
    return (f"the trace holds only {seen}: "
            + ("files were opened, but none was read or written" if opened else
               "no file was opened, read or written")
            + " through the calls the tracer follows (MPI-IO, POSIX, stdio); if the application "
            "does file I/O, it went through calls the tracer does not follow, or to files it leaves "
            "out (docs/commands/trace.md, \"What is recorded\")")


def _load(path, phases=False):
    """A model file; phases: one that has some (a model without is nothing to
    replay or predict), and a partial one is said as `analyze` says it (the
    commands that replay, predict or extrapolate its phases would otherwise
    pass over the I/O it lacks in silence; `show` prints it in its output)."""
    from iomodel.models import load_model
    model = load_model(path)
    if phases and not model["phases"]:
        raise ValueError(f"{path}: the model has no phases: no I/O to replay or predict")
    if phases:
        for line in (model["source"].get("partial") or {}).get("notes", []):
            print(f"iomodel: warning: {path}: {line}; the model is partial", file=sys.stderr)
    return model


def _invocations(path, model, cluster=None):
    """The model's IOR runs (replay/ior.py); a phase no replay can make (a
    transfer of 2^60 bytes) is refused at once, naming the file and the phase."""
    from iomodel.replay.ior import ior_invocations
    try:
        return ior_invocations(model, cluster)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def _number(text):
    """A size as the user wrote it: 32, not 32.0; a finite one (no inf, no nan)."""
    x = float(text)
    if not math.isfinite(x):
        raise ValueError(f"{text!r} is not a finite number")
    return int(x) if x.is_integer() else x


_number.__name__ = "finite number"        # argparse's "invalid finite number value: 'inf'"


def _input_sizes(args, models):
    """Each input model's problem size: --sizes, or its command line's --size-arg-th argument."""
    if args.sizes and args.size_arg is not None:
        raise ValueError("--sizes and --size-arg both give the models' sizes: give one of them")
    if args.sizes:
        try:
            sizes = [_number(x) for x in args.sizes.split(",")]
        except ValueError:
            sizes = [0]
        if min(sizes) <= 0:
            raise ValueError(f"--sizes {args.sizes}: give one positive number per model, comma-separated")
        return sizes
    if args.size_arg is None:
        return None
    sizes = []
    for path, m in models:
        ext = m["source"].get("extrapolated")
        if ext:       # its command line is its nearest input's, not at its own size
            if ext["size"] is None:
                raise ValueError(f"{path}: an extrapolated model with no size of its own; give the "
                                 "sizes with --sizes")
            sizes.append(ext["size"])
            continue
        cmd = m["application"]["command"]
        arg = cmd[args.size_arg] if 0 <= args.size_arg < len(cmd) else None
        shown = " ".join(cmd) if cmd else "not recorded"
        if arg is None:
            raise ValueError(f"{path}: its command line ({shown}) has no argument {args.size_arg} "
                             f"(0 is the program)")
        try:
            sizes.append(_number(arg))
        except ValueError:
            raise ValueError(f"{path}: argument {args.size_arg} of its command line ({shown}) is "
                             f"{arg!r}, not a number") from None
        if sizes[-1] <= 0:
            raise ValueError(f"{path}: argument {args.size_arg} of its command line is {arg}, "
                             "not a positive size")
    if len(set(sizes)) == 1 and args.size is not None and args.size != sizes[0]:
        raise ValueError(f"argument {args.size_arg} of every model's command line is {sizes[0]:g}, so a "
                         f"law in it cannot reach --size {args.size:g}: is it the size argument? "
                         "(0 is the program)")
    return sizes


def _grid(text, what):
    """A process grid as the user wrote it: 4x2x2."""
    try:
        grid = [int(x) for x in text.lower().split("x")]
    except ValueError:
        grid = [0]
    if min(grid) < 1:
        raise ValueError(f"{what} {text}: give the processes along each axis, fastest-varying first, "
                         "as 4x2x2")
    return grid


def _input_grids(args, models):
    """Each input model's process grid: --grids, or its command line's --grid-args arguments."""
    if args.grids and args.grid_args:
        raise ValueError("--grids and --grid-args both give the models' grids: give one of them")
    if args.grids:
        return [_grid(g, "--grids") for g in args.grids.split(",")]
    if not args.grid_args:
        return None
    try:
        ks = [int(k) for k in args.grid_args.split(",")]
    except ValueError:
        raise ValueError(f"--grid-args {args.grid_args}: give argument numbers, comma-separated "
                         "(0 is the program)") from None
    grids = []
    for path, m in models:
        ext = m["source"].get("extrapolated")
        if ext:       # its command line is its nearest input's
            if not ext.get("grid"):
                raise ValueError(f"{path}: an extrapolated model with no grid of its own; give the "
                                 "grids with --grids")
            grids.append(ext["grid"])
            continue
        cmd = m["application"]["command"]
        shown = " ".join(cmd) if cmd else "not recorded"
        missing = [k for k in ks if not 0 <= k < len(cmd)]
        if missing:
            raise ValueError(f"{path}: its command line ({shown}) has no argument {missing[0]} (0 is the program)")
        grids.append(_grid("x".join(cmd[k] for k in ks), f"{path}: arguments {args.grid_args} of its command "
                           f"line ({shown}):"))
    return grids


def cmd_extrapolate(args):
    from iomodel.models import save_model
    from iomodel.models.extrapolate import extrapolate
    from iomodel.models.report import text
    models = [(p, _load(p, phases=True)) for p in args.models]
    sizes = _input_sizes(args, models)
    if args.size is not None and args.size <= 0:
        return fail(f"--size {args.size}: give a positive size")
    grids = _input_grids(args, models)
    grid = _grid(args.grid, "--grid") if args.grid else None
    model = extrapolate(models, args.np, size=args.size, sizes=sizes, grid=grid, grids=grids)
    ext = model["source"]["extrapolated"]
    for line in ext["approximate"]:
        print(f"iomodel: note: approximate: {line}", file=sys.stderr)
    for line in ext["assumed"]:
        print(f"iomodel: note: assumed: {line}", file=sys.stderr)
    save_model(model, args.output, check=False)   # extrapolate validated it
    if not args.quiet:
        print(text(model))
        print("\nlaws (value at the target):")
        for law in ext["laws"]:
            if law["kind"] != "constant" or args.all_laws:
                print(f"  {law['field']:<34} {law['law']:<28} {law['value']}"
                      + ("" if law["exact"] or law["kind"] == "measured" else
                         f"   (best fit, off by up to {law['max_residual']:.1%})"))
        print(f"\nmodel written to {args.output}")
    return 0


def cmd_show(args):
    from iomodel.models.report import summary, text
    model = _load(args.model)
    print(json.dumps(summary(model), indent=2) if args.json else text(model))
    return 0


def cmd_plot(args):
    from iomodel.models.plot import plot
    model = _load(args.model)
    ops = None
    src = model["source"]
    if not args.from_model and src.get("kind") in ("trace", "darshan") and src.get("path"):
        from pathlib import Path
        if Path(src["path"]).exists():
            from iomodel.analyzer import load_ops
            ops = load_ops(src["path"], partial=bool(src.get("partial")))
            for note in (ops.source.get("partial") or {}).get("notes", []):
                print(f"iomodel: warning: {src['path']}: {note}", file=sys.stderr)
    drawn = plot(model, args.output, ops=ops, logical=args.logical)
    what = f"operations from {src['path']}" if ops is not None else "the model phases"
    if drawn:
        print(f"iomodel: {what} drawn in {args.output}", file=sys.stderr)
    else:
        print(f"iomodel: note: {what}: no operation of known file offset to draw; "
              f"{args.output} has the empty axes", file=sys.stderr)
    return 0


def _clusters(args):
    """The --vc clusters (names of shipped ones or paths), with --region, trusted
    to run their launcher options if --trust-cluster says so."""
    from iomodel.cluster.description import load_cluster
    clusters = [load_cluster(v, region=args.region) for v in args.vc]
    for c in clusters:
        c.trusted = getattr(args, "trust_cluster", False)
    return clusters


def _profiles(args, clusters):
    """Each cluster's profile, with --profile NAME=PATH overriding it for the
    clusters NAME names: by their name (every cluster of that name), their
    file's name or its path as given."""
    from pathlib import Path
    from iomodel.cluster.profile import Profile
    given = {}
    for item in args.profile or []:
        name, sep, path = item.partition("=")
        if not sep:
            raise ValueError(f"--profile {item!r}: expected NAME=PATH (NAME: a cluster's name or file)")
        prof = Profile.read(path)        # a name given twice: both profiles' points
        given[name] = given[name] + prof if name in given else prof
    used, out = set(), []
    for c in clusters:
        p = Profile.load(c)
        keys = [c.name] + ([str(c.path), Path(c.path).name] if c.path else [])
        for key in keys:
            if key in given:
                p = given[key] + p
                used.add(key)
                break
        out.append(p)
    if set(given) - used:
        raise ValueError(f"--profile names no --vc cluster: {', '.join(sorted(set(given) - used))}")
    return out


def _has_results(path):
    from pathlib import Path
    p = Path(path)
    return (p / "results.json").is_file() if p.is_dir() else p.is_file()


def _replay_bandwidths(path):
    """{phase id: B/s} from a replay's results (DIR or DIR/results.json)."""
    from pathlib import Path
    p = Path(path)
    p = p / "results.json" if p.is_dir() else p
    out = {}
    try:
        data = json.loads(p.read_text())
        for entry in data.get("runs", {}).values():
            if entry.get("ok"):
                bw = float(entry["bandwidth_Bps"])
                for pid in entry["phase_ids"]:
                    out[int(pid)] = bw
    except (ValueError, TypeError, KeyError, AttributeError) as e:   # not JSON, or not a replay's
        raise ValueError(f"{p}: not the results of `iomodel replay` ({type(e).__name__}: {e})") from None
    if not out:
        raise ValueError(f"{p}: no successful replay results")
    return out


def _default_dir(prefix, *names):
    """replay-APP-VC and the like: names from a model or a cluster file made safe
    file-name parts, so that the default is always a folder of the current one."""
    from iomodel.outputs import safe_name
    return "-".join([prefix, *(safe_name(n) for n in names)])


def cmd_predict(args):
    from iomodel.cluster.predict import format_prediction, predict
    model = _load(args.model, phases=True)
    (cluster,) = _clusters(args)
    (profile,) = _profiles(args, [cluster])
    bws = None
    if args.replay is True or (args.replay and not _has_results(args.replay)):
        # replay now, then predict with what it measured
        from iomodel.replay.backends import get_backend
        from iomodel.replay.runner import replay
        out = args.replay if args.replay is not True else \
            _default_dir("replay", model["application"]["name"], cluster.name)
        _invocations(args.model, model)
        _, failures = replay(model, cluster, get_backend(args.backend), out,
                             as_modelled=args.backend == "builtin")     # replay's default
        if failures:
            return fail(f"{len(failures)} replay run(s) failed (see {out}/results.json)", code=1)
        args.replay = out
    if args.replay:
        bws = _replay_bandwidths(args.replay)
    pred = predict(model, cluster, profile=profile, bandwidths=bws,
                   without=[w for w in args.without.split(",") if w])
    print(json.dumps(pred, indent=2) if args.json else format_prediction(pred))
    return 0


def cmd_compare(args):
    from iomodel.cluster.compare import compare, format_comparison, plot_comparison
    if bool(args.vc) == bool(args.space):
        raise ValueError("compare: give the clusters to compare, --vc VC [VC ...], or a space of "
                         "configurations, --space SPACE.yaml (one of the two)")
    model = _load(args.model, phases=True)
    if args.space:
        from iomodel.cluster.space import load_space
        from iomodel.cluster.space_compare import compare_space, format_space_comparison
        if args.profile or args.region:
            raise ValueError("compare --space: the space says the profiles and prices "
                             "(not with --profile or --region)")
        if args.profiles and not Path(args.profiles).is_dir():
            raise ValueError(f"--profiles {args.profiles}: no such directory")
        result = compare_space(model, load_space(args.space, args.profiles))
        print(json.dumps(result, indent=2) if args.json else format_space_comparison(result))
        if args.plot:
            from iomodel.cluster.space_compare import plot_pareto
            print(f"iomodel: figure in {plot_pareto(result, args.plot)}", file=sys.stderr)
    else:
        if args.profiles:
            raise ValueError("compare: --profiles goes with --space (with --vc: --profile NAME=PATH)")
        clusters = _clusters(args)
        result = compare(model, clusters, _profiles(args, clusters))
        print(json.dumps(result, indent=2) if args.json else format_comparison(result))
    if args.plot:
        files = plot_comparison(result, args.plot)
        print(f"iomodel: figures in {', '.join(map(str, files))}", file=sys.stderr)
    return 0


def _one_cluster(args):
    from iomodel.cluster.description import load_cluster
    if not args.vc:
        return None
    cluster = load_cluster(args.vc, region=getattr(args, "region", None))
    cluster.trusted = getattr(args, "trust_cluster", False)
    return cluster


def cmd_ior(args):
    from iomodel.replay.ior import ior_scripts, to_json, to_sh
    from iomodel.replay.trust import check_launcher_options
    model = _load(args.model, phases=True)
    cluster = _one_cluster(args)
    invs = _invocations(args.model, model, cluster)
    if args.format == "json":
        print(json.dumps(to_json(invs), indent=2))
    elif args.format == "ior-script":
        for np_, text in ior_scripts(invs).items():
            if len(set(i.launch_np for i in invs)) > 1:
                print(f"# ---- script for np {np_} ----")
            print(text, end="")
    else:   # the launcher and its options (checked: the script is run as is), -np per run
        if cluster:
            check_launcher_options(cluster)
        launcher = [cluster.launcher, *cluster.launcher_options] if cluster else ["mpirun"]
        print(to_sh(model, invs, launcher=launcher, ior=(cluster.ior if cluster and cluster.ior
                                                          else "ior")), end="")
    return 0


def cmd_replay(args):
    from iomodel.replay.backends import get_backend
    from iomodel.cluster.characterize import profile_from_replay, write_profile
    from iomodel.replay.runner import replay
    model = _load(args.model, phases=True)
    cluster = _one_cluster(args)
    _invocations(args.model, model)
    backend = get_backend(args.backend)
    out = args.output or _default_dir("replay", model["application"]["name"], cluster.name)
    as_modelled = args.as_modelled if args.as_modelled is not None else args.backend == "builtin"
    if args.backend == "ior" and args.as_modelled is None:
        print("iomodel: IOR replays the phases back to back in its own layout: the application's "
              "computing between them is not replayed (the builtin backend replays it)", file=sys.stderr)
    by_phase, failures = replay(model, cluster, backend, out, repeat=args.repeat, timeout=args.timeout,
                                as_modelled=as_modelled, launches=args.launches)
    byid = {p["id"]: p for p in model["phases"]}
    print(f"\n{'IdPh':>10} {'op':<6} {'np':>4} {'BW_CH MiB/s':>12} {'time s':>10} {'variation':>9}")
    for first, last in model["runs"]:   # one row per run of identical phases, as `show`
        p, e = byid[first], by_phase.get(first)
        ids = str(first) if first == last else f"{first} to {last}"
        if e:
            weight = sum(byid[i]["weight"] for i in range(first, last + 1))
            var = f"{100 * e['variation']:.1f}%" if e.get("variation") is not None else ""
            print(f"{ids:>10} {p['operation']:<6} {p['np']:>4} {e['bandwidth_Bps'] / 2**20:>12.1f} "
                  f"{weight / e['bandwidth_Bps']:>10.4f} {var:>9}")
        else:
            print(f"{ids:>10} {p['operation']:<6} {p['np']:>4} {'(failed)':>12}")
    prof = write_profile(profile_from_replay(model, by_phase, backend.name), f"{out}/profile.parquet")
    print(f"\nresults in {out}/results.json, as a bandwidth profile in {prof}")
    if failures:
        return fail(f"{len(failures)} run(s) failed (their output is above and in {out}/results.json);"
                    " run the same command again to retry them", code=1)
    return 0


def _memory(text):
    from iomodel.analyzer.memory_bound import BASE_BYTES, MIN_BOUND
    from iomodel.cluster.description import parse_size
    try:
        n = parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if n < MIN_BOUND:
        raise argparse.ArgumentTypeError(f"{text}: at least {MIN_BOUND >> 20} MiB (a process holds about "
                                         f"{BASE_BYTES >> 20} MiB before any trace)")
    return n


def _sizes(text):
    from iomodel.cluster.description import parse_size
    return [parse_size(x) for x in text.split(",")] if text else None


def cmd_characterize(args):
    if bool(args.vc) == bool(args.space):
        raise ValueError("characterize: give one cluster, --vc VC, or a space, --space SPACE.yaml "
                         "with --design or --point NAME (one of the two)")
    if args.space:
        return _characterize_space(args)
    if args.design or args.point or args.profiles:
        raise ValueError("characterize: --design, --point and --profiles go with --space")
    return _characterize(args, _one_cluster(args))


def _characterize_space(args):
    """characterize --space: the design's configurations (--design), or one
    (--point), each started and stopped by the space's commands when trusted,
    its profile written to the space's profiles directory."""
    from iomodel.cluster.design import design
    from iomodel.cluster.space import load_space
    space = load_space(args.space, args.profiles)
    if bool(args.design) == bool(args.point):
        raise ValueError("characterize --space: give --design (measure the design's configurations) "
                         "or --point NAME (measure one configuration, started by you)")
    if args.output or args.profile:
        raise ValueError("characterize --space: profiles go to the space's profiles directory "
                         f"({space.profiles_dir}; not with -o or --profile)")
    if args.point:
        try:
            todo = [(space.point(args.point), "asked for")]
        except KeyError:
            raise ValueError(f"{space.path}: no point {args.point!r} (points: "
                             f"{', '.join(p.name for p in space.points)})") from None
    else:
        from iomodel.cluster.space_compare import measured_profiles
        done = set(measured_profiles(space))
        chosen = design(space)
        todo = [(p, why) for p, why in chosen if p.name not in done]
        width = max(len(p.name) for p, _ in chosen)
        print(f"{space.path}: the design has {len(chosen)} of its {len(space.points)} configurations, "
              f"{len(todo)} to measure:")
        for p, why in chosen:
            print(f"  {p.name:<{width}}  {why}" + ("  (measured already)" if p.name in done else ""))
        if not todo:
            return 0
        if args.trust_cluster and not any(p.start for p, _ in todo):
            pass
        elif not args.trust_cluster:
            startable = [p for p, _ in todo if p.start]
            print("iomodel: " + (f"their start and stop commands run only with --trust-cluster (they are the "
                                 f"space file's shell commands); or start each" if startable else
                                 "the space says how to start none of them: start each") +
                  f" yourself and run characterize --space {args.space} --point NAME", file=sys.stderr)
            return 0
    failed = []
    for p, _ in todo:
        if args.design and not p.start:
            print(f"iomodel: {p.name}: the space has no start command for it; start it and run "
                  f"characterize --space {args.space} --point {p.name}", file=sys.stderr)
            continue
        try:
            if args.design:       # stopped below even when it failed halfway
                _run_space_command(p.start, "start", p.name, space.path.parent)
            p.cluster.trusted = args.trust_cluster
            args.output = str(space.profiles_dir / f"{p.name}.d")
            args.profile = str(space.profiles_dir / f"{p.name}.parquet")
            if _characterize(args, p.cluster):
                failed.append(p.name)
        finally:
            args.output = args.profile = None
            if args.design and p.stop:
                _run_space_command(p.stop, "stop", p.name, space.path.parent)
    if failed:
        return fail(f"characterize --space: runs failed on {', '.join(failed)}", code=1)
    return 0


def _run_space_command(cmd, what, name, where):
    import subprocess
    print(f"iomodel: {name}: {what}: {cmd}", file=sys.stderr)
    rc = subprocess.run(cmd, shell=True, cwd=where).returncode     # in the space file's directory
    if rc:
        raise RuntimeError(f"{name}: the space's {what} command exited {rc}: {cmd}")


def _characterize(args, cluster):
    from iomodel.replay.backends import get_backend
    from iomodel.cluster.characterize import characterize, write_profile
    from iomodel.cluster.profile import format_summary
    backend = get_backend(args.backend)
    nps = [int(x) for x in args.np.split(",")] if args.np else None
    sweep = {}
    if args.ops:
        bad = [x for x in args.ops.split(",") if x not in ("write", "read", "reread")]
        if bad:
            raise ValueError(f"--ops {args.ops}: expected write, read and/or reread, "
                             f"got {', '.join(bad)}")
        sweep["operations"] = tuple(args.ops.split(","))
    if args.access:
        bad = [x for x in args.access.split(",") if x not in ("shared", "unique")]
        if bad:
            raise ValueError(f"--access {args.access}: expected shared and/or unique, got {', '.join(bad)}")
        sweep["access_types"] = tuple(args.access.split(","))
    if args.api:
        bad = [x for x in args.api.split(",") if x not in ("MPIIO", "POSIX")]
        if bad:
            raise ValueError(f"--api {args.api}: expected MPIIO and/or POSIX, got {', '.join(bad)}")
        sweep["apis"] = tuple(dict.fromkeys(args.api.split(",")))
    if args.collective:
        kinds = {"collective": True, "independent": False}
        bad = [x for x in args.collective.split(",") if x not in kinds]
        if bad:
            raise ValueError(f"--collective {args.collective}: expected collective and/or "
                             f"independent, got {', '.join(bad)}")
        sweep["collective"] = tuple(kinds[x] for x in args.collective.split(","))
    offsets = []
    for x in (args.buffer_offsets or "").split(",") if args.buffer_offsets else []:
        if not x.isdigit() or int(x) > 4095:
            raise ValueError(f"--buffer-offsets {args.buffer_offsets}: expected bytes from 0 to "
                             f"4095, got {x!r}")
        offsets.append(int(x))
    thinks = []
    for x in (args.think or "").split(",") if args.think else []:
        per_s = 1e3 if x.endswith("ms") else 1e6 if x.endswith("us") else 1.0
        try:
            k = float(x[:-2] if per_s != 1.0 else x) / per_s
        except ValueError:
            k = -1.0
        if not 1e-6 <= k <= 1:
            raise ValueError(f"--think {args.think}: expected times from 1us to 1 (seconds, or "
                             f"with ms or us), got {x!r}")
        thinks.append(k)
    if args.steal_retries < 0:
        raise ValueError(f"--steal-retries {args.steal_retries}: expected 0 or more")
    points = None
    if args.for_models:
        given = [f"--{o.replace('_', '-')}" for o in ("sizes", "np", "ops", "access", "api", "collective",
                                                      "pieces", "buffer_offsets", "think")
                 if getattr(args, o)] + (["--random"] if args.random else [])
        if given:
            raise ValueError(f"--for takes the points from the model(s): not with {', '.join(given)}")
        from iomodel.models import load_model
        from iomodel.cluster.characterize import model_points
        models = [load_model(m) for m in args.for_models]
        for m, model in zip(args.for_models, models):
            _invocations(m, model)
        points = model_points(models)
        nps = sorted({p["np"] for p in points})    # the job of a phase of fewer: the model's largest
    out = args.output or _default_dir("characterize", cluster.name)
    profile, failures = characterize(cluster, backend, out, sizes=_sizes(args.sizes), nps=nps,
                                     target_bytes=_sizes(args.bytes)[0] if args.bytes else 256 << 20,
                                     repeat=args.repeat, timeout=args.timeout, one_op=args.one_op,
                                     pieces=_sizes(args.pieces) or (), job_np=args.job_np,
                                     buffer_offsets=offsets, one_stripe=args.one_stripe,
                                     thinks=thinks, steal_retries=args.steal_retries,
                                     random=args.random, points=points, **sweep)
    path = write_profile(profile, args.profile or f"{out}/profile.parquet")
    print(format_summary(profile))
    if getattr(args, "space", None):
        more = "" if args.profiles is None else f" --profiles {args.profiles}"
        print(f"\nprofile ({len(profile)} points) in {path}; compare --space {args.space}{more} takes it")
    else:
        print(f"\nprofile ({len(profile)} points) in {path}; point the cluster description's "
              f"`profile:` at it, or use --profile {cluster.name}={path}")
    if failures:
        return fail(f"{len(failures)} sweep run(s) failed (see {out}/results.json; with --repeat, "
                    "a point is measured by the passes that ran); "
                    "run again to retry them", code=1)
    return 0


def trust_option(q):
    q.add_argument("--trust-cluster", action="store_true",
                   help="pass on the cluster description's launcher options even where they are not "
                   "known safe (a debugger, --app, -x LD_PRELOAD=..., an MCA component path, a file "
                   "to write): only for a file you trust as you would a shell script "
                   "(docs/security.md)")


def build_parser():
    p = argparse.ArgumentParser(prog="iomodel", description=__import__("iomodel").__doc__)
    p.add_argument("--debug", action="store_true",
                   help="on an error, show Python's traceback (also IOMODEL_DEBUG=1)")
    # --debug after the subcommand too; SUPPRESS so that it does not reset the one before it
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    add_parser = sub.add_parser
    sub.add_parser = lambda *a, **k: add_parser(*a, parents=[common], **k)

    t = sub.add_parser("trace", help="run an MPI application under the tracer",
                       description="Run a launch command with the iomodel tracer preloaded "
                       "(LD_PRELOAD) in every rank; one trace file per rank goes to -o.")
    t.add_argument("-o", "--output", default="iomodel-trace", help="trace directory (default: %(default)s)")
    t.add_argument("--mpi", choices=("openmpi", "mpich"),
                   help="the tracer build to use: openmpi, or mpich (MPICH, Intel MPI, Cray MPICH, "
                   "MVAPICH); by default the MPI the program links, else its launcher's")
    t.add_argument("command", nargs=argparse.REMAINDER, help="-- mpirun -np N ./app [args]")
    t.set_defaults(func=cmd_trace)

    i = sub.add_parser("trace-info", help="summarize a trace directory",
                       description="Print a summary of a trace: ranks, files, calls per MPI "
                       "routine, bytes written and read.")
    i.add_argument("trace", help="trace directory")
    i.add_argument("--json", action="store_true", help="print one JSON object")
    i.add_argument("--partial", action="store_true",
                   help="on a damaged trace, summarize what comes before the damage")
    i.add_argument("--parquet", metavar="DIR", help="also export the tables to DIR/*.parquet")
    i.add_argument("--events", action="store_true",
                   help="list every event (rank, routine, offset, bytes, file byte range, times)")
    i.add_argument("--rank", type=int, help="with --events: only this rank")
    i.set_defaults(func=cmd_trace_info)

    a = sub.add_parser("analyze", help="build the I/O model of a trace or Darshan log",
                       description="Find the application's I/O phases (docs/commands/analyze.md) "
                       "and write the model (docs/model-format.md).")
    a.add_argument("input", help="trace directory, a Darshan log (.darshan) with DXT, or a directory of "
                   "Darshan logs")
    a.add_argument("-o", "--output", help="model file (default: model.json); for a directory of Darshan "
                   "logs, the directory of their models and summary.parquet (default: LOGDIR-models)")
    a.add_argument("--max-comm-gap", type=int, metavar="N",
                   help="same burst when at most N communication calls apart (default: from the data)")
    a.add_argument("--max-idle", type=float, metavar="S",
                   help="Darshan logs: same burst when at most S seconds idle (default: from the data)")
    a.add_argument("-j", "--jobs", type=_positive, metavar="N",
                   help="read and reduce the ranks in N processes (default: one per core this "
                   "process may use, for traces of 4 MiB or more; 1: in this process)")
    a.add_argument("--max-memory", type=_memory, metavar="SIZE",
                   help="each process's bound (e.g. 2GiB): one whose rank traces do not fit reads them in "
                   "pieces, again in each pass (default: 80%% of the node's memory, or its cgroup's, shared "
                   "by the analysis's processes on it)")
    a.add_argument("--partial", action="store_true",
                   help="on a damaged trace, model what comes before the damage (the model is marked partial)")
    a.add_argument("-q", "--quiet", action="store_true", help="do not print the model")
    a.set_defaults(func=cmd_analyze)

    x = sub.add_parser("extrapolate", help="a model at a process count and size never run, from models at others",
                       description="From models of one application at two or more process counts (and "
                       "problem sizes), the model at --np (and --size): every number of every phase "
                       "given the law it follows (docs/commands/extrapolate.md).")
    x.add_argument("models", nargs="+", metavar="MODEL", help="model files of the same application")
    x.add_argument("--np", type=_positive, required=True, metavar="N", help="the target's process count")
    x.add_argument("--size", type=_number, metavar="S",
                   help="the target's problem size (e.g. 64 for a 64^3 grid); needs --sizes or --size-arg")
    x.add_argument("--sizes", metavar="S1,S2,...", help="each input model's problem size, in order")
    x.add_argument("--size-arg", type=int, metavar="K",
                   help="read each input's size from argument K of its recorded command line (0: the program)")
    x.add_argument("--grid", metavar="PxQxR",
                   help="the target's process grid, the array's fastest-varying axis first (a view's "
                   "pieces follow it); needs --grids or --grid-args")
    x.add_argument("--grids", metavar="G1,G2,...", help="each input model's process grid (as --grid), in order")
    x.add_argument("--grid-args", metavar="K,L,M",
                   help="read each input's grid from arguments K, L, M of its recorded command line, "
                   "fastest-varying axis first (S3D-IO: 4,5,6)")
    x.add_argument("-o", "--output", default="model-extrapolated.json",
                   help="model file (default: %(default)s)")
    x.add_argument("--all-laws", action="store_true", help="list the constant laws too")
    x.add_argument("-q", "--quiet", action="store_true", help="do not print the model")
    x.set_defaults(func=cmd_extrapolate)

    s = sub.add_parser("show", help="print a model: phase table and metadata",
                       description="Print the phase table (as the paper's Table V) and the "
                       "application's metadata, or a JSON summary.")
    s.add_argument("model", help="model file")
    s.add_argument("--json", action="store_true", help="print a JSON summary")
    s.set_defaults(func=cmd_show)

    g = sub.add_parser("plot", help="draw file offset over time per process",
                       description="Draw every operation's file offset over time, coloured by "
                       "operation (the paper's Fig. 1), from the model's trace when it is there, "
                       "else from the model's phases.")
    g.add_argument("model", help="model file")
    g.add_argument("-o", "--output", default="model.png", help="image file (default: %(default)s)")
    g.add_argument("--logical", action="store_true", help="logical time (communication calls) on x")
    g.add_argument("--from-model", action="store_true", help="draw the phases even if the trace is there")
    g.set_defaults(func=cmd_plot)

    def vc_options(q, many):
        q.add_argument("--vc", nargs="+" if many else 1, required=not many, metavar="VC",
                       action="extend" if many else "store",   # compare --vc vc3 --vc vc4: both
                       help="cluster description (a YAML file, or a shipped one: vc1..vc4, local)")
        q.add_argument("--region", help="price region (default: the first listed)")
        q.add_argument("--profile", action="append", metavar="NAME=PATH",
                       help="use this bandwidth profile (Parquet) for cluster NAME")
        q.add_argument("--json", action="store_true", help="print one JSON object")

    pr = sub.add_parser("predict", help="I/O time and cost of a model on a cluster",
                        description="Predict the model's I/O time per phase, its cost "
                        "(expressions 5-8) and feasibility on a cluster, from the cluster's "
                        "bandwidth profile or from a replay (docs/commands/predict.md).")
    pr.add_argument("model", help="model file")
    vc_options(pr, many=False)
    pr.add_argument("--replay", nargs="?", const=True, metavar="DIR",
                    help="use the bandwidths `iomodel replay` measured into DIR; without DIR, or "
                    "if DIR has no results yet, replay the model there now")
    pr.add_argument("--backend", choices=("ior", "builtin"), default="builtin",
                    help="with --replay: the replay backend, as `iomodel replay`'s default "
                    "(builtin: as modelled) (default: %(default)s)")
    pr.add_argument("--without", metavar="NAME[,NAME]", default="",
                    help="leave out these corrections to the profile's bandwidths, by name (each "
                    "and what it adds: docs/commands/predict.md, \"Corrections\")")
    trust_option(pr)
    pr.set_defaults(func=cmd_predict)

    co = sub.add_parser("compare", help="rank clusters by I/O time, cost and performance/cost",
                        description="Predict the model on every cluster and rank them "
                        "(docs/commands/compare.md).")
    co.add_argument("model", help="model file")
    vc_options(co, many=True)
    co.add_argument("--space", metavar="SPACE",
                    help="compare every configuration of this space (a YAML file, "
                    "docs/space-format.md): the measured ones from their profiles, the others from "
                    "profiles composed from them (docs/composition.md); not with --vc")
    co.add_argument("--profiles", metavar="DIR", help="with --space: the measured profiles are in DIR "
                    "(NAME.parquet), not in the space's `profiles` directory")
    co.add_argument("--plot", metavar="DIR", help="draw the paper's Figures 2 and 3 into DIR")
    co.set_defaults(func=cmd_compare)

    io = sub.add_parser("ior", help="the IOR runs that replay a model",
                        description="Turn each run of identical phases into an IOR 4.x "
                        "invocation by Table II of the method (docs/commands/ior.md).")
    io.add_argument("model", help="model file")
    io.add_argument("--vc", help="cluster description (its work directory, launcher, page-cache flags)")
    io.add_argument("--region", help=argparse.SUPPRESS)
    io.add_argument("--format", choices=("sh", "ior-script", "json"), default="sh",
                    help="shell commands (default), IOR scripts for `ior -f`, or JSON")
    trust_option(io)
    io.set_defaults(func=cmd_ior)

    rp = sub.add_parser("replay", help="replay a model's phases on a cluster",
                        description="Run every phase's IOR invocation through the cluster's "
                        "launcher and measure BW_CH per phase (docs/commands/replay.md). "
                        "Interrupted, it resumes where it stopped.")
    rp.add_argument("model", help="model file")
    rp.add_argument("--vc", required=True, help="cluster description (YAML, or vc1..vc4, local)")
    rp.add_argument("--backend", choices=("ior", "builtin"), default="builtin",
                    help="iomodel's own replayer, or IOR from the cluster (default: %(default)s)")
    rp.add_argument("--repeat", type=int, default=1, metavar="N", help="repetitions of each run (IOR -i)")
    rp.add_argument("--launches", type=int, default=1, metavar="L",
                    help="spread the --repeat repetitions over L launches of each run, the time "
                    "their median over all (default: %(default)s: one launch, IOR -i N)")
    rp.add_argument("-o", "--output", metavar="DIR", help="results directory (default: replay-APP-VC)")
    rp.add_argument("--timeout", type=float, metavar="S", help="give up a run after S seconds")
    how = rp.add_mutually_exclusive_group()
    how.add_argument("--as-modelled", dest="as_modelled", action="store_true", default=None,
                     help="the phases at their own offsets (when affine in the rank), with the "
                     "application's idle time between them and computing between their operations "
                     "(the default with the builtin backend)")
    how.add_argument("--back-to-back", dest="as_modelled", action="store_false",
                     help="the phases back to back in IOR's layout, as the paper replays them "
                     "(always so with --backend ior)")
    trust_option(rp)
    rp.set_defaults(func=cmd_replay)

    ch = sub.add_parser("characterize", help="measure a cluster's bandwidth profile",
                        description="Run a sweep of IOR invocations (request sizes, process "
                        "counts, read and write, shared and unique, collective and independent) "
                        "and store the cluster's bandwidth profile as Parquet (docs/commands/characterize.md).")
    ch.add_argument("--vc", help="cluster description")
    ch.add_argument("--space", metavar="SPACE",
                    help="a space of configurations (docs/space-format.md), with --design or "
                    "--point; profiles go to the space's profiles directory")
    ch.add_argument("--design", action="store_true",
                    help="with --space: name the fewest configurations to measure (a Plackett-Burman "
                    "design per storage kind) and, with --trust-cluster, start, measure and stop "
                    "each that the space says how to start")
    ch.add_argument("--point", metavar="NAME", help="with --space: measure this configuration "
                    "(started by you)")
    ch.add_argument("--profiles", metavar="DIR", help="with --space: write the profiles to DIR "
                    "(NAME.parquet), not to the space's `profiles` directory")
    ch.add_argument("--backend", choices=("ior", "builtin"), default="builtin",
                    help="iomodel's own replayer, or IOR from the cluster (default: %(default)s)")
    ch.add_argument("--sizes", help="request sizes, e.g. 4k,64k,1m,16m,256m,1g (default 4 KiB to 1 GiB, x4)")
    ch.add_argument("--np", help="process counts, e.g. 1,4,16 (default: 1 and the cluster's cores)")
    ch.add_argument("--job-np", type=int, metavar="N",
                    help="processes launched for the shared independent points of fewer: the "
                    "others open and close the file with them, as an application's processes "
                    "do around a phase of fewer of them (default: the largest --np; 1: none)")
    ch.add_argument("--ops", help="write,read,reread (default write,read; reread: read back "
                    "through the open the write used)")
    ch.add_argument("--access", help="shared,unique (default both)")
    ch.add_argument("--api", help="MPIIO,POSIX: the interfaces to measure through (default MPIIO; "
                    "POSIX: pread and pwrite, for the phases of an application's own POSIX and "
                    "stdio I/O, independent points only)")
    ch.add_argument("--collective", help="collective,independent (default both)")
    ch.add_argument("--bytes", help="data moved per point (default 256m)")
    ch.add_argument("--pieces", help="also measure each shared point of several processes through a "
                    "file view of pieces of these sizes, e.g. 16k,64k,256k (builtin backend): what a "
                    "phase's view costs against contiguous transfers (default: none)")
    ch.add_argument("--buffer-offsets", metavar="B,...",
                    help="also measure each contiguous read, reread and independent write point "
                    "with the buffer B bytes past a 4 KiB boundary, e.g. 16, where malloc puts a "
                    "large buffer (builtin backend): for the phases whose buffers sat so (the "
                    "model's buffer_offset); copies from the page cache into such a buffer can be "
                    "several times slower, and through FUSE direct I/O its transfers need one more "
                    "request (default: none)")
    ch.add_argument("--think", metavar="K,...",
                    help="also measure each independent point of several processes with them "
                    "computing K between their operations, e.g. 1ms (seconds, or with ms or us; "
                    "builtin backend): how much of an application's computing between operations "
                    "the storage gives back to the others' waits, which a device serving requests "
                    "in turn does and one shared among them does not (default: none; predictions "
                    "then take it as given back)")
    ch.add_argument("--one-stripe", action="store_true",
                    help="on a cluster whose file system stripes files over several data servers "
                    "(its description's io_servers.data and filesystem.stripe_size), also measure "
                    "each contiguous shared point whose file spans more than a stripe on a file of "
                    "one stripe: such a file sits on one server, and a shared file no larger is "
                    "predicted from these points (default: off)")
    ch.add_argument("--random", action="store_true",
                    help="also measure each independent contiguous point with each process's "
                    "operations in a random order within its block (IOR's -z): what random "
                    "offsets cost against the same operations in order, for the model's random "
                    "phases (default: off; they are then predicted as in order)")
    ch.add_argument("--for", dest="for_models", action="append", metavar="MODEL",
                    help="measure exactly the points a prediction of this model needs (its replay's "
                    "sizes, process counts, operations, access types, collectivity and interfaces, "
                    "and its views' pieces, buffer offsets and random orders beside them), in place "
                    "of the sweep; repeatable (not with --sizes, --np, --ops, --access, --api, "
                    "--collective, --pieces, --buffer-offsets, --think, --random)")
    ch.add_argument("--no-one-op", dest="one_op", action="store_false",
                    help="do not also measure each point with one operation per process (the "
                    "fixed cost of a phase of few operations; measured by default)")
    ch.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="passes over the whole sweep, each point once per pass, its time the "
                    "median of the passes (a slow stretch of the cluster then slows one repetition "
                    "of a point, not all); one-operation points at least 9 times over all passes and 3 in each (IOR -i within a pass)")
    ch.add_argument("--steal-retries", type=int, default=1, metavar="N",
                    help="on a virtual machine, a run that lost 5%% of its wall time or more to the "
                    "hypervisor (steal: its other guests) is made again, at most N times, the last "
                    "kept whatever it lost (default: %(default)s; 0: never)")
    ch.add_argument("--timeout", type=float, metavar="S",
                    help="give up a run after S seconds (a failed point; the sweep goes on)")
    ch.add_argument("-o", "--output", metavar="DIR", help="results directory (default: characterize-VC)")
    ch.add_argument("--profile", metavar="FILE", help="where to write the profile (default DIR/profile.parquet)")
    trust_option(ch)
    ch.set_defaults(func=cmd_characterize)
    return p


def _input_error(e):
    """A bad input's error (a trace, model, cluster, profile, a missing program)?  A
    TraceError can only come from the analyzer once loaded: main does not import it,
    so that `iomodel trace` starts the application without numpy and pyarrow loaded
    (OpenBLAS's threads spin for a while after numpy's import, on the cores the
    application is about to run on)."""
    tracefile = sys.modules.get("iomodel.analyzer.tracefile")
    return isinstance(e, (ValueError, OSError, RuntimeError)) or (
        tracefile is not None and isinstance(e, tracefile.TraceError))


EX_SOFTWARE = 70       # sysexits.h: an internal error


def _message(e):
    if isinstance(e, OSError) and e.filename and e.strerror:
        return f"{e.filename}: {e.strerror}"
    return str(e) or type(e).__name__


def _internal_error(e):
    """A genuine bug: say so, where, and how to report it; no traceback but with --debug."""
    import traceback
    where = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
    at = f" (at {Path(where.filename).name}:{where.lineno})" if where else ""
    print(f"iomodel: internal error: {type(e).__name__}: {str(e)[:300]}{at}\n"
          "iomodel: this is a bug in iomodel, not a problem with your files: please report it with "
          "the command you ran and the output of the same command with --debug", file=sys.stderr)
    return EX_SOFTWARE


def _stdout_gone():
    """The reader of our output went away (`| head`): say nothing more, and let
    the interpreter's last flush go nowhere rather than fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv=None):
    args = build_parser().parse_args(argv)
    debug = getattr(args, "debug", False) or bool(os.environ.get("IOMODEL_DEBUG"))
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _stdout_gone()
        return 0
    except Exception as e:
        if debug:
            raise
        if isinstance(e, MemoryError):     # which input: the command's own, and the clusters'
            vc = getattr(args, "vc", None)
            named = [str(v) for v in (getattr(args, k, None) for k in ("trace", "input", "model")) if v] + \
                [str(v) for v in (vc if isinstance(vc, list) else [vc] if vc else [])]
            return fail(f"{', '.join(named) + ': ' if named else ''}out of memory (is "
                        f"{'it' if len(named) == 1 else 'an input'} far larger than it should be, or damaged?)")
        # bad input (a trace, model, cluster, profile, a missing program): one line
        # naming the file and the problem
        if _input_error(e):
            return fail(_message(e))
        return _internal_error(e)


if __name__ == "__main__":
    sys.exit(main())
