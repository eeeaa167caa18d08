"""Predict an application's I/O time and cost on a virtual cluster (VC) from its
I/O model, without running it (the paper's steps 5 and 6, expressions 5-8).

For each phase, BW_CH comes from the VC's bandwidth profile (cluster/profile.py)
or from the bandwidths a replay measured, and

    time(phase)  = weight(phase) / BW_CH(phase)
    cost(phase)  = weight / BW_CH / 3600 * price_per_hour          (expression 7)
    cost_var     = sum over phases of cost(phase) * instances       (expression 6)
    cost_fix     = persistent_gb * persistent_usd_per_gb_month      (one month)
    cost_tot     = cost_var + cost_fix                              (expression 5)
    performance  = weight(app) / io_time                            (B/s)
    perf_cost    = performance / cost_tot                           (expression 8, MiB/s per $)

The phases run one after the other (the model's order), so io_time is the sum
of the phases' times.  The decisions where the paper is vague are in
docs/commands/predict.md: storage is counted in GB = 10^9 B against the VC's
temporal storage, read phases without a read bandwidth use the write one (with a
note), the fixed cost is one month of the persistent storage (also given
prorated), billing rounds the instance time up to the VC's billing unit.
"""
import math

import pyarrow.compute as pc

from iomodel.models import format_ranks, rereads
from iomodel.replay.ior import write_blocks
from iomodel.replay.runner import think_time

from .profile import MiB, Profile, ProfileError, computing_text, ops_per_process, size_text

__all__ = ["predict", "feasibility", "format_prediction", "GB", "MONTH_S", "PredictError"]

GB = 10 ** 9            # providers sell and bill storage in GB of 10^9 bytes
GiB = 1 << 30
MONTH_S = 730 * 3600    # a billing month: 730 hours (8760 h / 12), as cloud providers prorate
BILLING_UNIT_S = {"hour": 3600, "second": 1}


class PredictError(ValueError):
    """A prediction that cannot be made (no bandwidth for a phase, bad input)."""


def _name(cluster):
    return getattr(cluster, "name", None) or "cluster"


def needed_processes(model):
    """Processes the model needs: the application's, or the largest phase's."""
    nps = [p["np"] for p in model["phases"]]
    return max([model["application"].get("np") or 0, *nps])


def capacity_gb(cluster):
    """(GB, what it is) of the storage that must hold the model's files: the
    temporal storage of the VC (where the paper's global file systems keep their
    data: Table IV's "capacity of temporal storage", as the sum over the data
    servers), or the persistent storage when the VC has no temporal storage;
    (None, ...) when the description gives neither."""
    t = getattr(cluster, "temporal_gb", None)
    if t:
        return float(t), "temporal storage"
    p = getattr(cluster, "persistent_gb", None)
    if p:
        return float(p), "persistent storage (the VC has no temporal storage)"
    return None, "storage capacity not given"


def feasibility(model, cluster):
    """(feasible, reasons, notes): reasons are sentences saying why the VC cannot
    run the model (empty when it can); notes, what could not be checked."""
    vc = _name(cluster)
    reasons, notes = [], []
    # storage capacity (expression 4) against the VC's storage
    need = int(model.get("storage_capacity") or 0)
    cap, what = capacity_gb(cluster)
    if cap is None:
        notes.append(f"storage not checked: {vc} gives no temporal or persistent capacity")
    elif need > cap * GB:
        reasons.append(f"storage: the model needs {need / GB:.2f} GB ({need / GiB:.2f} GiB, expression 4) "
                       f"but {vc} has {cap:g} GB of {what} (GB = 10^9 B)")
    # parallel degree
    np_ = needed_processes(model)
    cores = getattr(cluster, "cores_total", None)
    if cores is None:
        notes.append(f"cores not checked: {vc} does not say how many cores it has")
    elif np_ > cores and getattr(cluster, "oversubscribe", False):
        notes.append(f"{vc} runs {np_} processes on {cores} cores: its launcher oversubscribes "
                     f"(the I/O it measures is that of oversubscribed processes)")
    elif np_ > cores:
        per = getattr(cluster, "cores_per_instance", None)
        how = (f" ({cluster.instances} x {getattr(cluster, 'instance_type', None) or 'instance'}, "
               f"{per} core{'s' * (per != 1)} each)") if per and getattr(cluster, "instances", None) else ""
        reasons.append(f"cores: the model needs {np_} processes but {vc} has {cores} cores{how}")
    # shared files need a global file system (unless everything runs on one instance)
    shared = [f for f in model["files"] if f["access_type"] == "shared"]
    if shared and getattr(cluster, "global_fs", None) is None:
        if getattr(cluster, "instances", None) == 1:
            notes.append(f"{vc} is one instance: its shared files need no global file system")
        else:
            names = ", ".join(f["name"] for f in shared[:3]) + (", ..." if len(shared) > 3 else "")
            reasons.append(f"file system: {len(shared)} shared file{'s' * (len(shared) > 1)} ({names}) "
                           f"need{'s' * (len(shared) == 1)} a global file system and {vc} has none")
    return not reasons, reasons, notes


