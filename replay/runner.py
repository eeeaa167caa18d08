"""Running invocations on a cluster: the launcher, progress, failures, resuming.

`replay()` runs each invocation of a model (replay/ior.py) through the
cluster's launcher with a backend (replay/backends.py), and keeps every
result in DIR/results.json as soon as it is known, so an interrupted replay
starts again where it stopped.  A failing run is reported with its output and
the others go on.
"""
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from iomodel import mpi
from iomodel.outputs import write_atomic

from .host import steal_s, stolen_since
from .trust import check_launcher_options
from .workdir import Workdir

STATE = "results.json"


def launcher_argv(cluster, np_):
    """The launch command for np processes, as the cluster description says
    (its options checked: replay/trust.py)."""
    check_launcher_options(cluster)
    opts = list(getattr(cluster, "launcher_options", []) or [])
    launcher = getattr(cluster, "launcher", "mpirun")
    if launcher == "srun":
        return ["srun", "-n", str(np_), *opts]
    argv = [launcher, "-np", str(np_), *opts]
    if getattr(cluster, "hostfile", None):
        hydra = (getattr(cluster, "mpi", None) or mpi.launcher_family(launcher)) == "mpich"
        argv += ["-f" if hydra else "--hostfile", str(cluster.hostfile)]
    return argv


