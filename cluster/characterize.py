"""`iomodel characterize`: measure a cluster's bandwidth profile with a sweep
of IOR runs (steps 3 and 4 of the method), for predictions without replays.

The sweep crosses request sizes, process counts, read and write, shared and
unique files, collective and independent access.  Each point is one
invocation (IOR's options, run by either backend) whose segments are chosen
so that it moves about `target_bytes` in all; reads read a file the same
sweep point wrote.  Every result is kept as soon as it is known (the runner's
results.json), so an interrupted sweep resumes.
"""
import os
import sys
from pathlib import Path

from iomodel.models import rereads
from iomodel.replay.host import STOLEN_SHARE, lost_to_steal, until_calm
from iomodel.replay.ior import Invocation, idle_openers_job, sanitize
from iomodel.replay.runner import State, execute, key_of
from iomodel.replay.trust import check_launcher_options
from iomodel.replay.workdir import Workdir

from .placement import server_of, spread_name
from .profile import Profile, ops_per_process

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
DEFAULT_SIZES = [4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB, 64 * MiB,
                 256 * MiB, GiB]


def sweep_points(sizes, nps, operations=("write", "read"), access_types=("shared", "unique"),
                 collective=(True, False), apis=("MPIIO",)):
    """The sweep's points: dicts of size, np, operation, access_type, collective
    and, of a POSIX point (`api`: pread and pwrite, for the phases of an
    application's own POSIX and stdio I/O), no collective one."""
    return [{"rs": rs, "np": n, "operation": op, "access_type": at, "collective": c,
             **({"api": api} if api != "MPIIO" else {})}
            for api in apis for n in nps for rs in sizes for at in access_types for c in collective
            for op in operations if api == "MPIIO" or not c]