def _replayed(phase, bandwidths):
    """The phase's bandwidth measured by a replay (keys: phase ids, int or str), or None."""
    return None if bandwidths is None else bandwidths.get(phase["id"], bandwidths.get(str(phase["id"])))


def placement_note(model, cluster, bandwidths=None):
    """A note when file-per-process phases predicted from a profile run on several
    data servers: which server holds each of the application's files (and their
    stripes) decides how many servers share their I/O, and the file system places
    them by their names or identity (Gluster's DHT hashes names; its shards, new
    identities).  `characterize` spreads its own files evenly over the servers
    (cluster/placement.py); the application's may land less evenly, which only a
    replay, writing the application's names, measures.  Phases a replay measured
    need no note."""
    servers = getattr(cluster, "data_servers", 1) or 1
    unique = {f["id"] for f in model["files"] if f["access_type"] == "unique"}
    by_profile = {p["file"] for p in model["phases"]
                  if p["file"] in unique and p["weight"] and _replayed(p, bandwidths) is None}
    if servers < 2 or not by_profile:
        return None
    files = [f for f in model["files"] if f["id"] in by_profile]
    count = sum(f.get("np") or 1 for f in files)
    names = ", ".join(f["name"] for f in files[:2]) + (", ..." if len(files) > 2 else "")
    return (f"{_name(cluster)} has {servers} data servers: where its file system places the "
            f"{count} files of the file-per-process phases ({names}) decides how many servers "
            f"share their I/O; the profile's own files were spread evenly over the servers "
            f"(if characterize could ask the file system where they go), the application's "
            f"may be less so; a replay (--backend builtin) writes the application's file names")


# GlusterFS's shard translator places shard N of a file by the hash of "GFID.N", and a
# file's GFID is drawn anew when it is created: which data servers a shared file's
# shards land on, and so how many servers' links its phases share, is a new draw in
# every run (docs/accuracy.md, "Where shards go").  With k shards over n servers the
# load of a server varies by about sqrt((n - 1) / k) of its even share: under 10%
# from 100 shards a server on, where the note would be noise.
SHARDS_PER_SERVER_EVEN = 100