def launch_env():
    """As root, let Open MPI's mpirun run (it refuses by default)."""
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def run_one(argv, timeout=None):
    """(exit code, combined output, seconds)."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env=launch_env(), timeout=timeout)
        return p.returncode, p.stdout + p.stderr, time.monotonic() - t0, p.stdout
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, out + f"\n(timed out after {timeout} s)", time.monotonic() - t0, out
    except FileNotFoundError as e:
        return 127, f"{argv[0]}: {e.strerror}", time.monotonic() - t0, ""


def _remove_test_files(inv):
    """Remove an invocation's file (or files, with -F), where this process sees them:
    IOR's names, or the application's in the directory -o (--iomodel.names)."""
    import glob
    from .ior import RANK_FIELD
    found = [inv.test_file, *glob.glob(glob.escape(inv.test_file) + ".*")]
    if inv.names:
        found += glob.glob(os.path.join(glob.escape(inv.test_file),
                                        RANK_FIELD.sub("*", glob.escape(inv.names))))
    for f in found:
        try:
            os.unlink(f)
        except OSError:
            pass
    if inv.names:
        try:
            os.rmdir(inv.test_file)
        except OSError:
            pass


def key_of(inv):
    """A stable name for an invocation, to find it again when resuming."""
    from .ior import to_json
    text = json.dumps(to_json([inv]), sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


class State:
    """DIR/results.json: one entry per finished invocation, written at once."""

    def __init__(self, outdir):
        self.dir = Path(outdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / STATE
        self.data = {"runs": {}}
        if self.path.exists():
            try:
                self.data = json.loads(self.path.read_text())
                if not isinstance(self.data, dict) or not isinstance(self.data.get("runs"), dict) or \
                        not all(isinstance(v, dict) for v in self.data["runs"].values()):
                    raise ValueError("not a results file")
            except (ValueError, UnicodeDecodeError):      # JSONDecodeError is a ValueError
                self.data = {"runs": {}}
                bad = self.path.with_suffix(".json.damaged")
                self.path.rename(bad)
                print(f"iomodel: {self.path} was damaged (kept as {bad}); starting afresh",
                      file=sys.stderr)

    def done(self, key):
        r = self.data["runs"].get(key)
        return r if r and r.get("ok") else None

    def record(self, key, entry):
        self.data["runs"][key] = entry
        write_atomic(self.path, self.text())     # whatever happens next, this result is kept

    def text(self):
        """The file: one run a line. The whole file is written again after every
        run, so its cost grows with the sweep: indented, a 2808-run profile's last
        writes took 0.17 s each, 250 s of its hour; a line a run, 0.05 s."""
        rest = {k: v for k, v in self.data.items() if k != "runs"}
        head = json.dumps(rest)[1:-1] + ", " if rest else ""
        runs = ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in self.data["runs"].items())
        return "{" + head + '"runs": {\n' + runs + "\n}}\n"


def modelled_options(model, inv):
    """Built-in replayer options that replay the phases as modelled rather than
    in IOR's layout: where they are (modelled_layout), the application's idle
    time between the phases of a run (their median gap_s) at the phases'
    boundaries, with a barrier after it when they communicated between them
    (their median gap_comm > 0), and its computing between a phase's
    operations (their median think_time)."""
    phases = _phases(model, inv)
    opts = modelled_layout(model, inv)
    gaps = sorted(p["gap_s"] for p in phases[1:] if p.get("gap_s"))
    if gaps:
        opts.append(f"--iomodel.gap={gaps[len(gaps) // 2]:.6f}")
    # processes that communicated between the phases started each together: a
    # sleep alone lets them drift apart, and apart they do not meet (two ranks'
    # 1 MiB collective writes to tmpfs, py_io's: 0.3 ms each apart, 0.6 together)
    comms = sorted(p["gap_comm"] for p in phases[1:] if p.get("gap_comm") is not None)
    if comms and comms[len(comms) // 2] > 0:
        opts.append("--iomodel.gapBarrier")
    # the gap stands between phases, not between a phase's repetitions: identical
    # phases have as many segments each (NAS BT-IO simple's 40 dumps of 288 small
    # writes are 11,520 segments, 40 phases)
    per_phase = inv.segments // len(phases)
    if (gaps or "--iomodel.gapBarrier" in opts) and per_phase > 1:
        opts.append(f"--iomodel.gapEvery={per_phase}")
    thinks = sorted(t for t in map(think_time, phases) if t is not None)
    if thinks and thinks[len(thinks) // 2] >= 1e-6:
        opts.append(f"--iomodel.think={thinks[len(thinks) // 2]:.6f}")
    return opts


def _phases(model, inv):
    byid = {p["id"]: p for p in model["phases"]}
    return [byid[i] for i in inv.phase_ids]


def modelled_layout(model, inv):
    """The replayer options that place the data where the phases had it: their
    offsets when affine in the rank (first + r * per_rank, then the stride
    between repetitions or phases; for a file view, the first piece of each
    rank's view of pieces; not for random phases), or none (IOR's layout).  A
    read's setup run writes its file with them too, so that the read finds its
    data (HACC-IO's variables after a 24 MiB header)."""
    phases = _phases(model, inv)
    off = phases[0]["offsets"]
    # a view's blocks placed contiguously at the application's first offsets would
    # overlap (rank r's block over rank r+1's pieces): with no pieces to replay, IOR's layout
    noncontig = off.get("contiguous") is False and not inv.piece
    # a random phase's first offsets are one random piece each, not where its
    # region starts: rank r's block placed there overlaps rank r+1's, and the
    # overwrites are cheaper (random_io on the throttled disk: -15%); IOR's
    # layout, rank r's block at r * b shuffled within, is random_io's own
    random = any(p.get("access_mode") == "random" for p in phases)
    if inv.file_per_proc or off.get("first") is None or noncontig or random or \
            (off.get("per_rank") is None and phases[0]["np"] != 1):
        return []
    if len(phases) == 1:                 # repetitions of one phase
        stride = off.get("stride") or 0
    else:                                # one segment per phase: their first offsets' step
        firsts = [p["offsets"]["first"] for p in phases]
        steps = {b - a for a, b in zip(firsts, firsts[1:])}
        stride = steps.pop() if len(steps) == 1 and all(p["rep"] == 1 for p in phases) else None
    if stride is None:
        return []
    return [f"--iomodel.offsets={off['first']},{off.get('per_rank') or 0},{stride}"]


def think_time(phase):
    """The application's computing between two of a phase's operations: the
    most a process spent between its operations with none of them in
    progress (`compute_s`), over its gaps (None for a phase of one operation
    per process). Back-to-back replayed operations meet each other where the
    application's did not: two processes writing 16 KiB pieces of one tmpfs
    file took 1.7 times as long in their calls as when computing between them.
    Not the phase's span less the slowest process's time in calls: that
    counts how far apart the processes started, not what one computed (NAS
    BT-IO simple's writes, back to back in each process: 14.5 us against its
    0.27 us), and grows with processes per core. Models without compute_s
    (extrapolated by an earlier iomodel) keep that older measure."""
    ops = phase["rep"] * phase.get("iop", 1)
    if ops < 2:
        return None
    if phase.get("compute_s") is not None:
        return phase["compute_s"] / (ops - 1)
    if phase.get("duration_s") is None or phase.get("io_time_s") is None:
        return None
    return max(0.0, phase["duration_s"] - phase["io_time_s"]) / (ops - 1)


def repetitions_per_launch(repeat, launches):
    """`repeat` repetitions spread over `launches` launches, the first ones one
    more when they do not divide: 9 over 3 is [3, 3, 3], 8 over 3 [3, 3, 2]."""
    repeat = max(1, repeat)
    if not 1 <= launches <= repeat:
        raise ValueError(f"--launches {launches}: expected 1 to --repeat ({repeat}); each launch "
                         f"runs at least one repetition")
    base, extra = divmod(repeat, launches)
    return [base + (k < extra) for k in range(launches)]


def execute(inv, cluster, backend, prog, outdir, repeat=1, timeout=None, extra=(), launches=1,
            setup_extra=()):
    """Run one invocation (and its setup, for reads); returns a result entry.
    extra: options added to the run; setup_extra: to its setup (the layout)."""
    try:
        return _execute(inv, cluster, backend, prog, outdir, repeat, timeout, extra, launches,
                        setup_extra)
    finally:
        if inv.setup is not None:
            _remove_test_files(inv)    # reads keep their file (-k) for -i repetitions


def _merge_launches(ops):
    """One operation summary from several launches' (same invocation): every
    repetition's time, in the order they ran, and the medians and bandwidths
    of them all; IOR's mean bandwidth the mean over the launches."""
    o = dict(ops[0])
    n = sum(x.get("repetitions") or 1 for x in ops)
    o.update(repetitions=n, bw_MiBps_mean=statistics.fmean(x["bw_MiBps_mean"] for x in ops),
             bandwidth_Bps=statistics.fmean(x["bandwidth_Bps"] for x in ops),
             launch_times_s=[x.get("io_time_s") or x.get("transfer_time_s") or x.get("mean_time_s")
                             for x in ops])
    bws = [x["bw_MiBps_mean"] for x in ops]
    o["bw_MiBps_std"] = statistics.pstdev(bws) if len(bws) > 1 else 0.0
    for key, bw in (("io", "io_bandwidth_Bps"), ("transfer", "transfer_bandwidth_Bps")):
        times = [t for x in ops for t in (x.get(f"{key}_times_s") or [])]
        whole = all(x.get(f"{key}_times_s") for x in ops)
        t = statistics.median(times) if whole else None
        o[f"{key}_times_s"], o[f"{key}_time_s"] = (times, t) if whole else (None, None)
        o[bw] = o["aggregate_bytes"] / t if t else None
    if o["io_time_s"] is None and o["transfer_time_s"] is None:   # text output: no repetitions
        o["mean_time_s"] = statistics.median(x["mean_time_s"] for x in ops)
        o["bandwidth_Bps"] = o["aggregate_bytes"] / o["mean_time_s"]
    return o


def _execute(inv, cluster, backend, prog, outdir, repeat, timeout, extra, launches=1, setup_extra=()):
    name = f"phases-{inv.phase_ids[0]}-{inv.phase_ids[-1]}-{inv.operation}"
    entry = {"phase_ids": list(inv.phase_ids), "operation": inv.operation, "np": inv.np,
             "backend": backend.name, "ok": False}
    if inv.setup is not None:
        argv = launcher_argv(cluster, inv.setup.np) + backend.argv(
            inv.setup, prog, Path(outdir) / f"{name}.setup.json", 1) + list(setup_extra)
        rc, out, secs, _ = run_one(argv, timeout)
        if rc != 0:
            entry.update(command=argv, error=f"the write that prepares the file to read failed "
                         f"(exit {rc})", output=out[-4000:])
            return entry
    counts = repetitions_per_launch(repeat, launches)
    ops, total_s, steal = [], 0.0, 0.0
    for k, n in enumerate(counts):
        which = f" (launch {k + 1} of {len(counts)})" if len(counts) > 1 else ""
        summary = Path(outdir) / (f"{name}.json" if len(counts) == 1 else f"{name}.launch{k + 1}.json")
        argv = launcher_argv(cluster, inv.launch_np) + backend.argv(
            inv, prog, summary, n, getattr(cluster, "fresh_files", True)) + list(extra)
        before = steal_s()
        rc, out, secs, stdout = run_one(argv, timeout)
        stolen = stolen_since(before)
        total_s += secs
        steal = None if stolen is None or steal is None else round(steal + stolen, 3)
        # this machine's only: ranks launched onto other nodes have their own hosts
        entry.update(command=argv, seconds=round(total_s, 3), steal_s=steal)
        if rc != 0:
            entry.update(error=f"exit {rc}{which}", output=out[-4000:])
            return entry
        try:
            parsed = backend.parse(stdout, summary if summary.exists() else None)
        except ValueError as e:
            entry.update(error=f"{e}{which}", output=out[-4000:])
            return entry
        mine = [o for o in parsed if o["operation"] == inv.operation]
        if not mine:
            entry.update(error=f"no {inv.operation} result in the output{which}", output=out[-4000:])
            return entry
        ops.append(mine[0])
    o = ops[0] if len(ops) == 1 else _merge_launches(ops)
    mean = o["bandwidth_Bps"]
    std = o.get("bw_MiBps_std") or 0.0
    # BW_CH: bytes over the transfers' time.  A traced phase's io_time_s is the
    # slowest process's time inside its own I/O calls, without the file's open
    # and close and without the processes' skew, so the replay uses the same
    # figure when the output gives it (iomodel_replay), else IOR's transfer span
    # (wrRdTime: no open or close), else IOR's bandwidth, which is kept beside.
    bw = o.get("io_bandwidth_Bps") or o.get("transfer_bandwidth_Bps") or mean
    entry.update(ok=True, bandwidth_Bps=bw, ior_bandwidth_Bps=mean,
                 time_s=o.get("io_time_s") or o.get("transfer_time_s") or o.get("mean_time_s"),
                 span_s=o.get("transfer_time_s"),
                 open_to_close_s=o.get("mean_time_s"),
                 bytes=o.get("aggregate_bytes"), repetitions=o.get("repetitions", repeat),
                 variation=(std * 2**20 / mean) if mean else None)
    if len(ops) > 1:    # each launch's own median, in the order they ran
        entry.update(launches=len(ops), launch_times_s=o["launch_times_s"])
    reps = o.get("io_times_s") or o.get("transfer_times_s")
    if reps and len(reps) > 1:     # what time_s is the median of, in the order they ran
        entry["rep_times_s"] = reps
    return entry


def replay(model, cluster, backend, outdir, repeat=1, timeout=None, progress=sys.stderr,
           as_modelled=False, launches=1):
    """Run every invocation of the model; returns (results by phase id, failures).
    as_modelled (built-in backend): the phases' own offsets and idle gaps.
    launches: the repetitions spread over that many launches of each invocation."""
    from .ior import ior_invocations
    if as_modelled and backend.name != "builtin":
        raise ValueError("--as-modelled needs --backend builtin: IOR has only its own layout")
    repetitions_per_launch(repeat, launches)     # a bad count fails before anything runs
    prog, why = backend.find(cluster)
    if prog is None:
        raise RuntimeError(why)
    check_launcher_options(cluster)
    workdir = Workdir(cluster)          # checked before anything is written
    state = State(outdir)
    with workdir as cluster:            # made, and removed after if iomodel made it and left it empty
        invs = ior_invocations(model, cluster)
        failures = []
        for i, inv in enumerate(invs, 1):
            extra = modelled_options(model, inv) if as_modelled else []
            key = key_of(inv) + ("-" + "-".join(extra) if extra else "")
            ids = f"{inv.phase_ids[0]}" + (f" to {inv.phase_ids[-1]}" if len(inv.phase_ids) > 1 else "")
            head = f"[{i}/{len(invs)}] phase{'s' * (len(inv.phase_ids) > 1)} {ids}: {inv.operation}, np {inv.np}"
            prev = state.done(key)
            if prev:
                print(f"{head}: done before, {prev['bandwidth_Bps'] / 2**20:.1f} MiB/s", file=progress)
                continue
            print(f"{head} ...", file=progress, end="", flush=True)
            # the read's file written where the read will look for its data
            setup = modelled_layout(model, inv) if as_modelled and inv.setup is not None else []
            entry = execute(inv, cluster, backend, prog, state.dir, repeat, timeout, extra, launches,
                            setup)
            entry["approximations"] = list(getattr(inv, "approximations", []))
            entry["as_modelled"] = extra
            state.record(key, entry)
            if entry["ok"]:
                print(f" {entry['bandwidth_Bps'] / 2**20:.1f} MiB/s in {entry['time_s']:.3f} s", file=progress)
            else:
                failures.append(entry)
                print(f" FAILED: {entry['error']}", file=progress)
                print("\n".join("    " + l for l in entry.get("output", "").strip().splitlines()[-15:]),
                      file=progress)
        by_phase = {}
        for inv in invs:
            extra = modelled_options(model, inv) if as_modelled else []
            entry = state.done(key_of(inv) + ("-" + "-".join(extra) if extra else ""))
            if entry:
                for pid in entry["phase_ids"]:
                    by_phase[pid] = entry
        return by_phase, failures