def sweep_segments(point, target_bytes):
    """Operations per process of a point moving about target_bytes (1 to 1024)."""
    return max(1, min(1024, target_bytes // (point["rs"] * point["np"])))


def invocation(point, workdir, target_bytes, defeat_page_cache=False, segments=None,
               file_cap=None, place=None, job_np=None):
    """The invocation measuring one point (a read gets the write that makes its file;
    a reread writes and reads back through one open, the write not counted):
    about target_bytes in all, or `segments` operations per process; with
    point["piece"], each transfer through a view of pieces (builtin backend).
    file_cap: at most so many bytes per file of a file-per-process point (when
    rs fits); place(path, np) -> path: the name of such a point's files.
    point["block_transfers"] k: each process writes blocks of k transfers a
    segment (IOR's -b k * rs), its operations rounded down to a multiple of k.
    job_np: a shared independent point of fewer processes runs in a job of so many,
    the others holding the file open with them (`idle_openers_job`)."""
    rs, n = point["rs"], point["np"]
    unique = point["access_type"] == "unique"
    if segments is None:
        segments = sweep_segments(point, target_bytes)
        if unique and file_cap and rs <= file_cap:
            segments = min(segments, file_cap // rs)
    piece = point.get("piece")
    boff = point.get("buffer_offset") or 0
    think = [f"--iomodel.think={point['think_s']:.6f}"] if point.get("think_s") else []
    # a random point: each process's operations in one block, in a random order (IOR's
    # -z needs a block of several transfers), as a random phase's replay has them
    shuffle = ["-z"] if point.get("random") and segments > 1 else []
    api = point.get("api") or "MPIIO"
    k = point.get("block_transfers") or 1
    if k > 1 and not shuffle:
        segments = max(1, segments // k)        # IOR's segments of a block of k transfers each
    name = sanitize(f"iomodel.sweep.{point['access_type']}.{'c' if point['collective'] else 'i'}"
                    f".{n}.{rs}.{segments}" + (f".p{piece}" if piece else "")
                    + (f".o{boff}" if boff else "") + (f".k{point['think_s']:g}" if think else "")
                    + (".z" if shuffle else "") + (f".{api.lower()}" if api != "MPIIO" else "")
                    + (f".b{k}" if k > 1 and not shuffle else ""))
    test_file = f"{workdir.rstrip('/')}/{name}"
    if unique and place is not None:
        test_file = place(test_file, n)
    common = dict(phase_ids=[0], np=n, api=api, segments=1 if shuffle else segments,
                  block=rs * segments if shuffle else rs * k, transfer=rs,
                  file_per_proc=unique, collective=point["collective"],
                  test_file=test_file, piece=piece, buffer_offset=boff)
    # a shared independent point of fewer processes runs as the replay of such a
    # phase does: in a job of job_np, the others holding the file open
    idle = idle_openers_job(n, job_np, not unique, api, point["collective"], piece,
                            point["operation"] == "reread", defeat_page_cache)
    extra = ["-C", "-e"] if defeat_page_cache else []
    if shuffle:                        # IOR refuses -C with -z on a shared file
        extra = [f for f in extra if f != "-C" or unique] + shuffle
    # Every point removes its file(s) when done (a write: no -k; a read: iomodel, once
    # read): a sweep of writes alone left up to `--bytes` per point on the cluster's
    # storage, and each point ran on storage filled by the ones before it.
    if point["operation"] == "write":
        return Invocation(operation="write", flags=["-w", *extra, *think], job_np=idle, **common)
    if point["operation"] == "reread":
        return Invocation(operation="read", flags=["-w", "-r", *shuffle, *think], reread=True, **common)
    setup = Invocation(operation="write", flags=["-w", "-k", *extra], **common)
    return Invocation(operation="read", flags=["-r", "-E", "-k", *extra, *think], setup=setup,
                      job_np=idle, **common)


# A run of one operation per process lasts one request, and it alone sets a small
# phase's time: single requests have a long tail, which a median of 3 lands in one
# time in four and a median of 9 rarely (docs/commands/characterize.md).
ONE_OP_REPEAT = 9
# A launch's first repetition is its slowest (the first transfer faults the buffer in
# and sets MPI-IO up): three a pass at least, so that a pass's median is never that
# first one alone.
ONE_OP_PER_PASS = 3


def reps_per_pass(segments, passes):
    """IOR -i of one pass over a point: 1, but a one-operation point is measured at
    least ONE_OP_REPEAT times over all the passes and ONE_OP_PER_PASS in each."""
    return max(ONE_OP_PER_PASS, -(-ONE_OP_REPEAT // passes)) if segments == 1 else 1


# Seconds between a run set aside for steal and its next attempt: the host's
# load comes and goes in stretches of seconds to minutes.
STEAL_PAUSE_S = 2


def unstolen(entries):
    """A point's passes that did not lose STOLEN_SHARE of their time to the
    hypervisor, when there are any; else all of them.  On a shared host a
    pass that loses its processors for milliseconds measures the host's other
    guests: on the one-server Gluster VC, 16 KiB writes by two processes took
    930 us in one pass and 1590 and 1355 us in two others of a sweep that lost
    9% of its CPU time so (docs/accuracy.md, "The hypervisor's steal")."""
    return [e for e in entries if not lost_to_steal(e)] or entries


def median_entry(entries):
    """Of a point's passes (`unstolen` first), the one whose time is the median
    (the lower middle one of an even number): its time and bandwidth belong
    together.  A backend whose output gave no time is ranked by bandwidth (the
    passes move the same bytes)."""
    ranked = sorted(unstolen(entries), key=lambda e: e.get("time_s") or 1.0 / e["bandwidth_Bps"])
    return ranked[(len(ranked) - 1) // 2]


def view_points(points, pieces):
    """For each shared point of several processes whose size is a multiple of a
    piece, larger than it: the same through a view of such pieces (the ratio of
    the two is the profile's view ratio, cluster/profile.py)."""
    return [{**pt, "piece": p} for pt in points for p in pieces
            if pt["access_type"] == "shared" and pt["np"] > 1 and pt["rs"] > p and pt["rs"] % p == 0
            and not pt.get("api")]       # a view is MPI-IO's


def offset_points(points, offsets):
    """For each contiguous read, reread and independent write point: the same with
    the buffer so many bytes past a 4 KiB boundary.  Copies from the page cache
    into a buffer a few bytes past one are slower; and through FUSE direct I/O
    (the Gluster VCs) each transfer spans one more page, a 256 KiB write one
    more request (5% slower at 300 Mbit/s).  Not collective writes: their data
    reaches the file system from the aggregators' own buffers."""
    return [{**pt, "buffer_offset": b} for pt in points for b in offsets
            if b and not pt.get("piece") and (pt["operation"] in ("read", "reread")
                                              or not pt["collective"])]


# operations per process of a point computing between them, at least (a large request's
# long point may be one operation: nothing between)
THINK_OPS = 4


def think_points(points, thinks, collective=False):
    """For each independent point of several processes: the same with every
    process computing (spinning, --iomodel.think) so many seconds between its
    operations.  How much of that time a device gives back to the others'
    waits is its own: one that serves requests in turn gives it all (the
    others have it alone meanwhile), one that shares itself among the
    requests in flight keeps the processes in step and gives none (the
    testbed's disk; bench/think_time.py).  predict's rule for an application
    computing between its operations reads it (Profile.given_back).
    Collective points too where asked (`collective`: `--for` a model whose
    collective phases computed before their operations): each collective call
    after the processes computed, as a solver's dump after its steps
    (predict's _collective_after_computing); a sweep's microseconds are not
    what comes before a dump."""
    return [{**pt, "think_s": k} for pt in points for k in thinks
            if k and pt["np"] > 1 and (collective or not pt["collective"]) and not pt.get("piece")
            and not pt.get("buffer_offset")]


def random_points(points):
    """For each independent contiguous point: the same with each process's
    operations in a random order within its block (IOR's -z), as a random
    phase's are: what the order costs where the storage pays for it (seeks,
    read-ahead; not on the testbed's disk: bench/random_order.py).  Not
    collective ones: IOR cannot combine -z with collective MPI-IO, and a
    random phase's replay runs them independent."""
    return [{**pt, "random": True} for pt in points
            if not pt["collective"] and not pt.get("piece") and not pt.get("buffer_offset")
            and not pt.get("think_s")]


def model_points(models):
    """The points a prediction of these models needs, exactly (`characterize
    --for`): per IOR invocation of each model (replay/ior.py), its size,
    processes, operation (reread where it reads back through the write's
    open), access type, collectivity and interface; and beside it the same
    through its view's pieces, with its buffer's offset, or in a random
    order, where the invocation has them (their cost is read against the plain
    point's).  A collective invocation of several processes whose phases
    computed before their operations (a solver's steps between its dumps: the
    phases' `gap_s`, or think_time between a phase's operations) gets the
    point computing that long between operations too (the median, to 1 ms).
    In the models' order, each once."""
    from iomodel.replay.ior import ior_invocations, write_block
    from iomodel.replay.runner import think_time
    out, seen = [], set()
    for model in models:
        byid = {p["id"]: p for p in model["phases"]}
        for inv in ior_invocations(model):
            base = {"rs": inv.transfer, "np": inv.np,
                    "operation": "reread" if inv.reread else inv.operation,
                    "access_type": "unique" if inv.file_per_proc else "shared",
                    "collective": inv.collective, **({"api": inv.api} if inv.api != "MPIIO" else {})}
            # the variants as the sweep makes them (view_points, offset_points, random_points);
            # a shared file's independent writes in blocks of several transfers: in those blocks
            ks = sorted(k for k in ((think_time(byid[i]) if byid[i]["rep"] * byid[i].get("iop", 1) > 1
                                     else byid[i].get("gap_s")) for i in inv.phase_ids if i in byid) if k)
            k = round(ks[len(ks) // 2], 3) if ks and inv.collective and inv.np > 1 else 0
            for pt in ([base] + view_points([base], [inv.piece] if inv.piece else [])
                       + offset_points([base], [inv.buffer_offset])
                       + (random_points([base]) if "-z" in inv.flags else [])
                       + ([{**base, "block_transfers": write_block(inv)}] if write_block(inv) else [])
                       + (think_points([base], [k], collective=True) if k else [])):
                key = tuple(sorted(pt.items()))
                if key not in seen:
                    seen.add(key)
                    out.append(pt)
    return out


def ops_of(inv):
    """Operations per process of a sweep invocation (a random point's are one block's)."""
    return inv.segments * (inv.block // inv.transfer)


def one_stripe_segments(point, target_bytes, stripe):
    """Operations per process of the one-stripe variant of a point (its shared
    file within `stripe` bytes), or None when it needs none: a view, a unique
    file, a point whose file fits already, or one whose stripe holds fewer than
    two operations per process (its one-operation point measures that)."""
    if point.get("piece") or point["access_type"] != "shared":
        return None
    capped = stripe // (point["rs"] * point["np"])
    return capped if 2 <= capped < sweep_segments(point, target_bytes) else None


def stripe_of(cluster):
    """(stripe bytes, None) of a cluster whose file system stripes files over several
    data servers, or (None, why not)."""
    servers = getattr(cluster, "data_servers", 1) or 1
    stripe = getattr(cluster, "stripe_size", None)
    if servers < 2:
        return None, f"{cluster.name} has {servers} data server: every file sits on it"
    if not stripe:
        return None, f"{cluster.name}'s description gives no filesystem.stripe_size"
    return stripe, None


def _spreader(cluster, placed):
    """On a cluster of several data servers, place(path, np) -> the name of a
    file-per-process point's files that spreads them evenly over the servers
    (cluster/placement.py), recording the placement in `placed`; None on one
    server, or when the file system cannot say where a file goes (Lustre's
    stripes go round-robin over its servers, not by name: nothing to choose)."""
    servers = getattr(cluster, "data_servers", 1) or 1
    workdir = getattr(cluster, "workdir", None)
    if servers < 2 or workdir is None or \
            server_of(f"{workdir.rstrip('/')}/iomodel.sweep.placement-probe.{os.getpid()}") is None:
        return None
    names = {}

    def place(path, n):
        if (path, n) not in names:
            name, counts = spread_name(path, n, servers)
            names[(path, n)] = name
            if counts is not None:
                placed[name] = counts
        return names[(path, n)]
    return place


def characterize(cluster, backend, outdir, sizes=None, nps=None, target_bytes=256 * MiB,
                 repeat=1, timeout=None, progress=sys.stderr, one_op=True, pieces=(), job_np=None,
                 buffer_offsets=(), one_stripe=False, thinks=(), steal_retries=0, random=False,
                 points=None, **sweep):
    """Run the sweep; returns (Profile of the points measured, failures).
    repeat: passes over the whole sweep, a point's time the median of its passes.
    one_op: each point is also measured with one operation per process (the
    fixed cost of a phase, cluster/profile.py), with at least ONE_OP_REPEAT
    repetitions over all passes (IOR -i within a pass, their median).  pieces:
    sizes of the view points (`view_points`; the builtin backend only: IOR has
    no such view).  job_np: the job of the shared independent points of fewer
    processes (`idle_openers_job`; default the largest np, 0 or 1: none).
    buffer_offsets: the read, reread and independent write points again with the
    buffer so many bytes past a 4 KiB boundary (`offset_points`; the builtin
    backend only).  one_stripe: on a cluster of several data servers that
    stripes files (its stripe_size), also measure each contiguous shared point
    whose file spans more than a stripe on a file of one stripe
    (`one_stripe_segments`): such a file sits on one server (profile.py).
    thinks: the independent points of several processes again with them
    computing so many seconds between operations (`think_points`; the builtin
    backend only).  random: the independent points again with each process's
    operations in a random order (`random_points`).  points: these points
    alone (`model_points`), in place of the sweep of sizes, nps and the rest.  steal_retries: a run that
    lost STOLEN_SHARE of its wall time or more to the hypervisor is made again,
    at most so many times (STEAL_PAUSE_S apart), the last kept whatever it
    lost; the attempts set aside are kept in its entry (`set_aside`)."""
    if points is not None and backend.name != "builtin":   # IOR has no views, buffer offsets, computing
        dropped = [p for p in points if p.get("piece") or p.get("buffer_offset") or p.get("think_s")]
        if dropped:
            print(f"--backend {backend.name}: {len(dropped)} point(s) of the model through a view of "
                  "pieces, with a buffer offset or computing between operations are left out (they "
                  "need --backend builtin)",
                  file=progress)
        points = [p for p in points if not (p.get("piece") or p.get("buffer_offset") or p.get("think_s"))]
    if pieces and backend.name != "builtin":
        raise ValueError("--pieces needs --backend builtin: IOR has no view of pieces "
                         "(iomodel_replay's --iomodel.piece)")
    if any(buffer_offsets) and backend.name != "builtin":
        raise ValueError("--buffer-offsets needs --backend builtin: IOR's buffer is page-aligned "
                         "(iomodel_replay's --iomodel.bufferOffset)")
    if any(thinks) and backend.name != "builtin":
        raise ValueError("--think needs --backend builtin: IOR does not compute between its "
                         "operations (iomodel_replay's --iomodel.think)")
    prog, why = backend.find(cluster)
    if prog is None:
        raise RuntimeError(why)
    sizes = sizes or DEFAULT_SIZES
    nps = nps or sorted({1, getattr(cluster, "cores_total", 1) or 1})
    job_np = max(nps) if job_np is None else job_np
    check_launcher_options(cluster)
    checked = Workdir(cluster)          # checked before anything is written
    state = State(outdir)
    with checked as cluster:            # made, and removed after if iomodel made it and left it empty
        workdir = cluster.workdir
        explicit = points
        points = sweep_points(sizes, nps, **sweep)
        placed = {}                        # test file -> {server: files} where they were spread
        spread = _spreader(cluster, placed)
        runs = []
        # a file-per-process point whose files are spread by name writes at most a stripe
        # per file: beyond it Gluster's shards go where their own new identities hash,
        # anew in every run, while the first stripe stays where the spread name put it
        kw = dict(file_cap=getattr(cluster, "stripe_size", None) if spread else None, place=spread,
                  job_np=job_np)
        dpc = getattr(cluster, "defeat_page_cache", False)
        stripe = None
        if one_stripe:
            stripe, why = stripe_of(cluster)
            if stripe is None:
                print(f"--one-stripe: {why}; no one-stripe points", file=progress)
        if explicit is not None:             # --for MODEL: the model's points alone
            points = explicit
        else:
            points = (points + view_points(points, pieces) + offset_points(points, buffer_offsets)
                      + think_points(points, thinks) + (random_points(points) if random else []))
        for pt in points:
            inv = invocation(pt, workdir, target_bytes, dpc, **kw)
            if pt.get("think_s") and ops_of(inv) < THINK_OPS:     # computing between a few, at least
                inv = invocation(pt, workdir, target_bytes, dpc, segments=THINK_OPS, **kw)
            if pt.get("random") and ops_of(inv) < 2:
                continue                   # one operation: no order
            runs.append((pt, inv))
            varied = pt.get("piece") or pt.get("think_s") or pt.get("random") or pt.get("block_transfers")
            if one_op and inv.segments > 1 and not varied:
                runs.append((pt, invocation(pt, workdir, target_bytes, dpc, segments=1, **kw)))
            capped = stripe and not pt.get("think_s") and not pt.get("random") and not varied and \
                one_stripe_segments(pt, target_bytes, stripe)
            if capped:
                runs.append(({**pt, "file_cap": stripe},
                             invocation(pt, workdir, target_bytes, dpc, segments=capped, **kw)))
        # --repeat N: N passes over the whole sweep, each point once per pass, rather than
        # N repetitions back to back: a slow stretch of the cluster (on Gluster, one
        # sweep's 256 KiB writes at 17 MiB/s, its 64 KiB and 1 MiB ones at 26 MiB/s)
        # then slows one of a point's repetitions, which the median drops, not all.
        passes = max(1, repeat)
        entries = {}                       # run index -> the passes' ok entries
        in_pass = {}                       # run index -> {pass: its ok entry}
        failures = []
        for p in range(passes):
            for i, (pt, inv) in enumerate(runs, 1):
                key = key_of(inv) if passes == 1 else f"{key_of(inv)}@pass{p + 1}of{passes}"
                head = (f"[{i}/{len(runs)}{f' pass {p + 1}/{passes}' if passes > 1 else ''}] "
                        f"{pt['operation']} {pt['access_type']} "
                        f"{'collective' if pt['collective'] else 'independent'} np {pt['np']} "
                        f"rs {pt['rs']} B x {ops_of(inv)}"
                        + (f" in pieces of {pt['piece']} B" if pt.get("piece") else "")
                        + (f" buffer +{pt['buffer_offset']} B" if pt.get("buffer_offset") else "")
                        + (f" on one stripe of {pt['file_cap']} B" if pt.get("file_cap") else "")
                        + (f" computing {pt['think_s'] * 1e3:g} ms between" if pt.get("think_s") else "")
                        + (" in a random order" if pt.get("random") else "")
                        + (f" in blocks of {pt['block_transfers']}" if pt.get("block_transfers") else "")
                        + (f" (of {inv.job_np} holding the file)" if inv.job_np else ""))
                entry = state.done(key)
                if entry is None:
                    print(f"{head} ...", end="", file=progress, flush=True)

                    def attempt():
                        e = execute(inv, cluster, backend, prog, state.dir, reps_per_pass(ops_of(inv), passes),
                                    timeout)
                        return e, e.get("seconds"), e.get("steal_s")
                    entry, _, aside = until_calm(
                        attempt, steal_retries, pause=STEAL_PAUSE_S,
                        on_stolen=lambda j, wall, st: print(f" lost {st:.2f} s of {wall:.2f} s to steal, again ...",
                                                            end="", file=progress, flush=True))
                    if aside:
                        entry["set_aside"] = aside
                    entry["point"] = {**pt, "ops_per_process": ops_of(inv), "job_np": inv.job_np}
                    if inv.test_file in placed:
                        entry["point"]["placement"] = placed[inv.test_file]
                    state.record(key, entry)
                    print((f" {entry['bandwidth_Bps'] / MiB:.1f} MiB/s" if entry["ok"] else
                           f" FAILED: {entry['error']}")
                          + (f" (steal {entry['steal_s']:.2f} s)" if entry.get("steal_s") else ""), file=progress)
                else:
                    print(f"{head}: done before", file=progress)
                if entry["ok"]:
                    entries.setdefault(i, []).append(entry)
                    in_pass.setdefault(i, {})[p] = entry
                else:
                    failures.append(entry)
        measured = []
        done = [e for es in entries.values() for e in es]
        if any(e.get("steal_s") for e in done):
            left = sum(len(unstolen(es)) < len(es) for es in entries.values())
            print(f"steal: the hypervisor took {sum(e.get('steal_s') or 0 for e in done):.2f} s of CPU time "
                  f"from this machine during {sum(bool(e.get('steal_s')) for e in done)} of {len(done)} runs, "
                  f"{sum(map(lost_to_steal, done))} of them {STOLEN_SHARE:.0%} of their time or more; {left} "
                  "point(s) take the median of their other passes", file=progress)
        for i, (pt, inv) in enumerate(runs, 1):
            if i in entries:
                entry = median_entry(entries[i])
                counted = unstolen(entries[i])
                measured.append({**pt, "ops_per_process": ops_of(inv), "bw_Bps": entry["bandwidth_Bps"],
                                 "time_s": entry.get("time_s"), "source": backend.name,
                                 "api": pt.get("api") or "MPIIO",
                                 # every pass that counted, for predictions pass by pass
                                 "pass_bandwidths_Bps": [
                                     e["bandwidth_Bps"] if (e := in_pass[i].get(k)) is not None and
                                     any(e is c for c in counted) else None
                                     for k in range(passes)] if passes > 1 else None})
        return Profile.from_points(measured), failures


def profile_from_replay(model, by_phase, backend_name):
    """What a replay measured, as profile points (one per phase kind)."""
    files = model["files"]
    points = {}
    for p in model["phases"]:
        entry = by_phase.get(p["id"])
        if entry is None:
            continue
        op = "reread" if rereads(p) else p["operation"]
        # a phase replayed through a view of pieces is a view point, not a contiguous one
        piece, boff = (next((int(a.split("=", 1)[1]) for a in entry.get("command") or []
                             if isinstance(a, str) and a.startswith(f"--iomodel.{x}=")), None)
                       for x in ("piece", "bufferOffset"))
        api = "POSIX" if p.get("interface") in ("POSIX", "STDIO") else "MPIIO"
        key = (op, files[p["file"]]["access_type"], p.get("collective"), p["np"], p["rs"], piece, boff, api)
        points[key] = {"operation": op, "access_type": key[1], "api": api,
                       "collective": p.get("collective"), "np": p["np"], "rs": max(p["rs"], 1),
                       "ops_per_process": ops_per_process(p), "piece": piece,
                       "buffer_offset": boff,
                       "bw_Bps": entry["bandwidth_Bps"], "time_s": entry.get("time_s"),
                       "source": f"replay ({backend_name})"}
    return Profile.from_points(list(points.values()))


def write_profile(profile, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    profile.save(path)
    return path