def shard_note(model, cluster):
    """A note when shared files span a few shards of a sharded GlusterFS volume on
    several data servers: their runs differ by where the shards land."""
    servers = getattr(cluster, "data_servers", 1) or 1
    stripe = getattr(cluster, "stripe_size", None)
    if servers < 2 or not stripe or (getattr(cluster, "global_fs", None) or "").lower() != "glusterfs":
        return None
    used = {p["file"] for p in model["phases"] if p["weight"]}
    spans = [(f, -(-f["size"] // stripe)) for f in model["files"]
             if f["id"] in used and f["access_type"] == "shared" and f.get("size")]
    spans = [(f, k) for f, k in spans if 2 <= k < SHARDS_PER_SERVER_EVEN * servers]
    if not spans:
        return None
    files = ", ".join(f"{f['name']} ({size_text(f['size'])}, {k} shards)" for f, k in spans[:2])
    files += ", ..." if len(spans) > 2 else ""
    return (f"{_name(cluster)} shards files in {size_text(stripe)} pieces over {servers} data "
            f"servers, each shard where the hash of an identity drawn anew for the file puts "
            f"it: the shared files {files} may sit on one server in one run and spread in "
            f"the next, and their phases take longer when their processes share one "
            f"server's link; the profile's points and a replay draw placements of their own")


# What predict adds to a profile point's bandwidth, each by name, each one that
# `--without NAME` leaves out (the accuracy bench's leave-one-out table: docs/accuracy.md)
CORRECTIONS = {
    "ops": "a phase's operations per process: the one-operation points' fixed cost",
    "views": "a file view's pieces: the profile's view ratio",
    "buffer-offset": "buffers past a page: the points measured so",
    "one-stripe": "a shared file within one stripe: the points measured on one",
    "random": "random offsets: the profile's random ratio",
    "blocks": "a shared file's independent writes in the replay's blocks: the profile's block ratio",
    "computing-between": "independent processes computing between operations: their waits on each other",
    "given-back": "of those waits, the share the storage gives back (characterize --think)",
    "slower-after-computing": "operations made cold by computing between them",
    "done-early": "a collective call's part done before its last process came in",
    "collective-after-computing": "collective calls after computing: the profile's collective points at that time",
}


def _bandwidth_args(phase, access_type, file_size, without=frozenset(), block=None):
    """The arguments of Profile.bandwidth after the operation, for one phase
    (`block`: the replay writes it in blocks of so many transfers)."""
    # a shared file's view: its pieces, for the profile's view ratio
    piece = phase["offsets"].get("piece") if access_type == "shared" and \
        phase["offsets"].get("contiguous") is False and "views" not in without else None
    return (phase["np"], max(phase["rs"], 1), access_type, phase.get("collective"),
            None if "ops" in without else ops_per_process(phase), piece,
            None if "buffer-offset" in without else phase.get("buffer_offset"),
            None if "one-stripe" in without else file_size,
            phase.get("access_mode") == "random" and "random" not in without,
            "POSIX" if phase.get("interface") in ("POSIX", "STDIO") else "MPIIO",
            None if "blocks" in without else block)


def _profile_bandwidth(phase, access_type, profile, ops, fallback, file_size=None, without=frozenset(),
                       block=None):
    """(Bps, note, profile operation used, args of Profile.bandwidth) for one phase;
    file_size: its shared file's bytes (for the profile's one-stripe points)."""
    op = phase["operation"]
    args = _bandwidth_args(phase, access_type, file_size, without, block)
    if rereads(phase):
        if "reread" in ops:
            bw, note = profile.bandwidth("reread", *args)
            return bw, f"reread (through the write's open); {note}", "reread", args
        if "read" in ops:         # the profile's reads went through a new open
            bw, note = profile.bandwidth("read", *args)
            return bw, f"no reread bandwidth measured: used read; {note}", "read", args
    if op not in ops and fallback:
        other = "write" if op == "read" else "read"
        if other in ops:
            bw, note = profile.bandwidth(other, *args)
            return bw, f"no {op} bandwidth measured: used {other}; {note}", other, args
    return (*profile.bandwidth(op, *args), op, args)


def _computing_between(phase, profile, op, args, bw, without=frozenset()):
    """(Bps, note) of an independent phase of several processes that compute
    between their operations, or None when that does not apply.

    The profile measures operations back to back, so each process's operations
    always meet the others': the np point's time per operation t_np, against
    t_1 alone (the np 1 point).  Back to back the processes go in lockstep and
    each operation waits d = t_np - t_1 for the others' (h = d / (np - 1) each:
    on tmpfs two writers of one file take turns at its lock, 12.3 us against
    6.5 us alone for 16 KiB).  A process that computes k seconds between its
    operations (runner.think_time) waits
      - in lockstep, while k < d: d - k (it comes back before the others are done);
      - at a random moment of the others' cycles: each other holds a fraction
        h / (k + t) of the time, and is then on average half way through, so
        (np - 1) h / (k + t) x h / 2;
    whichever is more, so t = t_1 + max(d - k, d h / (2 (k + t))), the second
    solved for t (the positive root of t^2 + (k - t_1) t - t_1 k - d h / 2 = 0).
    random_io, 16 KiB pieces of one tmpfs file computing about 10 us between
    them, took 7.3 to 7.8 us per operation: this gives 7.7 to 7.8 us; reckoning
    a whole wait for every overlap, u = t / (t + k), gave 9.3 to 9.5 us.  Where
    operations last milliseconds and k microseconds (the disk, Gluster) it is
    lockstep: t_np - k.  Collective phases are left as they are: their
    processes meet at every operation whatever they compute between.
    All of this takes the storage to serve requests in turn.  Where the
    profile measured the share g of computing time it gives back
    (Profile.given_back, characterize --think), a phase in lockstep takes
    (1 - g) t_np + g t: the testbed's disk gave none back, two ranks' 64 KiB
    writes 6.35 ms each back to back, 6.26 ms computing 1 ms between
    (bench/think_time.py).  Where the operations are shorter than k, the
    profile's points computing between them may find them slower still
    (_slower_after_computing), whether t_np is above t_1 or not."""
    np_, rs = args[0], args[1]
    k = think_time(phase)
    if np_ < 2 or phase.get("collective") is not False or not k or args[4] is None or args[4] < 2:
        return None
    t = profile.table
    if not pc.any(pc.and_(pc.equal(t["operation"], op), pc.equal(t["np"], 1))).as_py():
        return None       # no point of one process to tell what the others cost
    bw1, note1 = profile.bandwidth(op, 1, *args[1:])
    t1, tn = rs / bw1, rs * np_ / bw
    if tn <= t1:          # the others' operations cost nothing: nothing to take off
        return None if "slower-after-computing" in without else \
            _slower_after_computing(profile, op, args, k, tn, tn, "")
    d = tn - t1
    h = d / (np_ - 1)
    b = k - t1
    random = (-b + math.sqrt(b * b + 4 * (t1 * k + d * h / 2))) / 2
    lockstep = t1 + max(d - k, 0.0)
    t_op = max(lockstep, random)
    how = (f"in lockstep, {t1 * 1e6:.1f} + ({tn * 1e6:.1f} - {t1 * 1e6:.1f} - {k * 1e6:.1f})"
           if lockstep >= random else
           f"at random moments of the others', {t1 * 1e6:.1f} + {d * 1e6:.1f} x {h * 1e6:.1f} / "
           f"(2 x ({k * 1e6:.1f} + t))")
    # all of this takes the storage to serve requests in turn; where the profile
    # measured how much of k it gives back (g), the rest of it is shared among the
    # requests in flight, which keeps the processes in step: t_np (the testbed's disk).
    # In lockstep only: where operations are short against k the processes meet at
    # random, and a point computing 1 ms between them measures its operations cold
    # (tmpfs: 4 KiB writes 11.0 us each against 2.3 back to back and 5.0 at np 2)
    back = profile.given_back(op, np_, rs, args[2]) if lockstep >= random and "given-back" not in without \
        else None
    if back is not None:
        g, how_much = back
        served = t_op
        t_op = (1 - g) * tn + g * served
        how = (f"{1 - g:.2f} x {tn * 1e6:.1f} + {g:.2f} x {served * 1e6:.1f} ({how}; the profile's "
               f"{how_much})")
    note = f"computing {k * 1e6:.1f} us between operations: per op {how} = {t_op * 1e6:.1f} us (np 1: {note1})"
    if "slower-after-computing" in without:
        return rs * np_ / t_op, note
    return _slower_after_computing(profile, op, args, k, tn, t_op, note)


def _slower_after_computing(profile, op, args, k, tn, t_op, note):
    """(Bps, note) of an independent phase whose operations, t_op seconds each
    by the rule above (t_np back to back), are shorter than the k seconds its
    processes compute between them: where the profile's points computing
    between operations took longer at k (Profile.after_computing: the
    computing left the operations cold), their time.  On the testbed's disk
    two processes' 16 KiB rereads from the page cache, 3.8 us back to back,
    took 5.6 us in random_io, computing 57 us between them.  Outside the k
    measured, a caution where they were slower than back to back
    (docs/accuracy.md, "Rereads after computing are slower").  None
    when nothing is said."""
    np_, rs, access = args[0], args[1], args[2]
    bps = rs * np_ / t_op
    if t_op >= k:         # long operations: the processes meet, the rule above holds
        return (bps, note) if note else None
    slower = profile.after_computing(op, np_, rs, k, access)
    if slower is not None:
        t, how = slower
        if t <= t_op:
            return (bps, note) if note else None
        cold = f"slower after computing: per op {t * 1e6:.1f} us (the profile's {how})"
        return rs * np_ / t, f"{note}; {cold}" if note else cold
    pts = profile.computing_points(op, np_, rs, access, contended=False)
    if not note or pts is None or not any(tk > pts[1] for _, tk in pts[3]):
        return (bps, note) if note else None
    size, back, _, at = pts
    return bps, (f"{note}; the profile's {computing_text(size, np_, at)} against {back * 1e6:.1f} "
                 f"back to back: operations after computing were slower there; this phase "
                 f"computes {k * 1e6:.1f} us, more than a factor of 2 outside those, which this "
                 f"prediction does not count")


def _collective_after_computing(phase, profile, op, args, bw):
    """(Bps, note) of a collective phase of several processes that computed
    before its operations, where the profile's collective points computing
    between operations (characterize --for the model) took longer at that
    time than back to back (Profile.after_computing, collective): the phase's
    time times that ratio; else None.  The time computed: k
    between the phase's own operations (think_time), or for a phase of one
    operation per process, the idle time before it (`gap_s`: a solver's steps
    between its dumps).  A back-to-back profile measures each collective call
    with the file system, the page cache and the MPI-IO library's aggregators
    as the call before left them; after a solver's step they are as the step
    left them."""
    np_, rs, access = args[0], args[1], args[2]
    if np_ < 2 or phase.get("collective") is not True:
        return None
    k = think_time(phase) if (args[4] or 1) > 1 else phase.get("gap_s")
    if not k:
        return None
    slower = profile.after_computing(op, np_, rs, k, access, collective=True)
    if slower is None:
        return None
    t, how = slower
    size, back, _, _ = profile.computing_points(op, np_, rs, access, contended=False, collective=True)
    # the points' own ratio (computing, against back to back at as many operations), on the
    # phase's time: a phase of one operation pays a fixed cost a long point spreads
    ratio = t / (back * rs / size)
    if ratio <= 1:
        return None
    tn = rs * np_ / bw
    return bw / ratio, (f"computing {k * 1e3:.3g} ms before each operation: time x {ratio:.3g}, per op "
                        f"{tn * ratio * 1e6:.1f} us (the profile's collective {how})")


def _done_early(phase, profile, op, args, bw):
    """(Bps, note) of a collective phase of one operation per process whose
    first process did its part on its own before the last one entered (the
    model's done_early_s, e), or None.

    A collective phase's io_time_s runs from the last process's entry, and
    the profile's processes start together.  Open MPI's collective write of
    contiguous parts at 2 processes does each part on its own (s3d_like's
    through a view, too, in some of its calls): py_io's ranks
    entered 0 to 190 us apart on tmpfs, and one left 112 us after it came in,
    before the other had.  With t_1 the np 1 point's time and t_np the np
    point's, the work shared (two writers of one tmpfs file take turns at its
    lock: 138 us alone, 254 us together for 256 KiB), e of it is done before
    the last entry and the last process's own part is still to do:
    t = max(t_1, t_np - e).  Where operations last milliseconds (the disk,
    Gluster) microseconds done early change little; where the first process
    waits for the last (at 3 processes or more) the analyzer finds nothing
    done early.  Not through a view, where it made predictions too fast."""
    np_, rs = args[0], args[1]
    e = phase.get("done_early_s")
    if np_ < 2 or phase.get("collective") is not True or not e or args[4] != 1 or \
            phase["offsets"].get("contiguous") is not True:
        return None
    t = profile.table
    if not pc.any(pc.and_(pc.equal(t["operation"], op), pc.equal(t["np"], 1))).as_py():
        return None       # no point of one process: what the last one's own part costs
    bw1, note1 = profile.bandwidth(op, 1, *args[1:])
    t1, tn = rs / bw1, rs * np_ / bw
    if tn <= t1:
        return None       # the others' parts cost nothing: nothing done early
    t_op = max(t1, tn - e)
    return rs * np_ / t_op, (f"{e * 1e6:.1f} us done before the last process came in: max("
                             f"{t1 * 1e6:.1f}, {tn * 1e6:.1f} - {e * 1e6:.1f}) = {t_op * 1e6:.1f} us "
                             f"(np 1: {note1})")


def _uncached_bandwidth(phase, access_type, profile, ops, file_size, cluster, without=frozenset()):
    """(Bps, note) of a reread phase read from the servers, as through a new
    open (the profile's `read` points), on a cluster whose global file system
    may or may not serve it from the client's cache; else None.  On Gluster's
    FUSE client a race at the file's open decides that for each process
    (docs/commands/predict.md, "Rereads")."""
    fs = (getattr(cluster, "global_fs", None) or "local").lower()
    if fs == "local" or profile is None or not rereads(phase) or not {"reread", "read"} <= ops:
        return None
    args = _bandwidth_args(phase, access_type, file_size, without)
    try:
        bw, note = profile.bandwidth("read", *args)
        between = None if "computing-between" in without else \
            _computing_between(phase, profile, "read", args, bw, without)
    except ProfileError:       # a second figure; the phase's own prediction stands
        return None
    return (bw, note) if between is None else (between[0], f"{note}; {between[1]}")


def _phase_bandwidth(phase, access_type, profile, ops, bandwidths, fallback, file_size=None,
                     without=frozenset(), block=None):
    """(Bps, note) for one phase, without the CORRECTIONS named in `without`."""
    if bandwidths is not None:
        bw = _replayed(phase, bandwidths)
        if bw is not None:
            if not (isinstance(bw, (int, float)) and math.isfinite(bw) and bw > 0):
                raise PredictError(f"phase {phase['id']}: measured bandwidth must be > 0 B/s, got {bw!r}")
            return float(bw), "measured by replay"
    if profile is None:
        raise PredictError(f"phase {phase['id']}: no measured bandwidth and no profile")
    bw, note, op, args = _profile_bandwidth(phase, access_type, profile, ops, fallback, file_size, without,
                                            block)
    between = None
    for name, rule in (("computing-between", _computing_between), ("done-early", _done_early),
                       ("collective-after-computing", _collective_after_computing)):
        if name not in without:
            between = rule(phase, profile, op, args, bw, without) if rule is _computing_between else \
                rule(phase, profile, op, args, bw)
            if between is not None:
                break
    if between is None:
        return bw, note
    return between[0], f"{note}; {between[1]}"


def extrapolated_note(model, cluster, profile):
    """An extrapolated model at more processes than the profile measured: its
    phases there take the bandwidth of the largest measured np; say how to fix it."""
    if model["source"]["kind"] != "extrapolated" or profile is None or not len(profile):
        return None
    top = max(profile.table.column("np").to_pylist())
    want = max(p["np"] for p in model["phases"])
    if want <= top:
        return None
    return (f"the model is extrapolated to np {model['application']['np']} and {_name(cluster)}'s profile "
            f"measured np up to {top}: its phases of more processes take the bandwidth measured at np "
            f"{top}; `iomodel characterize` on {_name(cluster)} at np {want} measures theirs")


def predict(model, cluster, profile=None, bandwidths=None, fallback=True, without=()):
    """Time and cost of the model's I/O on `cluster` (see the module docstring).

    profile: a Profile (default: Profile.load(cluster)); bandwidths: {phase id:
    B/s} measured by a replay, used first.  A phase whose operation the profile
    has no point for uses the other operation's bandwidth when `fallback` (the
    note says so); otherwise, or when the profile is empty, PredictError.
    without: CORRECTIONS left out (their names).
    Returns a dict (docs/commands/predict.md)."""
    without = frozenset(without)
    unknown = without - set(CORRECTIONS)
    if unknown:
        raise PredictError(f"--without {','.join(sorted(unknown))}: no such correction; they are "
                           f"{', '.join(CORRECTIONS)}")
    if profile is None and bandwidths is None:
        profile = Profile.load(cluster)
    ops = set(profile.table.column("operation").to_pylist()) if profile is not None else set()
    files = {f["id"]: f for f in model["files"]}
    blocks = write_blocks(model)     # the phases the replay writes in blocks, to extend the file as they did
    price = getattr(cluster, "price_per_hour", None)
    instances = getattr(cluster, "instances", None) or 1
    notes = []

    def bandwidth_of(p, profile):
        """(BW_CH, note) of phase p from `profile` (the replay's first)."""
        if p["weight"] == 0:
            return None, "no data moved"
        f = files[p["file"]]
        at = f["access_type"]
        try:                             # a shared file's bytes: its extent where known
            return _phase_bandwidth(p, at, profile, ops, bandwidths, fallback,
                                    (f.get("extent") or f.get("size")) if at == "shared" else None, without,
                                    blocks.get(p["id"]))
        except ProfileError as e:
            hint = ("; give its description `bandwidth:` points or a measured `profile:` "
                    "(docs/cluster-format.md), or predict with --profile or --replay"
                    if profile is None or not len(profile) else "")
            raise PredictError(f"{getattr(cluster, 'where', None) or _name(cluster)}: phase {p['id']} "
                               f"({p['operation']}): {e}{hint}") from None

    # a profile measured in passes: each phase predicted from each pass alone as well
    passes = [profile.in_pass(k) for k in range(profile.passes)] \
        if profile is not None and profile.passes > 1 else []
    phases = []
    for p in model["phases"]:
        f = files[p["file"]]
        at = f["access_type"]
        bw, note = bandwidth_of(p, profile)
        t = p["weight"] / bw if bw else 0.0
        by_pass = None
        if passes:
            by_pass = [p["weight"] / b if b else 0.0 for b in (bandwidth_of(p, q)[0] for q in passes)]
        uncached = None if p["weight"] == 0 or (bandwidths is not None and _replayed(p, bandwidths)) \
            else _uncached_bandwidth(p, at, profile, ops, (f.get("extent") or f.get("size"))
                                     if at == "shared" else None, cluster, without)
        phases.append({"id": p["id"], "file": p["file"], "operation": p["operation"], "access_type": at,
                       "collective": p.get("collective"), "np": p["np"], "rs": p["rs"], "rep": p["rep"],
                       "weight": p["weight"], "bw_Bps": bw, "time_s": t, "time_passes_s": by_pass,
                       "cost_usd": None if price is None else t / 3600 * price,  # expression 7
                       "note": note,
                       # a reread read from the servers instead (the client's cache missed)
                       "time_uncached_s": None if uncached is None else p["weight"] / uncached[0],
                       "note_uncached": None if uncached is None else uncached[1]})
    fb = sorted({p["operation"] for p in phases if p["note"].startswith(f"no {p['operation']} bandwidth measured")})
    if any(p["note"].startswith("no reread bandwidth measured") for p in phases):
        notes.append("no reread bandwidth measured: phases that read back what they wrote "
                     "through the same open use the read bandwidth (measured through a new "
                     "open; characterize --ops write,read,reread)")
    for op in fb:
        notes.append(f"no {op} bandwidth measured: {op} phases use the "
                     f"{'write' if op == 'read' else 'read'} bandwidth")
    beyond = extrapolated_note(model, cluster, profile)
    if beyond:
        notes.append(beyond)
    placed = placement_note(model, cluster, bandwidths)
    if placed:
        notes.append(placed)
    sharded = shard_note(model, cluster)
    if sharded:
        notes.append(sharded)

    io_time = sum(p["time_s"] for p in phases)
    io_time_passes = [sum(p["time_passes_s"][k] for p in phases) for k in range(len(passes))] \
        if passes else None
    misses = [p for p in phases if p["time_uncached_s"] is not None]
    io_time_uncached = None
    if misses:
        io_time_uncached = io_time + sum(p["time_uncached_s"] - p["time_s"] for p in misses)
        ids = format_ranks([p["id"] for p in misses])
        notes.append(f"phase{'s' * (len(misses) > 1)} {ids} read{'s' * (len(misses) == 1)} back "
                     f"through the same open what each process wrote, predicted from the "
                     f"profile's reread points; {getattr(cluster, 'global_fs', None)}'s client "
                     f"may not serve such reads from its cache (on Gluster's FUSE client a race "
                     f"at the file's open decides it, process by process): read from the servers "
                     f"as through a new open, {'they' if len(misses) > 1 else 'it'} would take "
                     f"{sum(p['time_uncached_s'] for p in misses):.3g} s, the I/O time "
                     f"{io_time_uncached:.3g} s (io_time_uncached_s)")
    weight = model.get("weight", sum(p["weight"] for p in phases))
    perf = weight / io_time if io_time > 0 else None
    process_io = _as_the_application_times_it(model, io_time)

    # fixed cost: persistent storage for one month (and prorated by the I/O time)
    pgb = getattr(cluster, "persistent_gb", None) or 0
    pusd = getattr(cluster, "persistent_usd_per_gb_month", None)
    if pgb and pusd is None:
        notes.append("no persistent storage price: fixed cost 0")
    cost_fix = pgb * (pusd or 0.0)
    cost_fix_prorated = cost_fix * io_time / MONTH_S

    billing = getattr(cluster, "billing", None) or "hour"
    if billing not in BILLING_UNIT_S:
        raise PredictError(f"{_name(cluster)}: billing must be hour or second, got {billing!r}")
    if price is None:
        notes.append("no instance price: costs not computed")
        cost_var = cost_tot = billed = perf_cost = perf_cost_var = None
    else:
        cost_var = sum(p["cost_usd"] for p in phases) * instances             # expression 6
        cost_tot = cost_var + cost_fix                                          # expression 5
        unit = BILLING_UNIT_S[billing]
        billed_s = math.ceil(io_time / unit - 1e-9) * unit if io_time > 0 else 0
        billed = billed_s / 3600 * price * instances + cost_fix
        perf_cost = perf / MiB / cost_tot if perf is not None and cost_tot > 0 else None   # expression 8
        perf_cost_var = perf / MiB / cost_var if perf is not None and cost_var > 0 else None

    ok, reasons, fnotes = feasibility(model, cluster)
    return {
        "vc": _name(cluster),
        "region": getattr(cluster, "region", None),
        "instance_type": getattr(cluster, "instance_type", None),
        "instances": instances,
        "price_per_hour": price,
        "billing": billing,
        "model": model["application"].get("name"),
        "np": needed_processes(model),
        "weight": weight,
        "storage_capacity": model.get("storage_capacity"),
        "io_time_s": io_time,
        "io_time_passes_s": io_time_passes,
        "io_time_uncached_s": io_time_uncached,
        "process_io_time_s": process_io,
        "cost_usd": cost_tot,
        "cost_var_usd": cost_var,
        "cost_fix_usd": cost_fix,
        "cost_fix_prorated_usd": cost_fix_prorated,
        "billed_usd": billed,
        "performance_Bps": perf,
        "perf_cost": perf_cost,
        "perf_cost_var": perf_cost_var,
        "feasible": ok,
        "reasons": reasons,
        "notes": notes + fnotes,
        "without": sorted(without),
        "phases": phases,
    }


def _as_the_application_times_it(model, io_time):
    """The predicted I/O time as the application's own timers around its I/O
    would count it ({max: the slowest process, mean, ratio_max, ratio_mean}), or
    None: the model's measure (each phase from its last process's entry to the
    last exit, summed) times the traced run's ratio of each process's time in
    its I/O calls (application.process_io_time_s) to that measure. A process
    that waits inside a collective call for a late one, or an aggregator that
    does the others' I/O, counts time the model's measure leaves out; one that
    leaves a collective early counts less."""
    pio = model["application"].get("process_io_time_s")
    home = sum(p.get("io_time_s") or 0.0 for p in model["phases"])
    if not pio or home <= 0:
        return None
    rmax, rmean = pio["max"] / home, pio["mean"] / home
    return {"max": io_time * rmax, "mean": io_time * rmean, "ratio_max": rmax, "ratio_mean": rmean}


# -- text ----------------------------------------------------------------------------

def money(x):
    """Dollars as the tables print them."""
    if x is None:
        return "-"
    return f"${x:.4f}" if abs(x) < 100 else f"${x:,.2f}"


def seconds(x):
    """Seconds as the tables print them: two decimals, three digits below a second
    (a tmpfs phase of 0.4 ms is not 0.00)."""
    return f"{x:.2f}" if x >= 1 or x == 0 else f"{x:.3g}"


def _groups(phases):
    """Consecutive phases with the same pattern and prediction, as one row."""
    out = []
    for p in phases:
        key = (p["operation"], p["np"], p["rs"], p["rep"], p["weight"], p["bw_Bps"], p["note"])
        if out and out[-1]["key"] == key and out[-1]["last"] == p["id"] - 1:
            g = out[-1]
            g["last"] = p["id"]
            g["n"] += 1
            g["time_s"] += p["time_s"]
            g["cost_usd"] = None if p["cost_usd"] is None else g["cost_usd"] + p["cost_usd"]
        else:
            out.append({"key": key, "first": p["id"], "last": p["id"], "n": 1, "time_s": p["time_s"],
                        "cost_usd": p["cost_usd"], **{k: p[k] for k in ("operation", "np", "rs", "rep",
                                                                        "weight", "bw_Bps", "note")}})
    return out


def format_prediction(pred):
    """A prediction as text: the VC, its feasibility, the phase table (runs of
    identical phases on one row, with their total time and cost) and the totals."""
    L = []
    head = f"{pred['vc']}"
    if pred.get("instance_type"):
        head += f": {pred['instances']} x {pred['instance_type']}"
    if pred.get("region"):
        head += f", {pred['region']}"
    if pred.get("price_per_hour") is not None:
        head += f", ${pred['price_per_hour']}/instance-hour billed per {pred['billing']}"
    L.append(head)
    L.append("feasible" if pred["feasible"] else "NOT FEASIBLE:")
    for r in pred["reasons"]:
        L.append(f"  - {r}")
    L.append("")
    L.append(f"{'IdPh':>9} {'op':<5} {'np':>4} {'rs MiB':>9} {'rep':>4} {'weight MiB':>11} "
             f"{'BW_CH MiB/s':>11} {'time s':>9} {'cost/inst':>10}  note")
    for g in _groups(pred["phases"]):
        ids = str(g["first"]) if g["n"] == 1 else f"{g['first']} to {g['last']}"
        bw = "-" if g["bw_Bps"] is None else f"{g['bw_Bps'] / MiB:.1f}"
        L.append(f"{ids:>9} {g['operation']:<5} {g['np']:>4} {g['rs'] / MiB:>9.3f} {g['rep']:>4} "
                 f"{g['weight'] / MiB:>11.1f} {bw:>11} {seconds(g['time_s']):>9} {money(g['cost_usd']):>10}  "
                 f"{g['note']}")
    if any(g["n"] > 1 for g in _groups(pred["phases"])):
        L.append("(a row 'a to b' is a run of identical phases: weight of each phase, time and cost of the run)")
    L.append("")
    perf = pred["performance_Bps"]
    L.append(f"I/O time            {seconds(pred['io_time_s'])} s  (the model's measure: each phase from "
             f"its last process's entry to the last exit, summed)")
    pio = pred.get("process_io_time_s")
    if pio:
        L.append(f"  as the app times it  {seconds(pio['max'])} s slowest process, {seconds(pio['mean'])} s "
                 f"mean  (in their I/O calls: the traced run's {pio['ratio_max']:.2f} and "
                 f"{pio['ratio_mean']:.2f} times the model's measure)")
    by_pass = pred.get("io_time_passes_s")
    if by_pass:
        L.append(f"  pass by pass      {seconds(min(by_pass))} to {seconds(max(by_pass))} s  (from each of "
                 f"the profile's {len(by_pass)} passes alone: the cluster's own variation)")
    if pred.get("io_time_uncached_s") is not None:
        L.append(f"  rereads uncached  {seconds(pred['io_time_uncached_s'])} s  (if the client's cache "
                 f"serves none of the rereads: see the note)")
    L.append(f"performance         {'-' if perf is None else f'{perf / MiB:.1f} MiB/s'}"
             f"  (weight(app) {pred['weight'] / MiB:.1f} MiB / I/O time)")
    L.append(f"cost_var  (exp. 6)  {money(pred['cost_var_usd'])}  ({pred['instances']} instances)")
    L.append(f"cost_fix            {money(pred['cost_fix_usd'])}  (persistent storage, one month; "
             f"{money(pred['cost_fix_prorated_usd'])} prorated to the I/O time)")
    L.append(f"cost_tot  (exp. 5)  {money(pred['cost_usd'])}")
    L.append(f"billed              {money(pred['billed_usd'])}  (instance time rounded up to the "
             f"{pred['billing']}, plus cost_fix)")
    pc = pred["perf_cost"]
    L.append(f"perf/cost (exp. 8)  {'-' if pc is None else f'{pc:.4g} MiB/s per $'}")
    for n in pred["notes"]:
        L.append(f"note: {n}")
    return "\n".join(L)
